/*
 * manager/launch/status.h - where `tapestry status` finds a running job's
 * root receiver (manager/launch/status.c): run and launch note its address
 * and the secret's path in DIR/logs/root-status, two lines
 * "addr HOST:PORT" and "secret PATH" (no secret line without one).
 */
#ifndef TAPESTRY_MGR_STATUS_H
#define TAPESTRY_MGR_STATUS_H

#include <stddef.h>

/* Write DIR/logs/root-status for the root at addr with the secret file
 * secret (or NULL). A failure only costs `tapestry status DIR`: ignored. */
void mgr_status_note(const char *dir, const char *addr, const char *secret);

#endif

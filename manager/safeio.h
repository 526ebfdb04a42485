/*
 * manager/safeio.h - files written or read inside a directory another user
 * may write (a job directory under a shared --jobs): every name opened
 * relative to the directory's descriptor without following a link,
 * temporary files made with O_EXCL, renames within the directory
 * (docs/SECURITY.md, "tapestry serve").
 */
#ifndef TAPESTRY_MGR_SAFEIO_H
#define TAPESTRY_MGR_SAFEIO_H

#include <stddef.h>
#include <sys/types.h>

/* The directory path, every component opened without following a link
 * (O_PATH descriptor). -1 with errno (ELOOP or ENOTDIR for a link). */
int mgr_dir_nofollow(const char *path);
/* The directory that holds path's last component, opened as the system
 * resolves it (nofollow 0) or without following any link (1); *base points
 * to the last component in path. -1 with errno. */
int mgr_parent_dir(const char *path, int nofollow, const char **base);
/* Create name in directory dfd for writing (O_CREAT | O_EXCL | O_NOFOLLOW,
 * flags added: O_RDWR or O_WRONLY): a symbolic link there is refused (-1,
 * errno ELOOP, nothing removed); a leftover regular file or empty
 * directory is removed first. -1 with errno. */
int mgr_create_excl(int dfd, const char *name, int flags, mode_t mode);
/* 1 when name in dfd is a symbolic link, else 0. */
int mgr_is_link(int dfd, const char *name);

#endif

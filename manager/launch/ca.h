/*
 * manager/launch/ca.h - `tapestry ca`: per-job credentials (certificate authority,
 * one key and certificate per host, a client certificate for the manager,
 * and a random job secret).
 */
#ifndef TAPESTRY_MANAGER_CA_H
#define TAPESTRY_MANAGER_CA_H

/* File names inside the credentials directory (docs/SECURITY.md). */
#define MGR_CA_CERT "ca.crt"
#define MGR_CA_KEY "ca.key"
#define MGR_CA_SECRET "secret"
#define MGR_CA_MANAGER "manager"	/* manager.crt, manager.key */
#define MGR_CA_HOSTS_MAX 4096

/* Create dir (mode 0700, or use it when it exists without credentials)
 * and write ca.crt, ca.key, secret, manager.crt/.key and HOST.crt/.key for
 * each of the nhosts names (a name that parses as an IPv4 or IPv6 address
 * becomes an IP subjectAltName, others a DNS one). Keys and the secret are
 * mode 0600. days: validity of every certificate. 0, or a negative
 * PROTO_E_* code with its message in the error slot (mgr_fail) and every
 * file written removed. */
int mgr_ca_generate(const char *dir, const char *const *hosts, int nhosts,
		    int days);

/* `tapestry ca DIR [--hosts h1,h2,...] [--days N]`: exit status. */
int mgr_cmd_ca(int argc, char **argv);

#endif

/*
 * manager/launch/ca.c - `tapestry ca`: the per-job credentials for TLS between
 * collectors and for the challenge-response secret.
 *
 * A fresh certificate authority per job (P-256 keys, SHA-256 signatures,
 * X.509 v3), one key and certificate per host for its collectors (usable
 * as TLS server and client: collectors are both), one for the manager's
 * root receiver, and 32 random bytes of secret written as 64 hex digits.
 * Trust is membership: a peer is in the job when its certificate chains to
 * this CA (docs/SECURITY.md). OpenSSL's C API only; no openssl(1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "manager/launch/ca.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "proto/error.h"
#include "proto/num.h"

#define NAME_MAX_LEN 255
#define DAYS_MAX 3650

/* Paths written so far, removed again when a later step fails. */
struct written {
	char **path;
	int n, cap;
};

/* OpenSSL's reason for the failure of what, into the error slot. */
static int ossl_fail(const char *what)
{
	char buf[256];

	ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
	ERR_clear_error();
	return mgr_fail(PROTO_E_IO, "%s: %s", what, buf);
}

static EVP_PKEY *new_key(void)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	EVP_PKEY *key = NULL;

	if (!ctx)
		return NULL;
	if (EVP_PKEY_keygen_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) <= 0 ||
	    EVP_PKEY_keygen(ctx, &key) <= 0)
		key = NULL;
	EVP_PKEY_CTX_free(ctx);
	return key;
}

/* Add extension nid = value to x (issuer for the key identifiers): 0, or
 * PROTO_E_ARG (OpenSSL says why). */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (!ext)
		return PROTO_E_ARG;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : PROTO_E_ARG;
}

/* A certificate for key named cn, signed by ca_key (issuer ca; NULL:
 * self-signed CA). san: "DNS:name" or "IP:addr", NULL for the CA. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, const char *san,
		       X509 *ca, EVP_PKEY *ca_key, int days)
{
	X509 *x = X509_new();
	BIGNUM *bn = BN_new();
	X509_NAME *name;
	int is_ca = ca == NULL;

	if (!x || !bn)
		goto fail;
	/* a random 127-bit positive serial */
	if (!BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
	    !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		goto fail;
	if (!X509_set_version(x, 2) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400L) ||
	    !X509_set_pubkey(x, key))
		goto fail;
	name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
					(const unsigned char *)"tapestry job",
					-1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0))
		goto fail;
	if (!X509_set_issuer_name(x, is_ca ? name : X509_get_subject_name(ca)))
		goto fail;
	if (is_ca) {
		if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
		    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
		    add_ext(x, x, NID_subject_key_identifier, "hash"))
			goto fail;
	} else {
		if (add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
		    add_ext(x, ca, NID_key_usage, "critical,digitalSignature") ||
		    add_ext(x, ca, NID_ext_key_usage, "serverAuth,clientAuth") ||
		    add_ext(x, ca, NID_subject_key_identifier, "hash") ||
		    add_ext(x, ca, NID_authority_key_identifier, "keyid:always") ||
		    add_ext(x, ca, NID_subject_alt_name, san))
			goto fail;
	}
	if (!X509_sign(x, is_ca ? key : ca_key, EVP_sha256()))
		goto fail;
	BN_free(bn);
	return x;
fail:
	BN_free(bn);
	X509_free(x);
	return NULL;
}

/* Open dir/name for writing, new file only, with mode. */
static FILE *create(struct written *w, const char *dir, const char *name,
		    mode_t mode, char *path, size_t cap)
{
	int fd;
	FILE *f;

	if ((size_t)snprintf(path, cap, "%s/%s", dir, name) >= cap) {
		mgr_fail(PROTO_E_TOOBIG, "path too long: %s/%s", dir, name);
		return NULL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0) {
		mgr_fail(PROTO_E_IO, "cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	if (w->n == w->cap) {
		int ncap = w->cap ? w->cap * 2 : 16;
		char **np = realloc(w->path, (size_t)ncap * sizeof(*np));

		if (!np) {
			close(fd);
			unlink(path);
			mgr_fail(PROTO_E_NOMEM, "out of memory");
			return NULL;
		}
		w->path = np;
		w->cap = ncap;
	}
	w->path[w->n] = strdup(path);
	if (!w->path[w->n]) {
		close(fd);
		unlink(path);
		mgr_fail(PROTO_E_NOMEM, "out of memory");
		return NULL;
	}
	w->n++;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		mgr_fail(PROTO_E_IO, "cannot write %s: %s", path, strerror(errno));
	}
	return f;
}

/* Close f: 0, or PROTO_E_IO after a write error (said). */
static int finish(FILE *f, const char *path, int ok)
{
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		ok = 0;
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : mgr_fail(PROTO_E_IO, "cannot write %s", path);
}

static int write_pair(struct written *w, const char *dir, const char *base,
		      EVP_PKEY *key, X509 *x)
{
	char name[NAME_MAX_LEN + 8], path[PATH_MAX];
	FILE *f;
	int rc;

	snprintf(name, sizeof(name), "%s.key", base);
	f = create(w, dir, name, 0600, path, sizeof(path));
	if (!f)
		return PROTO_E_IO;
	rc = finish(f, path, PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL,
						  NULL) == 1);
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "%s.crt", base);
	f = create(w, dir, name, 0644, path, sizeof(path));
	if (!f)
		return PROTO_E_IO;
	return finish(f, path, PEM_write_X509(f, x) == 1);
}

/* A host name is used as a file name and in a certificate: letters,
 * digits, '.', '-', '_', ':' (IPv6), not starting with '.' */
static int host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > NAME_MAX_LEN || h[0] == '.' || h[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = h[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
		      ch == '_' || ch == ':'))
			return 0;
	}
	if (strchr(h, ':')) {
		unsigned char a6[16];

		if (inet_pton(AF_INET6, h, a6) != 1)
			return 0;
	}
	return strcmp(h, "ca") && strcmp(h, MGR_CA_MANAGER);
}

static int write_secret(struct written *w, const char *dir)
{
	unsigned char raw[32];
	char path[PATH_MAX];
	FILE *f;
	int ok = 1;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return ossl_fail("random secret");
	f = create(w, dir, MGR_CA_SECRET, 0600, path, sizeof(path));
	if (!f)
		return PROTO_E_IO;
	for (size_t i = 0; i < sizeof(raw); i++)
		if (fprintf(f, "%02x", raw[i]) != 2)
			ok = 0;
	if (fputc('\n', f) == EOF)
		ok = 0;
	OPENSSL_cleanse(raw, sizeof(raw));
	return finish(f, path, ok);
}

/* A new key (*key) and its certificate for cn (*x), signed by ca_key, or
 * self-signed when ca is NULL; what_key and what_cert name them in a
 * failure's message. 0, or PROTO_E_IO (said; what was made is left in *key
 * and *x for the caller to free). */
static int key_and_cert(const char *what_key, const char *what_cert,
			const char *cn, const char *san, X509 *ca, EVP_PKEY *ca_key,
			int days, EVP_PKEY **key, X509 **x)
{
	if (!(*key = new_key()))
		return ossl_fail(what_key);
	if (!(*x = make_cert(*key, cn, san, ca, ca_key, days)))
		return ossl_fail(what_cert);
	return 0;
}

int mgr_ca_generate(const char *dir, const char *const *hosts, int nhosts,
		    int days)
{
	struct written w = {0};
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *x = NULL;
	char path[PATH_MAX], cn[NAME_MAX_LEN + 64], san[NAME_MAX_LEN + 8];
	unsigned char id[8];
	struct stat sb;
	int rc;

	for (int i = 0; i < nhosts; i++) {
		if (!host_ok(hosts[i]))
			return mgr_fail(PROTO_E_ARG, "bad host name '%s' (letters, "
					"digits, '.', '-', '_', ':'; not 'ca' or "
					"'manager')", hosts[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(hosts[i], hosts[j]))
				return mgr_fail(PROTO_E_ARG, "host '%s' given twice",
						hosts[i]);
	}
	if (days < 1 || days > DAYS_MAX)
		return mgr_fail(PROTO_E_ARG, "--days must be 1..%d", DAYS_MAX);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %s", dir,
				strerror(errno));
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return mgr_fail(PROTO_E_ARG, "%s is not a directory", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, MGR_CA_KEY);
	if (access(path, F_OK) == 0)
		return mgr_fail(PROTO_E_EXISTS, "%s already holds credentials "
				"(%s): not overwritten", dir, MGR_CA_KEY);
	if (RAND_bytes(id, sizeof(id)) != 1)
		return ossl_fail("random");
	snprintf(cn, sizeof(cn), "tapestry job CA %02x%02x%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
	if ((rc = key_and_cert("CA key", "CA certificate", cn, NULL, NULL, NULL,
			       days, &ca_key, &ca)) ||
	    (rc = write_pair(&w, dir, "ca", ca_key, ca)))
		goto out;
	for (int i = -1; i < nhosts; i++) {
		const char *h = i < 0 ? MGR_CA_MANAGER : hosts[i];
		unsigned char addr[16];

		if (inet_pton(AF_INET, h, addr) == 1 ||
		    inet_pton(AF_INET6, h, addr) == 1)
			snprintf(san, sizeof(san), "IP:%s", h);
		else
			snprintf(san, sizeof(san), "DNS:%s", h);
		if ((rc = key_and_cert("key", h, h, san, ca, ca_key, days, &key,
				       &x)) ||
		    (rc = write_pair(&w, dir, h, key, x)))
			goto out;
		X509_free(x);
		EVP_PKEY_free(key);
		x = NULL;
		key = NULL;
	}
	rc = write_secret(&w, dir);
out:
	X509_free(x);
	EVP_PKEY_free(key);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	for (int i = 0; i < w.n; i++) {
		if (rc)
			unlink(w.path[i]);
		free(w.path[i]);
	}
	free(w.path);
	if (rc && w.n)
		mgr_fail(rc, "nothing kept in %s: the %d files written were removed",
			 dir, w.n);
	return rc;
}

/* The options are described in the text, not one a line. */
static const struct mgr_opts_doc ca_doc = {
	.opt = {
		{"hosts", 'H', 0, "H1,H2,...", NULL},
		{"days", 'd', 0, "N", NULL},
	},
	.head = "usage: tapestry ca DIR [--hosts H1,H2,...] [--days N]\n"
		"Generate the credentials of one job in DIR (created, mode 0700):\n"
		"  ca.crt, ca.key       the job's certificate authority (P-256)\n"
		"  HOST.crt, HOST.key   one per --hosts name, for its collectors\n"
		"                       (TLS server and client; a name that is an\n"
		"                       IP address is put in the certificate as one)\n"
		"  manager.crt/.key     the manager's root receiver\n"
		"  secret               32 random bytes in hex: --secret-file of the\n"
		"                       collectors, TAPESTRY_SECRET_FILE of sensors\n"
		"Keys and the secret are mode 0600. An existing ca.key is never\n"
		"overwritten. --days: validity (default 30).\n"
		"Use: tapestry-collector --tls-cert DIR/HOST.crt --tls-key DIR/HOST.key\n"
		"     --tls-ca DIR/ca.crt --secret-file DIR/secret ...\n"
		"Exit status: 0, 1 (not made: said), 2 (usage).\n",
};

int mgr_cmd_ca(int argc, char **argv)
{
	static const char *hosts[MGR_CA_HOSTS_MAX];
	char *list = NULL, *save = NULL, *tok;
	int nhosts = 0, days = 30, opt, rc;
	long v;

	optind = 1;
	while ((opt = mgr_opts_next(&ca_doc, argc, argv)) > 0) {
		switch (opt) {
		case 'H':
			free(list);
			list = strdup(optarg);
			if (!list) {
				mgr_err("out of memory");
				return 1;
			}
			break;
		case 'd':
			if (proto_parse_long(optarg, 1, DAYS_MAX, &v)) {
				mgr_err("--days must be 1..%d", DAYS_MAX);
				free(list);
				return 2;
			}
			days = (int)v;
			break;
		}
	}
	if (opt < 0) {
		free(list);
		return mgr_opts_status(opt);
	}
	if (optind != argc - 1) {
		mgr_err("give one directory (tapestry ca --help)");
		free(list);
		return 2;
	}
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nhosts == MGR_CA_HOSTS_MAX) {
			mgr_err("more than %d hosts", MGR_CA_HOSTS_MAX);
			free(list);
			return 2;
		}
		hosts[nhosts++] = tok;
	}
	if (list && !nhosts) {
		mgr_err("--hosts names no host");
		free(list);
		return 2;
	}
	rc = mgr_ca_generate(argv[optind], hosts, nhosts, days);
	if (!rc)
		printf("credentials of %d host%s, the manager and the job secret "
		       "written to %s\n", nhosts, nhosts == 1 ? "" : "s",
		       argv[optind]);
	free(list);
	return rc ? 1 : 0;
}

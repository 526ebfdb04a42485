/*
 * collector/tls.c - TLS 1.3 with mutual certificate authentication for the
 * links between collectors (libevent's OpenSSL bufferevents).
 *
 * One server context (the --tls-listen listener) and one client context
 * (the link to --parent), both built from the same three files: this
 * collector's certificate, its private key, and the job's certificate
 * authority. Each side requires the other's certificate to chain to that
 * CA: the per-job CA is the membership test (docs/SECURITY.md). Host names
 * are not checked against the certificate: any certificate of the job's CA
 * is a member of the job. The secret challenge-response still runs inside
 * the TLS channel. docs/modules/collector-tls.md describes the design.
 */
#include <string.h>

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "collector/internal.h"

/* Load cert, key and CA into ctx, require TLS 1.3 and the peer's
 * certificate. 0 or PROTO_E_IO (the reason is logged). */
static int ctx_setup(SSL_CTX *ctx, const struct col_config *cfg, int server)
{
	char buf[256];
	const char *what = "";

	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		what = "TLS 1.3";
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1) {
		what = cfg->tls_cert;
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1) {
		what = cfg->tls_key;
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		what = "the key does not match the certificate";
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, cfg->tls_ca, NULL) != 1) {
		what = cfg->tls_ca;
		goto fail;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
			   (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
	if (server) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->tls_ca);

		if (!names) {
			what = cfg->tls_ca;
			goto fail;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
		/* every link is long-lived: no resumption, no tickets */
		SSL_CTX_set_num_tickets(ctx, 0);
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	}
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_ENABLE_PARTIAL_WRITE);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* A peer gone without close_notify (killed, or a drained child that
	 * just closes) is an EOF: frames are whole or refused, and ACKs tell
	 * what arrived, so a truncation cannot pass unseen. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	return 0;
fail:
	ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
	ERR_clear_error();
	col_err("TLS %s context: %s: %s", server ? "server" : "client", what,
		buf);
	return PROTO_E_IO;
}

int col_tls_init(struct col *c)
{
	const struct col_config *cfg = &c->cfg;
	int rc;

	if (!cfg->tls_cert && !cfg->tls_key && !cfg->tls_ca) {
		if (cfg->tls_listen)
			goto need_files;
		return 0;
	}
	if (!cfg->tls_cert || !cfg->tls_key || !cfg->tls_ca)
		goto need_files;
	if (cfg->tls_listen) {
		c->tls_srv = SSL_CTX_new(TLS_server_method());
		if (!c->tls_srv)
			return PROTO_E_NOMEM;
		rc = ctx_setup(c->tls_srv, cfg, 1);
		if (rc)
			return rc;
	}
	if (cfg->parent) {
		c->tls_cli = SSL_CTX_new(TLS_client_method());
		if (!c->tls_cli)
			return PROTO_E_NOMEM;
		rc = ctx_setup(c->tls_cli, cfg, 0);
		if (rc)
			return rc;
	}
	return 0;
need_files:
	col_err("TLS needs all of --tls-cert, --tls-key and --tls-ca");
	return PROTO_E_ARG;
}

void col_tls_fini(struct col *c)
{
	SSL_CTX_free(c->tls_srv);
	SSL_CTX_free(c->tls_cli);
	c->tls_srv = c->tls_cli = NULL;
}

/* An OpenSSL bufferevent over fd (-1: connect later) in the given state. */
static struct bufferevent *tls_bev(struct col *c, SSL_CTX *ctx,
				   evutil_socket_t fd,
				   enum bufferevent_ssl_state state)
{
	struct bufferevent *bev;
	SSL *ssl = SSL_new(ctx);

	if (!ssl)
		return NULL;
	bev = bufferevent_openssl_socket_new(c->base, fd, ssl, state,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	/* a peer that closes without close_notify is an ordinary EOF */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

struct bufferevent *col_tls_accept(struct col *c, evutil_socket_t fd)
{
	return tls_bev(c, c->tls_srv, fd, BUFFEREVENT_SSL_ACCEPTING);
}

struct bufferevent *col_tls_connect(struct col *c)
{
	return tls_bev(c, c->tls_cli, -1, BUFFEREVENT_SSL_CONNECTING);
}

const char *col_tls_error(struct bufferevent *bev, char *buf, size_t len)
{
	unsigned long e, best = 0, raw = 0;
	long vr = X509_V_OK;
	SSL *ssl = bufferevent_openssl_get_ssl(bev);

	/* libevent queues OpenSSL's errors, and for some failures the bare
	 * SSL_get_error() code (no library): keep the first real one. */
	while ((e = bufferevent_get_openssl_error(bev))) {
		if (ERR_GET_LIB(e) && !best)
			best = e;
		else if (!raw)
			raw = e;
	}
	if (ssl)
		vr = SSL_get_verify_result(ssl);
	if (vr != X509_V_OK) {
		snprintf(buf, len, "certificate: %s",
			 X509_verify_cert_error_string(vr));
	} else if (best) {
		ERR_error_string_n(best, buf, len);
	} else if (raw == SSL_ERROR_SSL) {
		snprintf(buf, len, "TLS protocol error (not a TLS 1.3 peer?)");
	} else {
		int err = EVUTIL_SOCKET_ERROR();

		snprintf(buf, len, "%s", err ? evutil_socket_error_to_string(err)
			 : "connection closed during the TLS handshake");
	}
	return buf;
}

const char *col_tls_peer(struct bufferevent *bev, char *buf, size_t len)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	X509 *x;

	buf[0] = 0;
	if (!ssl)
		return buf;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	x = SSL_get1_peer_certificate(ssl);
#else
	x = SSL_get_peer_certificate(ssl);
#endif
	if (!x)
		return buf;
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName,
				  buf, (int)len);
	X509_free(x);
	return buf;
}

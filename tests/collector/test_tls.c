/*
 * tests/collector/test_tls.c - collector/tls.c: TLS configuration checked at start.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "tests/collector/rig.h"

Test(tls, tls_configuration_checked)
{
	struct event_base *b = event_base_new();
	struct col_config cfg;
	int rc;

	col_log_level = -1;
	col_config_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	cfg.output = NULL;
	cfg.parent = "127.0.0.1:9";
	cfg.tls_cert = "/nonexistent/x.crt";	/* alone: incomplete */
	cr_assert_null(col_new(b, &cfg, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	cfg.tls_cert = NULL;
	cfg.tls_listen = "127.0.0.1:0";		/* a TLS port without files */
	cr_assert_null(col_new(b, &cfg, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	cfg.tls_cert = "/nonexistent/x.crt";
	cfg.tls_key = "/nonexistent/x.key";
	cfg.tls_ca = "/nonexistent/ca.crt";
	cr_assert_null(col_new(b, &cfg, &rc));	/* unreadable files */
	cr_assert_eq(rc, PROTO_E_IO);
	col_log_level = COL_LOG_ERROR;
	event_base_free(b);
}

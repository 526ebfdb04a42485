/*
 * manager/opts.c - a command's options, declared once: the getopt_long
 * tables and the --help text made from one list (manager/opts.h).
 */
#include <getopt.h>
#include <string.h>

#include "manager/opts.h"

int mgr_opts_next(const struct mgr_opts_doc *d, int argc, char **argv)
{
	struct option lo[MGR_OPTS_MAX + 2];
	char so[2 * MGR_OPTS_MAX + 4];
	size_t n = 0, s = 0;
	int c;

	if (d->in_order)
		so[s++] = '+';
	for (const struct mgr_opt *o = d->opt; o->name; o++) {
		lo[n++] = (struct option){o->name, o->arg ? required_argument :
					  no_argument, NULL, o->key};
		if (o->flags & MGR_OPT_SHORT) {
			so[s++] = (char)o->key;
			if (o->arg)
				so[s++] = ':';
		}
	}
	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n] = (struct option){NULL, 0, NULL, 0};
	so[s++] = 'h';
	so[s] = '\0';
	c = getopt_long(argc, argv, so, lo, NULL);
	if (c == -1)
		return MGR_OPTS_END;
	if (c == 'h') {
		mgr_opts_help(d, stdout);
		return MGR_OPTS_HELP;
	}
	if (c == '?' || c == ':') {
		mgr_opts_help(d, stderr);
		return MGR_OPTS_BAD;
	}
	return c;
}

/* TEXT's lines, the first after what is already on the line (WIDE
 * columns), the others indented to COL: the help starts at COL, or two
 * spaces after an option too long for it. */
static void lines(FILE *out, const char *text, int col, int wide)
{
	for (;;) {
		const char *nl = strchr(text, '\n');
		int len = nl ? (int)(nl - text) : (int)strlen(text);

		fprintf(out, "%*s%.*s\n", wide < col - 1 ? col - wide : 2, "",
			len, text);
		if (!nl)
			return;
		text = nl + 1;
		wide = 0;
	}
}

void mgr_opts_help(const struct mgr_opts_doc *d, FILE *out)
{
	fputs(d->head, out);
	for (const struct mgr_opt *o = d->opt; o->name; o++) {
		int wide;

		if (!o->help)
			continue;
		if (o->flags & MGR_OPT_SHORT)
			wide = fprintf(out, "  -%c, --%s", o->key, o->name);
		else
			wide = fprintf(out, "  --%s", o->name);
		if (o->arg)
			wide += fprintf(out, " %s", o->arg);
		lines(out, o->help, d->col, wide);
		if (o->more)
			o->more(out);
	}
	if (d->tail)
		fputs(d->tail, out);
}

int mgr_opts_usage(const struct mgr_opts_doc *d)
{
	mgr_opts_help(d, stderr);
	return 2;
}

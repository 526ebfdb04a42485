/*
 * manager/serve/json.c - JSON strings for the server's answers (its own file
 * so that the timeline index links without the HTTP server, in its tests).
 */
#include <event2/buffer.h>

#include "manager/serve/serve.h"

void srv_json_str(struct evbuffer *b, const char *s)
{
	if (!s) {
		evbuffer_add(b, "null", 4);
		return;
	}
	evbuffer_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			evbuffer_add_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			evbuffer_add_printf(b, "\\u%04x", c);
		else if (c == '<')	/* never "</script" inside a page */
			evbuffer_add(b, "\\u003c", 6);
		else
			evbuffer_add(b, s, 1);
	}
	evbuffer_add(b, "\"", 1);
}

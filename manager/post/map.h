/*
 * manager/post/map.h - the manager's bounded hash map: 128-bit keys (a, b)
 * to 32-bit values, at most max entries; open addressing, deletion by
 * backward shift. The request table (reqtab.h) and the viewer exports'
 * tables (processes, threads, message channels: manager/export/export_viz.h)
 * are made of it.
 */
#ifndef TAPESTRY_MGR_MAP_H
#define TAPESTRY_MGR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct mgr_map {
	struct mgr_map_slot *slot;
	size_t cap, n, max;
};

/* Empty map holding at most max keys. */
void mgr_map_init(struct mgr_map *m, size_t max);
void mgr_map_clear(struct mgr_map *m);	/* frees the slots */
/* Value of (a, b) or -1. */
int64_t mgr_map_get(const struct mgr_map *m, uint64_t a, uint64_t b);
/* Insert or replace; PROTO_E_FULL at the maximum, PROTO_E_NOMEM. */
int mgr_map_put(struct mgr_map *m, uint64_t a, uint64_t b, uint32_t v);
/* Remove (a, b) if present. */
void mgr_map_del(struct mgr_map *m, uint64_t a, uint64_t b);

#endif

/* SPDX-License-Identifier: MIT */
/* testinternal.h: helpers for the unit tests of the library's internals
 * (those that link its objects); testutil is shared with the program's
 * tests, which see only the public header. */
#ifndef DUPSCAN_TESTINTERNAL_H
#define DUPSCAN_TESTINTERNAL_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "cache/cache.h"

/* As matching begins (a scan loaded with its cache and walked): one record
 * an inode, then the cache's entries joined to the records as they are;
 * lookups in the cache are by record from then on. */
static inline void tu_cache_join(dupscan_scan *s)
{
	uint32_t *order = malloc((s->tree.nrecs ? s->tree.nrecs : 1) * sizeof(*order));
	ck_assert_ptr_nonnull(order);
	ck_assert_int_eq(ds_collapse_links(&s->tree, order), 0);
	ck_assert_int_eq(ds_cache_join(&s->cache, order, s->tree.nrecs), 0);
	free(order);
}

/* The record of the file named name (the walk's order is its own). */
static inline uint32_t tu_rec_named(const dupscan_scan *s, const char *name)
{
	for (uint32_t i = 0; i < s->tree.nrecs; i++)
		if (strcmp(ds_rec_name(&s->tree, ds_rec(&s->tree, i)), name) == 0)
			return i;
	ck_abort_msg("no record %s", name);
	return DS_NONE;
}

#endif

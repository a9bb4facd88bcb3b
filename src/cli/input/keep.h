/* SPDX-License-Identifier: MIT */
/* keep.h: --keep=RULE[,RULE...], which file of each set stays. */
#ifndef DUPSCAN_KEEP_H
#define DUPSCAN_KEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "dupscan.h"

struct keep_rule;
struct keep_rules {
	struct keep_rule *v;
	size_t n;
};

/* Append the comma-separated rules of spec (newest, oldest, shortest-path,
 * longest-path, shallowest, deepest, path=GLOB, most-links, arg-order,
 * most-tags).
 * @return 0, -ENOMEM, or -EINVAL with *bad and *badlen naming the rule not
 * understood. */
int keep_add(struct keep_rules *r, const char *spec, const char **bad, size_t *badlen);
void keep_free(struct keep_rules *r);

/* The file set keeps: among its protected files when it has any, the first
 * by the rules in order, ties going to the set's own order (-o, -O, -i).
 * @return its index in the set. */
size_t keep_index(const dupscan_set *set, const struct keep_rules *r);
/* The same among the files whose among[] is true (all of them for NULL). */
size_t keep_index_among(const dupscan_set *set, const struct keep_rules *r, const bool *among);

/* Count, for each path=GLOB rule, whether it matches a file of any of
 * scan's sets (before an action: a rule that matches none is a slip). */
void keep_count_paths(const struct keep_rules *r, const dupscan_scan *scan);
/* Rule i's GLOB when it is path=GLOB and matched no file (keep_index(),
 * keep_count_paths()), else NULL. */
const char *keep_unmatched(const struct keep_rules *r, size_t i);

/* Listing order: the kept file (index kept) first, then the others in the
 * set's order, so what is listed first is what -dN keeps. @return the index
 * in the set of the file listed at pos. */
static inline size_t keep_listed(size_t kept, size_t pos)
{
	return pos == 0 ? kept : pos <= kept ? pos - 1 : pos;
}

#endif /* DUPSCAN_KEEP_H */

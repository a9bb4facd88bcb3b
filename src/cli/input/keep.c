/* SPDX-License-Identifier: MIT */
/* keep.c: --keep=RULE[,RULE...], which file of a set stays: the rules in the
 * order given as tie-breakers, then the set's order. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glob.h"
#include "keep.h"

enum keep_kind {
	KEEP_NEWEST, KEEP_OLDEST, KEEP_SHORTEST, KEEP_LONGEST, KEEP_SHALLOWEST, KEEP_DEEPEST,
	KEEP_PATH, KEEP_MOST_LINKS, KEEP_ARG_ORDER, KEEP_MOST_TAGS
};

static const struct {
	const char *name;
	enum keep_kind kind;
} names[] = {
	{ "newest", KEEP_NEWEST }, { "oldest", KEEP_OLDEST }, { "shortest-path", KEEP_SHORTEST },
	{ "longest-path", KEEP_LONGEST }, { "shallowest", KEEP_SHALLOWEST }, { "deepest", KEEP_DEEPEST },
	{ "most-links", KEEP_MOST_LINKS }, { "arg-order", KEEP_ARG_ORDER }, { "most-tags", KEEP_MOST_TAGS },
};

struct keep_rule {
	enum keep_kind kind;
	char *glob; /* path=GLOB */
	size_t hits; /* files path=GLOB matched: none is said at the end */
};

int keep_add(struct keep_rules *r, const char *spec, const char **bad, size_t *badlen)
{
	for (const char *p = spec;;) {
		size_t len = strcspn(p, ",");
		struct keep_rule rule = { KEEP_NEWEST, NULL, 0 };
		bool known = false;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !known; i++)
			if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) {
				rule.kind = names[i].kind;
				known = true;
			}
		if (!known && len > 5 && strncmp(p, "path=", 5) == 0) {
			rule.kind = KEEP_PATH;
			if (!(rule.glob = strndup(p + 5, len - 5)))
				return -ENOMEM;
			known = true;
		}
		if (!known) {
			*bad = p;
			*badlen = len;
			return -EINVAL;
		}
		struct keep_rule *grown = realloc(r->v, (r->n + 1) * sizeof(*grown));
		if (!grown) {
			free(rule.glob);
			return -ENOMEM;
		}
		r->v = grown;
		r->v[r->n++] = rule;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

void keep_free(struct keep_rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].glob);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/* Directory depth of a path as given: its separators, repeated ones as one. */
static size_t depth(const char *path)
{
	size_t d = 0;
	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] != '/' && p[1] != '\0')
			d++;
	return d;
}

/* The bytes of a file's tags (--ignore-metadata: what is not its payload;
 * 0 for a file compared whole) */
static uint64_t tag_bytes(const dupscan_file *f)
{
	uint64_t payload;
	dupscan_file_media(f, &payload);
	return dupscan_file_size(f) - payload;
}

static nlink_t links(const dupscan_file *f)
{
	struct stat st;
	return lstat(dupscan_file_path(f), &st) == 0 ? st.st_nlink : 0;
}

/* <0 when a should be kept before b by this rule, >0 for b, 0 for a tie. */
static int by_rule(struct keep_rule *r, const dupscan_file *a, const dupscan_file *b)
{
	const char *pa = dupscan_file_path(a), *pb = dupscan_file_path(b);
	int64_t ma = dupscan_file_mtime_ns(a), mb = dupscan_file_mtime_ns(b);
	size_t la = strlen(pa), lb = strlen(pb), da, db;
	switch (r->kind) {
	case KEEP_NEWEST: return ma > mb ? -1 : ma < mb;
	case KEEP_OLDEST: return ma < mb ? -1 : ma > mb;
	case KEEP_SHORTEST: return la < lb ? -1 : la > lb;
	case KEEP_LONGEST: return la > lb ? -1 : la < lb;
	case KEEP_SHALLOWEST:
		da = depth(pa);
		db = depth(pb);
		return da < db ? -1 : da > db;
	case KEEP_DEEPEST:
		da = depth(pa);
		db = depth(pb);
		return da > db ? -1 : da < db;
	case KEEP_PATH: {
		bool ga = glob_match(r->glob, dupscan_file_relpath(a), false);
		bool gb = glob_match(r->glob, dupscan_file_relpath(b), false);
		r->hits += ga + gb;
		return ga == gb ? 0 : ga ? -1 : 1;
	}
	case KEEP_MOST_LINKS: {
		nlink_t na = links(a), nb = links(b);
		return na > nb ? -1 : na < nb;
	}
	case KEEP_MOST_TAGS: {
		uint64_t ta = tag_bytes(a), tb = tag_bytes(b);
		return ta > tb ? -1 : ta < tb;
	}
	case KEEP_ARG_ORDER: {
		int ia = dupscan_file_arg_index(a), ib = dupscan_file_arg_index(b);
		return ia < ib ? -1 : ia > ib;
	}
	}
	return 0;
}

void keep_count_paths(const struct keep_rules *r, const dupscan_scan *scan)
{
	for (size_t i = 0; i < r->n; i++) {
		struct keep_rule *k = &r->v[i];
		for (size_t s = 0; k->kind == KEEP_PATH && !k->hits && s < dupscan_set_count(scan); s++) {
			const dupscan_set *set = dupscan_get_set(scan, s);
			for (size_t f = 0; !k->hits && f < dupscan_set_file_count(set); f++)
				k->hits += glob_match(k->glob, dupscan_file_relpath(dupscan_set_file(set, f)), false);
		}
	}
}

const char *keep_unmatched(const struct keep_rules *r, size_t i)
{
	return i < r->n && r->v[i].kind == KEEP_PATH && r->v[i].hits == 0 ? r->v[i].glob : NULL;
}

size_t keep_index(const dupscan_set *set, const struct keep_rules *r)
{
	return keep_index_among(set, r, NULL);
}

size_t keep_index_among(const dupscan_set *set, const struct keep_rules *r, const bool *among)
{
	size_t n = dupscan_set_file_count(set), best = SIZE_MAX;
	bool any_protected = false;
	for (size_t k = 0; k < n; k++)
		any_protected |= (!among || among[k]) && dupscan_file_is_protected(dupscan_set_file(set, k)) != 0;
	for (size_t k = 0; k < n; k++) {
		const dupscan_file *f = dupscan_set_file(set, k);
		if (among && !among[k])
			continue;
		/* a protected file stays whatever the rules say */
		if (any_protected && !dupscan_file_is_protected(f))
			continue;
		if (best == SIZE_MAX) {
			best = k;
			continue;
		}
		int c = 0;
		for (size_t i = 0; r && i < r->n && c == 0; i++)
			c = by_rule(&r->v[i], f, dupscan_set_file(set, best));
		if (c < 0)
			best = k;
	}
	return best == SIZE_MAX ? 0 : best;
}

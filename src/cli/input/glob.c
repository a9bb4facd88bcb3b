/* SPDX-License-Identifier: MIT */
/* glob.c: --exclude/--include matching: fnmatch(3) component by component, so
 * '*' never crosses a '/', and "**" for any depth. */
#define _GNU_SOURCE /* strndup */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

int glob_add(struct glob_list *l, const char *pattern)
{
	if (!pattern[0] || strcmp(pattern, "/") == 0)
		return -EINVAL;
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	size_t *hits = realloc(l->hits, (l->n + 1) * sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	l->hits = hits;
	hits[l->n] = 0;
	if (!(v[l->n] = strdup(pattern)))
		return -ENOMEM;
	l->n++;
	return 0;
}

void glob_free(struct glob_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->hits);
	l->hits = NULL;
	l->v = NULL;
	l->n = 0;
}

/* Split s (modified: '/' become NULs) into its non-empty components.
 * @return how many, or (size_t)-1 on ENOMEM. */
static size_t components(char *s, char ***out)
{
	size_t n = 0, cap = 8;
	char **v = malloc(cap * sizeof(*v));
	for (char *tok = s; v && *tok;) {
		char *slash = strchr(tok, '/');
		if (slash)
			*slash = '\0';
		if (*tok) {
			if (n == cap) {
				char **nv = realloc(v, (cap *= 2) * sizeof(*v));
				if (!nv) {
					free(v);
					v = NULL;
					break;
				}
				v = nv;
			}
			v[n++] = tok;
		}
		if (!slash)
			break;
		tok = slash + 1;
	}
	*out = v;
	return v ? n : (size_t)-1;
}

/* Pattern components against path components, by dynamic programming over
 * (pattern suffix, path suffix): "**" cannot make it exponential. */
static bool match_components(char **pat, size_t np, char **path, size_t ns)
{
	bool *next = calloc(ns + 1, sizeof(bool)), *cur = calloc(ns + 1, sizeof(bool));
	bool result = false;
	if (!next || !cur)
		goto out;
	next[ns] = true; /* no pattern left matches no path left */
	for (size_t i = np; i-- > 0;) {
		bool any = strcmp(pat[i], "**") == 0;
		for (size_t j = ns + 1; j-- > 0;) {
			if (any)
				cur[j] = next[j] || (j < ns && cur[j + 1]);
			else
				cur[j] = j < ns && next[j + 1] && fnmatch(pat[i], path[j], 0) == 0;
		}
		bool *swap = next;
		next = cur;
		cur = swap;
	}
	result = next[0];
out:
	free(next);
	free(cur);
	return result;
}

bool glob_match(const char *pattern, const char *relpath, bool is_dir)
{
	size_t plen = strlen(pattern);
	bool dir_pattern = plen > 0 && pattern[plen - 1] == '/';
	if (dir_pattern != is_dir)
		return false;
	while (plen > 0 && pattern[plen - 1] == '/')
		plen--;
	/* a bare name pattern: the last component, at any depth */
	bool bare = !memchr(pattern, '/', plen);
	const char *subject = relpath;
	if (bare && strrchr(relpath, '/'))
		subject = strrchr(relpath, '/') + 1;
	char *pc = strndup(pattern, plen), *sc = strdup(subject);
	char **pv = NULL, **sv = NULL;
	size_t np = pc ? components(pc, &pv) : (size_t)-1;
	size_t ns = sc ? components(sc, &sv) : (size_t)-1;
	bool hit = np != (size_t)-1 && ns != (size_t)-1 && match_components(pv, np, sv, ns);
	free(pv);
	free(sv);
	free(pc);
	free(sc);
	return hit;
}

bool glob_dir_keeps(const struct glob_list *ex, const char *reldir)
{
	for (size_t i = 0; i < ex->n; i++)
		if (glob_match(ex->v[i], reldir, true)) {
			ex->hits[i]++;
			return false;
		}
	return true;
}

/* Does a directory pattern match one of the directories above relpath? */
static bool under_dir_pattern(const char *pattern, const char *relpath)
{
	char *copy = strdup(relpath);
	bool hit = false;
	if (!copy)
		return false;
	for (char *slash = strrchr(copy, '/'); slash && !hit; slash = strrchr(copy, '/')) {
		*slash = '\0';
		hit = glob_match(pattern, copy, true);
	}
	free(copy);
	return hit;
}

/* (every pattern that has matched nothing yet is tried, not only up to the
 * first that matches: one that never matches is said at the end) */
static bool matches_any(const struct glob_list *l, const char *relpath)
{
	bool hit = false;
	for (size_t i = 0; i < l->n; i++) {
		if (hit && l->hits[i])
			continue;
		if (glob_match(l->v[i], relpath, false) || under_dir_pattern(l->v[i], relpath)) {
			l->hits[i]++;
			hit = true;
		}
	}
	return hit;
}

bool glob_file_keeps(const struct glob_list *ex, const struct glob_list *in, const char *relpath)
{
	if (matches_any(ex, relpath))
		return false;
	return in->n == 0 || matches_any(in, relpath);
}

/* SPDX-License-Identifier: MIT */
/* glob.c: --exclude/--include matching: fnmatch(3) component by component, so
 * '*' never crosses a '/', and "**" for any depth. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

int glob_add(struct glob_list *l, const char *pattern)
{
	if (!pattern[0] || strcmp(pattern, "/") == 0)
		return -1;
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	l->v = v;
	if (!(v[l->n] = strdup(pattern)))
		return -1;
	l->n++;
	return 0;
}

void glob_free(struct glob_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Match components [p, pend) of the pattern against [s, send) of the path;
 * both are '/'-separated runs. One component is copied out for fnmatch. */
static bool match_parts(const char *p, const char *pend, const char *s, const char *send)
{
	while (p < pend && *p == '/')
		p++;
	while (s < send && *s == '/')
		s++;
	if (p == pend)
		return s == send;
	const char *pc = memchr(p, '/', (size_t)(pend - p));
	pc = pc ? pc : pend;
	if (pc - p == 2 && p[0] == '*' && p[1] == '*') {
		/* zero or more whole components */
		for (const char *t = s;; t++) {
			if ((t == s || t[-1] == '/' || t == send) && match_parts(pc, pend, t, send))
				return true;
			if (t == send)
				return false;
		}
	}
	if (s == send)
		return false;
	const char *sc = memchr(s, '/', (size_t)(send - s));
	sc = sc ? sc : send;
	char pbuf[4096], sbuf[4096];
	size_t pl = (size_t)(pc - p), sl = (size_t)(sc - s);
	if (pl >= sizeof(pbuf) || sl >= sizeof(sbuf))
		return false;
	memcpy(pbuf, p, pl);
	pbuf[pl] = '\0';
	memcpy(sbuf, s, sl);
	sbuf[sl] = '\0';
	return fnmatch(pbuf, sbuf, 0) == 0 && match_parts(pc, pend, sc, send);
}

bool glob_match(const char *pattern, const char *relpath, bool is_dir)
{
	size_t plen = strlen(pattern);
	bool dir_pattern = plen > 0 && pattern[plen - 1] == '/';
	if (dir_pattern != is_dir)
		return false;
	while (plen > 0 && pattern[plen - 1] == '/')
		plen--;
	const char *pend = pattern + plen;
	const char *send = relpath + strlen(relpath);
	if (!memchr(pattern, '/', plen)) {
		/* a bare name pattern: the last component, at any depth */
		const char *base = strrchr(relpath, '/');
		return match_parts(pattern, pend, base ? base + 1 : relpath, send);
	}
	return match_parts(pattern, pend, relpath, send);
}

bool glob_dir_keeps(const struct glob_list *ex, const char *reldir)
{
	for (size_t i = 0; i < ex->n; i++)
		if (glob_match(ex->v[i], reldir, true))
			return false;
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

static bool matches_any(const struct glob_list *l, const char *relpath)
{
	for (size_t i = 0; i < l->n; i++)
		if (glob_match(l->v[i], relpath, false) || under_dir_pattern(l->v[i], relpath))
			return true;
	return false;
}

bool glob_file_keeps(const struct glob_list *ex, const struct glob_list *in, const char *relpath)
{
	if (matches_any(ex, relpath))
		return false;
	return in->n == 0 || matches_any(in, relpath);
}

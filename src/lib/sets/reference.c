/* SPDX-License-Identifier: MIT */
/* reference.c: reference trees ("is it all backed up?"). Files added by
 * dupscan_add_reference() are the copies asked about: only the sets holding
 * one of them and another file are sets, the reference files first in each
 * (the file a set keeps is one of them), and the other files in no such set
 * are missing from the references. A size group without a reference file,
 * or with nothing else, is never read: its files are missing, or not asked
 * about, whatever their bytes. Reference files are protected (never changed
 * by an action). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sets/sets.h"

bool ds_rec_reference(const dupscan_scan *s, uint32_t rec)
{
	return s->tree.args[s->tree.dirs[ds_rec_dir(s, rec)].arg].reference;
}

bool ds_group_asked(const dupscan_scan *s, const uint32_t *recs, size_t n)
{
	if (!s->references)
		return true;
	bool ref = false, other = false;
	for (size_t i = 0; i < n && !(ref && other); i++) {
		if (ds_rec_reference(s, recs[i]))
			ref = true;
		else
			other = true;
	}
	return ref && other;
}

bool ds_reference_first(struct dupscan_set *set)
{
	const dupscan_scan *s = set->count ? set->files[0].scan : NULL;
	if (!s || !s->references)
		return true;
	/* stable: each part keeps the chosen order */
	struct dupscan_file *tmp = malloc(set->count * sizeof(*tmp));
	size_t n = 0, refs = 0;
	for (int pass = 0; tmp && pass < 2; pass++)
		for (size_t k = 0; k < set->count; k++) {
			bool ref = !(set->files[k].idx & DS_OUTSIDE) && ds_rec_reference(s, set->files[k].idx);
			if (ref == (pass == 0))
				tmp[n++] = set->files[k];
			refs += pass == 0 && ref;
		}
	if (tmp)
		memcpy(set->files, tmp, set->count * sizeof(*tmp));
	free(tmp);
	return tmp && refs > 0 && refs < set->count;
}

/* Is record i, not a reference file, one asked about (listed, a file the
 * scan examined: no alias, no file left out)? */
static bool asked(const dupscan_scan *s, uint32_t i)
{
	const struct ds_rec *r = ds_rec(s, i);
	if (r->flags & (DS_F_ALIAS | DS_F_SKIPPED) || ds_rec_reference(s, i))
		return false;
	return !(r->flags & DS_F_DROPPED);
}

/* Which records are in a set: by record, true. */
static bool *in_sets(const dupscan_scan *s)
{
	bool *in = calloc(s->tree.nrecs ? s->tree.nrecs : 1, sizeof(*in));
	for (size_t i = 0; in && i < s->nsets; i++)
		for (size_t k = 0; k < s->sets[i].count; k++)
			if (!(s->sets[i].files[k].idx & DS_OUTSIDE))
				in[s->sets[i].files[k].idx] = true;
	return in;
}

static int build_missing(dupscan_scan *s)
{
	bool *in = in_sets(s);
	if (!in)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t i = 0; i < s->tree.nrecs; i++)
		n += asked(s, i) && !in[ds_rec_rep(s, i)] && !in[i];
	s->missing = malloc((n ? n : 1) * sizeof(*s->missing));
	int rc = s->missing ? 0 : -ENOMEM;
	s->nmissing = 0;
	for (uint32_t i = 0; rc == 0 && i < s->tree.nrecs; i++) {
		if (!asked(s, i) || in[ds_rec_rep(s, i)] || in[i])
			continue;
		char *p = ds_rec_path_dup(s, i);
		if (!p)
			rc = -ENOMEM;
		else
			s->missing[s->nmissing++] = ds_file_of(s, p, i, ds_rel_offset(s, ds_rec_dir(s, i)));
	}
	free(in);
	return rc ? rc : ds_sort(s->missing, s->nmissing, sizeof(*s->missing), ds_cmp_file, s);
}

/* ---- the library's calls ---- */

DUPSCAN_API int dupscan_add_reference(dupscan_scan *s, const char *path, int recurse)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	int rc = dupscan_protect_path(s, path);
	int a = rc < 0 ? rc : dupscan_add_path(s, path, recurse);
	if (a >= 0) {
		s->tree.args[a].reference = true;
		s->references = true;
	}
	return a;
}

DUPSCAN_API int dupscan_file_is_reference(const dupscan_file *f)
{
	return f && !(f->idx & DS_OUTSIDE) && ds_rec_reference(f->scan, f->idx);
}

DUPSCAN_API int dupscan_find_missing(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (!s->ran || !s->references)
		return DUPSCAN_E_STATE;
	if (s->missing_built)
		return 0;
	free(s->missing);
	s->missing = NULL;
	int rc = build_missing(s);
	s->missing_built = rc == 0;
	return rc;
}

DUPSCAN_API size_t dupscan_missing_count(const dupscan_scan *s)
{
	return s && s->missing_built ? s->nmissing : 0;
}

DUPSCAN_API const dupscan_file *dupscan_missing_file(const dupscan_scan *s, size_t i)
{
	return s && s->missing_built && i < s->nmissing ? &s->missing[i] : NULL;
}

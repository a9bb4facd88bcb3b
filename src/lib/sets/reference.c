/* SPDX-License-Identifier: MIT */
/* reference.c: reference trees ("is it all backed up?"). Files added by
 * dupscan_add_reference() are the copies asked about: only the sets holding
 * one of them and another file are sets (sets.c keeps no other), the
 * reference files first in each (records/order.c: the file a set keeps is
 * one of them), and the other files in no such set are missing from the
 * references. A size group
 * without a reference file, or with nothing else, is never read (match.c):
 * its files are missing, or not asked about, whatever their bytes.
 * Reference files are protected (never changed by an action). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/sets.h"

/* Is record i, not a reference file, one asked about (listed, a file the
 * scan examined: no alias, no file left out)? */
static bool asked(const struct ds_results *s, uint32_t i)
{
	return ds_rec_listed(ds_rec(s->tree, i)) && !ds_rec_reference(s->tree, i);
}

/* Which of this host's records are in a set: by record, true. */
static bool *in_sets(const struct ds_results *s)
{
	bool *in = calloc(s->tree->nrecs ? s->tree->nrecs : 1, sizeof(*in));
	for (size_t i = 0; in && i < s->nsets; i++)
		for (size_t k = 0; k < s->sets[i].count; k++) {
			const struct dupscan_file *f = &s->sets[i].files[k];
			/* (another host's file is a record of its mirror scan) */
			if (f->tree == s->tree && !(f->idx & DS_OUTSIDE))
				in[f->idx] = true;
		}
	return in;
}

/* This host's files under no reference, and how many were asked about. */
static int build_missing(struct ds_results *s)
{
	bool *in = in_sets(s);
	if (!in)
		return -ENOMEM;
	size_t n = 0;
	s->nasked = 0;
	for (uint32_t i = 0; i < s->tree->nrecs; i++) {
		s->nasked += asked(s, i);
		n += asked(s, i) && !in[ds_rec_rep(s->tree, i)] && !in[i];
	}
	s->missing = malloc((n ? n : 1) * sizeof(*s->missing));
	int rc = s->missing ? 0 : -ENOMEM;
	s->nmissing = 0;
	for (uint32_t i = 0; rc == 0 && i < s->tree->nrecs; i++) {
		if (!asked(s, i) || in[ds_rec_rep(s->tree, i)] || in[i])
			continue;
		char *p = ds_rec_path_dup(s->tree, i);
		if (!p)
			rc = -ENOMEM;
		else
			s->missing[s->nmissing++] = ds_file_of(s->tree, p, i, ds_rel_offset(s->tree, ds_rec_dir(s->tree, i)));
	}
	free(in);
	return rc;
}

/* ---- the library's calls ---- */

DUPSCAN_API int dupscan_file_is_reference(const dupscan_file *f)
{
	return f && !(f->idx & DS_OUTSIDE) && ds_rec_reference(f->tree, f->idx);
}

int ds_build_missing(struct ds_results *s)
{
	free(s->missing);
	s->missing = NULL;
	return build_missing(s);
}

void ds_missing_built(struct ds_results *s)
{
	s->missing_built = true;
}

size_t ds_missing_count(const struct ds_results *s)
{
	return s && s->missing_built ? s->nmissing : 0;
}

uint64_t ds_missing_asked(const struct ds_results *s)
{
	return s && s->missing_built ? s->nasked : 0;
}

const dupscan_file *ds_missing_file(const struct ds_results *s, size_t i)
{
	return s && s->missing_built && i < s->nmissing ? &s->missing[i] : NULL;
}

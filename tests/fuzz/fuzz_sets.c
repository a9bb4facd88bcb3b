/* SPDX-License-Identifier: MIT */
/* fuzz_sets.c: libFuzzer target for the set-building core, fed with synthetic
 * file records instead of a disk: names, sizes, inodes (so hard links and
 * names reached twice occur), arguments, content classes and options come from
 * the input. Checks what every caller relies on: sets of two or more, each
 * file at most once, files in the chosen order, sets ordered by first file,
 * members of a set sharing a content class, unique files in no set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "sets/sets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t take(const uint8_t **p, const uint8_t *end)
{
	return *p < end ? *(*p)++ : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	dupscan_scan *s = NULL;
	if (dupscan_create(&s) != 0)
		abort();
	uint8_t opts = take(&p, end);
	dupscan_set_option(s, DUPSCAN_OPT_HARD_LINKS, opts & 1);
	dupscan_set_option(s, DUPSCAN_OPT_ISOLATE, (opts >> 1) & 1);
	dupscan_set_option(s, DUPSCAN_OPT_REVERSE, (opts >> 2) & 1);
	dupscan_set_option(s, DUPSCAN_OPT_PARAM_ORDER, (opts >> 3) & 1);
	dupscan_set_option(s, DUPSCAN_OPT_ORDER, (opts >> 4) & 1);
	dupscan_add_path(s, "a", 1);
	dupscan_add_path(s, "b", 1);
	struct stat dst = { 0 };
	uint32_t dirs[4];
	dst.st_ino = 1;
	ds_add_dir(&s->tree, "a", 1, DS_NONE, 0, &dst, &dirs[0]);
	dst.st_ino = 2;
	ds_add_dir(&s->tree, "b/", 2, DS_NONE, 1, &dst, &dirs[1]);
	dst.st_ino = 3;
	ds_add_dir(&s->tree, "sub", 3, dirs[0], 0, &dst, &dirs[2]);
	dst.st_ino = 4;
	ds_add_dir(&s->tree, "x9", 2, dirs[1], 1, &dst, &dirs[3]);
	uint8_t cls_of[256];
	while (p + 4 <= end && s->tree.nrecs < 200) {
		uint8_t b0 = take(&p, end), b1 = take(&p, end), b2 = take(&p, end), b3 = take(&p, end);
		char name[8];
		size_t nlen = (size_t)(b3 & 3) + 1;
		for (size_t i = 0; i < nlen; i++)
			name[i] = "a0.-Z9 _"[(b1 >> i) & 7];
		name[nlen] = '\0';
		struct stat st = { 0 };
		st.st_size = (b0 & 31) % 4;     /* few sizes, one per inode as on a disk */
		st.st_ino = 100 + (b0 & 31);    /* shared inodes: hard links, names reached twice */
		st.st_dev = 1;
		st.st_mode = 0100644;
		st.st_mtim.tv_sec = b1;
		uint32_t d = dirs[b3 >> 6];
		/* one directory entry is one file: a name met again is the same file,
		 * reached twice, as through a repeated argument */
		uint8_t cls = (uint8_t)(b2 >> 2);
		for (uint32_t j = 0; j < s->tree.nrecs; j++) {
			const struct ds_rec *q = ds_rec(&s->tree, j);
			if (ds_rec_dir(&s->tree, j) == d && strcmp(ds_rec_name(&s->tree, q, (char[DS_NAME_BUF]){ 0 }), name) == 0) {
				st.st_size = (off_t)ds_rec_size(&s->tree, q);
				st.st_ino = (ino_t)ds_rec_ino(&s->tree, q);
				st.st_mtim.tv_sec = q->mtime_ns / 1000000000;
				cls = cls_of[j];
				break;
			}
		}
		if (ds_add_rec(&s->tree, name, nlen, d, &st) != 0)
			abort();
		cls_of[s->tree.nrecs - 1] = cls;
	}
	uint32_t *order = malloc((s->tree.nrecs ? s->tree.nrecs : 1) * sizeof(*order));
	if (!order || ds_collapse_links(&s->tree, order) != 0 || ds_index_reserve(&s->tree.index, s->tree.nrecs) != 0)
		abort();
	/* classes as the matching would confirm them: by (size, class byte), one
	 * representative per inode, named by its first member */
	for (uint32_t i = 0; i < s->tree.nrecs; i++) {
		struct ds_rec *r = ds_rec(&s->tree, i);
		if (ds_rec_rep(&s->tree, i) != i || (r->flags & DS_F_ALIAS))
			continue;
		uint32_t first = i;
		for (uint32_t j = 0; j < i; j++) {
			struct ds_rec *q = ds_rec(&s->tree, j);
			if (ds_rec_rep(&s->tree, j) == j && !(q->flags & DS_F_ALIAS) && ds_rec_size(&s->tree, q) == ds_rec_size(&s->tree, r) && cls_of[j] == cls_of[i]) {
				first = j;
				break;
			}
		}
		if (ds_index_insert(&s->tree.index, i, first, cls_of[i], cls_of[i], ds_rec_size(&s->tree, r)) != 0)
			abort();
	}
	s->core.ran = true;
	if (ds_build_sets(&s->results) != 0)
		abort();
	uint8_t *seen = calloc(s->tree.nrecs ? s->tree.nrecs : 1, 1);
	const dupscan_set *prev = NULL;
	for (size_t k = 0; k < dupscan_set_count(s); k++) {
		const dupscan_set *set = dupscan_get_set(s, k);
		size_t n = dupscan_set_file_count(set);
		if (n < 2)
			abort();
		for (size_t f = 0; f < n; f++) {
			const struct dupscan_file *file = dupscan_set_file(set, f);
			if (f && ds_cmp_file(s, dupscan_set_file(set, f - 1), file) > 0)
				abort(); /* files in the chosen order */
			if (ds_index_class(&s->tree.index, ds_rec_rep(&s->tree, file->idx)) !=
			    ds_index_class(&s->tree.index, ds_rec_rep(&s->tree, dupscan_set_file(set, 0)->idx)))
				abort(); /* one content class per set */
		}
		if (prev && ds_cmp_file(s, dupscan_set_file(prev, 0), dupscan_set_file(set, 0)) > 0)
			abort(); /* sets ordered by their first file */
		prev = set;
	}
	/* no path twice across sets, none both in a set and unique */
	size_t total = 0;
	for (size_t k = 0; k < dupscan_set_count(s); k++)
		total += dupscan_set_file_count(dupscan_get_set(s, k));
	const char **paths = malloc((total + dupscan_unique_count(s) + 1) * sizeof(*paths));
	size_t np = 0;
	for (size_t k = 0; k < dupscan_set_count(s); k++)
		for (size_t f = 0; f < dupscan_set_file_count(dupscan_get_set(s, k)); f++)
			paths[np++] = dupscan_file_path(dupscan_set_file(dupscan_get_set(s, k), f));
	for (size_t u = 0; u < dupscan_unique_count(s); u++)
		paths[np++] = dupscan_file_path(dupscan_unique_file(s, u));
	for (size_t i = 0; i < np; i++)
		for (size_t j = i + 1; j < np; j++)
			if (strcmp(paths[i], paths[j]) == 0)
				abort();
	free(paths);
	free(seen);
	free(order);
	dupscan_free(s);
	return 0;
}

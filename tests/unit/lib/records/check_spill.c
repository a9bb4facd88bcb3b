/* SPDX-License-Identifier: MIT */
/* check_spill: records past the memory budget. A budget of one byte spills
 * the walk's records every table block and matches a band of 4096 at a
 * time: the sets (plain, -H, hdd mode, -I) are those of the scan without a
 * budget; only the sets' files are kept, and actions on them work; what
 * needs every record is refused; a folder that cannot take the file fails
 * the run with the folder named; the hash cache saved under a budget is the
 * one saved without, and trusted or resumed under one gives the same sets. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "records/spill.h"
#include "cache/cache.h"
#include "testutil.h"

#define FILES 20000

/* FILES files in 40 directories, of 0 to 299 bytes (about 66 a size), one
 * in five a copy of an earlier file, one in 500 a hard link of another. */
static char *make_tree(void)
{
	char *dir = tu_tmpdir_shm();
	char rel[64], to[64];
	for (unsigned i = 0; i < FILES; i++) {
		unsigned seed = i % 5 == 4 ? (i * 7919u) % (i - 1) : i;
		uint64_t size = (seed * 2654435761u >> 8) % 300;
		snprintf(rel, sizeof(rel), "d%02u/f%05u", i % 40, i);
		if (i % 500 == 499) {
			snprintf(to, sizeof(to), "d%02u/f%05u", (i - 7) % 40, i - 7);
			char *a = tu_path(dir, to), *b = tu_path(dir, rel);
			ck_assert_int_eq(link(a, b), 0);
			free(a);
			free(b);
			continue;
		}
		tu_file(dir, rel, size, seed, -1);
	}
	return dir;
}

static dupscan_scan *scan_budget(const char *dir, uint64_t budget, const char *tmp, int opt, int64_t val)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	if (opt)
		ck_assert_int_eq(dupscan_set_option(s, opt, val), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	if (tmp)
		ck_assert_int_eq(dupscan_set_temp_dir(s, tmp), 0);
	/* (below what the option takes: every block of records spills) */
	s->core.opt.max_memory = budget;
	return s;
}

static void same_sets(const char *dir, int opt, int64_t val)
{
	dupscan_scan *plain = scan_budget(dir, 0, NULL, opt, val);
	unsigned long long r0 = tu_rchar();
	ck_assert_int_eq(dupscan_run(plain), 0);
	unsigned long long r1 = tu_rchar();
	ck_assert_uint_eq(dupscan_spilled(plain), 0);
	dupscan_scan *spill = scan_budget(dir, 1, dir, opt, val);
	ck_assert_int_eq(dupscan_run(spill), 0);
	unsigned long long r2 = tu_rchar();
	/* each file read as often as without a budget: what more is read is the
	 * temporary file (40 bytes a record and its name); in hdd mode the first
	 * blocks the first pass keeps are held to 1 MiB under so small a budget,
	 * and a group whose blocks were not kept reads them once more */
	unsigned long long more = (unsigned long long)FILES * 56 + (opt == DUPSCAN_OPT_IO ? r1 - r0 : 0);
	ck_assert_uint_ge(r2 - r1, r1 - r0);
	ck_assert_msg(r2 - r1 <= r1 - r0 + more, "option %d: %llu bytes read against %llu", opt, r2 - r1, r1 - r0);
	ck_assert_uint_ge(dupscan_spilled(spill), FILES - FILES / 500);
	char *a = tu_sets(plain, dir), *b = tu_sets(spill, dir);
	ck_assert_uint_gt(dupscan_set_count(plain), 1000);
	ck_assert_str_eq(a, b);
	/* only the sets' files were kept: fewer records than files */
	ck_assert_uint_lt(spill->tree.nrecs, FILES / 2);
	free(a);
	free(b);
	dupscan_free(plain);
	dupscan_free(spill);
}

START_TEST(test_same_sets)
{
	char *dir = make_tree();
	same_sets(dir, 0, 0);
	same_sets(dir, DUPSCAN_OPT_HARD_LINKS, 1);
	same_sets(dir, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD);
	same_sets(dir, DUPSCAN_OPT_ZERO_MATCH, 1);
	same_sets(dir, DUPSCAN_OPT_ORDER, DUPSCAN_ORDER_TIME);
	/* the temporary file had no name: the folder it went to holds the tree only */
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	unsigned entries = 0;
	for (struct dirent *e; (e = readdir(d));)
		entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	ck_assert_uint_eq(entries, 40);
	tu_cleanup(dir);
}
END_TEST

/* What needs every record: refused before anything is written, or after
 * the run, as DUPSCAN_E_MEMORY. */
START_TEST(test_refused)
{
	char *dir = make_tree();
	dupscan_scan *s = scan_budget(dir, 1, NULL, DUPSCAN_OPT_DIRS, 1);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_MEMORY);
	dupscan_free(s);
	/* after a spilled run: no files missing from a reference told, no
	 * unique files */
	char *ref = tu_path(dir, "d00"), *other = tu_path(dir, "d01");
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_ge(dupscan_add_reference(s, ref, 1), 0);
	ck_assert_int_ge(dupscan_add_path(s, other, 1), 0);
	s->core.opt.max_memory = 1;
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_gt(dupscan_spilled(s), 0);
	ck_assert_int_eq(dupscan_find_missing(s), DUPSCAN_E_MEMORY);
	dupscan_free(s);
	free(ref);
	free(other);
	s = scan_budget(dir, 1, NULL, 0, 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_gt(dupscan_spilled(s), 0);
	ck_assert_uint_eq(dupscan_unique_count(s), 0);
	dupscan_free(s);
	/* a budget the records fit: nothing spilled, unique files as ever */
	s = scan_budget(dir, 1ull << 32, NULL, 0, 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_eq(dupscan_spilled(s), 0);
	ck_assert_uint_gt(dupscan_unique_count(s), 1000);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* line[0..n) sorted and joined, a newline after each; the lines freed. */
static char *joined(char **line, size_t n)
{
	size_t len = 1, at = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(line[i]) + 1;
	char *out = malloc(len);
	ck_assert_ptr_nonnull(out);
	out[0] = '\0';
	qsort(line, n, sizeof(*line), cmp_line);
	for (size_t i = 0; i < n; i++) {
		at += (size_t)snprintf(out + at, len - at, "%s\n", line[i]);
		free(line[i]);
	}
	free(line);
	return out;
}

/* Every directory's figures and the overlaps of scan s, one line each,
 * sorted (the walk's threads number the directories in any order). */
static char *figures(dupscan_scan *s)
{
	ck_assert_int_eq(dupscan_tally_dirs(s), 0);
	ck_assert_int_eq(dupscan_find_overlaps(s, 10), 0);
	size_t n = dupscan_dir_count(s), m = dupscan_overlap_count(s);
	char **line = calloc(n + m, sizeof(*line)), path[4096], other[4096];
	ck_assert_ptr_nonnull(line);
	for (size_t d = 0; d < n; d++) {
		dupscan_dir_path(s, d, path, sizeof(path));
		ck_assert_int_gt(asprintf(&line[d], "%s %llu %llu %llu %llu", path,
					  (unsigned long long)dupscan_dir_tally(s, d, DUPSCAN_TALLY_FILES),
					  (unsigned long long)dupscan_dir_tally(s, d, DUPSCAN_TALLY_BYTES),
					  (unsigned long long)dupscan_dir_tally(s, d, DUPSCAN_TALLY_DUP_FILES),
					  (unsigned long long)dupscan_dir_tally(s, d, DUPSCAN_TALLY_DUP_BYTES)), 0);
	}
	for (size_t i = 0; i < m; i++) {
		size_t a, b;
		ck_assert_int_eq(dupscan_overlap_dirs(s, i, &a, &b), 0);
		dupscan_dir_path(s, a, path, sizeof(path));
		dupscan_dir_path(s, b, other, sizeof(other));
		ck_assert_int_gt(asprintf(&line[n + i], "~ %s %s %llu %llu", path, other,
					  (unsigned long long)dupscan_overlap_tally(s, i, 0, DUPSCAN_TALLY_FILES),
					  (unsigned long long)dupscan_overlap_tally(s, i, 1, DUPSCAN_TALLY_BYTES)), 0);
	}
	return joined(line, n + m);
}

/* Past the budget the unique files still count in their directories'
 * figures as their bands end (those alone in their size, never read back,
 * too): every directory's figures and the overlaps are those of a scan
 * without a budget, plain, with -H, in hdd mode, with -z. */
START_TEST(test_tally)
{
	char *dir = make_tree();
	for (unsigned i = 0; i < 7; i++) { /* alone in their sizes */
		char rel[32];
		snprintf(rel, sizeof(rel), "solo/s%u", i);
		tu_file(dir, rel, 5000 + i, 900 + i, -1);
	}
	const int opts[][2] = { { 0, 0 }, { DUPSCAN_OPT_HARD_LINKS, 1 }, { DUPSCAN_OPT_IO, DUPSCAN_IO_HDD },
				{ DUPSCAN_OPT_ZERO_MATCH, 1 } };
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		dupscan_scan *plain = scan_budget(dir, 0, NULL, opts[k][0], opts[k][1]);
		dupscan_scan *spill = scan_budget(dir, 1, NULL, opts[k][0], opts[k][1]);
		ck_assert_int_eq(dupscan_run(plain), 0);
		ck_assert_int_eq(dupscan_run(spill), 0);
		ck_assert_uint_gt(dupscan_spilled(spill), 0);
		char *a = figures(plain), *b = figures(spill);
		ck_assert_msg(strstr(a, "~ ") != NULL, "no overlap to compare");
		ck_assert_msg(strstr(a, "/solo 7 35021 0 0\n") != NULL, "the files alone in their sizes not counted");
		ck_assert_msg(strcmp(a, b) == 0, "option %d: the figures differ", opts[k][0]);
		free(a);
		free(b);
		dupscan_free(plain);
		dupscan_free(spill);
	}
	tu_cleanup(dir);
}
END_TEST

/* The missing files of s (under root), one a line, sorted; and how many
 * were asked about. */
static char *missing_of(dupscan_scan *s, const char *root, uint64_t *asked)
{
	ck_assert_int_eq(dupscan_find_missing(s), 0);
	size_t n = dupscan_missing_count(s);
	char **line = calloc(n ? n : 1, sizeof(*line));
	ck_assert_ptr_nonnull(line);
	for (size_t i = 0; i < n; i++)
		ck_assert_ptr_nonnull(line[i] = strdup(dupscan_file_path(dupscan_missing_file(s, i)) + strlen(root)));
	*asked = dupscan_missing_asked(s);
	return joined(line, n);
}

/* DUPSCAN_OPT_KEEP_UNIQUE past the budget: KEEP_ALL lists the unique files
 * a scan without a budget lists; KEEP_OTHERS, with a reference, the missing
 * files (and the count asked about) of one, keeping none of the reference's
 * own unique files; a value it does not know is refused. */
START_TEST(test_keep_unique)
{
	char *dir = make_tree();
	dupscan_scan *plain = scan_budget(dir, 0, NULL, 0, 0), *spill = scan_budget(dir, 1, NULL, DUPSCAN_OPT_KEEP_UNIQUE,
										DUPSCAN_KEEP_ALL);
	ck_assert_int_eq(dupscan_set_option(spill, DUPSCAN_OPT_KEEP_UNIQUE, 3), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_run(plain), 0);
	ck_assert_int_eq(dupscan_run(spill), 0);
	ck_assert_uint_gt(dupscan_spilled(spill), 0);
	char *a = tu_uniques(plain, dir), *b = tu_uniques(spill, dir);
	ck_assert_uint_gt(dupscan_unique_count(plain), 1000);
	ck_assert_msg(strcmp(a, b) == 0, "the unique files differ");
	free(a);
	free(b);
	dupscan_free(plain);
	dupscan_free(spill);
	/* a reference: d00 to d19; the others asked about */
	dupscan_scan *s[2];
	uint32_t kept[2];
	char *m[2];
	uint64_t asked[2];
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(dupscan_create(&s[k]), 0);
		for (unsigned d = 0; d < 40; d++) {
			char rel[8];
			snprintf(rel, sizeof(rel), "d%02u", d);
			char *p = tu_path(dir, rel);
			ck_assert_int_ge(d < 20 ? dupscan_add_reference(s[k], p, 1) : dupscan_add_path(s[k], p, 1), 0);
			free(p);
		}
		ck_assert_int_eq(dupscan_set_option(s[k], DUPSCAN_OPT_KEEP_UNIQUE, DUPSCAN_KEEP_OTHERS), 0);
		s[k]->core.opt.max_memory = k; /* (0: none; 1: every block spills) */
		ck_assert_int_eq(dupscan_run(s[k]), 0);
		m[k] = missing_of(s[k], dir, &asked[k]);
		kept[k] = s[k]->tree.nrecs;
	}
	ck_assert_uint_gt(dupscan_spilled(s[1]), 0);
	ck_assert_uint_gt(strlen(m[0]), 1000);
	ck_assert_msg(strcmp(m[0], m[1]) == 0, "the missing files differ");
	ck_assert_uint_eq(asked[1], asked[0]);
	/* the references' unique files went: far fewer records than files */
	ck_assert_uint_lt(kept[1], kept[0] * 3 / 4);
	for (int k = 0; k < 2; k++) {
		free(m[k]);
		dupscan_free(s[k]);
	}
	tu_cleanup(dir);
}
END_TEST

/* A scan holding n records and no file behind them, one directory: record
 * i named f%06u, inode 100 + i, of size size_of(i). */
static dupscan_scan *records_only(uint32_t n, uint64_t (*size_of)(uint32_t i))
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	struct stat st;
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | 0755;
	uint32_t d;
	ck_assert_int_eq(ds_add_dir(&s->tree, "d", 1, DS_NONE, 0, &st, &d), 0);
	st.st_mode = S_IFREG | 0644;
	char name[32];
	for (uint32_t i = 0; i < n; i++) {
		st.st_ino = 100 + i;
		st.st_size = (off_t)size_of(i);
		snprintf(name, sizeof(name), "f%06u", i);
		ck_assert_int_eq(ds_add_rec(&s->tree, name, strlen(name), d, &st), 0);
	}
	return s;
}

/* Every size twice. */
static uint64_t pair_size(uint32_t i)
{
	return 1 + i / 2;
}

/* 10,000 of sizes of their own, 12,000 pairs, 16,000 of one size. */
static uint64_t mixed_size(uint32_t i)
{
	return i < 10000 ? 1 + i : i < 34000 ? 20000 + (i - 10000) / 2 : 50000;
}

/* Where most records are kept (every one a pair here, all put in a class),
 * each band holds at least half as many as were kept before it: its
 * matching goes over those too, and bands of the least would make that a
 * square of the files. */
START_TEST(test_bands_kept)
{
	char *tmp = tu_tmpdir();
	dupscan_scan *s = records_only(100000, pair_size);
	struct ds_tree *t = &s->tree;
	ck_assert_int_eq(ds_spill_new(t, 1, DS_SPILL_SSD, tmp, false), 0);
	ds_spill_mode(t, false);
	ck_assert_int_eq(ds_spill_out(t), 0);
	unsigned bands = 0;
	for (bool more = true; more;) {
		uint32_t kept = t->nrecs;
		ck_assert_int_eq(ds_spill_band(t, &more), 0);
		uint32_t got = t->nrecs - kept;
		bands++;
		uint32_t least = kept / 2 > DS_SPILL_LEAST ? kept / 2 : DS_SPILL_LEAST;
		if (more)
			ck_assert_uint_ge(got, least);
		/* every pair a class: all of the band kept */
		ck_assert_int_eq(ds_index_reserve(&t->index, t->nrecs), 0);
		for (uint32_t i = kept; i + 1 < t->nrecs; i += 2) {
			ck_assert_uint_eq(ds_rec_size(t, ds_rec(t, i)), ds_rec_size(t, ds_rec(t, i + 1)));
			ck_assert_int_eq(ds_index_insert(&t->index, i, i, i, i, ds_rec_size(t, ds_rec(t, i))), 0);
			ck_assert_int_eq(ds_index_insert(&t->index, i + 1, i, i, i, ds_rec_size(t, ds_rec(t, i))), 0);
		}
		ck_assert_int_eq(ds_spill_keep(t), 0);
		ck_assert_uint_eq(t->nrecs, kept + got);
	}
	ck_assert_uint_eq(t->nrecs, 100000);
	/* 4,096, then half of what is kept: a few bands, not 100,000 / 4,096 */
	ck_assert_uint_le(bands, 12);
	dupscan_free(s);
	tu_cleanup(tmp);
}
END_TEST

/* A cache file's entries, each with its path: key, hashes, flags, path, and
 * its class; the class numbers are a run's own (salted), so two files are
 * compared by the partition they make. */
struct saved {
	struct cache_entry e;
	char path[128];
};

static struct saved *read_cache(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	struct cache_header h;
	ck_assert_uint_eq(fread(&h, sizeof(h), 1, f), 1);
	ck_assert_int_eq(memcmp(h.magic, CACHE_MAGIC, 8), 0);
	struct saved *v = calloc(h.count + 1, sizeof(*v));
	char *strings = malloc(h.strings + 1);
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_nonnull(strings);
	for (uint64_t i = 0; i < h.count; i++)
		ck_assert_uint_eq(fread(&v[i].e, sizeof(v[i].e), 1, f), 1);
	ck_assert_uint_eq(fread(strings, 1, h.strings, f), h.strings);
	for (uint64_t i = 0; i < h.count; i++)
		snprintf(v[i].path, sizeof(v[i].path), "%s", strings + v[i].e.path);
	fclose(f);
	free(strings);
	*n = (size_t)h.count;
	return v;
}

struct pair { uint64_t a, b; };
static int cmp_pair(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	return a->a != b->a ? (a->a < b->a ? -1 : 1) : a->b != b->b ? (a->b < b->b ? -1 : 1) : 0;
}

/* Does class a name the same files as class b, entry by entry? Every a maps to one b. */
static bool classes_map(struct pair *p, size_t n)
{
	qsort(p, n, sizeof(*p), cmp_pair);
	for (size_t i = 1; i < n; i++)
		if (p[i].a == p[i - 1].a && p[i].b != p[i - 1].b)
			return false;
	return true;
}

static void same_cache(const char *x, const char *y)
{
	size_t nx, ny;
	struct saved *a = read_cache(x, &nx), *b = read_cache(y, &ny);
	ck_assert_uint_eq(nx, ny);
	ck_assert_uint_gt(nx, FILES / 4);
	struct pair *ab = malloc(nx * sizeof(*ab)), *ba = malloc(nx * sizeof(*ba));
	size_t proven = 0, full = 0;
	for (size_t i = 0; i < nx; i++) {
		ck_assert_uint_eq(a[i].e.dev, b[i].e.dev);
		ck_assert_uint_eq(a[i].e.ino, b[i].e.ino);
		ck_assert_uint_eq(a[i].e.size, b[i].e.size);
		ck_assert_int_eq(a[i].e.mtime_ns, b[i].e.mtime_ns);
		ck_assert_int_eq(a[i].e.ctime_ns, b[i].e.ctime_ns);
		ck_assert_uint_eq(a[i].e.partial, b[i].e.partial);
		ck_assert_uint_eq(a[i].e.full, b[i].e.full);
		ck_assert_uint_eq(a[i].e.flags, b[i].e.flags);
		ck_assert_str_eq(a[i].path, b[i].path);
		ck_assert_uint_eq(a[i].e.cls == 0, b[i].e.cls == 0);
		proven += (a[i].e.flags & F_PROVEN) != 0;
		full += (a[i].e.flags & F_FULL) != 0;
		ab[i] = (struct pair){ a[i].e.cls, b[i].e.cls };
		ba[i] = (struct pair){ b[i].e.cls, a[i].e.cls };
	}
	ck_assert_uint_gt(proven, FILES / 4);
	ck_assert_uint_gt(full, FILES / 4);
	ck_assert(classes_map(ab, nx));
	ck_assert(classes_map(ba, nx));
	free(ab);
	free(ba);
	free(a);
	free(b);
}

static dupscan_scan *cached_run(const char *dir, const char *cache, uint64_t budget, int trust)
{
	dupscan_scan *s = scan_budget(dir, budget, NULL, DUPSCAN_OPT_CACHE_TRUST, trust);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	s->cache.racy_ns = -60LL * 1000000000; /* (the tree was just made: as if proven a minute on) */
	return s;
}

/* The cache saved by a spilled scan is the one saved without a budget; a
 * trusting run under a budget takes its proofs and reads no file again. */
START_TEST(test_cache)
{
	char *dir = make_tree();
	char *tmp = tu_tmpdir_shm();
	char *c1 = tu_path(tmp, "plain.cache"), *c2 = tu_path(tmp, "spilled.cache");
	dupscan_scan *plain = cached_run(dir, c1, 0, 0);
	ck_assert_int_eq(dupscan_run(plain), 0);
	dupscan_scan *spill = cached_run(dir, c2, 1, 0);
	ck_assert_int_eq(dupscan_run(spill), 0);
	ck_assert_uint_gt(dupscan_spilled(spill), 0);
	char *a = tu_sets(plain, dir), *b = tu_sets(spill, dir);
	ck_assert_str_eq(a, b);
	free(b);
	same_cache(c1, c2);
	/* trusted under a budget: the same sets, each from the cache, and what
	 * was read of the tree's files (the run's count, not the spill's own
	 * file nor the cache's, which each band's join reads) as without one */
	uint64_t first = atomic_load(&spill->core.progress.read);
	ck_assert_uint_gt(first, 0);
	dupscan_free(spill);
	dupscan_free(plain);
	plain = cached_run(dir, c1, 0, 1);
	ck_assert_int_eq(dupscan_run(plain), 0);
	spill = cached_run(dir, c2, 1, 1);
	ck_assert_int_eq(dupscan_run(spill), 0);
	ck_assert_uint_gt(dupscan_spilled(spill), 0);
	b = tu_sets(spill, dir);
	ck_assert_str_eq(a, b);
	for (size_t i = 0; i < dupscan_set_count(spill); i++)
		ck_assert_int_eq(dupscan_set_proof(dupscan_get_set(spill, i), NULL), DUPSCAN_PROOF_CACHE);
	ck_assert_uint_eq(atomic_load(&spill->core.progress.read), atomic_load(&plain->core.progress.read));
	ck_assert_uint_lt(atomic_load(&spill->core.progress.read), first / 10);
	free(b);
	dupscan_free(spill);
	dupscan_free(plain);
	free(a);
	free(c1);
	free(c2);
	tu_cleanup(tmp);
	tu_cleanup(dir);
}
END_TEST


struct canceler {
	dupscan_scan *s;
	uint64_t after;
};

static void cancel_after(void *user, int phase, uint64_t done, uint64_t total)
{
	(void)total;
	struct canceler *c = user;
	if (phase == DUPSCAN_PHASE_MATCH && done >= c->after)
		dupscan_cancel(c->s);
}

static void copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	char buf[65536];
	for (size_t n; (n = fread(buf, 1, sizeof(buf), a)) > 0;)
		ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
	fclose(a);
	fclose(b);
}

/* A run canceled half way under a budget leaves its log; the next, trusting
 * under a budget, takes it on disk (past an eighth of the budget: in runs
 * of 4096 records) and reads what a run taking it whole reads, no more,
 * with the sets of a whole scan; then the log is folded and gone. */
START_TEST(test_resume)
{
	char *dir = make_tree();
	char *tmp = tu_tmpdir_shm();
	char *c1 = tu_path(tmp, "a.cache"), *c2 = tu_path(tmp, "b.cache");
	char *l1 = tu_path(tmp, "a.cache.log"), *l2 = tu_path(tmp, "b.cache.log");
	dupscan_scan *plain = scan_budget(dir, 0, NULL, 0, 0);
	ck_assert_int_eq(dupscan_run(plain), 0);
	char *want = tu_sets(plain, dir);
	dupscan_free(plain);
	dupscan_scan *s = cached_run(dir, c1, 1, 0);
	struct canceler cn = { s, FILES / 3 };
	dupscan_set_progress_callback(s, cancel_after, &cn);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_CANCELED);
	uint64_t killed_read = atomic_load(&s->core.progress.read);
	dupscan_free(s);
	struct stat st;
	ck_assert_int_eq(stat(c1, &st), -1); /* not saved: the log holds the work */
	ck_assert_int_eq(stat(l1, &st), 0);
	ck_assert_uint_gt(st.st_size, 4096 * 88);
	copy_file(l1, l2);
	/* taken whole (no budget) and on disk (a budget of a byte) */
	dupscan_scan *whole = cached_run(dir, c1, 0, 1), *runs = cached_run(dir, c2, 1, 1);
	ck_assert_int_eq(dupscan_run(whole), 0);
	ck_assert_int_eq(dupscan_run(runs), 0);
	ck_assert(!ds_log_on_disk(whole->cache.run));
	ck_assert(ds_log_on_disk(runs->cache.run));
	char *a = tu_sets(whole, dir), *b = tu_sets(runs, dir);
	ck_assert_str_eq(a, want);
	ck_assert_str_eq(b, want);
	uint64_t ra = atomic_load(&whole->core.progress.read), rb = atomic_load(&runs->core.progress.read);
	ck_assert_uint_eq(rb, ra);
	ck_assert_uint_gt(killed_read, 0);
	/* what the canceled run worked out is not read again */
	dupscan_scan *fresh = scan_budget(dir, 1, NULL, 0, 0);
	ck_assert_int_eq(dupscan_run(fresh), 0);
	ck_assert_uint_lt(rb, atomic_load(&fresh->core.progress.read));
	dupscan_free(fresh);
	ck_assert_int_eq(stat(l1, &st), -1);
	ck_assert_int_eq(stat(l2, &st), -1);
	same_cache(c1, c2);
	free(a);
	free(b);
	dupscan_free(whole);
	dupscan_free(runs);
	free(want);
	free(c1);
	free(c2);
	free(l1);
	free(l2);
	tu_cleanup(tmp);
	tu_cleanup(dir);
}
END_TEST

struct seen {
	char path[4096];
	int code;
};

static void on_error(void *user, const char *path, int code)
{
	struct seen *e = user;
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	e->code = code;
}

START_TEST(test_no_folder)
{
	char *dir = make_tree();
	char *gone = tu_path(dir, "no-such-folder");
	dupscan_scan *s = scan_budget(dir, 1, gone, 0, 0);
	struct seen e = { "", 0 };
	dupscan_set_error_callback(s, on_error, &e);
	ck_assert_int_eq(dupscan_run(s), -ENOENT);
	ck_assert_str_eq(e.path, gone);
	ck_assert_int_eq(e.code, -ENOENT);
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	dupscan_free(s);
	free(gone);
	tu_cleanup(dir);
}
END_TEST

/* The kept records still say what the files were: an action on a set of a
 * spilled scan removes the copy, and refuses a file changed since. */
START_TEST(test_act_on_kept)
{
	char *dir = make_tree();
	dupscan_scan *s = scan_budget(dir, 1, NULL, 0, 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_gt(dupscan_spilled(s), 0);
	size_t n = dupscan_set_count(s);
	ck_assert_uint_gt(n, 2);
	const dupscan_set *a = dupscan_get_set(s, 0), *b = dupscan_get_set(s, n - 1);
	const dupscan_file *keep = dupscan_set_file(a, 0), *dup = dupscan_set_file(a, 1);
	ck_assert_uint_eq(dupscan_file_size(keep), dupscan_file_size(dup));
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), 0);
	ck_assert_int_eq(access(dupscan_file_path(dup), F_OK), -1);
	ck_assert_int_eq(access(dupscan_file_path(keep), F_OK), 0);
	/* the other end of the sizes: its copy rewritten since the scan */
	keep = dupscan_set_file(b, 0);
	dup = dupscan_set_file(b, 1);
	FILE *f = fopen(dupscan_file_path(keep), "r+");
	ck_assert_ptr_nonnull(f);
	fputc('!', f);
	fclose(f);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), DUPSCAN_E_CHANGED);
	ck_assert_int_eq(access(dupscan_file_path(dup), F_OK), 0);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

/* The bands, from one run of 50,000 records (no file behind them): 10,000
 * of sizes of their own, 12,000 pairs, and 16,000 of one size. A record alone
 * in its size never comes back; a size is in one band only; the large group,
 * past what a band holds under the budget, is a band of its own. */
START_TEST(test_bands)
{
	char *tmp = tu_tmpdir();
	dupscan_scan *s = records_only(50000, mixed_size);
	struct ds_tree *t = &s->tree;
	char name[32];
	/* (no budget while adding: one run holds them all) */
	ck_assert_int_eq(ds_spill_new(t, 7u << 20, DS_SPILL_SSD, tmp, false), 0);
	ds_spill_mode(t, false);
	ck_assert_int_eq(ds_spill_out(t), 0);
	ck_assert_uint_eq(ds_spill_count(t), 50000);
	ck_assert_uint_eq(t->nrecs, 0);
	uint32_t *band_of = calloc(60000, sizeof(*band_of)); /* by size: the band it came in, 1 on */
	unsigned bands = 0, back = 0;
	bool big_alone = false;
	for (bool more = true; more;) {
		ck_assert_int_eq(ds_spill_band(t, &more), 0);
		bands++;
		bool big = false, other = false;
		for (uint32_t i = 0; i < t->nrecs; i++) {
			uint64_t size = ds_rec_size(t, ds_rec(t, i));
			ck_assert_uint_ge(size, 20000); /* never one alone in its size */
			ck_assert(band_of[size] == 0 || band_of[size] == bands);
			band_of[size] = bands;
			big = big || size == 50000;
			other = other || size != 50000;
			/* each record as it was: its name and inode */
			snprintf(name, sizeof(name), "f%06u", (unsigned)(ds_rec_ino(t, ds_rec(t, i)) - 100));
			ck_assert_str_eq(ds_rec_name(t, ds_rec(t, i), (char[DS_NAME_BUF]){ 0 }), name);
		}
		big_alone = big_alone || (big && !other);
		back += t->nrecs;
		ck_assert_int_eq(ds_spill_keep(t), 0); /* no class: nothing kept */
		ck_assert_uint_eq(t->nrecs, 0);
	}
	ck_assert_uint_eq(back, 40000);
	ck_assert_uint_gt(bands, 2);
	ck_assert(big_alone);
	free(band_of);
	dupscan_free(s);
	tu_cleanup(tmp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spill");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_same_sets);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_tally);
	tcase_add_test(tc, test_keep_unique);
	tcase_add_test(tc, test_no_folder);
	tcase_add_test(tc, test_act_on_kept);
	tcase_add_test(tc, test_bands);
	tcase_add_test(tc, test_bands_kept);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_resume);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

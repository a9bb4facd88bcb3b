/* SPDX-License-Identifier: MIT */
/* check_match.c: from walked records to classes in the index: files are
 * grouped by size and first block, then compared byte by byte, whether their
 * hashes were read this run or taken from the cache, whether a bucket fits the
 * files one thread may hold open or not; a file that fails leaves its bucket
 * and the others are matched as if it had never been there. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan.h"
#include "testinternal.h"
#include "testutil.h"
#include "walk/walk.h"
#include "match/result.h"
#include "sets/sets.h"
#include "cache/cache_run.h"

struct errlog {
	int count;
	char last[512];
};

static void log_error(void *user, const char *path, int code)
{
	struct errlog *l = user;
	(void)code;
	l->count++;
	snprintf(l->last, sizeof(l->last), "%s", path);
}

struct setup {
	const char *cache;     /* hash cache, or NULL */
	size_t max_open;       /* files one thread may hold open; 0: as a run sets it */
	int threads;           /* 0: one */
	int opt, val;          /* one more option, or 0 */
	const char *vanish;    /* a file removed between the walk and the matching */
	int io;                /* DUPSCAN_IO_*: 0, auto */
	size_t sweep_budget;   /* contents hdd mode's sweep may keep; 0: the default */
};
/* every test runs twice (a loop test): reading as on an SSD, and as on a
 * spinning disk (first blocks read ahead in disk order, one stream) */
#define IO (_i ? DUPSCAN_IO_HDD : DUPSCAN_IO_SSD)

/* Evict a file's pages from the page cache (written back first: nothing is lost). */
static int evict(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_F) {
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			fdatasync(fd); /* dirty pages are not dropped */
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	return 0;
}

/* dir walked and matched as dupscan_run() would, with the knobs of st. As
 * on a spinning disk, the files are first put out of the page cache, so that
 * their first blocks are read in disk order (what is cached is read at once). */
static dupscan_scan *matched(const char *dir, const struct setup *st, struct errlog *log)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	dupscan_set_error_callback(s, log_error, log);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, st->threads ? st->threads : 1), 0);
	if (st->opt)
		ck_assert_int_eq(dupscan_set_option(s, st->opt, st->val), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, st->io), 0);
	if (st->cache)
		ck_assert_int_eq(dupscan_set_cache(s, st->cache), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	s->core.ran = true;
	s->reading.max_open = st->max_open ? st->max_open : 256;
	if (st->sweep_budget)
		s->core.opt.sweep_budget = st->sweep_budget;
	if (st->io == DUPSCAN_IO_HDD)
		ck_assert_int_eq(nftw(dir, evict, 16, FTW_PHYS), 0);
	if (st->cache)
		ck_assert_int_eq(ds_cache_load(&s->cache), 0);
	ck_assert_int_eq(ds_walk(&s->walk), 0);
	if (st->vanish) {
		char *p = tu_path(dir, st->vanish);
		ck_assert_int_eq(unlink(p), 0);
		free(p);
	}
	ck_assert_int_eq(ds_match(&s->match), 0);
	ck_assert_int_eq(ds_build_sets(&s->results), 0);
	bool folded;
	if (st->cache)
		ck_assert_int_eq(ds_cache_save(&s->cache, &folded), 0);
	return s;
}

static char *sets_of(const char *dir, const struct setup *st, struct errlog *log)
{
	dupscan_scan *s = matched(dir, st, log);
	char *sets = tu_sets(s, dir);
	dupscan_free(s);
	return sets;
}

/* A tree with every way two files of one size can differ. */
static void fixture(const char *dir)
{
	tu_file(dir, "big/a1", 300000, 1, -1);
	tu_file(dir, "big/a2", 300000, 1, -1);
	tu_file(dir, "big/a3", 300000, 1, -1);
	tu_file(dir, "big/late", 300000, 1, 200000);   /* differs past its first block */
	tu_file(dir, "big/early", 300000, 1, 100);     /* differs in its first block */
	tu_file(dir, "big/last", 300000, 1, 299999);   /* differs in its last byte */
	tu_file(dir, "big/last2", 300000, 1, 299999);
	tu_file(dir, "small/s1", 3000, 2, -1);         /* within one block */
	tu_file(dir, "small/s2", 3000, 2, -1);
	tu_file(dir, "small/s3", 3000, 2, 2999);
	tu_file(dir, "alone", 12345, 3, -1);            /* no other file of its size */
}

static const char *const FIXTURE_SETS = "big/a1 big/a2 big/a3|big/last big/last2|small/s1 small/s2";

START_TEST(test_classes_by_content)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	struct errlog log = { 0 };
	struct setup st = { .io = IO };
	dupscan_scan *s = matched(dir, &st, &log);
	char *sets = tu_sets(s, dir);
	ck_assert_str_eq(sets, FIXTURE_SETS);
	ck_assert_int_eq(log.count, 0);
	/* the index holds each class once, named by one of its members; files in
	 * no class are in none */
	uint32_t cls_a = DS_NONE;
	for (uint32_t i = 0; i < s->tree.nrecs; i++) {
		const char *name = ds_rec_name(&s->tree, ds_rec(&s->tree, i), (char[DS_NAME_BUF]){ 0 });
		uint32_t cls = ds_index_class(&s->tree.index, i);
		if (name[0] == 'a' && name[1] != 'l') {
			ck_assert_uint_ne(cls, DS_NONE);
			ck_assert(cls_a == DS_NONE || cls == cls_a);
			cls_a = cls;
			ck_assert_uint_eq(ds_index_class(&s->tree.index, cls), cls); /* the name is a member */
		} else if (!strcmp(name, "late") || !strcmp(name, "early") || !strcmp(name, "s3") ||
			   !strcmp(name, "alone")) {
			ck_assert_msg(cls == DS_NONE, "%s is in a class", name);
		}
	}
	free(sets);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

/* same00 to same19: one content of size bytes. */
static void twenty_copies(const char *dir, uint64_t size)
{
	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "same%02d", i);
		tu_file(dir, name, size, 7, -1);
	}
}

/* More files of one content than may be open at once: the same classes, by
 * full hash and batches against one member. Two members fail on the way. */
START_TEST(test_bucket_larger_than_open_files)
{
	char *dir = tu_tmpdir();
	char name[32];
	twenty_copies(dir, 100000);
	for (int i = 0; i < 5; i++) { /* same first block, each its own end */
		snprintf(name, sizeof(name), "other%d", i);
		tu_file(dir, name, 100000, 7, 50000 + i);
	}
	tu_file(dir, "twin1", 100000, 7, 99999);
	tu_file(dir, "twin2", 100000, 7, 99999);
	struct errlog log = { 0 };
	struct setup wide = { .io = IO };
	char *expect = sets_of(dir, &wide, &log);
	ck_assert_int_eq(log.count, 0);
	struct setup narrow = { .max_open = 8, .io = IO };
	char *got = sets_of(dir, &narrow, &log);
	ck_assert_str_eq(got, expect);
	ck_assert_int_eq(log.count, 0);
	ck_assert_ptr_nonnull(strstr(got, "twin1 twin2"));
	free(got);
	/* the first file of the bucket vanishes before it is read */
	narrow.vanish = "same00";
	got = sets_of(dir, &narrow, &log);
	ck_assert_int_eq(log.count, 1);
	ck_assert_ptr_nonnull(strstr(log.last, "same00"));
	ck_assert_ptr_nonnull(strstr(got, "same01 same02"));
	ck_assert_ptr_nonnull(strstr(got, "same19|twin1 twin2"));
	free(got);
	free(expect);
	tu_cleanup(dir);
}
END_TEST

/* Files within one block, more of one content than may be open at once:
 * one run without keys to sort (their full hash is their first block's),
 * confirmed in batches; the first vanishes before it is read. */
START_TEST(test_small_bucket_larger_than_open_files)
{
	char *dir = tu_tmpdir();
	twenty_copies(dir, 300);
	tu_file(dir, "other", 300, 7, 299);
	struct errlog log = { 0 };
	struct setup narrow = { .max_open = 8, .io = IO };
	char *got = sets_of(dir, &narrow, &log);
	ck_assert_int_eq(log.count, 0);
	ck_assert_str_eq(got, "same00 same01 same02 same03 same04 same05 same06 same07 same08 same09 same10 same11 "
			      "same12 same13 same14 same15 same16 same17 same18 same19");
	free(got);
	narrow.vanish = "same00";
	got = sets_of(dir, &narrow, &log);
	ck_assert_int_eq(log.count, 1);
	ck_assert_ptr_nonnull(strstr(log.last, "same00"));
	ck_assert_str_eq(got, "same01 same02 same03 same04 same05 same06 same07 same08 same09 same10 same11 "
			      "same12 same13 same14 same15 same16 same17 same18 same19");
	free(got);
	tu_cleanup(dir);
}
END_TEST

/* A bucket too large to compare side by side is hashed in rounds of growing
 * length: files that differ early are not read to their end (300 camera RAW
 * files of one size, alike in their first 64 KiB, were read whole). */
START_TEST(test_large_bucket_read_progressively)
{
	char *dir = tu_tmpdir();
	char name[32];
	const uint64_t size = 2 * 1024 * 1024;
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "raw%02d", i);
		tu_file(dir, name, size, 9, 20000 + i); /* each its own byte at 20000 + i */
	}
	/* alike through the first round (to 68 KiB), more than the bucket's
	 * open files but few enough each to be read side by side: a triple, a
	 * pair, and two that differ only past 1 MiB */
	static const char *const late[] = { "trip_a", "trip_b", "trip_c", "twin_a", "twin_b", "late_a", "late_b" };
	static const int64_t flip[] = { 30000, 30000, 30000, 40000, 40000, 1000000, 1000001 };
	for (size_t i = 0; i < 7; i++)
		tu_file(dir, late[i], size, 9, flip[i]);
	struct errlog log = { 0 };
	/* the third round: as on a NAS, the runs side by side on threads */
	struct setup st = { .max_open = 8, .io = _i < 2 ? IO : DUPSCAN_IO_NET, .threads = _i < 2 ? 1 : 4 };
	unsigned long long before = tu_rchar();
	char *sets = sets_of(dir, &st, &log);
	unsigned long long used = tu_rchar() - before;
	ck_assert_str_eq(sets, "trip_a trip_b trip_c|twin_a twin_b");
	/* the seven are read to their end once (their first round twice: as it
	 * was hashed, then compared), not hashed to the end and compared again;
	 * the others a first block and one 64 KiB round */
	const unsigned long long round = DS_BLOCK + 64 * 1024;
	unsigned long long bound = 7 * (size + round) + 12 * round + 256 * 1024;
	/* (a spinning disk's buckets are the sweep's, in disk order: its own tests) */
	ck_assert_msg(st.io == DUPSCAN_IO_HDD || used <= bound, "read %llu bytes, more than %llu", used, bound);
	ck_assert_int_eq(log.count, 0);
	free(sets);
	tu_cleanup(dir);
}
END_TEST

/* A member that vanishes leaves its bucket: the others are one set still. */
START_TEST(test_vanished_member)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	struct errlog log = { 0 };
	struct setup st = { .vanish = "big/a1", .io = IO };
	char *sets = sets_of(dir, &st, &log);
	ck_assert_str_eq(sets, "big/a2 big/a3|big/last big/last2|small/s1 small/s2");
	ck_assert_int_eq(log.count, 1);
	ck_assert_ptr_nonnull(strstr(log.last, "big/a1"));
	free(sets);
	tu_cleanup(dir);
}
END_TEST

/* -T: size and first block; -Q: full hashes, no byte comparison. */
START_TEST(test_partial_and_quick)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	struct errlog log = { 0 };
	struct setup st = { .opt = DUPSCAN_OPT_PARTIAL_ONLY, .val = 1, .io = IO };
	char *sets = sets_of(dir, &st, &log);
	ck_assert_str_eq(sets, "big/a1 big/a2 big/a3 big/last big/last2 big/late|small/s1 small/s2");
	free(sets);
	st = (struct setup){ .opt = DUPSCAN_OPT_QUICK, .val = 1, .io = IO };
	sets = sets_of(dir, &st, &log);
	ck_assert_str_eq(sets, FIXTURE_SETS);
	free(sets);
	ck_assert_int_eq(log.count, 0);
	tu_cleanup(dir);
}
END_TEST

/* Threads change nothing: every thread count finds the same classes. */
START_TEST(test_threads_agree)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	struct errlog log = { 0 };
	for (int t = 1; t <= 4; t++) {
		struct setup st = { .threads = t, .max_open = t == 4 ? 8 : 0, .io = IO };
		char *sets = sets_of(dir, &st, &log);
		ck_assert_str_eq(sets, FIXTURE_SETS);
		free(sets);
	}
	ck_assert_int_eq(log.count, 0);
	tu_cleanup(dir);
}
END_TEST

/* dir walked, with the cache at cache loaded as a run would begin. */
static dupscan_scan *walked_with_cache(const char *dir, const char *cache)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(ds_cache_load(&s->cache), 0);
	ck_assert_int_eq(ds_walk(&s->walk), 0);
	tu_cache_join(s);
	return s;
}

/* The cache in dir/cache.bin holding, for each file named, the hashes given. */
struct forged {
	const char *name;
	bool has_full;
	uint64_t partial, full;
};

static void forge_cache(const char *dir, const char *cache, const struct forged *f, size_t n)
{
	dupscan_scan *s = walked_with_cache(dir, cache);
	for (size_t k = 0; k < n; k++) {
		uint32_t i = 0;
		while (i < s->tree.nrecs && strcmp(ds_rec_name(&s->tree, ds_rec(&s->tree, i), (char[DS_NAME_BUF]){ 0 }), f[k].name) != 0)
			i++;
		ck_assert_uint_lt(i, s->tree.nrecs);
		struct ds_hashed h = { .rec = i, .has_full = f[k].has_full, .partial = f[k].partial, .full = f[k].full };
		ck_assert_int_eq(ds_cache_note(&s->cache, &h), 0);
	}
	bool folded;
	ck_assert_int_eq(ds_cache_save(&s->cache, &folded), 0);
	ck_assert(folded);
	dupscan_free(s);
}

/* The cache holds rel's true full hash (tu_full_hash()). */
static void check_cached_full(const char *dir, const char *cache, const char *rel)
{
	dupscan_scan *s = walked_with_cache(dir, cache);
	const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	bool found = false;
	for (uint32_t i = 0; i < s->tree.nrecs; i++) {
		const struct ds_rec *r = ds_rec(&s->tree, i);
		if (strcmp(ds_rec_name(&s->tree, r, (char[DS_NAME_BUF]){ 0 }), name) != 0)
			continue;
		struct ds_hashed h;
		ck_assert_msg(ds_cache_get(&s->cache, i, &h) && h.has_full, "%s: no full hash cached", rel);
		char *p = tu_path(dir, rel);
		ck_assert_msg(h.full == tu_full_hash(p), "%s: cached full hash is not its own", rel);
		free(p);
		found = true;
	}
	ck_assert(found);
	dupscan_free(s);
}

/* A second run from the cache finds what the first found, reading less; the
 * bucket sizes either side of the open-file limit take both ways. The first
 * run's full hashes, continued from the first block's hash, are the files'
 * (tu_full_hash()). */
START_TEST(test_cache_same_as_fresh)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	struct errlog log = { 0 };
	for (size_t max_open = 8; max_open <= 256; max_open += 248) {
		struct setup st = { .cache = cache, .max_open = max_open, .io = IO };
		char *first = sets_of(dir, &st, &log);
		check_cached_full(dir, cache, "big/a2");
		check_cached_full(dir, cache, "small/s1");
		char *second = sets_of(dir, &st, &log);
		ck_assert_str_eq(first, FIXTURE_SETS);
		ck_assert_str_eq(second, FIXTURE_SETS);
		free(first);
		free(second);
	}
	ck_assert_int_eq(log.count, 0);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Cached hashes spare reads, never the byte comparison: files the cache
 * claims are equal but are not never make a set, in buckets that fit the
 * open-file limit and in larger ones. */
START_TEST(test_cache_forged_equal)
{
	char *dir = tu_tmpdir();
	char name[32];
	struct forged f[12];
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "f%02d", i);
		/* f00..f05 one content; f06..f11 each another, from the first byte on */
		tu_file(dir, name, 50000, i < 6 ? 5 : 100 + (unsigned)i, -1);
		f[i] = (struct forged){ strdup(name), true, 42, 4242 };
	}
	char *cache = tu_path(dir, "cache.bin");
	struct errlog log = { 0 };
	for (size_t max_open = 8; max_open <= 256; max_open += 248) {
		forge_cache(dir, cache, f, 12);
		struct setup st = { .cache = cache, .max_open = max_open, .io = IO };
		char *sets = sets_of(dir, &st, &log);
		ck_assert_str_eq(sets, "f00 f01 f02 f03 f04 f05");
		free(sets);
	}
	ck_assert_int_eq(log.count, 0);
	for (int i = 0; i < 12; i++)
		free((char *)f[i].name);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Cached first-block hashes without full ones (files that differed after
 * their first block last time): the bucket is read whole, and the full
 * hashes worked out are the files' own, kept for the next run. */
START_TEST(test_cache_without_full_hashes)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	const char *big[] = { "a1", "a2", "a3", "late", "last", "last2", "early" };
	struct forged f[7];
	for (int i = 0; i < 7; i++) {
		char rel[32], *p;
		snprintf(rel, sizeof(rel), "big/%s", big[i]);
		p = tu_path(dir, rel);
		f[i] = (struct forged){ big[i], false, tu_partial_hash(p), 0 };
		free(p);
	}
	ck_assert(f[0].partial == f[5].partial && f[0].partial != f[6].partial);
	struct errlog log = { 0 };
	for (size_t max_open = 8; max_open >= 4; max_open -= 4) {
		forge_cache(dir, cache, f, 7);
		/* 8: side by side; 4 (fewer than the bucket's 6): hashed one by one */
		struct setup st = { .cache = cache, .max_open = max_open, .io = IO };
		char *sets = sets_of(dir, &st, &log);
		ck_assert_str_eq(sets, FIXTURE_SETS);
		free(sets);
		check_cached_full(dir, cache, "big/a1");
		check_cached_full(dir, cache, "big/last");
	}
	ck_assert_int_eq(log.count, 0);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Full hashes in the cache split a bucket unread: what the cache says differs
 * is not compared (the trust model the man page states for --cache), where the
 * cache settles the group (ssd mode). */
START_TEST(test_cache_full_hashes_split)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	struct errlog log = { 0 };
	struct setup st = { .cache = cache, .io = IO };
	free(sets_of(dir, &st, &log));
	dupscan_scan *s = walked_with_cache(dir, cache);
	struct ds_hashed a3 = { 0 };
	for (uint32_t i = 0; i < s->tree.nrecs; i++)
		if (!strcmp(ds_rec_name(&s->tree, ds_rec(&s->tree, i), (char[DS_NAME_BUF]){ 0 }), "a3"))
			ck_assert(ds_cache_get(&s->cache, i, &a3));
	dupscan_free(s);
	/* late, unique last time after its first block, gets its full hash too:
	 * now every file of the bucket has one */
	char *late = tu_path(dir, "big/late");
	uint64_t late_full = tu_full_hash(late);
	free(late);
	struct forged f[2] = { { "a3", true, a3.partial, a3.full ^ 1 }, { "late", true, a3.partial, late_full } };
	forge_cache(dir, cache, f, 2);
	char *sets = sets_of(dir, &st, &log);
	/* on a spinning disk a group with cached twins (a1, a2) is read in disk
	 * order as without the cache, so the forged hash of a3 changes nothing */
	ck_assert_str_eq(sets, IO == DUPSCAN_IO_HDD ? "big/a1 big/a2 big/a3|big/last big/last2|small/s1 small/s2"
						    : "big/a1 big/a2|big/last big/last2|small/s1 small/s2");
	free(sets);
	ck_assert_int_eq(log.count, 0);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* hdd mode's sweep (sweep.c) keeps the first file of a bucket in memory, within
 * a budget. A tree where copies lie apart (originals in a/, copies in b/, as
 * an archive and its backup), a bucket of four files of which two are one
 * content, a bucket of four different ones, and a bucket larger than a sweep
 * takes (split in rounds first): with a budget of two files, the sets are
 * those an SSD-mode run finds, and no more than the budget is kept at once. */
static void sweep_tree(const char *dir)
{
	char name[32];
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "a/p%d", i);
		tu_file(dir, name, 200000 + (uint64_t)i, 20 + (unsigned)i, -1);
	}
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "b/p%d", i);
		tu_file(dir, name, 200000 + (uint64_t)i, 20 + (unsigned)i, -1);
	}
	/* alike past their heads (first block and DS_HDD_HEAD), then not */
	tu_file(dir, "q/w1", 300000, 5, 250001);
	tu_file(dir, "q/w2", 300000, 5, 250002);
	tu_file(dir, "q/w3", 300000, 5, 250003);
	tu_file(dir, "q/w4", 300000, 5, 250003);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "r/d%d", i);
		tu_file(dir, name, 290000, 6, 250000 + i);
	}
	/* seven files alike in their heads: four of one content, three others */
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "m/m%d", i);
		tu_file(dir, name, 280000, 8, i < 4 ? -1 : 270000 + i);
	}
}

static const char *const SWEEP_SETS = "a/p0 b/p0|a/p1 b/p1|a/p2 b/p2|a/p3 b/p3|a/p4 b/p4|a/p5 b/p5|"
				      "m/m0 m/m1 m/m2 m/m3|q/w3 q/w4";

START_TEST(test_sweep_within_budget)
{
	char *dir = tu_tmpdir();
	sweep_tree(dir);
	struct errlog log = { 0 };
	struct setup ssd = { .io = DUPSCAN_IO_SSD };
	char *want = sets_of(dir, &ssd, &log);
	ck_assert_str_eq(want, SWEEP_SETS);
	size_t budget = 2 * 300000 + 4096;
	struct setup st = { .io = DUPSCAN_IO_HDD, .sweep_budget = budget };
	dupscan_scan *s = matched(dir, &st, &log);
	char *sets = tu_sets(s, dir);
	ck_assert_str_eq(sets, want);
	ck_assert_uint_gt(s->reading.sweep_peak, 0);
	ck_assert_msg(s->reading.sweep_peak <= budget, "kept %zu bytes, budget %zu", s->reading.sweep_peak, budget);
	/* the four different files of r/ cannot all be kept at once */
	ck_assert_uint_ge(s->reading.sweeps, 2);
	dupscan_free(s);
	free(sets);
	/* with room for all, one sweep */
	struct setup roomy = { .io = DUPSCAN_IO_HDD };
	s = matched(dir, &roomy, &log);
	sets = tu_sets(s, dir);
	ck_assert_str_eq(sets, want);
	ck_assert_uint_eq(s->reading.sweeps, 1);
	dupscan_free(s);
	ck_assert_int_eq(log.count, 0);
	free(sets);
	free(want);
	tu_cleanup(dir);
}
END_TEST

/* Many large files of one size alike in their heads: the sweep keeps no more
 * than its budget, and each file that differs early is read only until it
 * does (a round), not whole. */
START_TEST(test_sweep_many_large_files)
{
	char *dir = tu_tmpdir();
	char name[32];
	const uint64_t size = 1024 * 1024;
	for (int i = 0; i < 24; i++) {
		snprintf(name, sizeof(name), "raw%02d", i);
		tu_file(dir, name, size, 9, 200000 + i);  /* alone, from byte 200000 on */
	}
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "pair%d%c", i % 6, i < 6 ? 'a' : 'b');
		tu_file(dir, name, size, 9, 900000 + i % 6);
	}
	struct errlog log = { 0 };
	size_t budget = 3 * size;
	struct setup st = { .io = DUPSCAN_IO_HDD, .sweep_budget = budget };
	unsigned long long before = tu_rchar();
	dupscan_scan *s = matched(dir, &st, &log);
	unsigned long long used = tu_rchar() - before;
	char *sets = tu_sets(s, dir);
	ck_assert_str_eq(sets, "pair0a pair0b|pair1a pair1b|pair2a pair2b|pair3a pair3b|pair4a pair4b|"
			       "pair5a pair5b");
	/* (how many sweeps it takes depends on where the files lie) */
	ck_assert_msg(s->reading.sweep_peak <= budget, "kept %zu bytes, budget %zu", s->reading.sweep_peak, budget);
	/* heads (128 KiB), rounds up to 324 KiB for all, the pairs read to their
	 * end once in the rounds and once in the sweep; reading the others whole
	 * would add 24 MiB */
	unsigned long long bound = 36ull * (128 + 320) * 1024 + 12ull * 2 * size + 64 * 1024;
	ck_assert_msg(used <= bound, "read %llu bytes, more than %llu", used, bound);
	ck_assert_int_eq(log.count, 0);
	dupscan_free(s);
	free(sets);
	tu_cleanup(dir);
}
END_TEST

static int cmp_keypos(const void *pa, const void *pb)
{
	const struct ds_keypos *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The in-place sort of (key, position) pairs that orders records and files by
 * hash gives qsort's order on every shape: random keys, few keys (long runs of
 * one key), sorted, reversed, organ-pipe, and sizes around its small-run cutoff. */
START_TEST(test_sort_by_key)
{
	static const size_t sizes[] = { 0, 1, 2, 15, 16, 17, 33, 1000, 100003 };
	uint64_t seed = 88172645463325252ull;
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		struct ds_keypos *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));
		ck_assert(a && b);
		for (int shape = 0; shape < 5; shape++) {
			for (size_t i = 0; i < n; i++) {
				seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
				uint64_t k = shape == 0 ? seed : shape == 1 ? seed % 3 : shape == 2 ? i : shape == 3 ? n - i
					   : (i < n / 2 ? i : n - i);
				a[i] = (struct ds_keypos){ k, (seed >> 11) ^ ((uint64_t)i << 40) };
			}
			memcpy(b, a, n * sizeof(*a));
			ds_sort_by_key(a, n);
			if (n)
				qsort(b, n, sizeof(*b), cmp_keypos);
			ck_assert_msg(n == 0 || memcmp(a, b, n * sizeof(*a)) == 0, "n %zu shape %d", n, shape);
		}
		free(a);
		free(b);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("match");
	TCase *tc = tcase_create("fresh");
	tcase_add_loop_test(tc, test_classes_by_content, 0, 2);
	tcase_add_loop_test(tc, test_bucket_larger_than_open_files, 0, 2);
	tcase_add_loop_test(tc, test_small_bucket_larger_than_open_files, 0, 2);
	tcase_add_loop_test(tc, test_vanished_member, 0, 2);
	tcase_add_loop_test(tc, test_large_bucket_read_progressively, 0, 3);
	tcase_add_loop_test(tc, test_partial_and_quick, 0, 2);
	tcase_add_loop_test(tc, test_threads_agree, 0, 2);
	tcase_add_test(tc, test_sweep_within_budget);
	tcase_add_test(tc, test_sweep_many_large_files);
	tcase_add_test(tc, test_sort_by_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("cached");
	tcase_add_loop_test(tc, test_cache_same_as_fresh, 0, 2);
	tcase_add_loop_test(tc, test_cache_forged_equal, 0, 2);
	tcase_add_loop_test(tc, test_cache_without_full_hashes, 0, 2);
	tcase_add_loop_test(tc, test_cache_full_hashes_split, 0, 2);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* check_cache.c: the hash cache: what a run writes, the next run reads back
 * for unchanged files only; damage is reported and ignored; clear removes it. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scan.h"
#include "testinternal.h"
#include "testutil.h"
#include "walk/walk.h"
#include "match/result.h"
#include "cache/cache.h"

static void count_cache_errors(void *user, const char *path, int code)
{
	(void)path;
	if (code == DUPSCAN_E_CACHE)
		++*(int *)user;
}

/* A finished scan of dir with the cache at cache; *cache_errors counts its damage reports. */
static dupscan_scan *scan_with_cache(const char *dir, const char *cache, int *cache_errors)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	dupscan_set_error_callback(s, count_cache_errors, cache_errors);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	return s;
}

/* dir walked, with the cache at cache loaded as a run would begin: what the
 * next run would find in it, record by record. */
static dupscan_scan *loaded(const char *dir, const char *cache, int *cache_errors)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	dupscan_set_error_callback(s, count_cache_errors, cache_errors);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(ds_cache_load(&s->cache), 0);
	ck_assert_int_eq(ds_walk(&s->walk), 0);
	tu_cache_join(s);
	return s;
}

/* A file's proof that holds: its class number and time. */
static bool proof_of(const dupscan_scan *s, uint32_t i, uint64_t *cls, int64_t *at)
{
	struct ds_proof pf;
	if (!ds_cache_proof(&s->cache, i, &pf))
		return false;
	*cls = pf.cls;
	*at = pf.at;
	return true;
}

/* The XXH64 of the first min(size, DS_BLOCK) bytes of dir/rel: the partial hash. */
static uint64_t first_block_hash(const char *dir, const char *rel)
{
	char *p = tu_path(dir, rel);
	unsigned char buf[DS_BLOCK];
	int fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ssize_t n = read(fd, buf, sizeof(buf));
	ck_assert_int_ge(n, 0);
	close(fd);
	free(p);
	return ds_hash_oneshot(buf, (size_t)n);
}

static void fixture(const char *dir)
{
	tu_file(dir, "a1", 10000, 1, -1);
	tu_file(dir, "a2", 10000, 1, -1);
	tu_file(dir, "b1", 10000, 2, -1); /* same size, another first block */
	tu_text(dir, "s1", "small\n");
	tu_text(dir, "s2", "small\n");
}

START_TEST(test_round_trip)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin"); /* inside the tree: the scan must not take it for data */
	int errs = 0;
	dupscan_scan *first = scan_with_cache(dir, cache, &errs);
	char *sets = tu_sets(first, dir);
	dupscan_free(first);
	struct stat st;
	ck_assert_int_eq(stat(cache, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	dupscan_scan *second = scan_with_cache(dir, cache, &errs);
	ck_assert_int_eq(errs, 0);
	char *again = tu_sets(second, dir);
	ck_assert_str_eq(again, sets);
	dupscan_free(second);
	second = loaded(dir, cache, &errs);
	ck_assert_int_eq(errs, 0);
	/* every file hashed by the first run is found, with its hashes */
	const char *names[] = { "a1", "a2", "b1", "s1", "s2" };
	for (size_t i = 0; i < 5; i++) {
		struct ds_hashed h = { 0 };
		ck_assert_msg(ds_cache_get(&second->cache, tu_rec_named(second, names[i]), &h), "%s not in the cache", names[i]);
		ck_assert_uint_eq(h.partial, first_block_hash(dir, names[i]));
		if (i < 2 || i > 2) /* b1 alone by its first block is never read further */
			ck_assert(h.has_full);
	}
	free(sets);
	free(again);
	dupscan_free(second);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Files on two devices: every file the first run hashed is found by the
 * next, whichever device's numbers come first (the cache is in device
 * number order, the records by inode). */
START_TEST(test_two_devices)
{
	char *a = tu_tmpdir(), *b = tu_tmpdir_shm();
	struct stat sa, sb;
	ck_assert_int_eq(stat(a, &sa), 0);
	ck_assert_int_eq(stat(b, &sb), 0);
	if (sa.st_dev == sb.st_dev) {
		fprintf(stderr, "# SKIP test_two_devices: %s and %s are one device\n", a, b);
		tu_cleanup(a);
		tu_cleanup(b);
		return;
	}
	char name[32];
	for (unsigned i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "f%02u", i);
		tu_file(a, name, 6000, i + 1, -1);
		tu_file(b, name, 6000, i + 1, -1);
	}
	char *cache = tu_path(a, "cache.bin");
	int errs = 0;
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	ck_assert_int_ge(dupscan_add_path(s, a, 1), 0);
	ck_assert_int_ge(dupscan_add_path(s, b, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_eq(dupscan_set_count(s), 64);
	dupscan_free(s);
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	dupscan_set_error_callback(s, count_cache_errors, &errs);
	ck_assert_int_ge(dupscan_add_path(s, a, 1), 0);
	ck_assert_int_ge(dupscan_add_path(s, b, 1), 0);
	ck_assert_int_eq(ds_cache_load(&s->cache), 0);
	ck_assert_int_eq(ds_walk(&s->walk), 0);
	tu_cache_join(s);
	unsigned found = 0;
	for (uint32_t i = 0; i < s->tree.nrecs; i++) {
		struct ds_hashed h = { 0 };
		found += ds_cache_get(&s->cache, i, &h) && h.has_full;
	}
	ck_assert_uint_eq(found, 128);
	ck_assert_int_eq(errs, 0);
	dupscan_free(s);
	free(cache);
	tu_cleanup(a);
	tu_cleanup(b);
}
END_TEST

/* A changed size, mtime or ctime makes an entry miss; the others still hit. */
START_TEST(test_key_fields)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_free(scan_with_cache(dir, cache, &errs));
	char *a1 = tu_path(dir, "a1"), *a2 = tu_path(dir, "a2");
	struct timespec t[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, a1, t, 0), 0);   /* mtime */
	ck_assert_int_eq(chmod(a2, 0640), 0);                  /* ctime only */
	dupscan_scan *s = loaded(dir, cache, &errs);
	struct ds_hashed h;
	ck_assert(!ds_cache_get(&s->cache, tu_rec_named(s, "a1"), &h));
	ck_assert(!ds_cache_get(&s->cache, tu_rec_named(s, "a2"), &h));
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "b1"), &h));
	ck_assert_int_eq(errs, 0);
	dupscan_free(s);
	free(a1);
	free(a2);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Damage anywhere is reported once, the cache ignored, the sets unchanged. */
START_TEST(test_damage_ignored)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_scan *s = scan_with_cache(dir, cache, &errs);
	char *sets = tu_sets(s, dir);
	dupscan_free(s);
	struct stat st;
	ck_assert_int_eq(stat(cache, &st), 0);
	for (off_t at = 0; at < st.st_size; at += st.st_size / 7 + 1) {
		int fd = open(cache, O_RDWR);
		unsigned char byte;
		ck_assert_int_eq(pread(fd, &byte, 1, at), 1);
		byte ^= 0xff; /* a change, whatever was there */
		ck_assert_int_eq(pwrite(fd, &byte, 1, at), 1);
		close(fd);
		errs = 0;
		s = loaded(dir, cache, &errs);
		ck_assert_msg(errs == 1, "damage at %ld reported %d times", (long)at, errs);
		struct ds_hashed h;
		ck_assert(!ds_cache_get(&s->cache, tu_rec_named(s, "a1"), &h));
		dupscan_free(s);
		errs = 0;
		s = scan_with_cache(dir, cache, &errs);
		ck_assert_int_eq(errs, 1);
		char *got = tu_sets(s, dir);
		ck_assert_str_eq(got, sets);
		free(got);
		dupscan_free(s); /* writes it whole again */
	}
	ck_assert_int_eq(dupscan_cache_clear(cache), 0);
	ck_assert_int_eq(access(cache, F_OK), -1);
	free(sets);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* A proof holds while the key is as recorded and the file is older than the
 * proof's time by more than racy_ns; each key field alone voids it. */
START_TEST(test_proof_fields)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_scan *first = scan_with_cache(dir, cache, &errs);
	int64_t proved = first->cache.start_ns;
	dupscan_free(first);
	dupscan_scan *s = loaded(dir, cache, &errs);
	uint64_t cls, cls2;
	int64_t at;
	/* files written just now are racy under the real margin */
	ck_assert(!proof_of(s, tu_rec_named(s, "a1"), &cls, &at));
	s->cache.racy_ns = -60LL * 1000000000; /* as if the proof came a minute later */
	ck_assert(proof_of(s, tu_rec_named(s, "a1"), &cls, &at));
	ck_assert_int_eq(at, proved);
	ck_assert(proof_of(s, tu_rec_named(s, "a2"), &cls2, &at));
	ck_assert_uint_eq(cls, cls2);
	ck_assert(proof_of(s, tu_rec_named(s, "s1"), &cls2, &at));
	ck_assert_uint_ne(cls, cls2); /* another class */
	ck_assert(!proof_of(s, tu_rec_named(s, "b1"), &cls2, &at)); /* unique: no proof */
	uint32_t a1 = tu_rec_named(s, "a1");
	struct ds_rec *r = ds_rec(&s->tree, a1);
	struct ds_rec saved = *r;
	/* moved far: the next inode number may well be another file's, with its own proof */
	/* (each change joined again: the join is where an entry meets its file) */
	for (size_t i = 0; i < 2; i++) {
		if (i == 0)
			r->ino_lo += 1000003;
		else
			r->size_lo += 1000003;
		tu_cache_join(s);
		ck_assert_msg(!proof_of(s, a1, &cls2, &at), "key field %zu changed alone", i);
		*r = saved;
	}
	uint32_t other; /* the device: another one's index */
	ck_assert_int_eq(ds_intern(&s->tree.devs, ds_rec_dev(&s->tree, r) + 1000003, 0, &other), 0);
	uint32_t kind; /* the same attributes on that device */
	ck_assert_int_eq(ds_intern(&s->tree.kinds, other, ds_rec_attr(&s->tree, r), &kind), 0);
	r->kind = kind;
	tu_cache_join(s);
	ck_assert(!proof_of(s, a1, &cls2, &at));
	*r = saved;
	r->mtime_ns++;
	tu_cache_join(s);
	ck_assert(!proof_of(s, a1, &cls2, &at));
	*r = saved;
	r->ctime_ns++;
	tu_cache_join(s);
	ck_assert(!proof_of(s, a1, &cls2, &at));
	*r = saved;
	tu_cache_join(s);
	ck_assert(proof_of(s, a1, &cls2, &at));
	/* racy by its own times: older than the proof, but not by more than the margin */
	s->cache.racy_ns = proved - r->ctime_ns;
	ck_assert(!proof_of(s, a1, &cls2, &at));
	s->cache.racy_ns = proved - r->ctime_ns - 1;
	ck_assert(r->mtime_ns > r->ctime_ns || proof_of(s, a1, &cls2, &at));
	dupscan_free(s);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

static dupscan_scan *trusting(const char *dir, const char *cache, int trust)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_cache(s, cache), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CACHE_TRUST, trust), 0);
	s->cache.racy_ns = -60LL * 1000000000;
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	return s;
}

/* With trust the sets are the same, said to come from the cache, with the
 * proving run's start; without it they come from this run. */
START_TEST(test_proof_sets)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_scan *first = scan_with_cache(dir, cache, &errs);
	char *sets = tu_sets(first, dir);
	int64_t proved = first->cache.start_ns;
	int64_t at = -1;
	ck_assert_int_eq(dupscan_set_proof(dupscan_get_set(first, 0), &at), DUPSCAN_PROOF_SCAN);
	ck_assert_int_eq(at, 0);
	dupscan_free(first);
	dupscan_scan *s = trusting(dir, cache, 1);
	char *got = tu_sets(s, dir);
	ck_assert_str_eq(got, sets);
	ck_assert_uint_eq(dupscan_set_count(s), 2);
	for (size_t i = 0; i < dupscan_set_count(s); i++) {
		ck_assert_int_eq(dupscan_set_proof(dupscan_get_set(s, i), &at), DUPSCAN_PROOF_CACHE);
		ck_assert_int_eq(at, proved);
	}
	ck_assert_int_eq(dupscan_set_proof(NULL, NULL), -EINVAL);
	free(got);
	dupscan_free(s);
	s = trusting(dir, cache, 0);
	ck_assert_int_eq(dupscan_set_proof(dupscan_get_set(s, 0), NULL), DUPSCAN_PROOF_SCAN);
	dupscan_free(s);
	free(sets);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* A version 1 cache (dupscan 0.4) is read, its hashes used, and replaced by
 * version 2 at the end of the run. */
START_TEST(test_version1_read)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_free(scan_with_cache(dir, cache, &errs));
	/* rewrite it as version 1: 64-byte entries without the proof fields */
	int fd = open(cache, O_RDWR);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	unsigned char *raw = malloc((size_t)st.st_size);
	ck_assert_int_eq(read(fd, raw, (size_t)st.st_size), st.st_size);
	uint64_t count, strings;
	memcpy(&count, raw + 16, 8);
	memcpy(&strings, raw + 24, 8);
	ck_assert_uint_eq((uint64_t)st.st_size, 48 + count * 80 + strings);
	size_t body = (size_t)(count * 64 + strings);
	unsigned char *v1 = malloc(48 + body);
	memcpy(v1, raw, 48);
	uint32_t version = 1, esize = 64;
	memcpy(v1 + 8, &version, 4);
	memcpy(v1 + 12, &esize, 4);
	for (uint64_t i = 0; i < count; i++) {
		unsigned char *e = raw + 48 + i * 80, *o = v1 + 48 + i * 64;
		memcpy(o, e, 56);            /* dev .. full */
		uint32_t flags;
		memcpy(&flags, e + 72, 4);
		flags &= 1;                  /* only "full is set" existed */
		memcpy(o + 56, &flags, 4);
		memcpy(o + 60, e + 76, 4);   /* path offset */
	}
	memcpy(v1 + 48 + count * 64, raw + 48 + count * 80, (size_t)strings);
	uint64_t sum = ds_hash_oneshot(v1 + 48, body);
	memcpy(v1 + 32, &sum, 8);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(pwrite(fd, v1, 48 + body, 0), (ssize_t)(48 + body));
	close(fd);
	dupscan_scan *s = loaded(dir, cache, &errs);
	ck_assert_int_eq(errs, 0);
	struct ds_hashed h;
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "a1"), &h));
	ck_assert_uint_eq(h.partial, first_block_hash(dir, "a1"));
	ck_assert(!h.has_full); /* a full hash of another definition, past a block */
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "s1"), &h));
	ck_assert(h.has_full && h.full == h.partial);
	uint64_t cls;
	int64_t at;
	s->cache.racy_ns = -60LL * 1000000000;
	ck_assert(!proof_of(s, tu_rec_named(s, "a1"), &cls, &at)); /* version 1 proves nothing */
	dupscan_free(s);
	dupscan_free(scan_with_cache(dir, cache, &errs));
	ck_assert_int_eq(errs, 0);
	fd = open(cache, O_RDONLY);
	ck_assert_int_eq(pread(fd, &version, 4, 8), 4);
	close(fd);
	ck_assert_uint_eq(version, 3);
	free(v1);
	free(raw);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

/* Version 2 held full hashes of the whole file: read, a file past a block
 * keeps its partial hash only (no full hash, no proof); within a block it
 * keeps all; the next run writes version 3 with this version's full hashes. */
START_TEST(test_version2_read)
{
	char *dir = tu_tmpdir();
	fixture(dir);
	char *cache = tu_path(dir, "cache.bin");
	int errs = 0;
	dupscan_scan *first = scan_with_cache(dir, cache, &errs);
	char *sets = tu_sets(first, dir);
	dupscan_free(first);
	int fd = open(cache, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint32_t version = 2;
	ck_assert_int_eq(pwrite(fd, &version, 4, 8), 4); /* the body, and so its checksum, alike */
	close(fd);
	dupscan_scan *s = loaded(dir, cache, &errs);
	ck_assert_int_eq(errs, 0);
	s->cache.racy_ns = -60LL * 1000000000;
	struct ds_hashed h;
	uint64_t cls;
	int64_t at;
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "a1"), &h));
	ck_assert_uint_eq(h.partial, first_block_hash(dir, "a1"));
	ck_assert(!h.has_full);
	ck_assert(!proof_of(s, tu_rec_named(s, "a1"), &cls, &at));
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "s1"), &h));
	ck_assert(h.has_full && h.full == h.partial);
	ck_assert(proof_of(s, tu_rec_named(s, "s1"), &cls, &at));
	dupscan_free(s);
	dupscan_scan *again = scan_with_cache(dir, cache, &errs);
	ck_assert_int_eq(errs, 0);
	char *sets2 = tu_sets(again, dir);
	ck_assert_str_eq(sets2, sets);
	dupscan_free(again);
	fd = open(cache, O_RDONLY);
	ck_assert_int_eq(pread(fd, &version, 4, 8), 4);
	close(fd);
	ck_assert_uint_eq(version, 3);
	s = loaded(dir, cache, &errs);
	s->cache.racy_ns = -60LL * 1000000000;
	ck_assert(ds_cache_get(&s->cache, tu_rec_named(s, "a1"), &h));
	ck_assert(h.has_full);
	ck_assert(proof_of(s, tu_rec_named(s, "a1"), &cls, &at));
	dupscan_free(s);
	free(sets2);
	free(sets);
	free(cache);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("ds_cache_save and ds_cache_load");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_two_devices);
	tcase_add_test(tc, test_damage_ignored);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_cache_get");
	tcase_add_test(tc, test_key_fields);
	suite_add_tcase(s, tc);
	tc = tcase_create("proofs");
	tcase_add_test(tc, test_proof_fields);
	tcase_add_test(tc, test_proof_sets);
	tcase_add_test(tc, test_version1_read);
	tcase_add_test(tc, test_version2_read);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

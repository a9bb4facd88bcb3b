/* SPDX-License-Identifier: MIT */
/* check_records: the scan's tables of directories and files: paths rebuilt
 * from names and parents (in a buffer or allocated when it is too small),
 * the part below an argument, visited directories, protected subtrees, and
 * the one meaning of "unchanged". */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan.h"
#include "testutil.h"

static struct stat fake(uint64_t dev, uint64_t ino, off_t size)
{
	struct stat st;
	memset(&st, 0, sizeof(st));
	st.st_dev = (dev_t)dev;
	st.st_ino = (ino_t)ino;
	st.st_size = size;
	st.st_mode = S_IFREG | 0644;
	st.st_mtim.tv_sec = 1000;
	st.st_ctim.tv_sec = 2000;
	return st;
}

/* A scan with one directory "d", reached from argument arg. */
static dupscan_scan *scan_with_root(uint32_t arg, uint32_t *root)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	struct stat st = fake(1, 10, 0);
	st.st_mode = S_IFDIR | 0755;
	ck_assert_int_eq(ds_add_dir(&s->tree, "d", 1, DS_NONE, arg, &st, root), 0);
	return s;
}

START_TEST(test_paths)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	struct stat st = fake(1, 10, 0);
	st.st_mode = S_IFDIR | 0755;
	uint32_t root, sub, deep;
	ck_assert_int_eq(ds_add_dir(&s->tree, "top/arg", 7, DS_NONE, 0, &st, &root), 0);
	ck_assert_int_eq(ds_add_dir(&s->tree, "sub", 3, root, 0, &st, &sub), 0);
	ck_assert_int_eq(ds_add_dir(&s->tree, "deeper", 6, sub, 0, &st, &deep), 0);
	struct stat fst = fake(1, 11, 5);
	ck_assert_int_eq(ds_add_rec(&s->tree, "file", 4, deep, &fst), 0);
	ck_assert_uint_eq(s->tree.nrecs, 1);
	const struct ds_rec *r = ds_rec(&s->tree, 0);
	char buf[64];
	ck_assert_uint_eq(ds_rec_path(&s->tree, 0, buf, sizeof(buf)), strlen("top/arg/sub/deeper/file"));
	ck_assert_str_eq(buf, "top/arg/sub/deeper/file");
	/* too small a buffer: the length needed, and an allocated path */
	char small[8];
	ck_assert_uint_eq(ds_rec_path(&s->tree, 0, small, sizeof(small)), strlen("top/arg/sub/deeper/file"));
	char *p = ds_path_in(&s->tree, deep, "file", small, sizeof(small));
	ck_assert_ptr_ne(p, small);
	ck_assert_str_eq(p, "top/arg/sub/deeper/file");
	free(p);
	p = ds_rec_path_alloc(&s->tree, 0);
	ck_assert_str_eq(p, "top/arg/sub/deeper/file");
	free(p);
	p = ds_dir_path(&s->tree, sub);
	ck_assert_str_eq(p, "top/arg/sub");
	free(p);
	/* below the argument: after "top/arg/" */
	ck_assert_uint_eq(ds_rel_offset(&s->tree, deep), strlen("top/arg/"));
	ck_assert_uint_eq(ds_rec_size(&s->tree, r), 5);
	ck_assert_uint_eq(ds_rec_rep(&s->tree, 0), 0); /* its inode's only name */
	dupscan_free(s);
}
END_TEST

START_TEST(test_seen)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	/* past several growths of the table, each inode new once, then seen */
	for (uint64_t i = 1; i <= 5000; i++)
		ck_assert_int_eq(ds_seen_add(&s->tree, i % 3, i * 7919), 0);
	for (uint64_t i = 1; i <= 5000; i++)
		ck_assert_int_eq(ds_seen_add(&s->tree, i % 3, i * 7919), 1);
	ck_assert_int_eq(ds_seen_add(&s->tree, 4, 7919), 0); /* another device, same inode number */
	dupscan_free(s);
}
END_TEST

START_TEST(test_protected)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "keep/inner/f", "x");
	tu_text(dir, "free/f", "x");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	char *keep = tu_path(dir, "keep"), *inner = tu_path(dir, "keep/inner"), *fr = tu_path(dir, "free");
	char *spelled = tu_path(dir, "free/../keep/./inner");
	ck_assert_int_eq(dupscan_protect_path(s, keep), 0);
	ck_assert(ds_under_protected(&s->tree, keep));
	ck_assert(ds_under_protected(&s->tree, inner));
	ck_assert(ds_under_protected(&s->tree, spelled));
	ck_assert(!ds_under_protected(&s->tree, fr));
	ck_assert(!ds_under_protected(&s->tree, dir));
	dupscan_free(s);
	free(keep);
	free(inner);
	free(fr);
	free(spelled);
	tu_cleanup(dir);
}
END_TEST

/* A record holds its device and its mode with owner and group as indexes into
 * tables of the values met: each value once, given back exactly, and a
 * 65,537th device refused (the record's field holds 65,536). */
START_TEST(test_shared_values)
{
	uint32_t root;
	dupscan_scan *s = scan_with_root(7, &root);
	ck_assert_uint_le(sizeof(struct ds_rec), 32);
	for (uint32_t i = 0; i < 3000; i++) {
		struct stat f = fake(0xFFFF000000000000ull + i % 1000, i + 1, 1);
		f.st_uid = 1000 + i % 3;
		f.st_gid = 2000 + i % 5;
		f.st_mode = S_IFREG | (i % 2 ? 0644 : 0600);
		ck_assert_int_eq(ds_add_rec(&s->tree, "f", 1, root, &f), 0);
	}
	ck_assert_uint_eq(s->tree.devs.n, 1000);
	ck_assert_uint_eq(s->tree.attrs.n, 30); /* 3 owners x 5 groups x 2 modes, by the CRT */
	for (uint32_t i = 0; i < 3000; i++) {
		const struct ds_rec *r = ds_rec(&s->tree, i);
		ck_assert_uint_eq(ds_rec_dev(&s->tree, r), 0xFFFF000000000000ull + i % 1000);
		ck_assert_uint_eq(ds_rec_mode(&s->tree, r), S_IFREG | (i % 2 ? 0644u : 0600u));
		ck_assert_uint_eq(ds_rec_owner(&s->tree, r), (uint64_t)(1000 + i % 3) << 32 | (2000 + i % 5));
		ck_assert_uint_eq(ds_rec_arg(&s->tree, i), 7);
		ck_assert_uint_eq(ds_rec_devi(&s->tree, r), ds_rec_devi(&s->tree, ds_rec(&s->tree, i % 1000)));
	}
	for (uint32_t i = 1000; i < 65536; i++) {
		struct stat f = fake(i, 1, 1);
		ck_assert_int_eq(ds_add_rec(&s->tree, "g", 1, root, &f), 0);
	}
	ck_assert_uint_eq(s->tree.devs.n, 65536);
	uint32_t before = s->tree.nrecs;
	struct stat f = fake(70000, 1, 1);
	ck_assert_int_eq(ds_add_rec(&s->tree, "h", 1, root, &f), -EOVERFLOW);
	ck_assert_uint_eq(s->tree.nrecs, before);
	f = fake(65535, 2, 1); /* a device met before still goes in */
	ck_assert_int_eq(ds_add_rec(&s->tree, "h", 1, root, &f), 0);
	ck_assert_uint_eq(ds_rec_dev(&s->tree, ds_rec(&s->tree, before)), 65535);
	dupscan_free(s);
}
END_TEST

/* A record keeps the low halves of its size and inode number, its kind the
 * high ones: each value comes back whole, past 4 GiB and 2^32 alike, and
 * files of one device and mode share a kind while those halves agree. */
START_TEST(test_wide_values)
{
	uint32_t root;
	dupscan_scan *s = scan_with_root(0, &root);
	ck_assert_uint_eq(sizeof(struct ds_rec), 32);
	static const uint64_t v[] = { 0, 1, 0xFFFFFFFFull, 0x100000000ull, 0x1234567890ull,
				      0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFF00000001ull };
	enum { NV = sizeof(v) / sizeof(v[0]) };
	for (uint32_t i = 0; i < NV * NV; i++) {
		struct stat f = fake(7, v[i % NV], (off_t)(v[i / NV] & 0x7FFFFFFFFFFFFFFFull));
		ck_assert_int_eq(ds_add_rec(&s->tree, "f", 1, root, &f), 0);
	}
	for (uint32_t i = 0; i < NV * NV; i++) {
		const struct ds_rec *r = ds_rec(&s->tree, i);
		ck_assert_uint_eq(ds_rec_ino(&s->tree, r), v[i % NV]);
		ck_assert_uint_eq(ds_rec_size(&s->tree, r), v[i / NV] & 0x7FFFFFFFFFFFFFFFull);
		ck_assert_uint_eq(ds_rec_dev(&s->tree, r), 7);
		ck_assert_uint_eq(ds_rec_mode(&s->tree, r), S_IFREG | 0644u);
	}
	/* the high halves: 0, 1, 0x12, 0x7FFFFFFF, 0xFFFFFFFF of the inode (5) by 0, 1, 0x12, 0x7FFFFFFF, 0x7FFFFFFF of the size (4) */
	ck_assert_uint_eq(s->tree.kinds.n, 5 * 4);
	dupscan_free(s);
}
END_TEST

/* Records sorted by a key and a minor, ties by index: a few sizes over many
 * devices, so most keys tie. */
static uint64_t size_dev_key(const struct ds_tree *s, uint32_t ri, uint32_t *minor)
{
	const struct ds_rec *r = ds_rec(s, ri);
	*minor = ds_rec_devi(s, r);
	return ds_rec_size(s, r);
}

static const struct ds_tree *sort_scan; /* for qsort's comparison */

static int cmp_size_dev(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb, ma, mb;
	uint64_t ka = size_dev_key(sort_scan, a, &ma);
	uint64_t kb = size_dev_key(sort_scan, b, &mb);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (ma != mb)
		return ma < mb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Sorted in runs and merged (the sort of a scan past DS_SORT_RUN records),
 * the order is the one sort's, whatever the run's length and the order the
 * records came in. */
START_TEST(test_sort_recs_runs)
{
	uint32_t root;
	dupscan_scan *s = scan_with_root(0, &root);
	enum { N = 5003 };
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	for (uint32_t i = 0; i < N; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		struct stat f = fake(seed % 5, i + 1, (off_t)(seed >> 8) % 7);
		ck_assert_int_eq(ds_add_rec(&s->tree, "f", 1, root, &f), 0);
	}
	static uint32_t want[N], got[N];
	for (uint32_t i = 0; i < N; i++)
		want[i] = (i * 2654435761u) % N; /* N is prime: a shuffle */
	uint32_t shuffled[N];
	memcpy(shuffled, want, sizeof(want));
	sort_scan = &s->tree;
	qsort(want, N, sizeof(want[0]), cmp_size_dev);
	static const size_t runs[] = { 1, 2, 7, 100, 1024, N - 1, N, N + 1, 0 };
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		memcpy(got, shuffled, sizeof(got));
		ck_assert_int_eq(ds_sort_recs_runs(&s->tree, got, N, size_dev_key, runs[r]), 0);
		ck_assert_msg(memcmp(got, want, sizeof(got)) == 0, "runs of %zu", runs[r]);
	}
	ck_assert_int_eq(ds_sort_recs_runs(&s->tree, got, 0, size_dev_key, 3), 0);
	dupscan_free(s);
}
END_TEST

/* Each field alone makes a file not the one recorded. */
/* A name back as it was added, whichever way it was kept. */
static void name_is(const struct ds_names *t, uint32_t h, const char *want, size_t len)
{
	char buf[DS_NAME_BUF];
	const char *got = ds_names_get(t, h, buf);
	ck_assert_uint_eq(strlen(got), len);
	ck_assert_mem_eq(got, want, len);
}

/* Names kept as differences from the names before them come back whole:
 * numbered names of a directory (and a table of them much smaller than
 * their bytes), names sharing only an end, names starting with '/', names
 * too long to be a base, empty names, random bytes, across chunks. */
START_TEST(test_names)
{
	enum { N = 60000 };
	struct ds_names t = { 0 };
	static char text[N][300];
	static size_t len[N];
	static uint32_t h[N];
	uint64_t plain = 0;
	srand(7);
	for (size_t i = 0; i < N; i++) {
		switch (i % 7) {
		case 0: len[i] = (size_t)sprintf(text[i], "IMG_%06zu.JPG", i); break;
		case 1: len[i] = (size_t)sprintf(text[i], "report_%zu.pdf", i * 7919 % 100003); break;
		case 2: len[i] = (size_t)sprintf(text[i], "%zu.json", i); break;
		case 3: len[i] = (size_t)sprintf(text[i], "/abs/%zu/x", i); break;
		case 4: /* too long for a base: 255 and more bytes */
			len[i] = 255 + (size_t)rand() % 40;
			memset(text[i], 'a' + (int)(i % 26), len[i]);
			text[i][len[i] - 1] = '0' + (char)(i % 10);
			text[i][len[i]] = '\0';
			if (i % 14 == 4)
				text[i][0] = '/';
			break;
		case 5: len[i] = i % 5 == 0 ? 0 : 1; text[i][0] = 'q'; text[i][len[i]] = '\0'; break;
		default: /* any byte but NUL, '/' and 0xff included */
			len[i] = 1 + (size_t)rand() % 40;
			for (size_t k = 0; k < len[i]; k++)
				text[i][k] = (char)(1 + rand() % 255);
			text[i][len[i]] = '\0';
		}
		plain += len[i] + 1;
		ck_assert_int_eq(ds_names_add(&t, text[i], len[i], &h[i]), 0);
	}
	ck_assert_uint_gt(t.n, 2); /* (several chunks) */
	for (size_t i = 0; i < N; i++)
		name_is(&t, h[i], text[i], len[i]);
	ck_assert_uint_lt((uint64_t)(t.n - 1) * (1u << DS_NAME_SHIFT) + t.used, plain);
	ds_names_free(&t);

	/* a directory of numbered photos in hash order: under two thirds of their bytes */
	plain = 0;
	for (size_t i = 0; i < N; i++) {
		size_t k = i * 40503 % N;
		len[i] = (size_t)sprintf(text[i], "IMG_%05zu.JPG", k);
		plain += len[i] + 1;
		ck_assert_int_eq(ds_names_add(&t, text[i], len[i], &h[i]), 0);
	}
	for (size_t i = 0; i < N; i++)
		name_is(&t, h[i], text[i], len[i]);
	ck_assert_uint_lt(((uint64_t)(t.n - 1) << DS_NAME_SHIFT) + t.used, plain * 2 / 3);
	ck_assert_str_eq(ds_names_get(&t, DS_NAME_EMPTY, (char[DS_NAME_BUF]){ 0 }), "");
	ds_names_free(&t);
}
END_TEST

START_TEST(test_same_file)
{
	uint32_t root;
	dupscan_scan *s = scan_with_root(0, &root);
	struct stat fst = fake(3, 30, 100);
	ck_assert_int_eq(ds_add_rec(&s->tree, "f", 1, root, &fst), 0);
	const struct ds_rec *r = ds_rec(&s->tree, 0);
	int64_t ct = r->ctime_ns;
	ck_assert(ds_same_file(&s->tree, &fst, r, ct));
	struct stat x = fst;
	x.st_dev = 4;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	x = fst;
	x.st_ino = 31;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	x = fst;
	x.st_size = 101;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	x = fst;
	x.st_mtim.tv_nsec = 1;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	x = fst;
	x.st_ctim.tv_nsec = 1;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	ck_assert(ds_same_file(&s->tree, &x, r, ds_ns(x.st_ctim))); /* the ctime an own change left */
	x = fst;
	x.st_mode = S_IFLNK | 0777;
	ck_assert(!ds_same_file(&s->tree, &x, r, ct));
	dupscan_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("records");
	TCase *tc = tcase_create("records");
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_seen);
	tcase_add_test(tc, test_protected);
	tcase_add_test(tc, test_same_file);
	tcase_add_test(tc, test_shared_values);
	tcase_add_test(tc, test_sort_recs_runs);
	tcase_add_test(tc, test_wide_values);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* check_compare.c: byte-by-byte confirmation at the boundaries that matter, and
 * files that change between the walk and their reading. */
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
#include "read/read.h"
#include "match/result.h"
#include "match/compare.h"

static const struct { uint64_t size; int64_t flip; } cases[] = {
	{ 1, 0 },
	{ 4095, 4094 },              /* last byte of a file shorter than a block */
	{ 4096, 4095 },              /* last byte of exactly one block */
	{ 4097, 4096 },              /* byte 4097: first byte after the partial hash */
	{ 4097, 0 },
	{ 1048576, 4096 },           /* byte 4097 of a large file */
	{ 262144, 262143 },          /* read-buffer size */
	{ 262145, 262144 },          /* read-buffer size + 1 */
	{ 262143, 262142 },          /* read-buffer size - 1 */
	{ 1048576 + 100, 1048576 + 50 }, /* only after 1 MiB */
	{ 2097152, 2097151 },        /* the very last byte, sparse */
};

START_TEST(test_differ_at_one_byte)
{
	for (int chunk = 0; chunk < 2; chunk++) {
		char *dir = tu_tmpdir();
		tu_file(dir, "a", cases[_i].size, 5, -1);
		tu_file(dir, "b", cases[_i].size, 5, -1);
		tu_file(dir, "c", cases[_i].size, 5, cases[_i].flip);
		dupscan_scan *scan = chunk ? tu_scan(dir, DUPSCAN_OPT_CHUNK_SIZE, 4096, 0) : tu_scan(dir, 0);
		char *sets = tu_sets(scan, dir);
		ck_assert_str_eq(sets, "a b");
		ck_assert_uint_eq(dupscan_error_count(scan), 0);
		free(sets);
		dupscan_free(scan);
		tu_cleanup(dir);
	}
}
END_TEST

START_TEST(test_mixed_group)
{
	/* same size and first block: a pair, another pair, two loners (last byte) */
	char *dir = tu_tmpdir();
	tu_file(dir, "f0", 300000, 9, -1);
	tu_file(dir, "f1", 300000, 9, -1);
	tu_file(dir, "f2", 300000, 9, 299999);
	tu_file(dir, "f3", 300000, 9, 299999);
	tu_file(dir, "f4", 300000, 9, 150000);
	tu_file(dir, "f5", 300000, 9, 5000);
	dupscan_scan *scan = tu_scan(dir, 0);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "f0 f1|f2 f3");
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_more_files_than_open_at_once)
{
	char *dir = tu_tmpdir();
	const int n = (int)DS_LOCKSTEP_MAX + 44;
	char name[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		/* every 100th file differs in its last byte */
		tu_file(dir, name, 8192, 1, i % 100 == 7 ? 8191 : -1);
	}
	dupscan_scan *scan = tu_scan(dir, 0);
	/* f007, f107 and f207 share their odd last byte: a set of their own */
	ck_assert_uint_eq(dupscan_set_count(scan), 2);
	ck_assert_uint_eq(dupscan_set_file_count(dupscan_get_set(scan, 0)), (size_t)n - 3);
	char *sets = tu_sets(scan, dir);
	ck_assert_ptr_nonnull(strstr(sets, "|f007 f107 f207"));
	ck_assert_str_eq(strstr(sets, "|"), "|f007 f107 f207");
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* The comparison alone, without hashes: the index's full hash must not be
 * what separates files. */
START_TEST(test_lockstep_partition)
{
	const uint64_t size = cases[_i].size;
	char *dir = tu_tmpdir();
	tu_file(dir, "a", size, 5, -1);
	tu_file(dir, "b", size, 5, cases[_i].flip);
	tu_file(dir, "c", size, 5, -1);
	tu_file(dir, "d", size, 5, cases[_i].flip);
	tu_file(dir, "e", size, 6, -1);
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(ds_walk(&scan->walk), 0);
	ck_assert_uint_eq(scan->tree.nrecs, 5);
	struct ds_result res = { 0 };
	struct ds_ctx ctx = { &scan->match, &res, NULL };
	struct ds_member m[5];
	for (uint32_t i = 0; i < 5; i++) {
		/* put the walk's records in name order: a b c d e */
		uint32_t ri = 0;
		while (ds_rec_name(&scan->tree, ds_rec(&scan->tree, ri), (char[DS_NAME_BUF]){ 0 })[0] != 'a' + (char)i)
			ri++;
		m[i] = (struct ds_member){ ri, -1, i, 0, true };
	}
	/* pass 0 reads everything; pass 1 starts with the first blocks in memory */
	size_t blen = size < DS_BLOCK ? (size_t)size : DS_BLOCK;
	unsigned char *blocks = malloc(5 * blen);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < 5; i++) {
			m[i].cls = i;
			m[i].alive = true;
			if (pass == 1) {
				int fd = ds_open_rec(&ctx, m[i].rec);
				ck_assert_int_ge(fd, 0);
				ck_assert_int_eq(ds_pread_full(fd, blocks + i * blen, blen, 0), 0);
				close(fd);
			}
		}
		ck_assert_int_eq(ds_lockstep(&ctx, m, 5, size, pass ? blen : 0, NULL,
					     pass ? blocks : NULL, blen, NULL), 0);
		ck_assert(m[0].alive && m[1].alive && m[2].alive && m[3].alive);
		ck_assert(!m[4].alive);                 /* e is alone */
		ck_assert_uint_eq(m[0].cls, m[2].cls);  /* a = c */
		ck_assert_uint_eq(m[1].cls, m[3].cls);  /* b = d */
		ck_assert_uint_ne(m[0].cls, m[1].cls);
	}
	free(blocks);
	ck_assert_uint_eq(res.nerr, 0);
	ds_result_free(&res);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_pread_short)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "s", "0123456789");
	char *p = tu_path(dir, "s");
	int fd = open(p, O_RDONLY);
	char buf[32];
	ck_assert_int_eq(ds_pread_full(fd, buf, 10, 0), 0);
	ck_assert_int_eq(ds_pread_full(fd, buf, 20, 0), DUPSCAN_E_SHORT);
	close(fd);
	free(p);
	tu_cleanup(dir);
}
END_TEST

/* ---- files changing between the walk and their reading ---- */

enum mutation { TRUNCATE, DELETE, REWRITE_SAME_SIZE, REPLACE, GROW, REWRITE_MTIME_KEPT };

struct hook {
	const char *dir;
	enum mutation what;
	int errors;
	int last_code;
};

static void on_progress(void *user, int phase, uint64_t done, uint64_t total)
{
	struct hook *h = user;
	if (phase != DUPSCAN_PHASE_WALK || total == 0 || done != total)
		return;
	/* the walk is over, nothing has been read yet */
	char *c = tu_path(h->dir, "c");
	switch (h->what) {
	case TRUNCATE: ck_assert_int_eq(truncate(c, 100), 0); break;
	case DELETE: ck_assert_int_eq(unlink(c), 0); break;
	case REWRITE_SAME_SIZE: {
		tu_file(h->dir, "c", 100000, 4, 77);
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
		ck_assert_int_eq(utimensat(AT_FDCWD, c, ts, 0), 0);
		break;
	}
	case REPLACE: {
		tu_file(h->dir, "other", 100000, 4, -1);
		char *o = tu_path(h->dir, "other");
		ck_assert_int_eq(rename(o, c), 0);
		free(o);
		break;
	}
	case GROW: tu_file(h->dir, "c", 100001, 4, -1); break;
	case REWRITE_MTIME_KEPT: {
		/* other bytes in place, the mtime put back: only the ctime tells */
		struct stat st;
		ck_assert_int_eq(stat(c, &st), 0);
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL); /* past the filesystem's timestamp tick */
		int fd = open(c, O_WRONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, "changed", 7, 50000), 7);
		close(fd);
		struct timespec ts[2] = { st.st_atim, st.st_mtim };
		ck_assert_int_eq(utimensat(AT_FDCWD, c, ts, 0), 0);
		break;
	}
	}
	free(c);
}

static void on_error(void *user, const char *path, int code)
{
	struct hook *h = user;
	ck_assert_ptr_nonnull(strstr(path, "/c"));
	h->errors++;
	h->last_code = code;
}

START_TEST(test_changed_during_scan)
{
	static const int want[] = { DUPSCAN_E_CHANGED, -ENOENT, DUPSCAN_E_CHANGED, DUPSCAN_E_CHANGED,
				    DUPSCAN_E_CHANGED, DUPSCAN_E_CHANGED };
	char *dir = tu_tmpdir();
	tu_file(dir, "a", 100000, 4, -1);
	tu_file(dir, "b", 100000, 4, -1);
	tu_file(dir, "c", 100000, 4, -1);
	struct hook h = { dir, (enum mutation)_i, 0, 0 };
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	dupscan_set_progress_callback(scan, on_progress, &h);
	dupscan_set_error_callback(scan, on_error, &h);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), 0);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "a b");
	ck_assert_int_eq(h.errors, 1);
	ck_assert_int_eq(h.last_code, want[_i]);
	ck_assert_uint_eq(dupscan_error_count(scan), 1);
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Its bytes through the cursor, or the code it failed with. */
static int read_in(const dupscan_scan *scan, const char *name, struct ds_dirfd *dc, char *buf, size_t cap)
{
	int fd = ds_open_scanned_in(&scan->reading, tu_rec_named(scan, name), dc);
	if (fd < 0)
		return fd;
	ssize_t n = pread(fd, buf, cap - 1, 0);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	return 0;
}

START_TEST(test_open_in_dir)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "t/d1/a", "first a");
	tu_text(dir, "t/d1/b", "then b");
	tu_text(dir, "t/d2/c", "and c");
	tu_text(dir, "t/d3/e", "gone e");
	tu_text(dir, "bare", "an argument");
	char *d1 = tu_path(dir, "t/d1"), *moved = tu_path(dir, "t/d1-moved"), *c = tu_path(dir, "t/d2/c");
	char *d3 = tu_path(dir, "t/d3"), *e = tu_path(dir, "t/d3/e"), *t = tu_path(dir, "t");
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_ge(dupscan_add_path(scan, t, 1), 0);
	ck_assert_int_ge(dupscan_add_path(scan, "bare", 0), 0);
	ck_assert_int_eq(ds_walk(&scan->walk), 0);
	struct ds_dirfd dc = DS_DIRFD_INIT;
	char buf[64];
	ck_assert_int_eq(read_in(scan, "a", &dc, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "first a");
	ck_assert_int_ge(dc.fd, 0);
	int held = dc.fd;
	/* held, d1 moves: b is still the file the walk saw, read from the same descriptor */
	ck_assert_int_eq(rename(d1, moved), 0);
	ck_assert_int_eq(read_in(scan, "b", &dc, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "then b");
	ck_assert_int_eq(dc.fd, held);
	/* another file under c's name: not the one the walk saw */
	ck_assert_int_eq(unlink(c), 0);
	tu_text(dir, "t/d2/c", "new c");
	ck_assert_int_eq(read_in(scan, "c", &dc, buf, sizeof(buf)), DUPSCAN_E_CHANGED);
	/* a directory that no longer opens: its file goes by path, which names the error */
	ck_assert_int_eq(unlink(e), 0);
	ck_assert_int_eq(rmdir(d3), 0);
	ck_assert_int_eq(read_in(scan, "e", &dc, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(dc.fd, -1);
	/* a bare file name given as an argument has no directory to hold */
	ck_assert_int_eq(read_in(scan, "bare", &dc, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "an argument");
	ck_assert_int_eq(dc.fd, -1);
	ds_dirfd_close(&dc);
	ck_assert_uint_eq(dc.dir, DS_NONE);
	ck_assert_int_eq(chdir(cwd), 0);
	dupscan_free(scan);
	free(d1);
	free(moved);
	free(c);
	free(d3);
	free(e);
	free(t);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_chunks_kept)
{
	const size_t big = 256 * 1024, other = 200 * 1024;
	struct ds_chunks *cs = ds_chunks_new();
	ck_assert_ptr_nonnull(cs);
	/* two lent at once are two chunks; given back, the same length comes back */
	unsigned char *a = ds_chunk_take(cs, big), *b = ds_chunk_take(cs, big);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	memset(a, 'a', big);
	memset(b, 'b', big);
	ds_chunk_give(cs, a, big);
	ds_chunk_give(cs, b, big);
	unsigned char *c = ds_chunk_take(cs, big), *d = ds_chunk_take(cs, big);
	ck_assert(c == a || c == b);
	ck_assert(d == a || d == b);
	ck_assert_ptr_ne(c, d);
	/* another length: c, kept, is given back for it (its address may come
	 * back as e's), and what is lent (d) is never handed out again */
	ds_chunk_give(cs, c, big);
	unsigned char *e = ds_chunk_take(cs, other);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_ne(e, d);
	memset(e, 'e', other);
	ck_assert_uint_eq(d[big - 1], d == a ? 'a' : 'b'); /* d untouched by e */
	ds_chunk_give(cs, d, big);
	ds_chunk_give(cs, e, other);
	/* more given than kept: the rest are freed (ASan and valgrind see leaks) */
	unsigned char *many[40];
	for (size_t i = 0; i < 40; i++) {
		many[i] = ds_chunk_take(cs, big);
		ck_assert_ptr_nonnull(many[i]);
		for (size_t j = 0; j < i; j++)
			ck_assert_ptr_ne(many[i], many[j]);
	}
	for (size_t i = 0; i < 40; i++)
		ds_chunk_give(cs, many[i], big);
	ds_chunks_free(cs);
	/* without a keeper: plain allocations */
	unsigned char *f = ds_chunk_take(NULL, big);
	ck_assert_ptr_nonnull(f);
	f[0] = 1;
	ds_chunk_give(NULL, f, big);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("ds_lockstep");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_differ_at_one_byte, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_lockstep_partition, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_mixed_group);
	tcase_add_test(tc, test_more_files_than_open_at_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_pread_full");
	tcase_add_test(tc, test_pread_short);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_chunk_take");
	tcase_add_test(tc, test_chunks_kept);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_open_scanned_in");
	tcase_add_test(tc, test_open_in_dir);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_check_unchanged");
	tcase_add_loop_test(tc, test_changed_during_scan, TRUNCATE, REWRITE_MTIME_KEPT + 1);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

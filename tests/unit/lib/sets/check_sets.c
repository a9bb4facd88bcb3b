/* SPDX-License-Identifier: MIT */
/* check_sets.c: building ordered sets from confirmed classes, and the options
 * that shape them. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"
#include "dupscan_config.h"
#include "sets/sets.h"
#include "sets/tally.h"

START_TEST(test_natural_cmp)
{
	ck_assert_int_lt(ds_natural_cmp("file2", "file10"), 0);
	ck_assert_int_gt(ds_natural_cmp("file10", "file9"), 0);
	ck_assert_int_gt(ds_natural_cmp("a01", "a1"), 0);   /* equal numbers: fewer zeros first */
	ck_assert_int_lt(ds_natural_cmp("apt/x", "apt-x/y"), 0); /* symbols below '.' sort last */
	ck_assert_int_lt(ds_natural_cmp("a b", "a-b"), 0);
	ck_assert_int_lt(ds_natural_cmp("apt.x", "aptx"), 0);
	ck_assert_int_lt(ds_natural_cmp("a_x", "SUB"), 0);   /* letters without case */
	ck_assert_int_lt(ds_natural_cmp("Zed", "`tick`"), 0);
	ck_assert_int_eq(ds_natural_cmp("ABC", "abc"), 0);
	ck_assert_int_gt(ds_natural_cmp("pip3", "pip3.12"), 0);  /* an end after digits is a symbol */
	ck_assert_int_lt(ds_natural_cmp("pip3", "pip3-x"), 0);
	ck_assert_int_lt(ds_natural_cmp("pip", "pip3"), 0);
	ck_assert_int_gt(ds_natural_cmp("triple02", "triple02.copy"), 0);   /* ds_order_cmp then breaks the tie by bytes */
	ck_assert_int_lt(ds_natural_cmp("a", "b"), 0);
	ck_assert_int_lt(ds_natural_cmp("a", "a0"), 0);
	ck_assert_int_lt(ds_natural_cmp("a/sub/y", "a/x"), 0);
	ck_assert_int_lt(ds_natural_cmp("x\xff", "x\x01"), 0); /* past ASCII: late, as signed char */
	ck_assert_int_gt(ds_natural_cmp("x\xff", "xz"), 0);
	ck_assert_int_lt(ds_natural_cmp("v1.9.2", "v1.10.0"), 0);
}
END_TEST

struct pair {
	int key, seq;
};

static int cmp_key(void *ctx, const void *a, const void *b)
{
	(void)ctx;
	return ((const struct pair *)a)->key - ((const struct pair *)b)->key;
}

START_TEST(test_sort_stable)
{
	enum { N = 1001 };
	struct pair v[N];
	for (int i = 0; i < N; i++)
		v[i] = (struct pair){ (i * 7919) % 13, i };
	ck_assert_int_eq(ds_sort(v, N, sizeof(v[0]), cmp_key, NULL), 0);
	for (int i = 1; i < N; i++) {
		ck_assert_int_le(v[i - 1].key, v[i].key);
		if (v[i - 1].key == v[i].key)
			ck_assert_int_lt(v[i - 1].seq, v[i].seq);
	}
}
END_TEST

/* Every length from 0 to 300 (the small runs, the halves, the merges), and
 * elements of 48 bytes: the order a stable insertion sort gives, every
 * element kept. */
struct wide {
	int key, seq;
	char pad[40];
};

static int cmp_wide(void *ctx, const void *a, const void *b)
{
	(void)ctx;
	return ((const struct wide *)a)->key - ((const struct wide *)b)->key;
}

START_TEST(test_sort_lengths)
{
	enum { N = 300 };
	static struct wide v[N];
	for (size_t n = 0; n <= N; n++) {
		unsigned x = (unsigned)n * 2654435761u;
		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			v[i] = (struct wide){ (int)(x >> 16) % (n % 7 + 2), (int)i, { 0 } };
			snprintf(v[i].pad, sizeof(v[i].pad), "element %zu", i);
		}
		ck_assert_int_eq(ds_sort(v, n, sizeof(v[0]), cmp_wide, NULL), 0);
		bool seen[N] = { false };
		for (size_t i = 0; i < n; i++) {
			char want[40];
			snprintf(want, sizeof(want), "element %d", v[i].seq);
			ck_assert_str_eq(v[i].pad, want);
			ck_assert(!seen[v[i].seq]);
			seen[v[i].seq] = true;
			if (i > 0)
				ck_assert(v[i - 1].key < v[i].key || (v[i - 1].key == v[i].key && v[i - 1].seq < v[i].seq));
		}
	}
}
END_TEST

static void link_rel(const char *dir, const char *from, const char *to)
{
	char *a = tu_path(dir, from), *b = tu_path(dir, to);
	ck_assert_int_eq(link(a, b), 0);
	free(a);
	free(b);
}

static void check_sets(const dupscan_scan *scan, const char *dir, const char *want)
{
	char *got = tu_sets(scan, dir);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_hard_links)
{
	/* created so the walk may meet the links in any order */
	char *dir = tu_tmpdir();
	tu_text(dir, "m/orig", "linked\n");
	link_rel(dir, "m/orig", "b-link");
	link_rel(dir, "m/orig", "z-link");
	tu_text(dir, "copy", "linked\n");
	tu_text(dir, "lonely", "only links\n");
	link_rel(dir, "lonely", "lonely2");
	dupscan_scan *scan = tu_scan(dir, 0);
	/* one path per inode: the first by name */
	check_sets(scan, dir, "b-link copy");
	char *u = tu_uniques(scan, dir);
	ck_assert_str_eq(u, "lonely lonely2");
	free(u);
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_HARD_LINKS, 1, 0);
	check_sets(scan, dir, "b-link copy m/orig z-link|lonely lonely2");
	u = tu_uniques(scan, dir);
	ck_assert_str_eq(u, "");
	free(u);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_zero_length)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "e1", "");
	tu_text(dir, "e2", "");
	tu_text(dir, "x", "x");
	dupscan_scan *scan = tu_scan(dir, 0);
	check_sets(scan, dir, "");
	char *u = tu_uniques(scan, dir);
	ck_assert_str_eq(u, "x");
	free(u);
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_ZERO_MATCH, 1, 0);
	check_sets(scan, dir, "e1 e2");
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

static void set_mtime(const char *dir, const char *rel, time_t t)
{
	char *p = tu_path(dir, rel);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	free(p);
}

START_TEST(test_orders)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "A/f10", "one\n");
	tu_text(dir, "A/f9", "one\n");
	tu_text(dir, "B/f1", "one\n");
	tu_text(dir, "A/t", "two\n");
	tu_text(dir, "B/t", "two\n");
	set_mtime(dir, "A/f10", 1000);
	set_mtime(dir, "A/f9", 3000);
	set_mtime(dir, "B/f1", 2000);
	set_mtime(dir, "A/t", 5000);
	set_mtime(dir, "B/t", 4000);
	dupscan_scan *scan = tu_scan(dir, 0);
	check_sets(scan, dir, "A/f9 A/f10 B/f1|A/t B/t");
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_ORDER, DUPSCAN_ORDER_TIME, 0);
	check_sets(scan, dir, "A/f10 B/f1 A/f9|B/t A/t");
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_REVERSE, 1, 0);
	check_sets(scan, dir, "B/t A/t|B/f1 A/f10 A/f9");
	dupscan_free(scan);

	/* param order: paths of the second argument first */
	char *a = tu_path(dir, "A"), *b = tu_path(dir, "B");
	dupscan_scan *s2 = NULL;
	ck_assert_int_eq(dupscan_create(&s2), 0);
	ck_assert_int_eq(dupscan_set_option(s2, DUPSCAN_OPT_PARAM_ORDER, 1), 0);
	ck_assert_int_eq(dupscan_add_path(s2, b, 0), 0);
	ck_assert_int_eq(dupscan_add_path(s2, a, 0), 1);
	ck_assert_int_eq(dupscan_run(s2), 0);
	check_sets(s2, dir, "B/f1 A/f9 A/f10|B/t A/t");
	ck_assert_int_eq(dupscan_file_arg_index(dupscan_set_file(dupscan_get_set(s2, 0), 0)), 0);
	ck_assert_int_eq(dupscan_file_arg_index(dupscan_set_file(dupscan_get_set(s2, 0), 1)), 1);
	dupscan_free(s2);

	/* isolate: the first file's argument contributes only the first file */
	ck_assert_int_eq(dupscan_create(&s2), 0);
	ck_assert_int_eq(dupscan_set_option(s2, DUPSCAN_OPT_ISOLATE, 1), 0);
	ck_assert_int_eq(dupscan_add_path(s2, a, 0), 0);
	ck_assert_int_eq(dupscan_add_path(s2, b, 0), 1);
	ck_assert_int_eq(dupscan_run(s2), 0);
	check_sets(s2, dir, "A/f9 B/f1|A/t B/t");
	dupscan_free(s2);
	ck_assert_int_eq(dupscan_create(&s2), 0);
	ck_assert_int_eq(dupscan_set_option(s2, DUPSCAN_OPT_ISOLATE, 1), 0);
	ck_assert_int_eq(dupscan_add_path(s2, a, 0), 0);
	ck_assert_int_eq(dupscan_run(s2), 0);
	check_sets(s2, dir, "");
	dupscan_free(s2);
	free(a);
	free(b);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_permissions)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "p\n");
	tu_text(dir, "b", "p\n");
	tu_text(dir, "c", "p\n");
	char *c = tu_path(dir, "c");
	ck_assert_int_eq(chmod(c, 0600), 0);
	free(c);
	dupscan_scan *scan = tu_scan(dir, 0);
	check_sets(scan, dir, "a b c");
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_PERMISSIONS, 1, 0);
	check_sets(scan, dir, "a b");
	ck_assert_uint_eq(dupscan_file_mode(dupscan_set_file(dupscan_get_set(scan, 0), 0)) & 0777, 0644);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_quick_and_partial_only)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a", 100000, 2, -1);
	tu_file(dir, "b", 100000, 2, -1);
	tu_file(dir, "c", 100000, 2, 99999);   /* same first block, other end */
	tu_file(dir, "d", 100000, 2, 100);     /* other first block */
	dupscan_scan *scan = tu_scan(dir, DUPSCAN_OPT_QUICK, 1, 0);
	check_sets(scan, dir, "a b");
	dupscan_free(scan);
	scan = tu_scan(dir, DUPSCAN_OPT_PARTIAL_ONLY, 1, 0);
	check_sets(scan, dir, "a b c");
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_file_accessors)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a", 5000, 3, -1);
	tu_file(dir, "b", 5000, 3, -1);
	char *pa = tu_path(dir, "a");
	struct stat st;
	ck_assert_int_eq(stat(pa, &st), 0);
	dupscan_scan *scan = tu_scan(dir, 0);
	const dupscan_file *f = dupscan_set_file(dupscan_get_set(scan, 0), 0);
	ck_assert_str_eq(dupscan_file_path(f), pa);
	ck_assert_uint_eq(dupscan_file_size(f), 5000);
	ck_assert_uint_eq(dupscan_file_dev(f), (uint64_t)st.st_dev);
	ck_assert_uint_eq(dupscan_file_ino(f), (uint64_t)st.st_ino);
	ck_assert_int_eq(dupscan_file_mtime_ns(f), (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	ck_assert_uint_eq(dupscan_file_mode(f), st.st_mode);
	ck_assert_ptr_null(dupscan_get_set(scan, 1));
	ck_assert_ptr_null(dupscan_set_file(dupscan_get_set(scan, 0), 2));
	ck_assert_int_eq(dupscan_add_path(scan, dir, 1), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_run(scan), DUPSCAN_E_STATE);
	dupscan_free(scan);
	dupscan_free(NULL);
	free(pa);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_options_and_errors)
{
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_eq(dupscan_set_option(scan, 9999, 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_CHUNK_SIZE, 4095), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_CHUNK_SIZE, 16777217), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_CHUNK_SIZE, 4096), 0);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_ORDER, 7), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_QUICK, 2), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_add_path(scan, "", 0), -EINVAL);
	ck_assert_int_eq(dupscan_add_path(scan, NULL, 0), -EINVAL);
	dupscan_free(scan);
	const int codes[] = { 0, -ENOENT, -EACCES, DUPSCAN_E_CHANGED, DUPSCAN_E_NOTREG, DUPSCAN_E_STATE,
			      DUPSCAN_E_OPTION, DUPSCAN_E_SHORT, -99999 };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *m = dupscan_strerror(codes[i]);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_gt((int)strlen(m), 0);
	}
	ck_assert_str_eq(dupscan_strerror(DUPSCAN_E_CHANGED), "File changed during the scan");
	ck_assert_str_eq(dupscan_version(), DUPSCAN_VERSION_STRING);
}
END_TEST

/* The caller's predicate sees each regular file once, with its stat data. */
struct filter_log {
	int calls;
	uint64_t size_of_keep;
};

static int keep_not_skip(void *user, const dupscan_file *f)
{
	struct filter_log *log = user;
	log->calls++;
	const char *p = dupscan_file_path(f);
	if (strstr(p, "keep"))
		log->size_of_keep = dupscan_file_size(f);
	ck_assert_int_gt(dupscan_file_mtime_ns(f), 0);
	ck_assert(S_ISREG(dupscan_file_mode(f)));
	return strstr(p, "skip") == NULL;
}

START_TEST(test_filter_predicate)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "keep1", "abc\n");
	tu_text(dir, "keep2", "abc\n");
	tu_text(dir, "skip3", "abc\n");
	tu_text(dir, "skip4", "zzz\n");
	tu_text(dir, "lone", "zzz\n");
	struct filter_log log = { 0 };
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	dupscan_set_filter(scan, keep_not_skip, &log);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), 0);
	check_sets(scan, dir, "keep1 keep2");
	/* filtered files are not unique either */
	char *u = tu_uniques(scan, dir);
	ck_assert_str_eq(u, "lone");
	free(u);
	ck_assert_int_eq(log.calls, 5);
	ck_assert_uint_eq(log.size_of_keep, 4);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

struct stage_log {
	char text[1024];
};

static void log_stage(void *user, int stage, const dupscan_file *const *files, size_t count)
{
	struct stage_log *log = user;
	size_t len = strlen(log->text);
	snprintf(log->text + len, sizeof(log->text) - len, "%s%d:", len ? "|" : "", stage);
	for (size_t i = 0; i < count; i++) {
		const char *p = strrchr(dupscan_file_path(files[i]), '/') + 1;
		len = strlen(log->text);
		snprintf(log->text + len, sizeof(log->text) - len, "%s%s", i ? "," : "", p);
	}
}

START_TEST(test_stage_callback)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a", 9000, 1, -1);
	tu_file(dir, "b", 9000, 1, -1);
	tu_file(dir, "c", 9000, 1, 8999);
	tu_file(dir, "d", 9000, 1, 10);
	tu_file(dir, "e", 100, 1, -1);
	struct stage_log log = { "" };
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	dupscan_set_stage_callback(scan, log_stage, &log);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), 0);
	ck_assert_str_eq(log.text, "1:a,b,c,d|2:a,b,c|3:a,b");
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Two handles in two threads share nothing. */
struct job {
	char *dir;
	char *sets;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	for (int i = 0; i < 20; i++) {
		dupscan_scan *scan = NULL;
		if (dupscan_create(&scan) != 0 || dupscan_add_path(scan, j->dir, 1) < 0 || dupscan_run(scan) != 0)
			return NULL;
		free(j->sets);
		j->sets = tu_sets(scan, j->dir);
		dupscan_free(scan);
	}
	return NULL;
}

START_TEST(test_two_threads)
{
	struct job jobs[2] = { { tu_tmpdir(), NULL }, { tu_tmpdir(), NULL } };
	tu_file(jobs[0].dir, "x1", 70000, 1, -1);
	tu_file(jobs[0].dir, "x2", 70000, 1, -1);
	tu_file(jobs[1].dir, "y1", 5000, 2, -1);
	tu_file(jobs[1].dir, "y2", 5000, 2, -1);
	tu_file(jobs[1].dir, "y3", 5000, 2, -1);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_str_eq(jobs[0].sets, "x1 x2");
	ck_assert_str_eq(jobs[1].sets, "y1 y2 y3");
	for (int i = 0; i < 2; i++) {
		free(jobs[i].sets);
		tu_cleanup(jobs[i].dir);
	}
}
END_TEST

START_TEST(test_dir_sets)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "A/x", "same x\n");
	tu_text(dir, "A/sub/y", "same y\n");
	tu_text(dir, "B/renamed", "same x\n");
	tu_text(dir, "B/other/z", "same y\n");
	tu_text(dir, "C/x", "same x\n");
	tu_text(dir, "D/x", "differs\n");
	tu_text(dir, "E/x", "differs!\n"); /* same size as D/x, other bytes */
	dupscan_scan *scan = tu_scan(dir, DUPSCAN_OPT_DIRS, 1, 0);
	char *sets = tu_sets(scan, dir);
	/* A = B; their subdirectories are covered; C/x has copies in A and B */
	ck_assert_str_eq(sets, "A/ B/|A/x B/renamed C/x");
	ck_assert_int_eq(dupscan_set_is_dirs(dupscan_get_set(scan, 0)), 1);
	ck_assert_int_eq(dupscan_set_is_dirs(dupscan_get_set(scan, 1)), 0);
	const dupscan_file *a = dupscan_set_file(dupscan_get_set(scan, 0), 0);
	ck_assert_uint_eq(dupscan_file_size(a), 14);
	ck_assert_int_eq(S_ISDIR(dupscan_file_mode(a)), 1);
	free(sets);
	dupscan_free(scan);
	/* without the option: files only */
	scan = tu_scan(dir, 0);
	sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "A/sub/y B/other/z|A/x B/renamed C/x");
	ck_assert_int_eq(dupscan_set_is_dirs(dupscan_get_set(scan, 0)), 0);
	ck_assert_int_eq(dupscan_set_is_dirs(NULL), 0);
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Where the copies are, through the library's calls: a folder, its copy and
 * half of it again; each directory's figures, the pairs at 50% and 100%,
 * and the states and values refused. */
START_TEST(test_tally_and_overlaps)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a/x", 1000, 1, -1);
	tu_file(dir, "a/y", 3000, 2, -1);
	tu_file(dir, "b/x", 1000, 1, -1);
	tu_file(dir, "b/y", 3000, 2, -1);
	tu_file(dir, "c/y", 3000, 2, -1);
	tu_file(dir, "c/z", 5000, 3, -1);
	dupscan_scan *fresh;
	ck_assert_int_eq(dupscan_create(&fresh), 0);
	ck_assert_int_eq(dupscan_tally_dirs(fresh), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_find_overlaps(fresh, 50), DUPSCAN_E_STATE);
	ck_assert_uint_eq(dupscan_dir_count(fresh), 0);
	dupscan_free(fresh);
	dupscan_scan *dirs = tu_scan(dir, DUPSCAN_OPT_DIRS, 1, 0);
	ck_assert_int_eq(dupscan_tally_dirs(dirs), DUPSCAN_E_OPTION);
	dupscan_free(dirs);

	dupscan_scan *scan = tu_scan(dir, 0);
	ck_assert_int_eq(dupscan_find_overlaps(scan, 0), -EINVAL);
	ck_assert_int_eq(dupscan_find_overlaps(scan, 101), -EINVAL);
	ck_assert_int_eq(dupscan_tally_dirs(scan), 0);
	ck_assert_uint_eq(dupscan_dir_count(scan), 4); /* the argument, a, b, c */
	size_t byname[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
	for (size_t d = 0; d < dupscan_dir_count(scan); d++) {
		char buf[4096];
		size_t len = dupscan_dir_path(scan, d, buf, sizeof(buf));
		ck_assert_uint_eq(len, strlen(buf));
		ck_assert_uint_eq(dupscan_dir_path(scan, d, buf, len), len); /* no room: the length, nothing written */
		if (dupscan_dir_parent(scan, d) == SIZE_MAX) {
			ck_assert_uint_eq(dupscan_dir_depth(scan, d), 0);
			ck_assert_uint_eq(dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES), 6);
			ck_assert_uint_eq(dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES), 16000);
			ck_assert_uint_eq(dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_FILES), 5);
			ck_assert_uint_eq(dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_BYTES), 11000);
			continue;
		}
		ck_assert_uint_eq(dupscan_dir_depth(scan, d), 1);
		byname[buf[len - 1] - 'a'] = d;
	}
	ck_assert_uint_eq(dupscan_dir_tally(scan, byname[2], DUPSCAN_TALLY_BYTES), 8000);
	ck_assert_uint_eq(dupscan_dir_tally(scan, byname[2], DUPSCAN_TALLY_DUP_BYTES), 3000);
	ck_assert_uint_eq(dupscan_dir_tally(scan, byname[2], 99), 0);
	ck_assert_uint_eq(dupscan_dir_path(scan, 4, NULL, 0), 0);

	/* at 50%: a and b (all of each in the other), a's y in c is 75% of a:
	 * (a, c) and (b, c); c has 3000 of 8000 in each: 37% */
	ck_assert_int_eq(dupscan_find_overlaps(scan, 50), 0);
	ck_assert_uint_eq(dupscan_overlap_count(scan), 3);
	size_t a, b;
	ck_assert_int_eq(dupscan_overlap_dirs(scan, 0, &a, &b), 0);
	ck_assert(a == byname[0] && b == byname[1]); /* 4000 bytes each way; a's path first */
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 0, 0, DUPSCAN_TALLY_BYTES), 4000);
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 0, 1, DUPSCAN_TALLY_FILES), 2);
	ck_assert_int_eq(dupscan_overlap_dirs(scan, 1, &a, &b), 0);
	ck_assert(a == byname[0] && b == byname[2]);
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 1, 0, DUPSCAN_TALLY_BYTES), 3000);
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 1, 1, DUPSCAN_TALLY_BYTES), 3000);
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 1, 1, DUPSCAN_TALLY_FILES), 1);
	ck_assert_int_eq(dupscan_overlap_dirs(scan, 3, &a, &b), -EINVAL);
	ck_assert_uint_eq(dupscan_overlap_tally(scan, 0, 2, DUPSCAN_TALLY_BYTES), 0);
	/* at 100%: a and b alone; a second call replaces the pairs */
	ck_assert_int_eq(dupscan_find_overlaps(scan, 100), 0);
	ck_assert_uint_eq(dupscan_overlap_count(scan), 1);
	/* the pair table's limit: the fewest entries the pairs at 50% need,
	 * found by trying; one fewer stops with DUPSCAN_E_TOO_MANY and leaves no
	 * pair (not the last call's) */
	ck_assert_uint_eq(ds_overlaps_limit(&scan->results), DS_OVERLAPS_FLOOR); /* 6 files: the floor */
	size_t need = 0;
	while (need < 64 && ds_overlaps(&scan->results, 50, need) == DUPSCAN_E_TOO_MANY)
		need++;
	ck_assert_uint_ge(need, 3); /* three pairs shown, and the sides weighed */
	ck_assert_uint_lt(need, 64);
	ck_assert_uint_eq(dupscan_overlap_count(scan), 3);
	ck_assert_int_eq(ds_overlaps(&scan->results, 50, need - 1), DUPSCAN_E_TOO_MANY);
	ck_assert_uint_eq(dupscan_overlap_count(scan), 0);
	ck_assert_str_eq(dupscan_strerror(DUPSCAN_E_TOO_MANY),
			 "More pairs of directories to weigh than files: many directories hold copies of the same files");
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Reference paths: sets only with a reference file, led by one; the other
 * files without a copy under a reference listed; dupscan_set_reference() on
 * an added path the same as dupscan_add_reference(); a reference that could
 * not be scanned makes no file missing. */
static char *missing_list(dupscan_scan *scan, const char *root)
{
	char *out = calloc(1, 4096);
	ck_assert_int_eq(dupscan_find_missing(scan), 0);
	for (size_t i = 0; i < dupscan_missing_count(scan); i++) {
		const char *p = dupscan_file_path(dupscan_missing_file(scan, i));
		ck_assert_int_eq(strncmp(p, root, strlen(root)), 0);
		strcat(out, i ? " " : "");
		strcat(out, p + strlen(root) + 1);
	}
	return out;
}

START_TEST(test_reference)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "lib/a", 5000, 1, -1);
	tu_file(dir, "lib/a2", 5000, 1, -1);
	tu_file(dir, "card/a", 5000, 1, -1);
	tu_file(dir, "card/b", 5000, 2, -1);  /* a library size, other bytes */
	tu_file(dir, "card/d1", 7000, 3, -1); /* copies of each other only */
	tu_file(dir, "card/d2", 7000, 3, -1);
	char *lib = tu_path(dir, "lib"), *card = tu_path(dir, "card");
	for (int how = 0; how < 2; how++) {
		dupscan_scan *scan = NULL;
		ck_assert_int_eq(dupscan_create(&scan), 0);
		ck_assert_int_eq(dupscan_find_missing(scan), DUPSCAN_E_STATE);
		ck_assert_int_eq(dupscan_add_path(scan, card, 1), 0);
		if (how == 0) {
			ck_assert_int_eq(dupscan_add_reference(scan, lib, 1), 1);
		} else {
			ck_assert_int_eq(dupscan_add_path(scan, lib, 1), 1);
			ck_assert_int_eq(dupscan_set_reference(scan, 2), -EINVAL);
			ck_assert_int_eq(dupscan_set_reference(scan, -1), -EINVAL);
			ck_assert_int_eq(dupscan_set_reference(scan, 1), 1);
		}
		ck_assert_int_eq(dupscan_run(scan), 0);
		ck_assert_int_eq(dupscan_set_reference(scan, 0), DUPSCAN_E_STATE);
		char *sets = tu_sets(scan, dir);
		ck_assert_str_eq(sets, "lib/a lib/a2 card/a");
		ck_assert_int_eq(dupscan_file_is_reference(dupscan_set_file(dupscan_get_set(scan, 0), 0)), 1);
		ck_assert_int_eq(dupscan_file_is_reference(dupscan_set_file(dupscan_get_set(scan, 0), 2)), 0);
		char *miss = missing_list(scan, dir);
		ck_assert_str_eq(miss, "card/b card/d1 card/d2");
		free(sets);
		free(miss);
		dupscan_free(scan);
	}
	/* a reference gone before the run: nothing is missing from it (one not
	 * there when added is refused: it cannot be protected) */
	char *nope = tu_path(dir, "nope");
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_eq(dupscan_add_reference(scan, nope, 1), -ENOENT);
	tu_mkdir(dir, "nope");
	ck_assert_int_eq(dupscan_add_reference(scan, nope, 1), 0);
	ck_assert_int_eq(rmdir(nope), 0);
	ck_assert_int_eq(dupscan_add_path(scan, card, 1), 1);
	ck_assert_int_eq(dupscan_run(scan), 0);
	ck_assert_int_eq(dupscan_find_missing(scan), DUPSCAN_E_REFERENCE);
	ck_assert_int_eq(dupscan_missing_count(scan), 0);
	dupscan_free(scan);
	free(nope);
	free(lib);
	free(card);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sets");
	TCase *tc = tcase_create("ds_natural_cmp");
	tcase_add_test(tc, test_natural_cmp);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_sort");
	tcase_add_test(tc, test_sort_stable);
	tcase_add_test(tc, test_sort_lengths);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_build_sets");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hard_links);
	tcase_add_test(tc, test_zero_length);
	tcase_add_test(tc, test_orders);
	tcase_add_test(tc, test_permissions);
	tcase_add_test(tc, test_quick_and_partial_only);
	tcase_add_test(tc, test_file_accessors);
	tcase_add_test(tc, test_two_threads);
	tcase_add_test(tc, test_filter_predicate);
	tcase_add_test(tc, test_stage_callback);
	tcase_add_test(tc, test_dir_sets);
	tcase_add_test(tc, test_tally_and_overlaps);
	tcase_add_test(tc, test_reference);
	suite_add_tcase(s, tc);
	tc = tcase_create("dupscan_set_option");
	tcase_add_test(tc, test_options_and_errors);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* check_scan: the handle's life (scan.c): options checked when given, one run
 * only, nothing added after it, NULL handles refused, the descriptors a run
 * may hold fitted to the process' limit, and a run canceled before it starts
 * ending with whole sets (none) and DUPSCAN_E_CANCELED. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "internal.h"
#include "testutil.h"

START_TEST(test_options)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ZERO_MATCH, 1), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ZERO_MATCH, 2), DUPSCAN_E_OPTION); /* a flag is 0 or 1 */
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MIN_CHUNK - 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MAX_CHUNK + 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MIN_CHUNK), 0);
	ck_assert(s->opt.chunk == DS_MIN_CHUNK && s->opt.chunk_given);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, -1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 1025), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 3), 0);
	ck_assert_int_eq(s->opt.threads, DUPSCAN_THREADS ? 3 : 1);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO_MEMORY, (1 << 20) - 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO_MEMORY, 1 << 20), 0);
	ck_assert_uint_eq(s->opt.sweep_budget, 1 << 20);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ORDER, 7), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, 9999, 1), DUPSCAN_E_OPTION);
	dupscan_free(s);
}
END_TEST

START_TEST(test_one_run)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "same\n");
	tu_text(dir, "b", "same\n");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_add_path(s, "", 1), -EINVAL);
	ck_assert_int_eq(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_add_path(s, dir, 0), 1);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_eq(dupscan_set_count(s), 1);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_add_path(s, dir, 1), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_QUICK, 1), DUPSCAN_E_STATE);
	ck_assert_uint_eq(dupscan_set_count(s), 1); /* the first run's sets stand */
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_null)
{
	ck_assert_int_eq(dupscan_create(NULL), -EINVAL);
	ck_assert_int_eq(dupscan_add_path(NULL, "x", 1), -EINVAL);
	ck_assert_int_eq(dupscan_set_option(NULL, DUPSCAN_OPT_QUICK, 1), -EINVAL);
	ck_assert_int_eq(dupscan_run(NULL), -EINVAL);
	ck_assert_uint_eq(dupscan_set_count(NULL), 0);
	ck_assert_ptr_null(dupscan_get_set(NULL, 0));
	ck_assert_int_eq(dupscan_io_mode(NULL), DUPSCAN_IO_AUTO);
	dupscan_cancel(NULL);
	dupscan_free(NULL);
}
END_TEST

/* Every thread may hold max_open files; together they fit the limit. */
START_TEST(test_open_files_fit)
{
	/* 200 in the test's own process; valgrind refuses it: then the limit it has */
	struct rlimit rl, low = { 200, 200 };
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	size_t limit = setrlimit(RLIMIT_NOFILE, &low) == 0 ? 200 : rl.rlim_cur == RLIM_INFINITY ? 1024 : rl.rlim_cur;
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "x");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 4), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_ge(s->reading.max_open, 8);
	ck_assert_uint_le(s->reading.max_open * (size_t)s->opt.threads, limit - 64);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_canceled_before)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "same\n");
	tu_text(dir, "b", "same\n");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	dupscan_cancel(s);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_CANCELED);
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("handle");
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_one_run);
	tcase_add_test(tc, test_null);
	tcase_add_test(tc, test_open_files_fit);
	tcase_add_test(tc, test_canceled_before);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

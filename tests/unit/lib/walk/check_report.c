/* SPDX-License-Identifier: MIT */
/* check_report.c: sets given through dupscan_report_file(): built as given,
 * in the order given; refused when a path is now a directory or a symlink;
 * acted on only after each pair is checked and compared. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"

/* Give dir/rel to set number set with its identity as it is now. */
static void give(dupscan_scan *s, uint32_t set, const char *dir, const char *rel)
{
	char *p = tu_path(dir, rel);
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(dupscan_report_file(s, set, p, st.st_dev, st.st_ino, st.st_size, ds_ns(st.st_mtim),
					     ds_ns(st.st_ctim)), 0);
	free(p);
}

START_TEST(test_sets_as_given)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "b", 5000, 1, -1);
	tu_file(dir, "a", 5000, 1, -1);
	tu_file(dir, "z", 7000, 2, -1);
	tu_file(dir, "y", 7000, 2, -1);
	tu_file(dir, "u", 5000, 3, -1);
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	/* a set of other content: the report's word, to be checked by the actions */
	give(s, 0, dir, "z");
	give(s, 0, dir, "y");
	give(s, 1, dir, "b");
	give(s, 1, dir, "a");
	give(s, 1, dir, "u");
	ck_assert_int_eq(dupscan_run(s), 0);
	char *sets = tu_sets(s, dir);
	ck_assert_str_eq(sets, "z y|b a u"); /* the report's order, not the name order */
	free(sets);
	const dupscan_set *set = dupscan_get_set(s, 1);
	ck_assert_int_eq(dupscan_set_proof(set, NULL), DUPSCAN_PROOF_REPORT);
	const dupscan_file *keep = dupscan_set_file(set, 0);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dupscan_set_file(set, 2), 0), DUPSCAN_E_DIFFERS);
	char *u = tu_path(dir, "u");
	ck_assert_int_eq(access(u, F_OK), 0);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dupscan_set_file(set, 1), 0), 0);
	char *a = tu_path(dir, "a");
	ck_assert_int_eq(access(a, F_OK), -1);
	ck_assert_int_eq(dupscan_report_file(s, 0, u, 1, 2, 3, 4, 5), DUPSCAN_E_STATE);
	dupscan_free(s);
	free(a);
	free(u);
	tu_cleanup(dir);
}
END_TEST

static int notreg;
static void count_notreg(void *user, const char *path, int code)
{
	(void)user;
	(void)path;
	notreg += code == DUPSCAN_E_NOTREG;
}

START_TEST(test_refused)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a", 100, 1, -1);
	tu_file(dir, "b", 100, 1, -1);
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	give(s, 0, dir, "a");
	give(s, 0, dir, "b");
	char *b = tu_path(dir, "b"), *a = tu_path(dir, "a");
	ck_assert_int_eq(unlink(b), 0);
	ck_assert_int_eq(symlink(a, b), 0); /* b swapped for a symlink to the kept file */
	notreg = 0;
	dupscan_set_error_callback(s, count_notreg, NULL);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_NOTREG);
	ck_assert_int_eq(notreg, 1);
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	dupscan_free(s);
	/* paths and a report at once */
	ck_assert_int_eq(dupscan_create(&s), 0);
	give(s, 0, dir, "a");
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_STATE);
	dupscan_free(s);
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_report_file(s, 0, "", 1, 2, 3, 4, 5), -EINVAL);
	ck_assert_int_eq(dupscan_report_file(NULL, 0, a, 1, 2, 3, 4, 5), -EINVAL);
	dupscan_free(s);
	free(a);
	free(b);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("dupscan_report_file");
	tcase_add_test(tc, test_sets_as_given);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

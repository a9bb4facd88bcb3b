/* SPDX-License-Identifier: MIT */
/* check_undosteps: the steps every restore of --undo is made of
 * (undo_steps.c): a content recognized, a name removed only while it is
 * still the file checked, undo's own temporary names, names of one inode
 * remembered as one. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dupscan.h"
#include "fsutil.h"
#include "undo.h"
#include "testutil.h"

static char *dir;

static void setup(void)
{
	dir = tu_tmpdir();
}

static void teardown(void)
{
	tu_cleanup(dir);
}

static char *at(const char *rel)
{
	static char p[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, rel);
	return p[k];
}

START_TEST(test_contents)
{
	tu_text(dir, "a", "hello\n");
	tu_text(dir, "b", "hello\n");
	tu_text(dir, "c", "hellO\n");
	struct content none = { -1, 0, false }, size6 = { 6, 0, false }, size7 = { 7, 0, false };
	ck_assert(!undo_known(&none));
	ck_assert(undo_known(&size6));
	ck_assert(!undo_holds(&none, at("a")));  /* nothing recorded: nothing proven */
	ck_assert(undo_holds(&size6, at("a")));
	ck_assert(!undo_holds(&size7, at("a")));
	ck_assert(!undo_holds(&size6, at("gone")));
	ck_assert(undo_same_entry(at("a"), at("b")));
	ck_assert(!undo_same_entry(at("a"), at("c")));
	ck_assert_int_eq(symlink("a", at("l1")), 0);
	ck_assert_int_eq(symlink("a", at("l2")), 0);
	ck_assert_int_eq(symlink("b", at("l3")), 0);
	ck_assert(undo_same_entry(at("l1"), at("l2"))); /* symlinks: by their target */
	ck_assert(!undo_same_entry(at("l1"), at("l3")));
}
END_TEST

START_TEST(test_remove_checked)
{
	struct stat st;
	tu_text(dir, "a", "one\n");
	ck_assert_int_eq(lstat(at("a"), &st), 0);
	ck_assert_int_eq(undo_remove_checked(at("a"), &st), 0);
	ck_assert_int_eq(access(at("a"), F_OK), -1);
	/* another file put in its place since the check: put back, never removed */
	tu_text(dir, "b", "two\n");
	ck_assert_int_eq(lstat(at("b"), &st), 0);
	ck_assert_int_eq(rename(at("b"), at("b.old")), 0);
	tu_text(dir, "b", "three, longer\n");
	int rc = undo_remove_checked(at("b"), &st);
	ck_assert_msg(rc != 0, "a changed file was removed");
	ck_assert(undo_holds(&(struct content){ 14, 0, false }, at("b")));
}
END_TEST

static int make_file(const char *tmp, const void *arg)
{
	(void)arg;
	FILE *f = fopen(tmp, "wx");
	if (!f)
		return -errno;
	fclose(f);
	return 0;
}

START_TEST(test_temp_names)
{
	char *tmp = NULL;
	ck_assert_int_eq(undo_make_temp(at("x"), &tmp, make_file, NULL), 0);
	const char *base = strrchr(tmp, '/') + 1;
	ck_assert_msg(strncmp(base, DS_TEMP_PREFIX "undo", DS_TEMP_PREFIX_LEN + 4) == 0, "named %s", base);
	ck_assert_int_eq(access(tmp, F_OK), 0);
	unlink(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_twins)
{
	struct restored_map m = { 0 };
	tu_text(dir, "a", "x\n");
	undo_remember(&m, 7, 42, at("a"));
	const struct restored *r = undo_twin(&m, 7, 42);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->path, at("a"));
	ck_assert_ptr_null(undo_twin(&m, 7, 43));
	/* no longer that file: not a twin (another file renamed over it: made
	 * while the first lived, so never given its inode number again) */
	tu_text(dir, "b", "y\n");
	ck_assert_int_eq(rename(at("b"), at("a")), 0);
	ck_assert_ptr_null(undo_twin(&m, 7, 42));
	undo_forget(&m);
	ck_assert_ptr_null(undo_twin(&m, 7, 42));
	free(m.v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("undosteps");
	TCase *tc = tcase_create("undosteps");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_contents);
	tcase_add_test(tc, test_remove_checked);
	tcase_add_test(tc, test_temp_names);
	tcase_add_test(tc, test_twins);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

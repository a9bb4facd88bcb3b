/* SPDX-License-Identifier: MIT */
/* check_glob: --exclude and --include as the walk asks them (glob.c): a
 * pattern's place in the path, "**", directory patterns, and the walk's
 * keep-or-leave decisions. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>

#include "glob.h"
#include "testutil.h"

START_TEST(test_match)
{
	/* no '/': the last component, wherever it is */
	ck_assert(glob_match("*.jpg", "a/b/x.jpg", false));
	ck_assert(glob_match("*.jpg", "x.jpg", false));
	ck_assert(!glob_match("*.jpg", "a/x.jpeg", false));
	/* with '/': from the argument's top, component by component */
	ck_assert(glob_match("a/*.jpg", "a/x.jpg", false));
	ck_assert(!glob_match("a/*.jpg", "b/a/x.jpg", false));
	ck_assert(!glob_match("a/*.jpg", "a/b/x.jpg", false)); /* '*' stays in its component */
	/* "**" spans any number of components, none included */
	ck_assert(glob_match("a/**/x", "a/x", false));
	ck_assert(glob_match("a/**/x", "a/b/c/x", false));
	ck_assert(!glob_match("a/**/x", "b/c/x", false));
	/* a trailing '/': directories only */
	ck_assert(glob_match("tmp/", "tmp", true));
	ck_assert(glob_match("tmp/", "a/tmp", true));
	ck_assert(!glob_match("tmp/", "tmp", false));
}
END_TEST

START_TEST(test_decisions)
{
	struct glob_list ex = { 0 }, in = { 0 };
	ck_assert_int_eq(glob_add(&ex, ""), -EINVAL);
	ck_assert_int_eq(glob_add(&ex, "cache/"), 0);
	ck_assert_int_eq(glob_add(&ex, "*.tmp"), 0);
	ck_assert(!glob_dir_keeps(&ex, "a/cache"));
	ck_assert(glob_dir_keeps(&ex, "a/cached"));
	ck_assert(!glob_file_keeps(&ex, &in, "a/x.tmp"));
	ck_assert(glob_file_keeps(&ex, &in, "a/x.jpg")); /* no include: everything else stays */
	ck_assert_int_eq(glob_add(&in, "photos/"), 0);
	ck_assert_int_eq(glob_add(&in, "*.raw"), 0);
	ck_assert(glob_file_keeps(&ex, &in, "photos/x.jpg"));  /* under an included directory */
	ck_assert(glob_file_keeps(&ex, &in, "docs/y.raw"));    /* an included file */
	ck_assert(!glob_file_keeps(&ex, &in, "docs/y.txt"));   /* neither */
	ck_assert(!glob_file_keeps(&ex, &in, "photos/x.tmp")); /* an exclude wins */
	glob_free(&ex);
	glob_free(&in);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("glob");
	TCase *tc = tcase_create("glob");
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_decisions);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

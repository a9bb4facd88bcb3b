/* SPDX-License-Identifier: MIT */
/* check_dirsets.c: sets of identical directories (DUPSCAN_OPT_DIRS): whole
 * trees compared by their confirmed file contents, names aside, listed before
 * file sets, and what they cover not listed again. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "testutil.h"
#include "sets/sets.h"

/* The sets as tu_sets() gives them, each directory set marked with a leading '/'. */
static char *sets_marked(const dupscan_scan *s, const char *dir)
{
	char *plain = tu_sets(s, dir);
	size_t n = dupscan_set_count(s), len = strlen(plain) + n + 1;
	char *out = calloc(1, len), *w = out;
	const char *p = plain;
	for (size_t i = 0; i < n; i++) {
		if (dupscan_set_is_dirs(dupscan_get_set(s, i)))
			*w++ = '/';
		size_t part = strcspn(p, "|");
		memcpy(w, p, part + (p[part] == '|'));
		w += part + (p[part] == '|');
		p += part + (p[part] == '|');
	}
	free(plain);
	return out;
}

static void tree(const char *dir, const char *top, const char *tail)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "%s/a", top);
	tu_text(dir, rel, "alpha\n");
	snprintf(rel, sizeof(rel), "%s/deep/b", top);
	tu_file(dir, rel, 9000, 4, -1);
	snprintf(rel, sizeof(rel), "%s/deep/c", top);
	tu_text(dir, rel, tail);
}

START_TEST(test_identical_trees)
{
	char *dir = tu_tmpdir();
	tree(dir, "p", "gamma\n");
	tree(dir, "q", "gamma\n");
	tu_text(dir, "lone", "lone\n");
	dupscan_scan *s = tu_scan(dir, DUPSCAN_OPT_DIRS, 1, 0);
	char *got = sets_marked(s, dir);
	/* the top directories only: their subdirectories and files are covered */
	ck_assert_str_eq(got, "/p/ q/");
	free(got);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_one_byte_deep)
{
	char *dir = tu_tmpdir();
	tree(dir, "p", "gamma\n");
	tree(dir, "q", "gammA\n");
	dupscan_scan *s = tu_scan(dir, DUPSCAN_OPT_DIRS, 1, 0);
	char *got = sets_marked(s, dir);
	/* no directory at any level; the equal files are still a file set */
	ck_assert_str_eq(got, "p/a q/a|p/deep/b q/deep/b");
	free(got);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_copy_outside)
{
	char *dir = tu_tmpdir();
	tree(dir, "p", "gamma\n");
	tree(dir, "q", "gamma\n");
	tu_text(dir, "r/a-again", "alpha\n"); /* a copy of p/a outside the directory sets */
	dupscan_scan *s = tu_scan(dir, DUPSCAN_OPT_DIRS, 1, 0);
	char *got = sets_marked(s, dir);
	ck_assert_str_eq(got, "/p/ q/|p/a q/a r/a-again");
	free(got);
	dupscan_free(s);
	/* without the option, directories are never a set */
	s = tu_scan(dir, 0);
	for (size_t i = 0; i < dupscan_set_count(s); i++)
		ck_assert(!dupscan_set_is_dirs(dupscan_get_set(s, i)));
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dirsets");
	TCase *tc = tcase_create("ds_build_dir_sets");
	tcase_add_test(tc, test_identical_trees);
	tcase_add_test(tc, test_one_byte_deep);
	tcase_add_test(tc, test_copy_outside);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

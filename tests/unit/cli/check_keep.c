/* SPDX-License-Identifier: MIT */
/* check_keep: --keep's rules parsed and applied to a set scanned here: each
 * rule alone, rules as tie-breakers in order, the set's order for what they
 * leave tied, protected files first, and a rule not understood named. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep.h"
#include "testutil.h"

static char *dir;

/* One set of four copies (listed by name: a/x, b/deep/er/x, c/longname, d/y):
 * a/x the oldest, d/y the newest, b/deep/er/x the deepest and with two names. */
static void setup(void)
{
	dir = tu_tmpdir();
	const char *names[] = { "a/x", "b/deep/er/x", "c/longname", "d/y" };
	for (int i = 0; i < 4; i++) {
		tu_file(dir, names[i], 2000, 9, -1);
		char *p = tu_path(dir, names[i]);
		struct timespec t[2] = { { 1000000000 + i * 1000, 0 }, { 1000000000 + i * 1000, 0 } };
		ck_assert_int_eq(utimensat(AT_FDCWD, p, t, 0), 0);
		free(p);
	}
	/* two names of b's inode; the second outside the scanned tree */
	char *b = tu_path(dir, "b/deep/er/x"), *other = tu_path(dir, "../dupscan-keep-link");
	unlink(other);
	ck_assert_int_eq(link(b, other), 0);
	free(b);
	free(other);
}

static void teardown(void)
{
	char *other = tu_path(dir, "../dupscan-keep-link");
	unlink(other);
	free(other);
	tu_cleanup(dir);
}

/* The path below dir of the file the rules in spec keep. */
static char *kept_by(const char *spec, const char *protect)
{
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	if (protect) {
		char *p = tu_path(dir, protect);
		ck_assert_int_eq(dupscan_protect_path(scan, p), 0);
		free(p);
	}
	ck_assert_int_eq(dupscan_run(scan), 0);
	ck_assert_uint_eq(dupscan_set_count(scan), 1);
	const dupscan_set *set = dupscan_get_set(scan, 0);
	ck_assert_uint_eq(dupscan_set_file_count(set), 4);
	struct keep_rules r = { NULL, 0 };
	const char *bad = NULL;
	size_t badlen = 0;
	ck_assert_int_eq(keep_add(&r, spec, &bad, &badlen), 0);
	const char *path = dupscan_file_path(dupscan_set_file(set, keep_index(set, &r)));
	char *rel = strdup(path + strlen(dir) + 1);
	keep_free(&r);
	dupscan_free(scan);
	return rel;
}

#define KEEPS(spec, protect, want)                                 \
	do {                                                           \
		char *got_ = kept_by(spec, protect);                       \
		ck_assert_msg(strcmp(got_, want) == 0, "--keep=%s: kept %s, want %s", spec, got_, want); \
		free(got_);                                                \
	} while (0)

START_TEST(test_each_rule)
{
	KEEPS("oldest", NULL, "a/x");
	KEEPS("newest", NULL, "d/y");
	KEEPS("deepest", NULL, "b/deep/er/x");
	KEEPS("shallowest", NULL, "a/x");
	KEEPS("shortest-path", NULL, "a/x");
	KEEPS("longest-path", NULL, "b/deep/er/x");
	KEEPS("path=c/*", NULL, "c/longname");
	KEEPS("most-links", NULL, "b/deep/er/x");
}
END_TEST

/* Rules in order break ties; what they leave tied goes to the set's order. */
START_TEST(test_tie_breakers)
{
	KEEPS("shallowest,newest", NULL, "d/y");        /* a/x, c/..., d/y tie on depth */
	KEEPS("shallowest", NULL, "a/x");               /* tied: the first listed */
	KEEPS("path=nothing/*,oldest", NULL, "a/x");    /* a rule no file meets decides nothing */
	KEEPS("arg-order", NULL, "a/x");                /* one argument: all tie */
}
END_TEST

/* Protected files first: the rules choose among them. */
START_TEST(test_protected_first)
{
	KEEPS("oldest", "c", "c/longname");
	KEEPS("newest", "b", "b/deep/er/x");
}
END_TEST

START_TEST(test_bad_rules)
{
	struct keep_rules r = { NULL, 0 };
	const char *bad = NULL;
	size_t badlen = 0;
	ck_assert_int_eq(keep_add(&r, "oldest,biggest", &bad, &badlen), -EINVAL);
	ck_assert_uint_eq(badlen, 7);
	ck_assert(strncmp(bad, "biggest", badlen) == 0);
	ck_assert_int_eq(keep_add(&r, "newest,,oldest", &bad, &badlen), -EINVAL);
	ck_assert_uint_eq(badlen, 0);
	ck_assert_int_eq(keep_add(&r, "path=", &bad, &badlen), -EINVAL);
	ck_assert_int_eq(keep_add(&r, "", &bad, &badlen), -EINVAL);
	keep_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keep");
	TCase *tc = tcase_create("keep");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_each_rule);
	tcase_add_test(tc, test_tie_breakers);
	tcase_add_test(tc, test_protected_first);
	tcase_add_test(tc, test_bad_rules);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

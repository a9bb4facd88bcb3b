/* SPDX-License-Identifier: MIT */
/* check_result.c: a group's effects held until its turn: classes reach the
 * index (and so the sets) only at commit, reports and stage events are
 * delivered then, in the order they were made, and clearing forgets them. */
#define _GNU_SOURCE /* S_IFDIR */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "testutil.h"
#include "match/result.h"
#include "sets/sets.h"

struct log {
	char text[512];
};

static void log_append(struct log *l, const char *s)
{
	strncat(l->text, s, sizeof(l->text) - strlen(l->text) - 1);
}

static void on_error(void *user, const char *path, int code)
{
	char line[64];
	snprintf(line, sizeof(line), "err %s %d;", path, code);
	log_append(user, line);
}

static void on_stage(void *user, int stage, const dupscan_file *const *files, size_t n)
{
	char line[64];
	snprintf(line, sizeof(line), "stage %d n=%zu;", stage, n);
	log_append(user, line);
	(void)files;
}

/* Four records of one size in one directory "root": f0..f3. */
static dupscan_scan *four(struct log *l)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	dupscan_set_error_callback(s, on_error, l);
	dupscan_set_stage_callback(s, on_stage, l);
	struct stat st = { .st_mode = S_IFDIR };
	uint32_t d;
	ck_assert_int_eq(ds_add_dir(&s->tree, "root", 4, DS_NONE, 0, &st, &d), 0);
	st.st_mode = S_IFREG;
	st.st_size = 100;
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		st.st_ino = (ino_t)(i + 1);
		ck_assert_int_eq(ds_add_rec(&s->tree, name, 2, d, &st), 0);
	}
	ck_assert_int_eq(ds_index_reserve(&s->tree.index, s->tree.nrecs), 0);
	return s;
}

START_TEST(test_commit_makes_sets)
{
	struct log l = { "" };
	dupscan_scan *s = four(&l);
	struct ds_result r = { 0 };
	struct ds_ctx c = { &s->match, &r, NULL };
	/* f0 f2 one class, f1 f3 another (other full hash) */
	ck_assert_int_eq(ds_result_insert(&c, 0, 0, 7, 70), 0);
	ck_assert_int_eq(ds_result_insert(&c, 2, 0, 7, 70), 0);
	ck_assert_int_eq(ds_result_insert(&c, 1, 1, 7, 71), 0);
	ck_assert_int_eq(ds_result_insert(&c, 3, 1, 7, 71), 0);
	uint32_t pair[2] = { 0, 2 };
	ck_assert_int_eq(ds_result_stage(&c, DUPSCAN_STAGE_FULL, pair, 2), 0);
	ds_fail_path(&c, ds_rec(&s->tree, 3), "root/f3", -5);
	/* nothing is seen before the commit */
	ck_assert_str_eq(l.text, "");
	ck_assert_uint_eq(dupscan_error_count(s), 0);
	uint64_t done = 0;
	ck_assert_int_eq(ds_result_commit(&s->match, &r, &done, 4), 0);
	char want[64];
	snprintf(want, sizeof(want), "err root/f3 -5;stage %d n=2;", DUPSCAN_STAGE_FULL);
	ck_assert_str_eq(l.text, want);
	ck_assert_uint_eq(dupscan_error_count(s), 1);
	ck_assert_int_eq(ds_build_sets(&s->results), 0);
	/* f3 failed: its class keeps f1 alone, which is no set */
	char *sets = tu_sets(s, "");
	ck_assert_str_eq(sets, "root/f0 root/f2");
	free(sets);
	ds_result_free(&r);
	dupscan_free(s);
}
END_TEST

START_TEST(test_clear_forgets)
{
	struct log l = { "" };
	dupscan_scan *s = four(&l);
	struct ds_result r = { 0 };
	struct ds_ctx c = { &s->match, &r, NULL };
	ds_fail_path(&c, ds_rec(&s->tree, 1), "root/f1", -5);
	ck_assert_int_eq(ds_result_insert(&c, 0, 0, 7, 70), 0);
	ck_assert_int_eq(ds_result_insert(&c, 2, 0, 7, 70), 0);
	ds_result_clear(&r);
	uint64_t done = 0;
	ck_assert_int_eq(ds_result_commit(&s->match, &r, &done, 4), 0);
	ck_assert_str_eq(l.text, "");
	ck_assert_int_eq(ds_build_sets(&s->results), 0);
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	ds_result_free(&r);
	dupscan_free(s);
}
END_TEST

/* Errors moved from one result to another keep their order, after dst's own. */
START_TEST(test_take_errors)
{
	struct log l = { "" };
	dupscan_scan *s = four(&l);
	struct ds_result a = { 0 }, b = { 0 };
	struct ds_ctx ca = { &s->match, &a, NULL }, cb = { &s->match, &b, NULL };
	ds_fail_path(&ca, ds_rec(&s->tree, 0), "a0", -1);
	ds_fail_path(&cb, ds_rec(&s->tree, 1), "b1", -2);
	ds_fail_path(&cb, ds_rec(&s->tree, 2), "b2", -3);
	ck_assert_int_eq(ds_result_take_errors(&a, &b), 0);
	uint64_t done = 0;
	ck_assert_int_eq(ds_result_commit(&s->match, &a, &done, 4), 0);
	ck_assert_str_eq(l.text, "err a0 -1;err b1 -2;err b2 -3;");
	ds_result_free(&a);
	ds_result_free(&b);
	dupscan_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("ds_result_commit");
	tcase_add_test(tc, test_commit_makes_sets);
	tcase_add_test(tc, test_clear_forgets);
	tcase_add_test(tc, test_take_errors);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* check_reportread: a -j report read back for --from-report (fromreport.c,
 * jsonread.c): the sets and each file's identity as written, a set left with
 * one file kept whole, and what is refused with the place named. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fromreport.h"
#include "testutil.h"

static char dir[64], file[96];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_reportread.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/r.json", dir);
}

static void teardown(void)
{
	unlink(file);
	rmdir(dir);
}

#define FILE_(p, i) "{ \"filePath\": \"" p "\", \"device\": 7, \"inode\": " #i ", \"mtimeNs\": 5, \"ctimeNs\": 6 }"
#define SET(size, files) "{ \"fileSize\": " #size ", \"fileList\": [" files "] }"

/* The report text written and read. @return report_load()'s status, msg filled. */
static int load(const char *text, struct report *r, char *msg)
{
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	msg[0] = '\0';
	return report_load(file, r, msg, 512);
}

START_TEST(test_sets_read)
{
	struct report r;
	char msg[512];
	ck_assert_int_eq(load("{ \"matchSets\": [" SET(4, FILE_("a/x", 11) "," FILE_("a/y", 12)) ","
			      SET(9, FILE_("b\\u00e9", 13)) "," SET(4, FILE_("c/1", 14) "," FILE_("c/2", 15)) "] }", &r, msg), 0);
	ck_assert_uint_eq(r.nsets, 3);
	ck_assert_uint_eq(r.nfiles, 5);
	ck_assert_str_eq(r.files[0].path, "a/x");
	ck_assert_uint_eq(r.files[1].ino, 12);
	ck_assert_uint_eq(r.files[1].dev, 7);
	ck_assert_uint_eq(r.files[1].size, 4);
	ck_assert_int_eq(r.files[1].mtime_ns, 5);
	ck_assert_int_eq(r.files[1].ctime_ns, 6);
	ck_assert_str_eq(r.files[2].path, "b\xc3\xa9"); /* escapes as written */
	ck_assert(r.files[2].alone);                    /* a set of one: kept as it is */
	ck_assert_uint_eq(r.nlone, 1);
	ck_assert_uint_eq(r.lone[0], 1);
	ck_assert_uint_eq(r.files[4].set, 2);
	report_free(&r);
}
END_TEST

START_TEST(test_refused)
{
	static const char *const bad[] = {
		"not json",
		"{ \"matchSets\": [" SET(4, FILE_("a/x", 11) "," FILE_("a/x", 12)) "] }",             /* a path twice */
		"{ \"matchSets\": [" SET(4, "{ \"filePath\": \"a/x\" }," FILE_("a/y", 12)) "] }",     /* no identity */
		"{ \"matchSets\": [" SET(4, FILE_("a/x", 11) "," FILE_("a/y", 12)) "]",               /* cut short */
		"{ \"matchSets\": [" SET(-4, FILE_("a/x", 11) "," FILE_("a/y", 12)) "] }",            /* a negative size */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct report r;
		char msg[512];
		ck_assert_msg(load(bad[i], &r, msg) == -1, "accepted: %s", bad[i]);
		ck_assert_msg(msg[0] != '\0', "no reason given for: %s", bad[i]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reportread");
	TCase *tc = tcase_create("reportread");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sets_read);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

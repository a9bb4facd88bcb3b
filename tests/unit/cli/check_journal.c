/* SPDX-License-Identifier: MIT */
/* check_journal: the program's journal and --undo, on trees made here: each
 * kind of line written before its change is undone to what was there, names
 * of one inode come back as one inode, a run cut short at any step is undone,
 * and what is not a journal is refused whole. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
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

static struct stat lstat_of(const char *rel)
{
	char *p = tu_path(dir, rel);
	struct stat st;
	ck_assert_msg(lstat(p, &st) == 0, "%s: %s", rel, strerror(errno));
	free(p);
	return st;
}

static bool exists(const char *rel)
{
	char *p = tu_path(dir, rel);
	struct stat st;
	bool yes = lstat(p, &st) == 0;
	free(p);
	return yes;
}

static struct journal *open_journal(void)
{
	char *jp = tu_path(dir, "journal");
	struct journal *j = journal_open(jp);
	ck_assert_ptr_nonnull(j);
	free(jp);
	return j;
}

/* journal_undo(path) with its report ("restored ...") kept off the TAP stream. */
static int quiet_undo(const char *path)
{
	fflush(stdout);
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	ck_assert(saved >= 0 && null >= 0);
	dup2(null, STDOUT_FILENO);
	close(null);
	int rc = journal_undo(path);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return rc;
}

static int undo(void)
{
	char *jp = tu_path(dir, "journal");
	int rc = quiet_undo(jp);
	free(jp);
	return rc;
}

/* A move to another filesystem killed after the name was set aside: the inode
 * takes its name back and the copy at the destination goes. */
START_TEST(test_move_set_aside)
{
	tu_file(dir, "t/a", 5000, 3, -1);
	tu_mkdir(dir, "mv");
	struct stat before = lstat_of("t/a");
	char *from = tu_path(dir, "t/a"), *to = tu_path(dir, "mv/a"), *aside = tu_path(dir, "t/.dupscan-tmp-abc123");
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "move", .kept = from, .dup = from, .dest = to, .entry = before };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(dupscan_copy_file(from, to), 0);
	ck_assert_int_eq(rename(from, aside), 0);
	ck_assert_int_eq(undo(), 0);
	struct stat now = lstat_of("t/a");
	ck_assert(now.st_ino == before.st_ino && now.st_dev == before.st_dev);
	ck_assert(!exists("t/.dupscan-tmp-abc123"));
	ck_assert(!exists("mv/a"));
	free(from);
	free(to);
	free(aside);
}
END_TEST

/* The copy under the destination holds other bytes than the inode set aside
 * (written to since): the inode takes its name back, the copy stays. */
START_TEST(test_move_set_aside_copy_changed)
{
	tu_file(dir, "t/a", 5000, 3, -1);
	tu_mkdir(dir, "mv");
	struct stat before = lstat_of("t/a");
	char *from = tu_path(dir, "t/a"), *to = tu_path(dir, "mv/a"), *aside = tu_path(dir, "t/.dupscan-tmp-zzz999");
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "move", .kept = from, .dup = from, .dest = to, .entry = before };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	tu_file(dir, "mv/a", 5000, 4, -1);
	ck_assert_int_eq(rename(from, aside), 0);
	ck_assert_int_eq(undo(), 0);
	ck_assert(lstat_of("t/a").st_ino == before.st_ino);
	ck_assert(exists("mv/a"));
	free(from);
	free(to);
	free(aside);
}
END_TEST

/* A name set aside whose inode number is the one recorded, but not its
 * content (the number reused since: a copy of an undo cut short, say): it is
 * not taken for the file; the file comes back from its moved copy, checked. */
START_TEST(test_move_set_aside_not_its_content)
{
	tu_file(dir, "t/a", 5000, 3, -1);
	tu_mkdir(dir, "mv");
	struct stat before = lstat_of("t/a");
	char *from = tu_path(dir, "t/a"), *to = tu_path(dir, "mv/a"), *aside = tu_path(dir, "t/.dupscan-tmp-reused");
	uint64_t hash;
	ck_assert_int_eq(dupscan_hash_file(from, NULL, &hash), 0);
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "move", .kept = from, .dup = from, .dest = to, .entry = before,
				    .hash = &hash, .size = 5000 };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(dupscan_copy_file(from, to), 0);
	ck_assert_int_eq(rename(from, aside), 0);
	tu_file(dir, "t/.dupscan-tmp-reused", 5000, 9, -1); /* same inode, other bytes */
	ck_assert_int_eq(undo(), 0);
	uint64_t got;
	ck_assert_int_eq(dupscan_hash_file(from, NULL, &got), 0);
	ck_assert(got == hash);
	ck_assert(exists("t/.dupscan-tmp-reused"));
	ck_assert(!exists("mv/a"));
	free(from);
	free(to);
	free(aside);
}
END_TEST

/* A duplicate with a second name, replaced by a hard link of the kept file:
 * it comes back as a name of its former inode (the other name), not a copy. */
START_TEST(test_hardlink_sibling)
{
	tu_file(dir, "k", 3000, 5, -1);
	tu_file(dir, "d", 3000, 5, -1);
	char *k = tu_path(dir, "k"), *d = tu_path(dir, "d"), *d2 = tu_path(dir, "d2");
	ck_assert_int_eq(link(d, d2), 0);
	struct stat ds = lstat_of("d"), ks = lstat_of("k");
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "hardlink", .kept = k, .dup = d, .entry = ds, .kept_st = ks };
	c.siblings[c.nsiblings++] = d2;
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(unlink(d), 0);
	ck_assert_int_eq(link(k, d), 0);
	ck_assert_int_eq(undo(), 0);
	struct stat now = lstat_of("d");
	ck_assert(now.st_ino == ds.st_ino);
	ck_assert_uint_eq(lstat_of("k").st_nlink, 1);
	free(k);
	free(d);
	free(d2);
}
END_TEST

/* A duplicate replaced by a symlink (-l): undone as its own copy of the kept
 * file, checked against the recorded hash, with the duplicate's mode and mtime. */
START_TEST(test_symlink_copy)
{
	tu_file(dir, "k", 3000, 6, -1);
	tu_file(dir, "d", 3000, 6, -1);
	char *k = tu_path(dir, "k"), *d = tu_path(dir, "d");
	ck_assert_int_eq(chmod(d, 0640), 0);
	struct stat ds = lstat_of("d"), ks = lstat_of("k");
	uint64_t size, hash;
	ck_assert_int_eq(dupscan_hash_file(d, &size, &hash), 0);
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "symlink", .kept = k, .dup = d, .entry = ds, .kept_st = ks, .hash = &hash };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(unlink(d), 0);
	ck_assert_int_eq(symlink("k", d), 0);
	ck_assert_int_eq(undo(), 0);
	struct stat now = lstat_of("d");
	ck_assert(S_ISREG(now.st_mode));
	ck_assert_uint_eq(now.st_mode & 07777, 0640);
	ck_assert(now.st_mtim.tv_sec == ds.st_mtim.tv_sec && now.st_mtim.tv_nsec == ds.st_mtim.tv_nsec);
	uint64_t h2;
	ck_assert_int_eq(dupscan_hash_file(d, &size, &h2), 0);
	ck_assert(h2 == hash);
	free(k);
	free(d);
}
END_TEST

/* The kept file changed since: its bytes are not the duplicate's, so no copy
 * is made from it and the undo says it could not (status 1). */
START_TEST(test_kept_changed_refused)
{
	tu_file(dir, "k", 3000, 7, -1);
	tu_file(dir, "d", 3000, 7, -1);
	char *k = tu_path(dir, "k"), *d = tu_path(dir, "d");
	struct stat ds = lstat_of("d"), ks = lstat_of("k");
	uint64_t size, hash;
	ck_assert_int_eq(dupscan_hash_file(d, &size, &hash), 0);
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "hardlink", .kept = k, .dup = d, .entry = ds, .kept_st = ks, .hash = &hash };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(unlink(d), 0);
	ck_assert_int_eq(link(k, d), 0);
	int fd = open(k, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "other", 5, 100), 5);
	close(fd);
	ck_assert_int_eq(undo(), 1);
	ck_assert_uint_eq(lstat_of("d").st_ino, lstat_of("k").st_ino); /* left as it was */
	free(k);
	free(d);
}
END_TEST

/* A last line cut short names a change never made: ignored, the rest undone. */
START_TEST(test_torn_last_line)
{
	tu_file(dir, "t/a", 100, 8, -1);
	tu_mkdir(dir, "mv");
	char *from = tu_path(dir, "t/a"), *to = tu_path(dir, "mv/a");
	struct stat st = lstat_of("t/a");
	struct journal *j = open_journal();
	struct journal_change c = { .kind = "move", .kept = from, .dup = from, .dest = to, .entry = st };
	ck_assert_int_eq(journal_record(j, &c), 0);
	ck_assert_int_eq(journal_close(j), 0);
	ck_assert_int_eq(rename(from, to), 0);
	char *jp = tu_path(dir, "journal");
	FILE *f = fopen(jp, "a");
	ck_assert_ptr_nonnull(f);
	fputs("move\t/half/a line", f);
	fclose(f);
	ck_assert_int_eq(quiet_undo(jp), 0);
	ck_assert(exists("t/a") && !exists("mv/a"));
	free(jp);
	free(from);
	free(to);
}
END_TEST

/* Not a journal, or a malformed line before the last: refused whole (2). */
START_TEST(test_refused_whole)
{
	tu_text(dir, "journal", "# something else\nmove\t/x\t/y\n");
	ck_assert_int_eq(undo(), 2);
	tu_text(dir, "journal", "# dupscan journal 1\nmove\t/x\\q\t/y\n\n");
	ck_assert_int_eq(undo(), 2);
	char *missing = tu_path(dir, "no-such-journal");
	ck_assert_int_eq(quiet_undo(missing), 2);
	free(missing);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("undo");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_move_set_aside);
	tcase_add_test(tc, test_move_set_aside_copy_changed);
	tcase_add_test(tc, test_move_set_aside_not_its_content);
	tcase_add_test(tc, test_hardlink_sibling);
	tcase_add_test(tc, test_symlink_copy);
	tcase_add_test(tc, test_kept_changed_refused);
	tcase_add_test(tc, test_torn_last_line);
	tcase_add_test(tc, test_refused_whole);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

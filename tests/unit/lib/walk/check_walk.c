/* SPDX-License-Identifier: MIT */
/* check_walk.c: what the walk reaches, and what it must never open or visit twice. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"
#include "read/read.h"
#include "walk/walk.h"

struct errs {
	int count;
	int code;
	char path[4096];
};

static void on_error(void *user, const char *path, int code)
{
	struct errs *e = user;
	e->count++;
	e->code = code;
	snprintf(e->path, sizeof(e->path), "%s", path);
}

/* A scan whose storage lookups read mountinfo (NULL: the system's), with
 * protect protected (or NULL), of paths, each recursed unless recurse[i]
 * says not (recurse NULL: all). */
static dupscan_scan *scan_on(struct errs *e, int follow, const char *mountinfo, const char *protect,
			     const char *const *paths, const int *recurse, int n)
{
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	if (mountinfo)
		scan->core.mountinfo = mountinfo;
	dupscan_set_error_callback(scan, on_error, e);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_FOLLOW_SYMLINKS, follow), 0);
	if (protect)
		ck_assert_int_eq(dupscan_protect_path(scan, protect), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(dupscan_add_path(scan, paths[i], recurse ? recurse[i] : 1), i);
	ck_assert_int_eq(dupscan_run(scan), 0);
	return scan;
}

static dupscan_scan *scan_paths(struct errs *e, int follow, const char *const *paths, const int *recurse, int n)
{
	return scan_on(e, follow, NULL, NULL, paths, recurse, n);
}

START_TEST(test_recursion_per_path)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a/x", "same\n");
	tu_text(dir, "a/sub/x", "same\n");
	tu_text(dir, "b/x", "same\n");
	tu_text(dir, "b/sub/x", "same\n");
	char *a = tu_path(dir, "a"), *b = tu_path(dir, "b");
	const char *paths[] = { a, b };
	const int rec[] = { 0, 1 };
	struct errs e = { 0 };
	dupscan_scan *scan = scan_paths(&e, 0, paths, rec, 2);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "a/x b/sub/x b/x");
	ck_assert_int_eq(e.count, 0);
	free(sets);
	dupscan_free(scan);
	free(a);
	free(b);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_special_files_never_opened)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "x", "data");
	tu_text(dir, "y", "data");
	char *fifo = tu_path(dir, "fifo"), *sock = tu_path(dir, "sock");
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	ck_assert_int_eq(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* a FIFO opened for reading would block forever: the test's timeout catches that */
	const char *paths[] = { dir, fifo };
	const int rec[] = { 1, 0 };
	struct errs e = { 0 };
	dupscan_scan *scan = scan_paths(&e, 1, paths, rec, 2);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "x y");
	/* given as an argument, the FIFO is named as not a regular file */
	ck_assert_int_eq(e.count, 1);
	ck_assert_int_eq(e.code, DUPSCAN_E_NOTREG);
	ck_assert_str_eq(e.path, fifo);
	ck_assert_uint_eq(scan->tree.nrecs, 2);
	free(sets);
	dupscan_free(scan);
	close(sfd);
	free(fifo);
	free(sock);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_symlink_loop_and_twice)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "t/a", "loop\n");
	tu_text(dir, "t/sub/b", "loop\n");
	char *loop = tu_path(dir, "t/sub/up");
	ck_assert_int_eq(symlink("..", loop), 0);
	char *self = tu_path(dir, "t/self");
	ck_assert_int_eq(symlink("self", self), 0);
	char *t = tu_path(dir, "t"), *sub = tu_path(dir, "t/sub");
	/* the same directory twice, and a directory nested in another argument */
	const char *paths[] = { t, t, sub };
	const int rec[] = { 1, 1, 1 };
	struct errs e = { 0 };
	dupscan_scan *scan = scan_paths(&e, 1, paths, rec, 3);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "t/a t/sub/b");
	ck_assert_uint_eq(scan->tree.nrecs, 2);
	ck_assert_int_eq(e.count, 0);
	free(sets);
	dupscan_free(scan);
	free(loop);
	free(self);
	free(t);
	free(sub);
	tu_cleanup(dir);
}
END_TEST


/* How many records are flagged protected. */
static uint32_t protected_count(const dupscan_scan *scan)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < scan->tree.nrecs; i++)
		n += (ds_rec(&scan->tree, i)->flags & DS_F_PROTECTED) != 0;
	return n;
}

/* Where the filesystem does not keep inode numbers (its mount says sshfs),
 * "already seen" and --protect go by the real path: the same directory
 * given twice, a directory inside another argument (either order), a
 * symlink loop and a symlink to an argument are each walked once, as where
 * numbers are kept; a protected subdirectory protects its files only. */
START_TEST(test_numbers_not_kept)
{
	char *dir = tu_tmpdir_shm();
	tu_text(dir, "t/a", "loop\n");
	tu_text(dir, "t/sub/b", "loop\n");
	tu_text(dir, "t/sub/deeper/c", "other\n");
	char *up = tu_path(dir, "t/sub/up"), *side = tu_path(dir, "t/side");
	ck_assert_int_eq(symlink("..", up), 0);
	ck_assert_int_eq(symlink("sub/deeper", side), 0);
	char *t = tu_path(dir, "t"), *sub = tu_path(dir, "t/sub"), *mi = tu_path(dir, "mountinfo");
	struct stat st;
	ck_assert_int_eq(stat(t, &st), 0);
	FILE *f = fopen(mi, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "36 1 %u:%u / %s rw - fuse.sshfs nas:/t rw\n", major(st.st_dev), minor(st.st_dev), dir);
	fclose(f);
	/* (on a filesystem with a device of its own the mount cannot be
	 * feigned: the system's answer, numbers kept, is checked the same) */
	for (int fake = 0; fake < 2; fake++) {
		const char *mountinfo = fake ? mi : NULL;
		const char *a1[] = { t, t, sub }, *a2[] = { sub, t };
		for (int follow = 0; follow < 2; follow++) {
			struct errs e = { 0 };
			dupscan_scan *scan = scan_on(&e, follow, mountinfo, NULL, a1, NULL, 3);
			ck_assert_uint_eq(scan->tree.nrecs, 3);
			ck_assert_int_eq(e.count, 0);
			if (fake && major(st.st_dev) == 0)
				ck_assert(!ds_inodes_trusted(&scan->tree, (uint64_t)st.st_dev));
			dupscan_free(scan);
			scan = scan_on(&e, follow, mountinfo, NULL, a2, NULL, 2);
			ck_assert_uint_eq(scan->tree.nrecs, 3);
			dupscan_free(scan);
		}
		struct errs e = { 0 };
		dupscan_scan *scan = scan_on(&e, 0, mountinfo, sub, a1, NULL, 1);
		ck_assert_uint_eq(protected_count(scan), 2); /* t/sub/b, t/sub/deeper/c */
		dupscan_free(scan);
	}
	free(up);
	free(side);
	free(t);
	free(sub);
	free(mi);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_symlinks_not_followed_by_default)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "real/a", "content\n");
	tu_text(dir, "b", "content\n");
	char *l1 = tu_path(dir, "linkdir"), *l2 = tu_path(dir, "linkfile");
	ck_assert_int_eq(symlink("real", l1), 0);
	ck_assert_int_eq(symlink("b", l2), 0);
	dupscan_scan *scan = tu_scan(dir, 0);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "b real/a");
	free(sets);
	dupscan_free(scan);
	/* followed: linkdir's contents are the same directory (scanned once),
	 * and linkfile is another path to b's inode */
	scan = tu_scan(dir, DUPSCAN_OPT_FOLLOW_SYMLINKS, 1, DUPSCAN_OPT_HARD_LINKS, 1, 0);
	sets = tu_sets(scan, dir);
	ck_assert_msg(strcmp(sets, "b linkfile real/a") == 0 || strcmp(sets, "b linkdir/a linkfile") == 0,
		      "got %s", sets);
	free(sets);
	dupscan_free(scan);
	free(l1);
	free(l2);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_hidden)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "v", "h\n");
	tu_text(dir, ".h", "h\n");
	tu_text(dir, ".d/w", "h\n");
	dupscan_scan *scan = tu_scan(dir, 0);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, ".d/w .h v");
	free(sets);
	dupscan_free(scan);
	tu_text(dir, "w", "h\n");
	scan = tu_scan(dir, DUPSCAN_OPT_NO_HIDDEN, 1, 0);
	sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "v w");
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* DUPSCAN_OPT_MAX_DEPTH: directories more than N levels below the argument
 * are not entered; -1 is no limit; other values are refused */
START_TEST(test_max_depth)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "f", "d\n");
	tu_text(dir, "a/f", "d\n");
	tu_text(dir, "a/b/f", "d\n");
	tu_text(dir, "a/b/c/f", "d\n");
	static const char *const want[] = { "", "a/f f", "a/b/f a/f f", "a/b/c/f a/b/f a/f f" };
	for (int n = -1; n <= 3; n++) {
		dupscan_scan *scan = tu_scan(dir, DUPSCAN_OPT_MAX_DEPTH, n, 0);
		char *sets = tu_sets(scan, dir);
		ck_assert_str_eq(sets, want[n < 0 ? 3 : n]);
		free(sets);
		dupscan_free(scan);
	}
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_MAX_DEPTH, -2), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_MAX_DEPTH, (int64_t)UINT32_MAX), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_MAX_DEPTH, 7), 0);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_deep_and_wide)
{
	char *dir = tu_tmpdir_shm();
	char rel[8192] = "";
	tu_text(dir, "top", "deep twin\n");
	for (int i = 0; i < 300; i++)
		strcat(rel, i ? "/d" : "d");
	strcat(rel, "/bottom");
	tu_text(dir, rel, "deep twin\n");
	char name[64];
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "wide/f%05d", i);
		char text[32];
		snprintf(text, sizeof(text), "%d\n", i % 19999); /* f00000 and f19999 match */
		tu_text(dir, name, text);
	}
	dupscan_scan *scan = tu_scan(dir, 0);
	char *sets = tu_sets(scan, dir);
	char want[8192];
	snprintf(want, sizeof(want), "%s top|wide/f00000 wide/f19999", rel);
	ck_assert_str_eq(sets, want);
	ck_assert_uint_eq(scan->tree.nrecs, 20002);
	free(sets);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_missing_argument_others_scanned)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "1\n");
	tu_text(dir, "b", "1\n");
	char *missing = tu_path(dir, "no-such-dir");
	const char *paths[] = { missing, dir };
	const int rec[] = { 1, 1 };
	struct errs e = { 0 };
	dupscan_scan *scan = scan_paths(&e, 0, paths, rec, 2);
	ck_assert_int_eq(e.count, 1);
	ck_assert_int_eq(e.code, -ENOENT);
	ck_assert_str_eq(e.path, missing);
	char *sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "a b");
	free(sets);
	dupscan_free(scan);
	free(missing);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_unreadable_dir_and_file)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "ok1", "pair\n");
	tu_text(dir, "ok2", "pair\n");
	tu_text(dir, "locked/x", "pair\n");
	tu_text(dir, "noread", "pair\n");
	char *locked = tu_path(dir, "locked"), *noread = tu_path(dir, "noread");
	ck_assert_int_eq(chmod(noread, 0), 0);
	ck_assert_int_eq(chmod(locked, 0), 0);
	static const char *const tree[] = { "ok1", "ok2", "locked", "locked/x", "noread", NULL };
	tu_drop_root(dir, tree);
	struct errs e = { 0 };
	const char *paths[] = { dir };
	const int rec[] = { 1 };
	dupscan_scan *scan = scan_paths(&e, 0, paths, rec, 1);
	char *sets = tu_sets(scan, dir);
	/* the unreadable third file never hides the readable pair */
	ck_assert_str_eq(sets, "ok1 ok2");
	ck_assert_int_eq(e.count, 2);
	ck_assert_int_eq(e.code == -EACCES, 1);
	ck_assert_uint_eq(dupscan_error_count(scan), 2);
	free(sets);
	dupscan_free(scan);
	ck_assert_int_eq(chmod(locked, 0755), 0);
	free(locked);
	free(noread);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_path_spelling_kept)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a/x", "s\n");
	tu_text(dir, "a/y", "s\n");
	char *slash = malloc(strlen(dir) + 8);
	sprintf(slash, "%s/a/", dir);
	const char *paths[] = { slash };
	const int rec[] = { 1 };
	struct errs e = { 0 };
	dupscan_scan *scan = scan_paths(&e, 0, paths, rec, 1);
	char want[8192];
	snprintf(want, sizeof(want), "%s/a/x", dir);
	ck_assert_str_eq(dupscan_file_path(dupscan_set_file(dupscan_get_set(scan, 0), 0)), want);
	dupscan_free(scan);
	sprintf(slash, "%s/a//", dir);
	scan = scan_paths(&e, 0, paths, rec, 1);
	snprintf(want, sizeof(want), "%s/a//x", dir);
	ck_assert_str_eq(dupscan_file_path(dupscan_set_file(dupscan_get_set(scan, 0), 0)), want);
	dupscan_free(scan);
	free(slash);
	tu_cleanup(dir);
}
END_TEST

/* hdd mode on a tree whose metadata is in memory (just written): the walk
 * hands directories to the helpers as in ssd mode, and finds what one thread
 * finds */
START_TEST(test_hdd_in_memory_every_thread)
{
	char *dir = tu_tmpdir_shm();
	char name[64], text[32];
	/* directories larger than a block (ext4: about 40 bytes an entry of
	 * these names, tmpfs 20), so they may go ahead: three of four each, the
	 * walk in memory once it has stat()ed a first one */
	for (int d = 0; d < 12; d++) {
		for (int i = 0; i < 220; i++) {
			snprintf(name, sizeof(name), "t%d/d%02d/a-rather-long-file-name-%03d.txt", d / 4, d, i);
			snprintf(text, sizeof(text), "%d\n", (d % 3) * 1000 + i); /* d00, d03, ... alike */
			tu_text(dir, name, text);
		}
	}
	char *got[2];
	uint32_t ahead[2], nrecs[2];
	for (int t = 0; t < 2; t++) {
		dupscan_scan *scan = NULL;
		ck_assert_int_eq(dupscan_create(&scan), 0);
		ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
		ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_THREADS, t ? 4 : 1), 0);
		/* under a sanitizer or valgrind, on a busy machine, a cached stat
		 * may take longer than the walk's bound: the decision is tested
		 * here, the bound below */
		scan->reading.memory_stat_ns = INT64_MAX / 2;
		ck_assert_int_eq(dupscan_add_path(scan, dir, 1), 0);
		ck_assert_int_eq(dupscan_run(scan), 0);
		got[t] = tu_sets(scan, dir);
		ahead[t] = scan->reading.dirs_ahead;
		nrecs[t] = scan->tree.nrecs;
		dupscan_free(scan);
	}
	ck_assert_str_eq(got[1], got[0]);
	ck_assert_uint_eq(nrecs[0], 12 * 220);
	ck_assert_uint_eq(nrecs[1], 12 * 220);
	ck_assert_uint_eq(ahead[0], 0);
	if (DUPSCAN_THREADS)
		ck_assert_uint_gt(ahead[1], 0);
	/* 660 sets (a name's number and d % 3) of 4 files */
	size_t bars = 0, spaces = 0;
	for (const char *c = got[0]; *c; c++) {
		bars += *c == '|';
		spaces += *c == ' ';
	}
	ck_assert_uint_eq(bars, 659);
	ck_assert_uint_eq(spaces, 660 * 3);
	free(got[0]);
	free(got[1]);
	tu_cleanup(dir);
}
END_TEST

/* What a batch of stat calls says of where the metadata was. */
START_TEST(test_stats_in_memory)
{
	const int64_t limit = DS_MEMORY_STAT_NS;
	ck_assert(ds_stats_in_memory(1500000, 0, 1000, limit));      /* 1.5 us a call: cached */
	ck_assert(!ds_stats_in_memory(1500000, 8, 1000, limit));     /* fast, but it read blocks */
	ck_assert(!ds_stats_in_memory(50000000, 0, 1000, limit));    /* 50 us a call: a slow mount */
	ck_assert(ds_stats_in_memory(10000000, 0, 1000, limit));     /* at the bound */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("walk");
	TCase *tc = tcase_create("ds_walk");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_recursion_per_path);
	tcase_add_test(tc, test_special_files_never_opened);
	tcase_add_test(tc, test_symlink_loop_and_twice);
	tcase_add_test(tc, test_numbers_not_kept);
	tcase_add_test(tc, test_symlinks_not_followed_by_default);
	tcase_add_test(tc, test_hidden);
	tcase_add_test(tc, test_max_depth);
	tcase_add_test(tc, test_deep_and_wide);
	tcase_add_test(tc, test_missing_argument_others_scanned);
	tcase_add_test(tc, test_unreadable_dir_and_file);
	tcase_add_test(tc, test_path_spelling_kept);
	tcase_add_test(tc, test_hdd_in_memory_every_thread);
	tcase_add_test(tc, test_stats_in_memory);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

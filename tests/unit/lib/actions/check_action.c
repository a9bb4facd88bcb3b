/* SPDX-License-Identifier: MIT */
/* check_action.c: the action primitives never lose data: re-checks, atomic
 * replacement, refusals, and cancellation keeping whole sets only. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"

static char *slurp(const char *dir, const char *rel)
{
	char *p = tu_path(dir, rel);
	FILE *f = fopen(p, "rb");
	free(p);
	if (!f)
		return NULL;
	char *buf = calloc(1, 4096);
	size_t n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void check_content(const char *dir, const char *rel, const char *want)
{
	char *got = slurp(dir, rel);
	ck_assert_msg(got != NULL, "%s is gone", rel);
	ck_assert_str_eq(got, want);
	free(got);
}

static struct stat lstat_rel(const char *dir, const char *rel)
{
	struct stat st;
	char *p = tu_path(dir, rel);
	ck_assert_int_eq(lstat(p, &st), 0);
	free(p);
	return st;
}

static int count_temps(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strncmp(e->d_name, ".dupscan-tmp-", 13) == 0;
	closedir(d);
	return n;
}

/* a scanned pair "a" (kept) and "b" (duplicate) in dir */
static dupscan_scan *pair(const char *dir, const dupscan_file **keep, const dupscan_file **dup)
{
	tu_text(dir, "a", "pair content\n");
	tu_text(dir, "b", "pair content\n");
	tu_text(dir, "c", "other\n");
	dupscan_scan *scan = tu_scan(dir, 0);
	ck_assert_uint_eq(dupscan_set_count(scan), 1);
	*keep = dupscan_set_file(dupscan_get_set(scan, 0), 0);
	*dup = dupscan_set_file(dupscan_get_set(scan, 0), 1);
	ck_assert_ptr_nonnull(strstr(dupscan_file_path(*keep), "/a"));
	return scan;
}

START_TEST(test_hard_link)
{
	char *dir = tu_tmpdir();
	const dupscan_file *keep, *dup;
	dupscan_scan *scan = pair(dir, &keep, &dup);
	ck_assert_int_eq(dupscan_check_unchanged(dup), 0);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, DUPSCAN_ACT_DRY_RUN), 0);
	ck_assert_uint_ne(lstat_rel(dir, "a").st_ino, lstat_rel(dir, "b").st_ino);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), 0);
	ck_assert_uint_eq(lstat_rel(dir, "a").st_ino, lstat_rel(dir, "b").st_ino);
	check_content(dir, "b", "pair content\n");
	ck_assert_int_eq(count_temps(dir), 0);
	/* now b is another inode than scanned: a second attempt is refused */
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_CHANGED);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, DUPSCAN_ACT_NO_CHANGE_CHECK),
			 DUPSCAN_E_ALREADY);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_soft_link)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "deep/er/a", "soft\n");
	tu_text(dir, "other/b", "soft\n");
	dupscan_scan *scan = tu_scan(dir, 0);
	const dupscan_set *set = dupscan_get_set(scan, 0);
	ck_assert_int_eq(dupscan_replace_with_link(dupscan_set_file(set, 0), dupscan_set_file(set, 1),
						   DUPSCAN_LINK_SOFT, 0), 0);
	char *b = tu_path(dir, "other/b"), target[256];
	ssize_t n = readlink(b, target, sizeof(target) - 1);
	ck_assert_int_gt(n, 0);
	target[n] = '\0';
	ck_assert_str_eq(target, "../deep/er/a");
	check_content(dir, "other/b", "soft\n");
	free(b);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_changed_files_refused)
{
	for (int what = 0; what < 4; what++) {
		char *dir = tu_tmpdir();
		const dupscan_file *keep, *dup;
		dupscan_scan *scan = pair(dir, &keep, &dup);
		char *a = tu_path(dir, "a"), *b = tu_path(dir, "b"), *c = tu_path(dir, "c");
		const char *want_b = "pair content\n";
		switch (what) {
		case 0: tu_text(dir, "a", "kept file rewritten\n"); break;       /* kept file modified */
		case 1: ck_assert_int_eq(rename(c, b), 0); want_b = "other\n"; break; /* dup replaced */
		case 2: ck_assert_int_eq(unlink(a), 0); break;                    /* kept file gone */
		case 3: tu_text(dir, "b", "pair content, longer\n"); want_b = "pair content, longer\n"; break;
		}
		ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_SOFT, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_dedupe(keep, dup, 0), DUPSCAN_E_CHANGED);
		check_content(dir, "b", want_b);
		ck_assert_int_eq(count_temps(dir), 0);
		free(a);
		free(b);
		free(c);
		dupscan_free(scan);
		tu_cleanup(dir);
	}
}
END_TEST

/* A refusal says which file changed and what: its path and a
 * DUPSCAN_E_CHANGED_* code through the error callback. */
struct told {
	char path[4096];
	int code, calls;
};

static void tell(void *user, const char *path, int code)
{
	struct told *t = user;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->code = code;
	t->calls++;
}

START_TEST(test_refusal_says_what_changed)
{
	static const struct { const char *file, *text; int why; } cases[] = {
		{ "a", "kept file rewritten, longer\n", DUPSCAN_E_CHANGED_SIZE },
		{ "b", "pair content\n", DUPSCAN_E_CHANGED_INODE }, /* the same bytes, a new file */
		{ "a", "PAIR CONTENT\n", DUPSCAN_E_CHANGED_MTIME },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = tu_tmpdir();
		const dupscan_file *keep, *dup;
		dupscan_scan *scan = pair(dir, &keep, &dup);
		struct told t = { "", 0, 0 };
		dupscan_set_error_callback(scan, tell, &t);
		char *p = tu_path(dir, cases[i].file), *tmp = tu_path(dir, "new");
		struct stat before;
		ck_assert_int_eq(stat(p, &before), 0);
		if (cases[i].why == DUPSCAN_E_CHANGED_INODE) {
			tu_text(dir, "new", cases[i].text); /* saved by rename */
			ck_assert_int_eq(rename(tmp, p), 0);
		} else {
			tu_text(dir, cases[i].file, cases[i].text); /* written in place */
			struct timespec later[2] = { before.st_atim, { before.st_mtim.tv_sec + 5, 0 } };
			ck_assert_int_eq(utimensat(AT_FDCWD, p, later, 0), 0);
		}
		ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(t.calls, 1);
		ck_assert_str_eq(t.path, dupscan_file_path(cases[i].file[0] == 'a' ? keep : dup));
		ck_assert_int_eq(t.code, cases[i].why);
		ck_assert_str_ne(dupscan_strerror(t.code), "Unknown error");
		free(p);
		free(tmp);
		dupscan_free(scan);
		tu_cleanup(dir);
	}
}
END_TEST

START_TEST(test_remove)
{
	char *dir = tu_tmpdir();
	const dupscan_file *keep, *dup;
	dupscan_scan *scan = pair(dir, &keep, &dup);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, DUPSCAN_ACT_DRY_RUN), 0);
	check_content(dir, "b", "pair content\n");
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), 0);
	char *b = tu_path(dir, "b");
	ck_assert_int_eq(access(b, F_OK), -1);
	check_content(dir, "a", "pair content\n");
	/* the kept file must exist even without the change check */
	ck_assert_int_eq(dupscan_remove_duplicate(dup, keep, DUPSCAN_ACT_NO_CHANGE_CHECK), DUPSCAN_E_CHANGED);
	check_content(dir, "a", "pair content\n");
	free(b);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Rewrite rel in place with text of the same length and put its times back,
 * as cp -p or rsync --inplace -t would. */
static void rewrite_keep_times(const char *dir, const char *rel, const char *text)
{
	struct stat st = lstat_rel(dir, rel);
	char *p = tu_path(dir, rel);
	int fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	struct timespec t[2] = { st.st_atim, st.st_mtim };
	ck_assert_int_eq(futimens(fd, t), 0);
	close(fd);
	ck_assert_int_eq(lstat_rel(dir, rel).st_mtim.tv_nsec, st.st_mtim.tv_nsec);
	free(p);
}

/* An in-place rewrite with the mtime put back is seen by its ctime, on either file. */
START_TEST(test_ctime_checked)
{
	for (int which = 0; which < 2; which++) {
		char *dir = tu_tmpdir();
		const dupscan_file *keep, *dup;
		dupscan_scan *scan = pair(dir, &keep, &dup);
		rewrite_keep_times(dir, which ? "b" : "a", "PAIR CONTENT\n");
		ck_assert_int_eq(dupscan_check_unchanged(which ? dup : keep), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_CHANGED);
		ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_SOFT, 0), DUPSCAN_E_CHANGED);
		check_content(dir, "b", which ? "PAIR CONTENT\n" : "pair content\n");
		ck_assert(S_ISREG(lstat_rel(dir, "b").st_mode));
		ck_assert_int_eq(count_temps(dir), 0);
		dupscan_free(scan);
		tu_cleanup(dir);
	}
}
END_TEST

/* Several duplicates against one kept file: each link moves the kept file's
 * ctime, and the next action expects the ctime the library itself left. */
START_TEST(test_own_changes_expected)
{
	char *dir = tu_tmpdir();
	char *a = tu_path(dir, "a"), *a2 = tu_path(dir, "a2");
	tu_text(dir, "a", "many\n");
	ck_assert_int_eq(link(a, a2), 0);
	tu_text(dir, "b", "many\n");
	tu_text(dir, "c", "many\n");
	tu_text(dir, "d", "many\n");
	dupscan_scan *scan = tu_scan(dir, DUPSCAN_OPT_HARD_LINKS, 1, 0);
	const dupscan_set *set = dupscan_get_set(scan, 0);
	ck_assert_uint_eq(dupscan_set_file_count(set), 5);
	const dupscan_file *keep = dupscan_set_file(set, 0);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dupscan_set_file(set, 1), DUPSCAN_LINK_HARD, 0),
			 DUPSCAN_E_ALREADY);
	for (size_t k = 2; k < 5; k++)
		ck_assert_int_eq(dupscan_replace_with_link(keep, dupscan_set_file(set, k), DUPSCAN_LINK_HARD, 0), 0);
	ck_assert_uint_eq(lstat_rel(dir, "a").st_nlink, 5);
	/* a name of the kept inode, deleted after all that */
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dupscan_set_file(set, 1), 0), 0);
	ck_assert_uint_eq(lstat_rel(dir, "a").st_nlink, 4);
	check_content(dir, "a", "many\n");
	free(a);
	free(a2);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* The kept file saved by rename after the scan: no link to the new content. */
START_TEST(test_kept_replaced_by_rename)
{
	char *dir = tu_tmpdir();
	const dupscan_file *keep, *dup;
	dupscan_scan *scan = pair(dir, &keep, &dup);
	tu_text(dir, "a.new", "pair content\n"); /* even the same bytes: another inode */
	char *from = tu_path(dir, "a.new"), *to = tu_path(dir, "a");
	ck_assert_int_eq(rename(from, to), 0);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_CHANGED);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), DUPSCAN_E_CHANGED);
	ck_assert_uint_ne(lstat_rel(dir, "a").st_ino, lstat_rel(dir, "b").st_ino);
	check_content(dir, "b", "pair content\n");
	free(from);
	free(to);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_hash_file)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "big", 3 * 1024 * 1024 + 17, 5, -1);
	tu_text(dir, "empty", "");
	char *big = tu_path(dir, "big"), *empty = tu_path(dir, "empty");
	FILE *f = fopen(big, "rb");
	unsigned char *buf = malloc(3 * 1024 * 1024 + 17);
	ck_assert_uint_eq(fread(buf, 1, 3 * 1024 * 1024 + 17, f), 3 * 1024 * 1024 + 17);
	fclose(f);
	uint64_t size = 0, hash = 0;
	ck_assert_int_eq(dupscan_hash_file(big, &size, &hash), 0);
	ck_assert_uint_eq(size, 3 * 1024 * 1024 + 17);
	ck_assert_uint_eq(hash, ds_hash_oneshot(buf, 3 * 1024 * 1024 + 17));
	ck_assert_int_eq(dupscan_hash_file(empty, NULL, &hash), 0);
	ck_assert_uint_eq(hash, ds_hash_oneshot("", 0));
	ck_assert_int_eq(dupscan_hash_file(dir, NULL, &hash), DUPSCAN_E_NOTREG);
	ck_assert_int_eq(dupscan_hash_file(NULL, NULL, &hash), -EINVAL);
	free(buf);
	free(big);
	free(empty);
	tu_cleanup(dir);
}
END_TEST

/* One directory entry reached as two paths through a symlinked directory. */
START_TEST(test_same_entry_refused)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "real/f", "only copy\n");
	char *l = tu_path(dir, "link");
	ck_assert_int_eq(symlink("real", l), 0);
	char *real = tu_path(dir, "real"), *link = tu_path(dir, "link");
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	/* -H lists both spellings of the one entry */
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_HARD_LINKS, 1), 0);
	ck_assert_int_ge(dupscan_add_path(scan, real, 0), 0);
	ck_assert_int_ge(dupscan_add_path(scan, link, 0), 0);
	ck_assert_int_eq(dupscan_run(scan), 0);
	/* both spellings reach one (dir, name): they are one file, no set */
	ck_assert_uint_eq(dupscan_set_count(scan), 0);
	dupscan_free(scan);
	/* build the dangerous pair by hand through the public API of a scan of both files */
	char *f1 = tu_path(dir, "real/f"), *f2 = tu_path(dir, "link/f");
	struct stat st;
	ck_assert_int_eq(stat(f1, &st), 0);
	struct ds_rec r = { .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
			    .ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec };
	ck_assert_int_eq(dupscan_create(&scan), 0); /* the tables the record's device and mode go in */
	ck_assert_int_eq(ds_rec_identity(&scan->tree, &r, &st), 0);
	struct dupscan_file keep = { f1, &r, &scan->tree, 0, DS_NONE }, dup = { f2, &r, &scan->tree, 0, DS_NONE };
	ck_assert_int_eq(dupscan_remove_duplicate(&keep, &dup, 0), DUPSCAN_E_SAME_ENTRY);
	ck_assert_int_eq(dupscan_replace_with_link(&keep, &dup, DUPSCAN_LINK_SOFT, 0), DUPSCAN_E_SAME_ENTRY);
	ck_assert_int_eq(dupscan_replace_with_link(&keep, &dup, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_SAME_ENTRY);
	check_content(dir, "real/f", "only copy\n");
	ck_assert(S_ISREG(lstat_rel(dir, "real/f").st_mode));
	dupscan_free(scan);
	free(f1);
	free(f2);
	free(l);
	free(real);
	free(link);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_unwritable_dir)
{
	char *dir = tu_tmpdir();
	static const char *const tree[] = { "a", "b", "c", NULL };
	tu_text(dir, "a", "pair content\n");
	tu_text(dir, "b", "pair content\n");
	tu_text(dir, "c", "other\n");
	tu_drop_root(dir, tree);
	dupscan_scan *scan = tu_scan(dir, 0);
	const dupscan_file *keep = dupscan_set_file(dupscan_get_set(scan, 0), 0);
	const dupscan_file *dup = dupscan_set_file(dupscan_get_set(scan, 0), 1);
	/* a directory that refuses new names: every change fails, b stays as it was */
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_HARD, 0), -EACCES);
	ck_assert_int_eq(dupscan_replace_with_link(keep, dup, DUPSCAN_LINK_SOFT, 0), -EACCES);
	ck_assert_int_eq(dupscan_remove_duplicate(keep, dup, 0), -EACCES);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	check_content(dir, "b", "pair content\n");
	ck_assert(S_ISREG(lstat_rel(dir, "b").st_mode));
	ck_assert_uint_ne(lstat_rel(dir, "a").st_ino, lstat_rel(dir, "b").st_ino);
	ck_assert_int_eq(count_temps(dir), 0);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

static void cancel_at_walk_end(void *user, int phase, uint64_t done, uint64_t total)
{
	if (phase == DUPSCAN_PHASE_WALK && total && done == total)
		dupscan_cancel(user);
}

static void cancel_after_first_set(void *user, int stage, const dupscan_file *const *files, size_t n)
{
	(void)files;
	(void)n;
	if (stage == DUPSCAN_STAGE_FULL)
		dupscan_cancel(user);
}

START_TEST(test_cancel)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "a1", 5000, 1, -1);
	tu_file(dir, "a2", 5000, 1, -1);
	tu_file(dir, "b1", 7000, 2, -1);
	tu_file(dir, "b2", 7000, 2, -1);
	tu_file(dir, "c", 3000, 3, -1); /* alone in its size */
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	dupscan_set_progress_callback(scan, cancel_at_walk_end, scan);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), DUPSCAN_E_CANCELED);
	ck_assert_uint_eq(dupscan_set_count(scan), 0);
	/* nothing was compared: only c, alone in its size once every file was
	 * seen, is shown unique */
	char *alone = tu_uniques(scan, dir);
	ck_assert_str_eq(alone, "c");
	free(alone);
	dupscan_free(scan);
	ck_assert_int_eq(dupscan_create(&scan), 0);
	dupscan_set_stage_callback(scan, cancel_after_first_set, scan);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), DUPSCAN_E_CANCELED);
	/* the sets confirmed before the cancel are kept whole (groups committed
	 * together with the first one may come too); nothing is guessed */
	char *sets = tu_sets(scan, dir);
	ck_assert_msg(strcmp(sets, "a1 a2") == 0 || strcmp(sets, "a1 a2|b1 b2") == 0, "got %s", sets);
	free(sets);
	/* b1 and b2, never compared when the cancel came first, are not unique;
	 * c, alone in its size, is */
	char *uniques = tu_uniques(scan, dir);
	ck_assert_str_eq(uniques, "c");
	free(uniques);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

static bool same_bytes(const char *p, const char *q)
{
	FILE *f = fopen(p, "rb"), *g = fopen(q, "rb");
	bool same = f && g;
	for (int a = 0, b = 0; same && (a != EOF || b != EOF);) {
		a = fgetc(f);
		b = fgetc(g);
		same = a == b;
	}
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	return same;
}

/* a protected duplicate: listed, flagged, and every action refuses it */
START_TEST(test_protected_refused)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "keep/a", "protect me\n");
	tu_text(dir, "vault/b", "protect me\n");
	char *vault = tu_path(dir, "vault"), *dest = tu_path(dir, "moved");
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_protect_path(scan, vault), 0);
	ck_assert_int_eq(dupscan_protect_path(scan, "/nonexistent/dupscan"), -ENOENT);
	ck_assert_int_eq(dupscan_run(scan), 0);
	ck_assert_int_eq(dupscan_protect_path(scan, vault), DUPSCAN_E_STATE);
	ck_assert_uint_eq(dupscan_set_count(scan), 1);
	const dupscan_set *set = dupscan_get_set(scan, 0);
	const dupscan_file *a = dupscan_set_file(set, 0), *b = dupscan_set_file(set, 1);
	ck_assert_int_eq(dupscan_file_is_protected(a), 0);
	ck_assert_int_eq(dupscan_file_is_protected(b), 1);
	ck_assert_str_eq(dupscan_file_relpath(b), "vault/b");
	ck_assert_int_eq(dupscan_remove_duplicate(a, b, 0), DUPSCAN_E_PROTECTED);
	ck_assert_int_eq(dupscan_replace_with_link(a, b, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_PROTECTED);
	ck_assert_int_eq(dupscan_replace_with_link(a, b, DUPSCAN_LINK_SOFT, DUPSCAN_ACT_NO_CHANGE_CHECK), DUPSCAN_E_PROTECTED);
	ck_assert_int_eq(dupscan_dedupe(a, b, 0), DUPSCAN_E_PROTECTED);
	ck_assert_int_eq(dupscan_move_duplicate(a, b, dest, 0), DUPSCAN_E_PROTECTED);
	check_content(dir, "vault/b", "protect me\n");
	/* the other way round the unprotected file may go */
	ck_assert_int_eq(dupscan_move_duplicate(b, a, dest, 0), 0);
	check_content(dir, "moved", "protect me\n");
	ck_assert_int_ne(access(dupscan_file_path(a), F_OK), 0);
	dupscan_free(scan);
	free(vault);
	free(dest);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_move_never_overwrites)
{
	char *dir = tu_tmpdir();
	const dupscan_file *keep, *dup;
	dupscan_scan *scan = pair(dir, &keep, &dup);
	char *c = tu_path(dir, "c"), *d = tu_path(dir, "d");
	ck_assert_int_eq(dupscan_move_duplicate(keep, dup, c, 0), -EEXIST);
	check_content(dir, "c", "other\n");
	check_content(dir, "b", "pair content\n");
	ck_assert_int_eq(dupscan_move_duplicate(keep, dup, d, DUPSCAN_ACT_DRY_RUN), 0);
	ck_assert_int_ne(access(d, F_OK), 0);
	/* b changed since the scan: refused, left where it is */
	tu_text(dir, "b", "pair content, changed\n");
	ck_assert_int_eq(dupscan_move_duplicate(keep, dup, d, 0), DUPSCAN_E_CHANGED);
	check_content(dir, "b", "pair content, changed\n");
	ck_assert_int_ne(access(d, F_OK), 0);
	dupscan_free(scan);
	free(c);
	free(d);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_copy_file)
{
	char *dir = tu_tmpdir();
	tu_file(dir, "src", 3 * 1024 * 1024 + 17, 5, -1);
	char *src = tu_path(dir, "src"), *dst = tu_path(dir, "dst"), *ex = tu_path(dir, "exists");
	ck_assert_int_eq(chmod(src, 0640), 0);
	struct timespec t[2] = { { 1000000000, 5 }, { 1234567890, 123456789 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, src, t, 0), 0);
	ck_assert_int_eq(dupscan_copy_file(src, dst), 0);
	struct stat s1 = lstat_rel(dir, "src"), s2 = lstat_rel(dir, "dst");
	ck_assert_uint_ne(s1.st_ino, s2.st_ino);
	ck_assert_uint_eq(s2.st_mode & 07777, 0640);
	ck_assert_int_eq(s2.st_mtim.tv_sec, 1234567890);
	ck_assert_int_eq(s2.st_mtim.tv_nsec, 123456789);
	ck_assert_int_eq((int)s1.st_size, (int)s2.st_size);
	ck_assert(same_bytes(src, dst));
	tu_text(dir, "exists", "mine\n");
	ck_assert_int_eq(dupscan_copy_file(src, ex), -EEXIST);
	check_content(dir, "exists", "mine\n");
	ck_assert_int_eq(dupscan_copy_file(dir, dst), DUPSCAN_E_NOTREG);
	char *dst2 = tu_path(dir, "dst2");
	ck_assert_int_eq(dupscan_copy_file(dir, dst2), DUPSCAN_E_NOTREG);
	ck_assert_int_ne(access(dst2, F_OK), 0);
	/* move_path on one filesystem keeps the inode, and never overwrites */
	ck_assert_int_eq(dupscan_move_path(dst, ex, 0), -EEXIST);
	ck_assert_int_eq(dupscan_move_path(dst, dst2, 0), 0);
	ck_assert_uint_eq(lstat_rel(dir, "dst2").st_ino, s2.st_ino);
	free(src);
	free(dst);
	free(dst2);
	free(ex);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("action");
	TCase *tc = tcase_create("dupscan_replace_with_link");
	tcase_add_test(tc, test_hard_link);
	tcase_add_test(tc, test_soft_link);
	tcase_add_test(tc, test_changed_files_refused);
	tcase_add_test(tc, test_refusal_says_what_changed);
	tcase_add_test(tc, test_same_entry_refused);
	tcase_add_test(tc, test_unwritable_dir);
	suite_add_tcase(s, tc);
	tc = tcase_create("dupscan_remove_duplicate");
	tcase_add_test(tc, test_remove);
	suite_add_tcase(s, tc);
	tc = tcase_create("racing changes");
	tcase_add_test(tc, test_ctime_checked);
	tcase_add_test(tc, test_own_changes_expected);
	tcase_add_test(tc, test_kept_replaced_by_rename);
	suite_add_tcase(s, tc);
	tc = tcase_create("dupscan_hash_file");
	tcase_add_test(tc, test_hash_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("protect, move, copy");
	tcase_add_test(tc, test_protected_refused);
	tcase_add_test(tc, test_move_never_overwrites);
	tcase_add_test(tc, test_copy_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("dupscan_cancel");
	tcase_add_test(tc, test_cancel);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

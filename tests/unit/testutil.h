/* SPDX-License-Identifier: MIT */
/* testutil.h: fixture trees built at run time under mkdtemp(). */
#ifndef DUPSCAN_TESTUTIL_H
#define DUPSCAN_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

/* A passing assertion costs a branch. Check's own ck_assert_msg() records
 * its line each time it passes (_mark_point(): in fork mode a message
 * written to the parent), and the tests that assert once an element spent
 * most of their time there (check_sets under valgrind: 10 of its 12 s in the
 * sort's 46,000 assertions). A test that crashes is placed at its start
 * instead of at its last passing assertion; the sanitizers' and valgrind's
 * reports give the line. Failing is Check's own. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
	((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", __VA_ARGS__))

#include "dupscan.h"

/* A new empty directory; aborts the test on failure. Free with tu_cleanup(). */
char *tu_tmpdir(void);
/* The same on tmpfs (/dev/shm) where there is one: thousands of files
 * written to this VM's discard-mounted disk and removed cost seconds. */
char *tu_tmpdir_shm(void);
void tu_cleanup(char *dir);
/* dir/rel with size bytes of a pattern from seed; parents are created.
 * flip >= 0 changes the byte at that offset. Large files are sparse where the
 * pattern is zero (beyond 64 KiB), so a 2 MiB file costs little. */
void tu_file(const char *dir, const char *rel, uint64_t size, unsigned seed, int64_t flip);
void tu_text(const char *dir, const char *rel, const char *text);
void tu_mkdir(const char *dir, const char *rel);
/* Owned string "dir/rel". */
char *tu_path(const char *dir, const char *rel);

/* Run a scan of dir (recursive) with option pairs ending in 0, e.g.
 * tu_scan(dir, DUPSCAN_OPT_HARD_LINKS, 1, 0). */
dupscan_scan *tu_scan(const char *dir, ...);
/* The sets as "a b|c d": paths relative to root, files space-separated, sets
 * separated by '|'. Owned string. */
char *tu_sets(const dupscan_scan *scan, const char *root);
char *tu_uniques(const dupscan_scan *scan, const char *root);

/* As root, permissions stop nothing: give dir and the listed paths in it to
 * nobody and become nobody (tests run in a forked child). No-op otherwise. */
void tu_drop_root(const char *dir, const char *const *rels);

/* Bytes this process has read so far (rchar of /proc/self/io). */
unsigned long long tu_rchar(void);
/* The full hash a scan takes of the file at path, worked out with XXH64
 * alone: of the bytes past the first 4096, seeded with the XXH64 of those
 * (which it is for a file within 4096 bytes). */
uint64_t tu_full_hash(const char *path);
/* XXH64 of the first 4096 bytes of the file at path (all of it, if fewer). */
uint64_t tu_partial_hash(const char *path);

/* Run a suite (output per CK_VERBOSITY, TAP per CK_TAP_LOG_FILE_NAME) and free it.
 * @return the process exit status. */
int tu_run(Suite *suite);

#endif

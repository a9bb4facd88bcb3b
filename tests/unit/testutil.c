/* SPDX-License-Identifier: MIT */
/* testutil.c: fixture trees for the Check suites. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h> /* an oracle for the scan's hashes, apart from the library's */

#include "testutil.h"

char *tu_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/dupscan-test-XXXXXX", base && *base ? base : "/tmp");
	char *d = mkdtemp(tmpl);
	ck_assert_msg(d != NULL, "mkdtemp: %s", strerror(errno));
	return strdup(d);
}

char *tu_tmpdir_shm(void)
{
	char tmpl[] = "/dev/shm/dupscan-test-XXXXXX";
	if (access("/dev/shm", W_OK) == 0 && mkdtemp(tmpl))
		return strdup(tmpl);
	return tu_tmpdir();
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st; (void)f;
	if (type == FTW_DP)
		chmod(path, 0700);
	return remove(path);
}

void tu_cleanup(char *dir)
{
	if (!dir)
		return;
	nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *tu_path(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	ck_assert_ptr_nonnull(p);
	snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

static void make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
}

void tu_mkdir(const char *dir, const char *rel)
{
	char *p = tu_path(dir, rel);
	make_parents(p);
	ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
	free(p);
}

static unsigned char pattern(uint64_t off, unsigned seed)
{
	if (off >= 65536)
		return 0;
	uint32_t x = (uint32_t)off * 2654435761u ^ (seed * 40503u + 17u);
	x ^= x >> 13;
	return (unsigned char)(x * 0x5bd1e995u >> 24);
}

void tu_file(const char *dir, const char *rel, uint64_t size, unsigned seed, int64_t flip)
{
	char *p = tu_path(dir, rel);
	make_parents(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_msg(fd >= 0, "open %s: %s", p, strerror(errno));
	unsigned char buf[65536];
	uint64_t dense = size < 65536 ? size : 65536;
	for (uint64_t i = 0; i < dense; i++)
		buf[i] = pattern(i, seed);
	if (flip >= 0 && (uint64_t)flip < dense)
		buf[flip] ^= 0xff;
	ck_assert(write(fd, buf, dense) == (ssize_t)dense);
	if (size > dense)
		ck_assert(ftruncate(fd, (off_t)size) == 0);
	if (flip >= 0 && (uint64_t)flip >= dense) {
		unsigned char b = 0xff;
		ck_assert(pwrite(fd, &b, 1, flip) == 1);
	}
	close(fd);
	free(p);
}

void tu_text(const char *dir, const char *rel, const char *text)
{
	char *p = tu_path(dir, rel);
	make_parents(p);
	FILE *f = fopen(p, "wb");
	ck_assert_msg(f != NULL, "fopen %s", p);
	fputs(text, f);
	fclose(f);
	free(p);
}

dupscan_scan *tu_scan(const char *dir, ...)
{
	dupscan_scan *scan = NULL;
	ck_assert_int_eq(dupscan_create(&scan), 0);
	va_list ap;
	va_start(ap, dir);
	for (int opt = va_arg(ap, int); opt != 0; opt = va_arg(ap, int)) {
		int64_t val = va_arg(ap, int);
		ck_assert_int_eq(dupscan_set_option(scan, opt, val), 0);
	}
	va_end(ap);
	ck_assert_int_ge(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), 0);
	return scan;
}

struct sbuf {
	char *s;
	size_t n;
};

static void append(struct sbuf *b, const char *text)
{
	size_t len = strlen(text);
	b->s = realloc(b->s, b->n + len + 1);
	ck_assert_ptr_nonnull(b->s);
	memcpy(b->s + b->n, text, len + 1);
	b->n += len;
}

static const char *rel_to(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (strncmp(path, root, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

char *tu_sets(const dupscan_scan *scan, const char *root)
{
	struct sbuf b = { 0 };
	append(&b, "");
	for (size_t i = 0; i < dupscan_set_count(scan); i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		if (i)
			append(&b, "|");
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			if (k)
				append(&b, " ");
			append(&b, rel_to(dupscan_file_path(dupscan_set_file(set, k)), root));
		}
	}
	return b.s;
}

char *tu_uniques(const dupscan_scan *scan, const char *root)
{
	struct sbuf b = { 0 };
	append(&b, "");
	for (size_t i = 0; i < dupscan_unique_count(scan); i++) {
		if (i)
			append(&b, " ");
		append(&b, rel_to(dupscan_file_path(dupscan_unique_file(scan, i)), root));
	}
	return b.s;
}

int tu_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void tu_drop_root(const char *dir, const char *const *rels)
{
	if (geteuid() != 0)
		return;
	ck_assert_int_eq(lchown(dir, 65534, 65534), 0);
	for (; rels && *rels; rels++) {
		char *p = tu_path(dir, *rels);
		ck_assert_int_eq(lchown(p, 65534, 65534), 0);
		free(p);
	}
	ck_assert_int_eq(setgid(65534), 0);
	ck_assert_int_eq(setuid(65534), 0);
}

/* The partial and full hashes of the file at path. */
static void hashes_of(const char *path, uint64_t *partial, uint64_t *full)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	size_t n = (size_t)st.st_size;
	unsigned char *buf = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(buf);
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
		ck_assert_int_gt(r, 0);
		got += (size_t)r;
	}
	close(fd);
	const size_t block = 4096; /* DS_BLOCK */
	*partial = XXH64(buf, n < block ? n : block, 0);
	*full = n > block ? XXH64(buf + block, n - block, *partial) : *partial;
	free(buf);
}

uint64_t tu_full_hash(const char *path)
{
	uint64_t partial, full;
	hashes_of(path, &partial, &full);
	return full;
}

uint64_t tu_partial_hash(const char *path)
{
	uint64_t partial, full;
	hashes_of(path, &partial, &full);
	return partial;
}

unsigned long long tu_rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	ck_assert_ptr_nonnull(f);
	char line[128];
	unsigned long long v = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

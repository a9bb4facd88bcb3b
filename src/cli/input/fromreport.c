/* SPDX-License-Identifier: MIT */
/* fromreport.c: --from-report=FILE: read back the sets of a dupscan -j report
 * (perhaps edited by a person) and check its shape before anything is done.
 * The document is read as a stream (jsonread.c): a report of millions of
 * files costs its files, a path and 48 bytes each, not a tree of it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fromreport.h"
#include "jsonread.h"

struct report_paths {
	struct report_paths *next;
	size_t used, cap;
	char bytes[];
};

/* One reading: the stream, the report filled, and the first thing found
 * wrong with the report's shape (the rest is still read, so bytes that are
 * not JSON are named as such wherever they are). */
struct load {
	struct jr j;
	struct report *r;
	char *msg;
	size_t cap;
	bool wrong;
};

__attribute__((format(printf, 3, 4)))
static int fail(char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* The report's shape is wrong: say so (the first time) and read on. */
__attribute__((format(printf, 2, 3)))
static void wrong(struct load *l, const char *fmt, ...)
{
	if (l->wrong)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->msg, l->cap, fmt, ap);
	va_end(ap);
	l->wrong = true;
}

void report_free(struct report *r)
{
	while (r->paths) {
		struct report_paths *next = r->paths->next;
		free(r->paths);
		r->paths = next;
	}
	free(r->files);
	free(r->lone);
	memset(r, 0, sizeof(*r));
}

/* A copy of the string just read, in blocks of a MiB that never move. */
static char *keep_path(struct report *r, const char *s, size_t len)
{
	struct report_paths *b = r->paths;
	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > (1u << 20) ? len + 1 : (1u << 20);
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->next = r->paths;
		b->used = 0;
		b->cap = cap;
		r->paths = b;
	}
	char *p = memcpy(b->bytes + b->used, s, len + 1);
	b->used += len + 1;
	return p;
}

static int grow(void **v, size_t *cap, size_t n, size_t each)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *nv = realloc(*v, ncap * each);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

enum { F_PATH, F_DEV, F_INO, F_MTIME, F_CTIME, F_N };
static const char *const file_keys[F_N] = { "filePath", "device", "inode", "mtimeNs", "ctimeNs" };

/* One entry of a fileList: kept when it is whole and nothing before it was wrong. */
static int read_file_entry(struct load *l, size_t set, size_t k, struct report_file *rf)
{
	struct jr *j = &l->j;
	if (jr_peek(j) != '{') {
		wrong(l, "set %zu, file %zu: no \"filePath\"", set + 1, k + 1);
		return jr_skip(j);
	}
	int rc = jr_open(j);
	unsigned seen = 0, good = 0;
	uint64_t unused_u;
	int64_t unused_s;
	for (bool first = true; rc == 0 && (rc = jr_next(j, true, &first)) == 1; rc = rc < 0 ? rc : 0) {
		int f = 0;
		while (f < F_N && strcmp(j->s, file_keys[f]) != 0)
			f++;
		if (f == F_N && strcmp(j->s, "host") == 0)
			/* a scan across hosts: its remote files are never acted on */
			wrong(l, "set %zu, file %zu: on another host (\"host\"): a report's actions change files of this host only; "
			      "drop the set or the file", set + 1, k + 1);
		if (f == F_N) {
			rc = jr_skip(j);
			continue;
		}
		if (seen & (1u << f))
			wrong(l, "set %zu, file %zu: \"%s\" twice", set + 1, k + 1, file_keys[f]);
		if (seen & (1u << f) || (l->wrong && f == F_PATH)) {
			rc = jr_skip(j);
			continue;
		}
		seen |= 1u << f;
		if (f == F_PATH) {
			if (jr_peek(j) != '"') {
				rc = jr_skip(j);
			} else if ((rc = jr_string(j)) == 0 && j->slen > 0) {
				good |= 1u << f;
				rc = (rf->path = keep_path(l->r, j->s, j->slen)) ? 0 : -ENOMEM;
			}
			continue;
		}
		uint64_t *u = f == F_DEV ? &rf->dev : f == F_INO ? &rf->ino : &unused_u;
		int64_t *s = f == F_MTIME ? &rf->mtime_ns : f == F_CTIME ? &rf->ctime_ns : &unused_s;
		rc = jr_int(j, f == F_MTIME || f == F_CTIME, u, s);
		if (rc == 1)
			good |= 1u << f;
	}
	if (rc < 0)
		return rc;
	if (!(good & 1u << F_PATH))
		wrong(l, "set %zu, file %zu: no \"filePath\"", set + 1, k + 1);
	else if (good != (1u << F_N) - 1)
		wrong(l, "set %zu: '%s' has no device, inode, mtimeNs and ctimeNs (write the report with dupscan -j)",
		      set + 1, rf->path);
	return 0;
}

/* The fileList of set number set, its files appended to the report. */
static int read_file_list(struct load *l, size_t set, size_t *count)
{
	struct jr *j = &l->j;
	struct report *r = l->r;
	int rc = jr_open(j);
	for (bool first = true; rc == 0 && (rc = jr_next(j, false, &first)) == 1; rc = rc < 0 ? rc : 0) {
		struct report_file rf = { .set = (uint32_t)set };
		if ((rc = read_file_entry(l, set, *count, &rf)) != 0)
			break;
		++*count;
		if (l->wrong)
			continue;
		if (grow((void **)&r->files, &r->capfiles, r->nfiles, sizeof(*r->files)) != 0)
			return -ENOMEM;
		r->files[r->nfiles++] = rf;
	}
	return rc < 0 ? rc : 0;
}

/* Set number set, an object with "fileSize" and "fileList" in either order. */
static int read_set(struct load *l, size_t set)
{
	struct jr *j = &l->j;
	struct report *r = l->r;
	if (jr_peek(j) != '{') {
		wrong(l, "set %zu: no \"fileList\" list", set + 1);
		return jr_skip(j);
	}
	size_t start = r->nfiles, count = 0;
	bool seen_list = false, seen_size = false, has_list = false, has_size = false;
	uint64_t size = 0;
	int64_t unused;
	int rc = jr_open(j);
	for (bool first = true; rc == 0 && (rc = jr_next(j, true, &first)) == 1; rc = rc < 0 ? rc : 0) {
		bool list = strcmp(j->s, "fileList") == 0, sz = strcmp(j->s, "fileSize") == 0;
		bool *seen = list ? &seen_list : sz ? &seen_size : NULL;
		if (seen && *seen) {
			wrong(l, "set %zu: \"%s\" twice", set + 1, j->s);
			rc = jr_skip(j);
			continue;
		}
		if (seen)
			*seen = true;
		if (list && jr_peek(j) == '[') {
			has_list = true;
			rc = read_file_list(l, set, &count);
		} else if (sz) {
			rc = jr_int(j, false, &size, &unused);
			has_size = rc == 1;
		} else {
			rc = jr_skip(j);
		}
	}
	if (rc < 0)
		return rc;
	if (!has_list)
		wrong(l, "set %zu: no \"fileList\" list", set + 1);
	else if (!has_size)
		wrong(l, "set %zu: no \"fileSize\"", set + 1);
	if (l->wrong)
		return 0;
	for (size_t i = start; i < r->nfiles; i++) {
		r->files[i].size = size;
		r->files[i].alone = count < 2;
	}
	if (count < 2) {
		if (grow((void **)&r->lone, &r->caplone, r->nlone, sizeof(*r->lone)) != 0)
			return -ENOMEM;
		r->lone[r->nlone++] = (uint32_t)set;
	}
	r->nsets = set + 1;
	return 0;
}

/* The document: an object whose "matchSets" is a list of sets. */
static int read_report(struct load *l)
{
	struct jr *j = &l->j;
	if (jr_peek(j) != '{') {
		wrong(l, "no \"matchSets\" list: not a dupscan -j report");
		return jr_skip(j);
	}
	bool has_sets = false;
	int rc = jr_open(j);
	for (bool first = true; rc == 0 && (rc = jr_next(j, true, &first)) == 1; rc = rc < 0 ? rc : 0) {
		if (strcmp(j->s, "matchSets") != 0) {
			rc = jr_skip(j);
			continue;
		}
		if (has_sets)
			wrong(l, "\"matchSets\" twice");
		if (has_sets || jr_peek(j) != '[') {
			rc = jr_skip(j);
			continue;
		}
		has_sets = true;
		rc = jr_open(j);
		size_t n = 0;
		for (bool f1 = true; rc == 0 && (rc = jr_next(j, false, &f1)) == 1; n++)
			rc = read_set(l, n);
	}
	if (rc == 0 && !has_sets)
		wrong(l, "no \"matchSets\" list: not a dupscan -j report");
	return rc < 0 ? rc : 0;
}

static int cmp_path(const void *pa, const void *pb)
{
	const struct report_file *a = *(const struct report_file *const *)pa, *b = *(const struct report_file *const *)pb;
	return strcmp(a->path, b->path);
}

/* No path in two sets: checked on the paths sorted (8 bytes a file). One
 * file by two paths in two sets is the library's to tell (it knows where
 * inode numbers are kept): dupscan_run() stops with DUPSCAN_E_TWO_SETS. */
static int check_twice(const struct report *r, char *msg, size_t cap)
{
	const struct report_file **v = malloc((r->nfiles ? r->nfiles : 1) * sizeof(*v));
	if (!v)
		return fail(msg, cap, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		v[i] = &r->files[i];
	qsort(v, r->nfiles, sizeof(*v), cmp_path);
	for (size_t i = 1; i < r->nfiles && rc == 0; i++) {
		if (cmp_path(&v[i - 1], &v[i]) != 0)
			continue;
		if (v[i - 1]->set != v[i]->set)
			rc = fail(msg, cap, "set %u and set %u both hold the path '%s'", v[i - 1]->set + 1,
				  v[i]->set + 1, v[i]->path);
		else
			rc = fail(msg, cap, "set %u: the path '%s' twice", v[i]->set + 1, v[i]->path);
	}
	free(v);
	return rc;
}

/* A directory or a symlink where a file was: the report no longer describes the tree. */
static int check_still_files(const struct report *r, char *msg, size_t cap)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		struct stat st;
		if (lstat(r->files[i].path, &st) == 0 && !S_ISREG(st.st_mode))
			return fail(msg, cap, "set %u: '%s' is now %s", r->files[i].set + 1, r->files[i].path,
				    S_ISDIR(st.st_mode) ? "a directory" :
				    S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
	}
	return 0;
}

int report_load(const char *path, struct report *r, char *msg, size_t cap)
{
	memset(r, 0, sizeof(*r));
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f)
		return fail(msg, cap, "%s", strerror(errno));
	struct load l = { .r = r, .msg = msg, .cap = cap };
	jr_init(&l.j, f);
	int rc = read_report(&l);
	if (rc == 0)
		rc = jr_end(&l.j);
	if (rc == -ENOMEM)
		rc = fail(msg, cap, "out of memory");
	else if (rc == -EINVAL)
		rc = fail(msg, cap, "not JSON (at byte %" PRIu64 ")", jr_offset(&l.j));
	else if (rc)
		rc = fail(msg, cap, "%s", strerror(-rc)); /* the read failed */
	else if (l.wrong)
		rc = -1;
	jr_free(&l.j);
	if (f != stdin)
		fclose(f);
	if (rc == 0)
		rc = check_twice(r, msg, cap);
	if (rc == 0)
		rc = check_still_files(r, msg, cap);
	if (rc)
		report_free(r);
	return rc;
}

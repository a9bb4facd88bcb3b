/* SPDX-License-Identifier: MIT */
/* report.c: sets given by the caller, from a report reviewed by a person,
 * instead of walked and matched: each file with its identity as it was
 * scanned. Nothing here is taken as proven: the action functions check each
 * pair against that identity and compare it byte by byte before a change. */
#define _GNU_SOURCE /* S_IFREG */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "walk/walk.h"

/* A file as given, until ds_report_build() makes it a record: 56 bytes
 * and the path (a struct stat would be 144). */
struct ds_report_file {
	char *path;
	uint32_t set;
	uint32_t nlink;     /* its link count now (check_paths()), 0 when not known */
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

int ds_report_file(struct ds_walk *s, uint32_t set, const char *path, uint64_t dev, uint64_t ino,
				    uint64_t size, int64_t mtime_ns, int64_t ctime_ns)
{
	if (!s || !path || !*path || set == UINT32_MAX || size > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (s->core->ran)
		return DUPSCAN_E_STATE;
	if (DS_GROW(s->report, s->capreport, s->nreport + 1))
		return -ENOMEM;
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	s->report[s->nreport++] = (struct ds_report_file){ copy, set, 0, dev, ino, size, mtime_ns, ctime_ns };
	s->tree->from_report = true;
	return 0;
}

static struct timespec ns_time(int64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	if (t.tv_nsec < 0) {
		t.tv_sec--;
		t.tv_nsec += 1000000000;
	}
	return t;
}

/* The identity given, as the walk would have found it. */
static void given_stat(const struct ds_report_file *f, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = (dev_t)f->dev;
	st->st_ino = (ino_t)f->ino;
	st->st_size = (off_t)f->size;
	st->st_mtim = ns_time(f->mtime_ns);
	st->st_ctim = ns_time(f->ctime_ns);
	st->st_mode = S_IFREG;
	/* the kernel's link count tells two names of one inode from two files
	 * of one number (ds_collapse_links()) */
	st->st_nlink = f->nlink;
}

/* The files given, once they are records (or the scan is freed). */
void ds_report_free(struct ds_walk *s)
{
	for (size_t i = 0; i < s->nreport; i++)
		free(s->report[i].path);
	free(s->report);
	s->report = NULL;
	s->nreport = s->capreport = 0;
}

/* Every path must still name something that may be a file: a directory or a
 * symlink in its place makes the whole report invalid (nothing is acted on).
 * A path gone, or another file there, only fails its own check later. Each
 * file's link count is noted on the way. */
static int check_paths(struct ds_walk *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->nreport; i++) {
		struct stat st;
		if (lstat(s->report[i].path, &st) != 0)
			continue;
		s->report[i].nlink = st.st_nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st.st_nlink;
		if (S_ISREG(st.st_mode))
			continue;
		ds_report(s->core, s->report[i].path, DUPSCAN_E_NOTREG);
		rc = DUPSCAN_E_NOTREG;
	}
	return rc;
}

/* A record for f, under a directory of its own (a root named by the path's
 * directory part), with the identity given. */
static int add_file(struct ds_walk *s, const struct ds_report_file *f)
{
	const char *slash = strrchr(f->path, '/');
	size_t dlen = slash ? (size_t)(slash - f->path) + 1 : 0;
	char *dir = strndup(f->path, dlen ? dlen : 0);
	if (!dir)
		return -ENOMEM;
	struct stat dst;
	memset(&dst, 0, sizeof(dst));
	if (stat(dlen ? dir : ".", &dst) != 0)
		memset(&dst, 0, sizeof(dst));
	uint32_t d;
	int rc = ds_add_dir(s->tree, dir, dlen, DS_NONE, f->set, &dst, &d);
	if (rc == 0) {
		s->tree->dirs[d].pseudo = true;
		s->tree->dirs[d].prot = ds_under_protected(s->tree, dlen ? dir : ".");
		uint32_t before = s->tree->nrecs;
		struct stat st;
		given_stat(f, &st);
		rc = ds_add_rec(s->tree, f->path + dlen, strlen(f->path + dlen), d, &st);
		if (rc == 0 && s->tree->nrecs == before)
			rc = 1; /* the filter left it out */
	}
	free(dir);
	return rc < 0 ? rc : 0;
}

/* The index is a plain binary tree: keyed on the sets' numbers in order it
 * would be a list, each insert walking every set before it. A bijective
 * scramble of the number (splitmix64's finalizer) keeps it bushy. */
static uint64_t scramble(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* One file in two sets (paths of one inode, where the device keeps its
 * numbers: ds_collapse_links() made them one) says the report is wrong about
 * it: refused, each such path named. Where numbers are not kept, two paths
 * of one number are two files (a FUSE mount of two filesystems). */
static int check_one_set(struct ds_walk *s)
{
	int rc = 0;
	for (uint32_t i = 0; i < s->tree->nrecs; i++) {
		if (!(ds_rec(s->tree, i)->flags & DS_F_LINKED) || ds_rec_arg(s->tree, ds_rec_rep(s->tree, i)) == ds_rec_arg(s->tree, i))
			continue;
		char *p = ds_rec_path_alloc(s->tree, i);
		if (!p)
			return -ENOMEM;
		ds_report(s->core, p, DUPSCAN_E_TWO_SETS);
		free(p);
		rc = DUPSCAN_E_TWO_SETS;
	}
	return rc;
}

int ds_report_build(struct ds_walk *s)
{
	int rc = check_paths(s);
	uint32_t *order = NULL, *first = NULL, nsets = 0;
	for (size_t i = 0; i < s->nreport; i++)
		nsets = s->report[i].set + 1 > nsets ? s->report[i].set + 1 : nsets;
	/* each path given up as soon as its record holds it */
	for (size_t i = 0; rc == 0 && i < s->nreport; i++) {
		rc = add_file(s, &s->report[i]);
		free(s->report[i].path);
		s->report[i].path = NULL;
	}
	ds_report_free(s);
	if (rc == 0 && !(order = malloc((s->tree->nrecs ? s->tree->nrecs : 1) * sizeof(*order))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = ds_collapse_links(s->tree, order);
	if (rc == 0)
		rc = check_one_set(s);
	if (rc == 0)
		rc = ds_index_reserve(&s->tree->index, s->tree->nrecs);
	/* one class per set, named by its first inode */
	if (rc == 0 && !(first = malloc((nsets ? nsets : 1) * sizeof(*first))))
		rc = -ENOMEM;
	for (uint32_t k = 0; rc == 0 && k < nsets; k++)
		first[k] = DS_NONE;
	for (uint32_t i = 0; rc == 0 && i < s->tree->nrecs; i++) {
		struct ds_rec *r = ds_rec(s->tree, i);
		if ((r->flags & (DS_F_LINKED | DS_F_ALIAS)) || ds_index_has(&s->tree->index, i))
			continue;
		uint32_t set = ds_rec_arg(s->tree, i); /* its directory was added with the set's number */
		if (first[set] == DS_NONE)
			first[set] = i;
		r->flags |= DS_F_TRUSTED | DS_F_SETTLED;
		rc = ds_index_insert(&s->tree->index, i, first[set], scramble(set), set, ds_rec_size(s->tree, r));
	}
	free(first);
	free(order);
	return rc;
}

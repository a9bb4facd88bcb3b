/* SPDX-License-Identifier: MIT */
/* relocate.c: --move-to=DIR, moving each duplicate under DIR at its path
 * below its argument, never over an existing file. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "change.h"
#include "output/output.h"
#include "fsutil.h"

static void line(FILE *out, const char *tag, const char *path, const char *to, const char *why)
{
	fprintf(out, "   %s ", tag);
	fwrite(path, 1, strlen(path), out);
	if (to) {
		fputs(" -> ", out);
		fwrite(to, 1, strlen(to), out);
	}
	if (why)
		fprintf(out, " -- %s", why);
	fputc('\n', out);
}


/* DIR/relpath, or the first of DIR/relpath.1, .2, ... that does not exist. */
static char *free_name(const char *dir, const char *rel, int *err)
{
	size_t cap = strlen(dir) + strlen(rel) + 16;
	char *p = malloc(cap);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	for (int i = 0; i < 100000; i++) {
		if (i == 0)
			snprintf(p, cap, "%s/%s", dir, rel);
		else
			snprintf(p, cap, "%s/%s.%d", dir, rel, i);
		struct stat st;
		if (lstat(p, &st) == 0)
			continue;
		if (errno == ENOENT)
			return p;
		/* not a name that is taken (a file where a directory should be, ...):
		 * no suffix will do better */
		*err = -errno;
		free(p);
		return NULL;
	}
	free(p);
	*err = -EEXIST;
	return NULL;
}

/* Another name of an inode whose first name was moved as a copy (to another
 * filesystem) to twin_dest: the name is linked to that copy first, then taken
 * away here as -d removes it, so the names stay one inode there too, and a kill
 * between the two steps leaves both names, never neither. A name moved by a
 * rename needs none of this: the inode moves with it. */
static int move_as_link(struct act_ctx *a, const dupscan_file *keep, const dupscan_file *f,
			const char *twin_dest, const char *dest)
{
	struct stat made;
	if (a->flags & DUPSCAN_ACT_DRY_RUN)
		return dupscan_remove_duplicate(keep, f, a->flags);
	if (link(twin_dest, dest) != 0)
		return -errno;
	int rc = lstat(dest, &made) == 0 ? ds_fsync_dir_of(dest) : -errno;
	if (rc == 0)
		rc = dupscan_remove_duplicate(keep, f, a->flags);
	/* refused (changed, ...): the name made above goes again, if it is still ours */
	struct stat now;
	if (rc && lstat(dest, &now) == 0 && now.st_dev == made.st_dev && now.st_ino == made.st_ino)
		unlink(dest);
	return rc;
}

/* The content a move to another filesystem journals, so --undo can tell the
 * file from whatever has its name or its inode number later (a copy of its
 * own, cut short, say); a rename moves the inode itself and needs no read.
 * Names of one inode are read once. */
struct moved_content {
	dev_t dev;
	ino_t ino;
	uint64_t hash;
	bool ok;
};

static const uint64_t *content_of(struct moved_content *m, const char *path, const char *dest)
{
	struct stat st, dir;
	char *parent = strndup(dest, (size_t)(strrchr(dest, '/') - dest)); /* dest is DIR/relpath */
	int rc = parent ? stat(parent, &dir) : -1;
	free(parent);
	if (rc != 0 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev == dir.st_dev)
		return NULL;
	if (m->ok && m->dev == st.st_dev && m->ino == st.st_ino)
		return &m->hash;
	m->ok = dupscan_hash_file(path, NULL, &m->hash) == 0;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	return m->ok ? &m->hash : NULL;
}

static int journal_dir(void *a, const char *dir)
{
	return act_journal_mkdir(a, dir);
}

/* The folders above dest that are not there yet, made, each journaled
 * before it is made, so that --undo takes them away again once the files
 * moved into them are back. */
static int make_parents(struct act_ctx *a, const char *dest)
{
	size_t len = (size_t)(strrchr(dest, '/') - dest);
	if (a->flags & DUPSCAN_ACT_DRY_RUN)
		return 0;
	return ds_make_dirs_told(dest, len, 0777, a->journal ? journal_dir : NULL, a);
}

static int move_one(struct act_ctx *a, const dupscan_set *set, const dupscan_file *keep, const dupscan_file *f,
		    const char *twin_dest, struct moved_content *content, char **moved_to)
{
	const char *rel = dupscan_file_relpath(f);
	int rc = 0;
	/* someone may take the name between the look and the move: look again */
	for (int attempt = 0; attempt < 100; attempt++) {
		char *dest = free_name(a->o->move_to, rel, &rc);
		if (!dest)
			break;
		rc = make_parents(a, dest);
		const uint64_t *hash = rc == 0 && a->journal && !(a->flags & DUPSCAN_ACT_DRY_RUN)
					       ? content_of(content, dupscan_file_path(f), dest) : NULL;
		if (rc == 0)
			rc = act_journal(a, "move", set, keep, f, dest, hash);
		if (rc == 0)
			rc = twin_dest ? move_as_link(a, keep, f, twin_dest, dest)
				       : dupscan_move_duplicate(keep, f, dest, a->flags);
		if (rc == 0) {
			line(a->out, "[>]", dupscan_file_path(f), dest, NULL);
			act_prune(a, f);
			*moved_to = dest;
			return 0;
		}
		free(dest);
		if (rc != -EEXIST)
			break;
	}
	return rc;
}

int act_move(const dupscan_scan *scan, struct act_ctx *a)
{
	int failures = 0;
	size_t total = dupscan_set_count(scan);
	struct moved_content content = { 0, 0, 0, false };
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		const dupscan_file *keep = dupscan_set_file(set, keep_index(set, &a->o->keep));
		/* where the last inode moved as a copy went: its other names follow
		 * it there (inodes of the directory entries: a symlink is its own) */
		struct stat last = { 0 }, now;
		char *last_dest = NULL;
		fputc('\n', a->out);
		act_print_groups(set, 0, a->out); /* (--ignore-metadata: whose tags differ) */
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (f == keep || dupscan_file_is_protected(f) || dupscan_file_host(f)) {
				line(a->out, "[+]", dupscan_file_path(f), NULL,
				     f == keep ? NULL : dupscan_file_host(f) ? "on another host" : "protected");
				continue;
			}
			/* another name of the kept inode holds no data of its own */
			if (dupscan_same_file(f, keep)) {
				line(a->out, "[+]", dupscan_file_path(f), NULL, "a hard link of the kept file");
				continue;
			}
			bool entry = lstat(dupscan_file_path(f), &now) == 0;
			bool twin = entry && last_dest && S_ISREG(now.st_mode) && now.st_dev == last.st_dev &&
				    now.st_ino == last.st_ino;
			char *dest = NULL;
			int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED
				 : move_one(a, set, keep, f, twin ? last_dest : NULL, &content, &dest);
			struct stat moved;
			if (rc == 0 && !twin && entry && S_ISREG(now.st_mode) && !(a->flags & DUPSCAN_ACT_DRY_RUN) &&
			    lstat(dest, &moved) == 0 && (moved.st_dev != now.st_dev || moved.st_ino != now.st_ino)) {
				free(last_dest);
				last = now;
				last_dest = dest;
			} else {
				free(dest);
			}
			if (rc) {
				line(a->out, "[!]", dupscan_file_path(f), NULL, dupscan_strerror(rc));
				failures++;
			}
		}
		free(last_dest);
		fflush(a->out);
	}
	return failures;
}

/* SPDX-License-Identifier: MIT */
/* act_move.c: --move-to=DIR, moving each duplicate under DIR at its path
 * below its argument, never over an existing file. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dirs.h"

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

/* Another name of an inode already moved to twin_dest: drop this name (its
 * content is at twin_dest and in the kept file, which the removal checks),
 * then give twin_dest this name too, so the names stay one inode (across
 * filesystems too). */
static int move_as_link(struct act_ctx *a, const dupscan_file *keep, const dupscan_file *f,
			const char *twin_dest, const char *dest)
{
	int rc = dupscan_remove_duplicate(keep, f, a->flags);
	if (rc || (a->flags & DUPSCAN_ACT_DRY_RUN))
		return rc;
	return link(twin_dest, dest) == 0 ? 0 : -errno;
}

static int move_one(struct act_ctx *a, const dupscan_file *keep, const dupscan_file *f, const char *twin_dest,
		    char **moved_to)
{
	const char *rel = dupscan_file_relpath(f);
	int rc = 0;
	/* someone may take the name between the look and the move: look again */
	for (int attempt = 0; attempt < 100; attempt++) {
		char *dest = free_name(a->o->move_to, rel, &rc);
		if (!dest)
			break;
		if (!(a->flags & DUPSCAN_ACT_DRY_RUN))
			rc = cli_make_dirs(dest, (size_t)(strrchr(dest, '/') - dest), 0777);
		if (rc == 0)
			rc = act_journal(a, "move", NULL, keep, f, dest, NULL);
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
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		const dupscan_file *keep = act_kept(set, a->o);
		/* where the last moved inode went: its other names follow it there;
		 * inodes of the directory entries themselves (a symlink is its own) */
		struct stat last = { 0 }, now;
		char *last_dest = NULL;
		fputc('\n', a->out);
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (f == keep || dupscan_file_is_protected(f)) {
				line(a->out, "[+]", dupscan_file_path(f), NULL, f == keep ? NULL : "protected");
				continue;
			}
			/* another name of the kept inode holds no data of its own */
			if (dupscan_file_dev(f) == dupscan_file_dev(keep) && dupscan_file_ino(f) == dupscan_file_ino(keep)) {
				line(a->out, "[+]", dupscan_file_path(f), NULL, "a hard link of the kept file");
				continue;
			}
			bool entry = lstat(dupscan_file_path(f), &now) == 0;
			bool twin = entry && last_dest && !S_ISLNK(now.st_mode) && now.st_dev == last.st_dev &&
				    now.st_ino == last.st_ino;
			char *dest = NULL;
			int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED
				 : move_one(a, keep, f, twin ? last_dest : NULL, &dest);
			if (rc == 0 && !twin && entry && S_ISREG(now.st_mode)) {
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

/* SPDX-License-Identifier: MIT */
/* act_link.c: -L and -l, replacing each duplicate by a link to its set's first file. */
#include <string.h>

#include "cli.h"

static void show(FILE *out, const char *arrow, const char *path)
{
	fputs(arrow, out);
	fputc(' ', out);
	fwrite(path, 1, strlen(path), out);
	fputc('\n', out);
}

/* The devices where hard links cannot be checked (DUPSCAN_E_LINK_UNCHECKED):
 * said once each, then their pairs are left without a word or a journal line. */
#define UNCHECKED_MAX 16
struct unchecked {
	uint64_t dev[UNCHECKED_MAX];
	size_t n;
	unsigned long pairs;
};

static bool is_unchecked(const struct unchecked *u, const dupscan_file *keep)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->dev[i] == dupscan_file_dev(keep))
			return true;
	return false;
}

static void note_unchecked(struct unchecked *u, const dupscan_file *keep, FILE *out)
{
	u->pairs++;
	if (is_unchecked(u, keep))
		return;
	if (u->n < UNCHECKED_MAX)
		u->dev[u->n++] = dupscan_file_dev(keep);
	fflush(out);
	fputs("dupscan: not hard linking on the filesystem of '", stderr);
	fwrite(dupscan_file_path(keep), 1, strlen(dupscan_file_path(keep)), stderr);
	fputs("': it does not keep inode numbers (FUSE, SMB with noserverino), so a new link "
	      "cannot be checked to reach the kept file; its duplicates are left as they are "
	      "(run dupscan -L on the host that holds them)\n", stderr);
}

int act_link(const dupscan_scan *scan, struct act_ctx *a, int kind)
{
	FILE *out = a->out;
	int failures = 0;
	struct unchecked unchecked = { .n = 0 };
	size_t total = dupscan_set_count(scan);
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t n = dupscan_set_file_count(set);
		const dupscan_file *keep = act_kept(set, a->o);
		/* a set made only of hard links to one inode has nothing to link */
		size_t others = 0;
		for (size_t k = 0; k < n; k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			others += !dupscan_same_file(f, keep);
		}
		if (others == 0 && kind == DUPSCAN_LINK_HARD)
			continue;
		show(out, "[SRC]", dupscan_file_path(keep));
		/* the content's hash goes in the journal: --undo checks that what it
		 * restores is that content (one read of the kept file per set) */
		uint64_t hash = 0;
		bool hashed = a->journal && !(a->flags & DUPSCAN_ACT_DRY_RUN) &&
			      dupscan_hash_file(dupscan_file_path(keep), NULL, &hash) == 0;
		for (size_t k = 0; k < n; k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (f == keep)
				continue;
			if (dupscan_file_is_protected(f)) {
				show(out, "[PRO]", dupscan_file_path(f));
				continue;
			}
			int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED : 0;
			if (rc == 0 && kind == DUPSCAN_LINK_HARD && is_unchecked(&unchecked, keep))
				rc = DUPSCAN_E_LINK_UNCHECKED;
			/* a hard link already in place needs no journal line */
			bool same = dupscan_same_file(f, keep);
			if (rc == 0 && !(same && kind == DUPSCAN_LINK_HARD))
				rc = act_journal(a, kind == DUPSCAN_LINK_HARD ? "hardlink" : "symlink", set, keep, f, NULL,
						 hashed ? &hash : NULL);
			if (rc == 0)
				rc = dupscan_replace_with_link(keep, f, kind, a->flags);
			if (rc == 0) {
				show(out, kind == DUPSCAN_LINK_HARD ? "---->" : "-@@->", dupscan_file_path(f));
			} else if (rc == DUPSCAN_E_ALREADY) {
				show(out, "-==->", dupscan_file_path(f));
			} else if (rc == DUPSCAN_E_LINK_UNCHECKED) {
				show(out, "-//->", dupscan_file_path(f));
				note_unchecked(&unchecked, keep, out);
				failures++;
			} else {
				show(out, "-//->", dupscan_file_path(f));
				fflush(out);
				fprintf(stderr, "dupscan: warning: unable to %s link '", kind == DUPSCAN_LINK_HARD ? "hard" : "soft");
				fwrite(dupscan_file_path(f), 1, strlen(dupscan_file_path(f)), stderr);
				fputs("' -> '", stderr);
				fwrite(dupscan_file_path(keep), 1, strlen(dupscan_file_path(keep)), stderr);
				fprintf(stderr, "': %s\n", dupscan_strerror(rc));
				failures++;
			}
		}
		fflush(out);
	}
	if (unchecked.pairs > 1)
		fprintf(stderr, "dupscan: %lu duplicates not hard linked where inode numbers are not kept\n", unchecked.pairs);
	return failures;
}

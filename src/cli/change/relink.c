/* SPDX-License-Identifier: MIT */
/* relink.c: -L and -l, replacing each duplicate by a link to its set's first
 * file of the same owner, group, mode, ACL and labels. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "keep.h"

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
	msg_say("not hard linking on the filesystem of '%s': it does not keep inode numbers (FUSE, SMB with "
		"noserverino), so a new link cannot be checked to reach the kept file; its duplicates are left as they "
		"are (run dupscan -L on the host that holds them)", dupscan_file_path(keep));
}

struct link_run {
	struct act_ctx *a;
	int kind;
	struct unchecked unchecked;
	int failures;
};

/* Why f was not linked to keep, on stderr. */
static void warn_not_linked(const struct link_run *lr, const dupscan_file *f, const dupscan_file *keep, int rc)
{
	fflush(lr->a->out);
	msg_warn("unable to %s link '%s' -> '%s': %s", lr->kind == DUPSCAN_LINK_HARD ? "hard" : "soft",
		 dupscan_file_path(f), dupscan_file_path(keep), dupscan_strerror(rc));
}

/* Link f to keep, and say how it went. */
static void link_one(struct link_run *lr, const dupscan_set *set, const dupscan_file *keep, const dupscan_file *f,
		     const uint64_t *hash)
{
	struct act_ctx *a = lr->a;
	FILE *out = a->out;
	bool hard = lr->kind == DUPSCAN_LINK_HARD;
	if (dupscan_file_is_protected(f)) {
		show(out, "[PRO]", dupscan_file_path(f));
		return;
	}
	int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED : 0;
	if (rc == 0 && hard && is_unchecked(&lr->unchecked, keep))
		rc = DUPSCAN_E_LINK_UNCHECKED;
	/* a hard link already in place needs no journal line */
	bool same = dupscan_same_file(f, keep);
	if (rc == 0 && !(same && hard))
		rc = act_journal(a, hard ? "hardlink" : "symlink", set, keep, f, NULL, hash);
	if (rc == 0)
		rc = dupscan_replace_with_link(keep, f, lr->kind, a->flags);
	if (rc == 0) {
		show(out, hard ? "---->" : "-@@->", dupscan_file_path(f));
		return;
	}
	if (rc == DUPSCAN_E_ALREADY) {
		show(out, "-==->", dupscan_file_path(f));
		return;
	}
	show(out, "-//->", dupscan_file_path(f));
	lr->failures++;
	if (rc == DUPSCAN_E_LINK_UNCHECKED) {
		note_unchecked(&lr->unchecked, keep, out);
	} else if (!act_access_refused(out, "Not linked", f, keep, rc)) {
		warn_not_linked(lr, f, keep, rc);
	}
}

/* The files of a set in classes of the same bytes (--ignore-metadata: a
 * set's files may differ in their tags) and one owner, group, mode, ACL and
 * labels (not with --ignore-access): only files of one class may be linked
 * together. cls[k] is file k's; @return how many classes, 0 out of memory. */
static size_t link_classes(const dupscan_set *set, bool ignore, size_t *cls)
{
	size_t n = dupscan_set_file_count(set), nclass = 0;
	for (size_t k = 0; k < n; k++) {
		const dupscan_file *f = dupscan_set_file(set, k);
		size_t c = 0;
		/* a file that cannot be looked at goes alone: its link fails and says why */
		for (; c < nclass; c++) {
			size_t rep = 0;
			while (cls[rep] != c)
				rep++;
			const dupscan_file *r = dupscan_set_file(set, rep);
			if (dupscan_same_bytes(r, f) && (ignore || dupscan_access_differs(r, f) == 0))
				break;
		}
		cls[k] = c;
		nclass += c == nclass;
	}
	return nclass;
}

/* Link the files of class c to its kept file (the keep rules' choice among
 * them); the files of the classes alone are refused under the set's first
 * class, said with what differs from its kept file. */
static void link_class(struct link_run *lr, const dupscan_set *set, const size_t *cls, size_t c, const bool *alone,
		       bool *among)
{
	struct act_ctx *a = lr->a;
	size_t n = dupscan_set_file_count(set);
	for (size_t k = 0; k < n; k++)
		among[k] = cls[k] == c;
	const dupscan_file *keep = dupscan_set_file(set, keep_index_among(set, &a->o->keep, among));
	/* a class made only of hard links to one inode has nothing to link */
	size_t others = 0;
	for (size_t k = 0; k < n; k++)
		others += among[k] && !dupscan_same_file(dupscan_set_file(set, k), keep);
	if (others == 0 && lr->kind == DUPSCAN_LINK_HARD && !alone)
		return;
	show(a->out, "[SRC]", dupscan_file_path(keep));
	/* the content's hash goes in the journal: --undo checks that what it
	 * restores is that content (one read of the kept file per class) */
	uint64_t hash = 0;
	bool hashed = a->journal && !(a->flags & DUPSCAN_ACT_DRY_RUN) && others > 0 &&
		      dupscan_hash_file(dupscan_file_path(keep), NULL, &hash) == 0;
	for (size_t k = 0; k < n && !cli_interrupted() && !a->stop; k++) {
		const dupscan_file *f = dupscan_set_file(set, k);
		if (among[k] && f != keep) {
			link_one(lr, set, keep, f, hashed ? &hash : NULL);
		} else if (alone && alone[cls[k]] && !dupscan_file_is_protected(f)) {
			show(a->out, "-//->", dupscan_file_path(f));
			if (dupscan_same_bytes(keep, f))
				act_access_refused(a->out, "Not linked", f, keep, dupscan_access_differs(keep, f));
			else
				warn_not_linked(lr, f, keep, DUPSCAN_E_PAYLOAD_ONLY);
			lr->failures++;
		}
	}
	fflush(a->out);
}

/* One set: its first class (the one the keep rules choose from first), with
 * the files alone in their class refused under it; then every other class
 * of two files or more, linked on its own. */
static int link_set(struct link_run *lr, const dupscan_set *set)
{
	size_t n = dupscan_set_file_count(set);
	size_t *cls = malloc(n * sizeof(*cls)), *count = calloc(n, sizeof(*count));
	bool *among = malloc(n * sizeof(*among)), *alone = calloc(n, sizeof(*alone));
	size_t nclass = cls && count && among && alone ? link_classes(set, lr->a->flags & DUPSCAN_ACT_IGNORE_ACCESS, cls) : 0;
	if (nclass) {
		size_t first = cls[keep_index(set, &lr->a->o->keep)];
		for (size_t k = 0; k < n; k++)
			count[cls[k]]++;
		bool any = false;
		for (size_t c = 0; c < nclass; c++)
			any |= alone[c] = count[c] == 1 && c != first;
		link_class(lr, set, cls, first, any ? alone : NULL, among);
		for (size_t c = 0; c < nclass; c++)
			if (c != first && count[c] > 1 && !cli_interrupted() && !lr->a->stop)
				link_class(lr, set, cls, c, NULL, among);
	}
	free(cls);
	free(count);
	free(among);
	free(alone);
	return nclass ? 0 : -ENOMEM;
}

int act_link(const dupscan_scan *scan, struct act_ctx *a, int kind)
{
	struct link_run lr = { .a = a, .kind = kind };
	size_t total = dupscan_set_count(scan);
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		if (link_set(&lr, dupscan_get_set(scan, i)) != 0) {
			msg_say("out of memory");
			return lr.failures + 1;
		}
	}
	if (lr.unchecked.pairs > 1)
		msg_say("%lu duplicates not hard linked where inode numbers are not kept",
			lr.unchecked.pairs);
	return lr.failures;
}

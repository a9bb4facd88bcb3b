/* SPDX-License-Identifier: MIT */
/* change.h: the actions over the sets (-d, -L, -l, -B, --move-to) and what
 * they share: the file a set keeps, the journal line before each change. */
#ifndef DUPSCAN_CLI_CHANGE_H
#define DUPSCAN_CLI_CHANGE_H

#include "cli.h"

/* actions: each @return the number of files it failed to act on */
struct journal;
struct act_ctx {
	const struct cli_opts *o;
	unsigned flags;         /* DUPSCAN_ACT_* */
	FILE *out;
	struct journal *journal; /* NULL with --dry-run */
	bool stop;              /* the journal or the output failed: no further change */
	bool named;             /* the journal's path was said (before the first change) */
};
int act_delete(const dupscan_scan *scan, struct act_ctx *a);
int act_link(const dupscan_scan *scan, struct act_ctx *a, int kind);
int act_dedupe(const dupscan_scan *scan, struct act_ctx *a);
int act_move(const dupscan_scan *scan, struct act_ctx *a);
/* change.c */
/* Journal a change before making it (dest: for "move"; hash: the content's
 * XXH64, or NULL). @return 0; DUPSCAN_E_CHANGED when dup or keep is gone (skip
 * this file); or -errno after telling the user and setting a->stop. */
int act_journal(struct act_ctx *a, const char *kind, const dupscan_set *set, const dupscan_file *keep,
		const dupscan_file *dup, const char *dest, const uint64_t *hash);
/* Journal a folder --move-to is about to make. @return as act_journal(). */
int act_journal_mkdir(struct act_ctx *a, const char *dir);
/* A refusal because f's access (owner, group, mode, ACL, labels) differs
 * from keep's, said on stderr as "PATH: WHAT: its owner differs from KEPT's
 * (f's, keep's)". @return false when code is no such refusal (nothing said). */
bool act_access_refused(FILE *out, const char *what, const dupscan_file *f, const dupscan_file *keep, int code);
/* --prune-empty-dirs: remove the directories a file left empty, up to (not
 * including) its argument. */
void act_prune(struct act_ctx *a, const dupscan_file *gone);
#endif /* DUPSCAN_CLI_CHANGE_H */

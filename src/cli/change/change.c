/* SPDX-License-Identifier: MIT */
/* change.c: what every destructive action shares: journaling a change before it is made, and --prune-empty-dirs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "change.h"
#include "journal.h"

/* Before a change is journaled: the listing of what was done is the user's
 * record of it, so once it cannot be written (a pipe closed by `head`, a
 * full disk) no more changes are made; those made are in the journal.
 * @return 0 or DUPSCAN_E_CANCELED (said, a->stop set). */
static int output_open(struct act_ctx *a)
{
	if (fflush(a->out) == 0 && !ferror(a->out))
		return 0;
	msg_say("output closed (%s): stopping before the next change", strerror(errno));
	a->stop = true;
	return DUPSCAN_E_CANCELED;
}

/* After a journal line was written (rc, its result): a failure said and the
 * run stopped; the journal's path said before the first change. */
static int recorded(struct act_ctx *a, int rc)
{
	if (rc) {
		fflush(a->out);
		msg_say("journal '%s': %s; stopping before the next change", journal_path(a->journal),
			rc == -ENOTJOURNAL ? "is no longer a dupscan journal" : dupscan_strerror(rc));
		a->stop = true;
	} else if (!a->named) {
		/* named before the first change, wherever stdout goes */
		a->named = true;
		/* (what --undo can give back of it: a deletion, nothing) */
		if (!a->o->journal)
			msg_say("journal of this run: %s (%s)", journal_path(a->journal),
				a->o->action == 'd' ? "a record of what is deleted: deletions cannot be undone"
				: a->o->action == 'B' ? "a record: deduplication changes no file's content"
						      : "dupscan --undo=FILE reverses it");
	}
	return rc;
}

int act_journal_mkdir(struct act_ctx *a, const char *dir)
{
	if (!a->journal || (a->flags & DUPSCAN_ACT_DRY_RUN))
		return 0;
	int rc = output_open(a);
	return rc ? rc : recorded(a, journal_mkdir(a->journal, dir));
}

int act_journal(struct act_ctx *a, const char *kind, const dupscan_set *set, const dupscan_file *keep,
		const dupscan_file *dup, const char *dest, const uint64_t *hash)
{
	if (!a->journal || (a->flags & DUPSCAN_ACT_DRY_RUN))
		return 0;
	int out_rc = output_open(a);
	if (out_rc)
		return out_rc;
	struct journal_change c = { .kind = kind, .kept = dupscan_file_path(keep), .dup = dupscan_file_path(dup),
				    .kept_remote = dupscan_file_host(keep) != NULL, .dest = dest, .hash = hash };
	char target[PATH_MAX];
	/* gone or unreadable since the scan: this file is skipped, the run goes on */
	if (lstat(c.dup, &c.entry) != 0 || (!dest && !dupscan_file_host(keep) && stat(c.kept, &c.kept_st) != 0))
		return DUPSCAN_E_CHANGED;
	c.size = (uint64_t)c.entry.st_size; /* a move's hash is of the file moved, just read */
	if (!dest && dupscan_file_host(keep)) {
		/* kept on another host: recorded as its server checks it (what
		 * it says, said: a changed file, or why it could not tell) */
		int rc = dupscan_check_unchanged(keep);
		if (rc)
			return rc;
		c.kept_st.st_size = (off_t)dupscan_file_size(keep);
		c.kept_st.st_dev = (dev_t)dupscan_file_dev(keep);
		c.kept_st.st_ino = (ino_t)dupscan_file_ino(keep);
		c.kept_st.st_mtim.tv_sec = dupscan_file_mtime_ns(keep) / 1000000000;
		c.kept_st.st_mtim.tv_nsec = dupscan_file_mtime_ns(keep) % 1000000000;
	}
	ssize_t n = !dest && S_ISLNK(c.entry.st_mode) ? readlink(c.dup, target, sizeof(target) - 1) : -1;
	if (n >= 0) {
		target[n] = '\0';
		c.link_target = target;
	}
	/* the other names of the duplicate's inode: --undo links it back to
	 * one of them, so names that shared an inode share it again */
	for (size_t k = 0; set && k < dupscan_set_file_count(set) && c.nsiblings < JOURNAL_MAX_SIBLINGS; k++) {
		const dupscan_file *f = dupscan_set_file(set, k);
		if (f != dup && !dupscan_file_host(f) && dupscan_same_file(f, dup))
			c.siblings[c.nsiblings++] = dupscan_file_path(f);
	}
	return recorded(a, journal_record(a->journal, &c));
}

static bool dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool empty = true;
	struct dirent *e;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

void act_prune(struct act_ctx *a, const dupscan_file *gone)
{
	if (!a->o->prune_empty_dirs || (a->flags & DUPSCAN_ACT_DRY_RUN))
		return;
	const char *path = dupscan_file_path(gone), *rel = dupscan_file_relpath(gone);
	char *p = strdup(path);
	if (!p)
		return;
	/* only the directories between the file and its argument: never the argument */
	char *below = p + (rel - path);
	for (char *slash = strrchr(below, '/'); slash; slash = strrchr(below, '/')) {
		*slash = '\0';
		struct stat st;
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || !dir_is_empty(p))
			break;
		if (a->journal && journal_rmdir(a->journal, p, &st) != 0) {
			a->stop = true;
			break;
		}
		if (rmdir(p) != 0)
			break;
		fputs("   [-] ", a->out);
		fwrite(p, 1, strlen(p), a->out);
		fputs("/\n", a->out);
	}
	free(p);
}

/* "name (uid)" of a user or group id, into buf. */
static const char *id_name(char *buf, size_t cap, unsigned id, bool group)
{
	const struct passwd *pw = group ? NULL : getpwuid((uid_t)id);
	const struct group *gr = group ? getgrgid((gid_t)id) : NULL;
	const char *name = pw ? pw->pw_name : gr ? gr->gr_name : NULL;
	if (name)
		snprintf(buf, cap, "%s", name);
	else
		snprintf(buf, cap, "%u", id);
	return buf;
}

bool act_access_refused(FILE *out, const char *what, const dupscan_file *f, const dupscan_file *keep, int code)
{
	static const struct { int code; const char *attr; } attrs[] = {
		{ DUPSCAN_E_ACCESS_OWNER, "owner" }, { DUPSCAN_E_ACCESS_GROUP, "group" },
		{ DUPSCAN_E_ACCESS_MODE, "mode" }, { DUPSCAN_E_ACCESS_ACL, "ACL" },
		{ DUPSCAN_E_ACCESS_LABEL, "security label" },
	};
	const char *attr = NULL;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].code == code)
			attr = attrs[i].attr;
	if (!attr)
		return false;
	/* the two values, as they are now, for the owner, group and mode */
	char detail[160] = "", x[64], y[64];
	struct stat sf, sk;
	if (code != DUPSCAN_E_ACCESS_ACL && code != DUPSCAN_E_ACCESS_LABEL && stat(dupscan_file_path(f), &sf) == 0 &&
	    stat(dupscan_file_path(keep), &sk) == 0) {
		if (code == DUPSCAN_E_ACCESS_MODE)
			snprintf(detail, sizeof(detail), " (%04o, %04o)", (unsigned)(sf.st_mode & 07777),
				 (unsigned)(sk.st_mode & 07777));
		else
			snprintf(detail, sizeof(detail), " (%s, %s)",
				 id_name(x, sizeof(x), code == DUPSCAN_E_ACCESS_GROUP ? sf.st_gid : sf.st_uid, code == DUPSCAN_E_ACCESS_GROUP),
				 id_name(y, sizeof(y), code == DUPSCAN_E_ACCESS_GROUP ? sk.st_gid : sk.st_uid, code == DUPSCAN_E_ACCESS_GROUP));
	}
	fflush(out);
	msg_say("%s: %s: its %s differs from %s's%s", dupscan_file_path(f), what, attr, dupscan_file_path(keep), detail);
	return true;
}

/* SPDX-License-Identifier: MIT */
/* undo.c: --undo, reading a journal back and reversing its changes newest
 * first (moves in undo_move.c, links in undo_link.c, the steps they share in
 * undo_steps.c).
 * Every name it gives back is checked to hold the content the journal
 * recorded, and every step may be cut at any instant and the undo run again:
 * what it makes is made under a name of its own, checked, then named; what it
 * removes goes last, and only while it is still what was checked. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "msg.h"
#include "undo.h"

/* ---- reading the journal ---- */

/* Split a line at tabs and undo the escapes in place. @return 0, or -1 when malformed. */
static int parse(char *line, struct entry *e)
{
	e->n = 0;
	for (char *s = line; s && e->n < UNDO_MAXF;) {
		char *tab = strchr(s, '\t');
		if (tab)
			*tab = '\0';
		char *w = s;
		for (char *r = s; *r; r++) {
			if (*r != '\\') {
				*w++ = *r;
			} else if (r[1] == '\\') {
				*w++ = '\\';
				r++;
			} else if (r[1] == 'x' && r[2] && r[3]) {
				char hex[3] = { r[2], r[3], 0 };
				char *end;
				long v = strtol(hex, &end, 16);
				if (*end)
					return -1;
				*w++ = (char)v;
				r += 3;
			} else {
				return -1;
			}
		}
		*w = '\0';
		e->f[e->n++] = s;
		s = tab ? tab + 1 : NULL;
	}
	return 0;
}

static void content_of(struct content *c, const char *size, const char *hash)
{
	char *end;
	c->size = -1;
	c->hashed = false;
	long long v = strtoll(size, &end, 10);
	if (end == size || *end || v < 0)
		return;
	c->size = v;
	c->hash = strtoull(hash, &end, 16);
	c->hashed = strcmp(hash, "-") != 0 && *hash && !*end;
}

/* Where the line's other names start, and the content it recorded: a move
 * since 0.9 has its size and hash before its names (older ones none; names
 * are absolute, a size is not), a link its kept file's (with its hash since
 * 0.5). */
static void read_fields(struct entry *e)
{
	e->want.size = -1;
	e->want.hashed = false;
	e->names = e->n;
	if (strcmp(e->f[0], "move") == 0 && e->n >= 5) {
		e->names = 5;
		if (e->n >= 7 && e->f[5][0] != '/') {
			e->names = 7;
			content_of(&e->want, e->f[5], e->f[6]);
		}
	} else if (e->n >= 10) {
		e->names = 17;
		content_of(&e->want, e->f[8], e->n > 14 ? e->f[14] : "-");
	}
}

/* A folder --move-to made: taken away once what was moved into it is back
 * (lines are undone newest first), and only while it is an empty folder:
 * anything put there since stays, and so does the folder. */
static int undo_mkdir(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (rmdir(dir) == 0) {
		undo_say("removed", dir, "a folder --move-to made");
		return 0;
	}
	/* (said, but no change of a file's: not counted as one not undone) */
	if (errno != ENOTEMPTY && errno != EEXIST)
		undo_complain(dir, strerror(errno));
	return 0;
}

static int undo_one(struct undo_state *u, const struct entry *e)
{
	if (e->run != u->run) {
		undo_forget(&u->links);
		undo_forget(&u->moves);
		u->run = e->run;
	}
	const char *k = e->f[0];
	if (strcmp(k, "move") == 0 && e->n >= 3)
		return undo_move(u, e);
	if ((strcmp(k, "hardlink") == 0 || strcmp(k, "symlink") == 0) && e->n >= 3)
		return undo_link(u, e, k[0] == 's');
	if (strcmp(k, "delete") == 0 && e->n >= 3) {
		/* the copy it was deleted for: a local path, or HOST:PATH */
		char why[PATH_MAX + 96];
		snprintf(why, sizeof(why), "was deleted (without --move-to): cannot be undone; its copy was kept at %s",
			 e->f[1]);
		undo_complain(e->f[2], why);
		return 1;
	}
	if (strcmp(k, "dedupe") == 0 && e->n >= 3) {
		undo_say("unchanged", e->f[2], "deduplication never changed its content");
		return 0;
	}
	if (strcmp(k, "rmdir") == 0 && e->n >= 3) {
		struct stat st;
		if (lstat(e->f[1], &st) == 0)
			return 0;
		int rc = ds_make_dirs(e->f[1], strlen(e->f[1]), (mode_t)strtol(e->f[2], NULL, 8));
		if (rc) {
			undo_complain(e->f[1], strerror(-rc));
			return 1;
		}
		undo_say("restored", e->f[1], NULL);
		return 0;
	}
	if (strcmp(k, "mkdir") == 0 && e->n >= 2)
		return undo_mkdir(e->f[1]);
	undo_complain(k, "unknown journal entry");
	return 1;
}

struct lines {
	struct entry *v;
	size_t n;
	unsigned torn;  /* the line cut short, 0 when none */
	unsigned count; /* lines read */
	bool magic;
	char *first;    /* the first line when it was cut short, else NULL */
};

/* Every change line of the journal f, parsed. @return 0, 1 (out of memory)
 * or 2 (a malformed line), said on stderr. */
static int read_lines(FILE *f, const char *path, struct lines *l)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned run = 0;
	int status = 0;
	while (status == 0 && (len = getline(&line, &cap, f)) >= 0) {
		l->count++;
		/* a line without its newline was cut short (a crash, a full disk):
		 * journal lines are written whole before their change is made, so
		 * its change never happened; it can only be the last */
		if (len == 0 || line[len - 1] != '\n') {
			l->torn = l->count;
			if (l->count == 1)
				l->first = strndup(line, (size_t)len);
			break;
		}
		line[--len] = '\0';
		if (l->count == 1)
			l->magic = strcmp(line, JOURNAL_MAGIC_LINE) == 0;
		if (strncmp(line, "run\t", 4) == 0)
			run++;
		if (line[0] == '#' || line[0] == '\0' || strncmp(line, "run\t", 4) == 0)
			continue;
		struct entry *nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
		char *copy = strdup(line);
		if (!nv || !copy) {
			free(copy);
			l->v = nv ? nv : l->v;
			msg_say("--undo: out of memory");
			status = 1;
			break;
		}
		l->v = nv;
		if (parse(copy, &l->v[l->n]) != 0) {
			msg_say("--undo: '%s' line %u: malformed; stopped before undoing anything",
				path, l->count);
			free(copy);
			status = 2;
			break;
		}
		read_fields(&l->v[l->n]);
		l->v[l->n].run = run;
		l->v[l->n++].lineno = l->count;
	}
	free(line);
	return status;
}

int journal_undo(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		msg_say("--undo: '%s': %s", path, strerror(errno));
		return 2;
	}
	struct lines l = { NULL, 0, 0, 0, false, NULL };
	/* a folder, a device, an empty file or any other text holds no change:
	 * said as a mistake, not as "nothing to undo" (a journal begins with its
	 * magic line, written before its file has a name) */
	struct stat st;
	int status = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? read_lines(f, path, &l) : 0;
	fclose(f);
	/* its first line cut short (a full disk under a journal given empty):
	 * begun, and nothing recorded */
	bool begun = l.torn == 1 && l.n == 0 && l.first && strncmp(l.first, JOURNAL_MAGIC_LINE, strlen(l.first)) == 0;
	if (status == 0 && !l.magic && !begun) {
		msg_say("--undo: '%s' is not a dupscan journal", path);
		status = 2;
	}
	if (status == 0 && l.torn > 1)
		msg_say("--undo: '%s' line %u: incomplete (the run stopped while writing it, "
			"so its change was never made): ignored", path, l.torn);
	if (status == 0 && l.n == 0)
		puts("nothing to undo");
	/* newest first: a later change may stand on an earlier one */
	struct undo_state u = { { NULL, 0 }, { NULL, 0 }, 0 };
	size_t failed = 0;
	for (size_t i = l.n; status != 2 && i-- > 0;)
		failed += undo_one(&u, &l.v[i]) != 0;
	if (failed) {
		fflush(stdout);
		/* (the folders --move-to made are no change of the user's files) */
		size_t changes = 0;
		for (size_t i = 0; i < l.n; i++)
			changes += strcmp(l.v[i].f[0], "mkdir") != 0;
		msg_say("--undo: %zu of %zu changes could not be undone (named above)", failed, changes);
		status = status ? status : 1;
	}
	undo_forget(&u.links);
	undo_forget(&u.moves);
	free(u.links.v);
	free(u.moves.v);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].f[0]);
	free(l.v);
	free(l.first);
	if (fflush(stdout) != 0)
		status = status ? status : 1;
	return status;
}

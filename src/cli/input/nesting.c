/* SPDX-License-Identifier: MIT */
/* nesting.c: where the command line's paths lie against each other. */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hosts.h"
#include "nesting.h"

int nest_in(const char *inner, const char *outer)
{
	char *i = realpath(inner, NULL), *o = realpath(outer, NULL);
	int rc = 0;
	if ((!i || !o) && errno == ENOMEM)
		rc = -ENOMEM;
	else if (i && o) {
		size_t n = strlen(o);
		if (strcmp(i, o) == 0)
			rc = 2;
		else if (strncmp(i, o, n) == 0 && (i[n] == '/' || (n == 1 && o[0] == '/')))
			rc = 1;
	}
	free(i);
	free(o);
	return rc;
}

/* The nearest folder at or above path that exists: can --move-to be made
 * there? @return 0 or -errno (ENOTDIR: a file is in the way). */
static int can_make(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (;;) {
		struct stat st;
		if (stat(buf, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				return -ENOTDIR;
			return access(buf, W_OK | X_OK) == 0 ? 0 : -errno;
		}
		if (errno != ENOENT)
			return -errno;
		char *slash = strrchr(buf, '/');
		while (slash && slash > buf && slash[1] == '\0') { /* "dir/" */
			*slash = '\0';
			slash = strrchr(buf, '/');
		}
		if (!slash)
			snprintf(buf, sizeof(buf), ".");
		else if (slash == buf)
			buf[1] = '\0';
		else
			*slash = '\0';
	}
}

/* Check dest against one scanned path: @return 0, EXIT_USAGE (said), or 1
 * when dest lies inside it (said once by the caller). */
static int against(const char *dest, const char *scanned)
{
	if (remote_arg(scanned))
		return 0;
	int in = nest_in(dest, scanned), holds = in ? 0 : nest_in(scanned, dest);
	if (in == 2 || holds >= 1) {
		msg_say("--move-to '%s': %s the scanned path '%s'; name a folder outside it", dest,
			in == 2 ? "is" : "holds", scanned);
		return EXIT_USAGE;
	}
	return in == 1;
}

int moveto_check(const struct cli_opts *o, struct moveto_prune *m)
{
	memset(m, 0, sizeof(*m));
	if (!o->move_to)
		return 0;
	if (tilde_slip("--move-to", o->move_to))
		return EXIT_USAGE;
	int rc = can_make(o->move_to);
	if (rc) {
		msg_say("--move-to '%s': %s%s; nothing was changed", o->move_to,
			rc == -ENOTDIR ? "" : "cannot be made: ", strerror(-rc));
		return EXIT_USAGE;
	}
	const char *inside = NULL;
	for (int i = 0; i < o->npaths + o->nreference; i++) {
		const char *p = i < o->npaths ? o->paths[i].path : o->reference[i - o->npaths];
		int r = against(o->move_to, p);
		if (r == EXIT_USAGE)
			return r;
		if (r == 1 && !inside)
			inside = p;
	}
	struct stat st;
	if (!inside || stat(o->move_to, &st) != 0)
		return 0; /* (made by the first move, after the walk) */
	m->on = true;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	msg_say("--move-to '%s' lies inside '%s': what it holds is left out of the scan", o->move_to, inside);
	return 0;
}

bool moveto_is(const struct moveto_prune *m, const char *path)
{
	/* by identity, whatever its name: a bind mount of it, or a symlink the
	 * walk follows, is it too (a stat a folder, only while it is inside) */
	struct stat st;
	return m->on && stat(path, &st) == 0 && st.st_dev == m->dev && st.st_ino == m->ino;
}


int reference_check(const struct cli_opts *o)
{
	for (int r = 0; r < o->nreference; r++) {
		const char *ref = o->reference[r];
		for (int i = 0; !remote_arg(ref) && i < o->npaths; i++) {
			const char *p = o->paths[i].path;
			int in = remote_arg(p) ? 0 : nest_in(p, ref);
			if (in >= 1) {
				msg_say("'%s' %s the reference '%s': its files are the reference, so nothing would be checked",
					p, in == 2 ? "is" : "lies inside", ref);
				return EXIT_USAGE;
			}
			if (!remote_arg(p) && nest_in(ref, p) == 1)
				msg_warn("the reference '%s' lies inside '%s': its files are the reference; the rest of "
					 "'%s' is checked against it", ref, p, p);
		}
	}
	return 0;
}

int tilde_slip(const char *opt, const char *path)
{
	struct stat st;
	if (!path || path[0] != '~' || (path[1] != '/' && path[1] != '\0') || lstat("~", &st) == 0)
		return 0;
	/* (--cache takes its value after '=' only) */
	bool spaced = strcmp(opt, "--cache") != 0;
	msg_say("%s '%s': the shell leaves '~' as it is after '=' (there is no folder '~' here); "
		"write %s=$HOME%s%s%s%s%s", opt, path, opt, path + 1, spaced ? ", or " : "", spaced ? opt : "",
		spaced ? " " : "", spaced ? path : "");
	return EXIT_USAGE;
}

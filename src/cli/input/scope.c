/* SPDX-License-Identifier: MIT */
/* scope.c: what the walk takes in, and what it took. */
#define _GNU_SOURCE /* DT_DIR */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "hosts.h"
#include "scope.h"

/* -X filters and globs run inside the walk, before a file costs any read */
static int on_filter(void *user, const dupscan_file *f)
{
	struct scope *sc = user;
	const struct cli_opts *o = sc->o;
	int keep = (!o->filters.n ||
		    xf_pass(&o->filters, dupscan_file_path(f), dupscan_file_size(f), dupscan_file_mtime_ns(f))) &&
		   glob_file_keeps(&o->exclude, &o->include, dupscan_file_relpath(f));
	sc->left_out += !keep;
	return keep;
}

/* an excluded directory is never opened, nor --move-to's inside the tree */
static int on_dir_filter(void *user, const char *path, const char *relpath)
{
	struct scope *sc = user;
	int keep = !(sc->moveto && moveto_is(sc->moveto, path)) && glob_dir_keeps(&sc->o->exclude, relpath);
	sc->left_out += !keep;
	return keep;
}

/* the walk's count of the files it took, told at its end (in the run's thread) */
static void on_progress(void *user, int phase, uint64_t done, uint64_t total)
{
	(void)total;
	struct scope *sc = user;
	if (phase == DUPSCAN_PHASE_WALK && done > sc->walked)
		sc->walked = done;
}

void scope_install(dupscan_scan *scan, struct scope *sc, bool serving)
{
	const struct cli_opts *o = sc->o;
	if (o->filters.n || o->exclude.n || o->include.n)
		dupscan_set_filter(scan, on_filter, sc);
	if (o->exclude.n || sc->moveto)
		dupscan_set_dir_filter(scan, on_dir_filter, sc);
	if (!serving)
		dupscan_set_progress_callback(scan, on_progress, sc);
}

/* Does a folder given without -r hold folders the walk did not enter? */
static bool holds_folders(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;
	struct stat st;
	while (d && !found && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* (a filesystem that gives no type: asked) */
		found = e->d_type == DT_DIR || (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						S_ISDIR(st.st_mode));
	}
	if (d)
		closedir(d);
	return found;
}

int scope_examined(const struct scope *sc)
{
	const struct cli_opts *o = sc->o;
	if (sc->walked > 0 || o->nremote || o->from_report || o->npaths == 0)
		return 0;
	bool unentered = false;
	for (int i = 0; !o->recurse && !unentered && i < o->npaths; i++)
		unentered = !o->paths[i].recurse_after && holds_folders(o->paths[i].path);
	if (unentered) {
		msg_say("no file was examined: '%s'%s holds only folders, and without -r they are not entered; "
			"nothing to answer", o->paths[0].path, o->npaths > 1 ? " (and the other paths)" : "");
		return EXIT_USAGE;
	}
	if (sc->left_out) {
		msg_say("no file was examined: the filters (-X, --exclude, --include) left out every file; "
			"nothing to answer");
		return EXIT_USAGE;
	}
	/* (an empty tree: "no duplicates" is true, and said as jdupes says it) */
	return 0;
}

size_t scope_unmatched(const struct scope *sc, const dupscan_scan *scan, bool refuse)
{
	const struct cli_opts *o = sc->o;
	const char *hint = "(a pattern is matched against the path below each argument, without the "
			   "argument: 'sub/*.jpg' for DIR/sub/x.jpg)";
	const struct { const struct glob_list *l; const char *opt; } lists[] = {
		{ &o->exclude, "--exclude" }, { &o->include, "--include" },
	};
	const char *how = refuse ? "" : "warning: ";
	size_t n = 0;
	/* (the server matches another host's paths: only this host's are known) */
	for (size_t k = 0; !o->nremote && !o->from_report && k < 2; k++)
		for (size_t i = 0; i < lists[k].l->n; i++)
			if (!lists[k].l->hits[i] && ++n)
				msg_say("%s%s '%s' matched nothing in this run %s", how, lists[k].opt, lists[k].l->v[i], hint);
	keep_count_paths(&o->keep, scan);
	for (size_t i = 0; dupscan_set_count(scan) > 0 && i < o->keep.n; i++)
		if (keep_unmatched(&o->keep, i) && ++n)
			msg_say("%s--keep 'path=%s' matched no file of any set %s", how, keep_unmatched(&o->keep, i), hint);
	if (n && refuse)
		msg_say("nothing was changed: a pattern that matches nothing would act on what it was written to "
			"leave out or keep (--dry-run shows a run as it would go)");
	return n;
}

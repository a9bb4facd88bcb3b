/* SPDX-License-Identifier: MIT */
/* main.c: dupscan, a thin frontend over libdupscan's public API. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "change.h"
#include "fsutil.h"
#include "output.h"
#include "fromreport.h"
#include "journal.h"
#include "hosts.h"
#include "nesting.h"
#include "scope.h"

/* @return the number of files an action failed on, or -1 when it could not start. */
static int run_action(const dupscan_scan *scan, const struct cli_opts *o)
{
	struct act_ctx a = { o, (o->no_change_check ? DUPSCAN_ACT_NO_CHANGE_CHECK : 0) |
				(o->dry_run ? DUPSCAN_ACT_DRY_RUN : 0) | (o->ignore_access ? DUPSCAN_ACT_IGNORE_ACCESS : 0),
			     stdout, NULL, false, false };
	/* no change without its journal line first */
	if (!o->dry_run && dupscan_set_count(scan) > 0 && !(a.journal = journal_open(o->journal)))
		return -1;
	if (o->dry_run)
		msg_say("--dry-run: showing what would be done; nothing is changed");
	if (o->quick)
		msg_warn("-Q/--quick: files are acted on after hash comparison "
			"only, without the byte-by-byte check");
	cli_catch_sigint(NULL);
	/* a closed output is seen as a failed write, before the next change
	 * (act_journal()), not as a signal at any instant */
	signal(SIGPIPE, SIG_IGN);
	int failures;
	switch (o->action) {
	case 'd': failures = act_delete(scan, &a); break;
	case 'L': failures = act_link(scan, &a, DUPSCAN_LINK_HARD); break;
	case 'l': failures = act_link(scan, &a, DUPSCAN_LINK_SOFT); break;
	case ACT_MOVE: failures = act_move(scan, &a); break;
	default: failures = act_dedupe(scan, &a); break;
	}
	if (a.journal) {
		fflush(stdout);
		if (journal_close(a.journal) != 0)
			failures++;
	}
	return a.stop ? failures + 1 : failures;
}

struct err_ctx {
	struct cli_progress *progress;
	const char *cache;  /* --cache's file, or NULL */
	bool cache_failed;  /* it could not be read or written: said once, exit status 1 */
};

/* Is path the cache, or its log or lock (FILE.log, FILE.lock)? */
static bool is_cache_path(const char *cache, const char *path)
{
	size_t n = cache ? strlen(cache) : 0;
	return n && strncmp(path, cache, n) == 0 &&
	       (path[n] == '\0' || strcmp(path + n, ".log") == 0 || strcmp(path + n, ".lock") == 0);
}

/* The cache's trouble is named as the cache's, not as a scanned path's: a
 * damaged file is replaced (the exit status unchanged); one that cannot be
 * read or written is said once (its log and its lock fail the same way), the
 * run goes on without it, and the exit status is 1, as for any file that
 * could not be read or written. */
static void on_cache_error(struct err_ctx *e, const char *path, int code)
{
	if (code != DUPSCAN_E_CACHE && e->cache_failed)
		return;
	/* a damaged log is the log's; a place that fails is the cache's */
	const char *name = code == DUPSCAN_E_CACHE ? path : e->cache;
	msg_say("cache %s: %s%s", name, dupscan_strerror(code), code == DUPSCAN_E_CACHE ? "" : "; running without a cache");
	e->cache_failed = code != DUPSCAN_E_CACHE;
}

static void on_error(void *user, const char *path, int code)
{
	struct err_ctx *e = user;
	cli_progress_clear(e->progress);
	if (is_cache_path(e->cache, path)) {
		on_cache_error(e, path, code);
		return;
	}
	msg_say("%s: %s", path, dupscan_strerror(code));
}

struct stage_ctx {
	unsigned mask;
	FILE *out;
};

static void on_stage(void *user, int stage, const dupscan_file *const *files, size_t count)
{
	const struct stage_ctx *c = user;
	if (c->mask & (1u << stage))
		act_print_stage(c->out, stage, files, count);
}

/* -e: the first set, on stderr, and status 255 */
static int error_on_dupe(const dupscan_scan *scan)
{
	const dupscan_set *set = dupscan_get_set(scan, 0);
	msg_say("duplicates found (-e/--error-on-dupe):");
	for (size_t k = 0; k < 2; k++) {
		const char *p = dupscan_file_path(dupscan_set_file(set, k));
		msg_raw("  %s\n", p);
	}
	return EXIT_DUPE;
}

/* --cache's file: given, or $XDG_CACHE_HOME/dupscan/hashes (made when missing). */
static char *cache_path(const struct cli_opts *o)
{
	if (o->cache_file)
		return strdup(o->cache_file);
	char *dir = ds_xdg_dir("XDG_CACHE_HOME", ".cache"), *p = NULL;
	if (dir && asprintf(&p, "%s/hashes", dir) < 0)
		p = NULL;
	free(dir);
	return p;
}

/* The records' budget: --max-memory, else half the machine's memory, so that
 * a tree too large for it spills instead of pushing the machine into swap
 * or the OOM killer; none when what was asked needs every record. */
static int set_budget(dupscan_scan *scan, const struct cli_opts *o)
{
	int64_t budget = o->max_memory;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	if (!budget && !cli_needs_every_record(o) && pages > 0 && page > 0)
		budget = (int64_t)pages / 2 * page;
	if (budget < (16 << 20))
		return 0;
	return dupscan_set_option(scan, DUPSCAN_OPT_MAX_MEMORY, budget);
}

static int set_options(dupscan_scan *scan, const struct cli_opts *o)
{
	const struct { int opt; int64_t val; } table[] = {
		{ DUPSCAN_OPT_ZERO_MATCH, o->zero_match },
		/* -L, -l and --move-to list every path of an inode: other names of a
		 * duplicate are acted on too (one name alone frees nothing, and --undo
		 * can then give the names back as one inode), and links already made
		 * show as such */
		{ DUPSCAN_OPT_HARD_LINKS, o->hard_links || o->action == 'L' || o->action == 'l' || o->action == ACT_MOVE },
		{ DUPSCAN_OPT_FOLLOW_SYMLINKS, o->symlinks },
		{ DUPSCAN_OPT_NO_HIDDEN, o->no_hidden },
		{ DUPSCAN_OPT_ONE_FILE_SYSTEM, o->one_fs },
		{ DUPSCAN_OPT_ISOLATE, o->isolate },
		{ DUPSCAN_OPT_PERMISSIONS, o->permissions },
		{ DUPSCAN_OPT_QUICK, o->quick },
		{ DUPSCAN_OPT_PARTIAL_ONLY, o->partial_only >= 2 },
		{ DUPSCAN_OPT_ORDER, o->order },
		{ DUPSCAN_OPT_PARAM_ORDER, o->param_order },
		{ DUPSCAN_OPT_REVERSE, o->reverse },
		{ DUPSCAN_OPT_DIRS, o->dirs },
		{ DUPSCAN_OPT_IGNORE_METADATA, o->ignore_metadata },
		{ DUPSCAN_OPT_CACHE_TRUST, o->cache_trust },
		/* past a budget, what is listed stays: every unique file for -u,
		 * those outside the references for --missing (and the page's) */
		{ DUPSCAN_OPT_KEEP_UNIQUE, o->print_unique ? DUPSCAN_KEEP_ALL :
					   o->missing || (o->fmt == FORMAT_HTML && o->nreference) ? DUPSCAN_KEEP_OTHERS :
					   DUPSCAN_KEEP_NONE },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int rc = dupscan_set_option(scan, table[i].opt, table[i].val);
		if (rc < 0)
			return rc;
	}
	if (o->threads) {
		int rc = dupscan_set_option(scan, DUPSCAN_OPT_THREADS, o->threads);
		if (rc < 0)
			return rc;
	}
	int rc = dupscan_set_option(scan, DUPSCAN_OPT_IO, o->io);
	if (rc < 0)
		return rc;
	if (o->io_memory && (rc = dupscan_set_option(scan, DUPSCAN_OPT_IO_MEMORY, o->io_memory)) < 0)
		return rc;
	if (o->max_depth >= 0 && (rc = dupscan_set_option(scan, DUPSCAN_OPT_MAX_DEPTH, o->max_depth)) < 0)
		return rc;
	if ((rc = set_budget(scan, o)) < 0)
		return rc;
	if (o->temp_dir && (rc = dupscan_set_temp_dir(scan, o->temp_dir)) < 0)
		return rc;
	if (o->chunk_size)
		return dupscan_set_option(scan, DUPSCAN_OPT_CHUNK_SIZE, o->chunk_size);
	return 0;
}

/* Comparing many same-size files side by side wants many descriptors: use the
 * hard limit the system grants (the library fits itself to whatever it finds). */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* glibc gives each thread that allocates a malloc arena of its own, about
 * 100 KB each of this program's memory: its threads mostly wait on reads
 * and allocate little, so one arena serves them at the same speed, with
 * less memory. The program's
 * choice, not the library's: a program linking it keeps its own. */
static void one_malloc_arena(void)
{
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	mallopt(M_ARENA_MAX, 1);
#endif
}

/* With --max-memory, large blocks (a directory's listing) come from mmap
 * and go back when freed: glibc otherwise raises its mmap threshold as
 * they are freed, takes the next ones from the heap, and a heap pinned by
 * one live block keeps the freed ones resident (a cold walk of 200,000
 * files under a 16M budget: 19.1 MiB at its peak, 17.4 with this). */
static void budget_malloc(const struct cli_opts *o)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
	if (o->max_memory)
		mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#else
	(void)o;
#endif
}

/* --server: the remote side of a client's HOST:PATH, on stdin and stdout.
 * This host's reading and the client's filters (forwarded as options). */
static int serve_main(struct cli_opts *o)
{
	dupscan_scan *scan = NULL;
	int rc = dupscan_create(&scan);
	if (rc == 0)
		rc = set_options(scan, o);
	if (rc == 0) {
		struct scope sc = { o, NULL, 0, 0 };
		scope_install(scan, &sc, true);
		rc = dupscan_serve(scan, 0, 1);
	}
	dupscan_free(scan);
	if (rc < 0 && rc != DUPSCAN_E_REMOTE)
		msg_raw("dupscan --server: %s\n", dupscan_strerror(rc));
	cli_opts_free(o);
	return rc < 0 ? 1 : 0;
}

/* The cache's file for --cache and --cache-clear; --cache-clear alone clears
 * it and ends the run (*done). @return 0 or an exit status. */
static int take_cache(const struct cli_opts *o, char **cache, bool *done)
{
	*cache = NULL;
	*done = false;
	if (!o->cache && !o->cache_clear)
		return 0;
	if (!(*cache = cache_path(o))) {
		msg_say("--cache: no place for the cache (set XDG_CACHE_HOME or HOME, or give --cache=FILE)");
		return EXIT_USAGE;
	}
	if (!o->cache_clear)
		return 0;
	int crc = dupscan_cache_clear(*cache);
	if (crc < 0)
		msg_say("--cache-clear '%s': %s", *cache, dupscan_strerror(crc));
	*done = o->npaths == 0 || crc < 0;
	return crc < 0 ? 1 : 0;
}

/* --from-report: the report's sets given to the scan; a report that does
 * not hold is refused whole, before anything is done. @return 0 or an exit
 * status (said); *rc: the library's code. */
static int add_report(dupscan_scan *scan, const char *file, int *rc)
{
	struct report rep;
	char msg[PATH_MAX + 256];
	if (report_load(file, &rep, msg, sizeof(msg)) != 0) {
		msg_say("--from-report '%s': %s; nothing was done", file, msg);
		return EXIT_USAGE;
	}
	/* a set left with one file (or none) by its reader: keep it whole */
	for (size_t i = 0; i < rep.nlone; i++)
		msg_say("--from-report '%s': set %u has fewer than two files: kept as it is", file, rep.lone[i] + 1);
	for (size_t i = 0; *rc >= 0 && i < rep.nfiles; i++) {
		const struct report_file *f = &rep.files[i];
		if (!f->alone)
			*rc = dupscan_report_file(scan, f->set, f->path, f->dev, f->ino, f->size, f->mtime_ns, f->ctime_ns);
	}
	report_free(&rep);
	return 0;
}

/* What the scan is to look at: the paths (HOST:PATH ones started), the
 * report, the protected paths, the cache. @return 0 or an exit status
 * (said); *rc: the library's code. */
static int add_inputs(dupscan_scan *scan, const struct cli_opts *o, const char *cache, struct remote_procs *procs,
		      int *rc)
{
	int status;
	/* the references walked whole, and first: a path reaching into one (a
	 * bind mount of it) is then the one reached twice, not the reference */
	for (int i = 0; *rc >= 0 && i < o->nreference; i++) {
		if (remote_arg(o->reference[i])) {
			if ((status = remote_add(scan, o, o->reference[i], true, true, procs)) != 0)
				return status;
			continue;
		}
		*rc = dupscan_add_reference(scan, o->reference[i], 1);
		if (*rc < 0 && *rc != -ENOMEM) {
			msg_say("--reference '%s': %s", o->reference[i], dupscan_strerror(*rc));
			return EXIT_USAGE;
		}
	}
	for (int i = 0; *rc >= 0 && i < o->npaths; i++) {
		bool recurse = o->recurse || o->paths[i].recurse_after;
		if (o->nremote && remote_arg(o->paths[i].path)) {
			if ((status = remote_add(scan, o, o->paths[i].path, recurse, false, procs)) != 0)
				return status;
		} else {
			*rc = dupscan_add_path(scan, o->paths[i].path, recurse);
		}
	}
	if (*rc >= 0 && o->from_report && (status = add_report(scan, o->from_report, rc)) != 0)
		return status;
	for (int i = 0; *rc >= 0 && i < o->nprotect; i++) {
		*rc = dupscan_protect_path(scan, o->protect[i]);
		if (*rc < 0 && *rc != -ENOMEM) {
			msg_say("--protect '%s': %s", o->protect[i], dupscan_strerror(*rc));
			return EXIT_USAGE;
		}
	}
	if (*rc >= 0 && o->cache)
		*rc = dupscan_set_cache(scan, cache);
	return 0;
}

/* The callbacks set, the scan run. @return the library's code. */
static int run_scan(dupscan_scan *scan, struct cli_opts *o, struct err_ctx *e, struct stage_ctx *sctx,
		    struct scope *sc)
{
	dupscan_set_error_callback(scan, on_error, e);
	dupscan_set_progress_bytes_callback(scan, cli_progress_bytes_cb, e->progress);
	cli_progress_watch(e->progress, scan);
	if (o->nremote)
		cli_progress_no_hint(e->progress);
	scope_install(scan, sc, false);
	if (o->print_stages)
		dupscan_set_stage_callback(scan, on_stage, sctx);
	if (o->soft_abort)
		cli_catch_sigint(scan);
	int rc = dupscan_run(scan);
	if (o->soft_abort && !cli_interrupted())
		cli_clear_interrupt();
	return rc;
}

/* What a finished scan comes to: an action, or one view. @return the exit status. */
static int show(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv)
{
	if (o->action)
		return run_action(scan, o) != 0;
	/* what the copies already share, where a figure of waste is shown */
	if (o->view == VIEW_SUMMARY || o->view == VIEW_JSON || (o->view == VIEW_SETS && o->print_summarize) ||
	    o->view == VIEW_WHERE || o->view == VIEW_PAGE || (o->view == VIEW_MISSING && o->fmt == FORMAT_HTML)) {
		int rc = dupscan_find_shared(scan);
		if (rc < 0) {
			msg_say("what the copies share: %s", dupscan_strerror(rc));
			return 1;
		}
	}
	switch (o->view) {
	case VIEW_MISSING: return act_missing(scan, o, argc, argv, stdout);
	case VIEW_UNIQUE: act_print_unique(scan, o, stdout); return 0;
	case VIEW_SUMMARY: act_summarize(scan, stdout); return 0;
	case VIEW_PAGE: return act_html(scan, o, argc, argv, stdout) != 0;
	case VIEW_WHERE: return act_where(scan, o, argc, argv, stdout) != 0;
	case VIEW_JSON: act_print_json(scan, o, argc, argv, stdout); return 0;
	case VIEW_CSV: return act_print_csv(scan, o, stdout) != 0;
	case VIEW_SETS: break;
	}
	act_print_matches(scan, o, stdout);
	if (o->print_summarize) {
		fputc('\n', stdout);
		act_summarize(scan, stdout);
	}
	return 0;
}

/* The scan's end: interrupted, refused, failed, or shown. @return the exit status. */
static int finish(dupscan_scan *scan, const struct cli_opts *o, const struct scope *sc, int rc, int argc,
		  char **argv)
{
	bool aborted = rc == DUPSCAN_E_CANCELED;
	if (aborted) {
		msg_say("interrupted: using the %zu sets found so far", dupscan_set_count(scan));
		cli_clear_interrupt();
		rc = 0;
	}
	if (rc == DUPSCAN_E_TWO_SETS) { /* (the paths were named through the error callback) */
		msg_say("--from-report '%s': one file (the same device and inode) in two sets; nothing was done",
			o->from_report);
		return EXIT_USAGE;
	}
	if (rc < 0) {
		msg_say("%s", dupscan_strerror(rc));
		return 1;
	}
	if (o->error_on_dupe && dupscan_set_count(scan) > 0)
		return error_on_dupe(scan);
	/* no file at all: "no duplicates" would be no answer (--missing asks
	 * its own question: missing.c) */
	int status = aborted || o->view == VIEW_MISSING || dupscan_error_count(scan) ? 0 : scope_examined(sc);
	if (status) {
		scope_unmatched(sc, scan, false); /* (which pattern it was may be why) */
		return status;
	}
	/* an action whose pattern matched nothing would act on what the user
	 * meant to leave out or keep: refused before its first change */
	if (o->action && !o->dry_run && scope_unmatched(sc, scan, true))
		return EXIT_USAGE;
	status = show(scan, o, argc, argv);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg_say("error writing output");
		status = 1;
	}
	if (!o->action || o->dry_run)
		scope_unmatched(sc, scan, false);
	return dupscan_error_count(scan) > 0 || aborted || cli_interrupted() ? 1 : status;
}

static void clear_progress(void *p)
{
	cli_progress_clear(p);
}

/* A scan: made, fed, run and shown. @return the exit status. */
static int scan_main(struct cli_opts *o, const char *cache, int argc, char **argv)
{
	struct stage_ctx sctx = { o->print_stages, stdout };
	raise_fd_limit();
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	dupscan_scan *scan = NULL;
	struct err_ctx ectx = { cli_progress_new(o->quiet ? CLI_PROGRESS_NEVER : o->progress ? CLI_PROGRESS_ALWAYS :
										      CLI_PROGRESS_TTY),
				o->cache ? cache : NULL, false };
	msg_before(clear_progress, ectx.progress);
	struct remote_procs procs = { 0 };
	struct moveto_prune moveto;
	int status = moveto_check(o, &moveto);
	if (status == 0)
		status = reference_check(o);
	struct scope sc = { o, moveto.on ? &moveto : NULL, 0, 0 };
	if (status) {
		msg_before(NULL, NULL);
		cli_progress_free(ectx.progress);
		return status;
	}
	int rc = dupscan_create(&scan);
	if (rc == 0)
		rc = set_options(scan, o);
	if (rc >= 0 && o->remote_timeout)
		rc = dupscan_set_option(scan, DUPSCAN_OPT_REMOTE_TIMEOUT, o->remote_timeout);
	status = add_inputs(scan, o, cache, &procs, &rc);
	if (status == 0) {
		if (rc >= 0)
			rc = run_scan(scan, o, &ectx, &sctx, &sc);
		cli_progress_clear(ectx.progress);
		status = finish(scan, o, &sc, rc, argc, argv);
		if (status == 0 && ectx.cache_failed)
			status = 1;
	}
	dupscan_free(scan);
	/* (3 and 255 are answers, not failures: the sides are done and said BYE) */
	remote_wait(&procs, status != 0 && status != EXIT_DUPE && status != EXIT_MISSING);
	msg_before(NULL, NULL);
	cli_progress_free(ectx.progress);
	return status;
}

/* The files a run writes, checked before the scan so that nothing has
 * changed: --cache's and --journal's names (a '~' the shell left), and
 * --journal=FILE, which is appended to: one that is there must be a journal
 * (or empty), or a report or a page would be written into. @return 0 or
 * EXIT_USAGE. */
static int check_written_files(const struct cli_opts *o)
{
	if (o->cache_file && tilde_slip("--cache", o->cache_file))
		return EXIT_USAGE;
	if (!o->action || !o->journal)
		return 0;
	if (tilde_slip("--journal", o->journal))
		return EXIT_USAGE;
	int rc = journal_check(o->journal);
	if (rc == 0)
		return 0;
	msg_say("--journal '%s': %s; nothing was changed", o->journal,
		rc == -EINVAL ? "is not a dupscan journal (name a new file, or one dupscan wrote)" : strerror(-rc));
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	one_malloc_arena();
	struct cli_opts o = { 0 };
	bool stop, done;
	char *cache = NULL;
	int status = cli_parse(argc, argv, &o, &stop);
	budget_malloc(&o);
	if (status == 0 && !stop && o.undo)
		status = journal_undo(o.undo);
	else if (status == 0 && !stop && o.server)
		return serve_main(&o);
	else if (status == 0 && !stop && (status = check_written_files(&o)) == 0 && (status = take_cache(&o, &cache, &done)) == 0 && !done)
		status = scan_main(&o, cache, argc, argv);
	free(cache);
	cli_opts_free(&o);
	return status;
}

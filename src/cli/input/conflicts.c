/* SPDX-License-Identifier: MIT */
/* conflicts.c: which options go together, as data: each rule names what
 * makes it apply, what it refuses or needs, and the message; the first rule
 * that applies is said (in the order of the tables). The modes that take no
 * scan (--undo, --server, --cache-clear alone) are decided first. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "hosts.h"

/* what the command line holds, a bit each */
#define G_ACTION (UINT64_C(1) << 0)
#define G_DELETE (UINT64_C(1) << 1)
#define G_MOVE (UINT64_C(1) << 2)
#define G_DEDUPE (UINT64_C(1) << 3)
#define G_LINK (UINT64_C(1) << 4)
#define G_FROM_REPORT (UINT64_C(1) << 5)
#define G_UNIQUE (UINT64_C(1) << 6)
#define G_SUMMARIZE (UINT64_C(1) << 7)
#define G_PRINT_SUMMARIZE (UINT64_C(1) << 8)
#define G_DIRS (UINT64_C(1) << 9)
#define G_OMIT_FIRST (UINT64_C(1) << 10)
#define G_NULL (UINT64_C(1) << 11)
#define G_ERROR_ON_DUPE (UINT64_C(1) << 12)
#define G_T_ONCE (UINT64_C(1) << 13)
#define G_TT (UINT64_C(1) << 14)
#define G_QUICK (UINT64_C(1) << 15)
#define G_CACHE (UINT64_C(1) << 16)
#define G_CACHE_TRUST (UINT64_C(1) << 17)
#define G_VIEW (UINT64_C(1) << 18)
#define G_CSV (UINT64_C(1) << 19)
#define G_OVERLAP (UINT64_C(1) << 20)
#define G_SUMMARY_DIRS (UINT64_C(1) << 21)
#define G_PRUNE (UINT64_C(1) << 22)
#define G_JOURNAL (UINT64_C(1) << 23)
#define G_DRY_RUN (UINT64_C(1) << 24)
#define G_IGNORE_ACCESS (UINT64_C(1) << 25)
#define G_MAX_DEPTH (UINT64_C(1) << 26)
#define G_RECURSING (UINT64_C(1) << 27)
#define G_PATHS (UINT64_C(1) << 28)
#define G_PERMISSIONS (UINT64_C(1) << 29)
#define G_FILES_FROM (UINT64_C(1) << 30)
#define G_REMOTE (UINT64_C(1) << 31)
#define G_IGNORE_METADATA (UINT64_C(1) << 32)

enum rule_name { NAME_NONE, NAME_ACTION, NAME_VIEW }; /* what the message's %s is */

struct rule {
	uint64_t when;    /* all of these given, */
	uint64_t refused; /* and any of these (0: nothing more needed), */
	uint64_t needs;   /* and none of these (0: no need): the message */
	enum rule_name name;
	const char *msg;
};

#define ACTIONS "-d, -L, -l, -B or --move-to"
#define NEEDS_ACTION(bit, opt) { bit, 0, G_ACTION, NAME_NONE, opt " needs an action: " ACTIONS }

/* Before the formats are known. */
static const struct rule early_rules[] = {
	{ G_REMOTE, G_LINK | G_DEDUPE, 0, NAME_ACTION, "%s with a HOST:PATH argument: links and dedupe need both "
	  "files on this host (-d and --move-to change local files only)" },
	{ G_REMOTE, G_PERMISSIONS, 0, NAME_NONE, "-p/--permissions is not available with a HOST:PATH argument" },
	{ G_REMOTE, G_CACHE_TRUST, 0, NAME_NONE, "--cache-trust is not available with a HOST:PATH argument" },
	{ G_T_ONCE, 0, 0, NAME_NONE, "-T/--partial-only must be given twice (-TT) to take effect: it matches on the "
	  "first 4096 bytes only" },
	{ G_FROM_REPORT, G_PATHS | G_FILES_FROM, 0, NAME_NONE, "--from-report=FILE takes no paths: the report names the files" },
	{ G_FROM_REPORT, 0, G_ACTION, NAME_NONE, "--from-report needs an action: " ACTIONS " (with --dry-run to see what "
	  "it would do)" },
	{ G_FROM_REPORT, G_DIRS | G_CACHE | G_QUICK | G_TT, 0, NAME_NONE, "--from-report acts on the report's sets: "
	  "--dirs, --cache, -Q and -T do not apply" },
	{ G_IGNORE_METADATA, G_CACHE | G_CACHE_TRUST | G_DIRS | G_FROM_REPORT | G_REMOTE, 0, NAME_NONE, "--ignore-metadata "
	  "compares the pictures and sounds of this host's files as they are now: it is refused with --cache, "
	  "--cache-trust, --dirs, --from-report and HOST:PATH arguments" },
	{ G_FILES_FROM, 0, G_PATHS | G_FROM_REPORT, NAME_NONE, "no paths in --files-from" },
	{ 0, 0, G_PATHS | G_FROM_REPORT, NAME_NONE, "no files or directories given" },
};

static const struct rule rules[] = {
	{ G_VIEW, G_ACTION | G_FROM_REPORT | G_UNIQUE | G_SUMMARIZE | G_PRINT_SUMMARIZE | G_DIRS | G_OMIT_FIRST | G_NULL |
	  G_ERROR_ON_DUPE | G_TT, 0, NAME_VIEW, "%s shows where the copies are, in place of the sets: it is refused "
	  "with an action, --from-report, -u, -m, -M, -e, -f, -0, -TT and --dirs" },
	{ G_CSV | G_OVERLAP | G_SUMMARY_DIRS, 0, 0, NAME_NONE, "--format=csv gives one table: --overlap or "
	  "--summary=dirs, not both" },
	{ G_CSV, G_ACTION | G_UNIQUE | G_SUMMARIZE | G_PRINT_SUMMARIZE | G_DIRS | G_OMIT_FIRST | G_NULL | G_ERROR_ON_DUPE,
	  0, NAME_NONE, "--format=csv lists the sets of files, each whole: it is refused with an action, -u, -m, -M, "
	  "-e, -f, -0 and --dirs" },
	{ G_MAX_DEPTH, 0, G_RECURSING | G_SUMMARY_DIRS, NAME_NONE, "--max-depth limits recursion: give -r (or -R "
	  "before the directories)" },
	{ G_PRUNE, 0, G_DELETE | G_MOVE, NAME_NONE, "--prune-empty-dirs needs -d or --move-to" },
	NEEDS_ACTION(G_JOURNAL, "--journal"),
	{ G_DIRS, G_ACTION, 0, NAME_ACTION, "--dirs lists directories; it is refused with %s (act on files without --dirs)" },
	{ G_CACHE_TRUST, G_QUICK | G_TT, 0, NAME_NONE, "--cache-trust is refused with -Q and -TT: they neither use nor "
	  "save the cache" },
	{ G_DIRS, G_QUICK | G_TT, 0, NAME_NONE, "--dirs needs every file pair compared byte by byte: it is refused with "
	  "-Q and -TT" },
	{ G_ERROR_ON_DUPE, G_ACTION, 0, NAME_ACTION, "-e/--error-on-dupe stops at the first duplicate; it is refused "
	  "with %s" },
	{ G_TT, G_ACTION, 0, NAME_ACTION, "-TT matches on the first 4096 bytes only; it is refused with %s, which "
	  "would act on files that may differ" },
	NEEDS_ACTION(G_DRY_RUN, "--dry-run"),
	{ G_IGNORE_ACCESS, 0, G_ACTION, NAME_NONE, "--ignore-access goes with -L, -l, -d or --move-to" },
	{ G_IGNORE_ACCESS, G_DEDUPE, 0, NAME_NONE, "--ignore-access goes with -L, -l, -d or --move-to" },
};

static const char *action_name(int c)
{
	switch (c) {
	case 'B': return "-B";
	case 'd': return "-d";
	case 'l': return "-l";
	case 'L': return "-L";
	default: return "--move-to";
	}
}

int cli_set_action(struct cli_opts *o, int c)
{
	if (o->action && o->action != c)
		return msg_usage("choose one action: %s and %s were both given", action_name(o->action), action_name(c));
	o->action = c;
	return 0;
}

static uint64_t given(const struct cli_opts *o)
{
	bool recursing = o->recurse;
	for (int i = 0; i < o->npaths; i++)
		recursing = recursing || o->paths[i].recurse_after;
	const struct { bool on; uint64_t bit; } g[] = {
		{ o->action, G_ACTION }, { o->action == 'd', G_DELETE }, { o->action == ACT_MOVE, G_MOVE },
		{ o->action == 'B', G_DEDUPE }, { o->action == 'L' || o->action == 'l', G_LINK },
		{ o->from_report, G_FROM_REPORT }, { o->print_unique, G_UNIQUE }, { o->summarize, G_SUMMARIZE },
		{ o->print_summarize, G_PRINT_SUMMARIZE }, { o->dirs, G_DIRS }, { o->omit_first, G_OMIT_FIRST },
		{ o->print_null, G_NULL }, { o->error_on_dupe, G_ERROR_ON_DUPE }, { o->partial_only == 1, G_T_ONCE },
		{ o->partial_only >= 2, G_TT }, { o->quick, G_QUICK }, { o->cache, G_CACHE },
		{ o->cache_trust, G_CACHE_TRUST }, { o->overlap || o->summary_dirs || o->fmt == FORMAT_HTML, G_VIEW },
		{ o->fmt == FORMAT_CSV, G_CSV }, { o->overlap, G_OVERLAP }, { o->summary_dirs, G_SUMMARY_DIRS },
		{ o->prune_empty_dirs, G_PRUNE }, { o->journal, G_JOURNAL }, { o->dry_run, G_DRY_RUN },
		{ o->ignore_access, G_IGNORE_ACCESS }, { o->max_depth >= 0, G_MAX_DEPTH }, { recursing, G_RECURSING },
		{ o->npaths > 0, G_PATHS }, { o->files_from, G_FILES_FROM },
		{ o->nremote > 0, G_REMOTE }, { o->permissions, G_PERMISSIONS }, { o->ignore_metadata, G_IGNORE_METADATA },
	};
	uint64_t bits = 0;
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		bits |= g[i].on ? g[i].bit : 0;
	return bits;
}

/* The first rule of the table that applies, said. @return 0 or EXIT_USAGE. */
static int apply(const struct cli_opts *o, const struct rule *r, size_t n)
{
	uint64_t bits = given(o);
	for (size_t i = 0; i < n; i++, r++) {
		if ((bits & r->when) != r->when || (r->refused && !(bits & r->refused)) || (r->needs && (bits & r->needs)))
			continue;
		const char *view = o->fmt == FORMAT_HTML ? "--format=html" : o->overlap ? "--overlap" : "--summary=dirs";
		const char *name = r->name == NAME_ACTION ? action_name(o->action) : view, *at = strstr(r->msg, "%s");
		return at ? msg_usage("%.*s%s%s", (int)(at - r->msg), r->msg, name, at + 2) : msg_usage("%s", r->msg);
	}
	return 0;
}

/* --format's word as the view it asks for (checked against -j first). */
static int take_format(struct cli_opts *o)
{
	if (o->format && o->json && strcmp(o->format, "json") != 0)
		return msg_usage("-j/--json and --format=%s: two formats", o->format);
	static const struct { const char *word; enum cli_format fmt; } words[] = {
		{ "json", FORMAT_JSON }, { "csv", FORMAT_CSV }, { "html", FORMAT_HTML },
	};
	o->fmt = o->json ? FORMAT_JSON : FORMAT_TEXT; /* (text and fdupes: one listing) */
	for (size_t i = 0; o->format && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(o->format, words[i].word) == 0)
			o->fmt = words[i].fmt;
	return 0;
}

/* The same file or directory (device and inode)? */
static bool same_node(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* --reference and --missing: each local reference an existing directory (a
 * HOST:PATH one its host checks), some path not one of them, --missing with
 * --reference and as the only view. @return 0 or the usage status (said). */
static int check_reference(const struct cli_opts *o)
{
	if (o->missing && !o->nreference)
		return msg_usage("%s", "--missing needs --reference=DIR: the tree the files' copies are looked for under");
	if (o->missing && (o->action || o->from_report || o->print_unique || o->summarize || o->print_summarize ||
			   o->dirs || (o->overlap && o->fmt != FORMAT_HTML) || o->summary_dirs || o->error_on_dupe ||
			   o->partial_only >= 2))
		return msg_usage("%s", "--missing lists the files with no copy under the reference: it is refused with an "
			     "action, --from-report, -u, -m, -M, -e, -TT, --dirs, --overlap and --summary");
	if (o->nreference && (o->dirs || o->from_report))
		return msg_usage("%s", "--reference is not available with --dirs or --from-report");
	/* a size group without both kinds is never read: its files are in no
	 * list of files without a copy but --missing's */
	if (o->nreference && o->print_unique)
		return msg_usage("%s", "-u is not available with --reference: --missing lists the files with no copy under it");
	bool other = false;
	for (int i = 0; i < o->nreference; i++) {
		struct stat st;
		if (remote_arg(o->reference[i]))
			continue; /* (its host says whether it is there) */
		if (stat(o->reference[i], &st) != 0)
			return msg_usage("--reference '%s': %s", o->reference[i], strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return msg_usage("--reference '%s': not a directory", o->reference[i]);
	}
	for (int p = 0; p < o->npaths && !other; p++) {
		struct stat sp, sr;
		bool ref = false;
		if (!remote_arg(o->paths[p].path) && stat(o->paths[p].path, &sp) == 0)
			for (int i = 0; !ref && i < o->nreference; i++)
				ref = !remote_arg(o->reference[i]) && stat(o->reference[i], &sr) == 0 && same_node(&sp, &sr);
		else if (remote_arg(o->paths[p].path))
			for (int i = 0; !ref && i < o->nreference; i++)
				ref = strcmp(o->paths[p].path, o->reference[i]) == 0;
		other = !ref;
	}
	if (o->nreference && o->npaths && !other)
		return msg_usage("%s", "--reference=DIR is also the only path: give the paths whose files are looked for under it");
	return 0;
}

/* What main shows of a scan: one view, decided once. */
static enum cli_view view_of(const struct cli_opts *o)
{
	return o->missing ? VIEW_MISSING : o->print_unique ? VIEW_UNIQUE : o->summarize ? VIEW_SUMMARY : o->fmt == FORMAT_HTML ? VIEW_PAGE :
	       o->overlap || o->summary_dirs ? VIEW_WHERE : o->fmt == FORMAT_JSON ? VIEW_JSON :
	       o->fmt == FORMAT_CSV ? VIEW_CSV : VIEW_SETS;
}

bool cli_needs_every_record(const struct cli_opts *o)
{
	return o->dirs || o->from_report || o->ignore_metadata;
}

/* --max-memory keeps only the sets' files once the records pass it: what
 * needs every file's record is refused with it. @return 0 or EXIT_USAGE. */
static int check_memory(const struct cli_opts *o)
{
	if ((o->max_memory || o->temp_dir) && cli_needs_every_record(o))
		return msg_usage("%s", "--max-memory (and --temp-dir) keep only the sets' files once the records pass it: refused "
			     "with --dirs, --from-report and --ignore-metadata");
	return 0;
}

int cli_check(struct cli_opts *o)
{
	int rc;
	if (o->undo)
		return o->npaths || o->action || o->files_from ? msg_usage("%s", "--undo=FILE takes no paths and no action") : 0;
	if (o->files_from && (rc = cli_read_files_from(o)))
		return rc;
	if (o->server)
		return o->npaths || o->action || o->from_report || o->files_from ?
			       msg_usage("%s", "--server scans what its client asks: it takes no paths and no action") : 0;
	for (int i = 0; i < o->npaths; i++)
		o->nremote += remote_arg(o->paths[i].path);
	for (int i = 0; i < o->nreference; i++)
		o->nremote += remote_arg(o->reference[i]);
	if (o->cache_clear && o->npaths == 0 && !o->files_from)
		return 0; /* main clears it and stops */
	if (o->nreference && o->npaths == 0 && !o->files_from && !o->from_report)
		return msg_usage("%s", "--reference=DIR needs other paths, whose files are looked for under it");
	if ((rc = apply(o, early_rules, sizeof(early_rules) / sizeof(early_rules[0]))) ||
	    (rc = take_format(o)) || (rc = apply(o, rules, sizeof(rules) / sizeof(rules[0]))))
		return rc;
	/* with --summary=dirs, --max-depth limits the directories listed, as
	 * du's does, not the scan */
	if (o->summary_dirs && o->max_depth >= 0) {
		o->list_depth = o->max_depth;
		o->max_depth = -1;
	}
	if ((rc = check_reference(o)) || (rc = check_memory(o)))
		return rc;
	o->view = view_of(o);
	return 0;
}

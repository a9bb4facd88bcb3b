/* SPDX-License-Identifier: MIT */
/* cli.h: what the dupscan frontend's files share. */
#ifndef DUPSCAN_CLI_H
#define DUPSCAN_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "dupscan.h"
#include "extfilter.h"
#include "glob.h"
#include "interrupt.h"
#include "keep.h"

#define EXIT_USAGE 2
#define EXIT_DUPE 255       /* -e: a duplicate was found */
#define ACT_MOVE 'M'        /* --move-to: no short letter */

struct cli_path {
	const char *path;
	bool recurse_after; /* given after -R */
};

struct cli_opts {
	bool progress;      /* --progress: even when stderr is not a terminal */
	bool recurse, quiet, summarize, print_summarize, show_size, omit_first,
	     print_unique, print_null, zero_match, hard_links, symlinks, no_hidden,
	     one_fs, isolate, permissions, param_order, reverse, quick;
	bool json, csv, no_prompt, soft_abort, no_change_check, dry_run, ignore_access;
	const char *format; /* --format as given (NULL: none), for messages */
	bool error_on_dupe, prune_empty_dirs, dirs, cache, cache_clear, cache_trust;
	const char *cache_file; /* --cache=FILE, NULL: the default place */
	int action;         /* 0 (print), 'd', 'L', 'l', 'B' or ACT_MOVE */
	const char *move_to;    /* --move-to */
	const char *journal;    /* --journal, NULL: the default place */
	const char *undo;       /* --undo */
	const char *files_from; /* --files-from */
	const char *from_report; /* --from-report */
	char *files_from_buf;   /* its content; paths point into it */
	const char **protect;   /* --protect, repeatable */
	int nprotect;
	struct glob_list exclude, include;
	struct keep_rules keep; /* --keep, in the order given */
	unsigned print_stages; /* -P: bit (1 << enum dupscan_stage) per stage */
	struct xf_list filters;
	int partial_only;   /* how many times -T was given */
	int order;          /* enum dupscan_order */
	long chunk_size;    /* 0: library default */
	int64_t io_memory;  /* 0: library default */
	int threads;        /* 0: library default */
	long max_depth;     /* --max-depth; -1: none given */
	unsigned overlap;   /* --overlap=PERCENT; 0: not given */
	bool summary_dirs;  /* --summary=dirs */
	bool html;          /* --format=html */
	long list_depth;    /* --summary=dirs: the directories listed, levels below an argument; -1: all */
	int io;             /* DUPSCAN_IO_* */
	struct cli_path *paths;
	int npaths;
	bool server;            /* --server: the remote side of a HOST:PATH */
	const char *rsh;        /* --rsh, NULL: $DUPSCAN_RSH or ssh */
	const char *remote_dupscan; /* --remote-dupscan, NULL: dupscan */
	long remote_timeout;    /* --remote-timeout seconds, 0: the library's */
	const char **forward;   /* options the server takes too (-X, --exclude, --include) */
	int nforward;
	int nremote;            /* HOST:PATH arguments */
};

/* options.c: @return 0 to go on, or an exit status (after --help, -v or a usage error). */
int cli_parse(int argc, char **argv, struct cli_opts *o, bool *stop);
/* What cli_parse() allocated in o. */
void cli_opts_free(struct cli_opts *o);

/* progress.c: throttled progress on stderr when it is a terminal */
struct cli_progress;
enum { CLI_PROGRESS_NEVER, CLI_PROGRESS_TTY, CLI_PROGRESS_ALWAYS };
void cli_progress_bytes_cb(void *user, const struct dupscan_progress *progress);
struct cli_progress *cli_progress_new(int mode);
/* The scan whose reading mode the progress line shows. */
void cli_progress_watch(struct cli_progress *p, const dupscan_scan *scan);
void cli_progress_clear(struct cli_progress *p);
/* No advice to run where the data is (the scan reaches another host already). */
void cli_progress_no_hint(struct cli_progress *p);
void cli_progress_free(struct cli_progress *p);

/* act_printmatches.c */
void act_print_matches(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
void act_print_unique(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
/* the library's stage callback for -P; user is the FILE to print to */
void act_print_stage(void *user, int stage, const dupscan_file *const *files, size_t count);
/* act_printcsv.c: a CSV field, quoted when it must be (RFC 4180) */
void csv_field(const char *s, FILE *out);
/* @return the sets whose hash could not be read */
int act_print_csv(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
/* act_printjson.c */
/* A JSON string (json_chars: without its quotes), ASCII only: other
 * characters as \u escapes, bytes that are not UTF-8 as \udc80..\udcff. */
void json_chars(const char *str, FILE *out);
/* with in_html, '<', '>' and '&' escaped too (JSON inside a page's script) */
void json_chars_in(const char *str, FILE *out, bool in_html);
/* The arguments, space-separated, as the characters of a JSON string. */
void json_command_line(int argc, char **argv, FILE *out, bool in_html);
/* A report's first lines: '{', "dupscanVersion" and "commandLine" (no comma after). */
void json_head(int argc, char **argv, FILE *out);
void json_string(const char *str, FILE *out);
void act_print_json(const dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* actions: each @return the number of files it failed to act on */
struct journal;
struct act_ctx {
	const struct cli_opts *o;
	unsigned flags;         /* DUPSCAN_ACT_* */
	FILE *out;
	struct journal *journal; /* NULL with --dry-run */
	bool stop;              /* the journal failed: no further change */
};
int act_delete(const dupscan_scan *scan, struct act_ctx *a);
int act_link(const dupscan_scan *scan, struct act_ctx *a, int kind);
int act_dedupe(const dupscan_scan *scan, struct act_ctx *a);
int act_move(const dupscan_scan *scan, struct act_ctx *a);
/* help.c: --help's text to out. */
void cli_print_help(FILE *out);
/* act_common.c: the file a set keeps: its first protected file, else its first */
const dupscan_file *act_kept(const dupscan_set *set, const struct cli_opts *o);
/* Listing order: the kept file (index kept) first, then the others in the
 * set's order. @return the index in the set of the file listed at pos. */
size_t act_listed(size_t kept, size_t pos);
/* Journal a change before making it (dest: for "move"; hash: the content's
 * XXH64, or NULL). @return 0; DUPSCAN_E_CHANGED when dup or keep is gone (skip
 * this file); or -errno after telling the user and setting a->stop. */
int act_journal(struct act_ctx *a, const char *kind, const dupscan_set *set, const dupscan_file *keep,
		const dupscan_file *dup, const char *dest, const uint64_t *hash);
/* A refusal because f's access (owner, group, mode, ACL, labels) differs
 * from keep's, said on stderr as "PATH: WHAT: its owner differs from KEPT's
 * (f's, keep's)". @return false when code is no such refusal (nothing said). */
bool act_access_refused(FILE *out, const char *what, const dupscan_file *f, const dupscan_file *keep, int code);
/* --prune-empty-dirs: remove the directories a file left empty, up to (not
 * including) its argument. */
void act_prune(struct act_ctx *a, const dupscan_file *gone);
/* act_where.c: --overlap and --summary=dirs (text, json, csv); the scan's
 * directories tallied first. @return 0, or 1 after saying why on stderr. */
int act_where(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* The views' failure on standard error, with what to try instead. */
void where_error(const char *what, int rc);
/* A directory's path as shown, ending in '/' (malloc'ed; NULL on ENOMEM). */
char *where_dir_path(const dupscan_scan *scan, size_t dir);
/* The largest whole percentage of whole that part reaches (100 when whole is 0). */
unsigned where_percent(uint64_t part, uint64_t whole);
/* act_html.c: --format=html, one page. @return as act_where(). */
int act_html(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* act_summarize.c */
void act_summarize(const dupscan_scan *scan, FILE *out);

#endif /* DUPSCAN_CLI_H */

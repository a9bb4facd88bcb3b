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
#include "msg.h"

#define ACT_MOVE 'M'        /* --move-to: no short letter */

/* How it is written: --format's word (fdupes is text), or -j. */
enum cli_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_HTML };

/* What is shown of a scan without an action (decided by cli_check()). */
enum cli_view {
	VIEW_SETS,    /* the sets as text (-M: then the summary) */
	VIEW_UNIQUE,  /* -u */
	VIEW_SUMMARY, /* -m */
	VIEW_JSON,    /* -j, --format=json */
	VIEW_CSV,     /* --format=csv */
	VIEW_WHERE,   /* --overlap, --summary=dirs */
	VIEW_MISSING, /* --missing */
	VIEW_PAGE,    /* --format=html */
};

struct cli_path {
	const char *path;
	bool recurse_after; /* given after -R */
};

struct cli_opts {
	bool progress;      /* --progress: even when stderr is not a terminal */
	bool recurse, quiet, summarize, print_summarize, show_size, omit_first,
	     print_unique, print_null, zero_match, hard_links, symlinks, no_hidden,
	     one_fs, isolate, permissions, param_order, reverse, quick;
	bool json /* -j */, no_prompt, soft_abort, no_change_check, dry_run, ignore_access;
	const char *format; /* --format as given (NULL: none), for messages */
	enum cli_format fmt; /* decided by cli_check() */
	bool error_on_dupe, prune_empty_dirs, dirs, cache, cache_clear, cache_trust;
	bool ignore_metadata; /* --ignore-metadata: media files by their payload */
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
	const char **reference; /* --reference, repeatable */
	int nreference;
	bool missing;           /* --missing */
	struct glob_list exclude, include;
	struct keep_rules keep; /* --keep, in the order given */
	unsigned print_stages; /* -P: bit (1 << enum dupscan_stage) per stage */
	struct xf_list filters;
	int partial_only;   /* how many times -T was given */
	int order;          /* enum dupscan_order */
	long chunk_size;    /* 0: library default */
	int64_t io_memory;  /* 0: library default */
	int64_t max_memory; /* --max-memory; 0: no budget */
	const char *temp_dir; /* --temp-dir */
	int threads;        /* 0: library default */
	long max_depth;     /* --max-depth; -1: none given */
	unsigned overlap;   /* --overlap=PERCENT; 0: not given */
	bool summary_dirs;  /* --summary=dirs */
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
	enum cli_view view;
};

/* options.c: @return 0 to go on, or an exit status (after --help, -v or a usage error). */
int cli_parse(int argc, char **argv, struct cli_opts *o, bool *stop);
/* What cli_parse() allocated in o. */
void cli_opts_free(struct cli_opts *o);
/* conflicts.c: the options read as a whole: the modes, --files-from read,
 * the rules of what goes together, the view. @return 0 or EXIT_USAGE. */
int cli_check(struct cli_opts *o);
/* Does what was asked need every file's record (directory sets, a
 * report's files)? Then no budget spills them. */
bool cli_needs_every_record(const struct cli_opts *o);
/* The action c (a letter, or ACT_MOVE), refused when another was given. */
int cli_set_action(struct cli_opts *o, int c);
/* pathlist.c: a path to scan (after_R: given after -R). @return 0 or 1. */
int cli_add_path(struct cli_opts *o, const char *path, bool after_R);
/* --files-from's paths added. @return 0 or an exit status (said). */
int cli_read_files_from(struct cli_opts *o);

/* help.c: --help's text to out. */
void cli_print_help(FILE *out);

#endif /* DUPSCAN_CLI_H */

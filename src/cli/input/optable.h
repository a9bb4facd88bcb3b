/* SPDX-License-Identifier: MIT */
/* optable.h: the one table of dupscan's options. A row per option gives its
 * spellings, its argument, its --help text and section, what the completions
 * offer for it and, for a plain switch, the field it sets; getopt's tables,
 * --help and the bash, zsh and fish completions (optgen.c, at build time)
 * are all made from it. Adding an option: a row here, its case in
 * options.c when it is more than a switch, its man page entry. */
#ifndef DUPSCAN_CLI_OPTABLE_H
#define DUPSCAN_CLI_OPTABLE_H

#include <stddef.h>

enum { /* getopt's value for long-only options (short ones return their letter) */
	OPT_DRY_RUN = 256, OPT_THREADS, OPT_PROTECT, OPT_EXCLUDE, OPT_INCLUDE, OPT_FILES_FROM,
	OPT_MOVE_TO, OPT_JOURNAL, OPT_UNDO, OPT_PRUNE, OPT_DIRS, OPT_CACHE, OPT_CACHE_CLEAR, OPT_IO,
	OPT_IO_MEMORY, OPT_CACHE_TRUST, OPT_KEEP, OPT_FROM_REPORT, OPT_PROGRESS, OPT_MAX_DEPTH, OPT_FORMAT,
	OPT_SERVER, OPT_RSH, OPT_REMOTE_DUPSCAN, OPT_REMOTE_TIMEOUT, OPT_OVERLAP, OPT_SUMMARY, OPT_IGNORE_ACCESS,
	OPT_REFERENCE, OPT_MISSING, OPT_MAX_MEMORY, OPT_TEMP_DIR, OPT_IGNORE_METADATA
};

enum opt_arg { OPT_ARG_NONE, OPT_ARG_REQUIRED, OPT_ARG_OPTIONAL };

enum opt_section { /* --help's headings, in this order */
	SEC_WHICH, SEC_MATCH, SEC_LIST, SEC_ACT, SEC_READ, SEC_HOSTS, SEC_INFO, SEC_COUNT
};

enum { /* opt_def.flags */
	OPTF_REPEAT = 1u << 0,  /* may be given more than once (the completions offer it again) */
	OPTF_ALONE = 1u << 1,   /* --help, -v: prints and exits; nothing goes with it */
	OPTF_NOSPACE = 1u << 2, /* its values are prefixes (-X size+:): no space after one */
};

/* What a value completes to: the words of values, or one of these. */
#define OPT_FILES "@file"
#define OPT_DIRS_ "@dir"

struct opt_def {
	const char *name;     /* the long name, without "--" */
	char letter;          /* the short letter, 0: none */
	int id;               /* what getopt returns: the letter, or an OPT_* */
	enum opt_arg arg;
	const char *meta;     /* the argument's name in --help (BYTES), NULL: none */
	enum opt_section section;
	const char *help;     /* --help's text; a '\n' starts an indented line */
	const char *brief;    /* the completions' one-line description */
	const char *values;   /* what a value completes to (words, OPT_FILES, OPT_DIRS_), NULL: nothing */
	unsigned flags;       /* OPTF_* */
	size_t sets;          /* a switch: 1 + offsetof(struct cli_opts, its bool); 0: options.c decides */
};

#define OPT_MAX 96 /* rows getopt's tables have room for (check_options holds the table to it) */

extern const struct opt_def opt_table[];
extern const size_t opt_count;
extern const char *const opt_section_title[SEC_COUNT];

#endif /* DUPSCAN_CLI_OPTABLE_H */

/* SPDX-License-Identifier: MIT */
/* options.c: the command line read by getopt with tables made from the option
 * table (optable.c); jdupes-compatible; the man page is the reference. A
 * switch sets its field from the table; this file decides what an option's
 * value means; conflicts.c what may go together. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "hosts.h"
#include "optable.h"
#include "dupscan_config.h"

/* getopt's tables from the option table. A leading '-' makes getopt hand
 * over paths in order, so -R can apply to the paths after it while options
 * may still follow paths, as in jdupes; ':' tells a missing value apart. */
static void getopt_tables(struct option *longs, char *shorts)
{
	static const int has[] = { [OPT_ARG_NONE] = no_argument, [OPT_ARG_REQUIRED] = required_argument,
				   [OPT_ARG_OPTIONAL] = optional_argument };
	char *s = shorts;
	*s++ = '-';
	*s++ = ':';
	for (size_t i = 0; i < opt_count && i < OPT_MAX; i++) {
		const struct opt_def *d = &opt_table[i];
		longs[i] = (struct option){ d->name, has[d->arg], NULL, d->id };
		if (d->letter) {
			*s++ = d->letter;
			if (d->arg == OPT_ARG_REQUIRED)
				*s++ = ':';
		}
	}
	longs[opt_count < OPT_MAX ? opt_count : OPT_MAX] = (struct option){ 0 };
	*s = '\0';
}

static const struct opt_def *row_of(int id)
{
	for (size_t i = 0; i < opt_count; i++)
		if (opt_table[i].id == id)
			return &opt_table[i];
	return NULL;
}

/* -v: the program's and the library's versions, and how the library was built
 * (as jdupes lists its compile-time extensions). */
static void print_version(void)
{
	unsigned x = dupscan_xxhash_version();
	printf("dupscan %s (libdupscan %s)\n", DUPSCAN_VERSION_STRING, dupscan_version());
	printf("Built with: %s, xxHash %u.%u.%u\n",
	       dupscan_features() & DUPSCAN_FEATURE_THREADS ? "threads (a reading and hashing pool)" :
							      "no threads (reads in the caller's thread)",
	       x / 10000, x / 100 % 100, x % 100);
	printf("Finds duplicate files; jdupes-compatible options. MIT License.\n");
}

/* An option the server of a HOST:PATH takes too: it chooses files there. */
static int forward(struct cli_opts *o, const char *opt, const char *arg)
{
	const char **f = realloc(o->forward, (size_t)(o->nforward + 2) * sizeof(*f));
	if (!f)
		return msg_nomem(NULL);
	o->forward = f;
	f[o->nforward++] = opt;
	f[o->nforward++] = arg;
	return 0;
}

/* A decimal integer from min to max, the whole of arg. */
static bool parse_long(const char *arg, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* SIZE[K|M|G] in bytes, 1 MiB to 1 TiB. */
static bool parse_memory(const char *arg, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == arg || *end != '\0' || v < 1 || v > (1ll << 40) >> shift || (v << shift) < (1 << 20))
		return false;
	*out = (int64_t)v << shift;
	return true;
}

/* arg's place among words (NULL-terminated). @return its index, or -1. */
static int word_index(const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(arg, words[i]) == 0)
			return i;
	return -1;
}

/* The options whose value is one word of a list. @return 0 or EXIT_USAGE. */
static int parse_word(struct cli_opts *o, int c, const char *arg)
{
	static const char *const io[] = { "auto", "hdd", "ssd", "net", NULL };
	static const int io_mode[] = { DUPSCAN_IO_AUTO, DUPSCAN_IO_HDD, DUPSCAN_IO_SSD, DUPSCAN_IO_NET };
	/* text and fdupes are one listing (jdupes' and fdupes' are the same) */
	static const char *const format[] = { "text", "fdupes", "json", "csv", "html", NULL };
	static const char *const order[] = { "name", "time", NULL };
	static const int order_by[] = { DUPSCAN_ORDER_NAME, DUPSCAN_ORDER_TIME };
	static const char *const stage[] = { "early", "partial", "fullhash", NULL };
	static const int stage_of[] = { DUPSCAN_STAGE_EARLY, DUPSCAN_STAGE_PARTIAL, DUPSCAN_STAGE_FULL };
	static const char *const summary[] = { "dirs", NULL };
	int i;
	switch (c) {
	case OPT_IO:
		if ((i = word_index(arg, io)) < 0)
			return msg_usage("invalid value '%s' for --io (auto, hdd, ssd or net)", arg);
		o->io = io_mode[i];
		return 0;
	case OPT_FORMAT:
		if (word_index(arg, format) < 0)
			return msg_usage("invalid value '%s' for --format (text, json, csv, fdupes or html)", arg);
		o->format = arg;
		return 0;
	case 'o':
		if ((i = word_index(arg, order)) < 0)
			return msg_usage("invalid value '%s' for -o/--order (name or time)", arg);
		o->order = order_by[i];
		return 0;
	case 'P':
		if ((i = word_index(arg, stage)) < 0)
			return msg_usage("invalid value '%s' for -P/--print (early, partial or fullhash)", arg);
		o->print_stages |= 1u << stage_of[i];
		return 0;
	default: /* OPT_SUMMARY */
		if (word_index(arg, summary) < 0)
			return msg_usage("invalid value '%s' for --summary (dirs)", arg);
		o->summary_dirs = true;
		return 0;
	}
}

/* The options whose value is a number. @return 0 or EXIT_USAGE. */
static int parse_number(struct cli_opts *o, int c, const char *arg)
{
	long v = 50;
	switch (c) {
	case OPT_THREADS:
		if (!parse_long(arg, 1, 1024, &v))
			return msg_usage("invalid value '%s' for --threads (1 to 1024)", arg);
		o->threads = (int)v;
		return 0;
	case OPT_REMOTE_TIMEOUT:
		if (!parse_long(arg, 1, 86400, &o->remote_timeout))
			return msg_usage("invalid value '%s' for --remote-timeout (1 to 86400 seconds)", arg);
		return 0;
	case OPT_OVERLAP:
		if (arg && !parse_long(arg, 1, 100, &v))
			return msg_usage("invalid value '%s' for --overlap (a percentage, 1 to 100)", arg);
		o->overlap = (unsigned)v;
		return 0;
	case OPT_MAX_DEPTH:
		if (!parse_long(arg, 0, 1000000, &o->max_depth))
			return msg_usage("invalid value '%s' for --max-depth (0 to 1000000)", arg);
		return 0;
	case OPT_IO_MEMORY:
		if (!parse_memory(arg, &o->io_memory))
			return msg_usage("invalid size '%s' for --io-memory (1M to 1T; K, M, G suffixes)", arg);
		return 0;
	case OPT_MAX_MEMORY:
		if (!parse_memory(arg, &o->max_memory) || o->max_memory < (16 << 20))
			return msg_usage("invalid size '%s' for --max-memory (16M to 1T; K, M, G suffixes)", arg);
		return 0;
	default: /* 'C' */
		if (!parse_long(arg, 4096, 16777216, &o->chunk_size))
			return msg_usage("invalid chunk size '%s' for -C/--chunk-size (4096 to 16777216 bytes)", arg);
		return 0;
	}
}

/* The options whose value is a name (a file, a directory, a command): it
 * may not be empty. @return 0 or EXIT_USAGE. */
static int parse_name(struct cli_opts *o, int c, const char *arg)
{
	static const struct { int id; size_t field; const char *empty; } names[] = {
		{ OPT_MOVE_TO, offsetof(struct cli_opts, move_to), "--move-to needs a directory" },
		{ OPT_RSH, offsetof(struct cli_opts, rsh), "--rsh needs a command" },
		{ OPT_REMOTE_DUPSCAN, offsetof(struct cli_opts, remote_dupscan), "--remote-dupscan needs a path" },
		{ OPT_JOURNAL, offsetof(struct cli_opts, journal), "--journal needs a file name" },
		{ OPT_TEMP_DIR, offsetof(struct cli_opts, temp_dir), "--temp-dir needs a directory" },
		{ OPT_FILES_FROM, offsetof(struct cli_opts, files_from), NULL },
		{ OPT_UNDO, offsetof(struct cli_opts, undo), NULL },
		{ OPT_FROM_REPORT, offsetof(struct cli_opts, from_report), NULL },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].id != c)
			continue;
		if (names[i].empty && !arg[0])
			return msg_usage("%s", names[i].empty);
		*(const char **)(void *)((char *)o + names[i].field) = arg;
		return c == OPT_MOVE_TO ? cli_set_action(o, ACT_MOVE) : 0;
	}
	return -1; /* not a name */
}

/* A repeatable option's path added to its list. @return 0 or the usage status. */
static int add_path(const char ***list, int *n, const char *arg)
{
	const char **v = realloc(*list, (size_t)(*n + 1) * sizeof(*v));
	if (!v)
		return msg_usage("%s", "out of memory");
	*list = v;
	v[(*n)++] = arg;
	return 0;
}

/* The options that are more than a field set. @return 0 or an exit status. */
static int parse_other(struct cli_opts *o, int c, const char *arg, bool *stop)
{
	switch (c) {
	case 'B': case 'd': case 'l': case 'L':
		return cli_set_action(o, c);
	case 'T': o->partial_only++; return 0;
	case OPT_CACHE_TRUST: o->cache = o->cache_trust = true; return 0;
	case OPT_CACHE:
		if (arg && !arg[0])
			return msg_usage("%s", "--cache= needs a file name (or no '=' for the default)");
		o->cache = true;
		o->cache_file = arg;
		return 0;
	case OPT_KEEP: {
		const char *bad = NULL;
		size_t badlen = 0;
		int krc = keep_add(&o->keep, arg, &bad, &badlen);
		if (krc == -ENOMEM)
			return msg_usage("%s", "out of memory");
		if (krc)
			return msg_usage("--keep: unknown rule '%.*s' (rules: newest, oldest, shortest-path, "
					 "longest-path, shallowest, deepest, path=GLOB, most-links, arg-order, most-tags)",
					 (int)badlen, bad);
		return 0;
	}
	case OPT_PROTECT:
		return add_path(&o->protect, &o->nprotect, arg);
	case OPT_REFERENCE:
		return add_path(&o->reference, &o->nreference, arg);
	case OPT_EXCLUDE:
	case OPT_INCLUDE: {
		int grc = glob_add(c == OPT_EXCLUDE ? &o->exclude : &o->include, arg);
		if (grc == -ENOMEM)
			return msg_nomem(NULL);
		if (grc)
			return msg_usage("invalid pattern '%s' for --%s", arg, c == OPT_EXCLUDE ? "exclude" : "include");
		return forward(o, c == OPT_EXCLUDE ? "--exclude" : "--include", arg);
	}
	case 'X': {
		char err[512];
		if (strcasecmp(arg, "help") == 0) {
			xf_help(stdout);
			*stop = true;
			return 0;
		}
		if (xf_add(&o->filters, arg, err, sizeof(err)) != 0)
			return msg_usage("%s", err);
		return forward(o, "-X", arg);
	}
	case 'h': cli_print_help(stdout); *stop = true; return 0;
	default: /* 'v' */ print_version(); *stop = true; return 0;
	}
}

/* getopt's '?' and ':' as a message: glibc sets optopt for long options too,
 * so they are told apart by their spelling; musl may leave optind past argc
 * after a missing value. */
static int bad_option(int c, int argc, char **argv)
{
	const char *cur = optind > 0 && optind <= argc && argv[optind - 1] ? argv[optind - 1] : "";
	bool is_long = strncmp(cur, "--", 2) == 0;
	int len = is_long ? (int)strcspn(cur, "=") : 0;
	if (c == ':')
		return is_long ? msg_usage("option '%.*s' needs a value", len, cur)
			       : msg_usage("option '-%c' needs a value", optopt);
	return is_long ? msg_usage("unknown option '%.*s'", len, cur) : msg_usage("unknown option '-%c'", optopt);
}

/* An option whose value is optional takes it only after '=': in
 * "--overlap 90" the 90 is a path. When that path is not there (nor another
 * host's), it was meant as the value: said, before anything is scanned.
 * @return 0 or EXIT_USAGE. */
static int value_as_path(int c, const char *arg, int argc, char **argv)
{
	const struct opt_def *d = row_of(c);
	const char *next = optind < argc ? argv[optind] : NULL;
	struct stat st;
	if (!d || d->arg != OPT_ARG_OPTIONAL || arg || !next || next[0] == '-' || !next[0] || remote_arg(next) ||
	    lstat(next, &st) == 0)
		return 0;
	return msg_usage("--%s %s: a value of --%s is given after '=' (--%s=%s); as a path, '%s' is not there",
			 d->name, next, d->name, d->name, next, next);
}

/* One option (or a path, c == 1) as getopt returned it. */
static int take(struct cli_opts *o, int c, const char *arg, bool *after_R, bool *stop)
{
	if (c == 1)
		return cli_add_path(o, arg, *after_R);
	if (c == 'R') {
		*after_R = true;
		return 0;
	}
	const struct opt_def *d = row_of(c);
	if (!d)
		return -1;
	if (d->sets) {
		*(bool *)(void *)((char *)o + d->sets - 1) = true;
		return 0;
	}
	int rc = parse_name(o, c, arg);
	if (rc >= 0)
		return rc;
	switch (c) {
	case OPT_IO: case OPT_FORMAT: case 'o': case 'P': case OPT_SUMMARY:
		return parse_word(o, c, arg);
	case OPT_THREADS: case OPT_REMOTE_TIMEOUT: case OPT_OVERLAP: case OPT_MAX_DEPTH: case OPT_IO_MEMORY: case OPT_MAX_MEMORY: case 'C':
		return parse_number(o, c, arg);
	default:
		return parse_other(o, c, arg, stop);
	}
}

int cli_parse(int argc, char **argv, struct cli_opts *o, bool *stop)
{
	struct option longs[OPT_MAX + 1];
	char shorts[2 * OPT_MAX + 3];
	bool after_R = false;
	int c, rc;
	*stop = false;
	opterr = 0;
	o->max_depth = -1;
	o->list_depth = -1;
	getopt_tables(longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		rc = c == '?' || c == ':' ? bad_option(c, argc, argv) : value_as_path(c, optarg, argc, argv);
		if (rc == 0)
			rc = take(o, c, optarg, &after_R, stop);
		if (rc < 0)
			rc = bad_option('?', argc, argv);
		if (rc || *stop)
			return rc;
	}
	for (; optind < argc; optind++)
		if ((rc = cli_add_path(o, argv[optind], after_R)))
			return rc;
	return cli_check(o);
}

void cli_opts_free(struct cli_opts *o)
{
	xf_free(&o->filters);
	glob_free(&o->exclude);
	keep_free(&o->keep);
	glob_free(&o->include);
	free(o->protect);
	free(o->reference);
	free(o->files_from_buf);
	free(o->paths);
	free(o->forward);
}

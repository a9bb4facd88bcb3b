/* SPDX-License-Identifier: MIT */
/* options.c: jdupes-compatible command-line parsing; the man page is the reference. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "hosts.h"
#include "dupscan_config.h"

enum { /* long-only options */
	OPT_DRY_RUN = 256, OPT_THREADS, OPT_PROTECT, OPT_EXCLUDE, OPT_INCLUDE, OPT_FILES_FROM,
	OPT_MOVE_TO, OPT_JOURNAL, OPT_UNDO, OPT_PRUNE, OPT_DIRS, OPT_CACHE, OPT_CACHE_CLEAR, OPT_IO,
	OPT_IO_MEMORY, OPT_CACHE_TRUST, OPT_KEEP, OPT_FROM_REPORT, OPT_PROGRESS, OPT_MAX_DEPTH, OPT_FORMAT,
	OPT_SERVER, OPT_RSH, OPT_REMOTE_DUPSCAN, OPT_REMOTE_TIMEOUT, OPT_OVERLAP, OPT_SUMMARY, OPT_IGNORE_ACCESS
};

static const struct option long_opts[] = {
	{ "print-null", no_argument, NULL, '0' },
	{ "one-file-system", no_argument, NULL, '1' },
	{ "no-hidden", no_argument, NULL, 'A' },
	{ "dedupe", no_argument, NULL, 'B' },
	{ "delete", no_argument, NULL, 'd' },
	{ "cache", optional_argument, NULL, OPT_CACHE },
	{ "cache-clear", no_argument, NULL, OPT_CACHE_CLEAR },
	{ "cache-trust", no_argument, NULL, OPT_CACHE_TRUST },
	{ "dirs", no_argument, NULL, OPT_DIRS },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "error-on-dupe", no_argument, NULL, 'e' },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "files-from", required_argument, NULL, OPT_FILES_FROM },
	{ "ignore-access", no_argument, NULL, OPT_IGNORE_ACCESS },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "move-to", required_argument, NULL, OPT_MOVE_TO },
	{ "protect", required_argument, NULL, OPT_PROTECT },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "from-report", required_argument, NULL, OPT_FROM_REPORT },
	{ "prune-empty-dirs", no_argument, NULL, OPT_PRUNE },
	{ "undo", required_argument, NULL, OPT_UNDO },
	{ "link-soft", no_argument, NULL, 'l' },
	{ "link-hard", no_argument, NULL, 'L' },
	{ "no-prompt", no_argument, NULL, 'N' },
	{ "no-change-check", no_argument, NULL, 't' },
	{ "soft-abort", no_argument, NULL, 'Z' },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "io", required_argument, NULL, OPT_IO },
	{ "io-memory", required_argument, NULL, OPT_IO_MEMORY },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "rsh", required_argument, NULL, OPT_RSH },
	{ "remote-dupscan", required_argument, NULL, OPT_REMOTE_DUPSCAN },
	{ "remote-timeout", required_argument, NULL, OPT_REMOTE_TIMEOUT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "overlap", optional_argument, NULL, OPT_OVERLAP },
	{ "summary", required_argument, NULL, OPT_SUMMARY },
	{ "chunk-size", required_argument, NULL, 'C' },
	{ "omit-first", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "hard-links", no_argument, NULL, 'H' },
	{ "reverse", no_argument, NULL, 'i' },
	{ "isolate", no_argument, NULL, 'I' },
	{ "json", no_argument, NULL, 'j' },
	{ "summarize", no_argument, NULL, 'm' },
	{ "print-summarize", no_argument, NULL, 'M' },
	{ "order", required_argument, NULL, 'o' },
	{ "param-order", no_argument, NULL, 'O' },
	{ "permissions", no_argument, NULL, 'p' },
	{ "print", required_argument, NULL, 'P' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quick", no_argument, NULL, 'Q' },
	{ "recurse", no_argument, NULL, 'r' },
	{ "recurse:", no_argument, NULL, 'R' },
	{ "symlinks", no_argument, NULL, 's' },
	{ "size", no_argument, NULL, 'S' },
	{ "partial-only", no_argument, NULL, 'T' },
	{ "print-unique", no_argument, NULL, 'u' },
	{ "version", no_argument, NULL, 'v' },
	{ "ext-filter", required_argument, NULL, 'X' },
	{ "zero-match", no_argument, NULL, 'z' },
	{ NULL, 0, NULL, 0 }
};

/* A leading '-' makes getopt hand over paths in order, so -R can apply to the
 * paths after it while options may still follow paths, as in jdupes. */
static const char short_opts[] = "-:01ABC:defhHiIjlLmMNo:OpP:qQrRsStTuvX:zZ";

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

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "dupscan: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'dupscan --help' for more information.\n");
	return EXIT_USAGE;
}

static int add_path(struct cli_opts *o, const char *path, bool after_R)
{
	struct cli_path *p = realloc(o->paths, (size_t)(o->npaths + 1) * sizeof(*p));
	if (!p) {
		fprintf(stderr, "dupscan: out of memory\n");
		return 1;
	}
	o->paths = p;
	o->paths[o->npaths++] = (struct cli_path){ path, after_R };
	return 0;
}

/* An option the server of a HOST:PATH takes too: it chooses files there. */
static int forward(struct cli_opts *o, const char *opt, const char *arg)
{
	const char **f = realloc(o->forward, (size_t)(o->nforward + 2) * sizeof(*f));
	if (!f) {
		fprintf(stderr, "dupscan: out of memory\n");
		return 1;
	}
	o->forward = f;
	f[o->nforward++] = opt;
	f[o->nforward++] = arg;
	return 0;
}

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

/* What a scan across hosts does not do (yet, or ever: a remote file is
 * never changed, and a link needs both files on one host). */
static int remote_refusals(const struct cli_opts *o)
{
	if (o->action == 'L' || o->action == 'l' || o->action == 'B')
		return usage_error("%s with a HOST:PATH argument: links and dedupe need both files on this host "
				   "(-d and --move-to change local files only)", action_name(o->action));
	if (o->permissions || o->cache_trust)
		return usage_error("%s is not available with a HOST:PATH argument",
				   o->permissions ? "-p/--permissions" : "--cache-trust");
	return 0;
}

/* --files-from: the whole list in one buffer, split in place (paths point into it). */
static int read_files_from(struct cli_opts *o)
{
	bool is_stdin = strcmp(o->files_from, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(o->files_from, "re");
	if (!f) {
		fprintf(stderr, "dupscan: --files-from '%s': %s\n", o->files_from, strerror(errno));
		return EXIT_USAGE;
	}
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int rc = 0;
	for (;;) {
		if (len + 65536 + 1 > cap) {
			char *b = realloc(buf, cap = (len + 65536 + 1) * 2);
			if (!b) {
				fprintf(stderr, "dupscan: --files-from '%s': out of memory after %zu bytes\n", o->files_from, len);
				rc = 1;
				break;
			}
			buf = b;
		}
		size_t n = fread(buf + len, 1, 65536, f);
		len += n;
		if (n < 65536)
			break;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "dupscan: --files-from '%s': read error\n", o->files_from);
		rc = EXIT_USAGE;
	}
	if (!is_stdin)
		fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	o->files_from_buf = buf;
	char sep = o->print_null ? '\0' : '\n';
	for (size_t i = 0; i < len;) {
		char *p = buf + i;
		char *end = memchr(p, sep, len - i);
		size_t plen = end ? (size_t)(end - p) : len - i;
		p[plen] = '\0';
		i += plen + 1;
		if (plen == 0)
			continue;
		if (memchr(p, '\0', plen)) {
			fprintf(stderr, "dupscan: --files-from '%s': a path holds a NUL byte (use -0 for NUL-separated lists)\n",
				o->files_from);
			return EXIT_USAGE;
		}
		if ((rc = add_path(o, p, false)))
			return rc;
	}
	return 0;
}

/* SIZE[K|M|G] in bytes, 1 MiB to 1 TiB. */
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

static int parse_memory(const char *arg, int64_t *out)
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
		return -1;
	*out = (int64_t)v << shift;
	return 0;
}

static int parse_chunk(const char *arg, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end != '\0' || v < 4096 || v > 16777216)
		return -1;
	*out = v;
	return 0;
}

void cli_opts_free(struct cli_opts *o)
{
	xf_free(&o->filters);
	glob_free(&o->exclude);
	keep_free(&o->keep);
	glob_free(&o->include);
	free(o->protect);
	free(o->files_from_buf);
	free(o->paths);
	free(o->forward);
}

/* --overlap, --summary=dirs and --format=html: views of the whole scan, in
 * place of the sets' listing. With --summary=dirs, --max-depth limits the
 * directories listed, as du's does, not the scan. */
static int check_views(struct cli_opts *o)
{
	if (!o->overlap && !o->summary_dirs && !o->html)
		return 0;
	const char *view = o->html ? "--format=html" : o->overlap ? "--overlap" : "--summary=dirs";
	if (o->action || o->from_report || o->print_unique || o->summarize || o->print_summarize || o->dirs ||
	    o->omit_first || o->print_null || o->error_on_dupe || o->partial_only)
		return usage_error("%s shows where the copies are, in place of the sets: it is refused with an action, "
				   "--from-report, -u, -m, -M, -e, -f, -0, -TT and --dirs", view);
	if (o->csv && o->overlap && o->summary_dirs)
		return usage_error("%s", "--format=csv gives one table: --overlap or --summary=dirs, not both");
	if (o->summary_dirs && o->max_depth >= 0) {
		o->list_depth = o->max_depth;
		o->max_depth = -1;
	}
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_opts *o, bool *stop)
{
	bool after_R = false;
	int c, rc;
	*stop = false;
	opterr = 0;
	o->max_depth = -1;
	o->list_depth = -1;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if ((rc = add_path(o, optarg, after_R)))
				return rc;
			break;
		case '0': o->print_null = true; break;
		case '1': o->one_fs = true; break;
		case 'A': o->no_hidden = true; break;
		case OPT_MOVE_TO:
			if (!optarg[0])
				return usage_error("%s", "--move-to needs a directory");
			o->move_to = optarg;
			c = ACT_MOVE;
			/* fall through */
		case 'B':
		case 'd':
		case 'l':
		case 'L':
			if (o->action && o->action != c)
				return usage_error("choose one action: %s and %s were both given",
						   action_name(o->action), action_name(c));
			o->action = c;
			break;
		case 'e': o->error_on_dupe = true; break;
		case OPT_FROM_REPORT: o->from_report = optarg; break;
		case OPT_KEEP: {
			const char *bad = NULL;
			size_t badlen = 0;
			int krc = keep_add(&o->keep, optarg, &bad, &badlen);
			if (krc == -ENOMEM)
				return usage_error("%s", "out of memory");
			if (krc)
				return usage_error("--keep: unknown rule '%.*s' (rules: newest, oldest, shortest-path, "
						   "longest-path, shallowest, deepest, path=GLOB, most-links, arg-order)",
						   (int)badlen, bad);
			break;
		}
		case OPT_PROTECT: {
			const char **v = realloc(o->protect, (size_t)(o->nprotect + 1) * sizeof(*v));
			if (!v)
				return usage_error("%s", "out of memory");
			o->protect = v;
			v[o->nprotect++] = optarg;
			break;
		}
		case OPT_EXCLUDE:
		case OPT_INCLUDE:
			if (glob_add(c == OPT_EXCLUDE ? &o->exclude : &o->include, optarg) != 0)
				return usage_error("invalid pattern '%s' for --%s", optarg,
						   c == OPT_EXCLUDE ? "exclude" : "include");
			if ((rc = forward(o, c == OPT_EXCLUDE ? "--exclude" : "--include", optarg)))
				return rc;
			break;
		case OPT_SERVER: o->server = true; break;
		case OPT_RSH:
			if (!optarg[0])
				return usage_error("%s", "--rsh needs a command");
			o->rsh = optarg;
			break;
		case OPT_REMOTE_DUPSCAN:
			if (!optarg[0])
				return usage_error("%s", "--remote-dupscan needs a path");
			o->remote_dupscan = optarg;
			break;
		case OPT_REMOTE_TIMEOUT:
			if (!parse_long(optarg, 1, 86400, &o->remote_timeout))
				return usage_error("invalid value '%s' for --remote-timeout (1 to 86400 seconds)", optarg);
			break;
		case OPT_FILES_FROM: o->files_from = optarg; break;
		case OPT_JOURNAL:
			if (!optarg[0])
				return usage_error("%s", "--journal needs a file name");
			o->journal = optarg;
			break;
		case OPT_UNDO: o->undo = optarg; break;
		case OPT_PRUNE: o->prune_empty_dirs = true; break;
		case OPT_DIRS: o->dirs = true; break;
		case OPT_CACHE:
			if (optarg && !optarg[0])
				return usage_error("%s", "--cache= needs a file name (or no '=' for the default)");
			o->cache = true;
			o->cache_file = optarg;
			break;
		case OPT_CACHE_CLEAR: o->cache_clear = true; break;
		case OPT_CACHE_TRUST: o->cache = o->cache_trust = true; break;
		case 'N': o->no_prompt = true; break;
		case 't': o->no_change_check = true; break;
		case 'Z': o->soft_abort = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_IGNORE_ACCESS: o->ignore_access = true; break;
		case OPT_THREADS: {
			long v;
			if (!parse_long(optarg, 1, 1024, &v))
				return usage_error("invalid value '%s' for --threads (1 to 1024)", optarg);
			o->threads = (int)v;
			break;
		}
		case OPT_IO:
			if (!strcmp(optarg, "auto"))
				o->io = DUPSCAN_IO_AUTO;
			else if (!strcmp(optarg, "hdd"))
				o->io = DUPSCAN_IO_HDD;
			else if (!strcmp(optarg, "ssd"))
				o->io = DUPSCAN_IO_SSD;
			else if (!strcmp(optarg, "net"))
				o->io = DUPSCAN_IO_NET;
			else
				return usage_error("invalid value '%s' for --io (auto, hdd, ssd or net)", optarg);
			break;
		case OPT_FORMAT:
			/* text and fdupes are one listing (jdupes' and fdupes' are the same) */
			if (strcmp(optarg, "text") && strcmp(optarg, "fdupes") && strcmp(optarg, "json") && strcmp(optarg, "csv") &&
			    strcmp(optarg, "html"))
				return usage_error("invalid value '%s' for --format (text, json, csv, fdupes or html)", optarg);
			o->format = optarg;
			break;
		case OPT_OVERLAP: {
			long v = 50;
			if (optarg && !parse_long(optarg, 1, 100, &v))
				return usage_error("invalid value '%s' for --overlap (a percentage, 1 to 100)", optarg);
			o->overlap = (unsigned)v;
			break;
		}
		case OPT_SUMMARY:
			if (strcmp(optarg, "dirs") != 0)
				return usage_error("invalid value '%s' for --summary (dirs)", optarg);
			o->summary_dirs = true;
			break;
		case OPT_MAX_DEPTH:
			if (!parse_long(optarg, 0, 1000000, &o->max_depth))
				return usage_error("invalid value '%s' for --max-depth (0 to 1000000)", optarg);
			break;
		case OPT_IO_MEMORY:
			if (parse_memory(optarg, &o->io_memory) != 0)
				return usage_error("invalid size '%s' for --io-memory (1M to 1T; K, M, G suffixes)", optarg);
			break;
		case 'C':
			if (parse_chunk(optarg, &o->chunk_size) != 0)
				return usage_error("invalid chunk size '%s' for -C/--chunk-size (4096 to 16777216 bytes)", optarg);
			break;
		case 'f': o->omit_first = true; break;
		case 'h':
			cli_print_help(stdout);
			*stop = true;
			return 0;
		case 'H': o->hard_links = true; break;
		case 'i': o->reverse = true; break;
		case 'I': o->isolate = true; break;
		case 'j': o->json = true; break;
		case 'm': o->summarize = true; break;
		case 'M': o->print_summarize = true; break;
		case 'o':
			if (strcmp(optarg, "name") == 0)
				o->order = DUPSCAN_ORDER_NAME;
			else if (strcmp(optarg, "time") == 0)
				o->order = DUPSCAN_ORDER_TIME;
			else
				return usage_error("invalid value '%s' for -o/--order (name or time)", optarg);
			break;
		case 'O': o->param_order = true; break;
		case 'p': o->permissions = true; break;
		case 'P':
			if (strcmp(optarg, "early") == 0)
				o->print_stages |= 1u << DUPSCAN_STAGE_EARLY;
			else if (strcmp(optarg, "partial") == 0)
				o->print_stages |= 1u << DUPSCAN_STAGE_PARTIAL;
			else if (strcmp(optarg, "fullhash") == 0)
				o->print_stages |= 1u << DUPSCAN_STAGE_FULL;
			else
				return usage_error("invalid value '%s' for -P/--print (early, partial or fullhash)", optarg);
			break;
		case 'q': o->quiet = true; break;
		case OPT_PROGRESS: o->progress = true; break;
		case 'Q': o->quick = true; break;
		case 'r': o->recurse = true; break;
		case 'R': after_R = true; break;
		case 's': o->symlinks = true; break;
		case 'S': o->show_size = true; break;
		case 'T': o->partial_only++; break;
		case 'u': o->print_unique = true; break;
		case 'v':
			print_version();
			*stop = true;
			return 0;
		case 'X': {
			char err[512];
			if (strcasecmp(optarg, "help") == 0) {
				xf_help(stdout);
				*stop = true;
				return 0;
			}
			if (xf_add(&o->filters, optarg, err, sizeof(err)) != 0)
				return usage_error("%s", err);
			if ((rc = forward(o, "-X", optarg)))
				return rc;
			break;
		}
		case 'z': o->zero_match = true; break;
		case ':':
		default: {
			/* glibc sets optopt for long options too: tell them apart by spelling */
			/* musl may leave optind past argc after a missing value */
			const char *cur = optind > 0 && optind <= argc && argv[optind - 1] ? argv[optind - 1] : "";
			bool is_long = strncmp(cur, "--", 2) == 0;
			int len = is_long ? (int)strcspn(cur, "=") : 0;
			if (c == ':')
				return is_long ? usage_error("option '%.*s' needs a value", len, cur)
					       : usage_error("option '-%c' needs a value", optopt);
			return is_long ? usage_error("unknown option '%.*s'", len, cur)
				       : usage_error("unknown option '-%c'", optopt);
		}
		}
	}
	for (; optind < argc; optind++)
		if ((rc = add_path(o, argv[optind], after_R)))
			return rc;
	if (o->undo) {
		if (o->npaths || o->action || o->files_from)
			return usage_error("%s", "--undo=FILE takes no paths and no action");
		return 0;
	}
	if (o->files_from && (rc = read_files_from(o)))
		return rc;
	if (o->server) {
		if (o->npaths || o->action || o->from_report || o->files_from)
			return usage_error("%s", "--server scans what its client asks: it takes no paths and no action");
		return 0;
	}
	for (int i = 0; i < o->npaths; i++)
		o->nremote += remote_arg(o->paths[i].path);
	if (o->nremote && (rc = remote_refusals(o)))
		return rc;
	if (o->cache_clear && o->npaths == 0 && !o->files_from)
		return 0; /* main clears it and stops */
	if (o->partial_only == 1)
		return usage_error("%s", "-T/--partial-only must be given twice (-TT) to take effect: it matches on the first 4096 bytes only");
	if (o->from_report) {
		if (o->npaths || o->files_from)
			return usage_error("%s", "--from-report=FILE takes no paths: the report names the files");
		if (!o->action)
			return usage_error("%s", "--from-report needs an action: -d, -L, -l, -B or --move-to (with --dry-run to see what it would do)");
		if (o->dirs || o->cache || o->quick || o->partial_only)
			return usage_error("%s", "--from-report acts on the report's sets: --dirs, --cache, -Q and -T do not apply");
	} else if (o->npaths == 0) {
		return usage_error("%s", o->files_from ? "no paths in --files-from" : "no files or directories given");
	}
	if (o->format && o->json && strcmp(o->format, "json") != 0)
		return usage_error("-j/--json and --format=%s: two formats", o->format);
	if (o->format) {
		o->json = strcmp(o->format, "json") == 0;
		o->csv = strcmp(o->format, "csv") == 0;
		o->html = strcmp(o->format, "html") == 0;
	}
	if ((rc = check_views(o)) != 0)
		return rc;
	if (o->csv && (o->action || o->print_unique || o->summarize || o->print_summarize || o->dirs ||
		       o->omit_first || o->print_null || o->error_on_dupe))
		return usage_error("%s", "--format=csv lists the sets of files, each whole: it is refused with an action, "
			"-u, -m, -M, -e, -f, -0 and --dirs");
	bool recursing = o->recurse;
	for (int i = 0; i < o->npaths; i++)
		recursing = recursing || o->paths[i].recurse_after;
	if (o->max_depth >= 0 && !recursing && !o->summary_dirs)
		return usage_error("%s", "--max-depth limits recursion: give -r (or -R before the directories)");
	if (o->prune_empty_dirs && o->action != 'd' && o->action != ACT_MOVE)
		return usage_error("%s", "--prune-empty-dirs needs -d or --move-to");
	if (o->journal && !o->action)
		return usage_error("%s", "--journal needs an action: -d, -L, -l, -B or --move-to");
	if (o->dirs && o->action)
		return usage_error("--dirs lists directories; it is refused with %s (act on files without --dirs)",
				   action_name(o->action));
	if (o->cache_trust && (o->quick || o->partial_only))
		return usage_error("%s", "--cache-trust is refused with -Q and -TT: they neither use nor save the cache");
	if (o->dirs && (o->quick || o->partial_only))
		return usage_error("%s", "--dirs needs every file pair compared byte by byte: it is refused with -Q and -TT");
	if (o->error_on_dupe && o->action)
		return usage_error("-e/--error-on-dupe stops at the first duplicate; it is refused with %s",
				   action_name(o->action));
	if (o->partial_only >= 2 && o->action)
		return usage_error("-TT matches on the first 4096 bytes only; it is refused with %s, "
				   "which would act on files that may differ", action_name(o->action));
	if (o->dry_run && !o->action)
		return usage_error("%s", "--dry-run needs an action: -d, -L, -l, -B or --move-to");
	if (o->ignore_access && (!o->action || o->action == 'B'))
		return usage_error("%s", "--ignore-access goes with -L, -l, -d or --move-to");
	return 0;
}

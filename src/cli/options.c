/* SPDX-License-Identifier: MIT */
/* options.c: jdupes-compatible command-line parsing; the man page is the reference. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "dupscan_config.h"

static const char help_text[] =
"Usage: dupscan [options] FILES and/or DIRECTORIES...\n"
"\n"
"Prints sets of duplicate files (identical content, confirmed byte by byte).\n"
"\n"
" -0 --print-null      end each printed path with a NUL byte instead of a newline\n"
" -1 --one-file-system never match files on different filesystems or devices\n"
" -A --no-hidden       skip hidden files and directories (names starting with '.')\n"
" -B --dedupe          ask the filesystem to share the data of duplicates\n"
"                      (Linux FIDEDUPERANGE: btrfs, xfs with reflink)\n"
" -C --chunk-size=BYTES  read size, 4096 to 16777216 (default 262144)\n"
" -d --delete          prompt for the files to keep in each set, delete the rest\n"
"    --dry-run         with an action: print what it would do, change nothing\n"
" -f --omit-first      omit the first file of each set\n"
" -h --help            print this help and exit\n"
" -H --hard-links      list every path of hard-linked files; hard links to one\n"
"                      inode are then duplicates of each other\n"
" -i --reverse         reverse the order of files and sets\n"
" -I --isolate         files under the same path argument never match each other\n"
" -j --json            print the sets as JSON (jdupes' shape)\n"
" -l --link-soft       replace duplicates by relative symlinks to the first file\n"
" -L --link-hard       replace duplicates by hard links to the first file\n"
" -m --summarize       print only a summary of the duplicates\n"
" -M --print-summarize print the sets, then the summary\n"
" -N --no-prompt       with -d: keep the first file of each set, delete the rest\n"
" -o --order=BY        order files by name (default) or time (modification time)\n"
" -O --param-order     order by path argument first, then by -o\n"
" -p --permissions     files with different mode, owner or group never match\n"
" -P --print=STAGE     also print the files that pass a stage together:\n"
"                      early, partial or fullhash (repeatable)\n"
" -q --quiet           no progress indicator\n"
" -Q --quick           skip the byte-by-byte confirmation: hashes only (risky)\n"
" -r --recurse         descend into subdirectories of every directory argument\n"
" -R --recurse:        descend into subdirectories of directory arguments given\n"
"                      after this option only\n"
" -s --symlinks        follow symlinks to files and directories\n"
" -S --size            print the size of the files of each set\n"
" -t --no-change-check do not re-check that files are unchanged before acting\n"
"    --threads=N       read and hash with N threads (default: one per CPU;\n"
"                      1 when built without thread support)\n"
" -T --partial-only    match on size and the first 4096 bytes only; must be given\n"
"                      twice (-TT); dangerous\n"
" -u --print-unique    print the files that have no duplicate\n"
" -v --version         print the version and exit\n"
" -X --ext-filter=SPEC  only consider files passing a filter (repeatable);\n"
"                      '-X help' lists them: size[+-=]:N, noext:, onlyext:,\n"
"                      nostr:, onlystr:, newer:, older:\n"
" -z --zero-match      zero-length files are duplicates of each other\n"
" -Z --soft-abort      on Ctrl-C, act on the sets found so far\n"
"\n"
"Exit status: 0 scan completed, 1 a path could not be read, 2 usage error.\n"
"See dupscan(1) for details.\n";

enum { OPT_DRY_RUN = 256, OPT_THREADS }; /* long-only options */

static const struct option long_opts[] = {
	{ "print-null", no_argument, NULL, '0' },
	{ "one-file-system", no_argument, NULL, '1' },
	{ "no-hidden", no_argument, NULL, 'A' },
	{ "dedupe", no_argument, NULL, 'B' },
	{ "delete", no_argument, NULL, 'd' },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "link-soft", no_argument, NULL, 'l' },
	{ "link-hard", no_argument, NULL, 'L' },
	{ "no-prompt", no_argument, NULL, 'N' },
	{ "no-change-check", no_argument, NULL, 't' },
	{ "soft-abort", no_argument, NULL, 'Z' },
	{ "threads", required_argument, NULL, OPT_THREADS },
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
static const char short_opts[] = "-:01ABC:dfhHiIjlLmMNo:OpP:qQrRsStTuvX:zZ";

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

int cli_parse(int argc, char **argv, struct cli_opts *o, bool *stop)
{
	bool after_R = false;
	int c, rc;
	*stop = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if ((rc = add_path(o, optarg, after_R)))
				return rc;
			break;
		case '0': o->print_null = true; break;
		case '1': o->one_fs = true; break;
		case 'A': o->no_hidden = true; break;
		case 'B':
		case 'd':
		case 'l':
		case 'L':
			if (o->action && o->action != c)
				return usage_error("choose one action: -%c and -%c were both given", o->action, c);
			o->action = c;
			break;
		case 'N': o->no_prompt = true; break;
		case 't': o->no_change_check = true; break;
		case 'Z': o->soft_abort = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_THREADS: {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 1024)
				return usage_error("invalid value '%s' for --threads (1 to 1024)", optarg);
			o->threads = (int)v;
			break;
		}
		case 'C':
			if (parse_chunk(optarg, &o->chunk_size) != 0)
				return usage_error("invalid chunk size '%s' for -C/--chunk-size (4096 to 16777216 bytes)", optarg);
			break;
		case 'f': o->omit_first = true; break;
		case 'h':
			fputs(help_text, stdout);
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
		case 'Q': o->quick = true; break;
		case 'r': o->recurse = true; break;
		case 'R': after_R = true; break;
		case 's': o->symlinks = true; break;
		case 'S': o->show_size = true; break;
		case 'T': o->partial_only++; break;
		case 'u': o->print_unique = true; break;
		case 'v':
			printf("dupscan %s (libdupscan %s)\n", DUPSCAN_VERSION_STRING, dupscan_version());
			printf("Finds duplicate files; jdupes-compatible options. MIT License.\n");
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
			break;
		}
		case 'z': o->zero_match = true; break;
		case ':':
		default: {
			/* glibc sets optopt for long options too: tell them apart by spelling */
			const char *cur = optind > 0 ? argv[optind - 1] : "";
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
	if (o->partial_only == 1)
		return usage_error("%s", "-T/--partial-only must be given twice (-TT) to take effect: it matches on the first 4096 bytes only");
	if (o->npaths == 0)
		return usage_error("%s", "no files or directories given");
	if (o->partial_only >= 2 && o->action)
		return usage_error("-TT matches on the first 4096 bytes only; it is refused with -%c, "
				   "which would act on files that may differ", o->action);
	if (o->dry_run && !o->action)
		return usage_error("%s", "--dry-run needs an action: -d, -L, -l or -B");
	return 0;
}

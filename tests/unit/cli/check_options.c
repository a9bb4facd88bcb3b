/* SPDX-License-Identifier: MIT */
/* check_options: the program's command line as cli_parse() reads it: what
 * each option sets, and every refusal the man page names (exit status 2). */
#define _GNU_SOURCE
#include <check.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optable.h"
#include "testutil.h"

/* Parse "dupscan" and the arguments (NULL-terminated) into *o. @return cli_parse()'s status. */
static int parse(struct cli_opts *o, ...)
{
	char *argv[32] = { "dupscan" };
	int argc = 1;
	va_list ap;
	va_start(ap, o);
	for (char *a = va_arg(ap, char *); a && argc < 31; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	memset(o, 0, sizeof(*o));
	optind = 0; /* getopt starts afresh */
	bool stop = false;
	return cli_parse(argc, argv, o, &stop);
}

/* The status of parsing the arguments alone. */
static int status_of(const char *first, ...)
{
	char *argv[32] = { "dupscan", (char *)first };
	int argc = 2;
	va_list ap;
	va_start(ap, first);
	for (char *a = va_arg(ap, char *); a && argc < 31; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	struct cli_opts o = { 0 };
	optind = 0;
	bool stop = false;
	int rc = cli_parse(argc, argv, &o, &stop);
	cli_opts_free(&o);
	return rc;
}

START_TEST(test_sets)
{
	struct cli_opts o;
	ck_assert_int_eq(parse(&o, "-rdN", "a", "b", NULL), 0);
	ck_assert(o.recurse && o.no_prompt && o.action == 'd');
	ck_assert_int_eq(o.npaths, 2);
	ck_assert_str_eq(o.paths[1].path, "b");
	cli_opts_free(&o);
	ck_assert_int_eq(parse(&o, "--move-to=/x", "--keep=oldest,newest", "--keep=deepest", "--io=hdd", "t", NULL), 0);
	ck_assert(o.action == ACT_MOVE && strcmp(o.move_to, "/x") == 0);
	ck_assert_uint_eq(o.keep.n, 3);
	ck_assert_int_eq(o.io, DUPSCAN_IO_HDD);
	cli_opts_free(&o);
	ck_assert_int_eq(parse(&o, "-TT", "--threads=3", "--io-memory=64M", "t", NULL), 0);
	ck_assert_int_eq(o.partial_only, 2);
	ck_assert_int_eq(o.threads, 3);
	ck_assert(o.io_memory == 64LL << 20);
	cli_opts_free(&o);
	ck_assert_int_eq(parse(&o, "-R", "a", "b", NULL), 0);
	ck_assert(o.paths[0].recurse_after && o.paths[1].recurse_after);
	cli_opts_free(&o);
}
END_TEST

/* The table agrees with itself: each name, letter and value once; a short
 * option returns its letter; an argument has a name in --help; a switch sets
 * a bool and takes no value; it fits getopt's tables; --help shows it. */
START_TEST(test_table)
{
	ck_assert_uint_gt(opt_count, 50);
	ck_assert_uint_lt(opt_count, OPT_MAX);
	char help[16384];
	FILE *f = fmemopen(help, sizeof(help), "w");
	cli_print_help(f);
	fclose(f);
	for (size_t i = 0; i < opt_count; i++) {
		const struct opt_def *d = &opt_table[i];
		ck_assert_msg(d->letter ? d->id == d->letter : d->id >= 256, "--%s: its id", d->name);
		ck_assert_msg((d->arg == OPT_ARG_NONE) == (d->meta == NULL), "--%s: its argument's name", d->name);
		ck_assert_msg(!d->sets || d->arg == OPT_ARG_NONE, "--%s: a switch with a value", d->name);
		ck_assert_msg(d->help && d->help[0] && d->brief && d->brief[0], "--%s: its texts", d->name);
		ck_assert_msg(d->section < SEC_COUNT, "--%s: its section", d->name);
		for (size_t k = i + 1; k < opt_count; k++) {
			ck_assert_msg(strcmp(d->name, opt_table[k].name) != 0, "--%s twice", d->name);
			ck_assert_msg(d->id != opt_table[k].id, "--%s and --%s: one id", d->name, opt_table[k].name);
		}
		char spelled[64];
		snprintf(spelled, sizeof(spelled), "--%s%s", d->name, d->arg == OPT_ARG_REQUIRED ? "=" :
								  d->arg == OPT_ARG_OPTIONAL ? "[=" : " ");
		ck_assert_msg(strstr(help, spelled), "--help lacks %s", spelled);
	}
}
END_TEST

/* Each switch of the table sets its field, by either spelling. */
START_TEST(test_switches)
{
	for (size_t i = 0; i < opt_count; i++) {
		const struct opt_def *d = &opt_table[i];
		if (!d->sets)
			continue;
		char lng[64], shrt[4] = { '-', d->letter, 0, 0 };
		snprintf(lng, sizeof(lng), "--%s", d->name);
		for (int way = 0; way < (d->letter ? 2 : 1); way++) {
			struct cli_opts o;
			memset(&o, 0, sizeof(o));
			char *argv[] = { "dupscan", way ? shrt : lng, NULL };
			optind = 0;
			bool stop = false;
			cli_parse(2, argv, &o, &stop); /* (most refuse a run without paths: the field is set all the same) */
			ck_assert_msg(*(bool *)((char *)&o + d->sets - 1), "%s sets nothing", argv[1]);
			cli_opts_free(&o);
		}
	}
}
END_TEST

START_TEST(test_refusals)
{
	ck_assert_int_eq(status_of("-L", "-l", "t", NULL), EXIT_USAGE);       /* one action */
	ck_assert_int_eq(status_of("--threads=0", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--io=tape", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--io-memory=512K", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("-T", "t", NULL), EXIT_USAGE);             /* -T needs -TT */
	ck_assert_int_eq(status_of("--dry-run", "t", NULL), EXIT_USAGE);      /* needs an action */
	ck_assert_int_eq(status_of("--journal=j", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--prune-empty-dirs", "-L", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--move-to=", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--keep=biggest", "-dN", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--undo=j", "t", NULL), EXIT_USAGE);       /* no paths */
	ck_assert_int_eq(status_of("--from-report=r", NULL), EXIT_USAGE);     /* needs an action */
	ck_assert_int_eq(status_of("--from-report=r", "-dN", "t", NULL), EXIT_USAGE); /* no paths */
	ck_assert_int_eq(status_of("--cache-trust", "-Q", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("--dirs", "-dN", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("-o", "size", "t", NULL), EXIT_USAGE);
	ck_assert_int_eq(status_of("-r", NULL), EXIT_USAGE);                  /* no paths */
	ck_assert_int_eq(status_of("--no-such-option", "t", NULL), EXIT_USAGE);
	/* and what is accepted */
	ck_assert_int_eq(status_of("--from-report=r", "-dN", NULL), 0);
	ck_assert_int_eq(status_of("--undo=j", NULL), 0);
	ck_assert_int_eq(status_of("-rm", "--io-memory=1M", "t", NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("cli_parse");
	tcase_add_test(tc, test_sets);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_switches);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

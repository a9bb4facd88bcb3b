/* SPDX-License-Identifier: MIT */
/* help.c: --help, made from the option table: a section at a time, each
 * option's spellings in the first 22 columns and its text beside them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "optable.h"

#define HELP_COLUMN 22 /* where the text starts; a spelling that reaches it is followed by two spaces */

static void print_row(const struct opt_def *d, FILE *out)
{
	char spell[64];
	int n = d->letter ? snprintf(spell, sizeof(spell), " -%c --%s", d->letter, d->name)
			  : snprintf(spell, sizeof(spell), "    --%s", d->name);
	if (d->arg == OPT_ARG_REQUIRED)
		n += snprintf(spell + n, sizeof(spell) - (size_t)n, "=%s", d->meta);
	else if (d->arg == OPT_ARG_OPTIONAL)
		n += snprintf(spell + n, sizeof(spell) - (size_t)n, "[=%s]", d->meta);
	fprintf(out, "%-*s", n < HELP_COLUMN ? HELP_COLUMN : n + 2, spell);
	for (const char *line = d->help; *line;) {
		size_t len = strcspn(line, "\n");
		fprintf(out, "%.*s\n", (int)len, line);
		line += len;
		if (*line == '\n' && *++line)
			fprintf(out, "%*s", HELP_COLUMN, "");
	}
}

void cli_print_help(FILE *out)
{
	fputs("Usage: dupscan [options] FILES and/or DIRECTORIES...\n"
	      "\n"
	      "Prints sets of duplicate files (identical content, confirmed byte by byte).\n", out);
	for (int s = 0; s < SEC_COUNT; s++) {
		fprintf(out, "\n%s:\n", opt_section_title[s]);
		for (size_t i = 0; i < opt_count; i++)
			if ((int)opt_table[i].section == s)
				print_row(&opt_table[i], out);
	}
	fputs("\n"
	      "Exit status: 0 scan completed, 1 a path could not be read or acted on,\n"
	      "2 usage error or a question that examined nothing (nothing is changed),\n"
	      "3 a file --missing lists, 255 a duplicate was found with -e.\n"
	      "See dupscan(1) for details.\n", out);
}

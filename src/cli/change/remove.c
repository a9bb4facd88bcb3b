/* SPDX-License-Identifier: MIT */
/* remove.c: -d, with jdupes' prompt, or -dN keeping the first file of each set. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "prompt.h"
#include "output/output.h"

static void line(FILE *out, const char *tag, const char *path, const char *why)
{
	fprintf(out, "   %s ", tag);
	fwrite(path, 1, strlen(path), out);
	if (why)
		fprintf(out, " -- %s", why);
	fputc('\n', out);
}

static const char prompt_help[] =
	"Type the numbers of the files to keep, separated by commas or spaces\n"
	"(for example 1,3); the other files of the set are deleted. 'a' or 'all'\n"
	"keeps every file. An answer always keeps at least one file; end of input\n"
	"keeps every file of this and the remaining sets.\n";

/* @return 0 to go on, 1 when input ended (keep everything from now on). */
static int ask(const dupscan_set *set, size_t index, size_t total, size_t preset, bool *keep, FILE *out)
{
	size_t n = dupscan_set_file_count(set);
	act_print_groups(set, 0, out); /* (--ignore-metadata: whose tags differ) */
	for (size_t k = 0; k < n; k++) {
		const char *p = dupscan_file_path(dupscan_set_file(set, k));
		fprintf(out, "[%zu] ", k + 1);
		fwrite(p, 1, strlen(p), out);
		fputc('\n', out);
	}
	fputs("\nSpecify multiple files with commas like this: 1,2,4,6\n", out);
	if (preset != SIZE_MAX)
		fprintf(out, "Enter alone keeps [%zu] (chosen by --keep)\n", preset + 1);
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	for (;;) {
		fprintf(out, "Set %zu of %zu: keep which files? (1 - %zu, [a]ll, [h]elp): ", index + 1, total, n);
		fflush(out);
		if (getline(&buf, &cap, stdin) < 0) {
			fputc('\n', out);
			rc = 1;
			break;
		}
		if (preset != SIZE_MAX && buf[strspn(buf, " \t\r\n")] == '\0') {
			for (size_t k = 0; k < n; k++)
				keep[k] = k == preset;
			break;
		}
		enum prompt_answer a = prompt_parse(buf, n, keep);
		if (a == PROMPT_KEEP)
			break;
		if (a == PROMPT_ALL) {
			for (size_t k = 0; k < n; k++)
				keep[k] = true;
			break;
		}
		fputs(a == PROMPT_HELP ? prompt_help : "Invalid answer: numbers from the list, 'all' or 'help'.\n", out);
	}
	free(buf);
	if (rc)
		for (size_t k = 0; k < n; k++)
			keep[k] = true;
	return rc;
}

int act_delete(const dupscan_scan *scan, struct act_ctx *a)
{
	const struct cli_opts *o = a->o;
	FILE *out = a->out;
	int failures = 0;
	bool eof = false;
	size_t total = dupscan_set_count(scan);
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t n = dupscan_set_file_count(set);
		bool *keep = calloc(n, sizeof(*keep));
		if (!keep)
			return failures + 1;
		if (o->no_prompt) {
			const dupscan_file *first = dupscan_set_file(set, keep_index(set, &o->keep));
			for (size_t k = 0; k < n; k++)
				keep[k] = dupscan_set_file(set, k) == first;
			fputc('\n', out);
			act_print_groups(set, 0, out);
		} else if (eof) {
			for (size_t k = 0; k < n; k++)
				keep[k] = true;
		} else {
			eof = ask(set, i, total, o->keep.n ? keep_index(set, &o->keep) : SIZE_MAX, keep, out) != 0;
		}
		/* every deletion is checked against the first file kept */
		const dupscan_file *kept = NULL;
		for (size_t k = 0; k < n && !kept; k++)
			if (keep[k])
				kept = dupscan_set_file(set, k);
		for (size_t k = 0; k < n; k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (keep[k] || dupscan_file_is_protected(f) || dupscan_file_host(f)) {
				/* a protected file is marked kept or not: it is why the set keeps it */
				line(out, "[+]", dupscan_file_path(f),
				     dupscan_file_is_protected(f) ? "protected" : keep[k] ? NULL : "on another host");
				continue;
			}
			int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED
				 : act_journal(a, "delete", set, kept, f, NULL, NULL);
			if (rc == 0)
				rc = dupscan_remove_duplicate(kept, f, a->flags);
			if (rc == 0) {
				line(out, "[-]", dupscan_file_path(f),
				     dupscan_same_bytes(kept, f) ? NULL : "its own tags went with it (the same picture or sound is kept)");
				act_prune(a, f);
			} else {
				line(out, "[!]", dupscan_file_path(f), dupscan_strerror(rc));
				failures++;
			}
		}
		fputc('\n', out);
		fflush(out);
		free(keep);
	}
	return failures;
}

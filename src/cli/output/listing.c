/* SPDX-License-Identifier: MIT */
/* listing.c: print duplicate sets and unique files in jdupes' format. */
#include <inttypes.h>
#include <string.h>

#include "output.h"

static void put_path(const char *path, const struct cli_opts *o, FILE *out)
{
	/* names are printed byte for byte, whatever bytes they hold */
	fwrite(path, 1, strlen(path), out);
	fputc(o->print_null ? '\0' : '\n', out);
}

void act_print_matches(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	size_t n = dupscan_set_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t count = dupscan_set_file_count(set);
		if (o->show_size) {
			uint64_t size = dupscan_file_size(dupscan_set_file(set, 0));
			fprintf(out, "%" PRIu64 " byte%c each:\n", size, size != 1 ? 's' : ' ');
		}
		size_t kept = keep_index(set, &o->keep);
		for (size_t k = o->omit_first ? 1 : 0; k < count; k++)
			put_path(dupscan_file_path(dupscan_set_file(set, keep_listed(kept, k))), o, out);
		fputc(o->print_null ? '\0' : '\n', out);
	}
}

void act_print_unique(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	size_t n = dupscan_unique_count(scan);
	for (size_t i = 0; i < n; i++)
		put_path(dupscan_file_path(dupscan_unique_file(scan, i)), o, out);
}

/* jdupes -P: each group of files that passed a stage together */
void act_print_stage(void *user, int stage, const dupscan_file *const *files, size_t count)
{
	FILE *out = user;
	switch (stage) {
	case DUPSCAN_STAGE_EARLY: fputs("Early match check passed:\n", out); break;
	case DUPSCAN_STAGE_PARTIAL: fputs("\nPartial hashes match:\n", out); break;
	default: fputs("Full hashes match:\n", out); break;
	}
	for (size_t i = 0; i < count; i++) {
		const char *path = dupscan_file_path(files[i]);
		fputs("   ", out);
		fwrite(path, 1, strlen(path), out);
		fputc('\n', out);
	}
	fputc('\n', out);
}

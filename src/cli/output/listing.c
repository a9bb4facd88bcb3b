/* SPDX-License-Identifier: MIT */
/* listing.c: print duplicate sets and unique files in jdupes' format. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

static void put_path(const char *path, const struct cli_opts *o, FILE *out)
{
	/* names are printed byte for byte, whatever bytes they hold */
	fwrite(path, 1, strlen(path), out);
	fputc(o->print_null ? '\0' : '\n', out);
}

size_t bytes_groups(const dupscan_set *set, size_t kept, unsigned **group)
{
	size_t count = dupscan_set_file_count(set), ngroups = 0;
	unsigned *g = malloc((count ? count : 1) * sizeof(*g));
	size_t *first = malloc((count ? count : 1) * sizeof(*first)); /* a group's first listed */
	*group = g;
	if (!g || !first) {
		free(g);
		free(first);
		*group = NULL;
		return 0;
	}
	/* against the first file of each group so far (groups are few: the
	 * same picture with a handful of taggings) */
	for (size_t k = 0; k < count; k++) {
		const dupscan_file *f = dupscan_set_file(set, keep_listed(kept, k));
		size_t j = 0;
		while (j < ngroups && !dupscan_same_bytes(dupscan_set_file(set, keep_listed(kept, first[j])), f))
			j++;
		if (j == ngroups)
			first[ngroups++] = k;
		g[k] = (unsigned)j + 1;
	}
	free(first);
	return ngroups;
}

const char *media_name(int format)
{
	switch (format) {
	case DUPSCAN_MEDIA_JPEG: return "jpeg";
	case DUPSCAN_MEDIA_PNG: return "png";
	case DUPSCAN_MEDIA_WEBP: return "webp";
	case DUPSCAN_MEDIA_MP3: return "mp3";
	case DUPSCAN_MEDIA_FLAC: return "flac";
	case DUPSCAN_MEDIA_MP4: return "mp4";
	default: return "other";
	}
}

void act_print_groups(const dupscan_set *set, size_t kept, FILE *out)
{
	unsigned *g;
	size_t ngroups = bytes_groups(set, kept, &g), count = dupscan_set_file_count(set);
	if (ngroups > 1) {
		fputs("# the same picture or sound, tags differ:", out);
		for (size_t j = 1; j <= ngroups; j++) {
			fputs(j > 1 ? " |" : "", out);
			for (size_t k = 0; k < count; k++)
				if (g[k] == j)
					fprintf(out, " %zu", k + 1);
		}
		fputc('\n', out);
	}
	free(g);
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
		/* (with -0 only paths are printed: -j has the groups) */
		if (o->ignore_metadata && !o->print_null)
			act_print_groups(set, kept, out);
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

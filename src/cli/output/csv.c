/* SPDX-License-Identifier: MIT */
/* csv.c: --format=csv, the sets as fclones writes them (size, hash,
 * count, then one column a path), for spreadsheets; RFC 4180 quoting. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* A field, quoted when it holds a comma, a quote or a line break (quotes doubled). */
void csv_field(const char *s, FILE *out)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fwrite(s, 1, strlen(s), out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* The file of the set whose content is hashed: the kept one, or when that
 * is on another host the first of this host listed; NULL: all are remote. */
static const dupscan_file *hashed_file(const dupscan_set *set, size_t kept)
{
	for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
		const dupscan_file *f = dupscan_set_file(set, keep_listed(kept, k));
		if (!dupscan_file_host(f))
			return f;
	}
	return NULL;
}

/* The hash column: XXH64 of the kept file's content (or of a copy of it on
 * this host), read again here (the library keeps no hash a set: sets
 * compared byte by byte need none); a file that cannot be read now is named
 * on stderr and its set counts as a failure; a set all on another host has
 * an empty hash, nothing being read there for it. */
int act_print_csv(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	int failures = 0;
	/* --ignore-metadata: which files hold the same bytes, a column before
	 * the paths ("1 1 2": each path's group, in their order) */
	fputs(o->ignore_metadata ? "size,hash,count,bytes_groups,files\n" : "size,hash,count,files\n", out);
	size_t n = dupscan_set_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t count = dupscan_set_file_count(set), kept = keep_index(set, &o->keep);
		const dupscan_file *first = dupscan_set_file(set, kept), *local = hashed_file(set, kept);
		uint64_t size = 0, hash = 0;
		int rc = local ? dupscan_hash_file(dupscan_file_path(local), &size, &hash) : 1;
		if (rc == 0 && size != dupscan_file_size(local))
			rc = DUPSCAN_E_CHANGED;
		if (rc < 0) {
			fflush(out);
			msg_say("%s: %s", dupscan_file_path(local), dupscan_strerror(rc));
			failures++;
		}
		fprintf(out, "%" PRIu64 ",", dupscan_file_size(first));
		if (rc == 0)
			fprintf(out, "%016" PRIx64, hash);
		fprintf(out, ",%zu", count);
		unsigned *group = NULL;
		if (o->ignore_metadata)
			bytes_groups(set, kept, &group);
		for (size_t k = 0; o->ignore_metadata && k < count; k++)
			fprintf(out, k ? " %u" : ",%u", group ? group[k] : 0);
		free(group);
		for (size_t k = 0; k < count; k++) {
			fputc(',', out);
			csv_field(dupscan_file_path(dupscan_set_file(set, keep_listed(kept, k))), out);
		}
		fputc('\n', out);
	}
	return failures;
}

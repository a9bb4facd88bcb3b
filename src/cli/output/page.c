/* SPDX-License-Identifier: MIT */
/* page.c: --format=html, one self-contained page (no network, nothing
 * beside it; its Content-Security-Policy allows no other source): the sets,
 * sortable by wasted bytes and filtered by path; the overlapping
 * directories; a treemap of the space the copies waste, directory by
 * directory (a set of k copies wastes the bytes of k - 1, shared among its
 * k files), a click opening one level down; with --reference, the files
 * with no copy under the references, filtered by path. The scan's figures go into the
 * page as JSON inside a script element of type application/json, with '<',
 * '>' and '&' escaped, so no name can close it; the page's script shows
 * every name as text (textContent), never as markup. Opened as
 * report.html#selftest=TEXT, the page clicks its first box, sorts by size,
 * filters by TEXT and leaves what it saw in the body's data-selftest
 * attribute, for the tests in a headless browser. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* page/page.html, page.css and page.js, embedded at build time (embed.c) */
extern const char page_html[], page_css[], page_js[];

static void html_string(const char *s, FILE *out)
{
	fputc('"', out);
	json_chars_in(s, out, true);
	fputc('"', out);
}

/* [path, parent, files, bytes, dupFiles, dupBytes] a directory */
static int data_dirs(const dupscan_scan *scan, FILE *out)
{
	size_t n = dupscan_dir_count(scan);
	fputs("\"dirs\": [", out);
	for (size_t d = 0; d < n; d++) {
		size_t len = dupscan_dir_path(scan, d, NULL, 0);
		char *p = malloc(len + 1);
		if (!p)
			return -1;
		dupscan_dir_path(scan, d, p, len + 1);
		size_t up = dupscan_dir_parent(scan, d);
		fputs(d ? ",\n[" : "\n[", out);
		html_string(p, out);
		fprintf(out, ", %lld, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]",
			up == SIZE_MAX ? -1LL : (long long)up, dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES),
			dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES), dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_FILES),
			dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_BYTES));
		free(p);
	}
	fputs("],\n", out);
	return 0;
}

/* [a, b, filesA, bytesA, filesB, bytesB] a pair, and sharedA, sharedB
 * after where any set's copies share blocks; [size, [paths]] a set, and its
 * shared bytes third likewise; with --ignore-metadata, a set whose files
 * differ in their tags has its shared bytes third and each path's group of
 * the same bytes fourth ([1, 1, 2]) */
static void data_sets(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	bool shared = false;
	for (size_t i = 0; i < dupscan_set_count(scan) && !shared; i++)
		shared = dupscan_set_shared_bytes(scan, i) > 0;
	size_t n = dupscan_overlap_count(scan);
	fputs("\"pairs\": [", out);
	for (size_t i = 0; i < n; i++) {
		size_t a, b;
		dupscan_overlap_dirs(scan, i, &a, &b);
		fprintf(out, "%s[%zu, %zu, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64, i ? ",\n" : "\n", a, b,
			dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_FILES),
			dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_BYTES),
			dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_FILES),
			dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_BYTES));
		if (shared)
			fprintf(out, ", %" PRIu64 ", %" PRIu64, dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_SHARED_BYTES),
				dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_SHARED_BYTES));
		fputc(']', out);
	}
	fputs("],\n\"sets\": [", out);
	n = dupscan_set_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		fprintf(out, "%s[%" PRIu64 ", [", i ? ",\n" : "\n", dupscan_file_size(dupscan_set_file(set, 0)));
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			if (k)
				fputs(", ", out);
			html_string(dupscan_file_path(dupscan_set_file(set, k)), out);
		}
		unsigned *g = NULL;
		size_t ngroups = o->ignore_metadata ? bytes_groups(set, 0, &g) : 0;
		if (shared || ngroups > 1)
			fprintf(out, "], %" PRIu64, dupscan_set_shared_bytes(scan, i));
		else
			fputs("]", out);
		for (size_t k = 0; ngroups > 1 && k < dupscan_set_file_count(set); k++)
			fprintf(out, "%s%u", k ? ", " : ", [", g[k]);
		fputs(ngroups > 1 ? "]]" : "]", out);
		free(g);
	}
	fputs("]\n", out);
}

/* With --reference: "references", and "missing" ([path, size] a file with
 * no copy under them) or "missingError" (why none can be called missing). */
static void data_missing(dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	fputs("\"references\": [", out);
	for (int i = 0; i < o->nreference; i++) {
		fputs(i ? ", " : "", out);
		html_string(o->reference[i], out);
	}
	int rc = dupscan_find_missing(scan);
	if (rc < 0) {
		fputs("],\n\"missingError\": ", out);
		html_string(dupscan_strerror(rc), out);
		fputs(",\n", out);
		return;
	}
	fputs("],\n\"missing\": [", out);
	for (size_t i = 0; i < dupscan_missing_count(scan); i++) {
		const dupscan_file *f = dupscan_missing_file(scan, i);
		fputs(i ? ",\n[" : "\n[", out);
		html_string(dupscan_file_path(f), out);
		fprintf(out, ", %" PRIu64 "]", dupscan_file_size(f));
	}
	fputs("],\n", out);
}

/* The scan's figures, the JSON of the page's data script. @return 0 or -1 (out of memory). */
static int data(dupscan_scan *scan, const struct cli_opts *o, int rc, unsigned percent, int argc, char **argv,
		FILE *out)
{
	fputs("{\"command\": \"", out);
	json_command_line(argc, argv, out, true);
	fprintf(out, "\",\n\"percent\": %u,\n", percent);
	if (rc < 0) {
		fputs("\"pairsError\": ", out);
		html_string(dupscan_strerror(rc), out);
		fputs(",\n", out);
	}
	if (o->nreference)
		data_missing(scan, o, out);
	if (data_dirs(scan, out) < 0)
		return -1;
	data_sets(scan, o, out);
	fputs("}\n", out);
	return 0;
}

/* page.html with each marker line (@page.css@, @data@, @page.js@) replaced
 * by what it names. */
int act_html(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	unsigned percent = o->overlap ? o->overlap : 50;
	int rc = dupscan_find_overlaps(scan, percent);
	/* too many pairs to weigh: the page without them (the sets and the map
	 * are what such a tree needs most), and status 1 */
	if (rc < 0)
		where_error("--format=html", rc);
	if (rc < 0 && rc != DUPSCAN_E_TOO_MANY)
		return 1;
	const char *at = page_html, *m;
	while ((m = strstr(at, "\n@")) != NULL) {
		fwrite(at, 1, (size_t)(++m - at), out);
		if (!strncmp(m, "@page.css@\n", 11)) {
			fputs(page_css, out);
		} else if (!strncmp(m, "@page.js@\n", 10)) {
			fputs(page_js, out);
		} else if (data(scan, o, rc, percent, argc, argv, out) < 0) { /* @data@ */
			msg_say("%s", dupscan_strerror(-ENOMEM));
			return 1;
		}
		at = strchr(m, '\n') + 1;
	}
	fputs(at, out);
	return rc < 0;
}

/* SPDX-License-Identifier: MIT */
/* where.c: where the copies are. --overlap: the pairs of directories
 * where one holds copies of most of the other; --summary=dirs: each
 * directory's bytes that have a copy, rolled up as du does, largest first.
 * The figures are the library's (dupscan_find_overlaps(), dupscan_dir_tally());
 * this file only formats them, as text, JSON or CSV. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "output.h"

char *where_dir_path(const dupscan_scan *scan, size_t dir)
{
	size_t len = dupscan_dir_path(scan, dir, NULL, 0);
	char *p = malloc(len + 2);
	if (!p)
		return NULL;
	dupscan_dir_path(scan, dir, p, len + 1);
	if (len == 0 || p[len - 1] != '/')
		strcpy(p + len, "/");
	return p;
}

unsigned where_percent(uint64_t part, uint64_t whole)
{
	/* the largest p with part >= ceil(whole * p / 100), without overflow */
	for (unsigned p = 100; p > 0; p--)
		if (part >= whole / 100 * p + (whole % 100 * p + 99) / 100)
			return p;
	return 0;
}

/* 1,234,567 */
static const char *count_text(uint64_t n, char buf[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n), o = 0;
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}


static int say_nomem(void)
{
	msg_say("%s", dupscan_strerror(-ENOMEM));
	return 1;
}

/* ---- --overlap ---- */

/* Side side of pair i: its bytes with a copy on the other side, and (with
 * shared: some copies share their blocks) of those the bytes in blocks
 * another file of their set holds too. */
static void overlap_side(const dupscan_scan *scan, FILE *out, size_t i, int side, const char *p, const char *q,
			 bool shared)
{
	size_t a, b;
	dupscan_overlap_dirs(scan, i, &a, &b);
	size_t d = side == 0 ? a : b;
	uint64_t files = dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_FILES);
	uint64_t bytes = dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_BYTES);
	char c1[32], c2[32], sz[32], sh[32];
	fprintf(out, "%s: %u%% (%s of %s files, %s", p, where_percent(bytes, dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES)),
		count_text(files, c1), count_text(dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES), c2),
		ds_size_text(bytes, sz));
	if (shared)
		fprintf(out, ", %s of it shared", ds_size_text(dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_SHARED_BYTES), sh));
	fprintf(out, ") also in %s\n", q);
}

static void overlap_json_side(const dupscan_scan *scan, FILE *out, size_t i, int side, size_t d, bool shared)
{
	uint64_t bytes = dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_BYTES);
	uint64_t total = dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES);
	fprintf(out, "\"percent\": %u, \"files\": %" PRIu64 ", \"filesTotal\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"bytesTotal\": %" PRIu64, where_percent(bytes, total),
		dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_FILES), dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES),
		bytes, total);
	if (shared)
		fprintf(out, ", \"sharedBytes\": %" PRIu64, dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_SHARED_BYTES));
}

static void overlap_csv_side(const dupscan_scan *scan, FILE *out, size_t i, int side, size_t d)
{
	uint64_t bytes = dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_BYTES);
	uint64_t total = dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES);
	fprintf(out, ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, where_percent(bytes, total),
		dupscan_overlap_tally(scan, i, side, DUPSCAN_TALLY_FILES), dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES),
		bytes, total);
}

/* Does any pair hold bytes in shared blocks (else the figure is left out,
 * and the rows are as where nothing can be shared)? */
static bool overlaps_shared(const dupscan_scan *scan)
{
	for (size_t i = 0; i < dupscan_overlap_count(scan); i++)
		if (dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_SHARED_BYTES) ||
		    dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_SHARED_BYTES))
			return true;
	return false;
}

static int print_overlaps(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	size_t n = dupscan_overlap_count(scan);
	bool shared = overlaps_shared(scan);
	if (o->fmt == FORMAT_CSV)
		fprintf(out, "dir_a,dir_b,percent_a,files_a,files_total_a,bytes_a,bytes_total_a,"
			"percent_b,files_b,files_total_b,bytes_b,bytes_total_b%s\n",
			shared ? ",shared_bytes_a,shared_bytes_b" : "");
	if (o->fmt == FORMAT_JSON)
		fprintf(out, "  \"overlapPercent\": %u,\n  \"overlaps\": [\n", o->overlap);
	for (size_t i = 0; i < n; i++) {
		size_t a, b;
		dupscan_overlap_dirs(scan, i, &a, &b);
		char *pa = where_dir_path(scan, a), *pb = where_dir_path(scan, b);
		if (!pa || !pb) {
			free(pa);
			free(pb);
			return say_nomem();
		}
		if (o->fmt == FORMAT_JSON) {
			fprintf(out, "    { \"a\": { \"path\": ");
			json_string(pa, out);
			fprintf(out, ", ");
			overlap_json_side(scan, out, i, 0, a, shared);
			fprintf(out, " },\n      \"b\": { \"path\": ");
			json_string(pb, out);
			fprintf(out, ", ");
			overlap_json_side(scan, out, i, 1, b, shared);
			fprintf(out, " } }%s\n", i + 1 < n ? "," : "");
		} else if (o->fmt == FORMAT_CSV) {
			csv_field(pa, out);
			fputc(',', out);
			csv_field(pb, out);
			overlap_csv_side(scan, out, i, 0, a);
			overlap_csv_side(scan, out, i, 1, b);
			if (shared)
				fprintf(out, ",%" PRIu64 ",%" PRIu64, dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_SHARED_BYTES),
					dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_SHARED_BYTES));
			fputc('\n', out);
		} else {
			overlap_side(scan, out, i, 0, pa, pb, shared);
			overlap_side(scan, out, i, 1, pb, pa, shared);
			fputc('\n', out);
		}
		free(pa);
		free(pb);
	}
	if (o->fmt == FORMAT_JSON)
		fprintf(out, "  ]%s\n", o->summary_dirs ? "," : "");
	if (n == 0 && o->fmt != FORMAT_JSON && o->fmt != FORMAT_CSV && !o->quiet)
		msg_say("no two directories overlap by %u%% or more", o->overlap);
	return 0;
}

/* ---- --summary=dirs ---- */

struct listed {
	size_t dir;
	uint64_t dup;
	char *path;
};

static int cmp_listed(const void *pa, const void *pb)
{
	const struct listed *a = pa, *b = pb;
	if (a->dup != b->dup)
		return a->dup > b->dup ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* The directories with a file that has a copy, to the depth asked, largest first. */
static struct listed *dirs_listed(const dupscan_scan *scan, const struct cli_opts *o, size_t *count)
{
	size_t n = dupscan_dir_count(scan), k = 0;
	struct listed *l = malloc((n ? n : 1) * sizeof(*l));
	for (size_t d = 0; l && d < n; d++) {
		if (dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_FILES) == 0 ||
		    (o->list_depth >= 0 && dupscan_dir_depth(scan, d) > (unsigned long)o->list_depth))
			continue;
		l[k] = (struct listed){ d, dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_BYTES), where_dir_path(scan, d) };
		if (!l[k++].path) {
			for (size_t i = 0; i < k; i++)
				free(l[i].path);
			free(l);
			return NULL;
		}
	}
	if (l)
		qsort(l, k, sizeof(*l), cmp_listed);
	*count = k;
	return l;
}

/* with shared (some copies share their blocks): a column more, their bytes */
static void dir_row(const dupscan_scan *scan, const struct cli_opts *o, const struct listed *e, bool last, bool shared,
		    FILE *out)
{
	uint64_t sh = dupscan_dir_tally(scan, e->dir, DUPSCAN_TALLY_SHARED_BYTES);
	uint64_t files = dupscan_dir_tally(scan, e->dir, DUPSCAN_TALLY_FILES);
	uint64_t bytes = dupscan_dir_tally(scan, e->dir, DUPSCAN_TALLY_BYTES);
	uint64_t dupfiles = dupscan_dir_tally(scan, e->dir, DUPSCAN_TALLY_DUP_FILES);
	unsigned pct = where_percent(e->dup, bytes);
	unsigned depth = dupscan_dir_depth(scan, e->dir);
	char c1[32], c2[32], sz[32];
	if (o->fmt == FORMAT_JSON) {
		fprintf(out, "    { \"path\": ");
		json_string(e->path, out);
		fprintf(out, ", \"depth\": %u, \"files\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"dupFiles\": %" PRIu64
			", \"dupBytes\": %" PRIu64, depth, files, bytes, dupfiles, e->dup);
		if (shared)
			fprintf(out, ", \"sharedBytes\": %" PRIu64, sh);
		fprintf(out, ", \"percent\": %u }%s\n", pct, last ? "" : ",");
	} else if (o->fmt == FORMAT_CSV) {
		csv_field(e->path, out);
		fprintf(out, ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u", depth, files, bytes, dupfiles,
			e->dup, pct);
		if (shared)
			fprintf(out, ",%" PRIu64, sh);
		fputc('\n', out);
	} else {
		fprintf(out, "%10s %3u%%  %s of %s files  ", ds_size_text(e->dup, sz), pct, count_text(dupfiles, c1),
			count_text(files, c2));
		if (shared)
			fprintf(out, "%s shared  ", ds_size_text(sh, sz));
		fprintf(out, "%s\n", e->path);
	}
}

static int print_dirs(const dupscan_scan *scan, const struct cli_opts *o, FILE *out)
{
	size_t n;
	struct listed *l = dirs_listed(scan, o, &n);
	if (!l)
		return say_nomem();
	/* the column only where a copy shares blocks: elsewhere the rows as ever */
	bool shared = false;
	for (size_t i = 0; i < n && !shared; i++)
		shared = dupscan_dir_tally(scan, l[i].dir, DUPSCAN_TALLY_SHARED_BYTES) > 0;
	if (o->fmt == FORMAT_CSV)
		fprintf(out, "path,depth,files,bytes,dup_files,dup_bytes,percent%s\n", shared ? ",shared_bytes" : "");
	if (o->fmt == FORMAT_JSON)
		fprintf(out, "  \"directories\": [\n");
	for (size_t i = 0; i < n; i++) {
		dir_row(scan, o, &l[i], i + 1 == n, shared, out);
		free(l[i].path);
	}
	if (o->fmt == FORMAT_JSON)
		fprintf(out, "  ]\n");
	free(l);
	return 0;
}

void where_error(const char *what, int rc)
{
	msg_say("%s: %s", what, dupscan_strerror(rc));
	if (rc == DUPSCAN_E_TOO_MANY)
		msg_say("--dirs lists the directories equal in content as sets");
}

int act_where(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	int rc = o->overlap ? dupscan_find_overlaps(scan, o->overlap) : dupscan_tally_dirs(scan);
	if (rc < 0) {
		where_error(o->overlap ? "--overlap" : "--summary=dirs", rc);
		return 1;
	}
	if (o->fmt == FORMAT_JSON) {
		json_head(argc, argv, out);
		fprintf(out, ",\n");
	}
	if (o->overlap)
		rc = print_overlaps(scan, o, out);
	if (rc == 0 && o->summary_dirs) {
		if (o->overlap && o->fmt != FORMAT_JSON)
			fputc('\n', out);
		rc = print_dirs(scan, o, out);
	}
	if (o->fmt == FORMAT_JSON)
		fprintf(out, "}\n");
	act_unread_note(scan, out, o->overlap ? "in no pair's figures" : "in no folder's figures");
	return rc;
}

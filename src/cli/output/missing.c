/* SPDX-License-Identifier: MIT */
/* missing.c: --missing, the files under the paths that have no copy under
 * the reference trees (the library's dupscan_find_missing()): one path a
 * line (-0: NUL after each), JSON, CSV or the page (page.c), then a summary
 * on standard error. */
#include <inttypes.h>
#include <string.h>

#include "../msg.h"
#include "output.h"
#include "fsutil.h"
#include "nesting.h"


static void missing_json(const dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	json_head(argc, argv, out);
	fprintf(out, ",\n  \"references\": [");
	for (int i = 0; i < o->nreference; i++) {
		fputs(i ? ", " : "", out);
		json_string(o->reference[i], out);
	}
	fprintf(out, "],\n  \"missing\": [\n");
	size_t n = dupscan_missing_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_file *f = dupscan_missing_file(scan, i);
		fprintf(out, "    { \"path\": ");
		json_string(dupscan_file_path(f), out);
		fprintf(out, ", \"size\": %" PRIu64 " }%s\n", dupscan_file_size(f), i + 1 < n ? "," : "");
	}
	fprintf(out, "  ]\n}\n");
}

/* path,size a file, RFC 4180 quoting (csv.c) */
static void missing_csv(const dupscan_scan *scan, FILE *out)
{
	fputs("path,size\n", out);
	for (size_t i = 0; i < dupscan_missing_count(scan); i++) {
		const dupscan_file *f = dupscan_missing_file(scan, i);
		csv_field(dupscan_file_path(f), out);
		fprintf(out, ",%" PRIu64 "\n", dupscan_file_size(f));
	}
}

int act_missing(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	int rc = dupscan_find_missing(scan);
	if (rc < 0) {
		msg_say("--missing: %s", dupscan_strerror(rc));
		return 1;
	}
	/* an empty list is an answer only when something was asked about */
	uint64_t asked = dupscan_missing_asked(scan);
	if (asked == 0) {
		bool holds_ref = false; /* (a card whose only files are its reference's) */
		for (int r = 0; r < o->nreference; r++)
			for (int i = 0; i < o->npaths; i++)
				holds_ref |= nest_in(o->reference[r], o->paths[i].path) == 1;
		msg_say("--missing: no file under '%s'%s was checked against the reference%s; nothing to answer",
			o->paths[0].path, o->npaths > 1 ? " or the other paths" : "",
			holds_ref ? " (its only files are the reference's, which lies inside it)"
			: o->recurse ? " (an empty tree, or every file left out by the filters)"
				     : " (without -r only the files named or directly inside are checked)");
		return EXIT_USAGE;
	}
	size_t n = dupscan_missing_count(scan);
	uint64_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes += dupscan_file_size(dupscan_missing_file(scan, i));
	int status = 0;
	if (o->fmt == FORMAT_HTML) {
		status = act_html(scan, o, argc, argv, out) != 0;
	} else if (o->fmt == FORMAT_JSON) {
		missing_json(scan, o, argc, argv, out);
	} else if (o->fmt == FORMAT_CSV) {
		missing_csv(scan, out);
	} else {
		for (size_t i = 0; i < n; i++) {
			const char *p = dupscan_file_path(dupscan_missing_file(scan, i));
			fwrite(p, 1, strlen(p), out);
			fputc(o->print_null ? '\0' : '\n', out);
		}
	}
	uint64_t unread = dupscan_error_count(scan);
	if (!o->quiet || n > 0 || unread) {
		char sz[DS_SIZE_TEXT], more[96] = "";
		/* a file that could not be read is in neither count: said here too */
		if (unread)
			snprintf(more, sizeof(more), "; %" PRIu64 " path%s could not be read (named above)", unread,
				 unread == 1 ? "" : "s");
		msg_say("%zu file%s (%s) of %" PRIu64 " checked %s no copy under %s%s%s", n, n == 1 ? "" : "s",
			ds_size_text(bytes, sz), asked, n == 1 ? "has" : "have", o->reference[0],
			o->nreference > 1 ? " or the other references" : "", more);
	}
	return status ? status : n > 0 ? EXIT_MISSING : 0;
}

/* SPDX-License-Identifier: MIT */
/* summary.c: jdupes' one-line summary of the duplicates found. */
#include <inttypes.h>

#include "output.h"

/* With HOST:PATH arguments: what went through the channels. */
static void channel_bytes(const dupscan_scan *scan, FILE *out)
{
	uint64_t in, sent;
	dupscan_remote_bytes(scan, &in, &sent);
	if (in || sent)
		fprintf(out, "%" PRIu64 " bytes received from other hosts, %" PRIu64 " sent\n", in, sent);
}

/* bytes as jdupes' summary gives them: "812 bytes", "12 KB", "3 MB" (with
 * its_space, "1 byte " as jdupes writes it) */
static void jdupes_size(uint64_t bytes, bool its_space, FILE *out)
{
	if (bytes < 1000)
		fprintf(out, "%" PRIu64 " byte%s", bytes, bytes != 1 ? "s" : its_space ? " " : "");
	else if (bytes <= 1000000)
		fprintf(out, "%" PRIu64 " KB", bytes / 1000);
	else
		fprintf(out, "%" PRIu64 " MB", bytes / 1000000);
}

void act_unread_note(const dupscan_scan *scan, FILE *out, const char *figures)
{
	uint64_t unread = dupscan_error_count(scan);
	if (!unread)
		return;
	fflush(out);
	msg_say("%" PRIu64 " path%s could not be read (named above): %s", unread, unread == 1 ? "" : "s", figures);
}

void act_summarize(const dupscan_scan *scan, FILE *out)
{
	size_t sets = dupscan_set_count(scan);
	uint64_t files = 0, bytes = 0, shared = 0;
	for (size_t i = 0; i < sets; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t extra = dupscan_set_file_count(set) - 1; /* the first copy is not waste */
		files += extra;
		bytes += extra * dupscan_file_size(dupscan_set_file(set, 0));
		shared += dupscan_set_shared_bytes(scan, i);
	}
	if (sets == 0) {
		/* as jdupes: on stderr when not a single file was examined (past
		 * a budget the unique files are not kept: they were examined) */
		fflush(out);
		bool none = dupscan_unique_count(scan) == 0 && dupscan_spilled(scan) == 0;
		fprintf(none ? stderr : out, "No duplicates found.\n");
		channel_bytes(scan, out);
		act_unread_note(scan, out, "in no figure of the summary");
		return;
	}
	fprintf(out, "%" PRIu64 " duplicate files (in %zu sets), occupying ", files, sets);
	jdupes_size(bytes, true, out);
	fputc('\n', out);
	if (shared) {
		/* (jdupes' line above as it was; the split on a line of its own) */
		fputs("of which ", out);
		jdupes_size(shared, false, out);
		fputs(" already shared (reflinks, snapshots), ", out);
		jdupes_size(bytes - shared, false, out);
		fputs(" to reclaim\n", out);
	}
	channel_bytes(scan, out);
	act_unread_note(scan, out, "in no figure of the summary");
}

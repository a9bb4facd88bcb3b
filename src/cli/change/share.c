/* SPDX-License-Identifier: MIT */
/* share.c: -B, asking the filesystem to share the extents of each set. */
#include <errno.h>
#include <string.h>

#include "change.h"

static void show(FILE *out, const char *arrow, const char *path)
{
	fprintf(out, "  %s ", arrow);
	fwrite(path, 1, strlen(path), out);
	fputc('\n', out);
}

int act_dedupe(const dupscan_scan *scan, struct act_ctx *a)
{
	FILE *out = a->out;
	int failures = 0;
	size_t processed = 0;
	bool said_unsupported = false;
	size_t total = dupscan_set_count(scan);
	for (size_t i = 0; i < total && !cli_interrupted() && !a->stop; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		const dupscan_file *keep = dupscan_set_file(set, keep_index(set, &a->o->keep));
		show(out, "[SRC]", dupscan_file_path(keep));
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (f == keep)
				continue;
			if (dupscan_file_is_protected(f)) {
				show(out, "[PRO]", dupscan_file_path(f));
				continue;
			}
			/* (other tags: refused before a line is journaled) */
			int rc = cli_interrupted() || a->stop ? DUPSCAN_E_CANCELED
				 : !dupscan_same_bytes(keep, f) ? DUPSCAN_E_PAYLOAD_ONLY
				 : act_journal(a, "dedupe", set, keep, f, NULL, NULL);
			if (rc == 0)
				rc = dupscan_dedupe(keep, f, a->flags);
			processed++;
			if (rc == 0) {
				show(out, "-##->", dupscan_file_path(f));
				continue;
			}
			if (rc == DUPSCAN_E_ALREADY) {
				show(out, "-==->", dupscan_file_path(f));
				continue;
			}
			show(out, "-XX->", dupscan_file_path(f));
			fflush(out);
			failures++;
			if (rc == -EOPNOTSUPP) {
				if (!said_unsupported)
					msg_say("this filesystem does not support deduplication "
						"(FIDEDUPERANGE); nothing was changed on it");
				said_unsupported = true;
				continue;
			}
			msg_say("%s: %s", dupscan_file_path(f), dupscan_strerror(rc));
		}
		fflush(out);
	}
	/* jdupes' line where every file went through; a "done" that would
	 * cover files that could not be shared says so */
	size_t failed = (size_t)failures;
	if (failed == 0)
		fprintf(out, "Deduplication done (%zu files processed)\n", processed);
	else if (failed == processed)
		fprintf(out, "Deduplication not done: none of the %zu files processed could be deduplicated "
			     "(named above)\n", processed);
	else
		fprintf(out, "Deduplication done (%zu files processed; %zu of them could not be deduplicated, "
			     "named above)\n", processed, failed);
	return failures;
}

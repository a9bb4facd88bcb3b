/* SPDX-License-Identifier: MIT */
/* fromreport.h: --from-report=FILE, the sets of a dupscan -j report. */
#ifndef DUPSCAN_FROMREPORT_H
#define DUPSCAN_FROMREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report_file {
	char *path;
	uint32_t set;           /* 0-based, in the report's order */
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	bool alone;             /* of a set left with one file: kept as it is */
};

struct report_paths; /* the paths' bytes, in blocks that never move */

struct report {
	struct report_file *files; /* set by set, each in the report's order */
	size_t nfiles, nsets, capfiles;
	struct report_paths *paths;
	uint32_t *lone;            /* the sets left with one file or none, in order */
	size_t nlone, caplone;
};

/* Read and check FILE ("-": stdin): JSON, the shape dupscan -j writes (every
 * file with its identity, each key the reader uses once), no path and no file
 * in two sets. Read as a stream: it costs the files kept, not the document.
 * A set a person left with one file or none means "keep these": it is listed
 * in lone, its file marked alone, and still checked with the others. @return 0, or -1
 * with msg saying what and where. */
int report_load(const char *path, struct report *r, char *msg, size_t cap);
void report_free(struct report *r);

#endif /* DUPSCAN_FROMREPORT_H */

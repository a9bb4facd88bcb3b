/* SPDX-License-Identifier: MIT */
/* scan.h: the whole scan, every stage's state side by side; never installed.
 * Only the drivers include it (docs/design.md, "Layers"): scan.c, which
 * runs the stages, serve/, which runs them for a client, remote/, which runs
 * a scan of its own for each host, calls.c (the library's calls that hand out
 * a stage's results), and the tests. A stage is handed its own state, which
 * points at the core and at what it reads from below. */
#ifndef DUPSCAN_SCAN_H
#define DUPSCAN_SCAN_H


#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "cache/cache_run.h"
#include "read/read.h"
#include "walk/walk.h"
#include "match/result.h"
#include "sets/sets.h"
#include "remote/remote.h"

struct dupscan_scan {
	struct ds_core core;
	struct ds_tree tree;
	struct ds_cache_state cache;
	struct ds_reading reading;
	struct ds_walk walk;
	struct ds_match match;
	struct ds_results results;

	/* dupscan_serve(): what its run does between the walk and the matching
	 * (serve.c: the sizes a reference's client wants) */
	int (*after_walk)(dupscan_scan *s, void *user);
	void *after_walk_user;
	bool served;                 /* past a budget its unique files stay too: they are asked for by number */
	bool every_record;           /* its client wants the directory tree: no spill (DUPSCAN_E_MEMORY) */

	struct ds_hosts hosts;
	char *temp_dir;              /* dupscan_set_temp_dir(): where records spill (NULL: $TMPDIR) */
};

/* Each stage's state pointed at the core and at the states below it. */
void ds_scan_wire(dupscan_scan *s);

#endif /* DUPSCAN_SCAN_H */

/* SPDX-License-Identifier: MIT */
/* phases DIR [RUNS]: how long a recursive scan of DIR takes, then the
 * directory figures and the overlap pairs (50%) over it, each timed apart,
 * RUNS times (3). What --overlap adds is measured against the scan with
 * farm-bench; this splits the addition where one process sees it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <dupscan.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: phases DIR [RUNS]\n");
		return 2;
	}
	int runs = argc == 3 ? atoi(argv[2]) : 3;
	for (int r = 0; r < runs; r++) {
		dupscan_scan *s;
		if (dupscan_create(&s) != 0)
			return 1;
		int rc = dupscan_add_path(s, argv[1], 1);
		double t0 = now();
		if (rc == 0)
			rc = dupscan_run(s);
		double t1 = now();
		if (rc == 0)
			rc = dupscan_tally_dirs(s);
		double t2 = now();
		if (rc == 0)
			rc = dupscan_find_overlaps(s, 50);
		double t3 = now();
		if (rc != 0) {
			fprintf(stderr, "phases: %s: %s\n", argv[1], dupscan_strerror(rc));
			dupscan_free(s);
			return 1;
		}
		printf("scan %.3f s, directories %.3f s, overlaps %.3f s (%zu sets, %zu pairs)\n",
		       t1 - t0, t2 - t1, t3 - t2, dupscan_set_count(s), dupscan_overlap_count(s));
		dupscan_free(s);
	}
	return 0;
}

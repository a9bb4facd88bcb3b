/* SPDX-License-Identifier: MIT */
/* progress.c: a progress line on stderr, at most five updates a second. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct cli_progress {
	bool enabled, shown;
	struct timespec last;
	const dupscan_scan *scan; /* to show how it reads */
	int phase;                /* last shown */
};

void cli_progress_watch(struct cli_progress *p, const dupscan_scan *scan)
{
	if (p)
		p->scan = scan;
}

struct cli_progress *cli_progress_new(bool enabled)
{
	struct cli_progress *p = calloc(1, sizeof(*p));
	if (p)
		p->enabled = enabled && isatty(STDERR_FILENO);
	return p;
}

void cli_progress_cb(void *user, int phase, uint64_t done, uint64_t total)
{
	struct cli_progress *p = user;
	if (!p || !p->enabled)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (long)(now.tv_sec - p->last.tv_sec) * 1000 + (now.tv_nsec - p->last.tv_nsec) / 1000000;
	/* a new phase is shown at once: matching tells how it reads */
	if (p->shown && ms < 200 && phase == p->phase)
		return;
	p->last = now;
	p->shown = true;
	p->phase = phase;
	if (phase == DUPSCAN_PHASE_WALK)
		fprintf(stderr, "\rScanning: %llu files   ", (unsigned long long)done);
	else
		fprintf(stderr, "\rProgress [%llu/%llu] %3u%% (%s)   ", (unsigned long long)done,
			(unsigned long long)total, total ? (unsigned)(done * 100 / total) : 100u,
			dupscan_io_mode(p->scan) == DUPSCAN_IO_HDD ? "hdd: one stream in disk order" : "ssd");
}

void cli_progress_clear(struct cli_progress *p)
{
	if (p && p->shown) {
		fprintf(stderr, "\r%72s\r", "");
		p->shown = false;
	}
}

void cli_progress_free(struct cli_progress *p)
{
	cli_progress_clear(p);
	free(p);
}

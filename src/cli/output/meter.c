/* SPDX-License-Identifier: MIT */
/* meter.c: a progress line on stderr, at most five updates a second: for
 * each phase its files, bytes, rate and how long it has left at most. On a
 * terminal only, unless --progress asks for it (then one line a second). */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "output.h"

struct cli_progress {
	/* the bytes callback may come from a reading thread while an error is
	 * printed on the run's: one of them writes the line at a time */
	atomic_flag busy;
	bool enabled, tty, shown;
	bool hint, hinted;        /* the advice for a network share: may be given, was given */
	struct timespec start;    /* when the scan began */
	struct timespec last;     /* last update */
	struct timespec began;    /* when the phase shown began */
	const dupscan_scan *scan; /* to show how it reads */
	int phase;                /* last shown */
	uint64_t files_shown, bytes_shown; /* its figures: the same again is not shown twice */
	int width;                /* of the line shown */
};

void cli_progress_watch(struct cli_progress *p, const dupscan_scan *scan)
{
	if (p)
		p->scan = scan;
}

struct cli_progress *cli_progress_new(int mode)
{
	struct cli_progress *p = calloc(1, sizeof(*p));
	if (p) {
		atomic_flag_clear(&p->busy);
		p->tty = isatty(STDERR_FILENO);
		p->enabled = mode == CLI_PROGRESS_ALWAYS || (mode == CLI_PROGRESS_TTY && p->tty);
		/* said on a terminal, or where progress goes: not on a pipe with -q */
		p->hint = mode != CLI_PROGRESS_NEVER || p->tty;
		clock_gettime(CLOCK_MONOTONIC, &p->start);
	}
	return p;
}

void cli_progress_no_hint(struct cli_progress *p)
{
	if (p)
		p->hint = false;
}

static double seconds(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}


/* "1h05m", "3m20s", "12 s": rounded up, as it is a most */
static void duration(double s, char buf[32])
{
	unsigned long t = s > 359999 ? 359999 : (unsigned long)s + (s > (double)(unsigned long)s);
	if (t >= 3600)
		snprintf(buf, 32, "%luh%02lum left", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, 32, "%lum%02lus left", t / 60, t % 60);
	else
		snprintf(buf, 32, "%lu s left", t);
}

static int show(struct cli_progress *p, const struct dupscan_progress *r, double elapsed)
{
	char a[DS_SIZE_TEXT], b[DS_SIZE_TEXT], c[DS_SIZE_TEXT], eta[32], rate_text[DS_SIZE_TEXT + 8];
	int io = dupscan_io_mode(p->scan);
	const char *mode = io == DUPSCAN_IO_HDD ? "hdd: one stream a disk, in disk order" : io == DUPSCAN_IO_NET ? "net" : "ssd";
	if (r->phase == DUPSCAN_PHASE_WALK)
		return msg_raw("Scanning: %llu files, %s", (unsigned long long)r->files_done,
			       ds_size_text(r->bytes_done, a));
	/* a rate only from half a second of reading, or the phase's whole: a
	 * first moment's figure ("0 bytes/s") would be no rate at all */
	bool done = r->files_done == r->files_total && r->bytes_done == r->bytes_total;
	double rate = (elapsed >= 0.5 || (done && elapsed > 0)) ? (double)r->bytes_done / elapsed : 0;
	if (done)
		snprintf(eta, sizeof(eta), elapsed < 10 ? "done in %.2f s" : "done in %.0f s", elapsed);
	else if (rate > 0)
		duration((double)(r->bytes_total - r->bytes_done) / rate, eta);
	if (rate > 0)
		snprintf(rate_text, sizeof(rate_text), "%s/s", ds_size_text((uint64_t)rate, c));
	else
		snprintf(rate_text, sizeof(rate_text), "rate unknown yet");
	const char *what = r->phase == DUPSCAN_PHASE_FIRST ? "First blocks" : "Progress";
	unsigned pct = r->files_total ? (unsigned)(r->files_done * 100 / r->files_total) : 100u;
	return msg_raw("%s [%llu/%llu] %3u%%, %s of at most %s read, %s, %s%s (%s)", what,
		       (unsigned long long)r->files_done, (unsigned long long)r->files_total, pct,
		       ds_size_text(r->bytes_done, a), ds_size_text(r->bytes_total, b),
		       done && rate <= 0 ? "no bytes to read" : rate_text, !done && rate > 0 ? "at most " : "",
		       done || rate > 0 ? eta : "time left unknown yet", mode);
}

static void update(struct cli_progress *p, const struct dupscan_progress *r)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* a new phase is shown at once (matching tells how it reads), and a
	 * phase's end, which tells its totals */
	bool end = r->phase == DUPSCAN_PHASE_WALK ? r->files_total > 0
						 : r->files_done == r->files_total && r->bytes_done == r->bytes_total;
	if (p->shown && r->phase == p->phase && r->files_done == p->files_shown && r->bytes_done == p->bytes_shown &&
	    (end || !p->tty))
		return; /* (a phase's end is told again by the next callback) */
	bool fresh = !p->shown || r->phase != p->phase || end;
	if (!fresh && seconds(p->last, now) < (p->tty ? 0.2 : 1.0))
		return;
	if (!p->shown || r->phase != p->phase)
		p->began = now;
	p->last = now;
	p->shown = true;
	p->phase = r->phase;
	p->files_shown = r->files_done;
	p->bytes_shown = r->bytes_done;
	if (p->tty)
		msg_raw("\r");
	int n = show(p, r, seconds(p->began, now));
	if (p->tty && n < p->width)
		msg_raw("%*s", p->width - n, ""); /* what is left of a longer line */
	if (!p->tty)
		msg_raw("\n");
	p->width = n > 0 ? n : 0;
}

/* A scan of a network share that has taken HINT_SECONDS: once, how to move
 * fewer bytes over the link (progress' lock held). */
#define HINT_SECONDS 10
static void hint(struct cli_progress *p)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!p->hint || p->hinted || !p->scan || dupscan_io_mode(p->scan) != DUPSCAN_IO_NET ||
	    seconds(p->start, now) < HINT_SECONDS)
		return;
	p->hinted = true;
	if (p->shown && p->tty)
		msg_raw("\r%*s\r", p->width, "");
	/* (not msg_say: it would clear the line, and this thread holds it) */
	msg_raw("dupscan: these files are on a network filesystem: every byte read crosses the link.\n"
		"dupscan: Run where the data is (dupscan HOST:PATH, over ssh) and only the bytes of\n"
		"dupscan: files that may be copies cross it; see dupscan(1), SCANS ACROSS HOSTS.\n");
	p->shown = p->shown && !p->tty;
}

void cli_progress_bytes_cb(void *user, const struct dupscan_progress *r)
{
	struct cli_progress *p = user;
	if (!p || (!p->enabled && !p->hint) || atomic_flag_test_and_set(&p->busy))
		return; /* a line being cleared or written: this update can go */
	hint(p);
	if (p->enabled)
		update(p, r);
	atomic_flag_clear(&p->busy);
}

void cli_progress_clear(struct cli_progress *p)
{
	if (!p)
		return;
	while (atomic_flag_test_and_set(&p->busy))
		; /* a reading thread is writing the line: a moment */
	if (p->shown) {
		if (p->tty)
			msg_raw("\r%*s\r", p->width, "");
		p->shown = false;
		p->width = 0;
	}
	atomic_flag_clear(&p->busy);
}

void cli_progress_free(struct cli_progress *p)
{
	cli_progress_clear(p);
	free(p);
}

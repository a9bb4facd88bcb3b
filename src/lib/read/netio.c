/* SPDX-License-Identifier: MIT */
/* netio.c: how many requests a network filesystem is given at once.
 *
 * Over NFS, SMB or sshfs every listing, open and read waits a round trip,
 * so one thread at a time leaves the link idle; but once the link's
 * bandwidth (or the server, or the client's queue) bounds the rate, each
 * request added only waits longer, and large reads sharing the link slow
 * down (the figures: docs/performance.md, "Why the code is as it is"). So
 * it starts at the most and, every window of requests, compares their mean time with the
 * least seen in the phase (a phase reads one kind of request): past
 * DS_NET_BACKOFF times it, requests queue somewhere and a quarter fewer are
 * let in; within 1.5 times it, or when the rate of work (a request counts
 * one, and one more for each 128 KiB it read) rose, a quarter more. Each
 * thread counts the requests it makes (begin/end), so the most in
 * flight at once is known (dupscan_io_inflight(), and the tests look). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"

#define UNIT_BYTES (128u * 1024u) /* a read of this many bytes counts one more request's work */

struct ds_netio {
	_Atomic int limit;        /* threads the pool lets read now */
	_Atomic int inflight;     /* requests being made now */
	_Atomic int peak;         /* most at once so far */
	_Atomic uint64_t sum_ns;  /* this window's requests: their time, */
	_Atomic uint32_t n;       /* how many, */
	_Atomic uint64_t bytes;   /* and the bytes they read */
	_Atomic int64_t since;    /* when the window began */
	atomic_flag judging;      /* one thread judges a window */
	/* the judge's own: */
	int64_t least_ns;         /* the least mean of a window this phase */
	double rate;              /* the last window's work a second (0: none yet) */
	_Atomic bool new_phase;   /* least_ns and rate are forgotten at the next judgment */
	int most;                 /* never more than this */
	bool fixed;               /* never judged: the caller's count */
};

struct ds_netio *ds_netio_new(int most)
{
	struct ds_netio *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->most = most;
	atomic_init(&n->limit, most < DS_NET_START ? most : DS_NET_START);
	atomic_flag_clear(&n->judging);
	return n;
}

/* No judging: always limit (the caller's --threads). */
void ds_netio_fix(struct ds_netio *n, int limit)
{
	atomic_store_explicit(&n->limit, limit, memory_order_relaxed);
	n->fixed = true;
}

void ds_netio_free(struct ds_netio *n)
{
	free(n);
}

int ds_netio_limit(const struct ds_netio *n)
{
	return n ? atomic_load_explicit(&n->limit, memory_order_relaxed) : 1;
}

int ds_netio_peak(const struct ds_netio *n)
{
	return n ? atomic_load_explicit(&n->peak, memory_order_relaxed) : 1;
}

void ds_netio_phase(struct ds_netio *n)
{
	if (n)
		atomic_store_explicit(&n->new_phase, true, memory_order_relaxed);
}

int64_t ds_netio_begin(struct ds_netio *n)
{
	if (!n)
		return 0;
	int now = atomic_fetch_add_explicit(&n->inflight, 1, memory_order_relaxed) + 1;
	int peak = atomic_load_explicit(&n->peak, memory_order_relaxed);
	while (now > peak && !atomic_compare_exchange_weak_explicit(&n->peak, &peak, now, memory_order_relaxed,
								     memory_order_relaxed))
		;
	return ds_mono_ns();
}

/* The new limit, from the window's mean request time and rate of work. */
static int judge(struct ds_netio *n, int64_t mean, double rate)
{
	int limit = atomic_load_explicit(&n->limit, memory_order_relaxed);
	if (atomic_exchange_explicit(&n->new_phase, false, memory_order_relaxed)) {
		n->least_ns = 0;
		n->rate = 0;
	}
	if (n->least_ns == 0 || mean < n->least_ns)
		n->least_ns = mean > 0 ? mean : 1;
	int step = limit / 4 > 1 ? limit / 4 : 1;
	if (mean > DS_NET_BACKOFF * n->least_ns)
		limit -= step;                                /* swamped: fewer */
	else if (2 * mean <= 3 * n->least_ns || (n->rate > 0 && rate > n->rate * 1.03))
		limit += step;                                /* latency bound, or more helped: more */
	/* else as fast: stay */
	n->rate = rate;
	if (limit > n->most)
		limit = n->most;
	if (limit < DS_NET_LEAST)
		limit = n->most < DS_NET_LEAST ? n->most : DS_NET_LEAST;
	return limit;
}

void ds_netio_end(struct ds_netio *n, int64_t start, size_t bytes)
{
	if (!n)
		return;
	int64_t now = ds_mono_ns(), took = now - start;
	atomic_fetch_sub_explicit(&n->inflight, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->sum_ns, (uint64_t)(took > 0 ? took : 0), memory_order_relaxed);
	atomic_fetch_add_explicit(&n->bytes, bytes, memory_order_relaxed);
	int64_t zero = 0;
	atomic_compare_exchange_strong_explicit(&n->since, &zero, start, memory_order_relaxed, memory_order_relaxed);
	uint32_t count = atomic_fetch_add_explicit(&n->n, 1, memory_order_relaxed) + 1;
	int limit = atomic_load_explicit(&n->limit, memory_order_relaxed);
	/* a window: four times the requests in flight, so each thread is in it
	 * more than once */
	uint32_t window = (uint32_t)(4 * limit < DS_NET_WINDOW ? DS_NET_WINDOW : 4 * limit);
	if (n->fixed || count < window || atomic_flag_test_and_set_explicit(&n->judging, memory_order_acquire))
		return;
	uint64_t sum = atomic_exchange_explicit(&n->sum_ns, 0, memory_order_relaxed);
	uint32_t got = atomic_exchange_explicit(&n->n, 0, memory_order_relaxed);
	uint64_t read = atomic_exchange_explicit(&n->bytes, 0, memory_order_relaxed);
	int64_t since = atomic_exchange_explicit(&n->since, now, memory_order_relaxed);
	double secs = (double)(now - since) / 1e9;
	double work = (double)got + (double)read / UNIT_BYTES;
	if (got && secs > 0)
		atomic_store_explicit(&n->limit, judge(n, (int64_t)(sum / got), work / secs), memory_order_relaxed);
	atomic_flag_clear_explicit(&n->judging, memory_order_release);
}

/* ---- the scan's side ---- */

int ds_readers(const struct ds_reading *s)
{
	/* all NET may run: the pool lets ds_net_cap() of them work at a time */
	if (s->io_mode == DUPSCAN_IO_NET && s->net)
		return s->net->most;
	return s->core->opt.threads;
}

const _Atomic int *ds_net_cap(const struct ds_reading *s)
{
	return s->io_mode == DUPSCAN_IO_NET && s->net ? &s->net->limit : NULL;
}

int64_t ds_net_begin(const struct ds_reading *s)
{
	return s->io_mode == DUPSCAN_IO_NET ? ds_netio_begin(s->net) : 0;
}

void ds_net_end(const struct ds_reading *s, int64_t start, size_t bytes)
{
	if (start != 0)
		ds_netio_end(s->net, start, bytes);
}

int ds_net_start(struct ds_reading *s)
{
	if (s->net)
		return 0;
	/* --threads given: that many, as on any storage */
	int most = s->core->opt.threads_given || s->core->opt.threads <= 1 ? s->core->opt.threads : DS_NET_MOST;
	s->net = ds_netio_new(most);
	if (!s->net)
		return -ENOMEM;
	if (s->core->opt.threads_given)
		ds_netio_fix(s->net, s->core->opt.threads);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* serve_work.c: the server at work on the client's requests: the file
 * numbers a request names, ALIVE frames while it works (or scans), and the
 * answer to a HASH request: the files' first blocks' or whole hashes, on the
 * scan's threads, or on a spinning disk on one thread in the disk's order. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "serving.h"
#if DUPSCAN_THREADS
#include <pthread.h>
#endif

/* Ids of a request, each below nfiles. @return how many, or 0 when bad. */
size_t ds_serve_ids(struct serve *v, struct ds_rd *r, uint64_t *ids)
{
	size_t n = 0;
	while (ds_rd_more(r) && n < DS_WIRE_BATCH)
		ids[n++] = ds_rd_max(r, v->nfiles ? v->nfiles - 1 : 0);
	return r->bad || ds_rd_more(r) || v->nfiles == 0 ? 0 : n;
}

/* ALIVE when the last was a quarter of the client's patience ago: only
 * ever from one thread at a time (the scan's progress reports, or the
 * thread answering a request). */
void ds_serve_alive(void *user)
{
	struct serve *v = user;
	int64_t now = ds_mono_ns();
	if (now - v->last_alive < v->alive_ns)
		return;
	v->last_alive = now;
	struct ds_wr w = { 0 };
	ds_wr_begin(&w, DS_W_ALIVE);
	/* the client gone: nobody wants the rest */
	if (ds_chan_send(&v->ch, &w) != 0)
		dupscan_cancel(v->s);
	ds_wr_free(&w);
}

/* A slice of a HASH request, worked on by one thread. */
struct hash_slice {
	struct serve *v;
	const uint64_t *ids;
	size_t n;
	bool whole;
	uint64_t *status, *hash;
	unsigned char *buf;
	const struct ds_keypos *order; /* the files in disk order, or NULL: as asked */
	bool ticks;                    /* on the answering thread: it says ALIVE as it goes */
	struct hash_done *done;        /* on a thread of its own: told when finished */
};

/* The slices on threads of their own finished, for the answering thread
 * to wait on while it says ALIVE. */
struct hash_done {
#if DUPSCAN_THREADS
	pthread_mutex_t lock;
	pthread_cond_t cond;
#endif
	size_t n;
};

static void *hash_slice(void *arg)
{
	struct hash_slice *h = arg;
	const dupscan_scan *s = h->v->s;
	/* the numbers go in walk order: a directory's files together, each
	 * opened from it (on a spinning disk, in h->order) */
	struct ds_dirfd dc = DS_DIRFD_INIT;
	for (size_t k = 0; k < h->n; k++) {
		size_t i = h->order ? (size_t)h->order[k].pos : k;
		uint32_t rec = h->v->files[h->ids[i]];
		const struct ds_rec *r = ds_rec(s, rec);
		uint64_t partial = 0, full = 0;
		int fd = ds_open_scanned_in(s, rec, &dc), rc = fd;
		if (fd >= 0) {
			rc = ds_hash_fd(fd, ds_rec_size(s, r), h->whole, &partial, &full, h->buf, DS_COPY_BUF,
					h->ticks ? ds_serve_alive : NULL, h->v);
			/* written while read: the hash is of no file that was */
			if (rc == 0)
				rc = ds_check_unchanged(s, fd, r);
			close(fd);
		}
		h->status[i] = rc < 0 ? (uint64_t)-(int64_t)rc : 0;
		h->hash[i] = h->whole ? full : partial;
		if (h->ticks)
			ds_serve_alive(h->v);
	}
	ds_dirfd_close(&dc);
#if DUPSCAN_THREADS
	if (h->done) {
		pthread_mutex_lock(&h->done->lock);
		h->done->n++;
		pthread_cond_signal(&h->done->cond);
		pthread_mutex_unlock(&h->done->lock);
	}
#endif
	return NULL;
}

#if DUPSCAN_THREADS
/* Until the started threads' slices are done, ALIVE as due. */
static void wait_done(struct serve *v, struct hash_done *done, size_t started)
{
	pthread_mutex_lock(&done->lock);
	while (done->n < started) {
		/* woken at least twice an ALIVE's interval */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		int64_t at = ds_ns(until) + v->alive_ns / 2;
		until = (struct timespec){ at / 1000000000, at % 1000000000 };
		pthread_cond_timedwait(&done->cond, &done->lock, &until);
		pthread_mutex_unlock(&done->lock);
		ds_serve_alive(v);
		pthread_mutex_lock(&done->lock);
	}
	pthread_mutex_unlock(&done->lock);
}
#endif

/* The slices on threads (this one's the first, saying ALIVE as it goes),
 * each its own buffer. */
static int hash_all(struct serve *v, struct hash_slice *sl, size_t nt)
{
	int rc = 0;
	for (size_t t = 0; t < nt; t++)
		if (!(sl[t].buf = malloc(DS_COPY_BUF)))
			rc = -ENOMEM;
	sl[0].ticks = true;
#if DUPSCAN_THREADS
	struct hash_done done = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
	pthread_t tid[HASH_THREADS];
	bool started[HASH_THREADS] = { false };
	size_t nstarted = 0;
	for (size_t t = 1; rc == 0 && t < nt; t++) {
		sl[t].done = &done;
		nstarted += started[t] = pthread_create(&tid[t], NULL, hash_slice, &sl[t]) == 0;
	}
	if (rc == 0)
		hash_slice(&sl[0]);
	for (size_t t = 1; rc == 0 && t < nt; t++)
		if (!started[t]) {
			/* no thread to be had: done here */
			sl[t].ticks = true;
			sl[t].done = NULL;
			hash_slice(&sl[t]);
		}
	wait_done(v, &done, nstarted);
	for (size_t t = 1; t < nt; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
	pthread_cond_destroy(&done.cond);
	pthread_mutex_destroy(&done.lock);
#else
	(void)v;
	for (size_t t = 0; rc == 0 && t < nt; t++) {
		sl[t].ticks = true;
		hash_slice(&sl[t]);
	}
#endif
	for (size_t t = 0; t < nt; t++)
		free(sl[t].buf);
	return rc;
}

/* ids[0..n) in the order their disk holds them: by the first extent's
 * place (each file opened once more to ask, as the first pass does), by
 * inode number where the filesystem cannot tell, after those that can.
 * @return whether every byte to be read (whole: all of them, else the first
 * block's) is in the page cache already: then no order is worth a thread. */
static bool disk_order(struct serve *v, const uint64_t *ids, size_t n, bool whole, struct ds_keypos *order)
{
	struct ds_dirfd dc = DS_DIRFD_INIT;
	bool cached = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t where = 0, size = ds_rec_size(v->s, ds_serve_rec(v, ids[i]));
		int fd = ds_open_scanned_in(v->s, v->files[ids[i]], &dc);
		bool placed = fd >= 0 && ds_first_extent(fd, &where);
		cached = cached && fd >= 0 && ds_all_cached(fd, 0, whole || size < DS_BLOCK ? size : DS_BLOCK);
		if (fd >= 0)
			close(fd);
		/* the top bit keeps inode numbers after the places */
		order[i] = (struct ds_keypos){ placed ? where >> 1 : 1ull << 63 | ds_rec_ino(v->s, ds_serve_rec(v, ids[i])), i };
	}
	ds_dirfd_close(&dc);
	ds_sort_by_key(order, n);
	return cached;
}

int ds_serve_hash(struct serve *v, struct ds_rd *r)
{
	uint64_t whole = ds_rd_max(r, 1), ids[DS_WIRE_BATCH], status[DS_WIRE_BATCH], hash[DS_WIRE_BATCH];
	size_t n = ds_serve_ids(v, r, ids);
	if (n == 0)
		return DUPSCAN_E_PROTOCOL;
	/* as many threads as the scan read with, each a run of the numbers; on
	 * a spinning disk one, in the disk's order, unless all it would read
	 * is in memory */
	bool hdd = dupscan_io_mode(v->s) == DUPSCAN_IO_HDD;
	struct ds_keypos *order = hdd ? malloc(n * sizeof(*order)) : NULL;
	if (hdd && !order)
		return -ENOMEM;
	if (order && disk_order(v, ids, n, whole != 0, order)) {
		free(order);
		order = NULL;
	}
	size_t nt = order ? 1 : (size_t)v->s->opt.threads;
	nt = nt > HASH_THREADS ? HASH_THREADS : nt < 1 ? 1 : nt;
	nt = n / nt < 16 ? (n + 15) / 16 : nt;
	struct hash_slice sl[HASH_THREADS];
	for (size_t t = 0, at = 0; t < nt; t++) {
		size_t k = n / nt + (t < n % nt);
		sl[t] = (struct hash_slice){ v, ids + at, k, whole != 0, status + at, hash + at, NULL, order, false, NULL };
		at += k;
	}
	int rc = hash_all(v, sl, nt);
	free(order);
	if (rc)
		return rc;
	ds_wr_begin(&v->w, DS_W_HASH);
	for (size_t i = 0; i < n; i++) {
		ds_wr_u64(&v->w, status[i]);
		ds_wr_u64(&v->w, hash[i]);
	}
	return ds_chan_send(&v->ch, &v->w);
}

/* SPDX-License-Identifier: MIT */
/* serve_work.c: the server at work on the client's requests: the file
 * numbers a request names, ALIVE frames while it works (or scans), and the
 * answer to a HASH request: the files' first blocks' or whole hashes, on the
 * scan's pool, or on a spinning disk on one thread in the disk's order. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "serving.h"
#include "read/read.h"

/* Ids of a request, each below nfiles. @return how many, or 0 when bad. */
size_t ds_serve_ids(struct serve *v, struct ds_rd *r, uint64_t *ids)
{
	size_t n = 0;
	while (ds_rd_more(r) && n < DS_WIRE_BATCH)
		ids[n++] = ds_rd_max(r, v->nfiles ? v->nfiles - 1 : 0);
	return r->bad || ds_rd_more(r) || v->nfiles == 0 ? 0 : n;
}

/* ALIVE when the last was a quarter of the client's patience ago, from
 * whichever thread is at work (the scan's progress reports, or a slice of a
 * request on the pool): one at a time, under alive_lock. */
void ds_serve_alive(void *user)
{
	struct serve *v = user;
	int64_t now = ds_mono_ns();
	ds_monitor_enter(v->alive_lock);
	if (now - v->last_alive >= v->alive_ns) {
		v->last_alive = now;
		struct ds_wr w = { 0 };
		ds_wr_begin(&w, DS_W_ALIVE);
		/* the client gone: nobody wants the rest */
		if (ds_chan_send(&v->ch, &w) != 0)
			dupscan_cancel(v->s);
		ds_wr_free(&w);
	}
	ds_monitor_leave(v->alive_lock);
}

/* A HASH request cut in slices, each a run of its numbers with a buffer of
 * its own, hashed on the scan's pool; every slice says ALIVE as it goes, so
 * the client hears while any of them works. */
struct hash_job {
	struct serve *v;
	const uint64_t *ids;
	size_t n, nslices;
	bool whole;
	uint64_t *status, *hash;
	unsigned char *bufs;           /* DS_COPY_BUF a slice */
	const struct ds_keypos *order; /* the files in disk order (one slice), or NULL: as asked */
};

static void hash_slice(void *arg, size_t t)
{
	struct hash_job *h = arg;
	const dupscan_scan *s = h->v->s;
	unsigned char *buf = h->bufs + t * (size_t)DS_COPY_BUF;
	/* the numbers go in walk order: a directory's files together, each
	 * opened from it (on a spinning disk, in h->order) */
	struct ds_dirfd dc = DS_DIRFD_INIT;
	for (size_t k = t * h->n / h->nslices; k < (t + 1) * h->n / h->nslices; k++) {
		size_t i = h->order ? (size_t)h->order[k].pos : k;
		uint32_t rec = h->v->files[h->ids[i]];
		const struct ds_rec *r = ds_rec(&s->tree, rec);
		uint64_t partial = 0, full = 0;
		int fd = ds_open_scanned_in(&s->reading, rec, &dc), rc = fd;
		if (fd >= 0) {
			rc = ds_hash_fd(fd, ds_rec_size(&s->tree, r), h->whole, &partial, &full, buf, DS_COPY_BUF,
					ds_serve_alive, h->v);
			/* written while read: the hash is of no file that was */
			if (rc == 0)
				rc = ds_check_unchanged(&s->reading, fd, r);
			close(fd);
		}
		h->status[i] = rc < 0 ? (uint64_t)-(int64_t)rc : 0;
		h->hash[i] = h->whole ? full : partial;
		ds_serve_alive(h->v);
	}
	ds_dirfd_close(&dc);
}

/* The slices on the scan's pool, this thread taking its share. */
static int hash_all(struct serve *v, struct hash_job *h)
{
	h->bufs = malloc(h->nslices * (size_t)DS_COPY_BUF);
	struct ds_pool *pool = h->nslices > 1 ? ds_scan_pool(&v->s->core) : NULL;
	if (!h->bufs || (h->nslices > 1 && !pool)) {
		free(h->bufs);
		return -ENOMEM;
	}
	if (pool)
		ds_pool_phase(pool, NULL, NULL, 0, 0, (int)h->nslices - 1);
	ds_parallel_for(pool, h->nslices, hash_slice, h);
	if (pool)
		ds_pool_end_phase(pool);
	free(h->bufs);
	return 0;
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
		uint64_t where = 0, size = ds_rec_size(&v->s->tree, ds_serve_rec(v, ids[i]));
		int fd = ds_open_scanned_in(&v->s->reading, v->files[ids[i]], &dc);
		bool placed = fd >= 0 && ds_first_extent(fd, &where, NULL, NULL);
		cached = cached && fd >= 0 && ds_all_cached(fd, 0, whole || size < DS_BLOCK ? size : DS_BLOCK);
		if (fd >= 0)
			close(fd);
		/* the top bit keeps inode numbers after the places */
		order[i] = (struct ds_keypos){ placed ? where >> 1 : 1ull << 63 | ds_rec_ino(&v->s->tree, ds_serve_rec(v, ids[i])), i };
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
	/* answers queued go before this work (and the ALIVE frames of the
	 * slices, sent from their threads, find nothing queued) */
	int fl = ds_chan_flush(&v->ch);
	if (fl)
		return fl;
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
	size_t nt = order ? 1 : (size_t)v->s->core.opt.threads;
	nt = nt > HASH_THREADS ? HASH_THREADS : nt < 1 ? 1 : nt;
	nt = n / nt < 16 ? (n + 15) / 16 : nt;
	struct hash_job job = { v, ids, n, nt, whole != 0, status, hash, NULL, order };
	int rc = hash_all(v, &job);
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

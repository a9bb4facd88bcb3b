/* SPDX-License-Identifier: MIT */
/* cache_logruns.c: a killed run's log under a memory budget. Taken whole
 * (cache_log.c) it holds 80 bytes a record, as many as the killed run
 * hashed files; under a budget a log past its share is read a chunk at a
 * time instead, each chunk sorted by inode and cut to what counts of each
 * (its last entry, and its last record when that is a comparison under
 * way), and written as one run of an unnamed file. Each join of the cache
 * (a band's, cache.c) gathers from the runs what counts for its records
 * only, a newer run's over an older's, as the whole log would have said. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill.h"
#include "fsutil.h"

#define RUN_BUF 256u /* records a run's cursor reads at once (20 KiB) */

static int cmp_key(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct cache_entry *b = pb;
	return ds_cache_cmp_key(pa, b->dev, b->ino);
}

/* Chunk e[0..n), in the order written, sorted and cut: of each inode its
 * last entry, then its last record if a comparison under way; appended to
 * the file as a run. @return 0 or a negative code. */
static int put_run(struct ds_cache *l, struct cache_entry *e, size_t n)
{
	int rc = ds_sort(e, n, sizeof(*e), cmp_key, NULL); /* stable: the order written stays */
	size_t out = 0;
	for (size_t i = 0; rc == 0 && i < n;) {
		size_t j = i + 1;
		while (j < n && ds_cache_cmp_key(&e[j], e[i].dev, e[i].ino) == 0)
			j++;
		struct cache_entry last = e[j - 1];
		size_t entry = j;
		for (size_t k = i; k < j; k++)
			if (!(e[k].flags & F_PREFIX))
				entry = k;
		if (entry < j)
			e[out++] = e[entry];
		if (last.flags & F_PREFIX)
			e[out++] = last;
		i = j;
	}
	if (rc == 0 && DS_GROW(l->logruns, l->caplogruns, l->nlogruns + 1))
		rc = -ENOMEM;
	if (rc == 0 && out)
		rc = ds_write_all(l->logruns_fd, e, out * sizeof(*e));
	if (rc == 0 && out) {
		l->logruns[l->nlogruns].off = l->logruns_end;
		l->logruns_end += out * sizeof(*e);
		l->logruns[l->nlogruns++].end = l->logruns_end;
	}
	return rc;
}

int ds_log_runs_take(struct ds_cache_state *s, int fd, size_t chunk, size_t *taken)
{
	struct ds_cache *l = s->run;
	*taken = 0;
	struct cache_entry *e = malloc(chunk * sizeof(*e));
	struct log_record *buf = malloc(RUN_BUF * sizeof(*buf));
	int rc = e && buf ? 0 : -ENOMEM;
	if (rc == 0 && (l->logruns_fd = ds_spill_file(s->tree)) < 0)
		rc = l->logruns_fd;
	size_t n = 0;
	for (;;) {
		ssize_t got = rc == 0 ? read(fd, buf, RUN_BUF * sizeof(*buf)) : 0;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			rc = -errno;
		/* whole records only: a torn last one is left */
		size_t whole = got > 0 ? (size_t)got / sizeof(*buf) : 0;
		for (size_t i = 0; rc == 0 && i < whole; i++) {
			if (!ds_log_record_valid(&buf[i]))
				continue;
			e[n++] = buf[i].e;
			++*taken;
			if (n == chunk) {
				rc = put_run(l, e, n);
				n = 0;
			}
		}
		if (rc || got <= 0 || (size_t)got % sizeof(*buf))
			break;
	}
	if (rc == 0 && n)
		rc = put_run(l, e, n);
	free(e);
	free(buf);
	if (rc) {
		if (l->logruns_fd >= 0)
			close(l->logruns_fd);
		l->logruns_fd = -1;
		free(l->logruns);
		l->logruns = NULL;
		l->nlogruns = l->caplogruns = 0;
		*taken = 0;
	}
	return rc;
}

/* ---- a join's gathering ---- */

struct cursor {
	uint64_t off, end;
	struct cache_entry buf[RUN_BUF];
	size_t pos, len;
};

/* Records at hand in c: at least two unless the run ends. @return false on a failed read. */
static bool fill(int fd, struct cursor *c, int *rc)
{
	if (c->len - c->pos >= 2 || c->off >= c->end)
		return true;
	memmove(c->buf, c->buf + c->pos, (c->len - c->pos) * sizeof(*c->buf));
	c->len -= c->pos;
	c->pos = 0;
	size_t want = (RUN_BUF - c->len) * sizeof(*c->buf);
	if (want > c->end - c->off)
		want = (size_t)(c->end - c->off);
	*rc = ds_pread_full(fd, c->buf + c->len, want, c->off);
	c->off += want;
	c->len += want / sizeof(*c->buf);
	return *rc == 0;
}

static int grow_put(struct cache_entry **v, size_t *n, size_t *cap, const struct cache_entry *e)
{
	if (DS_GROW(*v, *cap, *n + 1))
		return -ENOMEM;
	(*v)[(*n)++] = *e;
	return 0;
}

int ds_log_runs_gather(struct ds_cache_state *s, const uint32_t *order, uint32_t n)
{
	struct ds_cache *c = s->run;
	free(c->log);
	free(c->prefix);
	c->log = c->prefix = NULL;
	c->nlog = c->nprefix = 0;
	struct cursor *cur = calloc(c->nlogruns ? c->nlogruns : 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	for (size_t k = 0; k < c->nlogruns; k++) {
		cur[k].off = c->logruns[k].off;
		cur[k].end = c->logruns[k].end;
	}
	size_t caplog = 0, cappre = 0;
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		const struct ds_rec *r = ds_rec(s->tree, order[i]);
		uint64_t dev = ds_rec_dev(s->tree, r), ino = ds_rec_ino(s->tree, r);
		if (i > 0 && dev == ds_rec_dev(s->tree, ds_rec(s->tree, order[i - 1])) &&
		    ino == ds_rec_ino(s->tree, ds_rec(s->tree, order[i - 1])))
			continue; /* (another name of the inode just gathered) */
		const struct cache_entry *entry = NULL, *prefix = NULL;
		for (size_t k = 0; rc == 0 && k < c->nlogruns; k++) {
			struct cursor *cu = &cur[k];
			while (fill(c->logruns_fd, cu, &rc) && cu->pos < cu->len && ds_cache_cmp_key(&cu->buf[cu->pos], dev, ino) < 0)
				cu->pos++;
			if (rc || cu->pos == cu->len || ds_cache_cmp_key(&cu->buf[cu->pos], dev, ino) != 0)
				continue;
			/* this run is newer than those before: what it says of the inode stands */
			const struct cache_entry *a = &cu->buf[cu->pos];
			const struct cache_entry *b = cu->pos + 1 < cu->len && ds_cache_cmp_key(a + 1, dev, ino) == 0 ? a + 1 : NULL;
			if (!(a->flags & F_PREFIX))
				entry = a;
			prefix = (b ? b : a)->flags & F_PREFIX ? (b ? b : a) : NULL;
		}
		if (rc == 0 && entry)
			rc = grow_put(&c->log, &c->nlog, &caplog, entry);
		if (rc == 0 && prefix)
			rc = grow_put(&c->prefix, &c->nprefix, &cappre, prefix);
	}
	free(cur);
	return rc;
}

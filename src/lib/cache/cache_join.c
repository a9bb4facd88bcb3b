/* SPDX-License-Identifier: MIT */
/* cache_join.c: the loaded cache joined to the records (ds_cache_join()):
 * each record's hit found once, by a merge of the records in the cache's
 * order with the file's entries and a killed run's log (whole, or gathered
 * from its runs on disk under a budget), so that later lookups need no
 * search. A spilled scan joins each band, then the sets' records kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill.h"

/* The file's entries from the descriptor, when it is still the file
 * checked at the start (another run may have replaced it since). */
static int open_loaded(const char *path, const struct cache_file *f)
{
	struct stat st;
	int fd = f && f->n ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -1;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !ds_cachefile_is(f, &st))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The entry of the log or the file (the log's last record of an inode wins)
 * for key (dev, ino), stepping both on past smaller keys. */
static const struct cache_entry *entry_at(struct ds_entries *es, const struct cache_entry *log, size_t nlog,
					  size_t *j, uint64_t dev, uint64_t ino)
{
	const struct cache_entry *e;
	ds_entries_seek(es, dev, ino);
	while ((e = ds_entries_peek(es)) && ds_cache_cmp_key(e, dev, ino) < 0)
		es->index++;
	while (*j < nlog && ds_cache_cmp_key(&log[*j], dev, ino) < 0)
		(*j)++;
	size_t k = *j;
	while (k + 1 < nlog && ds_cache_cmp_key(&log[k + 1], dev, ino) == 0)
		k++;
	if (k < nlog && ds_cache_cmp_key(&log[k], dev, ino) == 0)
		return &log[k];
	return e && ds_cache_cmp_key(e, dev, ino) == 0 ? e : NULL;
}

/* The killed run's comparisons under way, matched to the records (order[0..n)
 * sorted by inode) whose key is the one it saw. @return 0 or -ENOMEM. */
static int join_prefixes(struct ds_cache_state *s, const uint32_t *order, uint32_t n)
{
	struct ds_cache *c = s->run;
	free(c->pre_at);
	c->pre_at = NULL;
	if (c->nprefix == 0)
		return 0;
	if (!(c->pre_at = malloc((n ? n : 1) * sizeof(*c->pre_at))))
		return -ENOMEM;
	size_t j = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct ds_rec *r = ds_rec(s->tree, order[i]);
		uint64_t dev = ds_rec_dev(s->tree, r), ino = ds_rec_ino(s->tree, r);
		c->pre_at[order[i]] = DS_NONE;
		while (j < c->nprefix && ds_cache_cmp_key(&c->prefix[j], dev, ino) < 0)
			j++;
		size_t k = j;
		while (k + 1 < c->nprefix && ds_cache_cmp_key(&c->prefix[k + 1], dev, ino) == 0)
			k++;
		const struct cache_entry *e = k < c->nprefix ? &c->prefix[k] : NULL;
		if (e && ds_cache_cmp_key(e, dev, ino) == 0 && e->size == ds_rec_size(s->tree, r) && e->mtime_ns == r->mtime_ns &&
		    e->ctime_ns == r->ctime_ns && ds_cache_keyed(s, r))
			c->pre_at[order[i]] = (uint32_t)k;
	}
	return 0;
}

/* order[0..n) (by inode number, then device index: ds_collapse_links())
 * in the cache's order, by device number then inode: a device's records
 * keep their order. @return the new array, or NULL (-ENOMEM). */
static uint32_t *cache_order(const struct ds_tree *t, const uint32_t *order, uint32_t n)
{
	size_t ndev = t->devs.n ? t->devs.n : 1;
	struct ds_keypos *dk = malloc(ndev * sizeof(*dk));
	size_t *at = calloc(ndev + 1, sizeof(*at));
	uint32_t *out = malloc((n ? n : 1) * sizeof(*out));
	if (!dk || !at || !out) {
		free(dk);
		free(at);
		free(out);
		return NULL;
	}
	for (size_t d = 0; d < t->devs.n; d++)
		dk[d] = (struct ds_keypos){ t->devs.key[2 * d], d };
	ds_sort_by_key(dk, t->devs.n);
	/* at[devi]: where its records begin, its rank's place */
	for (uint32_t i = 0; i < n; i++)
		at[ds_rec_devi(t, ds_rec(t, order[i]))]++;
	size_t from = 0;
	for (size_t k = 0; k < t->devs.n; k++) {
		size_t d = dk[k].pos, cnt = at[d];
		at[d] = from;
		from += cnt;
	}
	for (uint32_t i = 0; i < n; i++)
		out[at[ds_rec_devi(t, ds_rec(t, order[i]))]++] = order[i];
	free(dk);
	free(at);
	return out;
}

int ds_cache_join(struct ds_cache_state *s, const uint32_t *by_inode, uint32_t n, bool settled)
{
	struct ds_cache *c = s->run;
	if (!c || !c->loaded)
		return 0;
	free(c->at);
	c->at = malloc((n ? n : 1) * sizeof(*c->at));
	struct ds_entries *es = malloc(sizeof(*es));
	uint32_t *order = cache_order(s->tree, by_inode, n);
	int rc = c->at && es && order ? 0 : -ENOMEM;
	/* a log on disk (under a budget): what it says of these records only */
	if (rc == 0 && ds_log_on_disk(c))
		rc = ds_log_runs_gather(s, order, n);
	int fd = rc == 0 ? open_loaded(s->path, c->loaded) : -1;
	if (rc == 0)
		ds_entries_open(es, fd, fd >= 0 ? c->loaded : NULL, NULL);
	c->nat = c->at ? n : 0;
	c->nhits = 0;
	size_t j = 0;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		const struct ds_rec *r = ds_rec(s->tree, order[i]);
		c->at[order[i]] = DS_NONE;
		if (!settled && (ds_rec(s->tree, ds_rec_rep(s->tree, order[i]))->flags & DS_F_SETTLED))
			continue;
		const struct cache_entry *e = entry_at(es, c->log, c->nlog, &j, ds_rec_dev(s->tree, r), ds_rec_ino(s->tree, r));
		/* only an entry whose key is the file's as walked is kept */
		if (!e || e->size != ds_rec_size(s->tree, r) || e->mtime_ns != r->mtime_ns || e->ctime_ns != r->ctime_ns ||
		    !ds_cache_keyed(s, r))
			continue;
		if (DS_GROW(c->hits, c->caphits, c->nhits + 1)) {
			rc = -ENOMEM;
			break;
		}
		c->hits[c->nhits] = (struct cache_hit){ e->partial, e->full, e->cls, e->at_ns, e->flags };
		c->at[order[i]] = (uint32_t)c->nhits++;
	}
	if (fd >= 0)
		close(fd);
	free(es);
	/* (kept through the matching: no room to spare past the last) */
	struct cache_hit *fit = rc == 0 && c->nhits && c->nhits < c->caphits ? realloc(c->hits, c->nhits * sizeof(*c->hits)) : NULL;
	if (fit) {
		c->hits = fit;
		c->caphits = c->nhits;
	}
	/* a spilled scan joins each band, and its sets' records at the end:
	 * a log in memory stays for them (one on disk is gathered again) */
	if (!ds_spilled(s->tree) || ds_log_on_disk(c)) {
		free(c->log);
		c->log = NULL;
		c->nlog = 0;
	}
	if (rc == 0)
		rc = join_prefixes(s, order, n);
	free(order);
	return rc;
}

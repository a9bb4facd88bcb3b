/* SPDX-License-Identifier: MIT */
/* across.c: files of one size on two hosts matched: first-block hashes,
 * then whole hashes where those agree, then the bytes, compared here, before
 * anything joins (the sets are made in across_sets.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmatch.h"
#include "read/read.h"
#include "sets/sets.h"

/* The sizes each host has, sorted and each once: an item is in play only
 * when another host has its size (most files are in none, and cost nothing). */
struct sizes {
	uint64_t *v;
	size_t n, cap;
};

static int add_size(struct sizes *z, uint64_t size)
{
	if (DS_GROW(z->v, z->cap, z->n + 1))
		return -ENOMEM;
	z->v[z->n++] = size;
	return 0;
}


struct gathering {
	struct xmatch *x;
	struct sizes *z;     /* by site */
	size_t cap;
	bool adding;         /* the second pass: items, not sizes */
};

/* Does a host other than site have this size? */
static bool across(const struct gathering *g, uint32_t site, uint64_t size)
{
	for (uint32_t k = 0; k <= g->x->s->nremotes; k++)
		if (k != site && ds_sorted_has(g->z[k].v, g->z[k].n, size))
			return true;
	return false;
}

static int consider(struct gathering *g, struct xitem t)
{
	if (!g->adding)
		return add_size(&g->z[t.site], t.size);
	if (!across(g, t.site, t.size))
		return 0;
	struct xmatch *x = g->x;
	if (DS_GROW(x->it, g->cap, x->n + 1))
		return -ENOMEM;
	t.live = 1;
	t.group = DS_NONE;
	x->it[x->n++] = t;
	return 0;
}

static int consider_unique(void *user, uint32_t rec)
{
	struct gathering *g = user;
	const struct ds_hosts *s = g->x->s;
	return consider(g, (struct xitem){ .size = ds_rec_size(s->tree, ds_rec(s->tree, rec)), .ref = rec, .kind = X_LUNIQ });
}

/* Every host's sets and unique files, as sizes (first) or items (then). */
static int each_item(struct gathering *g)
{
	struct ds_hosts *s = g->x->s;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->results->nsets; i++)
		if (!s->results->sets[i].dirs)
			rc = consider(g, (struct xitem){ .size = ds_rec_size(s->tree, s->results->sets[i].files[0].rec), .ref = i,
							 .kind = X_LSET });
	if (rc == 0)
		rc = ds_each_unique(s->results, consider_unique, g);
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		for (size_t i = 0; rc == 0 && i < r->nsets; i++) {
			const struct ds_rec *rec = ds_rec(&r->mirror->tree, r->rec_of[r->sets[i].first]);
			rc = consider(g, (struct xitem){ .size = ds_rec_size(&r->mirror->tree, rec), .ref = i,
							 .site = (uint32_t)k + 1, .kind = X_RSET });
		}
		for (uint64_t i = 0; rc == 0 && i < r->nuniq; i++)
			rc = consider(g, (struct xitem){ .size = r->usize[i], .ref = r->nset + i,
							 .site = (uint32_t)k + 1, .kind = X_RUNIQ });
	}
	return rc;
}

static int gather(struct xmatch *x)
{
	struct gathering g = { x, calloc(x->s->nremotes + 1, sizeof(struct sizes)), 0, false };
	int rc = g.z ? each_item(&g) : -ENOMEM;
	for (size_t k = 0; rc == 0 && k <= x->s->nremotes; k++)
		rc = ds_sort_u64_set(g.z[k].v, &g.z[k].n);
	g.adding = true;
	if (rc == 0)
		rc = each_item(&g);
	for (size_t k = 0; g.z && k <= x->s->nremotes; k++)
		free(g.z[k].v);
	free(g.z);
	return rc;
}

/* Key order: size, then (with depth) the first block's hash, then the
 * whole's; the site last, so a run's local items come first. */
static int cmp_depth(void *ctx, const void *pa, const void *pb)
{
	int depth = *(const int *)ctx;
	const struct xitem *a = pa, *b = pb;
	uint64_t ka[4] = { a->size, depth > 0 ? a->partial : 0, depth > 1 ? a->full : 0, a->site };
	uint64_t kb[4] = { b->size, depth > 0 ? b->partial : 0, depth > 1 ? b->full : 0, b->site };
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* Keep live only the items whose key (to depth) another host's item shares;
 * the rest go. @return 0 or -ENOMEM. */
static int keep_shared(struct xmatch *x, int depth)
{
	size_t n = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->it[i].live)
			x->it[n++] = x->it[i];
	x->n = n;
	int rc = ds_sort(x->it, x->n, sizeof(*x->it), cmp_depth, &depth);
	for (size_t i = 0, j; rc == 0 && i < x->n; i = j) {
		bool across = false;
		for (j = i + 1; j < x->n; j++) {
			struct xitem a = x->it[i], b = x->it[j];
			a.site = b.site = 0;
			if (cmp_depth(&depth, &a, &b) != 0)
				break;
			across |= x->it[j].site != x->it[i].site;
		}
		for (size_t k = i; k < j; k++)
			x->it[k].live = across;
	}
	return rc;
}

static void item_failed(struct xmatch *x, struct xitem *t, int code)
{
	t->live = 0;
	if (t->site == 0) {
		char *p = ds_rec_path_alloc(x->s->tree, local_rec(x, t));
		ds_report(x->s->core, p ? p : "(a file)", code);
		free(p);
	} else if (t->kind == X_RSET) {
		struct ds_remote *r = site_remote(x, t);
		char *p = ds_rec_path_alloc(&r->mirror->tree, r->rec_of[remote_id(x, t)]);
		ds_report(x->s->core, p ? p : r->shown, code);
		free(p);
	} else {
		ds_report(x->s->core, site_remote(x, t)->shown, code);
	}
}

static int local_hash(struct xmatch *x, struct xitem *t, bool whole)
{
	uint32_t rec = local_rec(x, t);
	int fd = ds_open_scanned(x->s->reading, rec);
	int rc = fd < 0 ? fd : ds_hash_fd(fd, t->size, whole, &t->partial, &t->full, x->ba, DS_COPY_BUF, NULL, NULL);
	if (fd >= 0 && rc == 0)
		rc = ds_check_unchanged(x->s->reading, fd, ds_rec(x->s->tree, rec));
	if (fd >= 0)
		close(fd);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		item_failed(x, t, rc);
	return 0;
}

/* Items of one site whose hashes are asked for at once. */
struct batch {
	size_t idx[DS_WIRE_BATCH];
	size_t n;
	size_t next;  /* where the next batch's search starts */
};

static bool wants_hash(const struct xitem *t, uint32_t site, bool whole)
{
	/* within one block the whole hash is the first block's */
	return t->live && t->site == site && !(whole && t->size <= DS_BLOCK);
}

/* The next batch of site's items: false when none is left. */
static bool next_batch(const struct xmatch *x, struct batch *b, uint32_t site, bool whole)
{
	b->n = 0;
	for (; b->next < x->n && b->n < DS_WIRE_BATCH; b->next++)
		if (wants_hash(&x->it[b->next], site, whole))
			b->idx[b->n++] = b->next;
	return b->n > 0;
}

static int hash_ask(struct xmatch *x, struct ds_remote *r, const struct batch *b, bool whole)
{
	ds_wr_begin(&x->w, DS_W_HASH);
	ds_wr_u64(&x->w, whole);
	for (size_t i = 0; i < b->n; i++)
		ds_wr_u64(&x->w, remote_id(x, &x->it[b->idx[i]]));
	return ds_chan_send(&r->ch, &x->w);
}

static int hash_take(struct xmatch *x, struct ds_remote *r, const struct batch *b, bool whole)
{
	int type;
	struct ds_rd rd;
	int rc = ds_remote_recv(r, &type, &rd);
	if (rc == 0 && type != DS_W_HASH)
		rc = ds_remote_malformed(r, "answer to a hash request");
	for (size_t i = 0; rc == 0 && i < b->n; i++) {
		struct xitem *t = &x->it[b->idx[i]];
		uint64_t status = ds_rd_max(&rd, 100000), h = ds_rd_u64(&rd);
		if (rd.bad)
			return ds_remote_malformed(r, "answer to a hash request");
		if (status)
			item_failed(x, t, -(int)status);
		else if (whole)
			t->full = h;
		else
			t->partial = t->full = h;
	}
	return rc == 0 && ds_rd_more(&rd) ? ds_remote_malformed(r, "answer to a hash request") : rc;
}

/* The first block's or the whole hash of every live item: read here, or
 * asked of its side in batches. Each side's first batch is asked before
 * this host reads its own, so every host reads at once. */
static int hash_live(struct xmatch *x, bool whole)
{
	size_t nr = x->s->nremotes;
	struct batch *b = calloc(nr ? nr : 1, sizeof(*b));
	bool *asked = calloc(nr ? nr : 1, sizeof(*asked));
	int rc = b && asked ? 0 : -ENOMEM;
	for (size_t k = 0; rc == 0 && k < nr; k++)
		if ((asked[k] = next_batch(x, &b[k], (uint32_t)k + 1, whole)))
			rc = hash_ask(x, x->s->remotes[k], &b[k], whole);
	for (size_t i = 0; rc == 0 && i < x->n; i++)
		if (wants_hash(&x->it[i], 0, whole))
			rc = local_hash(x, &x->it[i], whole);
	for (size_t k = 0; rc == 0 && k < nr; k++) {
		struct ds_remote *r = x->s->remotes[k];
		for (bool more = asked[k]; rc == 0 && more; more = next_batch(x, &b[k], (uint32_t)k + 1, whole) &&
							       (rc = hash_ask(x, r, &b[k], whole)) == 0)
			rc = hash_take(x, r, &b[k], whole);
	}
	free(b);
	free(asked);
	return rc;
}

/* An item's bytes as a comparison reads them: from a local descriptor, or
 * asked of its side range by range. */
struct src {
	struct xitem *t;
	int fd;
	uint32_t rec;
	struct ds_remote *r;
	uint64_t id;
};

static bool fatal(int rc)
{
	return rc == -ENOMEM || rc == DUPSCAN_E_REMOTE || rc == DUPSCAN_E_PROTOCOL || rc == DUPSCAN_E_CANCELED;
}

static int src_open(struct xmatch *x, struct xitem *t, struct src *c)
{
	*c = (struct src){ t, -1, 0, site_remote(x, t), 0 };
	if (c->r) {
		c->id = remote_id(x, t);
		return 0;
	}
	c->rec = local_rec(x, t);
	c->fd = ds_open_scanned(x->s->reading, c->rec);
	return c->fd < 0 ? c->fd : 0;
}

/* Ask a remote item's side for len bytes at off (a local item: nothing to
 * ask). Asked before this host reads its own, so both read at once.
 * @return 0 or a fatal code. */
static int src_ask(struct xmatch *x, struct src *c, uint64_t off, size_t len)
{
	if (!c->r)
		return 0;
	if (ds_xread_has(x, c->r, c->id, off, len))
		return 0;
	ds_wr_begin(&x->w, DS_W_READ);
	ds_wr_u64(&x->w, c->id);
	ds_wr_u64(&x->w, off);
	ds_wr_u64(&x->w, len);
	return ds_chan_queue(&c->r->ch, &x->w); /* out when this side waits for its answer */
}

/* The len bytes at off asked for, into buf. @return 0, the file's trouble,
 * or a fatal code. */
static int src_take(struct xmatch *x, struct src *c, unsigned char *buf, uint64_t off, size_t len)
{
	if (!c->r)
		return ds_read(x->s->reading, c->fd, buf, len, off);
	if (ds_xread_has(x, c->r, c->id, off, len))
		return ds_xread_take(x, c->r, c->id, off, buf, len);
	/* answers to what was asked ahead come first: kept for later */
	int rc = ds_xread_drain(x, c->r);
	if (rc)
		return rc;
	size_t got = 0;
	for (;;) {
		int type;
		struct ds_rd rd;
		if ((rc = ds_remote_recv(c->r, &type, &rd)) != 0)
			return rc;
		if (type == DS_W_DATA && (size_t)(rd.end - rd.p) <= len - got) {
			memcpy(buf + got, rd.p, (size_t)(rd.end - rd.p));
			got += (size_t)(rd.end - rd.p);
		} else if (type == DS_W_END) {
			uint64_t status = ds_rd_max(&rd, 100000);
			if (rd.bad || ds_rd_more(&rd) || (status == 0 && got != len))
				return ds_remote_malformed(c->r, "answer to a read");
			return -(int)status;
		} else {
			return ds_remote_malformed(c->r, "answer to a read");
		}
	}
}

static int src_close(struct xmatch *x, struct src *c, int rc)
{
	if (c->fd >= 0) {
		/* read as it was scanned, or the comparison says nothing */
		if (rc == 0 || rc == DUPSCAN_E_DIFFERS) {
			int ch = ds_check_unchanged(x->s->reading, c->fd, ds_rec(x->s->tree, c->rec));
			rc = ch ? ch : rc;
		}
		close(c->fd);
	}
	return rc;
}

#define PAIR_AHEAD (4u << 20) /* bytes of a pair asked of other hosts ahead of the comparison */

/* The answers to rounds asked and not taken (after a difference, or a file's
 * trouble), read and dropped, so the side's next answer is to what is asked
 * next. @return 0 or a fatal code. */
static int skip_rounds(struct xmatch *x, struct src *ca, struct src *cb, uint64_t off, uint64_t aoff, size_t round)
{
	int rc = 0;
	for (size_t k; rc == 0 && off < aoff; off += k, round = next_round(round)) {
		k = aoff - off < round ? (size_t)(aoff - off) : round;
		for (int side = 0; side < 2 && rc == 0; side++) {
			struct src *c = side ? cb : ca;
			int r = c->r ? src_take(x, c, x->bb, off, k) : 0;
			rc = fatal(r) ? r : 0;
		}
	}
	return rc;
}

/* Are a's and b's bytes the same? Read side by side in rounds; another
 * host's rounds asked up to PAIR_AHEAD bytes before they are compared, so
 * the round trips overlap (their items' whole hashes agree already: a
 * difference is rare, and costs at most that much read for nothing).
 * @return 0, DUPSCAN_E_DIFFERS, or a fatal code; a file's own trouble is
 * reported and counts as differing. */
static int same_bytes(struct xmatch *x, struct xitem *a, struct xitem *b)
{
	struct src ca, cb;
	int ra = src_open(x, a, &ca), rb = 0;
	bool b_open = ra == 0;
	if (b_open)
		rb = src_open(x, b, &cb);
	uint64_t off = 0, aoff = 0;
	size_t round = DS_FIRST_ROUND, around = DS_FIRST_ROUND;
	while (ra == 0 && rb == 0 && off < a->size) {
		while (ra == 0 && rb == 0 && aoff < a->size && (aoff == off || aoff - off < PAIR_AHEAD)) {
			size_t k = a->size - aoff < around ? (size_t)(a->size - aoff) : around;
			if ((ra = src_ask(x, &ca, aoff, k)) == 0)
				rb = src_ask(x, &cb, aoff, k);
			aoff += k;
			around = next_round(around);
		}
		size_t k = a->size - off < round ? (size_t)(a->size - off) : round;
		/* both taken: an answer asked for is always read whole */
		if (ra == 0 && rb == 0) {
			ra = src_take(x, &ca, x->ba, off, k);
			rb = fatal(ra) && ca.r == cb.r ? ra : src_take(x, &cb, x->bb, off, k);
		}
		if (ra == 0 && rb == 0 && memcmp(x->ba, x->bb, k) != 0)
			ra = DUPSCAN_E_DIFFERS;
		if (ra == 0 && x->s->core->canceled)
			ra = DUPSCAN_E_CANCELED;
		off += k;
		round = next_round(round);
	}
	if (b_open && !fatal(ra) && !fatal(rb) && off < aoff) {
		int rc = skip_rounds(x, &ca, &cb, off, aoff, round);
		ra = rc ? rc : ra;
	}
	if (b_open)
		rb = src_close(x, &cb, rb);
	ra = src_close(x, &ca, ra);
	if (fatal(ra) || fatal(rb))
		return fatal(ra) ? ra : rb;
	if (ra && ra != DUPSCAN_E_DIFFERS) {
		item_failed(x, a, ra);
		return DUPSCAN_E_DIFFERS;
	}
	if (rb) {
		if (rb != DUPSCAN_E_DIFFERS)
			item_failed(x, b, rb);
		return DUPSCAN_E_DIFFERS;
	}
	return ra;
}

/* In each run of one key across hosts: the first item still in play
 * anchors a set; each item of another host whose bytes equal its joins.
 * What stays out anchors the next try. */
static int confirm(struct xmatch *x, int depth)
{
	for (size_t i = 0, j; i < x->n; i = j) {
		/* the other hosts' bytes for this run and the next, asked ahead */
		int rc = x->s->core->opt.quick || x->s->core->opt.partial_only ? 0 : ds_xread_ahead(x, i);
		if (rc)
			return rc;
		for (j = i + 1; j < x->n; j++) {
			struct xitem a = x->it[i], b = x->it[j];
			a.site = b.site = 0;
			if (cmp_depth(&depth, &a, &b) != 0)
				break;
		}
		for (size_t a = i; a < j; a++) {
			if (!x->it[a].live || x->it[a].group != DS_NONE)
				continue;
			for (size_t b = a + 1; b < j; b++) {
				struct xitem *tb = &x->it[b];
				if (!tb->live || tb->group != DS_NONE || tb->site == x->it[a].site)
					continue;
				/* -Q and -TT: the hashes are the user's word */
				rc = x->s->core->opt.quick || x->s->core->opt.partial_only ? 0 : same_bytes(x, &x->it[a], tb);
				if (fatal(rc))
					return rc;
				if (rc == 0 && x->it[a].live) {
					tb->group = (uint32_t)a;
					x->it[a].group = (uint32_t)a;
				}
			}
		}
	}
	/* answers asked ahead and never taken: off the channels, so each side's
	 * next answer is to what is asked next */
	for (size_t k = 0; k < x->s->nremotes; k++) {
		int rc = ds_xread_drain(x, x->s->remotes[k]);
		if (rc)
			return rc;
	}
	return 0;
}

static int match_across(struct xmatch *x)
{
	struct ds_hosts *s = x->s;
	int rc = gather(x);
	/* -1: another host is another file system */
	if (rc == 0 && s->core->opt.one_fs)
		x->n = 0;
	if (rc == 0)
		rc = keep_shared(x, 0);
	if (rc == 0)
		rc = hash_live(x, false);
	if (rc == 0)
		rc = keep_shared(x, 1);
	if (rc == 0 && !s->core->opt.partial_only) {
		rc = hash_live(x, true);
		if (rc == 0)
			rc = keep_shared(x, 2);
	}
	if (rc == 0)
		rc = confirm(x, s->core->opt.partial_only ? 1 : 2);
	return rc ? rc : ds_across_build(x);
}

int ds_remote_finish(struct ds_hosts *s)
{
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		rc = ds_remote_collect(s, s->remotes[k]);
	struct xmatch x = { .s = s };
	if (rc == 0) {
		x.ba = malloc(DS_COPY_BUF);
		x.bb = malloc(DS_COPY_BUF);
		rc = x.ba && x.bb ? match_across(&x) : -ENOMEM;
	}
	ds_xread_free(&x);
	free(x.it);
	free(x.ba);
	free(x.bb);
	ds_wr_free(&x.w);
	/* a side that failed while matching is named */
	for (size_t k = 0; rc != 0 && rc != -ENOMEM && rc != DUPSCAN_E_CANCELED && k < s->nremotes; k++)
		if (s->remotes[k]->ch.dead && s->remotes[k]->done)
			ds_remote_report(s, s->remotes[k], rc);
	if (rc == 0)
		s->remote_uniques = true;
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* across_read.c: the first round of other hosts' items' bytes, asked ahead.
 * Comparing across hosts asks a side for each item's bytes and waits for
 * them: one round trip an item, which through ssh cost more than the reading
 * (1,500 round trips, 0.45 s, for two 7,000-file source trees). So the first
 * rounds (to 1 MiB) of the items confirm() compares next are asked for
 * before they are needed, up to a budget, and their answers, which come in the order asked, are kept by item
 * until the comparison takes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmatch.h"

#define AHEAD_BYTES (4u << 20) /* asked or kept and not yet taken, at most, a side */
#define AHEAD_ITEM (1u << 20)  /* an item's rounds asked ahead start below this */
#define AHEAD_ASKS 512u        /* asked and not yet answered, a side: their frames fit a pipe's buffer */

/* One READ asked ahead: its answer, once taken off the channel. */
struct xread {
	size_t item;          /* x->it index */
	uint64_t id, off;
	size_t len;
	unsigned char *data;  /* the bytes, once answered */
	int status;           /* the answer's code (0: the bytes are in data) */
	bool answered, used;
};

struct xside {
	struct xread *v;
	size_t head, n, cap;  /* v[head..n): not yet used */
	size_t asked;         /* v[head..] not yet answered, from the first such */
	size_t bytes;
};

static struct xside *side_of(struct xmatch *x, const struct ds_remote *r)
{
	for (size_t k = 0; k < x->s->nremotes; k++)
		if (x->s->remotes[k] == r)
			return &x->ahead[k];
	return NULL;
}

/* The next answer of side's channel, which is the first asked and not
 * answered: kept. @return 0 or a fatal code. */
static int receive_one(struct ds_remote *r, struct xside *a)
{
	struct xread *e = NULL;
	for (size_t i = a->head; i < a->n && !e; i++)
		if (!a->v[i].answered)
			e = &a->v[i];
	if (!e)
		return 0;
	e->data = malloc(e->len ? e->len : 1);
	if (!e->data)
		return -ENOMEM;
	size_t got = 0;
	for (;;) {
		int type;
		struct ds_rd rd;
		int rc = ds_remote_recv(r, &type, &rd);
		if (rc)
			return rc;
		if (type == DS_W_DATA && (size_t)(rd.end - rd.p) <= e->len - got) {
			memcpy(e->data + got, rd.p, (size_t)(rd.end - rd.p));
			got += (size_t)(rd.end - rd.p);
			continue;
		}
		uint64_t status = type == DS_W_END ? ds_rd_max(&rd, 100000) : 0;
		if (type != DS_W_END || rd.bad || ds_rd_more(&rd) || (status == 0 && got != e->len))
			return ds_remote_malformed(r, "answer to a read");
		e->status = -(int)status;
		e->answered = true;
		a->asked--;
		return 0;
	}
}

/* Drop what was taken, or kept for an item confirm() has gone past. */
static void drop_used(struct xside *a, size_t before)
{
	for (size_t i = a->head; i < a->n; i++) {
		struct xread *e = &a->v[i];
		if (e->answered && !e->used && e->item < before) {
			e->used = true;
			a->bytes -= e->len;
		}
		if (e->used) {
			free(e->data);
			e->data = NULL;
		}
	}
	while (a->head < a->n && a->v[a->head].used)
		a->head++;
	if (a->head == a->n)
		a->head = a->n = 0;
}

static int ask(struct xmatch *x, struct ds_remote *r, struct xside *a, size_t item, uint64_t id, uint64_t off,
	       size_t len)
{
	if (a->n == a->cap) {
		/* the used ones at the front make room first */
		if (a->head > 0) {
			memmove(a->v, a->v + a->head, (a->n - a->head) * sizeof(*a->v));
			a->n -= a->head;
			a->head = 0;
		} else {
			size_t cap = a->cap ? 2 * a->cap : 64;
			struct xread *v = realloc(a->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			a->v = v;
			a->cap = cap;
		}
	}
	ds_wr_begin(&x->w, DS_W_READ);
	ds_wr_u64(&x->w, id);
	ds_wr_u64(&x->w, off);
	ds_wr_u64(&x->w, len);
	int rc = ds_chan_queue(&r->ch, &x->w); /* out when this side waits for an answer */
	if (rc == 0) {
		a->v[a->n++] = (struct xread){ item, id, off, len, NULL, 0, false, false };
		a->asked++;
		a->bytes += len;
	}
	return rc;
}

int ds_xread_ahead(struct xmatch *x, size_t from)
{
	if (!x->ahead && x->s->nremotes && !(x->ahead = calloc(x->s->nremotes, sizeof(*x->ahead))))
		return -ENOMEM;
	for (size_t k = 0; k < x->s->nremotes; k++)
		drop_used(&x->ahead[k], from);
	if (x->next_ahead < from) {
		x->next_ahead = from;
		x->next_ahead_off = 0;
	}
	for (; x->next_ahead < x->n; x->next_ahead++, x->next_ahead_off = 0) {
		const struct xitem *t = &x->it[x->next_ahead];
		struct ds_remote *r = site_remote(x, t);
		if (!r || !t->live || t->group != DS_NONE)
			continue;
		struct xside *a = &x->ahead[t->site - 1];
		/* the rounds same_bytes() takes, from where the last call stopped */
		uint64_t off = 0;
		size_t round = DS_FIRST_ROUND;
		for (; off < x->next_ahead_off; off += round, round = next_round(round))
			;
		for (; off < t->size && off < AHEAD_ITEM; off += round, round = next_round(round)) {
			size_t len = t->size - off < round ? (size_t)(t->size - off) : round;
			if (a->asked >= AHEAD_ASKS || a->bytes + len > AHEAD_BYTES) {
				x->next_ahead_off = off;
				return 0; /* comes again once the comparisons take some */
			}
			int rc = ask(x, r, a, x->next_ahead, remote_id(x, t), off, len);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static struct xread *find(struct xside *a, uint64_t id, uint64_t off, size_t len)
{
	for (size_t i = a ? a->head : 0; a && i < a->n; i++)
		if (!a->v[i].used && a->v[i].id == id && a->v[i].off == off && a->v[i].len == len)
			return &a->v[i];
	return NULL;
}

bool ds_xread_has(struct xmatch *x, const struct ds_remote *r, uint64_t id, uint64_t off, size_t len)
{
	return find(x->ahead ? side_of(x, r) : NULL, id, off, len) != NULL;
}

int ds_xread_take(struct xmatch *x, struct ds_remote *r, uint64_t id, uint64_t off, unsigned char *buf, size_t len)
{
	struct xside *a = side_of(x, r);
	struct xread *e = find(a, id, off, len);
	int rc = 0;
	while (rc == 0 && !e->answered)
		rc = receive_one(r, a);
	if (rc)
		return rc;
	if (e->status == 0)
		memcpy(buf, e->data, len);
	rc = e->status;
	e->used = true;
	a->bytes -= e->len;
	free(e->data);
	e->data = NULL;
	return rc;
}

int ds_xread_drain(struct xmatch *x, struct ds_remote *r)
{
	struct xside *a = x->ahead ? side_of(x, r) : NULL;
	int rc = 0;
	while (rc == 0 && a && a->asked > 0)
		rc = receive_one(r, a);
	return rc;
}

void ds_xread_free(struct xmatch *x)
{
	for (size_t k = 0; x->ahead && k < x->s->nremotes; k++) {
		for (size_t i = x->ahead[k].head; i < x->ahead[k].n; i++)
			free(x->ahead[k].v[i].data);
		free(x->ahead[k].v);
	}
	free(x->ahead);
	x->ahead = NULL;
}

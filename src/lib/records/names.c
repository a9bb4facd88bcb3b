/* SPDX-License-Identifier: MIT */
/* names.c: the records' file names, packed in 256 KiB chunks and named by a
 * 32-bit handle (the chunk in its high bits, the offset in the low); a name
 * like one added just before it kept as what differs (names.h).
 *
 * A name kept whole is its bytes and a NUL. One kept as a difference starts
 * with '/', which no name kept whole does (a component holds none; a name
 * that does, a file given by its path, is kept as a difference from
 * nothing): then how far back its base starts (a varint, 7 bits a byte, 0:
 * no base), then p and s in one byte (p << 4 | s, both under 15) or 0xff
 * and a byte each, then the middle and a NUL. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "records/names.h"

#define CHUNK ((size_t)1 << DS_NAME_SHIFT)
#define ENTRY_MORE 4 /* an entry takes at most its name, its NUL and 3 (a whole name starting
                      * with '/': choose() takes a difference only when it costs less) */

struct diff {
	uint32_t dist;
	size_t p, s;
	const char *mid;
};

static const char *read_diff(const char *at, struct diff *d)
{
	const unsigned char *u = (const unsigned char *)at + 1;
	d->dist = 0;
	for (unsigned shift = 0;; shift += 7) {
		d->dist |= (uint32_t)(*u & 0x7f) << shift;
		if (!(*u++ & 0x80))
			break;
	}
	if (*u == 0xff) {
		d->p = u[1];
		d->s = u[2];
		u += 3;
	} else {
		d->p = *u >> 4;
		d->s = *u & 15;
		u++;
	}
	d->mid = (const char *)u;
	return d->mid;
}

const char *ds_names_rebuild(const char *at, char *buf)
{
	const char *chain[DS_NAMES_DEPTH];
	unsigned k = 0;
	struct diff d;
	read_diff(at, &d);
	if (d.dist == 0)
		return d.mid; /* kept whole behind its head: any length */
	/* the bases back to one kept whole (the encoder chains at most
	 * DS_NAMES_DEPTH, each at most DS_NAME_BUF - 1 bytes) */
	const char *e = at;
	while (*e == '/' && k < DS_NAMES_DEPTH) {
		read_diff(e, &d);
		if (d.dist == 0)
			break;
		chain[k++] = e;
		e -= d.dist;
	}
	const char *root = *e == '/' ? read_diff(e, &d) : e;
	size_t len = strlen(root);
	memcpy(buf, root, len + 1);
	while (k--) {
		read_diff(chain[k], &d);
		size_t ml = strlen(d.mid);
		memmove(buf + d.p + ml, buf + len - d.s, d.s);
		memcpy(buf + d.p, d.mid, ml);
		len = d.p + ml + d.s;
		buf[len] = '\0';
	}
	return buf;
}

static unsigned varint_len(uint32_t v) { return v < (1u << 7) ? 1 : v < (1u << 14) ? 2 : 3; }

/* What keeping name as a difference from b costs, with its p and s. */
static size_t diff_cost(const struct ds_names_recent *b, uint32_t dist, const char *name, size_t len, size_t *p,
			size_t *s)
{
	size_t most = len < b->len ? len : b->len, i = 0, j = 0;
	while (i < most && name[i] == b->text[i])
		i++;
	while (j < most - i && name[len - 1 - j] == b->text[b->len - 1 - j])
		j++;
	*p = i;
	*s = j;
	return 1 + varint_len(dist) + (i < 15 && j < 15 ? 1 : 3) + (len - i - j) + 1;
}

/* The cheapest way to keep name: the recent name to keep it against (-1:
 * whole), its p and s. @return its cost. */
static size_t choose(const struct ds_names *t, const char *name, size_t len, int *base, size_t *p, size_t *s)
{
	size_t best = len + 1 + (*name == '/' ? 3 : 0);
	*base = -1;
	*p = *s = 0;
	for (unsigned k = 0; len > 0 && len < DS_NAME_BUF && k < t->nrecent; k++) {
		const struct ds_names_recent *b = &t->recent[k];
		/* (most names share neither end with most others: no loop for them) */
		if (b->depth >= DS_NAMES_DEPTH || b->len == 0 ||
		    (b->text[0] != name[0] && b->text[b->len - 1] != name[len - 1]))
			continue;
		size_t bp, bs, c = diff_cost(b, t->used - b->off, name, len, &bp, &bs);
		if (c < best) {
			best = c;
			*base = (int)k;
			*p = bp;
			*s = bs;
		}
	}
	return best;
}

static int new_chunk(struct ds_names *t)
{
	/* the last chunk's index must leave DS_NAME_EMPTY unused */
	if (t->n + 1 >= (1u << (32 - DS_NAME_SHIFT)))
		return -EOVERFLOW;
	if (!t->recent && !(t->recent = malloc(DS_NAMES_RECENT * sizeof(*t->recent))))
		return -ENOMEM;
	if (DS_GROW(t->chunk, t->cap, t->n + 1))
		return -ENOMEM;
	if (!(t->chunk[t->n] = ds_big_alloc(CHUNK)))
		return -ENOMEM;
	t->n++;
	t->used = 0;
	t->nrecent = t->next = 0; /* (a base is in its name's chunk) */
	return 0;
}

/* Write a difference's head at p: dist, then p and s. @return past it. */
static char *put_head(char *at, uint32_t dist, size_t p, size_t s)
{
	unsigned char *u = (unsigned char *)at;
	*u++ = '/';
	do {
		*u++ = (unsigned char)((dist & 0x7f) | (dist >= 0x80 ? 0x80 : 0));
		dist >>= 7;
	} while (dist);
	if (p < 15 && s < 15) {
		*u++ = (unsigned char)(p << 4 | s);
	} else {
		*u++ = 0xff;
		*u++ = (unsigned char)p;
		*u++ = (unsigned char)s;
	}
	return (char *)u;
}

static void remember(struct ds_names *t, uint32_t off, const char *name, size_t len, unsigned depth)
{
	if (len >= DS_NAME_BUF)
		return;
	struct ds_names_recent *r = &t->recent[t->next];
	r->off = off;
	r->len = (uint8_t)len;
	r->depth = (uint8_t)depth;
	memcpy(r->text, name, len);
	t->next = (t->next + 1) % DS_NAMES_RECENT;
	if (t->nrecent < DS_NAMES_RECENT)
		t->nrecent++;
}

int ds_names_add(struct ds_names *t, const char *name, size_t len, uint32_t *out)
{
	if (len + ENTRY_MORE >= CHUNK)
		return -ENAMETOOLONG;
	if (t->n == 0 || t->used + len + ENTRY_MORE > CHUNK) {
		int rc = new_chunk(t);
		if (rc)
			return rc;
	}
	int base;
	size_t p, s;
	size_t cost = choose(t, name, len, &base, &p, &s);
	char *at = t->chunk[t->n - 1] + t->used, *w = at;
	unsigned depth = 0;
	if (base >= 0) {
		const struct ds_names_recent *b = &t->recent[base];
		w = put_head(w, t->used - b->off, p, s);
		depth = b->depth + 1u;
	} else if (*name == '/') {
		w = put_head(w, 0, 0, 0);
	}
	memcpy(w, name + p, len - p - s);
	w[len - p - s] = '\0';
	*out = (t->n - 1) << DS_NAME_SHIFT | t->used;
	remember(t, t->used, name, len, depth);
	t->used += (uint32_t)cost;
	return 0;
}

void ds_names_free(struct ds_names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		ds_big_free(t->chunk[i], CHUNK);
	free(t->chunk);
	free(t->recent);
	memset(t, 0, sizeof(*t));
}

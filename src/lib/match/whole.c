/* SPDX-License-Identifier: MIT */
/* whole.c: with --ignore-metadata, which members of a class of one payload
 * hold the same bytes, every one, tags too (only they may be linked): their
 * payloads are proven equal, so two files of one size and one layout are
 * compared on the rest, their tags, byte by byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"
#include "match/match.h"

#define CHUNK (64u << 10)

/* Bytes [off, end) of the files open as fa and fb, the same? */
static int same_range(struct ds_reading *s, int fa, int fb, uint64_t off, uint64_t end, unsigned char *buf)
{
	while (off < end) {
		size_t n = end - off < CHUNK ? (size_t)(end - off) : CHUNK;
		int err = ds_read(s, fa, buf, n, off);
		if (err == 0)
			err = ds_read(s, fb, buf + CHUNK, n, off);
		if (err)
			return err;
		if (memcmp(buf, buf + CHUNK, n) != 0)
			return 0;
		off += n;
	}
	return 1;
}

/* What is not payload in files of payload layout p (the same in both),
 * size bytes long, the same? @return 1, 0 or a negative code. */
static int same_tags(struct ds_reading *s, uint32_t a, uint32_t b, const struct ds_pay *p, uint64_t size,
		     unsigned char *buf)
{
	int fa = ds_open_scanned(s, a), fb = fa < 0 ? fa : ds_open_scanned(s, b);
	int rc = fb < 0 ? fb : 1;
	const struct dupscan_extent *x = s->tree->pay.ext + p->first;
	uint64_t off = 0;
	for (unsigned i = 0; rc == 1 && i <= p->n; i++) {
		uint64_t end = i < p->n ? x[i].offset : size;
		rc = same_range(s, fa, fb, off, end, buf);
		off = i < p->n ? x[i].offset + x[i].length : size;
	}
	/* (read as scanned: a file written meanwhile is no proof) */
	if (rc == 1 && (ds_check_unchanged(s, fa, ds_rec(s->tree, a)) || ds_check_unchanged(s, fb, ds_rec(s->tree, b))))
		rc = 0;
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return rc;
}

/* Records a and b, of one class, the same bytes? Files read whole were
 * compared whole; files of one payload are the same only with one size and
 * one layout (a parse depends on nothing but the bytes) and the same tags. */
static int same_whole(struct ds_reading *s, uint32_t a, uint32_t b, unsigned char *buf)
{
	const struct ds_tree *t = s->tree;
	uint64_t size = ds_rec_size(t, ds_rec(t, a));
	const struct ds_pay *pa = ds_rec_payload(t, a), *pb = ds_rec_payload(t, b);
	if (size != ds_rec_size(t, ds_rec(t, b)) || !pa != !pb)
		return 0;
	if (!pa)
		return 1;
	if (pa->format != pb->format || pa->n != pb->n ||
	    memcmp(t->pay.ext + pa->first, t->pay.ext + pb->first, pa->n * sizeof(*t->pay.ext)) != 0)
		return 0;
	return same_tags(s, a, b, pa, size, buf);
}

int ds_whole_classes(struct ds_ctx *c)
{
	struct ds_result *r = c->res;
	struct ds_tree *t = c->s->tree;
	if (!t->pay.at || r->nins < 2)
		return 0;
	unsigned char *buf = malloc(2 * CHUNK);
	if (!buf)
		return -ENOMEM;
	/* each member against the earlier members of its class (they come
	 * together) that stand for their bytes: one of the same bytes, or none */
	for (size_t i = 1; i < r->nins; i++) {
		struct ds_insert in = ds_result_ins(r, i);
		for (size_t j = i; j-- > 0;) {
			struct ds_insert e = ds_result_ins(r, j);
			if (e.cls != in.cls)
				break;
			if (t->pay.whole[e.rec] != e.rec)
				continue;
			int same = same_whole(c->s->reading, e.rec, in.rec, buf);
			if (same == -ENOMEM) {
				free(buf);
				return -ENOMEM;
			}
			if (same == 1) {
				t->pay.whole[in.rec] = e.rec;
				break;
			}
		}
	}
	free(buf);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* xmatch.h: the matching across hosts' items (across.c, across_sets.c);
 * never installed. */
#ifndef DUPSCAN_XMATCH_H
#define DUPSCAN_XMATCH_H

#include "remote.h"

/* Something that may match across hosts: a set found on one host (it
 * stands for all its files: they are equal) or a file unique there. */
enum { X_LSET, X_LUNIQ, X_RSET, X_RUNIQ };
struct xitem {
	uint64_t size, partial, full;
	uint64_t ref;      /* s->results->sets index or record; the remote's set index or file number */
	uint32_t site;     /* 0: this host; 1 + the remote's index */
	uint32_t kind : 2;
	uint32_t live : 1; /* still in play */
	uint32_t group;    /* the first item of its set across hosts, or DS_NONE */
};

struct xside;
struct xmatch {
	struct ds_hosts *s;
	struct xitem *it;
	size_t n;
	unsigned char *ba, *bb;  /* comparison buffers, DS_COPY_BUF each */
	struct ds_wr w;
	struct xside *ahead;     /* by remote: reads asked ahead (across_read.c) */
	size_t next_ahead;       /* the next item to ask ahead for, */
	uint64_t next_ahead_off; /* from this offset */
};

/* Rounds of a comparison: from DS_FIRST_ROUND, four times larger each, up
 * to DS_COPY_BUF, so a difference early costs little. */
static inline size_t next_round(size_t round)
{
	return round * 4 > DS_COPY_BUF ? DS_COPY_BUF : round * 4;
}

static inline struct ds_remote *site_remote(const struct xmatch *x, const struct xitem *t)
{
	return t->site ? x->s->remotes[t->site - 1] : NULL;
}

/* The remote file number an item's bytes are read by. */
static inline uint64_t remote_id(const struct xmatch *x, const struct xitem *t)
{
	return t->kind == X_RSET ? site_remote(x, t)->sets[t->ref].first : t->ref;
}

/* The local record an item's bytes are read by. */
static inline uint32_t local_rec(const struct xmatch *x, const struct xitem *t)
{
	return t->kind == X_LSET ? x->s->results->sets[t->ref].files[0].idx : (uint32_t)t->ref;
}

/* across_read.c: ask the other hosts for the first rounds of the live
 * items from index from on, as far as a budget allows; what was kept for
 * items before from is dropped. @return 0 or a fatal code. */
int ds_xread_ahead(struct xmatch *x, size_t from);
/* Was the round (id, off, len) asked ahead of r and not taken yet? */
bool ds_xread_has(struct xmatch *x, const struct ds_remote *r, uint64_t id, uint64_t off, size_t len);
/* Its bytes into buf (asked ahead: ds_xread_has()), the answers before
 * them kept. @return 0, the file's trouble, or a fatal code. */
int ds_xread_take(struct xmatch *x, struct ds_remote *r, uint64_t id, uint64_t off, unsigned char *buf, size_t len);
/* Every answer asked ahead of r taken off its channel and kept, so what is
 * asked next is answered next. @return 0 or a fatal code. */
int ds_xread_drain(struct xmatch *x, struct ds_remote *r);
void ds_xread_free(struct xmatch *x);

/* The sets every host found, joined where matching across hosts joined their
 * items, as the scan's sets (across_sets.c); with DUPSCAN_OPT_DIRS also the
 * classes across hosts. @return 0 or -ENOMEM (or a side's code naming files). */
int ds_across_build(struct xmatch *x);

#endif /* DUPSCAN_XMATCH_H */

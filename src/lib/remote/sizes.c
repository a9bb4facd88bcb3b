/* SPDX-License-Identifier: MIT */
/* sizes.c: with reference paths, a path scanned on another host reads only
 * what the question needs, as a local size group without both kinds is
 * never read (match.c). Its client, once its own walk is done, tells it the
 * sizes of the files of the other kind (all of them on this host: remote.c
 * asks only then): a reference there is told the other files' sizes, and
 * leaves every file of another size unread and unsent; another path there
 * is told the references' sizes, and sends its files of other sizes as
 * unique, unread: they are missing from the references (serve.c). Both
 * HELLOs must say DS_WIRE_SIZES: a peer of 0.9 neither sends nor waits for
 * them, and scans as it always did. */
#include <errno.h>
#include <stdlib.h>

#include "remote.h"
#include "records/spill.h"

/* At most this many sizes a frame: ten bytes each at worst, within DS_WIRE_MAX. */
#define SIZES_FRAME 65536u

int ds_wire_sizes_send(struct ds_chan *c, const uint64_t *v, size_t n, bool keep)
{
	struct ds_wr w = { 0 };
	int rc = 0;
	size_t i = 0;
	do {
		size_t end = n - i > SIZES_FRAME ? i + SIZES_FRAME : n;
		ds_wr_begin(&w, DS_W_SIZES);
		ds_wr_u64(&w, (end == n ? DS_SIZES_LAST : 0) | (keep ? DS_SIZES_KEEP : 0));
		for (; i < end; i++)
			ds_wr_u64(&w, v[i] - (i ? v[i - 1] : 0));
		rc = ds_chan_send(c, &w);
	} while (rc == 0 && i < n);
	ds_wr_free(&w);
	return rc;
}

/* One SIZES frame's sizes appended to *v (ascending, each once, past last);
 * its what field in *what. @return 1 when it was the last, 0, -ENOMEM or
 * DUPSCAN_E_PROTOCOL. */
static int take_frame(struct ds_rd *rd, uint64_t **v, size_t *n, size_t *cap, uint64_t *what)
{
	*what = ds_rd_max(rd, DS_SIZES_LAST | DS_SIZES_KEEP);
	while (!rd->bad && ds_rd_more(rd)) {
		uint64_t step = ds_rd_u64(rd), prev = *n ? (*v)[*n - 1] : 0;
		/* each larger than the one before, and no wrap */
		if ((*n && step == 0) || step > UINT64_MAX - prev)
			return DUPSCAN_E_PROTOCOL;
		if (DS_GROW(*v, *cap, *n + 1))
			return -ENOMEM;
		(*v)[(*n)++] = prev + step;
	}
	return rd->bad ? DUPSCAN_E_PROTOCOL : (*what & DS_SIZES_LAST) != 0;
}

int ds_wire_sizes_recv(struct ds_chan *c, uint64_t **v, size_t *n, bool *keep)
{
	size_t cap = 0;
	uint64_t what = 0, first = UINT64_MAX;
	*v = NULL;
	*n = 0;
	for (;;) {
		int type;
		struct ds_rd rd;
		int rc = ds_chan_recv(c, &type, &rd);
		if (rc == 0 && type == DS_W_BYE)
			rc = DUPSCAN_E_REMOTE; /* the client gave up before its walk ended */
		else if (rc == 0 && type != DS_W_SIZES)
			rc = DUPSCAN_E_PROTOCOL;
		if (rc == 0)
			rc = take_frame(&rd, v, n, &cap, &what);
		/* every frame says the same of the other files */
		first = first == UINT64_MAX ? what & DS_SIZES_KEEP : first;
		if (rc >= 0 && (what & DS_SIZES_KEEP) != first)
			rc = DUPSCAN_E_PROTOCOL;
		*keep = first == DS_SIZES_KEEP;
		if (rc == 1)
			return 0;
		if (rc == DUPSCAN_E_PROTOCOL)
			ds_chan_fail(c, "malformed sizes (frame type %d)", type);
		if (rc != 0) {
			free(*v);
			*v = NULL;
			*n = 0;
			return rc;
		}
	}
}

/* Sizes sent as they come, ascending (a scan past its memory budget merges
 * them from its spilled runs: they are never all in memory): frames of
 * SIZES_FRAME, then an empty last one. */
struct sizes_out {
	struct ds_chan *c;
	struct ds_wr w;
	uint64_t prev, what;
	size_t inframe;
	int rc;
	bool zero;           /* an empty file's size too (-z) */
};

static int out_flush(struct sizes_out *o, bool last)
{
	if (o->inframe == 0 && !last)
		return 0;
	if (o->inframe == 0) { /* (an empty frame: the flags alone) */
		ds_wr_begin(&o->w, DS_W_SIZES);
		ds_wr_u64(&o->w, o->what);
	}
	o->rc = ds_chan_send(o->c, &o->w);
	o->inframe = 0;
	return o->rc;
}

static int out_size(void *user, uint64_t size)
{
	struct sizes_out *o = user;
	if (size == 0 && !o->zero)
		return 0;
	if (o->inframe == 0) {
		ds_wr_begin(&o->w, DS_W_SIZES);
		ds_wr_u64(&o->w, o->what);
	}
	ds_wr_u64(&o->w, size - o->prev);
	o->prev = size;
	return ++o->inframe == SIZES_FRAME ? out_flush(o, false) : 0;
}

/* A spilled scan's sizes of the given kind to c. @return 0, the spill's
 * code, or the channel's (which fails later, as any). */
static int send_spilled(const struct ds_hosts *s, struct ds_chan *c, bool ref, bool keep)
{
	/* an empty file only with -z (it is never matched without) */
	struct sizes_out o = { c, { 0 }, 0, keep ? DS_SIZES_KEEP : 0, 0, 0, s->core->opt.zero_match };
	int rc = ds_spill_sizes(s->tree, ref, out_size, &o);
	if (rc == 0 && out_flush(&o, false) == 0) {
		o.what |= DS_SIZES_LAST;
		out_flush(&o, true);
	}
	ds_wr_free(&o.w);
	return o.rc ? 0 : rc; /* (a channel that failed fails the side later, as any) */
}

/* The sizes of this host's files that are references (ref) or not,
 * ascending, each once (an empty file's only with -z: it is never matched
 * without). @return 0 or -ENOMEM. */
static int sizes_of(const struct ds_hosts *s, bool ref, uint64_t **out, size_t *n)
{
	uint64_t *v = malloc((s->tree->nrecs ? s->tree->nrecs : 1) * sizeof(*v));
	size_t k = 0;
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->tree->nrecs; i++) {
		uint64_t size = ds_rec_size(s->tree, ds_rec(s->tree, i));
		if (ds_rec_reference(s->tree, i) == ref && (size || s->core->opt.zero_match))
			v[k++] = size;
	}
	int rc = ds_sort_u64_set(v, &k);
	*out = v;
	*n = rc ? 0 : k;
	return rc;
}

int ds_remote_sizes(struct ds_hosts *s)
{
	uint64_t *v[2] = { NULL, NULL }; /* by kind: the others', the references' */
	size_t n[2] = { 0, 0 };
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		/* (its greeting, read here, is only waited for: a side that fails
		 * fails the run in ds_remote_finish()) */
		if (!r->want_sizes || ds_remote_greeting(r) != 0 || !(r->features & DS_WIRE_SIZES))
			continue;
		/* told the other kind's sizes */
		int kind = !s->tree->args[r->arg].reference;
		if (ds_spilled(s->tree)) {
			rc = ds_spill_out(s->tree);
			if (rc == 0)
				rc = send_spilled(s, &r->ch, kind, kind);
			continue;
		}
		if (!v[kind] && (rc = sizes_of(s, kind, &v[kind], &n[kind])) != 0)
			break;
		ds_wire_sizes_send(&r->ch, v[kind], n[kind], kind); /* (a channel that fails: as above) */
	}
	free(v[0]);
	free(v[1]);
	return rc;
}

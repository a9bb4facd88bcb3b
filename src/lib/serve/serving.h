/* SPDX-License-Identifier: MIT */
/* serving.h: what the server's files share (serve.c, serve_work.c); never installed. */
#ifndef DUPSCAN_SERVING_H
#define DUPSCAN_SERVING_H

#include "scan.h"
#include "remote/wire.h"

#define FLUSH_AT (DS_WIRE_MAX / 2) /* a frame is sent once this full: an entry is far smaller */
#define READ_MAX (64u << 20)       /* bytes one READ asks for, at most */
#define HELD_MAX 64                /* kept files held open for CHECK: the last ones checked */
#define HASH_THREADS 16            /* slices of one HASH request on the pool, at most */

struct held {
	uint64_t id;
	int fd;
};

struct serve {
	dupscan_scan *s;
	struct ds_chan ch;
	struct ds_wr w, dirs;
	uint32_t *files;             /* by number: the records of the sets' files, then of the unique ones */
	size_t nfiles, nset, capfiles;
	uint32_t *wire_dir;          /* by directory: its number on the wire, DS_NONE: not sent */
	uint32_t ndirs_sent;
	struct serve_err { char *path; int code; } *errs;
	size_t nerr, caperr;
	int64_t last_alive, alive_ns;
	struct ds_monitor *alive_lock; /* ALIVE from one thread at a time */
	bool structure;              /* the client asked for the tree (DUPSCAN_OPT_DIRS) */
	bool sizes;                  /* it sends the sizes it wants once its walk is done (sizes.c) */
	uint64_t *want;              /* those sizes, sorted (nwant of them), once received */
	size_t nwant;
	bool want_keep;              /* DS_SIZES_KEEP: the others listed as unique, not left out */
	int fd;                      /* the file READ reads, id fd_id */
	uint64_t fd_id;
	struct held held[HELD_MAX];
	size_t nheld, held_next;     /* held_next: the oldest, replaced next when all are held */
	unsigned char *buf;
};

/* ALIVE when due, from any thread (serve_work.c). */
void ds_serve_alive(void *v);
/* The file numbers of a request, each below nfiles. @return how many, or 0
 * when bad (serve_work.c). */
size_t ds_serve_ids(struct serve *v, struct ds_rd *r, uint64_t *ids);
/* Answer a HASH request (serve_work.c). @return 0, -ENOMEM, DUPSCAN_E_PROTOCOL
 * or the channel's code. */
int ds_serve_hash(struct serve *v, struct ds_rd *r);

static inline const struct ds_rec *ds_serve_rec(const struct serve *v, uint64_t id)
{
	return ds_rec(&v->s->tree, v->files[id]);
}

#endif /* DUPSCAN_SERVING_H */

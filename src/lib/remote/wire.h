/* SPDX-License-Identifier: MIT */
/* wire.h: the remote-scan channel's frames and their fields (wire.c); never
 * installed. A frame is a 4-byte little-endian length, then a type byte and
 * that many bytes less one of fields: unsigned LEB128 numbers and strings
 * (a number, then that many bytes). Nothing a peer sends is trusted: every
 * read is bounded by its frame, and a frame by DS_WIRE_MAX. */
#ifndef DUPSCAN_WIRE_H
#define DUPSCAN_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DS_WIRE_PROTOCOL 1               /* raised whenever a frame changes meaning */
#define DS_WIRE_MAGIC "dupscan-wire"     /* a HELLO's first field */
#define DS_WIRE_MAX (1u << 20)           /* a frame's type and fields, at most */
#define DS_WIRE_DATA (256u * 1024u)      /* file bytes a DATA frame carries, at most */
#define DS_WIRE_BATCH 4096u              /* files a request names, at most */
#define DS_WIRE_TIMEOUT_MS 120000        /* silence that fails a channel, by default */

/* Frame types. Client: HELLO, SCAN, then requests, each answered in full
 * before the next is sent (neither side ever blocks writing while the other
 * writes too). Server: HELLO, ALIVE while scanning, its results (DIR, SET,
 * UNIQ, TREE when asked, ERR) and DONE; then one answer a request, ALIVE
 * frames before it while it works. */
enum ds_wire_type {
	DS_W_HELLO = 1,   /* magic, protocol, program version */
	DS_W_SCAN,        /* options as (number, value) pairs, path, recurse, silence ms */
	DS_W_ALIVE,       /* nothing: the server is still scanning */
	DS_W_DIR,         /* directories: (id, parent + 1 (0: the root), name) ... */
	DS_W_SET,         /* one set's files: (id, dir, name, size, dev, ino, mode, uid, gid, nlink, mtime, ctime) ... */
	DS_W_UNIQ,        /* sizes of unique files, by id from the first given: first, size ... */
	DS_W_ERR,         /* a path and a code (positive: the negated code) */
	DS_W_DONE,        /* sets' files, uniques, errors */
	DS_W_HASH,        /* request: kind (0 first block, 1 whole), ids ...; answer: (status, hash) ... */
	DS_W_NAMES,       /* request: ids ...; answer: DIR frames, then a SET-shaped NAMES frame */
	DS_W_READ,        /* request: id, offset, length; answer: DATA frames, then END */
	DS_W_DATA,        /* bytes */
	DS_W_END,         /* status of a READ or CHECK (0: all sent, unchanged) */
	DS_W_CHECK,       /* request: id (the file held open from then on) */
	DS_W_BYE,         /* the client is done */
	DS_W_FAIL,        /* the sender gives up: a message; the channel ends */
	DS_W_TREE,        /* asked with DUPSCAN_OPT_DIRS, after UNIQ: (dir, what[, file]) ... where what
	                   * is 0 (a file of that number's content), 1 (an empty file), 2 (a file of
	                   * unknown content) or 3 (the directory is incomplete: no file) */
	DS_W_SIZES        /* client, both HELLOs saying DS_WIRE_SIZES, once its walk is done: what
	                   * (DS_SIZES_*), then sizes ascending, each the step from the one before
	                   * (the first from 0) */
};
#define DS_W_LAST DS_W_SIZES

/* What a HELLO may say it does, a number after its version (a peer that
 * sends none does none of it, and ignores ours). DS_WIRE_SIZES, from a
 * client: it scans a reference there, and once its own walk is done it can
 * say the sizes its other files have (only files of those sizes are wanted
 * there: the others are left unread and unsent); from a server: it takes
 * them. Sent only when both say so. */
#define DS_WIRE_SIZES 1u
/* A SIZES frame's first field: the last of them; and the files of other
 * sizes are still sent, as unique files (unread: the scan there is no
 * reference, and they are missing from the references) rather than left out
 * (the scan there is a reference: they are not asked about). */
#define DS_SIZES_LAST 1u
#define DS_SIZES_KEEP 2u

/* Fields out of one frame. A read past its end, an overlong number or a
 * string with a NUL sets bad; later reads then give zeros. */
struct ds_rd {
	const uint8_t *p, *end;
	bool bad;
};
uint64_t ds_rd_u64(struct ds_rd *r);
/* A signed number (zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ...). */
int64_t ds_rd_s64(struct ds_rd *r);
/* A number that must be at most max (bad, and 0, otherwise). */
uint64_t ds_rd_max(struct ds_rd *r, uint64_t max);
/* A string: its bytes in place (not NUL-terminated), *len set. */
const char *ds_rd_str(struct ds_rd *r, size_t *len);
/* Bytes left in the frame. */
static inline bool ds_rd_more(const struct ds_rd *r)
{
	return !r->bad && r->p < r->end;
}

/* One frame being written; oom once an append failed. */
struct ds_wr {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};
void ds_wr_begin(struct ds_wr *w, int type);
void ds_wr_u64(struct ds_wr *w, uint64_t v);
void ds_wr_s64(struct ds_wr *w, int64_t v);
void ds_wr_str(struct ds_wr *w, const char *s, size_t len);
void ds_wr_bytes(struct ds_wr *w, const void *p, size_t len);
/* Room for len more bytes, counted as written: where to put them, or NULL (oom). */
uint8_t *ds_wr_take(struct ds_wr *w, size_t len);
/* Fields written so far (the frame's length counts them all). */
static inline size_t ds_wr_size(const struct ds_wr *w)
{
	return w->len;
}
void ds_wr_free(struct ds_wr *w);

/* A channel: two descriptors the caller owns, a peer named for messages. */
struct ds_chan {
	int rfd, wfd;
	int timeout_ms;          /* silence that fails it */
	const char *peer;        /* named in why */
	uint8_t *in;             /* the last frame read (type, then fields) */
	size_t incap;
	uint8_t *rbuf;           /* bytes read ahead of the frames */
	size_t rpos, rlen;
	uint8_t *out;            /* frames queued, sent before anything else is */
	size_t outlen, outcap;
	uint64_t bytes_in, bytes_out;
	bool dead;               /* failed once: every later call fails */
	char why[512];           /* what failed, for the caller's report */
};
void ds_chan_init(struct ds_chan *c, int rfd, int wfd, const char *peer, int timeout_ms);
void ds_chan_free(struct ds_chan *c);
/* Send the frame w holds (after those queued). @return 0, -ENOMEM or
 * DUPSCAN_E_REMOTE (why set). */
int ds_chan_send(struct ds_chan *c, struct ds_wr *w);
/* Queue the frame w holds: it goes out with the next send, when this side
 * next waits to read, or when DS_CHAN_QUEUE bytes are queued: answers and
 * requests that follow each other go in one write (through ssh, one packet
 * instead of one a frame). Not with a send from another thread meanwhile.
 * @return as ds_chan_send(). */
#define DS_CHAN_QUEUE (256u << 10)
int ds_chan_queue(struct ds_chan *c, struct ds_wr *w);
/* Send what is queued. @return as ds_chan_send(). */
int ds_chan_flush(struct ds_chan *c);
/* Receive a frame: its type in *type, its fields in *r (valid until the next
 * receive). A FAIL frame's message goes to why. @return 0, DUPSCAN_E_REMOTE
 * (closed, silent past the timeout, failed) or DUPSCAN_E_PROTOCOL
 * (oversized, empty, unknown type). */
int ds_chan_recv(struct ds_chan *c, int *type, struct ds_rd *r);
/* Say why the channel failed (printf-style), once: the first reason stands. */
void ds_chan_fail(struct ds_chan *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* (sizes.c) SIZES frames: v[0..n), ascending, each once, sent (keep:
 * DS_SIZES_KEEP); received into *v (malloc'ed), *n, *keep. @return 0 or
 * the channel's code (recv: also -ENOMEM, DUPSCAN_E_PROTOCOL for sizes out
 * of order or frames that disagree, DUPSCAN_E_REMOTE for a BYE first). */
int ds_wire_sizes_send(struct ds_chan *c, const uint64_t *v, size_t n, bool keep);
int ds_wire_sizes_recv(struct ds_chan *c, uint64_t **v, size_t *n, bool *keep);

/* HELLO: write ours (with what this side does: DS_WIRE_SIZES); check
 * theirs (protocol and magic), a mismatch told in why with both versions,
 * what it does into *features (0 when it says nothing). @return 0 or
 * DUPSCAN_E_PROTOCOL. */
void ds_wire_hello(struct ds_wr *w, uint64_t features);
int ds_wire_hello_check(struct ds_chan *c, struct ds_rd *r, uint64_t *features);

#endif /* DUPSCAN_WIRE_H */

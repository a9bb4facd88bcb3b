/* SPDX-License-Identifier: MIT */
/* wire.c: the remote-scan channel: frames, their fields, and reading and
 * writing them on a pair of descriptors with a limit on silence. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/remote.h"
#include "wire.h"

#define RBUF (64u * 1024u)

/* ---- fields ---- */

uint64_t ds_rd_u64(struct ds_rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; !r->bad; shift += 7) {
		if (r->p >= r->end || shift > 63) {
			r->bad = true;
			break;
		}
		uint8_t b = *r->p++;
		/* the tenth byte holds one bit: more would not fit 64 */
		if (shift == 63 && b > 1) {
			r->bad = true;
			break;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

int64_t ds_rd_s64(struct ds_rd *r)
{
	uint64_t v = ds_rd_u64(r);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

uint64_t ds_rd_max(struct ds_rd *r, uint64_t max)
{
	uint64_t v = ds_rd_u64(r);
	if (v > max)
		r->bad = true;
	return r->bad ? 0 : v;
}

const char *ds_rd_str(struct ds_rd *r, size_t *len)
{
	uint64_t n = ds_rd_u64(r);
	*len = 0;
	if (r->bad || n > (uint64_t)(r->end - r->p) || memchr(r->p, '\0', (size_t)n)) {
		r->bad = true;
		return "";
	}
	const char *s = (const char *)r->p;
	r->p += n;
	*len = (size_t)n;
	return s;
}

static void wr_room(struct ds_wr *w, size_t more)
{
	if (w->oom || w->len + more <= w->cap)
		return;
	size_t cap = w->cap ? w->cap : 256;
	while (cap < w->len + more)
		cap *= 2;
	uint8_t *b = realloc(w->buf, cap);
	if (!b) {
		w->oom = true;
		return;
	}
	w->buf = b;
	w->cap = cap;
}

void ds_wr_begin(struct ds_wr *w, int type)
{
	w->len = 0;
	w->oom = false;
	wr_room(w, 5);
	if (w->oom)
		return;
	w->len = 5; /* the length, written when sent */
	w->buf[4] = (uint8_t)type;
}

void ds_wr_u64(struct ds_wr *w, uint64_t v)
{
	wr_room(w, 10);
	if (w->oom)
		return;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		w->buf[w->len++] = b | (v ? 0x80 : 0);
	} while (v);
}

void ds_wr_s64(struct ds_wr *w, int64_t v)
{
	ds_wr_u64(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void ds_wr_bytes(struct ds_wr *w, const void *p, size_t len)
{
	wr_room(w, len);
	if (w->oom || len == 0)
		return;
	memcpy(w->buf + w->len, p, len);
	w->len += len;
}

uint8_t *ds_wr_take(struct ds_wr *w, size_t len)
{
	wr_room(w, len);
	if (w->oom)
		return NULL;
	w->len += len;
	return w->buf + w->len - len;
}

void ds_wr_str(struct ds_wr *w, const char *s, size_t len)
{
	ds_wr_u64(w, len);
	ds_wr_bytes(w, s, len);
}

void ds_wr_free(struct ds_wr *w)
{
	free(w->buf);
	*w = (struct ds_wr){ 0 };
}

/* ---- the channel ---- */

void ds_chan_init(struct ds_chan *c, int rfd, int wfd, const char *peer, int timeout_ms)
{
	*c = (struct ds_chan){ .rfd = rfd, .wfd = wfd, .peer = peer, .timeout_ms = timeout_ms };
}

void ds_chan_free(struct ds_chan *c)
{
	free(c->in);
	free(c->rbuf);
	free(c->out);
	c->in = c->rbuf = c->out = NULL;
	c->outlen = c->outcap = 0;
}

void ds_chan_fail(struct ds_chan *c, const char *fmt, ...)
{
	if (!c->dead) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
	c->dead = true;
}

/* Wait until fd is ready for events, at most the channel's silence.
 * @return 0, or DUPSCAN_E_REMOTE (why set). */
static int wait_fd(struct ds_chan *c, int fd, short events)
{
	struct pollfd p = { fd, events, 0 };
	for (;;) {
		int n = poll(&p, 1, c->timeout_ms);
		if (n > 0)
			return 0;
		if (n == 0) {
			ds_chan_fail(c, "no answer for %d s", c->timeout_ms / 1000);
			return DUPSCAN_E_REMOTE;
		}
		if (errno != EINTR) {
			ds_chan_fail(c, "%s", strerror(errno));
			return DUPSCAN_E_REMOTE;
		}
	}
}

/* Write all of buf[0..n) to the channel, never raising SIGPIPE (the
 * process' disposition is its caller's: blocked in this thread for the
 * frame, a pending one of ours taken back) and never blocking past the
 * silence: the descriptor is non-blocking while it is written, as it was
 * after. @return 0 or DUPSCAN_E_REMOTE (why set). */
static int write_frame(struct ds_chan *c, const uint8_t *buf, size_t n)
{
	sigset_t pipe, old, pending;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	sigpending(&pending);
	bool was = sigismember(&pending, SIGPIPE);
	int fl = fcntl(c->wfd, F_GETFL);
	bool set_nb = fl >= 0 && !(fl & O_NONBLOCK);
	if (set_nb)
		fcntl(c->wfd, F_SETFL, fl | O_NONBLOCK);
	int rc = 0;
	for (size_t off = 0; rc == 0 && off < n;) {
		ssize_t k = write(c->wfd, buf + off, n - off);
		if (k > 0) {
			off += (size_t)k;
			c->bytes_out += (uint64_t)k;
		} else if (k < 0 && errno == EAGAIN) {
			rc = wait_fd(c, c->wfd, POLLOUT);
		} else if (!(k < 0 && errno == EINTR)) {
			int err = k < 0 ? errno : EIO;
			if (err == EPIPE && !was) {
				struct timespec zero = { 0, 0 };
				sigtimedwait(&pipe, NULL, &zero);
			}
			ds_chan_fail(c, "connection lost (%s)", strerror(err));
			rc = DUPSCAN_E_REMOTE;
		}
	}
	if (set_nb)
		fcntl(c->wfd, F_SETFL, fl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* w's length in its first four bytes. @return 0, -ENOMEM or DUPSCAN_E_REMOTE. */
static int seal(struct ds_chan *c, struct ds_wr *w)
{
	if (w->oom)
		return -ENOMEM;
	if (c->dead)
		return DUPSCAN_E_REMOTE;
	uint32_t n = (uint32_t)(w->len - 4);
	for (int i = 0; i < 4; i++)
		w->buf[i] = (uint8_t)(n >> (8 * i));
	return 0;
}

int ds_chan_flush(struct ds_chan *c)
{
	if (c->outlen == 0)
		return c->dead ? DUPSCAN_E_REMOTE : 0;
	int rc = c->dead ? DUPSCAN_E_REMOTE : write_frame(c, c->out, c->outlen);
	c->outlen = 0;
	return rc;
}

int ds_chan_send(struct ds_chan *c, struct ds_wr *w)
{
	int rc = seal(c, w);
	if (rc == 0)
		rc = ds_chan_flush(c);
	return rc ? rc : write_frame(c, w->buf, w->len);
}

int ds_chan_queue(struct ds_chan *c, struct ds_wr *w)
{
	int rc = seal(c, w);
	if (rc)
		return rc;
	if (c->outlen + w->len > c->outcap) {
		size_t cap = c->outcap ? c->outcap : 4096;
		while (cap < c->outlen + w->len)
			cap *= 2;
		uint8_t *b = realloc(c->out, cap);
		if (!b)
			return -ENOMEM;
		c->out = b;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, w->buf, w->len);
	c->outlen += w->len;
	return c->outlen >= DS_CHAN_QUEUE ? ds_chan_flush(c) : 0;
}

/* Exactly n bytes into buf. @return 0, or DUPSCAN_E_REMOTE (why set; *got:
 * how many came before the end). */
static int read_exact(struct ds_chan *c, uint8_t *buf, size_t n, size_t *got)
{
	*got = 0;
	while (*got < n) {
		if (c->rlen == c->rpos) {
			/* about to wait for the other side: what it may wait for goes first */
			int rc = ds_chan_flush(c);
			if (rc == 0)
				rc = wait_fd(c, c->rfd, POLLIN);
			if (rc)
				return rc;
			ssize_t k = read(c->rfd, c->rbuf, RBUF);
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k <= 0) {
				ds_chan_fail(c, "%s", k == 0 ? "connection closed" : strerror(errno));
				return DUPSCAN_E_REMOTE;
			}
			c->rpos = 0;
			c->rlen = (size_t)k;
			c->bytes_in += (uint64_t)k;
		}
		size_t take = c->rlen - c->rpos < n - *got ? c->rlen - c->rpos : n - *got;
		memcpy(buf + *got, c->rbuf + c->rpos, take);
		c->rpos += take;
		*got += take;
	}
	return 0;
}

/* What a peer that is no dupscan server said instead (a shell's greeting, an
 * error of the remote shell), printable, for the message. */
static void quote_bytes(char *out, size_t cap, const uint8_t *b, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, b[i] >= 0x20 && b[i] < 0x7f ? "%c" : "\\x%02x", b[i]);
	out[o] = '\0';
}

int ds_chan_recv(struct ds_chan *c, int *type, struct ds_rd *r)
{
	*type = 0;
	*r = (struct ds_rd){ NULL, NULL, true };
	if (c->dead)
		return DUPSCAN_E_REMOTE;
	if (!c->rbuf && !(c->rbuf = malloc(RBUF)))
		return -ENOMEM;
	uint8_t h[4];
	size_t got;
	int rc = read_exact(c, h, 4, &got);
	if (rc)
		return rc;
	uint32_t n = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
	if (n == 0 || n > DS_WIRE_MAX) {
		char said[64];
		quote_bytes(said, sizeof(said), h, 4);
		ds_chan_fail(c, "malformed frame: length %u (starting \"%s\"; not a dupscan server, or a remote shell that prints?)",
			     n, said);
		return DUPSCAN_E_PROTOCOL;
	}
	if (n > c->incap) {
		uint8_t *b = realloc(c->in, n);
		if (!b)
			return -ENOMEM;
		c->in = b;
		c->incap = n;
	}
	if ((rc = read_exact(c, c->in, n, &got)) != 0) {
		/* the read's reason, told as the frame's */
		char then[sizeof(c->why)];
		snprintf(then, sizeof(then), "%s", c->why);
		c->dead = false;
		ds_chan_fail(c, "truncated frame (%zu of %u bytes; then %s)", got, n, then);
		return rc;
	}
	*type = c->in[0];
	*r = (struct ds_rd){ c->in + 1, c->in + n, false };
	if (*type < DS_W_HELLO || *type > DS_W_LAST) {
		ds_chan_fail(c, "malformed frame: unknown type %d", *type);
		return DUPSCAN_E_PROTOCOL;
	}
	if (*type == DS_W_FAIL) {
		size_t len;
		const char *msg = ds_rd_str(r, &len);
		char said[300];
		quote_bytes(said, sizeof(said), (const uint8_t *)msg, len > 200 ? 200 : len);
		ds_chan_fail(c, "the other side failed: %s", r->bad ? "(no reason given)" : said);
		return DUPSCAN_E_REMOTE;
	}
	return 0;
}

void ds_wire_hello(struct ds_wr *w, uint64_t features)
{
	ds_wr_begin(w, DS_W_HELLO);
	ds_wr_str(w, DS_WIRE_MAGIC, strlen(DS_WIRE_MAGIC));
	ds_wr_u64(w, DS_WIRE_PROTOCOL);
	ds_wr_str(w, DUPSCAN_VERSION_STRING, strlen(DUPSCAN_VERSION_STRING));
	ds_wr_u64(w, features);
}

int ds_wire_hello_check(struct ds_chan *c, struct ds_rd *r, uint64_t *features)
{
	size_t mlen, vlen;
	const char *magic = ds_rd_str(r, &mlen);
	uint64_t proto = ds_rd_u64(r);
	const char *ver = ds_rd_str(r, &vlen);
	if (r->bad || mlen != strlen(DS_WIRE_MAGIC) || memcmp(magic, DS_WIRE_MAGIC, mlen) != 0) {
		ds_chan_fail(c, "malformed greeting: not a dupscan peer");
		return DUPSCAN_E_PROTOCOL;
	}
	if (proto != DS_WIRE_PROTOCOL) {
		char v[80];
		quote_bytes(v, sizeof(v), (const uint8_t *)ver, vlen > 40 ? 40 : vlen);
		ds_chan_fail(c, "protocol version mismatch: the other side is dupscan %s (protocol %llu), "
			     "this side dupscan %s (protocol %d)",
			     v, (unsigned long long)proto, DUPSCAN_VERSION_STRING, DS_WIRE_PROTOCOL);
		return DUPSCAN_E_PROTOCOL;
	}
	/* (0.9 says nothing more, and read nothing more of ours) */
	*features = ds_rd_more(r) ? ds_rd_u64(r) : 0;
	if (r->bad) {
		ds_chan_fail(c, "malformed greeting");
		return DUPSCAN_E_PROTOCOL;
	}
	return 0;
}

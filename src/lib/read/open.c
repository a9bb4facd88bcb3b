/* SPDX-License-Identifier: MIT */
/* open.c: a scanned file opened safely (checked to be the file the walk
 * recorded) and read, its bytes counted for progress and, on a network
 * filesystem, in flight. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"

#define REPORT_BYTES (4u << 20) /* a report from the readers every 4 MiB */

int ds_check_unchanged(const struct ds_reading *s, int fd, const struct ds_rec *r)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	return ds_same_file(s->tree, &st, r, r->ctime_ns) ? 0 : DUPSCAN_E_CHANGED;
}

/* O_NONBLOCK: if a FIFO took the file's place since the walk, open must not hang */
#define SCANNED_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* fd (or -1, errno set), just opened as r: kept if it is still r's file.
 * @return fd, or a negative code (fd closed). */
static int opened_as(const struct ds_reading *s, int fd, const struct ds_rec *r)
{
	int rc = fd < 0 ? -errno : ds_check_unchanged(s, fd, r);
	if (rc < 0 && fd >= 0)
		close(fd);
	return rc < 0 ? rc : fd;
}

int ds_open_scanned(const struct ds_reading *s, uint32_t i)
{
	const struct ds_rec *r = ds_rec(s->tree, i);
	char stackbuf[4096], nbuf[DS_NAME_BUF];
	char *path = ds_path_in(s->tree, ds_rec_dir(s->tree, i), ds_rec_name(s->tree, r, nbuf), stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	int64_t t = ds_net_begin(s);
	int fd = opened_as(s, ds_open_path(path, SCANNED_FLAGS), r);
	ds_net_end(s, t, 0);
	if (path != stackbuf)
		free(path);
	return fd;
}

void ds_dirfd_close(struct ds_dirfd *dc)
{
	if (dc->fd >= 0)
		close(dc->fd);
	*dc = (struct ds_dirfd)DS_DIRFD_INIT;
}

/* Hold dir open in dc. @return 0 or -ENOMEM (dc->fd is -1 when dir did not
 * open: an argument's bare file name, a directory gone; its files go by
 * path, which names the error). */
static int hold_dir(const struct ds_reading *s, uint32_t dir, struct ds_dirfd *dc)
{
	if (dc->dir == dir)
		return 0;
	ds_dirfd_close(dc);
	char stackbuf[4096];
	char *path = ds_path_in(s->tree, dir, "", stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	dc->dir = dir;
	if (*path)
		dc->fd = ds_open_path(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (path != stackbuf)
		free(path);
	return 0;
}

int ds_open_scanned_in(const struct ds_reading *s, uint32_t i, struct ds_dirfd *dc)
{
	const struct ds_rec *r = ds_rec(s->tree, i);
	char nbuf[DS_NAME_BUF];
	const char *name = ds_rec_name(s->tree, r, nbuf);
	int rc = hold_dir(s, ds_rec_dir(s->tree, i), dc);
	if (rc)
		return rc;
	if (dc->fd < 0 || strchr(name, '/'))
		return ds_open_scanned(s, i);
	/* the directory may have moved since: what opens is checked all the same */
	int64_t t = ds_net_begin(s);
	int fd = opened_as(s, openat(dc->fd, name, SCANNED_FLAGS), r);
	ds_net_end(s, t, 0);
	return fd;
}


int ds_read(struct ds_reading *s, int fd, void *buf, size_t len, uint64_t off)
{
	int64_t t = ds_net_begin(s);
	int err = ds_pread_full(fd, buf, len, off);
	ds_net_end(s, t, len);
	if (err)
		return err;
	struct ds_progress *p = &s->core->progress;
	uint64_t was = atomic_fetch_add_explicit(&p->read, len, memory_order_relaxed);
	if (s->core->cb.on_bytes && was / REPORT_BYTES != (was + len) / REPORT_BYTES)
		ds_progress_report(s->core);
	return 0;
}

int ds_read_rec(struct ds_reading *s, uint32_t ri, int fd, void *buf, size_t len, uint64_t off)
{
	const struct ds_pay *p = ds_rec_payload(s->tree, ri);
	if (!p)
		return ds_read(s, fd, buf, len, off);
	/* payload bytes [off, off + len), range by range */
	unsigned char *b = buf;
	while (len > 0) {
		uint64_t room;
		uint64_t at = ds_payload_map(s->tree, p, off, &room);
		if (room == 0)
			return DUPSCAN_E_CHANGED; /* (past the payload: matching never asks) */
		size_t n = room < len ? (size_t)room : len;
		int err = ds_read(s, fd, b, n, at);
		if (err)
			return err;
		b += n;
		off += n;
		len -= n;
	}
	return 0;
}

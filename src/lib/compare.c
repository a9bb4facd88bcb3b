/* SPDX-License-Identifier: MIT */
/* compare.c: open scanned files safely, read them, and partition same-size files
 * into classes of identical content by reading them side by side. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int64_t st_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int ds_check_unchanged(int fd, const struct ds_rec *r)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_dev != r->dev || st.st_ino != r->ino ||
	    (uint64_t)st.st_size != r->size || st_mtime_ns(&st) != r->mtime_ns)
		return DUPSCAN_E_CHANGED;
	return 0;
}

int ds_open_rec(dupscan_scan *s, struct ds_rec *r)
{
	char stackbuf[4096];
	char *path = stackbuf;
	size_t len = ds_rec_path(s, r, stackbuf, sizeof(stackbuf));
	if (len >= sizeof(stackbuf)) {
		path = malloc(len + 1);
		if (!path)
			return -ENOMEM;
		ds_rec_path(s, r, path, len + 1);
	}
	/* O_NONBLOCK: if a FIFO took the file's place since the walk, open must not hang */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int rc = fd < 0 ? -errno : ds_check_unchanged(fd, r);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		fd = rc;
		r->flags |= DS_F_DROPPED;
		ds_report(s, path, rc);
	}
	if (path != stackbuf)
		free(path);
	return fd;
}

int ds_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t got = pread(fd, p, len, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return DUPSCAN_E_SHORT;
		p += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

static void kill_member(struct ds_member *mb)
{
	if (mb->fd >= 0)
		close(mb->fd);
	mb->fd = -1;
	mb->alive = false;
}

static void drop_member(dupscan_scan *s, struct ds_member *mb, int code)
{
	struct ds_rec *r = ds_rec(s, mb->rec);
	r->flags |= DS_F_DROPPED;
	ds_report_rec(s, r, code);
	kill_member(mb);
}

/* Members left alone in their class are unique: stop reading them. */
static size_t retire_singletons(struct ds_member *m, size_t n, uint32_t *count)
{
	size_t alive = 0;
	for (size_t i = 0; i < n; i++)
		count[i] = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].alive)
			count[m[i].cls]++;
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		if (count[m[i].cls] < 2)
			kill_member(&m[i]);
		else
			alive++;
	}
	return alive;
}

int ds_lockstep(dupscan_scan *s, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		struct ds_hashes *h, const unsigned char *first_blocks, size_t block_len)
{
	int rc = 0;
	size_t chunk = s->chunk;
	if (size - (start < size ? start : size) < chunk)
		chunk = (size_t)(size - (start < size ? start : size));
	if (chunk == 0)
		chunk = 1;
	uint32_t *count = malloc(n * sizeof(*count));
	uint32_t *first_rep = malloc(n * sizeof(*first_rep));
	uint32_t *rep_next = malloc(n * sizeof(*rep_next));
	unsigned char **bufs = calloc(n, sizeof(*bufs));
	unsigned char **pool = calloc(n + 1, sizeof(*pool));
	size_t npool = 0;
	if (!count || !first_rep || !rep_next || !bufs || !pool) {
		rc = -ENOMEM;
		goto out;
	}

	/* first partition: by the first blocks already in memory, if any */
	for (size_t i = 0; i < n; i++) {
		m[i].fd = -1;
		m[i].cls = 0;
		m[i].alive = !(ds_rec(s, m[i].rec)->flags & DS_F_DROPPED);
	}
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		m[i].cls = (uint32_t)i;
		for (size_t j = 0; j < i; j++) {
			if (!m[j].alive || m[j].cls != j)
				continue;
			if (!first_blocks ||
			    memcmp(first_blocks + (size_t)m[i].hidx * block_len,
				   first_blocks + (size_t)m[j].hidx * block_len, block_len) == 0) {
				m[i].cls = (uint32_t)j;
				break;
			}
		}
	}
	if (retire_singletons(m, n, count) == 0 || start >= size)
		goto out;

	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		int fd = ds_open_rec(s, ds_rec(s, m[i].rec));
		if (fd == -ENOMEM) {
			rc = fd;
			goto out;
		}
		if (fd < 0) {
			m[i].alive = false;
			continue;
		}
		m[i].fd = fd;
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	if (retire_singletons(m, n, count) == 0)
		goto out;

	for (uint64_t off = start; off < size;) {
		if (s->canceled) {
			/* half-compared files must not become a set */
			for (size_t i = 0; i < n; i++)
				kill_member(&m[i]);
			rc = DUPSCAN_E_CANCELED;
			goto out;
		}
		size_t len = size - off < chunk ? (size_t)(size - off) : chunk;
		for (size_t i = 0; i < n; i++)
			first_rep[i] = DS_NONE;
		for (size_t i = 0; i < n; i++) {
			if (!m[i].alive)
				continue;
			if (npool == 0) {
				pool[npool] = malloc(chunk);
				if (!pool[npool]) {
					rc = -ENOMEM;
					goto out;
				}
				npool++;
			}
			unsigned char *buf = pool[npool - 1];
			int err = ds_pread_full(m[i].fd, buf, len, off);
			if (err < 0) {
				drop_member(s, &m[i], err);
				continue;
			}
			if (h && off + len > DS_BLOCK) {
				size_t skip = off < DS_BLOCK ? (size_t)(DS_BLOCK - off) : 0;
				ds_hash_update(h, m[i].hidx, buf + skip, len - skip);
			}
			uint32_t old = m[i].cls, found = DS_NONE, *tail = &first_rep[old];
			for (uint32_t r = first_rep[old]; r != DS_NONE; r = rep_next[r]) {
				if (memcmp(bufs[r], buf, len) == 0) {
					found = r;
					break;
				}
				tail = &rep_next[r];
			}
			if (found == DS_NONE) {
				/* a new class starts here; keep its bytes to compare the rest */
				found = (uint32_t)i;
				bufs[i] = buf;
				npool--;
				rep_next[i] = DS_NONE;
				*tail = (uint32_t)i;
			}
			count[i] = found; /* new label, applied once every member has been read */
		}
		for (size_t i = 0; i < n; i++) {
			if (bufs[i]) {
				pool[npool++] = bufs[i];
				bufs[i] = NULL;
			}
		}
		for (size_t i = 0; i < n; i++)
			if (m[i].alive)
				m[i].cls = count[i];
		off += len;
		if (retire_singletons(m, n, count) == 0)
			goto out;
	}
	/* a file written while it was read must not be reported on what was read */
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		int err = ds_check_unchanged(m[i].fd, ds_rec(s, m[i].rec));
		if (err < 0)
			drop_member(s, &m[i], err);
	}
	retire_singletons(m, n, count);
out:
	for (size_t i = 0; i < n; i++) {
		if (m[i].fd >= 0)
			close(m[i].fd);
		m[i].fd = -1;
	}
	if (pool)
		for (size_t i = 0; i < npool; i++)
			free(pool[i]);
	if (bufs)
		for (size_t i = 0; i < n; i++)
			free(bufs[i]);
	free(pool);
	free(bufs);
	free(rep_next);
	free(first_rep);
	free(count);
	return rc;
}

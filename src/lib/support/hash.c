/* SPDX-License-Identifier: MIT */
/* hash.c: XXH64 streaming states, and a whole file's hash
 * (dupscan_hash_file()); the only file that sees xxhash.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY /* the state's size, to keep states in one array */
#include <xxhash.h>

#include "internal.h"
#include "support/support.h"

struct ds_hashes {
	size_t n;
	XXH64_state_t st[];
};

struct ds_hashes *ds_hashes_new(size_t n)
{
	struct ds_hashes *h = malloc(sizeof(*h) + n * sizeof(XXH64_state_t));
	if (!h)
		return NULL;
	h->n = n;
	for (size_t i = 0; i < n; i++)
		XXH64_reset(&h->st[i], 0);
	return h;
}

void ds_hashes_free(struct ds_hashes *h)
{
	free(h);
}

/* A file's full hash is not XXH64 of all of it but XXH64 of what follows
 * its first block, seeded with the first block's hash: the same files meet
 * in a bucket, and a file read up to its first block is described by that
 * one hash (8 bytes) where a continued state would take 88 for every file
 * of every bucket from the first read to the last. */
void ds_hash_seed(struct ds_hashes *h, size_t i, uint64_t partial)
{
	XXH64_reset(&h->st[i], partial);
}

void ds_hash_copy(struct ds_hashes *h, size_t to, size_t from)
{
	XXH64_copyState(&h->st[to], &h->st[from]);
}

void ds_hash_update(struct ds_hashes *h, size_t i, const void *buf, size_t len)
{
	XXH64_update(&h->st[i], buf, len);
}

/* XXH64_digest leaves the state usable, which is what lets the full hash
 * continue where the partial hash stopped. */
uint64_t ds_hash_digest(const struct ds_hashes *h, size_t i)
{
	return XXH64_digest(&h->st[i]);
}

uint64_t ds_hash_oneshot(const void *buf, size_t len)
{
	return XXH64(buf, len, 0);
}

uint64_t ds_hash_full_of(const void *buf, size_t len)
{
	uint64_t partial = XXH64(buf, len < DS_BLOCK ? len : DS_BLOCK, 0);
	return len > DS_BLOCK ? XXH64((const unsigned char *)buf + DS_BLOCK, len - DS_BLOCK, partial) : partial;
}

DUPSCAN_API int dupscan_hash_file(const char *path, uint64_t *size, uint64_t *hash)
{
	if (!path || !hash)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	struct ds_hashes *h = ds_hashes_new(1);
	unsigned char *buf = malloc(DS_COPY_BUF);
	int rc = !h || !buf ? -ENOMEM : fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : DUPSCAN_E_NOTREG;
	uint64_t total = 0;
	while (rc == 0) {
		ssize_t n = ds_pread_some(fd, buf, DS_COPY_BUF, total);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		ds_hash_update(h, 0, buf, (size_t)n);
		total += (uint64_t)n;
	}
	if (rc == 0) {
		*hash = ds_hash_digest(h, 0);
		if (size)
			*size = total;
	}
	free(buf);
	ds_hashes_free(h);
	close(fd);
	return rc;
}

DUPSCAN_API unsigned dupscan_xxhash_version(void)
{
	return XXH_versionNumber();
}

int ds_hash_fd(int fd, uint64_t size, bool whole, uint64_t *partial, uint64_t *full, unsigned char *buf, size_t cap,
	       void (*tick)(void *), void *user)
{
	size_t first = size < DS_BLOCK ? (size_t)size : DS_BLOCK;
	int rc = ds_pread_full(fd, buf, first, 0);
	if (rc)
		return rc;
	*partial = *full = XXH64(buf, first, 0);
	if (!whole || size <= DS_BLOCK)
		return 0;
	XXH64_state_t *st = XXH64_createState();
	if (!st)
		return -ENOMEM;
	XXH64_reset(st, *partial);
	for (uint64_t off = DS_BLOCK; rc == 0 && off < size;) {
		size_t n = size - off < cap ? (size_t)(size - off) : cap;
		rc = ds_pread_full(fd, buf, n, off);
		if (rc == 0)
			XXH64_update(st, buf, n);
		off += n;
		if (tick)
			tick(user);
	}
	*full = XXH64_digest(st);
	XXH64_freeState(st);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* hash.c: XXH64 streaming states; the only file that sees xxhash.h. */
#include <stdlib.h>

#define XXH_STATIC_LINKING_ONLY /* the state's size, to keep states in one array */
#include <xxhash.h>

#include "internal.h"

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

void ds_hash_copy(struct ds_hashes *dst, size_t di, const struct ds_hashes *src, size_t si)
{
	XXH64_copyState(&dst->st[di], &src->st[si]);
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

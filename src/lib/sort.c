/* SPDX-License-Identifier: MIT */
/* sort.c: the sorts: a stable merge sort with a context, keys held inline
 * sorted with qsort, and (key, position) pairs in place, which sort records
 * by a key beside them and files by a hash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx)
{
	if (n < 2)
		return 0;
	unsigned char *tmp = malloc(n * size);
	if (!tmp)
		return -ENOMEM;
	unsigned char *src = base, *dst = tmp;
	/* bottom-up merge sort: stable, no recursion */
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				if (cmp(ctx, src + j * size, src + i * size) < 0)
					memcpy(dst + size * k++, src + size * j++, size);
				else
					memcpy(dst + size * k++, src + size * i++, size);
			}
			memcpy(dst + size * k, src + size * i, (mid - i) * size);
			k += mid - i;
			memcpy(dst + size * k, src + size * j, (hi - j) * size);
		}
		unsigned char *t = src;
		src = dst;
		dst = t;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(tmp);
	return 0;
}

struct lean {
	const unsigned char *base;
	size_t size;
	int (*cmp)(void *ctx, const void *a, const void *b);
	void *ctx;
};

static int cmp_lean(void *ctx, const void *pa, const void *pb)
{
	const struct lean *l = ctx;
	return l->cmp(l->ctx, l->base + *(const uint32_t *)pa * l->size, l->base + *(const uint32_t *)pb * l->size);
}

int ds_sort_lean(void *base, size_t n, size_t size,
		 int (*cmp)(void *ctx, const void *a, const void *b), void *ctx)
{
	if (n < 2)
		return 0;
	if (n > UINT32_MAX)
		return ds_sort(base, n, size, cmp, ctx);
	uint32_t *from = malloc(n * sizeof(*from));
	unsigned char *hold = malloc(size);
	struct lean l = { base, size, cmp, ctx };
	int rc = from && hold ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		from[i] = (uint32_t)i;
	if (rc == 0)
		rc = ds_sort(from, n, sizeof(*from), cmp_lean, &l);
	/* place i takes element from[i]: each cycle of the permutation moved
	 * through one held element, a place marked done once filled */
	unsigned char *b = base;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (from[i] == i)
			continue;
		memcpy(hold, b + i * size, size);
		size_t j = i;
		while (from[j] != i) {
			size_t k = from[j];
			memcpy(b + j * size, b + k * size, size);
			from[j] = (uint32_t)j;
			j = k;
		}
		memcpy(b + j * size, hold, size);
		from[j] = (uint32_t)j;
	}
	free(hold);
	free(from);
	return rc;
}

static int cmp_sortkey(const void *pa, const void *pb)
{
	const struct ds_sortkey *a = pa, *b = pb;
	for (int i = 0; i < 4; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

void ds_sort_keys(struct ds_sortkey *a, size_t n)
{
	if (n > 1)
		qsort(a, n, sizeof(*a), cmp_sortkey);
}

static bool key_less(const struct ds_keypos *a, const struct ds_keypos *b)
{
	return a->key != b->key ? a->key < b->key : a->pos < b->pos;
}

static void key_swap(struct ds_keypos *a, struct ds_keypos *b)
{
	struct ds_keypos t = *a;
	*a = *b;
	*b = t;
}

static void insertion_sort(struct ds_keypos *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ds_keypos x = a[i];
		size_t j = i;
		for (; j > 0 && key_less(&x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

static void sift_down(struct ds_keypos *a, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && key_less(&a[c], &a[c + 1]))
			c++;
		if (!key_less(&a[i], &a[c]))
			return;
		key_swap(&a[i], &a[c]);
	}
}

static void heap_sort(struct ds_keypos *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t e = n; e-- > 1;) {
		key_swap(&a[0], &a[e]);
		sift_down(a, 0, e);
	}
}

/* Quicksort in place, the larger side looped over (stack depth log n), heap
 * sort past a depth that only a hostile order reaches. */
static void intro_sort(struct ds_keypos *a, size_t n, unsigned depth)
{
	while (n > 16) {
		if (depth-- == 0) {
			heap_sort(a, n);
			return;
		}
		size_t mid = n / 2;
		if (key_less(&a[mid], &a[0]))
			key_swap(&a[mid], &a[0]);
		if (key_less(&a[n - 1], &a[0]))
			key_swap(&a[n - 1], &a[0]);
		if (key_less(&a[n - 1], &a[mid]))
			key_swap(&a[n - 1], &a[mid]);
		key_swap(&a[mid], &a[n - 2]); /* the median of three as pivot */
		struct ds_keypos p = a[n - 2];
		size_t i = 0, j = n - 2;
		for (;;) {
			while (key_less(&a[++i], &p))
				;
			while (key_less(&p, &a[--j]))
				;
			if (i >= j)
				break;
			key_swap(&a[i], &a[j]);
		}
		key_swap(&a[i], &a[n - 2]);
		if (i < n - 1 - i) {
			intro_sort(a, i, depth);
			a += i + 1;
			n -= i + 1;
		} else {
			intro_sort(a + i + 1, n - i - 1, depth);
			n = i;
		}
	}
	insertion_sort(a, n);
}

void ds_sort_by_key(struct ds_keypos *a, size_t n)
{
	unsigned depth = 2;
	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	intro_sort(a, n, depth);
}

int ds_sort_recs(const dupscan_scan *s, uint32_t *order, size_t n,
		 uint64_t (*key)(const dupscan_scan *s, const struct ds_rec *r, uint32_t *minor))
{
	struct ds_keypos *a = ds_big_alloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t minor = 0;
		a[i].key = key(s, ds_rec(s, order[i]), &minor);
		a[i].pos = (uint64_t)minor << 32 | order[i]; /* all distinct */
	}
	ds_sort_by_key(a, n);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)a[i].pos;
	ds_big_free(a, (n ? n : 1) * sizeof(*a));
	return 0;
}

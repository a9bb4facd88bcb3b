/* SPDX-License-Identifier: MIT */
/* sort.c: the sorts: a stable merge sort with a context (half the array
 * beside it), keys held inline sorted with qsort, (key, position) pairs in
 * place, which sort files by a hash, and records by a key: in runs of a
 * bounded length, merged, so that sorting every record of a scan never
 * needs 16 bytes for each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"

/* Insertion sort of a[0..n) (small runs), hold: room for one element. */
static void insertion(unsigned char *a, size_t n, size_t size, int (*cmp)(void *, const void *, const void *),
		      void *ctx, unsigned char *hold)
{
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		if (cmp(ctx, a + (j - 1) * size, a + i * size) <= 0)
			continue;
		memcpy(hold, a + i * size, size);
		while (j > 0 && cmp(ctx, a + (j - 1) * size, hold) > 0) {
			memcpy(a + j * size, a + (j - 1) * size, size);
			j--;
		}
		memcpy(a + j * size, hold, size);
	}
}

/* Top-down merge sort of a[0..n) with tmp holding n / 2 elements: the left
 * half is copied out and merged back with the right, which never overtakes
 * what is still to be read. Ties go to the left: stable. */
static void merge_sort(unsigned char *a, size_t n, size_t size, int (*cmp)(void *, const void *, const void *),
		       void *ctx, unsigned char *tmp)
{
	if (n <= 16) {
		insertion(a, n, size, cmp, ctx, tmp);
		return;
	}
	size_t nl = n / 2;
	merge_sort(a, nl, size, cmp, ctx, tmp);
	merge_sort(a + nl * size, n - nl, size, cmp, ctx, tmp);
	if (cmp(ctx, a + (nl - 1) * size, a + nl * size) <= 0)
		return; /* in order already */
	memcpy(tmp, a, nl * size);
	size_t i = 0, j = nl, k = 0;
	while (i < nl && j < n) {
		if (cmp(ctx, a + j * size, tmp + i * size) < 0)
			memcpy(a + size * k++, a + size * j++, size);
		else
			memcpy(a + size * k++, tmp + size * i++, size);
	}
	memcpy(a + k * size, tmp + i * size, (nl - i) * size);
}

int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx)
{
	if (n < 2)
		return 0;
	/* half the array beside it, not all of it: the sorts of sets and
	 * members come at a run's largest moments */
	unsigned char *tmp = malloc((n / 2 > 1 ? n / 2 : 1) * size);
	if (!tmp)
		return -ENOMEM;
	merge_sort(base, n, size, cmp, ctx, tmp);
	free(tmp);
	return 0;
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
		for (; j > 0 && ds_keypos_less(&x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

static void sift_down(struct ds_keypos *a, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && ds_keypos_less(&a[c], &a[c + 1]))
			c++;
		if (!ds_keypos_less(&a[i], &a[c]))
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
		if (ds_keypos_less(&a[mid], &a[0]))
			key_swap(&a[mid], &a[0]);
		if (ds_keypos_less(&a[n - 1], &a[0]))
			key_swap(&a[n - 1], &a[0]);
		if (ds_keypos_less(&a[n - 1], &a[mid]))
			key_swap(&a[n - 1], &a[mid]);
		key_swap(&a[mid], &a[n - 2]); /* the median of three as pivot */
		struct ds_keypos p = a[n - 2];
		size_t i = 0, j = n - 2;
		for (;;) {
			while (ds_keypos_less(&a[++i], &p))
				;
			while (ds_keypos_less(&p, &a[--j]))
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

int ds_cmp_u64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

int ds_sort_u64_set(uint64_t *v, size_t *n)
{
	int rc = ds_sort(v, *n, sizeof(*v), ds_cmp_u64, NULL);
	size_t m = 0;
	for (size_t i = 0; rc == 0 && i < *n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	if (rc == 0)
		*n = m;
	return rc;
}

bool ds_sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}

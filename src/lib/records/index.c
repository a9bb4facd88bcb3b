/* SPDX-License-Identifier: MIT */
/* index.c: the file index, a binary tree keyed on (partial hash, full hash, size).
 * The hashes come first in the key: they are uniformly spread, so the tree stays
 * shallow even though files arrive grouped and sorted by size. It is the one
 * record of which files were proven identical: a node may hold several classes
 * (equal hashes, different bytes), so each member carries its class too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

void ds_index_init(struct ds_index *ix)
{
	memset(ix, 0, sizeof(*ix));
	ix->root = DS_NONE;
}

int ds_index_reserve(struct ds_index *ix, uint32_t nrecs)
{
	size_t words = ((size_t)nrecs + 63) / 64, had = ((size_t)ix->nrecs + 63) / 64;
	if (words > had) {
		uint64_t *has = realloc(ix->has, words * sizeof(*has));
		if (!has)
			return -ENOMEM;
		memset(has + had, 0, (words - had) * sizeof(*has));
		ix->has = has;
	}
	if (nrecs > ix->nrecs)
		ix->nrecs = nrecs;
	return 0;
}

void ds_index_free(struct ds_index *ix)
{
	free(ix->nodes);
	free(ix->mem);
	free(ix->has);
	free(ix->byrec);
	ds_index_init(ix);
}

bool ds_index_has(const struct ds_index *ix, uint32_t ri)
{
	return ri < ix->nrecs && (ix->has[ri / 64] >> (ri % 64) & 1);
}

static int key_cmp(uint64_t p1, uint64_t f1, uint64_t s1, const struct ds_node *n)
{
	if (p1 != n->partial)
		return p1 < n->partial ? -1 : 1;
	if (f1 != n->full)
		return f1 < n->full ? -1 : 1;
	if (s1 != n->size)
		return s1 < n->size ? -1 : 1;
	return 0;
}

uint32_t ds_index_find(const struct ds_index *ix, uint64_t partial, uint64_t full, uint64_t size)
{
	uint32_t cur = ix->root;
	while (cur != DS_NONE) {
		int c = key_cmp(partial, full, size, &ix->nodes[cur]);
		if (c == 0)
			return cur;
		cur = c < 0 ? ix->nodes[cur].left : ix->nodes[cur].right;
	}
	return DS_NONE;
}

static int cmp_member_rec(void *ctx, const void *pa, const void *pb)
{
	const struct ds_index *ix = ctx;
	uint32_t a = ix->mem[*(const uint32_t *)pa].rec, b = ix->mem[*(const uint32_t *)pb].rec;
	return a < b ? -1 : a > b;
}

int ds_index_seal(struct ds_index *ix)
{
	free(ix->byrec);
	ix->byrec = malloc((ix->nmem ? ix->nmem : 1) * sizeof(*ix->byrec));
	if (!ix->byrec)
		return -ENOMEM;
	for (uint32_t m = 0; m < ix->nmem; m++)
		ix->byrec[m] = m;
	int rc = ds_sort(ix->byrec, ix->nmem, sizeof(*ix->byrec), cmp_member_rec, ix);
	if (rc) {
		free(ix->byrec);
		ix->byrec = NULL;
	}
	return rc;
}

uint32_t ds_index_class(const struct ds_index *ix, uint32_t ri)
{
	if (!ds_index_has(ix, ri))
		return DS_NONE;
	if (!ix->byrec) {
		for (uint32_t m = ix->nmem; m-- > 0;)
			if (ix->mem[m].rec == ri)
				return ix->mem[m].cls;
		return DS_NONE;
	}
	uint32_t lo = 0, hi = ix->nmem;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ix->mem[ix->byrec[mid]].rec < ri)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->nmem && ix->mem[ix->byrec[lo]].rec == ri ? ix->mem[ix->byrec[lo]].cls : DS_NONE;
}

/* A new node for the key where link points (nodes may move). @return its number or DS_NONE. */
static uint32_t new_node(struct ds_index *ix, uint32_t *link, uint64_t partial, uint64_t full, uint64_t size)
{
	if (ix->count == ix->cap) {
		uint32_t cap = ix->cap ? ix->cap * 2 : 256;
		/* link points into the array that realloc may move */
		size_t link_off = link == &ix->root ? SIZE_MAX : (size_t)((char *)link - (char *)ix->nodes);
		struct ds_node *nodes = realloc(ix->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return DS_NONE;
		ix->nodes = nodes;
		ix->cap = cap;
		if (link_off != SIZE_MAX)
			link = (uint32_t *)((char *)ix->nodes + link_off);
	}
	uint32_t ni = ix->count++;
	ix->nodes[ni] = (struct ds_node){ partial, full, size, DS_NONE, DS_NONE, DS_NONE, DS_NONE };
	*link = ni;
	return ni;
}

int ds_index_insert(struct ds_index *ix, uint32_t ri, uint32_t cls, uint64_t partial, uint64_t full, uint64_t size)
{
	if (ri >= ix->nrecs || cls >= ix->nrecs || ds_index_has(ix, ri) || ix->nmem == DS_NONE - 1)
		return -EINVAL;
	if (DS_GROW(ix->mem, ix->capmem, (size_t)ix->nmem + 1))
		return -ENOMEM;
	uint32_t *link = &ix->root, ni = DS_NONE;
	while (*link != DS_NONE) {
		struct ds_node *n = &ix->nodes[*link];
		int c = key_cmp(partial, full, size, n);
		if (c == 0) {
			ni = *link;
			break;
		}
		link = c < 0 ? &n->left : &n->right;
	}
	if (ni == DS_NONE && (ni = new_node(ix, link, partial, full, size)) == DS_NONE)
		return -ENOMEM;
	uint32_t m = ix->nmem++;
	ix->mem[m] = (struct ds_ixmember){ ri, cls, DS_NONE };
	struct ds_node *n = &ix->nodes[ni];
	if (n->tail == DS_NONE)
		n->head = m;
	else
		ix->mem[n->tail].next = m;
	n->tail = m;
	ix->has[ri / 64] |= (uint64_t)1 << (ri % 64);
	/* a lookup by record must see it */
	free(ix->byrec);
	ix->byrec = NULL;
	return 0;
}

void ds_index_renumber(struct ds_index *ix, const uint32_t *map, uint32_t nrecs)
{
	if (ix->has) /* (none before the first reserve: a band of no candidate) */
		memset(ix->has, 0, ((size_t)ix->nrecs + 63) / 64 * sizeof(*ix->has));
	for (uint32_t m = 0; m < ix->nmem; m++) {
		ix->mem[m].rec = map[ix->mem[m].rec];
		ix->mem[m].cls = map[ix->mem[m].cls];
		ix->has[ix->mem[m].rec / 64] |= (uint64_t)1 << (ix->mem[m].rec % 64);
	}
	/* (has stays as long: ds_index_reserve() grows it from what nrecs says) */
	ix->nrecs = nrecs;
	free(ix->byrec);
	ix->byrec = NULL;
}

int ds_index_walk(const struct ds_index *ix, int (*fn)(void *, const struct ds_node *), void *user)
{
	/* explicit stack: a degenerate tree must not cost call-stack depth */
	uint32_t small[64];
	uint32_t *stack = small;
	size_t cap = 64, top = 0;
	uint32_t cur = ix->root;
	int rc = 0;
	while (cur != DS_NONE || top > 0) {
		while (cur != DS_NONE) {
			if (top == cap) {
				uint32_t *bigger = malloc(cap * 2 * sizeof(*bigger));
				if (!bigger) {
					rc = -ENOMEM;
					goto out;
				}
				for (size_t i = 0; i < top; i++)
					bigger[i] = stack[i];
				if (stack != small)
					free(stack);
				stack = bigger;
				cap *= 2;
			}
			stack[top++] = cur;
			cur = ix->nodes[cur].left;
		}
		cur = stack[--top];
		rc = fn(user, &ix->nodes[cur]);
		if (rc)
			goto out;
		cur = ix->nodes[cur].right;
	}
out:
	if (stack != small)
		free(stack);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* index.c: the file index, a binary tree keyed on (partial hash, full hash, size).
 * The hashes come first in the key: they are uniformly spread, so the tree stays
 * shallow even though files arrive grouped and sorted by size. It is the one
 * record of which files were proven identical: a node may hold several classes
 * (equal hashes, different bytes), so each record carries its class too. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

void ds_index_init(struct ds_index *ix)
{
	ix->nodes = NULL;
	ix->count = ix->cap = 0;
	ix->root = DS_NONE;
	ix->next = NULL;
	ix->cls = NULL;
	ix->nrecs = 0;
}

int ds_index_reserve(struct ds_index *ix, uint32_t nrecs)
{
	uint32_t *next = realloc(ix->next, (nrecs ? nrecs : 1) * sizeof(*next));
	if (!next)
		return -ENOMEM;
	ix->next = next;
	uint32_t *cls = realloc(ix->cls, (nrecs ? nrecs : 1) * sizeof(*cls));
	if (!cls)
		return -ENOMEM;
	ix->cls = cls;
	for (uint32_t i = ix->nrecs; i < nrecs; i++)
		cls[i] = DS_NONE;
	ix->nrecs = nrecs;
	return 0;
}

void ds_index_free(struct ds_index *ix)
{
	free(ix->nodes);
	free(ix->next);
	free(ix->cls);
	ds_index_init(ix);
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

uint32_t ds_index_class(const struct ds_index *ix, uint32_t ri)
{
	return ri < ix->nrecs ? ix->cls[ri] : DS_NONE;
}

int ds_index_insert(struct ds_index *ix, uint32_t ri, uint32_t cls, uint64_t partial, uint64_t full, uint64_t size)
{
	if (ri >= ix->nrecs || cls >= ix->nrecs || ix->cls[ri] != DS_NONE)
		return -EINVAL;
	uint32_t *link = &ix->root;
	while (*link != DS_NONE) {
		struct ds_node *n = &ix->nodes[*link];
		int c = key_cmp(partial, full, size, n);
		if (c == 0) {
			ix->cls[ri] = cls;
			ix->next[ri] = DS_NONE;
			ix->next[n->tail] = ri;
			n->tail = ri;
			return 0;
		}
		link = c < 0 ? &n->left : &n->right;
	}
	if (ix->count == ix->cap) {
		uint32_t cap = ix->cap ? ix->cap * 2 : 256;
		/* link points into the array that realloc may move */
		size_t link_off = link == &ix->root ? SIZE_MAX : (size_t)((char *)link - (char *)ix->nodes);
		struct ds_node *nodes = realloc(ix->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		ix->nodes = nodes;
		ix->cap = cap;
		if (link_off != SIZE_MAX)
			link = (uint32_t *)((char *)ix->nodes + link_off);
	}
	uint32_t ni = ix->count++;
	struct ds_node *n = &ix->nodes[ni];
	n->partial = partial;
	n->full = full;
	n->size = size;
	n->left = n->right = DS_NONE;
	n->head = n->tail = ri;
	ix->next[ri] = DS_NONE;
	ix->cls[ri] = cls;
	*link = ni;
	return 0;
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

/* SPDX-License-Identifier: MIT */
/* arena.c: a bump allocator for names, so a path costs no malloc of its own;
 * and large buffers that go back to the system when freed. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "internal.h"

#define ARENA_CHUNK (256u * 1024u)

struct ds_arena_chunk {
	struct ds_arena_chunk *prev;
	max_align_t align_;
	unsigned char data[];
};

int ds_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	if (ncap < need)
		ncap = need;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

void ds_arena_init(struct ds_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void ds_arena_free(struct ds_arena *a)
{
	struct ds_arena_chunk *c = a->head;
	while (c) {
		struct ds_arena_chunk *prev = c->prev;
		free(c);
		c = prev;
	}
	ds_arena_init(a);
}

void *ds_arena_alloc(struct ds_arena *a, size_t len)
{
	/* keep 8-byte alignment for anything that is not a string */
	size_t need = (len + 7u) & ~(size_t)7u;
	if (!a->head || a->cap - a->used < need) {
		size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		struct ds_arena_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->prev = a->head;
		a->head = c;
		a->used = 0;
		a->cap = cap;
	}
	void *p = a->head->data + a->used;
	a->used += need;
	a->total += need;
	return p;
}

char *ds_arena_strdup(struct ds_arena *a, const char *s, size_t len)
{
	char *p = ds_arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

#define BIG (128u * 1024u)

void *ds_big_alloc(size_t len)
{
	if (len < BIG)
		return malloc(len ? len : 1);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void ds_big_free(void *p, size_t len)
{
	if (!p)
		return;
	if (len < BIG)
		free(p);
	else
		munmap(p, len);
}

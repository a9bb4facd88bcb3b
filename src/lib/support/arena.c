/* SPDX-License-Identifier: MIT */
/* arena.c: a bump allocator for names, so a path costs no malloc of its own;
 * and large buffers that go back to the system when freed. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"

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

/* len bytes at the arena's end, aligned to align (1 or 8). */
static void *arena_take(struct ds_arena *a, size_t len, size_t align)
{
	size_t at = a->head ? (a->used + align - 1) & ~(align - 1) : 0;
	if (!a->head || at > a->cap || a->cap - at < len) {
		size_t cap = len > ARENA_CHUNK ? len : ARENA_CHUNK;
		struct ds_arena_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->prev = a->head;
		a->head = c;
		a->cap = cap;
		at = 0;
	}
	void *p = a->head->data + at;
	a->total += len;
	a->used = at + len;
	return p;
}

void *ds_arena_alloc(struct ds_arena *a, size_t len)
{
	/* 8-byte alignment for anything that is not a string */
	return arena_take(a, len ? len : 1, 8);
}

char *ds_arena_strdup(struct ds_arena *a, const char *s, size_t len)
{
	/* names are most of a large scan's memory: packed, no alignment */
	char *p = arena_take(a, len + 1, 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static void *big_map(size_t len, int flags)
{
	if (len < DS_BIG_MAP)
		return malloc(len ? len : 1);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *ds_big_alloc(size_t len) { return big_map(len, 0); }
void *ds_big_alloc_filled(size_t len) { return big_map(len, MAP_POPULATE); }

void ds_big_free(void *p, size_t len)
{
	if (!p)
		return;
	if (len < DS_BIG_MAP)
		free(p);
	else
		munmap(p, len);
}

void ds_big_release(void *p, size_t len, size_t from, size_t to)
{
	if (!p || len < DS_BIG_MAP || to > len)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t a = (from + page - 1) / page * page, b = to / page * page;
	if (a < b)
		madvise((char *)p + a, b - a, MADV_DONTNEED);
}

void *ds_big_shrink(void *p, size_t *len, size_t keep)
{
	if (*len < DS_BIG_MAP) {
		void *q = realloc(p, keep ? keep : 1);
		if (q)
			*len = keep;
		return q ? q : p;
	}
	if (keep < DS_BIG_MAP)
		return p; /* a mapping stays one: ds_big_free() tells them by length */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t from = (keep + page - 1) / page * page;
	if (from < *len) {
		munmap((char *)p + from, *len - from);
		*len = from;
	}
	return p;
}

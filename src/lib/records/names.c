/* SPDX-License-Identifier: MIT */
/* names.c: the records' file names, packed in 256 KiB chunks and named by a
 * 32-bit handle (the chunk in its high bits, the offset in the low). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "records/names.h"

int ds_names_add(struct ds_names *t, const char *name, size_t len, uint32_t *out)
{
	const size_t chunk = (size_t)1 << DS_NAME_SHIFT;
	if (len >= chunk)
		return -ENAMETOOLONG;
	if (t->n == 0 || t->used + len + 1 > chunk) {
		/* the last chunk's index must leave DS_NAME_EMPTY unused */
		if (t->n + 1 >= (1u << (32 - DS_NAME_SHIFT)))
			return -EOVERFLOW;
		if (DS_GROW(t->chunk, t->cap, t->n + 1))
			return -ENOMEM;
		if (!(t->chunk[t->n] = ds_big_alloc(chunk)))
			return -ENOMEM;
		t->n++;
		t->used = 0;
	}
	char *p = t->chunk[t->n - 1] + t->used;
	memcpy(p, name, len);
	p[len] = '\0';
	*out = (t->n - 1) << DS_NAME_SHIFT | t->used;
	t->used += (uint32_t)len + 1;
	return 0;
}

void ds_names_free(struct ds_names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		ds_big_free(t->chunk[i], (size_t)1 << DS_NAME_SHIFT);
	free(t->chunk);
	memset(t, 0, sizeof(*t));
}

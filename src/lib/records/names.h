/* SPDX-License-Identifier: MIT */
/* records/names.h: the records' file names (names.c); never installed. */
#ifndef DUPSCAN_RECORDS_NAMES_H
#define DUPSCAN_RECORDS_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* File names by a 32-bit handle: 256 KiB chunks, the chunk in the high 14
 * bits, the offset in the low 18 (a little under 4 GiB of names). */
#define DS_NAME_SHIFT 18
#define DS_NAME_EMPTY UINT32_MAX /* "" (a directory's own entry in a set) */
struct ds_names {
	char **chunk;
	size_t cap;
	uint32_t n;
	uint32_t used;               /* bytes taken in the last chunk */
};
/* Keep name[0..len) with its NUL. @return 0, -ENOMEM or -EOVERFLOW (full). */
int ds_names_add(struct ds_names *t, const char *name, size_t len, uint32_t *out);
void ds_names_free(struct ds_names *t);
static inline const char *ds_names_get(const struct ds_names *t, uint32_t h)
{
	return h == DS_NAME_EMPTY ? "" : t->chunk[h >> DS_NAME_SHIFT] + (h & ((1u << DS_NAME_SHIFT) - 1));
}

#endif /* DUPSCAN_RECORDS_NAMES_H */

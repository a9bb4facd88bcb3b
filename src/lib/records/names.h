/* SPDX-License-Identifier: MIT */
/* records/names.h: the records' file names (names.c); never installed. */
#ifndef DUPSCAN_RECORDS_NAMES_H
#define DUPSCAN_RECORDS_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* File names by a 32-bit handle: 256 KiB chunks, the chunk in the high 14
 * bits, the offset in the low 18 (a little under 4 GiB of names). A name is
 * kept whole, or as what differs from one of the names added just before it
 * in its chunk (its base: most often a name of the same directory, which
 * shares a beginning and an end with it: IMG_1234.JPG, IMG_1290.JPG): the
 * base's first p bytes, the middle kept, the base's last s bytes. A name
 * is rebuilt from at most DS_NAMES_DEPTH bases, each near it. */
#define DS_NAME_SHIFT 18
#define DS_NAME_EMPTY UINT32_MAX /* "" (a directory's own entry in a set) */
#define DS_NAME_BUF 256          /* room to rebuild a name: only names this short are kept as
                                  * differences, and are bases */
#define DS_NAMES_RECENT 16       /* names a new one may be kept against */
#define DS_NAMES_DEPTH 3         /* bases a name is rebuilt from, at most */
struct ds_names {
	char **chunk;
	size_t cap;
	uint32_t n;
	uint32_t used;               /* bytes taken in the last chunk */
	/* the last names added to the last chunk, as bases for the next */
	struct ds_names_recent {
		uint32_t off;            /* its place in the last chunk */
		uint8_t len, depth;      /* its length; bases it is rebuilt from */
		char text[DS_NAME_BUF];
	} *recent;                   /* DS_NAMES_RECENT of them, made with the first chunk */
	unsigned nrecent, next;      /* how many hold a name; where the next goes */
};
/* Keep name[0..len) with its NUL. @return 0, -ENOMEM, -ENAMETOOLONG or
 * -EOVERFLOW (full). */
int ds_names_add(struct ds_names *t, const char *name, size_t len, uint32_t *out);
void ds_names_free(struct ds_names *t);
/* (ds_names_get()'s for a name kept as a difference) */
const char *ds_names_rebuild(const char *at, char *buf);
/* The name of handle h: where it is kept whole, else rebuilt into buf
 * (DS_NAME_BUF bytes; valid while buf is). */
static inline const char *ds_names_get(const struct ds_names *t, uint32_t h, char *buf)
{
	if (h == DS_NAME_EMPTY)
		return "";
	const char *at = t->chunk[h >> DS_NAME_SHIFT] + (h & ((1u << DS_NAME_SHIFT) - 1));
	return *at == '/' ? ds_names_rebuild(at, buf) : at;
}

#endif /* DUPSCAN_RECORDS_NAMES_H */

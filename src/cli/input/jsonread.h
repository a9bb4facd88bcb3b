/* SPDX-License-Identifier: MIT */
/* jsonread.h: JSON read as a stream, one value at a time, so a document of
 * any size costs a buffer and its longest string (--from-report). */
#ifndef DUPSCAN_JSONREAD_H
#define DUPSCAN_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JR_MAX_DEPTH 32 /* containers inside containers; a report nests 4 deep */
#define JR_NUM_MAX 40   /* a number longer than this is kept as "too long" */

struct jr {
	FILE *f;
	unsigned char buf[65536];
	size_t pos, len;
	uint64_t off;       /* bytes of the document before buf */
	int err;            /* -errno (or -EIO) once a read failed */
	int depth;
	char *s;            /* the last string read (a key or a value), NUL-terminated */
	size_t slen, scap;
	char num[JR_NUM_MAX + 1]; /* the last number, as written */
	bool numlong;       /* it did not fit in num */
};

/* Every function below returns a negative errno on trouble: -EINVAL for
 * bytes that are not JSON, -ENOMEM, or the read's error (j->err). */

void jr_init(struct jr *j, FILE *f);
void jr_free(struct jr *j);
/* The offset of the next byte, for "at byte N" in messages. */
uint64_t jr_offset(const struct jr *j);
/* The next byte after white space, not taken; -1 at the end. */
int jr_peek(struct jr *j);
/* Enter the object or array that jr_peek() shows. */
int jr_open(struct jr *j);
/* In an object or array just opened: 1 when another member follows (an
 * object's key then in j->s, its ':' taken), 0 when the container has ended.
 * *first is true before the first member. */
int jr_next(struct jr *j, bool obj, bool *first);
/* Read a value whole and forget it. */
int jr_skip(struct jr *j);
/* Read a string value into j->s. */
int jr_string(struct jr *j);
/* Read a value; 1 when it is an integer written as one (no fraction, no
 * exponent, in the range of *u or, when is_signed, *s), 0 for any other
 * value (read and forgotten). */
int jr_int(struct jr *j, bool is_signed, uint64_t *u, int64_t *s);
/* 0 when nothing but white space is left. */
int jr_end(struct jr *j);

#endif /* DUPSCAN_JSONREAD_H */

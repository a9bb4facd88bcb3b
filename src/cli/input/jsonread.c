/* SPDX-License-Identifier: MIT */
/* jsonread.c: JSON read as a stream (RFC 8259, with -j's one extension: a
 * lone \udc80..\udcff is the byte 0x80..0xff, so a name that is not UTF-8
 * comes back exactly). Nothing is kept but the last string and number. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"

void jr_init(struct jr *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

void jr_free(struct jr *j)
{
	free(j->s);
	j->s = NULL;
	j->scap = 0;
}

uint64_t jr_offset(const struct jr *j)
{
	return j->off + j->pos;
}

/* The next byte, not taken; -1 at the end (or after a failed read). */
static int peekb(struct jr *j)
{
	if (j->pos == j->len) {
		if (j->err || !j->f)
			return -1;
		j->off += j->len;
		j->pos = 0;
		errno = 0;
		j->len = fread(j->buf, 1, sizeof(j->buf), j->f);
		if (j->len == 0) {
			if (ferror(j->f))
				j->err = errno ? -errno : -EIO; /* EISDIR: a directory given */
			return -1;
		}
	}
	return j->buf[j->pos];
}

static int getb(struct jr *j)
{
	int c = peekb(j);
	if (c >= 0)
		j->pos++;
	return c;
}

/* -EINVAL, or -EIO when the bytes ended because a read failed */
static int bad(const struct jr *j)
{
	return j->err ? j->err : -EINVAL;
}

int jr_peek(struct jr *j)
{
	int c;
	while ((c = peekb(j)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		j->pos++;
	return c;
}

int jr_open(struct jr *j)
{
	int c = jr_peek(j);
	if (c != '{' && c != '[')
		return bad(j);
	if (++j->depth > JR_MAX_DEPTH)
		return -EINVAL;
	j->pos++;
	return 0;
}

static int put(struct jr *j, const char *b, size_t n)
{
	if (j->slen + n + 1 > j->scap) {
		size_t cap = j->scap ? j->scap : 256;
		while (cap < j->slen + n + 1)
			cap *= 2;
		char *s = realloc(j->s, cap);
		if (!s)
			return -ENOMEM;
		j->s = s;
		j->scap = cap;
	}
	memcpy(j->s + j->slen, b, n);
	j->slen += n;
	j->s[j->slen] = '\0';
	return 0;
}

static int hex4(struct jr *j, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int c = getb(j);
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return bad(j);
	}
	*out = v;
	return 0;
}

static size_t utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* After a backslash: the bytes it stands for, into o; @return how many. */
static int escape(struct jr *j, char *o)
{
	int e = getb(j);
	const char *simple = e > 0 ? strchr("\"\\/bfnrt", e) : NULL;
	if (simple) {
		o[0] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
		return 1;
	}
	unsigned cp, lo;
	if (e != 'u' || hex4(j, &cp) != 0)
		return bad(j);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (getb(j) != '\\' || getb(j) != 'u' || hex4(j, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
			return bad(j);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xdc80 && cp <= 0xdcff) {
		o[0] = (char)(cp - 0xdc00);
		return 1;
	} else if (cp >= 0xdc00 && cp <= 0xdfff) {
		return bad(j);
	}
	if (cp == 0)
		return bad(j); /* no path holds a NUL */
	return (int)utf8(o, cp);
}

int jr_string(struct jr *j)
{
	if (jr_peek(j) != '"')
		return bad(j);
	j->pos++;
	j->slen = 0;
	int rc = put(j, "", 0); /* j->s is a string even when empty */
	while (rc == 0) {
		int c = peekb(j);
		if (c < 0)
			return bad(j);
		/* the plain bytes in the buffer, in one copy */
		size_t run = j->pos;
		while (run < j->len && j->buf[run] != '"' && j->buf[run] != '\\' && j->buf[run] >= 0x20)
			run++;
		if (run > j->pos) {
			rc = put(j, (const char *)j->buf + j->pos, run - j->pos);
			j->pos = run;
			continue;
		}
		j->pos++;
		if (c == '"')
			return 0;
		if (c != '\\')
			return -EINVAL; /* a control byte */
		char o[4];
		int n = escape(j, o);
		if (n < 0)
			return n;
		rc = put(j, o, (size_t)n);
	}
	return rc;
}

/* A number, as leniently as the reader before this one: a run of digits,
 * points, exponents and signs (strict only where a value is used: jr_int). */
static int number(struct jr *j)
{
	size_t n = 0;
	int c;
	j->numlong = false;
	while ((c = peekb(j)) >= 0 && ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
		if (n < JR_NUM_MAX)
			j->num[n++] = (char)c;
		else
			j->numlong = true;
		j->pos++;
	}
	j->num[n] = '\0';
	return n == 0 || (n == 1 && j->num[0] == '-') ? bad(j) : 0;
}

static int word(struct jr *j, const char *w)
{
	for (; *w; w++)
		if (getb(j) != *w)
			return bad(j);
	return 0;
}

int jr_next(struct jr *j, bool obj, bool *first)
{
	int c = jr_peek(j);
	if (c == (obj ? '}' : ']')) {
		j->pos++;
		j->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return bad(j);
		j->pos++;
	}
	*first = false;
	if (!obj)
		return 1;
	int rc = jr_string(j);
	if (rc)
		return rc;
	if (jr_peek(j) != ':')
		return bad(j);
	j->pos++;
	return 1;
}

int jr_skip(struct jr *j)
{
	int c = jr_peek(j), rc;
	if (c == '{' || c == '[') {
		bool first = true, obj = c == '{';
		if ((rc = jr_open(j)) != 0)
			return rc;
		while ((rc = jr_next(j, obj, &first)) == 1)
			if ((rc = jr_skip(j)) != 0)
				return rc;
		return rc;
	}
	if (c == '"')
		return jr_string(j);
	if (c == 'n')
		return word(j, "null");
	if (c == 't')
		return word(j, "true");
	if (c == 'f')
		return word(j, "false");
	return number(j);
}

int jr_int(struct jr *j, bool is_signed, uint64_t *u, int64_t *s)
{
	int c = jr_peek(j);
	if (c != '-' && (c < '0' || c > '9'))
		return jr_skip(j);
	int rc = number(j);
	if (rc)
		return rc;
	if (j->numlong || strpbrk(j->num, ".eE+") || (!is_signed && j->num[0] == '-'))
		return 0;
	char *end;
	errno = 0;
	if (is_signed)
		*s = strtoll(j->num, &end, 10);
	else
		*u = strtoull(j->num, &end, 10);
	return errno == 0 && *end == '\0';
}

int jr_end(struct jr *j)
{
	return jr_peek(j) < 0 && !j->err ? 0 : bad(j);
}

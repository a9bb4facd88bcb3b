/* SPDX-License-Identifier: MIT */
/* fromreport.c: --from-report=FILE: read back the sets of a dupscan -j report
 * (perhaps edited by a person) and check its shape before anything is done. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fromreport.h"

/* ---- a small JSON reader: the whole document as a tree ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype t;
	char *s;             /* J_STR: the bytes (no NUL inside); J_NUM: the number as written */
	struct jval *v;      /* J_ARR, J_OBJ: the values */
	char **k;            /* J_OBJ: the keys */
	size_t n;
};

struct jparse {
	const char *p, *end;
	int depth;
};

#define MAX_DEPTH 32 /* a report nests 4 deep; more is not one */

static void jfree(struct jval *v)
{
	free(v->s);
	for (size_t i = 0; i < v->n; i++) {
		jfree(&v->v[i]);
		if (v->k)
			free(v->k[i]);
	}
	free(v->v);
	free(v->k);
}

static void skip_ws(struct jparse *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
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

/* A string; \udc80..\udcff alone is the byte 0x80..0xff (as -j writes bytes
 * that are not UTF-8), so every name comes back exactly. */
static int parse_string(struct jparse *j, char **out)
{
	j->p++; /* the quote */
	const char *start = j->p;
	char *o = malloc((size_t)(j->end - start) + 1), *w = o;
	if (!o)
		return -ENOMEM;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			*w++ = (char)c;
			j->p++;
			continue;
		}
		if (j->end - j->p < 2)
			goto bad;
		char e = j->p[1];
		j->p += 2;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (simple && e) {
			*w++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
			continue;
		}
		unsigned cp, lo;
		if (e != 'u' || j->end - j->p < 4 || hex4(j->p, &cp) != 0)
			goto bad;
		j->p += 4;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || hex4(j->p + 2, &lo) != 0 ||
			    lo < 0xdc00 || lo > 0xdfff)
				goto bad;
			j->p += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc80 && cp <= 0xdcff) {
			*w++ = (char)(cp - 0xdc00);
			continue;
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			goto bad;
		}
		if (cp == 0)
			goto bad; /* no path holds a NUL */
		w += put_utf8(w, cp);
	}
	if (j->p >= j->end)
		goto bad;
	j->p++;
	*w = '\0';
	*out = o;
	return 0;
bad:
	free(o);
	return -EINVAL;
}

static int parse_value(struct jparse *j, struct jval *v);

static int parse_container(struct jparse *j, struct jval *v, bool obj)
{
	if (++j->depth > MAX_DEPTH)
		return -EINVAL;
	v->t = obj ? J_OBJ : J_ARR;
	j->p++;
	skip_ws(j);
	size_t cap = 0;
	if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			struct jval *nv = realloc(v->v, cap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			v->v = nv;
			if (obj) {
				char **nk = realloc(v->k, cap * sizeof(*nk));
				if (!nk)
					return -ENOMEM;
				v->k = nk;
			}
		}
		memset(&v->v[v->n], 0, sizeof(v->v[v->n]));
		if (obj) {
			skip_ws(j);
			if (j->p >= j->end || *j->p != '"')
				return -EINVAL;
			v->k[v->n] = NULL;
			int rc = parse_string(j, &v->k[v->n]);
			if (rc)
				return rc;
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':') {
				v->n++; /* freed with the rest */
				return -EINVAL;
			}
			j->p++;
		}
		int rc = parse_value(j, &v->v[v->n]);
		v->n++;
		if (rc)
			return rc;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
			j->p++;
			j->depth--;
			return 0;
		}
		return -EINVAL;
	}
}

static int parse_value(struct jparse *j, struct jval *v)
{
	skip_ws(j);
	if (j->p >= j->end)
		return -EINVAL;
	char c = *j->p;
	if (c == '{' || c == '[')
		return parse_container(j, v, c == '{');
	if (c == '"') {
		v->t = J_STR;
		return parse_string(j, &v->s);
	}
	static const char *const words[] = { "null", "true", "false" };
	for (int i = 0; i < 3; i++) {
		size_t len = strlen(words[i]);
		if ((size_t)(j->end - j->p) >= len && strncmp(j->p, words[i], len) == 0) {
			v->t = i == 0 ? J_NULL : J_BOOL;
			j->p += len;
			return 0;
		}
	}
	const char *start = j->p;
	if (*j->p == '-')
		j->p++;
	while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
				 *j->p == '+' || *j->p == '-'))
		j->p++;
	if (j->p == start || (j->p == start + 1 && *start == '-'))
		return -EINVAL;
	v->t = J_NUM;
	v->s = strndup(start, (size_t)(j->p - start));
	return v->s ? 0 : -ENOMEM;
}

static const struct jval *member(const struct jval *o, const char *key)
{
	for (size_t i = 0; o->t == J_OBJ && i < o->n; i++)
		if (strcmp(o->k[i], key) == 0)
			return &o->v[i];
	return NULL;
}

/* An integer member, exactly: no fraction, no exponent, in range. */
static bool int_member(const struct jval *o, const char *key, bool is_signed, uint64_t *u, int64_t *s)
{
	const struct jval *v = member(o, key);
	if (!v || v->t != J_NUM || strpbrk(v->s, ".eE+"))
		return false;
	char *end;
	errno = 0;
	if (is_signed)
		*s = strtoll(v->s, &end, 10);
	else if (v->s[0] == '-')
		return false;
	else
		*u = strtoull(v->s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* ---- the report's shape ---- */

__attribute__((format(printf, 3, 4)))
static int fail(char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
	return -1;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i].path);
	free(r->files);
	free(r->lone);
	memset(r, 0, sizeof(*r));
}

/* Set number set was left with one file or none. @return 0 or -ENOMEM. */
static int note_lone(struct report *r, uint32_t set)
{
	uint32_t *v = realloc(r->lone, (r->nlone + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->lone = v;
	r->lone[r->nlone++] = set;
	return 0;
}

static int cmp_path(const void *pa, const void *pb)
{
	const struct report_file *a = *(const struct report_file *const *)pa, *b = *(const struct report_file *const *)pb;
	return strcmp(a->path, b->path);
}

static int cmp_identity(const void *pa, const void *pb)
{
	const struct report_file *a = *(const struct report_file *const *)pa, *b = *(const struct report_file *const *)pb;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* No path, and no recorded inode, in two sets. */
static int check_twice(const struct report *r, char *msg, size_t cap)
{
	const struct report_file **v = malloc((r->nfiles ? r->nfiles : 1) * sizeof(*v));
	if (!v)
		return fail(msg, cap, "out of memory");
	int rc = 0;
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (size_t i = 0; i < r->nfiles; i++)
			v[i] = &r->files[i];
		qsort(v, r->nfiles, sizeof(*v), pass ? cmp_identity : cmp_path);
		for (size_t i = 1; i < r->nfiles && rc == 0; i++) {
			bool same = pass ? cmp_identity(&v[i - 1], &v[i]) == 0 : cmp_path(&v[i - 1], &v[i]) == 0;
			if (same && v[i - 1]->set != v[i]->set)
				rc = fail(msg, cap, "set %u and set %u both hold %s '%s'", v[i - 1]->set + 1,
					  v[i]->set + 1, pass ? "the file (same device and inode) of" : "the path",
					  v[i]->path);
			else if (same && !pass)
				rc = fail(msg, cap, "set %u: the path '%s' twice", v[i]->set + 1, v[i]->path);
		}
	}
	free(v);
	return rc;
}

static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f)
		return -errno;
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);
	int rc = b ? 0 : -ENOMEM;
	while (rc == 0) {
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			b = nb;
		}
		size_t got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = -EIO;
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (rc) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}

int report_load(const char *path, struct report *r, char *msg, size_t cap)
{
	memset(r, 0, sizeof(*r));
	char *buf = NULL;
	size_t len = 0;
	int err = read_file(path, &buf, &len);
	if (err)
		return fail(msg, cap, "%s", strerror(-err));
	struct jparse j = { buf, buf + len, 0 };
	struct jval doc = { 0 };
	int rc = parse_value(&j, &doc);
	skip_ws(&j);
	if (rc == -ENOMEM)
		rc = fail(msg, cap, "out of memory");
	else if (rc || j.p != j.end)
		rc = fail(msg, cap, "not JSON (at byte %zu)", (size_t)(j.p - buf));
	const struct jval *sets = rc ? NULL : member(&doc, "matchSets");
	if (rc == 0 && (!sets || sets->t != J_ARR))
		rc = fail(msg, cap, "no \"matchSets\" list: not a dupscan -j report");
	for (size_t i = 0; rc == 0 && i < sets->n; i++) {
		const struct jval *set = &sets->v[i], *list = member(set, "fileList");
		uint64_t size = 0;
		int64_t unused;
		if (set->t != J_OBJ || !list || list->t != J_ARR)
			rc = fail(msg, cap, "set %zu: no \"fileList\" list", i + 1);
		else if (!int_member(set, "fileSize", false, &size, &unused))
			rc = fail(msg, cap, "set %zu: no \"fileSize\"", i + 1);
		else if (list->n < 2 && note_lone(r, (uint32_t)i) != 0)
			rc = fail(msg, cap, "out of memory");
		for (size_t k = 0; rc == 0 && k < list->n; k++) {
			const struct jval *f = &list->v[k], *p = member(f, "filePath");
			struct report_file rf = { .set = (uint32_t)i, .size = size, .alone = list->n < 2 };
			if (f->t != J_OBJ || !p || p->t != J_STR || !p->s[0]) {
				rc = fail(msg, cap, "set %zu, file %zu: no \"filePath\"", i + 1, k + 1);
				break;
			}
			if (!int_member(f, "device", false, &rf.dev, &unused) ||
			    !int_member(f, "inode", false, &rf.ino, &unused) ||
			    !int_member(f, "mtimeNs", true, &size, &rf.mtime_ns) ||
			    !int_member(f, "ctimeNs", true, &size, &rf.ctime_ns)) {
				rc = fail(msg, cap,
					  "set %zu: '%s' has no device, inode, mtimeNs and ctimeNs (write the report "
					  "with dupscan -j)", i + 1, p->s);
				break;
			}
			size = rf.size;
			if (!(rf.path = strdup(p->s))) {
				rc = fail(msg, cap, "out of memory");
				break;
			}
			struct report_file *nf = realloc(r->files, (r->nfiles + 1) * sizeof(*nf));
			if (!nf) {
				free(rf.path);
				rc = fail(msg, cap, "out of memory");
				break;
			}
			r->files = nf;
			r->files[r->nfiles++] = rf;
		}
		r->nsets = i + 1;
	}
	if (rc == 0)
		rc = check_twice(r, msg, cap);
	/* a directory or a symlink where a file was: the report no longer describes the tree */
	for (size_t i = 0; rc == 0 && i < r->nfiles; i++) {
		struct stat st;
		if (lstat(r->files[i].path, &st) == 0 && !S_ISREG(st.st_mode))
			rc = fail(msg, cap, "set %u: '%s' is now %s", r->files[i].set + 1, r->files[i].path,
				  S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
	}
	jfree(&doc);
	free(buf);
	if (rc)
		report_free(r);
	return rc;
}

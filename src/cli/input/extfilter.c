/* SPDX-License-Identifier: MIT */
/* extfilter.c: parsing and applying -X specs, with jdupes 1.21's names and meaning. */
#define _DEFAULT_SOURCE /* strcasecmp, strncasecmp */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "extfilter.h"

static const struct {
	const char *name;
	enum xf_kind kind;
	unsigned cmp;
} tags[] = {
	{ "size+", XF_SIZE, XF_GT },
	{ "size-", XF_SIZE, XF_LT },
	{ "size=", XF_SIZE, XF_EQ },
	{ "size+=", XF_SIZE, XF_GT | XF_EQ },
	{ "size-=", XF_SIZE, XF_LT | XF_EQ },
	{ "noext", XF_NOEXT, 0 },
	{ "onlyext", XF_ONLYEXT, 0 },
	{ "nostr", XF_NOSTR, 0 },
	{ "onlystr", XF_ONLYSTR, 0 },
	{ "newer", XF_NEWER, 0 },
	{ "older", XF_OLDER, 0 },
};

void xf_help(FILE *out)
{
	fputs("Detailed help for dupscan -X/--ext-filter options\n"
	      "General format: dupscan -X filter[:value][size_suffix]\n\n"
	      "noext:ext1[,ext2,...]   \tExclude files with certain extension(s)\n\n"
	      "onlyext:ext1[,ext2,...] \tOnly include files with certain extension(s)\n\n"
	      "size[+-=]:size[suffix]  \tOnly include files matching size criteria\n"
	      "                        \tSize specs: + larger, - smaller, = equal to\n"
	      "                        \tSpecs can be mixed, i.e. size+=:100k will\n"
	      "                        \tonly include files 100KiB or more in size.\n\n"
	      "nostr:text_string       \tExclude all paths containing the string\n"
	      "onlystr:text_string     \tOnly allow paths containing the string\n"
	      "                        \tHINT: you can use these for directories:\n"
	      "                        \t-X nostr:/dir_x/  or  -X onlystr:/dir_x/\n"
	      "newer:datetime          \tOnly include files newer than specified date\n"
	      "older:datetime          \tOnly include files older than specified date\n"
	      "                        \tDate/time format: \"YYYY-MM-DD HH:MM:SS\"\n"
	      "                        \tTime is optional (remember to escape spaces!)\n\n"
	      "Some filters take no value or multiple values. Filters that can take\n"
	      "a numeric option generally support the size multipliers K/M/G/T/P/E\n"
	      "with or without an added iB or B. Multipliers are binary-style unless\n"
	      "the -B suffix is used, which will use decimal multipliers. For example,\n"
	      "16k or 16kib = 16384; 16kb = 16000. Multipliers are case-insensitive.\n\n"
	      "Filters have cumulative effects: dupscan -X size+:99 -X size-:101 will\n"
	      "cause only files of exactly 100 bytes in size to be included.\n\n"
	      "Extension matching is case-insensitive.\n"
	      "Path substring matching is case-sensitive.\n", out);
}

int xf_parse_size(const char *text, int64_t *out)
{
	if (!isdigit((unsigned char)*text))
		return -1;
	uint64_t v = 0;
	const char *p = text;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_C(1) << 63) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	uint64_t mult = 1;
	if (*p) {
		static const char units[] = "kmgtpe";
		const char *u = strchr(units, tolower((unsigned char)*p));
		if (strcasecmp(p, "b") == 0) {
			mult = 1;
		} else if (u && *u) {
			int power = (int)(u - units) + 1;
			bool decimal = strcasecmp(p + 1, "b") == 0;
			if (!decimal && p[1] != '\0' && strcasecmp(p + 1, "ib") != 0)
				return -1;
			for (int i = 0; i < power; i++)
				mult *= decimal ? 1000 : 1024;
		} else {
			return -1;
		}
	}
	/* sizes are compared with off_t: anything past 2^63 - 1 is an error */
	if (v > (uint64_t)INT64_MAX / mult)
		return -1;
	*out = (int64_t)(v * mult);
	return 0;
}

static int digits(const char *p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return 0;
}

int xf_parse_date(const char *text, int64_t *out)
{
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, sec = 0;
	size_t len = strlen(text);
	if (len != 10 && len != 19)
		return -1;
	if (digits(text, 4, &y) || text[4] != '-' || digits(text + 5, 2, &mo) || text[7] != '-' ||
	    digits(text + 8, 2, &d))
		return -1;
	if (len == 19 && (text[10] != ' ' || digits(text + 11, 2, &h) || text[13] != ':' ||
			  digits(text + 14, 2, &mi) || text[16] != ':' || digits(text + 17, 2, &sec)))
		return -1;
	if (y < 1900 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	/* mktime normalizes 2023-02-30 into March: such a date is not valid */
	if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -1;
	*out = (int64_t)t;
	return 0;
}

static bool has_extension(const char *list)
{
	for (const char *p = list; *p; p++)
		if (*p != ',')
			return true;
	return false;
}

int xf_parse(const char *spec, struct xf *out, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	const char *value = colon ? colon + 1 : "";
	memset(out, 0, sizeof(*out));
	size_t t = 0;
	while (t < sizeof(tags) / sizeof(tags[0]) &&
	       !(strlen(tags[t].name) == nlen && strncmp(tags[t].name, spec, nlen) == 0))
		t++;
	if (t == sizeof(tags) / sizeof(tags[0])) {
		snprintf(err, errlen, "unknown filter in -X '%s' (see -X help)", spec);
		return -1;
	}
	out->kind = tags[t].kind;
	out->cmp = tags[t].cmp;
	if (*value == '\0') {
		snprintf(err, errlen, "missing value in -X '%s' (format: filter:value)", spec);
		return -1;
	}
	switch (out->kind) {
	case XF_SIZE:
		if (xf_parse_size(value, &out->value) != 0) {
			snprintf(err, errlen, "bad size in -X '%s' (a number with an optional "
				 "suffix B, K, M, G, T, P, E, KiB.., KB.., below 2^63)", spec);
			return -1;
		}
		return 0;
	case XF_NEWER:
	case XF_OLDER:
		if (xf_parse_date(value, &out->value) != 0) {
			snprintf(err, errlen, "bad date in -X '%s' (YYYY-MM-DD or \"YYYY-MM-DD HH:MM:SS\")", spec);
			return -1;
		}
		return 0;
	case XF_NOEXT:
	case XF_ONLYEXT:
		if (!has_extension(value)) {
			snprintf(err, errlen, "empty extension list in -X '%s'", spec);
			return -1;
		}
		break;
	default:
		break;
	}
	out->text = strdup(value);
	if (!out->text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int xf_add(struct xf_list *list, const char *spec, char *err, size_t errlen)
{
	struct xf f;
	if (xf_parse(spec, &f, err, errlen) != 0)
		return -1;
	struct xf *v = realloc(list->v, (list->n + 1) * sizeof(*v));
	if (!v) {
		free(f.text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	list->v = v;
	list->v[list->n++] = f;
	return 0;
}

void xf_free(struct xf_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->v[i].text);
	free(list->v);
	list->v = NULL;
	list->n = 0;
}

/* The extension is what follows the last dot of the file's own name. */
static bool ext_in_list(const char *path, const char *list)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (!dot || dot[1] == '\0')
		return false;
	const char *ext = dot + 1;
	size_t elen = strlen(ext);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == elen && n > 0 && strncasecmp(p, ext, n) == 0)
			return true;
		p += n;
		while (*p == ',')
			p++;
	}
	return false;
}

static bool passes(const struct xf *f, const char *path, uint64_t size, int64_t mtime_ns)
{
	int64_t sec = mtime_ns >= 0 ? mtime_ns / 1000000000 : -((-mtime_ns + 999999999) / 1000000000);
	switch (f->kind) {
	case XF_SIZE: {
		int64_t sz = (int64_t)size;
		return ((f->cmp & XF_GT) && sz > f->value) || ((f->cmp & XF_LT) && sz < f->value) ||
		       ((f->cmp & XF_EQ) && sz == f->value);
	}
	case XF_NOEXT: return !ext_in_list(path, f->text);
	case XF_ONLYEXT: return ext_in_list(path, f->text);
	case XF_NOSTR: return strstr(path, f->text) == NULL;
	case XF_ONLYSTR: return strstr(path, f->text) != NULL;
	case XF_NEWER: return sec >= f->value;
	case XF_OLDER: return sec < f->value;
	}
	return true;
}

bool xf_pass(const struct xf_list *list, const char *path, uint64_t size, int64_t mtime_ns)
{
	for (size_t i = 0; i < list->n; i++)
		if (!passes(&list->v[i], path, size, mtime_ns))
			return false;
	return true;
}

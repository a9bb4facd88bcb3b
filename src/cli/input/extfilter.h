/* SPDX-License-Identifier: MIT */
/* extfilter.h: jdupes' -X extended filters, parsed in the frontend and applied
 * through the library's filter callback. */
#ifndef DUPSCAN_EXTFILTER_H
#define DUPSCAN_EXTFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum xf_kind { XF_SIZE, XF_NOEXT, XF_ONLYEXT, XF_NOSTR, XF_ONLYSTR, XF_NEWER, XF_OLDER };
enum { XF_GT = 1, XF_LT = 2, XF_EQ = 4 }; /* size comparisons, combinable */

struct xf {
	enum xf_kind kind;
	unsigned cmp;     /* XF_SIZE: XF_GT/XF_LT/XF_EQ bits */
	int64_t value;    /* bytes, or seconds since the epoch */
	char *text;       /* extension list or substring; owned */
};

struct xf_list {
	struct xf *v;
	size_t n;
};

/* Parse one spec ("size+=:4K", "noext:jpg,png", ...) into *out.
 * @return 0, or -1 with a message in err that quotes the spec. */
int xf_parse(const char *spec, struct xf *out, char *err, size_t errlen);
/* Parse and append. @return 0 or -1 (err filled). */
int xf_add(struct xf_list *list, const char *spec, char *err, size_t errlen);
void xf_free(struct xf_list *list);
/* Does a file pass every filter? path is as printed; mtime in ns. */
bool xf_pass(const struct xf_list *list, const char *path, uint64_t size, int64_t mtime_ns);

/* "16k" = 16384, "16kb" = 16000, "16kib" = 16384, "3" = 3. @return 0 or -1. */
int xf_parse_size(const char *text, int64_t *out);
/* "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS", local time. @return 0 or -1. */
int xf_parse_date(const char *text, int64_t *out);

void xf_help(FILE *out);

#endif

/* SPDX-License-Identifier: MIT */
/* order.c: the chosen order between files (-o, -O, -i): by their records'
 * times, their arguments and their paths in natural order. Sets, results and
 * the hard links' representatives all follow it. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* jdupes' name order for one byte: symbols below '.' (space, '-', '!', ...) and
 * bytes past ASCII come after everything else; letters compare without case. */
static int byte_rank(unsigned char c, int *late)
{
	*late = c < '.' || c >= 0x80;
	if (c >= 'a' && c <= 'z')
		return c - 32;
	return c >= 0x80 ? (int)c - 256 : c; /* jdupes compares them as signed char */
}

int ds_natural_cmp(const char *a, const char *b)
{
	int zeros = 0; /* tie-break: fewer leading zeros first, as "1" before "01" */
	while (*a && *b) {
		if (is_digit(*a) && is_digit(*b)) {
			const char *sa = a, *sb = b;
			while (*a == '0' && is_digit(a[1]))
				a++;
			while (*b == '0' && is_digit(b[1]))
				b++;
			size_t la = 0, lb = 0;
			while (is_digit(a[la]))
				la++;
			while (is_digit(b[lb]))
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = memcmp(a, b, la);
			if (c)
				return c < 0 ? -1 : 1;
			if (!zeros && (a - sa) != (b - sb))
				zeros = (a - sa) < (b - sb) ? -1 : 1;
			a += la;
			b += lb;
			if ((*a == '\0') != (*b == '\0')) {
				/* jdupes ranks an end right after a number as a symbol: "pip3"
				 * after "pip3.12", but before "pip3-x" */
				int late;
				byte_rank((unsigned char)(*a ? *a : *b), &late);
				if (!late)
					return *a ? -1 : 1;
				return *a ? 1 : -1;
			}
			continue;
		}
		if (*a != *b) {
			int late_a, late_b;
			int ra = byte_rank((unsigned char)*a, &late_a), rb = byte_rank((unsigned char)*b, &late_b);
			if (late_a != late_b)
				return late_a ? 1 : -1;
			if (ra != rb)
				return ra < rb ? -1 : 1;
		}
		a++;
		b++;
	}
	if (*a || *b)
		return *a ? 1 : -1; /* a prefix comes first */
	return zeros;
}

int ds_order_cmp(const struct ds_tree *s, const struct dupscan_file *fa, const struct dupscan_file *fb)
{
	const struct ds_rec *a = fa->rec, *b = fb->rec;
	const char *pa = fa->path, *pb = fb->path;
	int c = 0;
	/* reference files first, whatever the order (and -R): a set keeps one */
	if (s->references && ds_file_reference(fa) != ds_file_reference(fb))
		return ds_file_reference(fa) ? -1 : 1;
	/* (an argument is a lookup by the record's index: made for -O only) */
	uint32_t arg_a = s->core->opt.param_order ? ds_file_arg(fa) : 0, arg_b = s->core->opt.param_order ? ds_file_arg(fb) : 0;
	if (arg_a != arg_b)
		c = arg_a < arg_b ? -1 : 1;
	else if (s->core->opt.order == DUPSCAN_ORDER_TIME && a->mtime_ns != b->mtime_ns)
		c = a->mtime_ns < b->mtime_ns ? -1 : 1;
	if (c == 0)
		c = ds_natural_cmp(pa, pb);
	if (c == 0)
		c = strcmp(pa, pb); /* "a01" and "a1" still get a fixed order */
	return s->core->opt.reverse ? -c : c;
}

int ds_cmp_file(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct dupscan_file *a = pa, *b = pb;
	/* the order and the references are the owner's, for another host's file too */
	const struct ds_tree *t = a->tree->owner ? a->tree->owner : a->tree;
	return ds_order_cmp(t, a, b);
}

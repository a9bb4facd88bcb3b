/* SPDX-License-Identifier: MIT */
/* fuzz_extfilter.c: libFuzzer target for the -X spec parser and its size and
 * date parsers. A crash, a sanitizer report or a broken invariant is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';

	char err[512];
	struct xf_list list = { 0 };
	if (xf_add(&list, spec, err, sizeof(err)) == 0) {
		/* a parsed filter must be usable on any file */
		(void)xf_pass(&list, "dir/name.ext", 4096, 1700000000000000000);
		(void)xf_pass(&list, "", 0, -1);
		if (list.v[0].kind == XF_SIZE && list.v[0].value < 0)
			abort();
	} else if (!memchr(err, '\0', sizeof(err)) || strlen(err) == 0) {
		abort(); /* every rejection explains itself */
	}
	xf_free(&list);

	int64_t v;
	if (xf_parse_size(spec, &v) == 0 && v < 0)
		abort();
	(void)xf_parse_date(spec, &v);
	free(spec);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* fuzz_order.c: libFuzzer target for the name order that sets are built and
 * printed in: it must be a strict weak order (antisymmetric, transitive), or
 * the output would depend on the order files were met in. Input: three names
 * separated by NUL bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "sets/sets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 3);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	const char *a = buf, *b = a + strlen(a) + 1;
	const char *c = b <= buf + size ? b + strlen(b) + 1 : buf + size + 2;
	if (b > buf + size + 1)
		b = buf + size + 1;
	if (c > buf + size + 2)
		c = buf + size + 2;
	int ab = sign(ds_natural_cmp(a, b)), ba = sign(ds_natural_cmp(b, a));
	int bc = sign(ds_natural_cmp(b, c)), ac = sign(ds_natural_cmp(a, c));
	if (ab != -ba)
		abort(); /* antisymmetry */
	if (ab < 0 && bc < 0 && ac >= 0)
		abort(); /* transitivity */
	if (ab == 0 && bc == 0 && ac != 0)
		abort(); /* equivalence is transitive */
	if (ds_natural_cmp(a, a) != 0)
		abort();
	free(buf);
	return 0;
}

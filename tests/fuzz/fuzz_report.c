/* SPDX-License-Identifier: MIT */
/* fuzz_report.c: libFuzzer target for --from-report's reader: any bytes are
 * either refused with a message or read as sets of two or more files, each
 * with a path, and no path in two sets. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fromreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/dupscan-fuzz-report-%ld", (long)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	struct report r;
	char msg[4352];
	if (report_load(path, &r, msg, sizeof(msg)) != 0) {
		if (!msg[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	size_t in_set = 0;
	for (size_t i = 0; i < r.nfiles; i++) {
		if (!r.files[i].path || !r.files[i].path[0] || r.files[i].set >= r.nsets)
			abort();
		in_set = i > 0 && r.files[i].set == r.files[i - 1].set ? in_set + 1 : 1;
		if (i + 1 == r.nfiles || r.files[i + 1].set != r.files[i].set)
			if ((in_set < 2) != r.files[i].alone)
				abort(); /* a set of one to act on, or a set of two kept whole */
	}
	for (size_t i = 0; i < r.nlone; i++) {
		if (r.lone[i] >= r.nsets || (i > 0 && r.lone[i] <= r.lone[i - 1]))
			abort();
		for (size_t k = 0; k < r.nfiles; k++)
			if (r.files[k].set == r.lone[i] && !r.files[k].alone)
				abort(); /* a file of a lone set would be acted on */
	}
	report_free(&r);
	return 0;
}

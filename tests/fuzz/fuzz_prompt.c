/* SPDX-License-Identifier: MIT */
/* fuzz_prompt.c: libFuzzer target for the -d prompt's answer parser. The first
 * byte is the set size; the rest is the answer line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = (size_t)data[0] + 1;
	char *line = malloc(size);
	bool *keep = malloc(n * sizeof(*keep));
	if (!line || !keep)
		abort();
	memcpy(line, data + 1, size - 1);
	line[size - 1] = '\0';
	enum prompt_answer a = prompt_parse(line, n, keep);
	if (a == PROMPT_KEEP) {
		/* an answer that deletes can never delete every file of the set */
		bool any = false;
		for (size_t i = 0; i < n; i++)
			any |= keep[i];
		if (!any)
			abort();
	} else if (a != PROMPT_INVALID && a != PROMPT_ALL && a != PROMPT_HELP) {
		abort();
	}
	free(keep);
	free(line);
	return 0;
}

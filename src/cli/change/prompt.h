/* SPDX-License-Identifier: MIT */
/* prompt.h: parsing the answer to -d's "keep which files?" prompt. */
#ifndef DUPSCAN_PROMPT_H
#define DUPSCAN_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

enum prompt_answer {
	PROMPT_INVALID = 0, /* ask again */
	PROMPT_KEEP,        /* keep[] says which; at least one is kept */
	PROMPT_ALL,         /* keep every file */
	PROMPT_HELP         /* explain and ask again */
};

/* Parse one answer line for a set of n files: numbers 1..n separated by
 * commas or blanks, "a"/"all", or "h"/"help"/"?". keep has n entries. */
enum prompt_answer prompt_parse(const char *line, size_t n, bool *keep);

#endif

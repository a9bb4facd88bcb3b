/* SPDX-License-Identifier: MIT */
/* prompt.c: the answer parser of the -d prompt. There is deliberately no "none":
 * an answer always keeps at least one file of the set. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "prompt.h"

enum prompt_answer prompt_parse(const char *line, size_t n, bool *keep)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		keep[i] = false;
	const char *p = line;
	for (;;) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		size_t len = strcspn(p, ", \t\r\n\v\f");
		if ((len == 1 && (*p == 'a' || *p == 'A')) || (len == 3 && strncasecmp(p, "all", 3) == 0))
			return PROMPT_ALL;
		if ((len == 1 && (*p == 'h' || *p == 'H' || *p == '?')) || (len == 4 && strncasecmp(p, "help", 4) == 0))
			return PROMPT_HELP;
		size_t v = 0;
		for (size_t i = 0; i < len; i++) {
			if (!isdigit((unsigned char)p[i]) || v > n)
				return PROMPT_INVALID;
			v = v * 10 + (size_t)(p[i] - '0');
		}
		if (v < 1 || v > n)
			return PROMPT_INVALID;
		keep[v - 1] = true;
		any = true;
		p += len;
	}
	return any ? PROMPT_KEEP : PROMPT_INVALID;
}

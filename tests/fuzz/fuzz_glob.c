/* SPDX-License-Identifier: MIT */
/* fuzz_glob.c: libFuzzer target for --exclude/--include matching. Input: a
 * pattern, a newline, a path. A crash, a sanitizer report, a timeout (the
 * matcher must stay polynomial in "**") or a broken invariant is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *nl = strchr(buf, '\n');
	const char *pattern = buf, *path = nl ? nl + 1 : "a/b/c";
	if (nl)
		*nl = '\0';
	bool file_hit = glob_match(pattern, path, false);
	bool dir_hit = glob_match(pattern, path, true);
	size_t plen = strlen(pattern);
	/* a pattern is a file pattern or a directory pattern, never both */
	if (file_hit && dir_hit)
		abort();
	/* a plain pattern (no metacharacters, no empty component) matches itself */
	if (plen && !strpbrk(pattern, "*?[\\") && pattern[0] != '/' && pattern[plen - 1] != '/' &&
	    !strstr(pattern, "//") && strcmp(pattern, path) == 0 && !file_hit)
		abort();
	struct glob_list ex = { 0 }, in = { 0 };
	if (glob_add(&ex, pattern) == 0) {
		(void)glob_dir_keeps(&ex, path);
		(void)glob_file_keeps(&ex, &in, path);
		(void)glob_file_keeps(&in, &ex, path);
	}
	glob_free(&ex);
	free(buf);
	return 0;
}

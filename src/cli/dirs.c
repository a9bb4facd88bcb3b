/* SPDX-License-Identifier: MIT */
/* dirs.c: mkdir -p, for --move-to, the journal and --undo. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dirs.h"

int cli_make_dirs(const char *path, size_t len, mode_t mode)
{
	char *p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	for (char *s = p + (len > 0); len > 0 && rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}



/* SPDX-License-Identifier: MIT */
/* pathlist.c: the paths to scan, from the command line and --files-from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_add_path(struct cli_opts *o, const char *path, bool after_R)
{
	struct cli_path *p = realloc(o->paths, (size_t)(o->npaths + 1) * sizeof(*p));
	if (!p)
		return msg_nomem(NULL);
	o->paths = p;
	o->paths[o->npaths++] = (struct cli_path){ path, after_R };
	return 0;
}

/* The whole of f in one buffer, NUL-terminated. @return 0 or an exit status. */
static int slurp(FILE *f, const char *name, char **out, size_t *outlen)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	for (;;) {
		if (len + 65536 + 1 > cap) {
			char *b = realloc(buf, cap = (len + 65536 + 1) * 2);
			if (!b) {
				free(buf);
				msg_say("--files-from '%s': out of memory after %zu bytes", name, len);
				return 1;
			}
			buf = b;
		}
		size_t n = fread(buf + len, 1, 65536, f);
		len += n;
		if (n < 65536)
			break;
	}
	if (ferror(f)) {
		free(buf);
		msg_say("--files-from '%s': read error", name);
		return EXIT_USAGE;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* --files-from: the whole list in one buffer, split in place (paths point into it). */
int cli_read_files_from(struct cli_opts *o)
{
	bool is_stdin = strcmp(o->files_from, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(o->files_from, "re");
	if (!f) {
		msg_say("--files-from '%s': %s", o->files_from, strerror(errno));
		return EXIT_USAGE;
	}
	size_t len;
	char *buf;
	int rc = slurp(f, o->files_from, &buf, &len);
	if (!is_stdin)
		fclose(f);
	if (rc)
		return rc;
	o->files_from_buf = buf;
	char sep = o->print_null ? '\0' : '\n';
	for (size_t i = 0; i < len;) {
		char *p = buf + i;
		char *end = memchr(p, sep, len - i);
		size_t plen = end ? (size_t)(end - p) : len - i;
		p[plen] = '\0';
		i += plen + 1;
		if (plen == 0)
			continue;
		if (memchr(p, '\0', plen)) {
			msg_say("--files-from '%s': a path holds a NUL byte (use -0 for NUL-separated lists)", o->files_from);
			return EXIT_USAGE;
		}
		if ((rc = cli_add_path(o, p, false)))
			return rc;
	}
	return 0;
}

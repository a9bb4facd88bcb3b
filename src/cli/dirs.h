/* SPDX-License-Identifier: MIT */
/* dirs.h: creating directories, for --move-to and the journal alike. */
#ifndef DUPSCAN_CLI_DIRS_H
#define DUPSCAN_CLI_DIRS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p for the first len bytes of path. @return 0 or -errno. */
int cli_make_dirs(const char *path, size_t len, mode_t mode);

#endif /* DUPSCAN_CLI_DIRS_H */

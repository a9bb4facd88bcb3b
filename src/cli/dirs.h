/* SPDX-License-Identifier: MIT */
/* dirs.h: creating directories, for --move-to, the journal and --undo alike. */
#ifndef DUPSCAN_CLI_DIRS_H
#define DUPSCAN_CLI_DIRS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p for the first len bytes of path. @return 0 or -errno. */
int cli_make_dirs(const char *path, size_t len, mode_t mode);

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
/* (renaming two paths with flags, fsyncing a directory: fsutil.h, shared
 * with the library) */
#include "fsutil.h"

#endif /* DUPSCAN_CLI_DIRS_H */

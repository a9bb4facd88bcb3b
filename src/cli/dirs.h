/* SPDX-License-Identifier: MIT */
/* dirs.h: creating directories and making their entries durable, for --move-to,
 * the journal and --undo alike. */
#ifndef DUPSCAN_CLI_DIRS_H
#define DUPSCAN_CLI_DIRS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p for the first len bytes of path. @return 0 or -errno. */
int cli_make_dirs(const char *path, size_t len, mode_t mode);
/* Make the entry path names durable: fsync its directory (where the filesystem
 * can). @return 0 or -errno. */
int cli_fsync_dir_of(const char *path);

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
/* renameat2(2) on two paths, also where the C library has no wrapper (musl):
 * flags RENAME_NOREPLACE or RENAME_EXCHANGE. @return 0 or -errno (-EINVAL
 * where the filesystem cannot). */
int cli_rename2(const char *from, const char *to, unsigned flags);

#endif /* DUPSCAN_CLI_DIRS_H */

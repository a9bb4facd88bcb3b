/* SPDX-License-Identifier: MIT */
/* glob.h: --exclude and --include patterns, matched on paths relative to
 * their argument. */
#ifndef DUPSCAN_GLOB_H
#define DUPSCAN_GLOB_H

#include <stdbool.h>
#include <stddef.h>

struct glob_list {
	char **v;   /* patterns as given */
	size_t *hits; /* how many paths each matched (the walk's thread counts) */
	size_t n;
};

/* Append a pattern (copied). @return 0, -EINVAL for an empty pattern, or -ENOMEM. */
int glob_add(struct glob_list *l, const char *pattern);
void glob_free(struct glob_list *l);

/* Does pattern match relpath? fnmatch(3) per path component; "**" as a whole
 * component matches any number of components; a pattern without '/' (trailing
 * '/' aside) matches the last component wherever it is. A trailing '/' makes
 * a directory pattern: is_dir must be true. */
bool glob_match(const char *pattern, const char *relpath, bool is_dir);

/* The walk's decisions. A directory is pruned when an exclude directory
 * pattern matches it; a file is left out when an exclude file pattern matches
 * it, or when includes exist and none matches it or a directory above it. */
bool glob_dir_keeps(const struct glob_list *ex, const char *reldir);
bool glob_file_keeps(const struct glob_list *ex, const struct glob_list *in, const char *relpath);

#endif /* DUPSCAN_GLOB_H */

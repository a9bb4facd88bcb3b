/* SPDX-License-Identifier: MIT */
/* calls.c: the library's calls that hand a stage its own state: the caller
 * holds the whole scan, each stage takes only its part of it. */
#include "scan.h"
#include "records/spill.h"

DUPSCAN_API int dupscan_report_file(dupscan_scan *s, uint32_t set, const char *path, uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_ns, int64_t ctime_ns)
{
	return ds_report_file(s ? &s->walk : NULL, set, path, dev, ino, size, mtime_ns, ctime_ns);
}

DUPSCAN_API int dupscan_set_cache(dupscan_scan *s, const char *path)
{
	return ds_set_cache(s ? &s->cache : NULL, path);
}

DUPSCAN_API int dupscan_find_overlaps(dupscan_scan *s, unsigned percent)
{
	return ds_find_overlaps(s ? &s->results : NULL, percent);
}

DUPSCAN_API size_t dupscan_overlap_count(const dupscan_scan *s)
{
	return ds_overlap_count(s ? &s->results : NULL);
}

DUPSCAN_API int dupscan_overlap_dirs(const dupscan_scan *s, size_t i, size_t *a, size_t *b)
{
	return ds_overlap_dirs(s ? &s->results : NULL, i, a, b);
}

DUPSCAN_API uint64_t dupscan_overlap_tally(const dupscan_scan *s, size_t i, int side, int what)
{
	return ds_overlap_tally(s ? &s->results : NULL, i, side, what);
}

DUPSCAN_API size_t dupscan_missing_count(const dupscan_scan *s)
{
	return ds_missing_count(s ? &s->results : NULL);
}

DUPSCAN_API uint64_t dupscan_missing_asked(const dupscan_scan *s)
{
	return ds_missing_asked(s ? &s->results : NULL);
}

DUPSCAN_API const dupscan_file *dupscan_missing_file(const dupscan_scan *s, size_t i)
{
	return ds_missing_file(s ? &s->results : NULL, i);
}

DUPSCAN_API int dupscan_find_shared(dupscan_scan *s)
{
	return ds_find_shared(s ? &s->results : NULL);
}

DUPSCAN_API uint64_t dupscan_set_shared_bytes(const dupscan_scan *s, size_t i)
{
	return ds_set_shared_bytes(s ? &s->results : NULL, i);
}

DUPSCAN_API int dupscan_tally_dirs(dupscan_scan *s)
{
	return ds_tally_dirs(s ? &s->results : NULL);
}

DUPSCAN_API size_t dupscan_dir_count(const dupscan_scan *s)
{
	return ds_dir_count(s ? &s->results : NULL);
}

DUPSCAN_API size_t dupscan_dir_path(const dupscan_scan *s, size_t dir, char *buf, size_t cap)
{
	return ds_tally_dir_path(s ? &s->results : NULL, dir, buf, cap);
}

DUPSCAN_API size_t dupscan_dir_parent(const dupscan_scan *s, size_t dir)
{
	return ds_dir_parent(s ? &s->results : NULL, dir);
}

DUPSCAN_API unsigned dupscan_dir_depth(const dupscan_scan *s, size_t dir)
{
	return ds_dir_depth(s ? &s->results : NULL, dir);
}

DUPSCAN_API uint64_t dupscan_dir_tally(const dupscan_scan *s, size_t dir, int what)
{
	return ds_dir_tally(s ? &s->results : NULL, dir, what);
}

DUPSCAN_API int dupscan_add_remote(dupscan_scan *s, const char *label, int read_fd, int write_fd, const char *path, int recurse)
{
	return ds_add_remote(s ? &s->hosts : NULL, label, read_fd, write_fd, path, recurse);
}

DUPSCAN_API void dupscan_remote_bytes(const dupscan_scan *s, uint64_t *received, uint64_t *sent)
{
	ds_remote_bytes(s ? &s->hosts : NULL, received, sent);
}

/* SPDX-License-Identifier: MIT */
/* scan.c: the scan handle, its options and the accessors for its results. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "remote/remote.h"
#include "walk/walk.h"
#include "read/read.h"
#include "match/result.h"
#include "sets/sets.h"
#include "sets/tally.h"
#include "cache/cache_run.h"

/* One per online CPU, at least DS_MIN_THREADS: reads from a cold cache wait
 * on the device, not the CPU, and an SSD (or a virtual disk) serves several
 * at once (a cold scan of 100,000 small files on 2 CPUs: 5.3-6.0 s with 2
 * threads, 2.7 s with 8; warm, no difference measured). On a spinning disk
 * hdd mode reads with one stream whatever this says. */
static int default_threads(void)
{
#if DUPSCAN_THREADS
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < DS_MIN_THREADS ? DS_MIN_THREADS : n > 64 ? 64 : (int)n;
#else
	return 1;
#endif
}

/* What hdd mode's sweep may keep of file contents: DS_SWEEP_BUDGET, or an
 * eighth of the memory on a machine with less than 2 GiB (16 MiB at least). */
static size_t sweep_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t eighth = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 8 : DS_SWEEP_BUDGET;
	uint64_t least = 16u * 1024u * 1024u;
	return (size_t)(eighth > DS_SWEEP_BUDGET ? DS_SWEEP_BUDGET : eighth < least ? least : eighth);
}

DUPSCAN_API int dupscan_create(dupscan_scan **out)
{
	if (!out)
		return -EINVAL;
	dupscan_scan *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return -ENOMEM;
	s->opt.chunk = DS_DEFAULT_CHUNK;
	s->reading.net_probe_ns = DS_NET_PROBE_NS;
	s->opt.threads = default_threads();
	s->opt.order = DUPSCAN_ORDER_NAME;
	s->opt.max_depth = -1;
	s->act_watch = malloc(sizeof(*s->act_watch));
	s->act_readers = calloc(1, sizeof(*s->act_readers));
	if (!s->act_watch || !s->act_readers) {
		free(s->act_watch);
		free(s->act_readers);
		free(s);
		*out = NULL;
		return -ENOMEM;
	}
	*s->act_watch = -1;
	s->reading.sysfs = "/sys";
	s->reading.mountinfo = "/proc/self/mountinfo";
	s->reading.memory_stat_ns = DS_MEMORY_STAT_NS;
	s->opt.sweep_budget = sweep_budget();
	s->remote_timeout_ms = DS_WIRE_TIMEOUT_MS;
	s->cache.racy_ns = DS_RACY_NS;
	ds_tree_init(&s->tree);
	ds_arena_init(&s->out);
	ds_index_init(&s->index);
	return 0;
}

DUPSCAN_API void dupscan_free(dupscan_scan *s)
{
	if (!s)
		return;
	ds_free_results(s);
	ds_tally_free(s); /* (made after a run only: a failed run's results have none) */
	ds_index_free(&s->index);
	ds_tree_free(&s->tree);
	free(s->reading.devkinds);
	ds_report_free(s);
	free(s->cache.path);
	ds_cache_free(s->cache.run);
	ds_cache_log_free(s->cache.log);
	if (*s->act_watch >= 0)
		close(*s->act_watch);
	free(s->act_watch);
	ds_readers_free(s->act_readers);
	ds_pool_stop(s->reading.pool);
	ds_netio_free(s->reading.net);
	ds_remote_free(s);
	free(s);
}

DUPSCAN_API int dupscan_add_path(dupscan_scan *s, const char *path, int recurse)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	return ds_add_arg(&s->tree, path, recurse != 0, false);
}

DUPSCAN_API int dupscan_set_option(dupscan_scan *s, int option, int64_t value)
{
	if (!s)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	bool *flag = NULL;
	switch (option) {
	case DUPSCAN_OPT_ZERO_MATCH: flag = &s->opt.zero_match; break;
	case DUPSCAN_OPT_HARD_LINKS: flag = &s->opt.hard_links; break;
	case DUPSCAN_OPT_FOLLOW_SYMLINKS: flag = &s->opt.follow_symlinks; break;
	case DUPSCAN_OPT_NO_HIDDEN: flag = &s->opt.no_hidden; break;
	case DUPSCAN_OPT_ONE_FILE_SYSTEM: flag = &s->opt.one_fs; break;
	case DUPSCAN_OPT_ISOLATE: flag = &s->opt.isolate; break;
	case DUPSCAN_OPT_PERMISSIONS: flag = &s->opt.permissions; break;
	case DUPSCAN_OPT_QUICK: flag = &s->opt.quick; break;
	case DUPSCAN_OPT_PARTIAL_ONLY: flag = &s->opt.partial_only; break;
	case DUPSCAN_OPT_PARAM_ORDER: flag = &s->opt.param_order; break;
	case DUPSCAN_OPT_REVERSE: flag = &s->opt.reverse; break;
	case DUPSCAN_OPT_DIRS: flag = &s->opt.dir_sets; break;
	case DUPSCAN_OPT_CACHE_TRUST: flag = &s->opt.cache_trust; break;
	case DUPSCAN_OPT_CHUNK_SIZE:
		if (value < DS_MIN_CHUNK || value > DS_MAX_CHUNK)
			return DUPSCAN_E_OPTION;
		s->opt.chunk = (size_t)value;
		s->opt.chunk_given = true;
		return 0;
	case DUPSCAN_OPT_THREADS:
		/* 0: the default (default_threads()); without thread support everything runs in one */
		if (value < 0 || value > 1024)
			return DUPSCAN_E_OPTION;
		s->opt.threads = value == 0 ? default_threads() : (DUPSCAN_THREADS ? (int)value : 1);
		s->opt.threads_given = value != 0;
		return 0;
	case DUPSCAN_OPT_IO:
		if (value != DUPSCAN_IO_AUTO && value != DUPSCAN_IO_HDD && value != DUPSCAN_IO_SSD &&
		    value != DUPSCAN_IO_NET)
			return DUPSCAN_E_OPTION;
		s->opt.io = (int)value;
		return 0;
	case DUPSCAN_OPT_IO_MEMORY:
		if (value != 0 && (value < (1 << 20) || (uint64_t)value > SIZE_MAX / 2))
			return DUPSCAN_E_OPTION;
		s->opt.sweep_budget = value ? (size_t)value : sweep_budget();
		return 0;
	case DUPSCAN_OPT_MAX_DEPTH:
		if (value < -1 || value > UINT32_MAX - 1)
			return DUPSCAN_E_OPTION;
		s->opt.max_depth = value;
		return 0;
	case DUPSCAN_OPT_REMOTE_TIMEOUT:
		if (value < 1 || value > 86400)
			return DUPSCAN_E_OPTION;
		s->remote_timeout_ms = (int)value * 1000;
		return 0;
	case DUPSCAN_OPT_ORDER:
		if (value != DUPSCAN_ORDER_NAME && value != DUPSCAN_ORDER_TIME)
			return DUPSCAN_E_OPTION;
		s->opt.order = (int)value;
		return 0;
	default:
		return DUPSCAN_E_OPTION;
	}
	if (value != 0 && value != 1)
		return DUPSCAN_E_OPTION;
	*flag = value != 0;
	return 0;
}

DUPSCAN_API void dupscan_set_error_callback(dupscan_scan *s, dupscan_error_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.on_error = fn;
	s->cb.error_user = user;
}

DUPSCAN_API void dupscan_set_progress_callback(dupscan_scan *s, dupscan_progress_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.on_progress = fn;
	s->cb.progress_user = user;
}

DUPSCAN_API void dupscan_set_progress_bytes_callback(dupscan_scan *s, dupscan_progress_bytes_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.on_bytes = fn;
	s->cb.bytes_user = user;
}

DUPSCAN_API void dupscan_set_filter(dupscan_scan *s, dupscan_filter_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.filter = fn;
	s->cb.filter_user = user;
}

DUPSCAN_API void dupscan_set_dir_filter(dupscan_scan *s, dupscan_dir_filter_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.dir_filter = fn;
	s->cb.dir_filter_user = user;
}

DUPSCAN_API int dupscan_protect_path(dupscan_scan *s, const char *path)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	int rr = ds_remote_protect(s, path);
	if (rr <= 0)
		return rr;
	return ds_protect_add(s, path);
}

/* (sets/reference.c: what a reference changes in the sets) */
static int mark_reference(dupscan_scan *s, int a)
{
	s->tree.args[a].reference = true;
	s->references = true;
	return a;
}

DUPSCAN_API int dupscan_add_reference(dupscan_scan *s, const char *path, int recurse)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	/* protected first: a path that cannot be is not added */
	int rc = dupscan_protect_path(s, path);
	int a = rc < 0 ? rc : dupscan_add_path(s, path, recurse);
	return a < 0 ? a : mark_reference(s, a);
}

DUPSCAN_API int dupscan_set_reference(dupscan_scan *s, int index)
{
	if (!s || index < 0 || (uint32_t)index >= s->tree.nargs)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	/* (sets/reference.c: what a reference changes in the sets; a remote
	 * path's files are never changed: it needs no protection) */
	struct ds_arg *arg = &s->tree.args[index];
	int rc = arg->remote || arg->reference ? 0 : dupscan_protect_path(s, arg->path);
	return rc < 0 ? rc : mark_reference(s, index);
}

DUPSCAN_API void dupscan_set_stage_callback(dupscan_scan *s, dupscan_stage_fn fn, void *user)
{
	if (!s)
		return;
	s->cb.on_stage = fn;
	s->cb.stage_user = user;
}

DUPSCAN_API void dupscan_cancel(dupscan_scan *s)
{
	if (s)
		atomic_store(&s->canceled, 1);
}

DUPSCAN_API int dupscan_run(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	s->ran = true;
	s->reading.max_open = ds_open_per_thread(s->opt.threads);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->cache.start_ns = ds_ns(now);
	/* one pool for the run: the walk, the first pass and matching take turns on it */
	int rc = s->from_report || ds_scan_pool(s) ? 0 : -ENOMEM;
	if (rc == 0 && s->from_report) {
		/* sets from a report: nothing to walk or match */
		rc = s->tree.nargs || s->opt.dir_sets ? DUPSCAN_E_STATE : ds_report_build(s);
	} else if (rc == 0) {
		rc = s->cache.path ? ds_cache_load(s) : 0;
		if (rc == 0)
			rc = ds_cache_log_start(s);
		ds_progress_phase(s, DUPSCAN_PHASE_WALK, 0, 0);
		/* the other hosts scan while this one does */
		if (rc == 0 && s->nremotes)
			rc = s->opt.permissions ? DUPSCAN_E_OPTION : ds_remote_start(s);
		if (rc == 0)
			rc = ds_walk(s);
		/* a reference on another host is told the sizes it may need */
		if (rc == 0 && s->nremotes)
			rc = ds_remote_sizes(s);
		if (rc == 0 && s->after_walk)
			rc = s->after_walk(s, s->after_walk_user);
		if (rc == 0)
			rc = ds_match(s);
	}
	ds_pool_stop(s->reading.pool);
	s->reading.pool = NULL;
	/* canceled: the classes confirmed so far are still whole sets */
	bool folded = false;
	if (s->nremotes && rc == 0) {
		/* -I once the sets across hosts are joined: a set of one argument
		 * here may join files of another there */
		bool isolate = s->opt.isolate, references = s->references;
		s->opt.isolate = false;
		/* and the sets without a reference file: one there may join them */
		s->references = false;
		rc = ds_build_sets(s);
		s->opt.isolate = isolate;
		s->references = references;
		if (rc == 0)
			rc = ds_remote_finish(s);
		if (rc == 0 && s->opt.dir_sets) {
			struct ds_host_tree *hosts = NULL;
			rc = ds_host_trees(s, &hosts);
			if (rc == 0)
				rc = ds_build_dir_sets(s, hosts, s->nremotes, ds_across_class);
			ds_host_trees_free(hosts, s->nremotes);
		}
		if (rc == 0 && s->cache.path && !s->opt.quick && !s->opt.partial_only)
			rc = ds_cache_save(s, &folded);
	} else if (rc == 0 || rc == DUPSCAN_E_CANCELED) {
		int built = ds_build_sets(s);
		if (built == 0 && s->opt.dir_sets && rc == 0)
			built = ds_build_dir_sets(s, NULL, 0, NULL);
		if (built == 0 && s->cache.path && rc == 0 && !s->opt.quick && !s->opt.partial_only && !s->from_report)
			built = ds_cache_save(s, &folded);
		if (built < 0)
			rc = built;
	}
	/* saved: the log's records are in the cache file, and it goes; not
	 * (canceled, failed, -Q, -T): what was worked out stays in it for the
	 * next run */
	ds_cache_log_close(s, folded);
	if (rc < 0 && rc != DUPSCAN_E_CANCELED) {
		/* a failed run must not leave half-built results visible */
		ds_free_results(s);
	}
	return rc;
}

DUPSCAN_API int dupscan_io_mode(const dupscan_scan *s)
{
	return s ? s->reading.io_mode : DUPSCAN_IO_AUTO;
}

DUPSCAN_API int dupscan_io_inflight(const dupscan_scan *s)
{
	int peak = s && s->reading.net ? ds_netio_peak(s->reading.net) : 1;
	return peak > 1 ? peak : 1;
}

DUPSCAN_API uint64_t dupscan_error_count(const dupscan_scan *s)
{
	return s ? s->errors : 0;
}

DUPSCAN_API int dupscan_set_proof(const dupscan_set *set, int64_t *proven_ns)
{
	if (!set)
		return -EINVAL;
	if (proven_ns)
		*proven_ns = set->cached ? set->proven_ns : 0;
	if (set->report)
		return DUPSCAN_PROOF_REPORT;
	return set->cached ? DUPSCAN_PROOF_CACHE : DUPSCAN_PROOF_SCAN;
}

DUPSCAN_API int dupscan_set_is_dirs(const dupscan_set *set)
{
	return set && set->dirs;
}

DUPSCAN_API size_t dupscan_set_count(const dupscan_scan *s)
{
	return s ? s->nsets : 0;
}

DUPSCAN_API const dupscan_set *dupscan_get_set(const dupscan_scan *s, size_t i)
{
	return s && i < s->nsets ? &s->sets[i] : NULL;
}

DUPSCAN_API size_t dupscan_set_file_count(const dupscan_set *set)
{
	return set ? set->count : 0;
}

DUPSCAN_API const dupscan_file *dupscan_set_file(const dupscan_set *set, size_t i)
{
	return set && i < set->count ? &set->files[i] : NULL;
}

DUPSCAN_API size_t dupscan_unique_count(const dupscan_scan *s)
{
	if (!s || !s->ran)
		return 0;
	/* built on first use: most callers never ask for unique files, and the
	 * other hosts' are asked for only then */
	if (ds_build_uniques((dupscan_scan *)s) < 0 || (s->remote_uniques && ds_remote_uniques((dupscan_scan *)s) < 0))
		return 0;
	return s->nuniques;
}

/* (here, with the stages that feed it: this host's files from the sets,
 * the other hosts' from their remotes) */
DUPSCAN_API int dupscan_find_missing(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (!s->ran || !s->references)
		return DUPSCAN_E_STATE;
	for (uint32_t a = 0; a < s->tree.nargs; a++)
		if (s->tree.args[a].reference && s->tree.args[a].unread)
			return DUPSCAN_E_REFERENCE;
	if (s->missing_built)
		return 0;
	int rc = ds_build_missing(s);
	/* the other hosts' files under no reference, named if they are not */
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		s->nasked += ds_remote_asked(s, s->remotes[k]);
		rc = ds_remote_missing(s, s->remotes[k]);
	}
	if (rc == 0)
		rc = ds_sort(s->missing, s->nmissing, sizeof(*s->missing), ds_cmp_file, s);
	if (rc == 0)
		ds_missing_built(s);
	return rc;
}

DUPSCAN_API const dupscan_file *dupscan_unique_file(const dupscan_scan *s, size_t i)
{
	if (i >= dupscan_unique_count(s))
		return NULL;
	return &s->uniques[i];
}

DUPSCAN_API const char *dupscan_file_path(const dupscan_file *f) { return f ? f->path : NULL; }
DUPSCAN_API uint64_t dupscan_file_size(const dupscan_file *f) { return f ? ds_rec_size(f->scan, f->rec) : 0; }
DUPSCAN_API uint64_t dupscan_file_dev(const dupscan_file *f) { return f ? ds_rec_dev(f->scan, f->rec) : 0; }
DUPSCAN_API uint64_t dupscan_file_ino(const dupscan_file *f) { return f ? ds_rec_ino(f->scan, f->rec) : 0; }
DUPSCAN_API int64_t dupscan_file_mtime_ns(const dupscan_file *f) { return f ? f->rec->mtime_ns : 0; }
DUPSCAN_API int64_t dupscan_file_ctime_ns(const dupscan_file *f) { return f ? f->rec->ctime_ns : 0; }
DUPSCAN_API uint32_t dupscan_file_mode(const dupscan_file *f) { return f ? ds_rec_mode(f->scan, f->rec) : 0; }
DUPSCAN_API int dupscan_file_arg_index(const dupscan_file *f) { return f ? (int)ds_file_arg(f) : -1; }
DUPSCAN_API const char *dupscan_file_relpath(const dupscan_file *f) { return f ? f->path + f->rel : NULL; }
DUPSCAN_API int dupscan_file_is_protected(const dupscan_file *f)
{
	return f && (f->rec->flags & DS_F_PROTECTED) != 0;
}

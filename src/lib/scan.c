/* SPDX-License-Identifier: MIT */
/* scan.c: the scan handle, its options and the accessors for its results. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "scan.h"
#include "remote/remote.h"
#include "walk/walk.h"
#include "read/read.h"
#include "match/result.h"
#include "sets/sets.h"
#include "sets/tally.h"
#include "cache/cache_run.h"
#include "actions/acts.h"
#include "records/spill.h"

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

void ds_scan_wire(dupscan_scan *s)
{
	s->tree.core = &s->core;
	s->tree.scan = s;
	s->cache = (struct ds_cache_state){ .core = &s->core, .tree = &s->tree };
	s->reading = (struct ds_reading){ .core = &s->core, .tree = &s->tree, .cache = &s->cache };
	s->walk = (struct ds_walk){ .core = &s->core, .tree = &s->tree, .reading = &s->reading };
	s->match = (struct ds_match){ .core = &s->core, .tree = &s->tree, .cache = &s->cache, .reading = &s->reading };
	s->results = (struct ds_results){ .core = &s->core, .tree = &s->tree, .cache = &s->cache };
	s->hosts = (struct ds_hosts){ .core = &s->core, .tree = &s->tree, .reading = &s->reading, .results = &s->results };
}

DUPSCAN_API int dupscan_create(dupscan_scan **out)
{
	if (!out)
		return -EINVAL;
	dupscan_scan *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return -ENOMEM;
	ds_scan_wire(s);
	s->core.opt.chunk = DS_DEFAULT_CHUNK;
	s->reading.net_probe_ns = DS_NET_PROBE_NS;
	s->core.opt.threads = default_threads();
	s->core.opt.order = DUPSCAN_ORDER_NAME;
	s->core.opt.max_depth = -1;
	s->tree.acts = ds_acts_new();
	if (!s->tree.acts) {
		free(s);
		*out = NULL;
		return -ENOMEM;
	}
	s->core.sysfs = "/sys";
	s->core.mountinfo = "/proc/self/mountinfo";
	s->reading.memory_stat_ns = DS_MEMORY_STAT_NS;
	s->core.opt.sweep_budget = sweep_budget();
	s->core.opt.heads_budget = DS_FIRST_PASS_BUDGET;
	s->hosts.remote_timeout_ms = DS_WIRE_TIMEOUT_MS;
	s->cache.racy_ns = DS_RACY_NS;
	ds_tree_init(&s->tree);
	ds_arena_init(&s->tree.out);
	ds_index_init(&s->tree.index);
	return 0;
}

DUPSCAN_API void dupscan_free(dupscan_scan *s)
{
	if (!s)
		return;
	ds_free_results(&s->results);
	ds_tally_free(&s->results); /* (made after a run only: a failed run's results have none) */
	ds_index_free(&s->tree.index);
	ds_spill_free(&s->tree);
	ds_tree_free(&s->tree);
	free(s->reading.devkinds);
	ds_report_free(&s->walk);
	free(s->cache.path);
	ds_cache_free(s->cache.run);
	ds_cache_log_free(s->cache.log);
	ds_acts_free(s->tree.acts);
	ds_pool_stop(s->core.pool);
	ds_netio_free(s->reading.net);
	ds_remote_free(&s->hosts);
	free(s->temp_dir);
	free(s);
}

DUPSCAN_API int dupscan_set_temp_dir(dupscan_scan *s, const char *path)
{
	if (!s)
		return -EINVAL;
	if (s->core.ran)
		return DUPSCAN_E_STATE;
	char *dup = path && *path ? strdup(path) : NULL;
	if (path && *path && !dup)
		return -ENOMEM;
	free(s->temp_dir);
	s->temp_dir = dup;
	return 0;
}

/* A budget for the records: the spill's state, refusing to spill where the
 * scan must hold every record (the directory sets and a served client's
 * tree are made from all of them); a served scan keeps its unique files
 * too (and a scan with other hosts those of their sizes: ds_remote_early()). */
static int budget_records(dupscan_scan *s)
{
	uint64_t budget = s->core.opt.max_memory;
	if (!budget)
		return 0;
	/* hdd mode's reading keeps contents (the sweep) and first blocks (the
	 * first pass) within shares of the budget too (records/spill.h) */
	uint64_t sweep = budget / DS_SPILL_SWEEP_SHARE, heads = budget / DS_SPILL_HEADS_SHARE;
	const uint64_t least = 1u << 20; /* (DUPSCAN_OPT_IO_MEMORY's floor) */
	if (s->core.opt.sweep_budget > sweep)
		s->core.opt.sweep_budget = (size_t)(sweep < least ? least : sweep);
	if (s->core.opt.heads_budget > heads)
		s->core.opt.heads_budget = (size_t)(heads < least ? least : heads);
	/* (--ignore-metadata's payloads are kept by record, which a band renumbers) */
	bool refuse = s->core.opt.dir_sets || s->every_record || s->core.opt.ignore_metadata;
	int rc = ds_spill_new(&s->tree, s->core.opt.max_memory, DS_SPILL_HDD, s->temp_dir, refuse);
	if (rc == 0 && (s->served || s->core.opt.keep_unique == DUPSCAN_KEEP_ALL))
		ds_spill_keep_unique(&s->tree);
	else if (rc == 0 && s->core.opt.keep_unique == DUPSCAN_KEEP_OTHERS)
		ds_spill_keep_others(&s->tree);
	/* the unique files leaving with their bands still count in their
	 * directories' figures (dupscan_tally_dirs()) */
	if (rc == 0)
		ds_spill_on_drop(&s->tree, ds_tally_gone, &s->results);
	return rc;
}

DUPSCAN_API int dupscan_add_path(dupscan_scan *s, const char *path, int recurse)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->core.ran)
		return DUPSCAN_E_STATE;
	return ds_add_arg(&s->tree, path, recurse != 0, false);
}

DUPSCAN_API int dupscan_set_option(dupscan_scan *s, int option, int64_t value)
{
	if (!s)
		return -EINVAL;
	if (s->core.ran)
		return DUPSCAN_E_STATE;
	bool *flag = NULL;
	switch (option) {
	case DUPSCAN_OPT_ZERO_MATCH: flag = &s->core.opt.zero_match; break;
	case DUPSCAN_OPT_HARD_LINKS: flag = &s->core.opt.hard_links; break;
	case DUPSCAN_OPT_FOLLOW_SYMLINKS: flag = &s->core.opt.follow_symlinks; break;
	case DUPSCAN_OPT_NO_HIDDEN: flag = &s->core.opt.no_hidden; break;
	case DUPSCAN_OPT_ONE_FILE_SYSTEM: flag = &s->core.opt.one_fs; break;
	case DUPSCAN_OPT_ISOLATE: flag = &s->core.opt.isolate; break;
	case DUPSCAN_OPT_PERMISSIONS: flag = &s->core.opt.permissions; break;
	case DUPSCAN_OPT_QUICK: flag = &s->core.opt.quick; break;
	case DUPSCAN_OPT_PARTIAL_ONLY: flag = &s->core.opt.partial_only; break;
	case DUPSCAN_OPT_PARAM_ORDER: flag = &s->core.opt.param_order; break;
	case DUPSCAN_OPT_REVERSE: flag = &s->core.opt.reverse; break;
	case DUPSCAN_OPT_DIRS: flag = &s->core.opt.dir_sets; break;
	case DUPSCAN_OPT_CACHE_TRUST: flag = &s->core.opt.cache_trust; break;
	case DUPSCAN_OPT_IGNORE_METADATA: flag = &s->core.opt.ignore_metadata; break;
	case DUPSCAN_OPT_CHUNK_SIZE:
		if (value < DS_MIN_CHUNK || value > DS_MAX_CHUNK)
			return DUPSCAN_E_OPTION;
		s->core.opt.chunk = (size_t)value;
		s->core.opt.chunk_given = true;
		return 0;
	case DUPSCAN_OPT_THREADS:
		/* 0: the default (default_threads()); without thread support everything runs in one */
		if (value < 0 || value > 1024)
			return DUPSCAN_E_OPTION;
		s->core.opt.threads = value == 0 ? default_threads() : (DUPSCAN_THREADS ? (int)value : 1);
		s->core.opt.threads_given = value != 0;
		return 0;
	case DUPSCAN_OPT_IO:
		if (value != DUPSCAN_IO_AUTO && value != DUPSCAN_IO_HDD && value != DUPSCAN_IO_SSD &&
		    value != DUPSCAN_IO_NET)
			return DUPSCAN_E_OPTION;
		s->core.opt.io = (int)value;
		return 0;
	case DUPSCAN_OPT_IO_MEMORY:
		if (value != 0 && (value < (1 << 20) || (uint64_t)value > SIZE_MAX / 2))
			return DUPSCAN_E_OPTION;
		s->core.opt.sweep_budget = value ? (size_t)value : sweep_budget();
		return 0;
	case DUPSCAN_OPT_MAX_DEPTH:
		if (value < -1 || value > UINT32_MAX - 1)
			return DUPSCAN_E_OPTION;
		s->core.opt.max_depth = value;
		return 0;
	case DUPSCAN_OPT_REMOTE_TIMEOUT:
		if (value < 1 || value > 86400)
			return DUPSCAN_E_OPTION;
		s->hosts.remote_timeout_ms = (int)value * 1000;
		return 0;
	case DUPSCAN_OPT_MAX_MEMORY:
		if (value != 0 && value < (16 << 20))
			return DUPSCAN_E_OPTION;
		s->core.opt.max_memory = (uint64_t)value;
		return 0;
	case DUPSCAN_OPT_KEEP_UNIQUE:
		if (value != DUPSCAN_KEEP_NONE && value != DUPSCAN_KEEP_ALL && value != DUPSCAN_KEEP_OTHERS)
			return DUPSCAN_E_OPTION;
		s->core.opt.keep_unique = (int)value;
		return 0;
	case DUPSCAN_OPT_ORDER:
		if (value != DUPSCAN_ORDER_NAME && value != DUPSCAN_ORDER_TIME)
			return DUPSCAN_E_OPTION;
		s->core.opt.order = (int)value;
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
	s->core.cb.on_error = fn;
	s->core.cb.error_user = user;
}

DUPSCAN_API void dupscan_set_progress_callback(dupscan_scan *s, dupscan_progress_fn fn, void *user)
{
	if (!s)
		return;
	s->core.cb.on_progress = fn;
	s->core.cb.progress_user = user;
}

DUPSCAN_API void dupscan_set_progress_bytes_callback(dupscan_scan *s, dupscan_progress_bytes_fn fn, void *user)
{
	if (!s)
		return;
	s->core.cb.on_bytes = fn;
	s->core.cb.bytes_user = user;
}

DUPSCAN_API void dupscan_set_filter(dupscan_scan *s, dupscan_filter_fn fn, void *user)
{
	if (!s)
		return;
	s->core.cb.filter = fn;
	s->core.cb.filter_user = user;
}

DUPSCAN_API void dupscan_set_dir_filter(dupscan_scan *s, dupscan_dir_filter_fn fn, void *user)
{
	if (!s)
		return;
	s->core.cb.dir_filter = fn;
	s->core.cb.dir_filter_user = user;
}

DUPSCAN_API int dupscan_protect_path(dupscan_scan *s, const char *path)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->core.ran)
		return DUPSCAN_E_STATE;
	int rr = ds_remote_protect(&s->hosts, path);
	if (rr <= 0)
		return rr;
	return ds_protect_add(&s->tree, path);
}

/* (sets/reference.c: what a reference changes in the sets) */
static int mark_reference(dupscan_scan *s, int a)
{
	s->tree.args[a].reference = true;
	s->tree.references = true;
	return a;
}

DUPSCAN_API int dupscan_add_reference(dupscan_scan *s, const char *path, int recurse)
{
	if (!s || !path || !*path)
		return -EINVAL;
	if (s->core.ran)
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
	if (s->core.ran)
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
	s->core.cb.on_stage = fn;
	s->core.cb.stage_user = user;
}

DUPSCAN_API void dupscan_cancel(dupscan_scan *s)
{
	if (s)
		atomic_store(&s->core.canceled, 1);
}

/* ds_across_class() as the directory sets ask it, by the scan's handle. */
static uint64_t across_class(const dupscan_scan *s, uint64_t raw)
{
	return ds_across_class(&s->hosts, raw);
}

/* The run's stages up to matching: the budget and the cache set up, the
 * walk (the other hosts scanning meanwhile), what a served scan does then,
 * and matching. @return 0 or a negative code. */
static int walk_and_match(dupscan_scan *s)
{
	int rc = budget_records(s);
	if (rc == 0 && s->cache.path)
		rc = ds_cache_load(&s->cache);
	if (rc == 0)
		rc = ds_cache_log_start(&s->cache);
	/* under a budget, the cache's share (a killed run's log whole) */
	if (rc == 0 && s->cache.run && s->tree.spill)
		ds_spill_hold(&s->tree, DS_CACHE_PER_REC, ds_cache_held(&s->cache));
	ds_progress_phase(&s->core, DUPSCAN_PHASE_WALK, 0, 0);
	/* the other hosts scan while this one does */
	if (rc == 0 && s->hosts.nremotes)
		rc = s->core.opt.permissions ? DUPSCAN_E_OPTION : ds_remote_start(&s->hosts);
	if (rc == 0)
		rc = ds_walk(&s->walk);
	/* a reference on another host is told the sizes it may need */
	if (rc == 0 && s->hosts.nremotes)
		rc = ds_remote_sizes(&s->hosts);
	if (rc == 0 && s->after_walk)
		rc = s->after_walk(s, s->after_walk_user);
	/* past the budget, the other hosts' results first: each band then keeps
	 * only the files that may match theirs */
	if (rc == 0 && s->hosts.nremotes && ds_spilled(&s->tree))
		rc = ds_remote_early(&s->hosts);
	if (rc == 0)
		rc = ds_match(&s->match);
	return rc;
}

/* The sets (across hosts once the other hosts' results are joined), the
 * directory sets, and the cache saved, after the stages ended with rc
 * (canceled: the classes confirmed so far are still whole sets); *folded:
 * the cache file now holds what its log held. @return rc, or the code of
 * what failed here. */
static int build_results(dupscan_scan *s, int rc, bool *folded)
{
	if (s->hosts.nremotes && rc == 0) {
		/* -I once the sets across hosts are joined: a set of one argument
		 * here may join files of another there */
		bool isolate = s->core.opt.isolate, references = s->tree.references;
		s->core.opt.isolate = false;
		/* and the sets without a reference file: one there may join them */
		s->tree.references = false;
		rc = ds_build_sets(&s->results);
		s->core.opt.isolate = isolate;
		s->tree.references = references;
		if (rc == 0)
			rc = ds_remote_finish(&s->hosts);
		if (rc == 0 && s->core.opt.dir_sets) {
			struct ds_host_tree *hosts = NULL;
			rc = ds_host_trees(&s->hosts, &hosts);
			if (rc == 0)
				rc = ds_build_dir_sets(&s->results, hosts, s->hosts.nremotes, across_class);
			ds_host_trees_free(hosts, s->hosts.nremotes);
		}
		if (rc == 0 && s->cache.path && !s->core.opt.quick && !s->core.opt.partial_only)
			rc = ds_cache_save(&s->cache, folded);
	} else if (rc == 0 || rc == DUPSCAN_E_CANCELED) {
		int built = ds_build_sets(&s->results);
		if (built == 0 && s->core.opt.dir_sets && rc == 0)
			built = ds_build_dir_sets(&s->results, NULL, 0, NULL);
		if (built == 0 && s->cache.path && rc == 0 && !s->core.opt.quick && !s->core.opt.partial_only && !s->tree.from_report)
			built = ds_cache_save(&s->cache, folded);
		if (built < 0)
			rc = built;
	}
	return rc;
}

DUPSCAN_API int dupscan_run(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (s->core.ran)
		return DUPSCAN_E_STATE;
	/* payloads are matched here, from this host's files as scanned: not
	 * with hashes of whole files (a cache), other hosts, a report, nor in
	 * directory sets (a folder of retagged songs is not a copy) */
	if (s->core.opt.ignore_metadata && (s->cache.path || s->hosts.nremotes || s->tree.from_report || s->core.opt.dir_sets))
		return DUPSCAN_E_OPTION;
	s->core.ran = true;
	s->reading.max_open = ds_open_per_thread(s->core.opt.threads);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->cache.start_ns = ds_ns(now);
	/* one pool for the run: the walk, the first pass and matching take turns on it */
	int rc = s->tree.from_report || ds_scan_pool(&s->core) ? 0 : -ENOMEM;
	if (rc == 0 && s->tree.from_report) {
		/* sets from a report: nothing to walk or match */
		rc = s->tree.nargs || s->core.opt.dir_sets ? DUPSCAN_E_STATE : ds_report_build(&s->walk);
	} else if (rc == 0) {
		rc = walk_and_match(s);
	}
	ds_pool_stop(s->core.pool);
	s->core.pool = NULL;
	/* canceled: the classes confirmed so far are still whole sets */
	bool folded = false;
	rc = build_results(s, rc, &folded);
	/* saved: the log's records are in the cache file, and it goes; not
	 * (canceled, failed, -Q, -T): what was worked out stays in it for the
	 * next run */
	ds_cache_log_close(&s->cache, folded);
	if (rc < 0 && rc != DUPSCAN_E_CANCELED) {
		/* a failed run must not leave half-built results visible */
		ds_free_results(&s->results);
	}
	return rc;
}

DUPSCAN_API uint64_t dupscan_spilled(const dupscan_scan *s)
{
	return s ? ds_spill_count(&s->tree) : 0;
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
	return s ? s->core.errors : 0;
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
	return s ? s->results.nsets : 0;
}

DUPSCAN_API const dupscan_set *dupscan_get_set(const dupscan_scan *s, size_t i)
{
	return s && i < s->results.nsets ? &s->results.sets[i] : NULL;
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
	if (!s || !s->core.ran || (ds_spilled(&s->tree) && s->core.opt.keep_unique != DUPSCAN_KEEP_ALL))
		return 0; /* (spilled: the unique files are not kept) */
	/* built on first use: most callers never ask for unique files, and the
	 * other hosts' are asked for only then */
	if (ds_build_uniques(&((dupscan_scan *)s)->results) < 0 || (s->hosts.remote_uniques && ds_remote_uniques(&((dupscan_scan *)s)->hosts) < 0))
		return 0;
	return s->results.nuniques;
}

/* (here, with the stages that feed it: this host's files from the sets,
 * the other hosts' from their remotes) */
DUPSCAN_API int dupscan_find_missing(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (!s->core.ran || !s->tree.references)
		return DUPSCAN_E_STATE;
	if (ds_spilled(&s->tree) && s->core.opt.keep_unique == DUPSCAN_KEEP_NONE)
		return DUPSCAN_E_MEMORY;
	for (uint32_t a = 0; a < s->tree.nargs; a++)
		if (s->tree.args[a].reference && s->tree.args[a].unread)
			return DUPSCAN_E_REFERENCE;
	if (s->results.missing_built)
		return 0;
	int rc = ds_build_missing(&s->results);
	/* the other hosts' files under no reference, named if they are not */
	for (size_t k = 0; rc == 0 && k < s->hosts.nremotes; k++) {
		s->results.nasked += ds_remote_asked(&s->hosts, s->hosts.remotes[k]);
		rc = ds_remote_missing(&s->hosts, s->hosts.remotes[k]);
	}
	if (rc == 0)
		rc = ds_sort(s->results.missing, s->results.nmissing, sizeof(*s->results.missing), ds_cmp_file, s);
	if (rc == 0)
		ds_missing_built(&s->results);
	return rc;
}

DUPSCAN_API const dupscan_file *dupscan_unique_file(const dupscan_scan *s, size_t i)
{
	if (i >= dupscan_unique_count(s))
		return NULL;
	return &s->results.uniques[i];
}

DUPSCAN_API const char *dupscan_file_path(const dupscan_file *f) { return f ? f->path : NULL; }
DUPSCAN_API uint64_t dupscan_file_size(const dupscan_file *f) { return f ? ds_rec_size(f->tree, f->rec) : 0; }
DUPSCAN_API uint64_t dupscan_file_dev(const dupscan_file *f) { return f ? ds_rec_dev(f->tree, f->rec) : 0; }
DUPSCAN_API uint64_t dupscan_file_ino(const dupscan_file *f) { return f ? ds_rec_ino(f->tree, f->rec) : 0; }
DUPSCAN_API int64_t dupscan_file_mtime_ns(const dupscan_file *f) { return f ? f->rec->mtime_ns : 0; }
DUPSCAN_API int64_t dupscan_file_ctime_ns(const dupscan_file *f) { return f ? f->rec->ctime_ns : 0; }
DUPSCAN_API uint32_t dupscan_file_mode(const dupscan_file *f) { return f ? ds_rec_mode(f->tree, f->rec) : 0; }
DUPSCAN_API int dupscan_file_arg_index(const dupscan_file *f) { return f ? (int)ds_file_arg(f) : -1; }
DUPSCAN_API const char *dupscan_file_relpath(const dupscan_file *f) { return f ? f->path + f->rel : NULL; }
DUPSCAN_API int dupscan_file_media(const dupscan_file *f, uint64_t *bytes)
{
	const struct ds_pay *p = f && !(f->idx & DS_OUTSIDE) && f->tree->pay.at ?
					 ds_rec_payload(f->tree, ds_rec_rep(f->tree, f->idx)) : NULL;
	if (bytes)
		*bytes = p ? p->len : dupscan_file_size(f);
	return p ? p->format : DUPSCAN_MEDIA_OTHER;
}

DUPSCAN_API int dupscan_file_is_protected(const dupscan_file *f)
{
	return f && (f->rec->flags & DS_F_PROTECTED) != 0;
}


/* SPDX-License-Identifier: MIT */
/* dupscan.h: the whole public API of libdupscan, a library that finds duplicate files. */
#ifndef DUPSCAN_H
#define DUPSCAN_H

/*
 * Example: print every set of duplicate files under a directory.
 *
 *   #include <stdio.h>
 *   #include <dupscan.h>
 *
 *   static void on_error(void *user, const char *path, int code)
 *   {
 *       fprintf(stderr, "%s: %s\n", path, dupscan_strerror(code));
 *   }
 *
 *   int main(int argc, char **argv)
 *   {
 *       dupscan_scan *scan = NULL;
 *       int rc = dupscan_create(&scan);
 *       if (rc < 0) return 1;
 *       dupscan_set_error_callback(scan, on_error, NULL);
 *       for (int i = 1; i < argc; i++)
 *           dupscan_add_path(scan, argv[i], 1);          // 1: recurse
 *       rc = dupscan_run(scan);
 *       if (rc < 0) { fprintf(stderr, "%s\n", dupscan_strerror(rc)); dupscan_free(scan); return 1; }
 *       for (size_t s = 0; s < dupscan_set_count(scan); s++) {
 *           const dupscan_set *set = dupscan_get_set(scan, s);
 *           for (size_t f = 0; f < dupscan_set_file_count(set); f++)
 *               puts(dupscan_file_path(dupscan_set_file(set, f)));
 *           putchar('\n');
 *       }
 *       dupscan_free(scan);                                // frees every set and path too
 *       return 0;
 *   }
 *
 * How files are matched, each step only for files still in play: walk (regular
 * files only), group by size, XXH64 of the first 4096 bytes, XXH64 of the whole
 * file continuing the same streaming state, an index keyed on (size, partial
 * hash, full hash), and a byte-by-byte comparison before any file is reported;
 * except where the caller asks for less (DUPSCAN_OPT_QUICK: hashes only;
 * DUPSCAN_OPT_PARTIAL_ONLY: the first block's hash only) or trusts proofs a
 * cache recorded (DUPSCAN_OPT_CACHE_TRUST; see dupscan_set_proof()). The
 * action functions compare a pair byte by byte before changing anything
 * whenever this run did not.
 *
 * Threads: a dupscan_scan is not shared between threads, but two handles are
 * fully independent; the library keeps no global mutable state. It never
 * prints and never exits; errors are returned as codes and per-file trouble
 * is handed to the error callback.
 */

#include <stddef.h>
#include <stdint.h>

#include "dupscan_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define DUPSCAN_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define DUPSCAN_API __attribute__((visibility("default")))
#else
#  define DUPSCAN_API
#endif

/* Error codes. Functions return 0 or a negative number: either -errno (for
 * example -ENOENT, -EACCES, -ENOMEM) or one of these library codes. Their
 * values never change once released. */
enum dupscan_error {
	DUPSCAN_E_CHANGED = -1000, /* file changed between the walk and its reading (device, inode, size, mtime or ctime) */
	DUPSCAN_E_NOTREG  = -1001, /* argument is neither a regular file nor a directory */
	DUPSCAN_E_STATE   = -1002, /* call not allowed now (e.g. add_path after run) */
	DUPSCAN_E_OPTION  = -1003, /* unknown option or value out of range */
	DUPSCAN_E_SHORT   = -1004, /* file ended before its scanned size */
	DUPSCAN_E_CANCELED = -1005, /* dupscan_cancel() stopped the scan; results so far are kept */
	DUPSCAN_E_ALREADY = -1006, /* nothing to do: already the same file or sharing its extents */
	DUPSCAN_E_SAME_ENTRY = -1007, /* both paths name one directory entry: acting would lose it */
	DUPSCAN_E_DIFFERS = -1008, /* the contents differ (a comparison, or the filesystem, found it) */
	DUPSCAN_E_LEFTOVER = -1009, /* a ".dupscan-tmp-*" name left by an interrupted action; not scanned */
	DUPSCAN_E_PROTECTED = -1010, /* the file is under a protected path: never changed */
	DUPSCAN_E_CACHE = -1011,    /* the hash cache file is damaged or of another version: ignored */
	DUPSCAN_E_PROTOCOL = -1012, /* a remote peer sent what the protocol does not allow, or speaks
	                             * another version of it (since 0.8) */
	DUPSCAN_E_REMOTE = -1013,   /* a remote peer went away, fell silent past the timeout, or
	                             * failed (since 0.8) */
	DUPSCAN_E_REMOTE_FILE = -1014, /* the file is on another host: only local files are changed,
	                                * and links need both files on one (since 0.8) */
	/* Why an action found a file changed since the scan: told through the
	 * error callback with the changed file's path (HOST:PATH on another
	 * host) just before the action returns DUPSCAN_E_CHANGED (since 0.9) */
	DUPSCAN_E_CHANGED_TYPE = -1015,    /* no longer a regular file */
	DUPSCAN_E_CHANGED_INODE = -1016,   /* another file at its name (device or inode differ) */
	DUPSCAN_E_CHANGED_SIZE = -1017,    /* its size */
	DUPSCAN_E_CHANGED_MTIME = -1018,   /* its modification time */
	DUPSCAN_E_CHANGED_CTIME = -1019,   /* its inode's change time only: rewritten with its mtime
	                                    * put back, or its owner, mode or links changed */
	DUPSCAN_E_CHANGED_WRITTEN = -1020, /* written to while the action ran (inotify saw it) */
	DUPSCAN_E_UNTOLD = -1021,   /* the two files have one inode number where the filesystem
	                             * does not keep numbers (see dupscan_same_file()): they may be
	                             * one file, so it is not removed or moved (since 0.9) */
	DUPSCAN_E_TOO_MANY = -1022, /* more pairs of directories to weigh than the scan has files
	                             * (many directories holding copies of the same files:
	                             * dupscan_find_overlaps()) (since 0.10) */
	DUPSCAN_E_LINK_UNCHECKED = -1023, /* a hard link where the filesystem does not keep inode
	                                   * numbers: that the link reaches the kept file cannot be
	                                   * checked, so none is made (since 0.10) */
	DUPSCAN_E_TWO_SETS = -1024, /* dupscan_report_file() gave one file (device and inode, where
	                             * the filesystem keeps its numbers) in two sets: the run
	                             * stops, naming it (since 0.10) */
	/* Why a link would change who may read or write a path: the duplicate's
	 * differs from the kept file's (dupscan_access_differs(); lifted by
	 * DUPSCAN_ACT_IGNORE_ACCESS) (since 0.10) */
	DUPSCAN_E_ACCESS_OWNER = -1025, /* its owner */
	DUPSCAN_E_ACCESS_GROUP = -1026, /* its group */
	DUPSCAN_E_ACCESS_MODE = -1027,  /* its permission bits (and setuid, setgid, sticky) */
	DUPSCAN_E_ACCESS_ACL = -1028,   /* its POSIX ACL (system.posix_acl_access) */
	DUPSCAN_E_ACCESS_LABEL = -1029, /* its security labels (security.* attributes) */
	/* Why a duplicate is not removed or moved away (lifted by
	 * DUPSCAN_ACT_IGNORE_ACCESS) (since 0.10) */
	DUPSCAN_E_ACCESS_READ = -1030,  /* someone who may read it (its owner, its group, others,
	                                 * a user or group its ACL names) could not read the
	                                 * kept file */
	DUPSCAN_E_ACCESS_UNTOLD = -1031, /* the kept file is on another host and the duplicate is
	                                  * another user's: whether they could read it there
	                                  * cannot be told */
	DUPSCAN_E_REFERENCE = -1032, /* a reference path (dupscan_add_reference()) could not be
	                              * scanned: no file can be called missing from it (since 0.10) */
	DUPSCAN_E_NOT_CACHE = -1033, /* the cache's path holds another file (not a dupscan hash
	                             * cache): left as it is, the run goes on without a cache
	                             * (since 0.10) */
	DUPSCAN_E_MEMORY = -1034,   /* the records passed the memory budget
	                             * (DUPSCAN_OPT_MAX_MEMORY) where the scan must hold them all
	                             * (sets of directories, unique or missing files) (since 0.11) */
	DUPSCAN_E_PAYLOAD_ONLY = -1035 /* the two files share their picture or sound
	                                * (DUPSCAN_OPT_IGNORE_METADATA), not every byte: their
	                                * tags differ, and a link would lose one file's; not
	                                * linked (since 0.12) */
};

/* Flags for the action functions. */
#define DUPSCAN_ACT_NO_CHANGE_CHECK 0x1u /* skip re-checking that files are as scanned (jdupes -t) */
#define DUPSCAN_ACT_DRY_RUN 0x2u         /* check everything, change nothing */
/* link even where the path would change owner, group, mode, ACL or security
 * labels (see dupscan_access_differs()) (since 0.10) */
#define DUPSCAN_ACT_IGNORE_ACCESS 0x4u

/* Kinds of link for dupscan_replace_with_link(). */
enum dupscan_link_kind {
	DUPSCAN_LINK_HARD = 1, /* a hard link to the kept file */
	DUPSCAN_LINK_SOFT = 2  /* a relative symlink to the kept file */
};

/* Options for dupscan_set_option(). Booleans take 0 or 1. */
enum dupscan_option {
	DUPSCAN_OPT_ZERO_MATCH = 1,  /* zero-length files are duplicates of each other (jdupes -z) */
	DUPSCAN_OPT_HARD_LINKS,      /* list every path of a hard-linked inode (jdupes -H) */
	DUPSCAN_OPT_FOLLOW_SYMLINKS, /* follow symlinks to files and directories (jdupes -s) */
	DUPSCAN_OPT_NO_HIDDEN,       /* skip names starting with '.' (jdupes -A) */
	DUPSCAN_OPT_ONE_FILE_SYSTEM, /* never match files on different devices (jdupes -1) */
	DUPSCAN_OPT_ISOLATE,         /* a set's other files come from other paths than its first (jdupes -I) */
	DUPSCAN_OPT_PERMISSIONS,     /* files with different mode, owner or group never match (jdupes -p) */
	DUPSCAN_OPT_QUICK,           /* skip byte-by-byte confirmation: hashes only (jdupes -Q) */
	DUPSCAN_OPT_PARTIAL_ONLY,    /* match on size and first-block hash only (jdupes -TT) */
	DUPSCAN_OPT_CHUNK_SIZE,      /* read size in bytes, 4096..16777216 (jdupes -C) */
	DUPSCAN_OPT_ORDER,           /* DUPSCAN_ORDER_NAME (default) or DUPSCAN_ORDER_TIME (jdupes -o) */
	DUPSCAN_OPT_PARAM_ORDER,     /* order by the added path's index first (jdupes -O) */
	DUPSCAN_OPT_REVERSE,         /* reverse the order (jdupes -i) */
	DUPSCAN_OPT_THREADS,         /* threads reading and hashing; 0 (default): one per online CPU,
	                              * at least 8 (cold reads wait on the device; since 0.4);
	                              * ignored (always 1) when built without thread support */
	DUPSCAN_OPT_DIRS,            /* also sets of identical directories (see dupscan_set_is_dirs()) */
	DUPSCAN_OPT_IO,              /* how to read: DUPSCAN_IO_AUTO (default), _HDD, _SSD or _NET
	                              * (since 0.9); since 0.4 */
	DUPSCAN_OPT_IO_MEMORY,       /* bytes of file contents hdd mode keeps to compare files in disk
	                              * order, at least 1048576; 0: the default, 256 MiB (an eighth of
	                              * the memory on machines with less than 2 GiB); since 0.4 */
	DUPSCAN_OPT_CACHE_TRUST,     /* 1: with a cache (dupscan_set_cache()), list sets proven by
	                              * earlier runs without reading them; see dupscan_set_proof();
	                              * since 0.5 */
	DUPSCAN_OPT_MAX_DEPTH,       /* N >= 0: directories deeper than N levels below a recursed
	                              * path are not entered (0: its own entries only; like its
	                              * other unentered directories, no duplicate directory of
	                              * DUPSCAN_OPT_DIRS); -1 (default): no limit; since 0.7 */
	DUPSCAN_OPT_REMOTE_TIMEOUT,  /* seconds a remote side (dupscan_add_remote()) may stay
	                              * silent before the run fails, 1..86400; default 120; since 0.8 */
	DUPSCAN_OPT_MAX_MEMORY,      /* bytes the scan's records may take, at least 16777216; past
	                              * them the records are spilled sorted by size to an unnamed
	                              * file (dupscan_set_temp_dir()) and matched a band of sizes
	                              * at a time, only the sets' files kept; 0 (default): no
	                              * budget; since 0.11 */
	DUPSCAN_OPT_KEEP_UNIQUE,     /* past DUPSCAN_OPT_MAX_MEMORY, which unique files are kept
	                              * as well: DUPSCAN_KEEP_NONE (default), DUPSCAN_KEEP_ALL
	                              * (dupscan_unique_count() lists them), DUPSCAN_KEEP_OTHERS
	                              * (those outside the references: dupscan_find_missing());
	                              * they take memory as the sets' files do; since 0.11 */
	DUPSCAN_OPT_IGNORE_METADATA  /* 1: a file of a known format (dupscan_payload()) is matched
	                              * by its payload alone, its picture or sound, not its tags;
	                              * any other file whole. Sizes group by payload length, the
	                              * payloads are hashed and compared byte by byte; a set's
	                              * members may then differ in their tags (see
	                              * dupscan_same_bytes()). Every candidate is opened once
	                              * to parse it. Not with a cache, other hosts, DUPSCAN_OPT_DIRS
	                              * or a report (dupscan_run() returns DUPSCAN_E_OPTION); past
	                              * DUPSCAN_OPT_MAX_MEMORY, DUPSCAN_E_MEMORY; since 0.12 */
};

/* Values of DUPSCAN_OPT_KEEP_UNIQUE. */
enum {
	DUPSCAN_KEEP_NONE = 0,
	DUPSCAN_KEEP_ALL = 1,
	DUPSCAN_KEEP_OTHERS = 2
};

/* Values of DUPSCAN_OPT_IO. HDD: one reading stream per disk, files read in
 * the order the disk holds them (first extent's physical offset, else inode
 * order), large turns when files are compared side by side; the disks of a
 * scan are read at the same time for the first blocks. SSD: reads on every
 * thread. NET (since 0.9): a network filesystem, where each request waits a
 * round trip: many requests in flight (directories listed ahead, files opened
 * and read at once), their number set by how the link answers (see
 * dupscan_io_inflight()), large reads. AUTO: HDD when a file of the scan lies
 * on a rotational disk (a partition, md, dm or loop device is followed to the
 * disks under it); else NET when one lies on a network filesystem (NFS, SMB,
 * sshfs, 9p, ceph and others by their mount's type, or a FUSE filesystem of
 * another kind where listing a path argument takes 1 ms or more); else SSD,
 * also where the storage cannot be told (overlay, virtual machines' disks).
 * Results never depend on it. */
enum dupscan_io {
	DUPSCAN_IO_AUTO = 0,
	DUPSCAN_IO_HDD = 1,
	DUPSCAN_IO_SSD = 2,
	DUPSCAN_IO_NET = 3
};

enum dupscan_order {
	DUPSCAN_ORDER_NAME = 0, /* path in jdupes' order: digit runs as numbers, letters without case */
	DUPSCAN_ORDER_TIME = 1  /* modification time, then path */
};

/* Phases reported to the progress callback. */
enum dupscan_phase {
	DUPSCAN_PHASE_WALK = 1,  /* done = files found so far, total = 0; once more
	                          * when the walk ends, with total = done, before
	                          * any file is read */
	DUPSCAN_PHASE_MATCH = 2, /* done, total = candidate files examined / to examine */
	DUPSCAN_PHASE_FIRST = 3  /* reading the first blocks of candidates in disk
	                          * order ahead of matching (hdd mode only; elsewhere
	                          * they are read within DUPSCAN_PHASE_MATCH). Given
	                          * to the bytes callback only; since 0.6 */
};

/* What the run has done and has left in its phase, for the bytes callback
 * (since 0.6). Fields may be added at the end in later versions; the
 * library owns the struct, valid only during the call. */
struct dupscan_progress {
	int phase;            /* enum dupscan_phase */
	uint64_t files_done;  /* walk: files found; first blocks: files read;
	                       * match: candidate files settled */
	uint64_t files_total; /* files the phase examines in all; walk: 0 until
	                       * it ends */
	uint64_t bytes_done;  /* walk: bytes of the files found; otherwise bytes
	                       * read in this phase */
	uint64_t bytes_total; /* at most what bytes_done reaches by the phase's
	                       * end: bytes_done plus every byte the phase may
	                       * still read; falls as files are settled, and is
	                       * bytes_done when the phase ends; walk: 0 */
};

typedef struct dupscan_scan dupscan_scan; /* one scan: paths, options, results */
typedef struct dupscan_set dupscan_set;   /* one set of identical files */
typedef struct dupscan_file dupscan_file; /* one file as seen at scan time */

/* Stages reported to the stage callback (jdupes -P). */
enum dupscan_stage {
	DUPSCAN_STAGE_EARLY = 1,   /* same size (and device/permissions when asked) */
	DUPSCAN_STAGE_PARTIAL = 2, /* same XXH64 of the first 4096 bytes */
	DUPSCAN_STAGE_FULL = 3     /* same full hash (XXH64 of the rest, seeded with the
	                            * first block's), bytes compared */
};

/* Per-path trouble: path is valid only during the call; code as above. */
typedef void (*dupscan_error_fn)(void *user, const char *path, int code);
/* Progress: called often (every few hundred files); throttle in the callback. */
typedef void (*dupscan_progress_fn)(void *user, int phase, uint64_t done, uint64_t total);
/* Progress with bytes: called at phase changes, every few hundred files and
 * every few MiB read, possibly from one of the scan's reading threads, one
 * call at a time; throttle in the callback. */
typedef void (*dupscan_progress_bytes_fn)(void *user, const struct dupscan_progress *progress);
/* Filter: called during the walk for each regular file, before it costs any
 * read; return nonzero to keep the file, 0 to leave it out. The file (path,
 * size, dev, ino, mtime, mode) is valid only during the call. */
typedef int (*dupscan_filter_fn)(void *user, const dupscan_file *file);
/* Directory filter: called with a directory's path, and the part of it below
 * its argument, before the walk enters it; return 0 to skip it and everything
 * under it (it is then never opened), nonzero to walk it. */
typedef int (*dupscan_dir_filter_fn)(void *user, const char *path, const char *relpath);
/* Stage: a group of count (>= 2) files that passed a stage together, in the
 * chosen order; the array and the files are valid only during the call. */
typedef void (*dupscan_stage_fn)(void *user, int stage, const dupscan_file *const *files, size_t count);

/* @return the library's version, e.g. "0.1.0"; a static string. */
DUPSCAN_API const char *dupscan_version(void);

/* Features this build of the library has (dupscan_features()). */
#define DUPSCAN_FEATURE_THREADS 0x1u /* the pthread hashing pool (meson option threads) */

/* @return how this library was built: DUPSCAN_FEATURE_* bits (since 0.7). */
DUPSCAN_API unsigned dupscan_features(void);
/* @return the version of the xxHash library in use, as XXH_versionNumber()
 * gives it: major * 10000 + minor * 100 + release, e.g. 801 (since 0.7). */
DUPSCAN_API unsigned dupscan_xxhash_version(void);

/* @return a static English message for any code this library returns
 * (0, -errno or a DUPSCAN_E_* value); never NULL. */
DUPSCAN_API const char *dupscan_strerror(int code);

/* Create an empty scan with default options.
 * @param out receives the handle; free it with dupscan_free().
 * @return 0, or -ENOMEM (then *out is NULL). */
DUPSCAN_API int dupscan_create(dupscan_scan **out);

/* Free a scan and everything it returned (sets, files, paths). NULL is a no-op. */
DUPSCAN_API void dupscan_free(dupscan_scan *scan);

/* Add a file or directory to scan, before dupscan_run(). Paths are scanned in
 * the order added; that order is the "param order" of DUPSCAN_OPT_PARAM_ORDER
 * and DUPSCAN_OPT_ISOLATE. The string is copied.
 * @param recurse nonzero: descend into subdirectories of this path.
 * @return the path's index (>= 0), -EINVAL for NULL or "", -ENOMEM, or
 *         DUPSCAN_E_STATE after dupscan_run(). A path that does not exist is
 *         reported by dupscan_run() through the error callback, not here. */
DUPSCAN_API int dupscan_add_path(dupscan_scan *scan, const char *path, int recurse);

/* Add a path scanned on another host, before dupscan_run(): a
 * dupscan_serve() at the other end of read_fd and write_fd (two ends of a
 * pipe to "ssh HOST dupscan --server", a socket: any transport; both stay
 * the caller's to close, after dupscan_free()) scans path there with its
 * own reading while this host scans its paths, and sends back its sets and
 * the sizes of its other files. For files of one size on two hosts it then
 * sends first-block hashes, whole hashes where those agree, and the bytes
 * where those agree, compared here before a file joins a set. Its files are
 * listed as "LABEL:PATH" (dupscan_file_host() gives the label) and are
 * never changed: the action functions refuse them as dup
 * (DUPSCAN_E_REMOTE_FILE), and as keep the other side re-checks them
 * (dupscan_remove_duplicate(), dupscan_move_duplicate()) or they are
 * refused (links, dedupe). A side that breaks the protocol, goes away or
 * stays silent past DUPSCAN_OPT_REMOTE_TIMEOUT fails dupscan_run()
 * (DUPSCAN_E_PROTOCOL, DUPSCAN_E_REMOTE, the error callback naming the side
 * and why). Not with DUPSCAN_OPT_PERMISSIONS (dupscan_run() fails with
 * DUPSCAN_E_OPTION); with DUPSCAN_OPT_DIRS each side also sends its tree,
 * and directories are keyed across hosts.
 * @param label the host as it should be shown (copied)
 * @return the path's index among the added paths (>= 0), -EINVAL, -ENOMEM,
 *         or DUPSCAN_E_STATE after dupscan_run(). Since 0.8. */
DUPSCAN_API int dupscan_add_remote(dupscan_scan *scan, const char *label, int read_fd, int write_fd,
				   const char *path, int recurse);

/* The other side of dupscan_add_remote(), for a program run as its server:
 * scan, configured by the caller (threads, reading, filters: this host's
 * choices) and fresh (no path added, not run), takes the options that decide
 * which files match and the one path to scan from the client, runs, sends
 * its results and then answers the client's requests until it says it is
 * done. It only reads: no file is written, and it reads only files its scan
 * found, by the numbers it gave them. The error callback is not called: the
 * files it could not read are sent to the client. A malformed or unexpected
 * frame ends it (the client told why when it can still hear).
 * @return 0 when the client said it was done, DUPSCAN_E_PROTOCOL,
 *         DUPSCAN_E_REMOTE (the client went away or fell silent), -EINVAL,
 *         -ENOMEM or DUPSCAN_E_STATE. Since 0.8. */
DUPSCAN_API int dupscan_serve(dupscan_scan *scan, int read_fd, int write_fd);

/* Bytes received from and sent to the remote sides of the scan so far (all
 * frames counted). Since 0.8. */
DUPSCAN_API void dupscan_remote_bytes(const dupscan_scan *scan, uint64_t *received, uint64_t *sent);

/* Set an option (enum dupscan_option) before dupscan_run().
 * @return 0, DUPSCAN_E_OPTION for an unknown option or a value out of range,
 *         or DUPSCAN_E_STATE after dupscan_run(). */
DUPSCAN_API int dupscan_set_option(dupscan_scan *scan, int option, int64_t value);

/* Callback for per-path errors (unreadable, vanished or changed files). The scan
 * goes on after each. Without a callback errors are only counted. */
DUPSCAN_API void dupscan_set_error_callback(dupscan_scan *scan, dupscan_error_fn fn, void *user);

/* Callback for progress. */
DUPSCAN_API void dupscan_set_progress_callback(dupscan_scan *scan, dupscan_progress_fn fn, void *user);
/* Callback for progress with bytes and every phase (since 0.6); both
 * callbacks may be set. */
DUPSCAN_API void dupscan_set_progress_bytes_callback(dupscan_scan *scan, dupscan_progress_bytes_fn fn, void *user);

/* Predicate deciding which regular files take part (NULL: all of them). Files
 * left out are neither matched nor listed as unique. */
DUPSCAN_API void dupscan_set_filter(dupscan_scan *scan, dupscan_filter_fn fn, void *user);

/* Predicate deciding which directories the walk enters (NULL: all of them);
 * not called for the added paths themselves. */
DUPSCAN_API void dupscan_set_dir_filter(dupscan_scan *scan, dupscan_dir_filter_fn fn, void *user);

/* Protect a file or directory (and everything under it), before dupscan_run():
 * its files are matched and listed, dupscan_file_is_protected() tells them, and
 * the action functions refuse to change them (DUPSCAN_E_PROTECTED). Identified
 * by device and inode, so any spelling of the path, or a symlink to it, counts.
 * @return 0, -errno when the path cannot be stat()ed, -EINVAL, -ENOMEM, or
 *         DUPSCAN_E_STATE after dupscan_run(). */
DUPSCAN_API int dupscan_protect_path(dupscan_scan *scan, const char *path);

/* Add a reference path, before dupscan_run(): a path scanned as
 * dupscan_add_path() adds one, and protected as dupscan_protect_path() does,
 * whose files are the copies asked about ("is it all backed up?"). Once one
 * is added, a set is only a set when it holds a reference file and another
 * file, and its reference files come first (the file a set keeps is one of
 * them); a size group without both is never read, so the unique files
 * (dupscan_unique_count()) are no answer then: dupscan_find_missing() lists
 * the other files with no copy under any reference path.
 * @return the path's index (>= 0), or as dupscan_protect_path() and
 * dupscan_add_path(). Since 0.10. */
DUPSCAN_API int dupscan_add_reference(dupscan_scan *scan, const char *path, int recurse);

/* Make the path added at index (dupscan_add_path()'s, dupscan_add_remote()'s
 * return) a reference path, before dupscan_run(), as dupscan_add_reference()
 * adds one: a local one is protected; a remote one's files are never changed
 * anyway, and across hosts a set needs a reference file on any host.
 * @return index, -EINVAL (no such path), -ENOMEM, or DUPSCAN_E_STATE after
 * dupscan_run(). Since 0.10. */
DUPSCAN_API int dupscan_set_reference(dupscan_scan *scan, int index);

/* Keep partial and full hashes in the cache file path between runs (NULL: no
 * cache), before dupscan_run(). Entries are keyed on device, inode, size, mtime
 * and ctime: any difference and the entry is not used. A cached hash only
 * spares hashing: files are still compared byte by byte before they are called
 * duplicates (a forged cache, with wrong hashes under right keys, could hide a
 * duplicate), except for the proofs DUPSCAN_OPT_CACHE_TRUST stands on, which a
 * forged cache could make list different files as a set; the action functions
 * compare such a pair byte by byte before any change (see dupscan_set_proof()).
 * The file is read at the start of dupscan_run() and replaced at
 * its end (atomically, under an flock of path.lock, merged with what another
 * process may have saved meanwhile; entries of files gone are dropped). A
 * damaged file is reported through the error callback (DUPSCAN_E_CACHE),
 * ignored and replaced; a file that is no cache at all (it does not begin
 * as one: a document given by mistake) is reported (DUPSCAN_E_NOT_CACHE)
 * and never replaced, and the run goes on without a cache; cache trouble never counts in dupscan_error_count().
 * It also records which files a run compared byte by byte into one class;
 * with DUPSCAN_OPT_CACHE_TRUST those proofs stand in for reading unchanged
 * files (see dupscan_set_proof()). The file is created 0600; version 1 files
 * (0.4) are read and replaced.
 * @return 0, -EINVAL, -ENOMEM, or DUPSCAN_E_STATE after dupscan_run(). */
DUPSCAN_API int dupscan_set_cache(dupscan_scan *scan, const char *path);

/* The folder where records past DUPSCAN_OPT_MAX_MEMORY are spilled (NULL:
 * $TMPDIR, else /tmp), before dupscan_run(). The file has no name (O_TMPFILE;
 * where the filesystem has none, a name removed as soon as it is made): it
 * is gone when the scan ends, however it ends, a kill included. A folder
 * that cannot take it, or fills, fails the run with the folder reported
 * through the error callback. @return 0, -EINVAL, -ENOMEM, or
 * DUPSCAN_E_STATE after dupscan_run(). Since 0.11. */
DUPSCAN_API int dupscan_set_temp_dir(dupscan_scan *scan, const char *path);

/* Remove the cache file at path (under its lock). A file there that is no
 * cache (it does not begin as one) is left as it is: DUPSCAN_E_NOT_CACHE.
 * @return 0 (also when there was none), DUPSCAN_E_NOT_CACHE, or -errno. */
DUPSCAN_API int dupscan_cache_clear(const char *path);

/* Give a set instead of paths to walk: a file of set number set (sets are
 * numbered by the caller; files given the same number form one set, in the
 * order given, which is kept, as is the order of the sets), with its identity
 * as it was scanned (st_dev, st_ino, st_size, mtime and ctime in ns), as a
 * report written with dupscan -j holds it. dupscan_run() then neither walks
 * nor matches: it fails with DUPSCAN_E_NOTREG, each such path told to the
 * error callback, when a path now names a directory or a symlink, and
 * otherwise builds the sets (DUPSCAN_E_STATE when paths were added too, or
 * with DUPSCAN_OPT_DIRS). Nothing is taken on trust: the action functions
 * check the file and the kept file against the identity given
 * (DUPSCAN_E_CHANGED) and compare them byte by byte (DUPSCAN_E_DIFFERS) before
 * any change. Names of one inode count once, as in a scan (all of them with
 * DUPSCAN_OPT_HARD_LINKS); a set of fewer than two inodes is left out.
 * @return 0, -EINVAL (NULL or empty path, set UINT32_MAX), -ENOMEM, or
 * DUPSCAN_E_STATE after dupscan_run(). Since 0.5. */
DUPSCAN_API int dupscan_report_file(dupscan_scan *scan, uint32_t set, const char *path, uint64_t dev, uint64_t ino,
				    uint64_t size, int64_t mtime_ns, int64_t ctime_ns);

/* Callback told about each group of files that passes a matching stage
 * (enum dupscan_stage), as the scan goes. Costs a path per file reported. */
DUPSCAN_API void dupscan_set_stage_callback(dupscan_scan *scan, dupscan_stage_fn fn, void *user);

/* Walk the paths, match files and build the duplicate sets. Call once.
 * @return 0 when the scan completed, even if some paths had errors (see
 *         dupscan_error_count()); -ENOMEM, or DUPSCAN_E_STATE when called twice. */
DUPSCAN_API int dupscan_run(dupscan_scan *scan);

/* @return how many per-path errors were reported during dupscan_run(). */
DUPSCAN_API uint64_t dupscan_error_count(const dupscan_scan *scan);

/* @return the number of duplicate sets (0 before dupscan_run()). Sets are in a
 * deterministic order: by their first file, in the chosen order. */
DUPSCAN_API size_t dupscan_set_count(const dupscan_scan *scan);

/* @return set number i (0-based), or NULL when i is out of range. Valid until
 * dupscan_free(). */
DUPSCAN_API const dupscan_set *dupscan_get_set(const dupscan_scan *scan, size_t i);

/* @return 1 when the set is of directories (DUPSCAN_OPT_DIRS): directories
 * whose whole content, recursively, is identical whatever the file names, every
 * file pair confirmed byte by byte. Their paths end with '/'; size is the total
 * of their files. Such sets come first; files and directories inside a listed
 * directory set are left out of later sets unless a copy lies outside them. */
DUPSCAN_API int dupscan_set_is_dirs(const dupscan_set *set);

/* How a set was proven. SCAN: every file was compared byte by byte in this
 * run. CACHE: some files are in it only by a proof from the hash cache
 * (DUPSCAN_OPT_CACHE_TRUST): earlier runs compared them byte by byte into one
 * class, and they are unchanged since (device, inode, size, mtime and ctime
 * as recorded, and both times older than that run's start by more than two
 * seconds, so no write since can hide behind an unchanged ctime). A cache
 * file forged with right keys could make such a set wrong; the action
 * functions (dupscan_remove_duplicate() and the others) therefore compare
 * the pair byte by byte first when either file of it is in its set by a proof
 * (DUPSCAN_E_DIFFERS when they differ), so only listing rests on the cache.
 * @param proven_ns when not NULL: for CACHE, the start (ns since the epoch)
 * of the oldest run whose proof the set uses; else 0.
 * REPORT: the set was given by dupscan_report_file(); its pairs are compared
 * by the action functions in the same way.
 * @return DUPSCAN_PROOF_SCAN, DUPSCAN_PROOF_CACHE, DUPSCAN_PROOF_REPORT, or
 * -EINVAL for NULL. Since 0.5. */
enum { DUPSCAN_PROOF_SCAN = 0, DUPSCAN_PROOF_CACHE = 1, DUPSCAN_PROOF_REPORT = 2 };
DUPSCAN_API int dupscan_set_proof(const dupscan_set *set, int64_t *proven_ns);

/* @return the number of files in a set (at least 2). */
DUPSCAN_API size_t dupscan_set_file_count(const dupscan_set *set);

/* @return file number i of a set, in the chosen order (name by default), or NULL
 * when i is out of range. Valid until dupscan_free(). */
DUPSCAN_API const dupscan_file *dupscan_set_file(const dupscan_set *set, size_t i);

/* @return the number of files that were examined and belong to no set; 0
 * when the records were spilled (dupscan_spilled()): they are not kept. */
DUPSCAN_API size_t dupscan_unique_count(const dupscan_scan *scan);

/* @return the number of files' records written to the temporary file past
 * DUPSCAN_OPT_MAX_MEMORY by dupscan_run() (0: the budget held them all).
 * Once any was, only the sets' files are kept (and the unique files
 * DUPSCAN_OPT_KEEP_UNIQUE asks for): without DUPSCAN_KEEP_ALL
 * dupscan_unique_count() is 0, and without either value
 * dupscan_find_missing() returns DUPSCAN_E_MEMORY (the unique files still
 * count in dupscan_tally_dirs()'s figures). Since 0.11. */
DUPSCAN_API uint64_t dupscan_spilled(const dupscan_scan *scan);

/* @return unique file number i, in the chosen order, or NULL when out of range.
 * Valid until dupscan_free(). */
DUPSCAN_API const dupscan_file *dupscan_unique_file(const dupscan_scan *scan, size_t i);

/* After dupscan_run() with reference paths (dupscan_add_reference()): the
 * files under the other paths that have no copy under any reference path,
 * in the chosen order (a file that could not be read is none of them: it is
 * reported through the error callback), on any host. @return 0, -ENOMEM,
 * -EINVAL, DUPSCAN_E_STATE (not run, or no reference path), or
 * DUPSCAN_E_REFERENCE (a reference path itself could not be scanned: the
 * error callback named it). Since 0.10. */
DUPSCAN_API int dupscan_find_missing(dupscan_scan *scan);
/* @return the files dupscan_find_missing() found (0 before it). Since 0.10. */
DUPSCAN_API size_t dupscan_missing_count(const dupscan_scan *scan);
/* @return how many files dupscan_find_missing() asked about: the files under
 * the other paths that were examined, with a copy or without one, on any
 * host (0 before it). 0 means the question examined nothing: no file under
 * them (not recursed, every file filtered out, each inside a reference).
 * Since 0.10. */
DUPSCAN_API uint64_t dupscan_missing_asked(const dupscan_scan *scan);
/* @return missing file number i, or NULL when out of range. Valid until
 * dupscan_free(). Since 0.10. */
DUPSCAN_API const dupscan_file *dupscan_missing_file(const dupscan_scan *scan, size_t i);
/* @return 1 when the file is under a path given to dupscan_add_reference(). Since 0.10. */
DUPSCAN_API int dupscan_file_is_reference(const dupscan_file *file);

/* File data as seen when the file was scanned. Strings live until dupscan_free(). */
DUPSCAN_API const char *dupscan_file_path(const dupscan_file *file); /* as reached from its argument */
DUPSCAN_API uint64_t dupscan_file_size(const dupscan_file *file);
DUPSCAN_API uint64_t dupscan_file_dev(const dupscan_file *file);
DUPSCAN_API uint64_t dupscan_file_ino(const dupscan_file *file);
DUPSCAN_API int64_t dupscan_file_mtime_ns(const dupscan_file *file); /* ns since the epoch */
DUPSCAN_API int64_t dupscan_file_ctime_ns(const dupscan_file *file); /* as scanned; since 0.5 */
DUPSCAN_API uint32_t dupscan_file_mode(const dupscan_file *file);    /* st_mode */
/* 1 when a and b are one file (one inode: hard links, or one path reached
 * twice), else 0. Where the filesystem does not keep one inode number a
 * file (FUSE, SMB with noserverino, or a device where the scan met two
 * paths of one number, one of them the file's only name), one number does
 * not make one file: 0. Since 0.9. */
DUPSCAN_API int dupscan_same_file(const dupscan_file *a, const dupscan_file *b);
/* 1 when a and b, members of one set, hold the same bytes, every one; 0
 * when they share only their payload (DUPSCAN_OPT_IGNORE_METADATA: the same
 * picture or sound, other tags), or are of different scans. Without that
 * option every two members of a set hold the same bytes. Since 0.12. */
DUPSCAN_API int dupscan_same_bytes(const dupscan_file *a, const dupscan_file *b);
/* The format file was matched as (enum dupscan_media; DUPSCAN_MEDIA_OTHER:
 * compared whole, also without DUPSCAN_OPT_IGNORE_METADATA) and, when bytes
 * is not NULL, the bytes compared: its payload's, or its size. Since 0.12. */
DUPSCAN_API int dupscan_file_media(const dupscan_file *file, uint64_t *bytes);
DUPSCAN_API int dupscan_file_arg_index(const dupscan_file *file);    /* which added path */
/* The part of the path below its added path ("b/c" for "a/b/c" reached from
 * "a"); for a file added directly, its last component. */
DUPSCAN_API const char *dupscan_file_relpath(const dupscan_file *file);
/* @return 1 when the file is under a path given to dupscan_protect_path(). */
DUPSCAN_API int dupscan_file_is_protected(const dupscan_file *file);
/* @return the label of the host the file is on (dupscan_add_remote()), or
 * NULL for a file of this host. Its path is then "LABEL:PATH" there. Lives
 * as long as the scan. Since 0.8. */
DUPSCAN_API const char *dupscan_file_host(const dupscan_file *file);

/* ---- where the copies are: directories of a finished scan (since 0.10) ----
 * The directories of this host's walk (other hosts' are not counted), and
 * for files given as paths the directory they are in (holding just them),
 * numbered 0..dupscan_dir_count()-1, each directory after its parent. Each holds the files of its subtree as the scan lists
 * them: the unique files and the files of the sets (the names of one inode
 * count once, at the name listed, unless DUPSCAN_OPT_HARD_LINKS; empty files
 * only with DUPSCAN_OPT_ZERO_MATCH). A file "has a copy" when it is in a set:
 * another file, here or on another host, holds the same bytes. */
enum dupscan_tally {
	DUPSCAN_TALLY_FILES = 0,     /* files under the directory, at any depth */
	DUPSCAN_TALLY_BYTES = 1,     /* their bytes */
	DUPSCAN_TALLY_DUP_FILES = 2, /* those of them that have a copy */
	DUPSCAN_TALLY_DUP_BYTES = 3, /* their bytes */
	DUPSCAN_TALLY_SHARED_BYTES = 4 /* of those, the bytes in blocks another file of their set
	                                * holds too (after dupscan_find_shared(); else 0) */
};

/* Count every directory's files, after dupscan_run() (the later calls do
 * nothing). @return 0, -ENOMEM, DUPSCAN_E_STATE (not run, or the sets came
 * from dupscan_report_file()) or DUPSCAN_E_OPTION (with DUPSCAN_OPT_DIRS,
 * whose sets leave out the files of equal directories). Since 0.10. */
DUPSCAN_API int dupscan_tally_dirs(dupscan_scan *scan);
/* @return the directories counted (0 before dupscan_tally_dirs()). Since 0.10. */
DUPSCAN_API size_t dupscan_dir_count(const dupscan_scan *scan);
/* Directory dir's path, as the walk reached it, NUL-terminated in buf when it
 * fits cap (no trailing '/'). @return its length (the room it needs is one
 * more), or 0 when dir is out of range. Since 0.10. */
DUPSCAN_API size_t dupscan_dir_path(const dupscan_scan *scan, size_t dir, char *buf, size_t cap);
/* @return the directory dir is in, or SIZE_MAX for an added path (or dir out
 * of range). Since 0.10. */
DUPSCAN_API size_t dupscan_dir_parent(const dupscan_scan *scan, size_t dir);
/* @return how many levels dir is below its added path (0 for the path). Since 0.10. */
DUPSCAN_API unsigned dupscan_dir_depth(const dupscan_scan *scan, size_t dir);
/* @return a figure of dir (enum dupscan_tally), 0 when out of range. Since 0.10. */
DUPSCAN_API uint64_t dupscan_dir_tally(const dupscan_scan *scan, size_t dir, int what);

/* Find the pairs of directories, neither inside the other, where at least
 * percent (1..100) of one's bytes have a copy in the other: directory B
 * holds a copy of a file of A when a file of A's set lies under B. A pair is
 * left out when a side's files all lie in one of its subdirectories (the
 * deepest is named), when A's parent (past such folders; with B, B's parent
 * or the folder past those wrapping B) has at least as large a share, when
 * a folder above B holds more of A's bytes, when a subdirectory of B holds
 * as many of A's bytes as B (or one of A as many bytes in B as A), unless
 * more of the larger folder's own bytes are copies (or as many, and its
 * size is closer), or when both lie strictly inside two folders that are
 * whole copies of each other: a folder copied whole is one pair, at any
 * depth. Each pair comes once, its first side the one
 * with more bytes in the other; the pairs are ordered by those bytes,
 * largest first, then by path. Tallies the directories first
 * (dupscan_tally_dirs()); a second call replaces the pairs. The pairs
 * weighed are kept in a table of at most one entry a file listed (or
 * 1,048,576): past it (thousands of directories holding copies of one file,
 * or a tree kept in tens of snapshots) it stops with DUPSCAN_E_TOO_MANY and
 * no pair. @return 0, -EINVAL (percent out of range), -ENOMEM,
 * DUPSCAN_E_TOO_MANY, or as dupscan_tally_dirs(). Since 0.10. */
DUPSCAN_API int dupscan_find_overlaps(dupscan_scan *scan, unsigned percent);
/* @return the pairs found (0 before dupscan_find_overlaps()). Since 0.10. */
DUPSCAN_API size_t dupscan_overlap_count(const dupscan_scan *scan);
/* Pair i's directories (numbers as dupscan_dir_path() takes them): a the
 * first side, b the second. @return 0, or -EINVAL when i is out of range. Since 0.10. */
DUPSCAN_API int dupscan_overlap_dirs(const dupscan_scan *scan, size_t i, size_t *a, size_t *b);
/* Pair i's share: side 0, the files (DUPSCAN_TALLY_FILES) or bytes
 * (DUPSCAN_TALLY_BYTES) of a that have a copy in b; side 1, of b in a; with
 * DUPSCAN_TALLY_SHARED_BYTES, of those bytes the ones in blocks another file
 * of their set holds too (0 unless dupscan_find_shared() came before
 * dupscan_find_overlaps()). 0 when out of range. Since 0.10. */
DUPSCAN_API uint64_t dupscan_overlap_tally(const dupscan_scan *scan, size_t i, int side, int what);

/* ---- what the copies already share (since 0.10) ----
 * A copy made by a reflink (cp --reflink, coreutils 9's cp on btrfs), a
 * snapshot or an earlier dupscan_dedupe() shares its blocks: it wastes no
 * space, and deleting, linking or deduplicating it wins none. */

/* Ask the filesystem, after dupscan_run(), which bytes of each set's files
 * lie in blocks another file of the set holds too (FIEMAP, read-only; only
 * on filesystems that share blocks: btrfs, XFS, OCFS2, bcachefs, every
 * snapshot and subvolume of one btrfs filesystem alike). A file on another
 * host, one whose extents are compressed, inline, delayed or unknown, or
 * one changed since the scan is counted whole. Later calls do nothing.
 * @return 0, -ENOMEM, -EINVAL or DUPSCAN_E_STATE (not run). Since 0.10. */
DUPSCAN_API int dupscan_find_shared(dupscan_scan *scan);
/* The bytes of set i's copies that are already shared: of the size times
 * (files - 1) its copies take, this much lies in blocks the set holds
 * once, and the rest is what an action could win. 0 before
 * dupscan_find_shared() (or for i out of range). Since 0.10. */
DUPSCAN_API uint64_t dupscan_set_shared_bytes(const dupscan_scan *scan, size_t i);

/* Stop a running dupscan_run() soon; safe to call from a signal handler or
 * another thread. dupscan_run() then returns DUPSCAN_E_CANCELED with the sets
 * confirmed so far available as usual. */
DUPSCAN_API void dupscan_cancel(dupscan_scan *scan);

/* ---- actions: safe primitives on files of a finished scan ----
 * Each re-checks (unless DUPSCAN_ACT_NO_CHANGE_CHECK) that both files still have
 * the device, inode, size and mtime seen by the scan, and refuses with
 * DUPSCAN_E_CHANGED otherwise. Replacements are atomic: the new link is made
 * under a temporary name ".dupscan-tmp-XXXXXX" in the duplicate's directory and
 * renamed over it; on any failure the temporary name is removed and the
 * duplicate is left as it was. */

/* @return 0 when the file is as scanned, DUPSCAN_E_CHANGED, or -errno. */
DUPSCAN_API int dupscan_check_unchanged(const dupscan_file *file);

/* 0 when a link of b to a would leave b's path with the owner, group,
 * permission bits, POSIX ACL and security labels (security.* attributes) it
 * has; else the first that differs, DUPSCAN_E_ACCESS_OWNER ... _LABEL, or
 * -errno, DUPSCAN_E_REMOTE_FILE. Looked up by path now. Since 0.10. */
DUPSCAN_API int dupscan_access_differs(const dupscan_file *a, const dupscan_file *b);

/* Replace dup by a hard link (same device only: -EXDEV otherwise) or a relative
 * symlink to keep. A hard link shares keep's inode and so its owner, mode and
 * times; a symlink reaches them: refused when they, its ACL or its security
 * labels differ from dup's (dupscan_access_differs(), checked on both files
 * held open), unless flags has DUPSCAN_ACT_IGNORE_ACCESS. @return 0,
 * DUPSCAN_E_ALREADY (dup is already a hard link of keep, for
 * DUPSCAN_LINK_HARD), DUPSCAN_E_ACCESS_*, DUPSCAN_E_SAME_ENTRY,
 * DUPSCAN_E_CHANGED or -errno. */
DUPSCAN_API int dupscan_replace_with_link(const dupscan_file *keep, const dupscan_file *dup,
					  int kind, unsigned flags);

/* Delete dup, keeping keep. Refuses when keep is gone or changed (so the last
 * copy is never deleted) or when both paths name one directory entry.
 * @return 0, DUPSCAN_E_SAME_ENTRY, DUPSCAN_E_CHANGED or -errno. */
DUPSCAN_API int dupscan_remove_duplicate(const dupscan_file *keep, const dupscan_file *dup, unsigned flags);

/* Move dup to the new path dest, keeping keep; never overwrites: -EEXIST when
 * dest exists. The parent of dest must exist. Within one filesystem this is a
 * rename; across filesystems see dupscan_move_path(). dup is re-checked right
 * before it leaves its place. @return 0, -EEXIST, DUPSCAN_E_PROTECTED,
 * DUPSCAN_E_SAME_ENTRY, DUPSCAN_E_CHANGED or -errno. */
DUPSCAN_API int dupscan_move_duplicate(const dupscan_file *keep, const dupscan_file *dup,
				       const char *dest, unsigned flags);

/* Move the file from to the new path to, never overwriting (-EEXIST). Across
 * filesystems: copied into an unnamed file of to's directory (O_TMPFILE; else
 * under a temporary name beside to), fsynced, compared byte by byte with
 * from, given its name, and only then is from unlinked; a crash at any point
 * leaves from in place, and no partial copy (where O_TMPFILE is refused, at
 * most one, which dupscan_remove_partial_copy() removes).
 * Honours DUPSCAN_ACT_DRY_RUN.
 * @return 0, -EEXIST, DUPSCAN_E_DIFFERS (the copy did not read back equal) or -errno. */
DUPSCAN_API int dupscan_move_path(const char *from, const char *to, unsigned flags);

/* Where O_TMPFILE is refused, a copy to to is made under a temporary name
 * derived from to's, in its directory: remove what a killed copy left there
 * (a regular file of one name, or another name of to). dupscan --undo calls
 * it for each move of its journal. @return 1 removed, 0 nothing there, or
 * -errno. Since 0.10. */
DUPSCAN_API int dupscan_remove_partial_copy(const char *to);

/* Copy the regular file from to a new file to (created exclusively: -EEXIST
 * when it exists) with from's mode, modification time and, when permitted,
 * owner; fsynced and compared byte by byte before success. On failure to is
 * removed. @return 0, -EEXIST, DUPSCAN_E_DIFFERS or -errno. */
DUPSCAN_API int dupscan_copy_file(const char *from, const char *to);

/* XXH64 (seed 0) of the whole content of the regular file at path, read from
 * its start to its end; size (may be NULL) gets the bytes read. Used to tell,
 * later, that a file still holds a content seen before (dupscan --undo checks
 * what it restores with it). @return 0, DUPSCAN_E_NOTREG or -errno.
 * Since 0.3. */
DUPSCAN_API int dupscan_hash_file(const char *path, uint64_t *size, uint64_t *hash);

/* How the scan reads: DUPSCAN_IO_HDD or DUPSCAN_IO_SSD as chosen for it
 * (DUPSCAN_OPT_IO, or from the storage for DUPSCAN_IO_AUTO) once its files
 * are known, from the first DUPSCAN_PHASE_MATCH progress report on;
 * DUPSCAN_IO_AUTO before. Since 0.4. */
DUPSCAN_API int dupscan_io_mode(const dupscan_scan *s);

/* In DUPSCAN_IO_NET mode, the most requests (directory listings, opens,
 * reads) the scan has had in flight at once so far; 1 in the other modes
 * (hdd mode reads several disks at once, each with one stream) and before
 * anything is read. Since 0.9. */
DUPSCAN_API int dupscan_io_inflight(const dupscan_scan *s);

/* Ask the filesystem to share dup's extents with keep's (Linux FIDEDUPERANGE, in
 * ranges the kernel accepts); the kernel compares the bytes itself.
 * @return 0, DUPSCAN_E_ALREADY (already shared), DUPSCAN_E_DIFFERS,
 * DUPSCAN_E_CHANGED, -EOPNOTSUPP when the filesystem cannot, or -errno. */
DUPSCAN_API int dupscan_dedupe(const dupscan_file *keep, const dupscan_file *dup, unsigned flags);

/* ---- a picture's or a song's own bytes (since 0.12) ---- */
/* The formats whose tags dupscan_payload() tells from their payload. */
enum dupscan_media {
	DUPSCAN_MEDIA_OTHER = 0, /* any other file, or one whose structure does not parse
	                          * to its last byte: all of it is payload */
	DUPSCAN_MEDIA_JPEG = 1,  /* APPn (EXIF, XMP, ICC, JFIF, ...) and COM segments are tags */
	DUPSCAN_MEDIA_PNG = 2,   /* tEXt, zTXt, iTXt, tIME and eXIf chunks */
	DUPSCAN_MEDIA_WEBP = 3,  /* EXIF, XMP and VP8X chunks, the RIFF size (an animation: none) */
	DUPSCAN_MEDIA_MP3 = 4,   /* ID3v2 (with its footer), ID3v1, APEv2, Lyrics3 v2 */
	DUPSCAN_MEDIA_FLAC = 5,  /* every metadata block but STREAMINFO's body */
	DUPSCAN_MEDIA_MP4 = 6    /* MP4, M4A, MOV, HEIC: everything but the media data (mdat),
	                          * and a HEIC's EXIF and XMP items in it */
};
#define DUPSCAN_PAYLOAD_EXTENTS 32
struct dupscan_extent {
	uint64_t offset, length;
};
/* A file's payload: its ranges in file order; their bytes, end to end, are
 * what two files must share to be the same picture or sound. */
struct dupscan_payload {
	int format;              /* enum dupscan_media */
	size_t count;            /* ranges in extent (1 for the whole of a file) */
	uint64_t bytes;          /* their lengths' sum */
	struct dupscan_extent extent[DUPSCAN_PAYLOAD_EXTENTS];
};
/* The payload of the regular file open for reading as fd, told by its first
 * bytes and its structure, read with pread (the offset of fd unchanged). A
 * file of no known format, one whose structure does not end at its last
 * byte, or one that needs more than DUPSCAN_PAYLOAD_EXTENTS ranges or
 * thousands of reads to say, is all payload (DUPSCAN_MEDIA_OTHER): no
 * header can make this call allocate or read without bound.
 * @return 0, -EINVAL (NULL out), DUPSCAN_E_NOTREG or -errno. Since 0.12. */
DUPSCAN_API int dupscan_payload(int fd, struct dupscan_payload *out);

#ifdef __cplusplus
}
#endif

#endif /* DUPSCAN_H */

/* SPDX-License-Identifier: MIT */
/* fault.c: an LD_PRELOAD shim that makes chosen file-system calls fail, for the
 * fault-injection tests. DUPSCAN_FAULT="CALL:TEXT:ERR" makes every CALL on a path
 * containing TEXT fail with ERR (EIO, EACCES, ENOENT, ENOSPC), or for pread64
 * ZERO (end of file at once), SHORT (half the bytes per call) or EINTR (fail
 * once, then work), or KILL (the process dies by SIGKILL at that call), or
 * DELAY (the call waits 5 ms, then is made: a window for a racing writer),
 * or TRACE (as DELAY, and a line "THREAD-ID PATH" is appended to the file
 * DUPSCAN_FAULT_LOG names: which thread made the call, and when), or LOG
 * (as TRACE, without the wait: a count of the calls), or PEAK (as DELAY, and
 * at exit a line "peak N" is appended to DUPSCAN_FAULT_LOG: the most matching
 * calls that were waiting at once), or for fstat64 and fstatat64 INO (the call
 * is made, and a regular file's inode number is reported as 7: a filesystem
 * whose inode numbers repeat for different files).
 * ERR@N fails only the Nth matching call and those after it. CALL is one of open64 openat64 pread64 fstat64 fstatat64
 * readdir64 linkat symlink rename unlink mkdir write fsync willneed; link counts as
 * linkat (on the new name); the *at forms (symlinkat, renameat, renameat2,
 * unlinkat, mkdirat) count as symlink, rename, unlink and mkdir, on the path
 * their directory descriptor was opened as joined with the name; write and
 * fsync (fdatasync too) on the path their descriptor was opened as; creat is
 * an open64 or openat64 that may create the file (O_CREAT); willneed is
 * posix_fadvise(POSIX_FADV_WILLNEED), a read asked for ahead. For TRACE, CALL
 * may list several calls ("pread64,willneed"): each line then is
 * "THREAD-ID CALL PATH", the calls in the order they were made. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXFD 4096
static char *fd_path[MAXFD];          /* what each descriptor was opened as */
static char call_[128], text_[256], err_[16];
static int configured = -1;
static long from_ = 1, seen_; /* ERR@N: fail from the Nth matching call */
static bool eintr_done[MAXFD];

static void configure(void)
{
	if (configured >= 0)
		return;
	const char *spec = getenv("DUPSCAN_FAULT");
	configured = spec && sscanf(spec, "%127[^:]:%255[^:]:%15s", call_, text_, err_) == 3;
	char *at = configured ? strchr(err_, '@') : NULL;
	if (at) {
		from_ = strtol(at + 1, NULL, 10);
		*at = '\0';
	}
}

static int err_code(void)
{
	if (!strcmp(err_, "EIO")) return EIO;
	if (!strcmp(err_, "EACCES")) return EACCES;
	if (!strcmp(err_, "ENOENT")) return ENOENT;
	if (!strcmp(err_, "ENOSPC")) return ENOSPC;
	if (!strcmp(err_, "EINTR")) return EINTR;
	return EIO;
}

/* Is call the one configured, or one of the list? */
static bool named(const char *call)
{
	size_t n = strlen(call);
	for (const char *p = call_; (p = strstr(p, call)) != NULL; p += n)
		if ((p == call_ || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* Should this call on this path fail? */
static int inflight_, peak_; /* PEAK: calls waiting now, and most at once */

/* PEAK: the most calls that waited at once, to the log at exit. */
__attribute__((destructor)) static void write_peak(void)
{
	const char *log = getenv("DUPSCAN_FAULT_LOG");
	if (configured != 1 || strcmp(err_, "PEAK") != 0 || !log)
		return;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	char line[64];
	int n = snprintf(line, sizeof(line), "peak %d\n", peak_);
	if (fd >= 0 && n > 0 && syscall(SYS_write, fd, line, (size_t)n) < 0)
		n = 0; /* a test log: nothing to do */
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/* INO: the call is made, and a regular file's inode number says 7. */
static bool fake_ino(const char *call, const char *path)
{
	configure();
	return configured && !strcmp(err_, "INO") && named(call) && path && strstr(path, text_);
}

static bool hit(const char *call, const char *path)
{
	configure();
	bool match = configured && named(call) && path && strstr(path, text_);
	if (match && ++seen_ < from_)
		return false;
	if (match && !strcmp(err_, "KILL"))
		raise(SIGKILL);
	if (match && (!strcmp(err_, "TRACE") || !strcmp(err_, "LOG"))) {
		const char *log = getenv("DUPSCAN_FAULT_LOG");
		/* straight to the kernel: not through this shim's own open64 */
		int fd = log ? (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
		if (fd >= 0) {
			char line[4200];
			long tid = (long)syscall(SYS_gettid);
			int n = strchr(call_, ',') ? snprintf(line, sizeof(line), "%ld %s %s\n", tid, call, path)
						   : snprintf(line, sizeof(line), "%ld %s\n", tid, path);
			size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
			if (n > 0 && syscall(SYS_write, fd, line, len) < 0)
				n = 0; /* a test log: nothing to do */
			syscall(SYS_close, fd);
		}
	}
	if (match && (!strcmp(err_, "DELAY") || !strcmp(err_, "TRACE") || !strcmp(err_, "PEAK"))) {
		struct timespec ts = { 0, 5000000 };
		int now = __atomic_add_fetch(&inflight_, 1, __ATOMIC_RELAXED);
		int peak = __atomic_load_n(&peak_, __ATOMIC_RELAXED);
		while (now > peak && !__atomic_compare_exchange_n(&peak_, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		nanosleep(&ts, NULL);
		__atomic_sub_fetch(&inflight_, 1, __ATOMIC_RELAXED);
		return false;
	}
	if (match && !strcmp(err_, "LOG"))
		return false;
	return match;
}

static void remember(int fd, const char *path)
{
	if (fd >= 0 && fd < MAXFD) {
		free(fd_path[fd]);
		fd_path[fd] = path ? strdup(path) : NULL;
		eintr_done[fd] = false;
	}
}

static const char *path_of(int fd)
{
	return fd >= 0 && fd < MAXFD ? fd_path[fd] : NULL;
}

/* the next definition of fn (libc's) under its symbol name; memcpy because
 * ISO C has no cast from an object pointer to a function pointer */
#define REAL_AS(fn, symbol)                                       \
	static __typeof__(&fn) real;                              \
	if (!real) {                                              \
		void *sym_ = dlsym(RTLD_NEXT, symbol);            \
		memcpy(&real, &sym_, sizeof(real));               \
	}
#define REAL(fn) REAL_AS(fn, #fn)

/* With 64-bit time on a 32-bit system (_TIME_BITS=64), the headers rename the
 * stat calls: the definitions below then stand for these symbols, and libc's
 * must be looked up under the same names (the plain ones take the old struct). */
#if defined(__USE_TIME_BITS64) && __USE_TIME_BITS64 && defined(__TIMESIZE) && __TIMESIZE == 32
#define FSTAT64_SYMBOL "__fstat64_time64"
#define FSTATAT64_SYMBOL "__fstatat64_time64"
#define STAT64_SYMBOL "__stat64_time64"
#define LSTAT64_SYMBOL "__lstat64_time64"
#else
#define FSTAT64_SYMBOL "fstat64"
#define FSTATAT64_SYMBOL "fstatat64"
#define STAT64_SYMBOL "stat64"
#define LSTAT64_SYMBOL "lstat64"
#endif

/* dirfd's path joined with name, in buf; or name when it stands alone */
static const char *at_path(int dirfd, const char *name, char *buf, size_t cap)
{
	const char *dir = path_of(dirfd);
	if (name[0] == '/' || dirfd == AT_FDCWD || !dir)
		return name;
	size_t dl = strlen(dir);
	snprintf(buf, cap, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
	return buf;
}

int open64(const char *path, int flags, ...)
{
	REAL(open64);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (hit("open64", path) || ((flags & O_CREAT) && hit("creat", path))) {
		errno = err_code();
		return -1;
	}
	int fd = real(path, flags, mode);
	remember(fd, path);
	return fd;
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	char buf[8192];
	const char *full = at_path(dirfd, path, buf, sizeof(buf));
	if (hit("openat64", full) || ((flags & O_CREAT) && hit("creat", full))) {
		errno = err_code();
		return -1;
	}
	int fd = real(dirfd, path, flags, mode);
	remember(fd, full);
	return fd;
}

/* -D_FORTIFY_SOURCE builds call these for an open without a mode */
int __open64_2(const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	return open64(path, flags);
}
int __openat64_2(int dirfd, const char *path, int flags)
{
	return openat64(dirfd, path, flags);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	REAL(pread64);
	if (hit("pread64", path_of(fd))) {
		if (!strcmp(err_, "ZERO"))
			return 0;
		if (!strcmp(err_, "SHORT"))
			return real(fd, buf, n > 1 ? n / 2 : n, off);
		if (!strcmp(err_, "EINTR") && eintr_done[fd])
			return real(fd, buf, n, off);
		if (!strcmp(err_, "EINTR"))
			eintr_done[fd] = true;
		errno = err_code();
		return -1;
	}
	return real(fd, buf, n, off);
}

/* posix_fadvise() returns the error, not -1; with 64-bit off_t on a 32-bit
 * system (_FILE_OFFSET_BITS=64) the program calls posix_fadvise64 */
static int advise(int fd, int advice)
{
	return advice == POSIX_FADV_WILLNEED && hit("willneed", path_of(fd)) ? err_code() : 0;
}

int shim_fadvise(int fd, long off, long len, int advice) __asm__("posix_fadvise");
int shim_fadvise(int fd, long off, long len, int advice)
{
	static int (*real)(int, long, long, int);
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "posix_fadvise");
		memcpy(&real, &sym, sizeof(real));
	}
	int err = advise(fd, advice);
	return err ? err : real ? real(fd, off, len, advice) : 0;
}

int shim_fadvise64(int fd, long long off, long long len, int advice) __asm__("posix_fadvise64");
int shim_fadvise64(int fd, long long off, long long len, int advice)
{
	static int (*real)(int, long long, long long, int);
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "posix_fadvise64");
		memcpy(&real, &sym, sizeof(real));
	}
	int err = advise(fd, advice);
	return err ? err : real ? real(fd, off, len, advice) : 0;
}

int fstat64(int fd, struct stat64 *st)
{
	REAL_AS(fstat64, FSTAT64_SYMBOL);
	if (fake_ino("fstat64", path_of(fd))) {
		int rc = real(fd, st);
		if (rc == 0 && S_ISREG(st->st_mode))
			st->st_ino = 7;
		return rc;
	}
	if (hit("fstat64", path_of(fd))) {
		errno = err_code();
		return -1;
	}
	return real(fd, st);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	REAL_AS(fstatat64, FSTATAT64_SYMBOL);
	char buf[8192];
	if (fake_ino("fstatat64", *path ? at_path(dirfd, path, buf, sizeof(buf)) : path_of(dirfd))) {
		int rc = real(dirfd, path, st, flags);
		if (rc == 0 && S_ISREG(st->st_mode))
			st->st_ino = 7;
		return rc;
	}
	if (hit("fstatat64", path)) {
		errno = err_code();
		return -1;
	}
	return real(dirfd, path, st, flags);
}

/* INO only: stat and lstat report what fstat and fstatat do */
int stat64(const char *path, struct stat64 *st)
{
	REAL_AS(stat64, STAT64_SYMBOL);
	int rc = real(path, st);
	if (rc == 0 && S_ISREG(st->st_mode) && fake_ino("fstatat64", path))
		st->st_ino = 7;
	return rc;
}

int lstat64(const char *path, struct stat64 *st)
{
	REAL_AS(lstat64, LSTAT64_SYMBOL);
	int rc = real(path, st);
	if (rc == 0 && S_ISREG(st->st_mode) && fake_ino("fstatat64", path))
		st->st_ino = 7;
	return rc;
}

struct dirent64 *readdir64(DIR *d)
{
	REAL(readdir64);
	if (hit("readdir64", path_of(dirfd(d)))) {
		errno = err_code();
		return NULL;
	}
	return real(d);
}

int linkat(int olddir, const char *old, int newdir, const char *new_, int flags)
{
	REAL(linkat);
	char buf[8192];
	if (hit("linkat", at_path(newdir, new_, buf, sizeof(buf)))) {
		errno = err_code();
		return -1;
	}
	return real(olddir, old, newdir, new_, flags);
}

int link(const char *old, const char *new_)
{
	REAL(link);
	if (hit("linkat", new_)) {
		errno = err_code();
		return -1;
	}
	return real(old, new_);
}

int mkdir(const char *path, mode_t mode)
{
	REAL(mkdir);
	if (hit("mkdir", path)) {
		errno = err_code();
		return -1;
	}
	return real(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	REAL(mkdirat);
	char buf[8192];
	if (hit("mkdir", at_path(dirfd, path, buf, sizeof(buf)))) {
		errno = err_code();
		return -1;
	}
	return real(dirfd, path, mode);
}

/* a descriptor closed no longer names its path (the number is reused) */
int close(int fd)
{
	REAL(close);
	remember(fd, NULL);
	return real(fd);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write);
	if (hit("write", path_of(fd))) {
		errno = err_code();
		return -1;
	}
	return real(fd, buf, n);
}

int fsync(int fd)
{
	REAL(fsync);
	if (hit("fsync", path_of(fd))) {
		errno = err_code();
		return -1;
	}
	return real(fd);
}

int fdatasync(int fd)
{
	REAL(fdatasync);
	if (hit("fsync", path_of(fd))) {
		errno = err_code();
		return -1;
	}
	return real(fd);
}

int symlink(const char *target, const char *path)
{
	REAL(symlink);
	if (hit("symlink", path)) {
		errno = err_code();
		return -1;
	}
	return real(target, path);
}

int rename(const char *old, const char *new_)
{
	REAL(rename);
	if (hit("rename", new_)) {
		errno = err_code();
		return -1;
	}
	return real(old, new_);
}

int unlink(const char *path)
{
	REAL(unlink);
	if (hit("unlink", path) && !strstr(path, ".dupscan-tmp-")) {
		errno = err_code();
		return -1;
	}
	return real(path);
}

int symlinkat(const char *target, int dirfd, const char *path)
{
	REAL(symlinkat);
	char buf[8192];
	if (hit("symlink", at_path(dirfd, path, buf, sizeof(buf)))) {
		errno = err_code();
		return -1;
	}
	return real(target, dirfd, path);
}

int renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags)
{
	REAL(renameat2);
	char buf[8192];
	if (hit("rename", at_path(newdir, new_, buf, sizeof(buf)))) {
		errno = err_code();
		return -1;
	}
	return real(olddir, old, newdir, new_, flags);
}

int renameat(int olddir, const char *old, int newdir, const char *new_)
{
	return renameat2(olddir, old, newdir, new_, 0);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(unlinkat);
	char buf[8192];
	if (hit("unlink", at_path(dirfd, path, buf, sizeof(buf)))) {
		errno = err_code();
		return -1;
	}
	return real(dirfd, path, flags);
}

/* SPDX-License-Identifier: MIT */
/* check_remote.c: the remote-scan channel's fields and frames (wire.c), and a
 * scan across hosts with a real dupscan_serve() in a child process at the
 * other end of a socket pair: its sets, a kept file there re-checked by it,
 * its files never acted on, and a server that dies failing the run. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"
#include "remote/wire.h"

static struct ds_rd rd_of(const uint8_t *p, size_t n)
{
	return (struct ds_rd){ p, p + n, false };
}

START_TEST(test_fields)
{
	struct ds_wr w = { 0 };
	const uint64_t v[] = { 0, 1, 127, 128, 300, UINT32_MAX, UINT64_MAX };
	ds_wr_begin(&w, DS_W_DIR);
	for (size_t i = 0; i < 7; i++)
		ds_wr_u64(&w, v[i]);
	ds_wr_str(&w, "name", 4);
	struct ds_rd r = rd_of(w.buf + 5, w.len - 5);
	for (size_t i = 0; i < 7; i++)
		ck_assert_uint_eq(ds_rd_u64(&r), v[i]);
	size_t len;
	const char *s = ds_rd_str(&r, &len);
	ck_assert(!r.bad && len == 4 && memcmp(s, "name", 4) == 0 && !ds_rd_more(&r));
	/* past the end, too long a number, a number over its limit, a NUL in a string */
	ds_rd_u64(&r);
	ck_assert(r.bad);
	const uint8_t eleven[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	r = rd_of(eleven, sizeof(eleven));
	ck_assert_uint_eq(ds_rd_u64(&r), 0);
	ck_assert(r.bad);
	const uint8_t big[] = { 0x80, 0x01 };
	r = rd_of(big, 2);
	ck_assert_uint_eq(ds_rd_max(&r, 127), 0);
	ck_assert(r.bad);
	const uint8_t nul[] = { 3, 'a', 0, 'b' }, longer[] = { 9, 'a' };
	r = rd_of(nul, 4);
	ds_rd_str(&r, &len);
	ck_assert(r.bad && len == 0);
	r = rd_of(longer, 2);
	ds_rd_str(&r, &len);
	ck_assert(r.bad);
	ds_wr_free(&w);
}
END_TEST

/* A channel on one end of a socket pair; raw bytes written to the other. */
static void chan_pair(struct ds_chan *c, int sv[2], int timeout_ms)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ds_chan_init(c, sv[0], sv[0], "peer", timeout_ms);
}

static int recv_after(const void *bytes, size_t n, bool close_after, struct ds_chan *c)
{
	int sv[2], type;
	chan_pair(c, sv, 300);
	ck_assert(write(sv[1], bytes, n) == (ssize_t)n);
	if (close_after)
		close(sv[1]);
	struct ds_rd r;
	int rc = ds_chan_recv(c, &type, &r);
	close(sv[0]);
	if (!close_after)
		close(sv[1]);
	return rc;
}

START_TEST(test_frames)
{
	struct ds_chan c;
	/* a shell's greeting instead of a frame */
	ck_assert_int_eq(recv_after("Welcome!", 8, false, &c), DUPSCAN_E_PROTOCOL);
	ck_assert_ptr_nonnull(strstr(c.why, "not a dupscan server"));
	ds_chan_free(&c);
	/* a frame cut short, then the end */
	const uint8_t cut[] = { 10, 0, 0, 0, DS_W_DIR, 1 };
	ck_assert_int_eq(recv_after(cut, sizeof(cut), true, &c), DUPSCAN_E_REMOTE);
	ck_assert_ptr_nonnull(strstr(c.why, "truncated frame (2 of 10 bytes"));
	ds_chan_free(&c);
	/* the same cut short and silent: no hang past the timeout */
	int64_t t0 = ds_mono_ns();
	ck_assert_int_eq(recv_after(cut, sizeof(cut), false, &c), DUPSCAN_E_REMOTE);
	ck_assert_int_lt(ds_mono_ns() - t0, 3000000000LL);
	ds_chan_free(&c);
	/* an unknown type; an empty frame */
	const uint8_t unknown[] = { 1, 0, 0, 0, 99 }, empty[] = { 0, 0, 0, 0 };
	ck_assert_int_eq(recv_after(unknown, sizeof(unknown), true, &c), DUPSCAN_E_PROTOCOL);
	ds_chan_free(&c);
	ck_assert_int_eq(recv_after(empty, sizeof(empty), true, &c), DUPSCAN_E_PROTOCOL);
	ds_chan_free(&c);
	/* the other side gives up, saying why */
	const uint8_t fail[] = { 5, 0, 0, 0, DS_W_FAIL, 3, 'w', 'h', 'y' };
	ck_assert_int_eq(recv_after(fail, sizeof(fail), true, &c), DUPSCAN_E_REMOTE);
	ck_assert_str_eq(c.why, "the other side failed: why");
	ds_chan_free(&c);
}
END_TEST

START_TEST(test_hello)
{
	struct ds_wr w = { 0 };
	ds_wire_hello(&w, DS_WIRE_SIZES);
	struct ds_chan c;
	ds_chan_init(&c, -1, -1, "peer", 100);
	struct ds_rd r = rd_of(w.buf + 5, w.len - 5);
	uint64_t features = 0;
	ck_assert_int_eq(ds_wire_hello_check(&c, &r, &features), 0);
	ck_assert_uint_eq(features, DS_WIRE_SIZES);
	/* a peer of 0.9 says nothing after its version: it does none of it */
	ds_wr_begin(&w, DS_W_HELLO);
	ds_wr_str(&w, DS_WIRE_MAGIC, strlen(DS_WIRE_MAGIC));
	ds_wr_u64(&w, DS_WIRE_PROTOCOL);
	ds_wr_str(&w, "0.9.0", 5);
	r = rd_of(w.buf + 5, w.len - 5);
	ck_assert_int_eq(ds_wire_hello_check(&c, &r, &features), 0);
	ck_assert_uint_eq(features, 0);
	/* another protocol: both versions named */
	ds_wr_begin(&w, DS_W_HELLO);
	ds_wr_str(&w, DS_WIRE_MAGIC, strlen(DS_WIRE_MAGIC));
	ds_wr_u64(&w, DS_WIRE_PROTOCOL + 1);
	ds_wr_str(&w, "9.1.2", 5);
	r = rd_of(w.buf + 5, w.len - 5);
	ck_assert_int_eq(ds_wire_hello_check(&c, &r, &features), DUPSCAN_E_PROTOCOL);
	ck_assert_ptr_nonnull(strstr(c.why, "dupscan 9.1.2"));
	ck_assert_ptr_nonnull(strstr(c.why, "this side dupscan " DUPSCAN_VERSION_STRING));
	ds_wr_free(&w);
}
END_TEST

/* SIZES: sent in frames, taken back whole; out of order, repeated or after
 * anything but SIZES, refused; a BYE first is the client going away. */
static int sizes_through(const uint8_t *bytes, size_t n, uint64_t **v, size_t *nv, bool *keep)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], bytes, n), (ssize_t)n);
	close(p[1]);
	struct ds_chan c;
	ds_chan_init(&c, p[0], -1, "peer", 1000);
	int rc = ds_wire_sizes_recv(&c, v, nv, keep);
	ds_chan_free(&c);
	close(p[0]);
	return rc;
}

START_TEST(test_sizes)
{
	enum { N = 150000 }; /* three frames */
	uint64_t *want = malloc(N * sizeof(*want)), *got = NULL;
	for (size_t i = 0; i < N; i++)
		want[i] = i * i + 7;
	int sp[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct ds_chan c;
		ds_chan_init(&c, -1, sp[1], "peer", 1000);
		_exit(ds_wire_sizes_send(&c, want, N, true) == 0 ? 0 : 1);
	}
	close(sp[1]);
	struct ds_chan c;
	ds_chan_init(&c, sp[0], -1, "peer", 5000);
	size_t n = 0;
	bool keep = false;
	ck_assert_int_eq(ds_wire_sizes_recv(&c, &got, &n, &keep), 0);
	ck_assert(keep);
	ds_chan_free(&c);
	close(sp[0]);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(n, N);
	ck_assert_int_eq(memcmp(got, want, N * sizeof(*want)), 0);
	free(got);
	free(want);
	/* none: one frame, last */
	const uint8_t none[] = { 2, 0, 0, 0, DS_W_SIZES, 1 };
	ck_assert_int_eq(sizes_through(none, sizeof(none), &got, &n, &keep), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert(!keep);
	free(got);
	const uint8_t repeated[] = { 4, 0, 0, 0, DS_W_SIZES, 1, 5, 0 };
	ck_assert_int_eq(sizes_through(repeated, sizeof(repeated), &got, &n, &keep), DUPSCAN_E_PROTOCOL);
	ck_assert_ptr_null(got);
	const uint8_t other[] = { 2, 0, 0, 0, DS_W_HASH, 1 };
	ck_assert_int_eq(sizes_through(other, sizeof(other), &got, &n, &keep), DUPSCAN_E_PROTOCOL);
	const uint8_t bye[] = { 1, 0, 0, 0, DS_W_BYE };
	ck_assert_int_eq(sizes_through(bye, sizeof(bye), &got, &n, &keep), DUPSCAN_E_REMOTE);
	/* a step past 2^64 */
	const uint8_t wrap[] = { 22, 0, 0, 0, DS_W_SIZES, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
				 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	ck_assert_int_eq(sizes_through(wrap, sizeof(wrap), &got, &n, &keep), DUPSCAN_E_PROTOCOL);
	/* frames that disagree on the other files */
	const uint8_t mixed[] = { 3, 0, 0, 0, DS_W_SIZES, DS_SIZES_KEEP, 4, 3, 0, 0, 0, DS_W_SIZES, DS_SIZES_LAST, 9 };
	ck_assert_int_eq(sizes_through(mixed, sizeof(mixed), &got, &n, &keep), DUPSCAN_E_PROTOCOL);
	/* an unknown bit */
	const uint8_t odd[] = { 2, 0, 0, 0, DS_W_SIZES, 5 };
	ck_assert_int_eq(sizes_through(odd, sizeof(odd), &got, &n, &keep), DUPSCAN_E_PROTOCOL);
	/* the channel ends before the last frame */
	const uint8_t cut[] = { 3, 0, 0, 0, DS_W_SIZES, 0, 9 };
	ck_assert_int_eq(sizes_through(cut, sizeof(cut), &got, &n, &keep), DUPSCAN_E_REMOTE);
}
END_TEST

/* What a server in a child tells of its run (in memory shared with it). */
struct told {
	uint64_t read;               /* bytes it read */
	uint32_t nrecs;              /* records it kept to the end */
};

/* A server for dir/R in a child, on a socket, its records under budget
 * (0: none; a budget it must pass: it exits 3 when nothing spilled); what
 * it read and kept into *told when not NULL. @return its pid; *fd our end. */
static pid_t serve_patient(int *fd, uint64_t budget, struct told *told, int patience)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		dupscan_scan *s = NULL;
		int rc = dupscan_create(&s);
		if (rc == 0)
			s->core.opt.max_memory = budget; /* (below what the option takes: every block spills) */
		if (rc == 0 && patience)
			rc = dupscan_set_option(s, DUPSCAN_OPT_REMOTE_TIMEOUT, patience);
		if (rc == 0)
			rc = dupscan_serve(s, sv[1], sv[1]);
		bool spilled = s && dupscan_spilled(s) > 0;
		if (s && told)
			*told = (struct told){ atomic_load(&s->core.progress.read), s->tree.nrecs };
		dupscan_free(s);
		_exit(rc != 0 ? 1 : budget && !spilled ? 3 : 0);
	}
	close(sv[1]);
	*fd = sv[0];
	return pid;
}

static pid_t serve_budget(int *fd, uint64_t budget, struct told *told)
{
	return serve_patient(fd, budget, told, 0);
}

static pid_t serve_child(int *fd)
{
	return serve_budget(fd, 0, NULL);
}

static int wait_child(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define MANY 40u

static void tree(const char *dir)
{
	tu_file(dir, "L/a", 200000, 1, -1);
	tu_file(dir, "L/b", 200000, 1, -1);
	tu_file(dir, "L/c", 9000, 2, -1);
	tu_file(dir, "L/d", 70000, 3, 69999); /* differs from R/d at its last byte */
	tu_file(dir, "R/a2", 200000, 1, -1);
	tu_file(dir, "R/c2", 9000, 2, -1);
	tu_file(dir, "R/d", 70000, 3, -1);
	tu_file(dir, "R/e", 5000, 4, -1);
	tu_file(dir, "R/e2", 5000, 4, -1);
	/* many of one size on both sides: a hash request the server answers on
	 * several threads */
	for (unsigned i = 0; i < MANY; i++) {
		char name[32];
		snprintf(name, sizeof(name), "L/m/%02u", i);
		tu_file(dir, name, 300, 100 + i, -1);
		snprintf(name, sizeof(name), "R/m/%02u", i);
		tu_file(dir, name, 300, 100 + i, -1);
	}
}

/* A server in a child (killed at once with dead), started before the test
 * allocates anything: the child must hold nothing of its (valgrind counts
 * what a child inherits and never frees as the child's leak). */
static pid_t server(bool dead, int *fd)
{
	pid_t pid = serve_child(fd);
	if (dead)
		kill(pid, SIGKILL);
	return pid;
}

/* A scan of dir/L here and dir/R through the server at fd, not run yet. */
static dupscan_scan *across(const char *dir, int fd)
{
	char *L = tu_path(dir, "L"), *R = tu_path(dir, "R");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_add_path(s, L, 1), 0);
	ck_assert_int_eq(dupscan_add_remote(s, "peer", fd, fd, R, 1), 1);
	free(L);
	free(R);
	return s;
}

START_TEST(test_across)
{
	int fd;
	pid_t pid = server(false, &fd);
	char *dir = tu_tmpdir();
	tree(dir);
	dupscan_scan *s = across(dir, fd);
	ck_assert_int_eq(dupscan_run(s), 0);
	char *sets = tu_sets(s, dir), want[16384], wantu[512];
	size_t at = (size_t)snprintf(want, sizeof(want), "L/a L/b peer:%s/R/a2|L/c peer:%s/R/c2|", dir, dir);
	for (unsigned i = 0; i < MANY; i++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, "L/m/%02u peer:%s/R/m/%02u|", i, dir, i);
	snprintf(want + at, sizeof(want) - at, "peer:%s/R/e peer:%s/R/e2", dir, dir);
	ck_assert_str_eq(sets, want);
	char *u = tu_uniques(s, dir);
	snprintf(wantu, sizeof(wantu), "L/d peer:%s/R/d", dir);
	ck_assert_str_eq(u, wantu);
	const dupscan_set *set = dupscan_get_set(s, 0);
	const dupscan_file *ra2 = dupscan_set_file(set, 2), *la = dupscan_set_file(set, 0);
	ck_assert_str_eq(dupscan_file_host(ra2), "peer");
	ck_assert_ptr_null(dupscan_file_host(la));
	uint64_t in, out;
	dupscan_remote_bytes(s, &in, &out);
	/* R/a2's and R/c2's bytes came through, and little else */
	ck_assert_uint_ge(in, 209000 + MANY * 300);
	ck_assert_uint_lt(in, 209000 + MANY * 300 + 64 * (5 + MANY));
	/* never acted on; links need both here */
	ck_assert_int_eq(dupscan_remove_duplicate(la, ra2, 0), DUPSCAN_E_REMOTE_FILE);
	ck_assert_int_eq(dupscan_replace_with_link(ra2, la, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_REMOTE_FILE);
	/* kept there, changed since the scan: refused, the local copy stays */
	ck_assert_int_eq(dupscan_check_unchanged(ra2), 0);
	char *a2 = tu_path(dir, "R/a2"), *lb = tu_path(dir, "L/b");
	tu_file(dir, "R/a2", 200000, 1, 5);
	ck_assert_int_eq(dupscan_remove_duplicate(ra2, la, 0), DUPSCAN_E_CHANGED);
	ck_assert_int_eq(access(la->path, F_OK), 0);
	/* kept there and unchanged: the local copy goes */
	const dupscan_set *set2 = dupscan_get_set(s, 1); /* L/c and R/c2 */
	ck_assert_int_eq(dupscan_remove_duplicate(dupscan_set_file(set2, 1), dupscan_set_file(set2, 0), 0), 0);
	ck_assert_int_eq(access(dupscan_set_file(set2, 0)->path, F_OK), -1);
	dupscan_free(s);
	ck_assert_int_eq(wait_child(pid), 0);
	close(fd);
	free(a2);
	free(lb);
	free(sets);
	free(u);
	tu_cleanup(dir);
}
END_TEST

/* Many files on both sides: R's 6,000 (one in three a copy of another of
 * R's, one in four a copy of one of L's), L's 2,000 over sizes half of
 * which R has too. */
static void many(const char *dir)
{
	char name[64];
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "L/%u/f%04u", i % 20, i);
		tu_file(dir, name, 100 + i % 1000 * 2, 1000 + i, -1);
	}
	for (unsigned i = 0; i < 6000; i++) {
		unsigned seed = i % 3 == 2 ? 5000 + i - 1 : 5000 + i, size = 100 + i % 1500;
		if (i % 4 == 3) /* one of L's */
			seed = 1000 + i % 2000, size = 100 + i % 2000 % 1000 * 2;
		snprintf(name, sizeof(name), "R/%u/f%04u", i % 30, i);
		tu_file(dir, name, size, seed, -1);
	}
}

/* dir/L here (its records under mine: 0, none) and dir/R through a server
 * under budget, ref: neither a reference (0), L (1) or R (2): the sets and
 * unique files (none listed here under a budget); the records kept here. */
static uint32_t served_here(const char *dir, int ref, uint64_t budget, uint64_t mine, char **sets, char **uniques,
			    struct told *told)
{
	int fd;
	pid_t pid = serve_budget(&fd, budget, told);
	char *L = tu_path(dir, "L"), *R = tu_path(dir, "R");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	s->core.opt.max_memory = mine; /* (as the server's: every block spills) */
	if (ref == 1)
		ck_assert_int_eq(dupscan_add_reference(s, L, 1), 0);
	else
		ck_assert_int_eq(dupscan_add_path(s, L, 1), 0);
	ck_assert_int_eq(dupscan_add_remote(s, "peer", fd, fd, R, 1), 1);
	if (ref == 2)
		ck_assert_int_eq(dupscan_set_reference(s, 1), 1);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert(!mine || dupscan_spilled(s) > 0);
	*sets = tu_sets(s, dir);
	*uniques = ref || mine ? strdup("") : tu_uniques(s, dir);
	ck_assert_uint_gt(dupscan_set_count(s), 100);
	uint32_t kept = s->tree.nrecs;
	dupscan_free(s);
	ck_assert_int_eq(wait_child(pid), 0);
	close(fd);
	free(L);
	free(R);
	return kept;
}

static void served(const char *dir, int ref, uint64_t budget, char **sets, char **uniques, struct told *told)
{
	served_here(dir, ref, budget, 0, sets, uniques, told);
}

/* A server past its memory budget keeps the files its client may ask for:
 * the sets across hosts and the unique files are those of a server without
 * one, without the client's sizes and with them (a reference here: all of
 * its files stay, the others listed unique; a reference there: only the
 * files of the sizes here stay); each reads what it reads without a budget
 * (with the sizes: none of the files of the sizes left out, in each band). */
START_TEST(test_server_budget)
{
	char *dir = tu_tmpdir_shm();
	many(dir);
	struct told *told = mmap(NULL, 2 * sizeof(*told), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(told, MAP_FAILED);
	for (int ref = 0; ref <= 2; ref++) {
		char *s0, *u0, *s1, *u1;
		served(dir, ref, 0, &s0, &u0, &told[0]);
		served(dir, ref, 1, &s1, &u1, &told[1]);
		ck_assert_str_eq(s1, s0);
		ck_assert_str_eq(u1, u0);
		ck_assert_uint_gt(told[0].read, 0);
		ck_assert_uint_eq(told[1].read, told[0].read);
		ck_assert_uint_eq(told[0].nrecs, 6000);
		if (ref == 2) /* R's files of L's sizes (even ones from 100 on): 4,500 of 6,000 */
			ck_assert_uint_eq(told[1].nrecs, 4500);
		else
			ck_assert_uint_eq(told[1].nrecs, 6000);
		free(s0);
		free(u0);
		free(s1);
		free(u1);
	}
	munmap(told, 2 * sizeof(*told));
	tu_cleanup(dir);
}
END_TEST

/* The client's own work between the results and its first request. */
static int nap(dupscan_scan *s, void *user)
{
	(void)s;
	(void)user;
	struct timespec t = { 2, 500000000 };
	nanosleep(&t, NULL);
	return 0;
}

/* A server whose patience is a second waits for a client that works on its
 * own files for longer before its first request (its walk, its matching):
 * it is still there to answer, and the sets are the same. */
START_TEST(test_client_at_work)
{
	int fd;
	pid_t pid = serve_patient(&fd, 0, NULL, 1);
	char *dir = tu_tmpdir();
	tree(dir);
	dupscan_scan *s = across(dir, fd);
	s->after_walk = nap;
	ck_assert_int_eq(dupscan_run(s), 0);
	char *sets = tu_sets(s, dir), want[512];
	snprintf(want, sizeof(want), "L/a L/b peer:%s/R/a2|L/c peer:%s/R/c2|", dir, dir);
	ck_assert_msg(strncmp(sets, want, strlen(want)) == 0, "sets: %s", sets);
	dupscan_free(s);
	ck_assert_int_eq(wait_child(pid), 0);
	close(fd);
	free(sets);
	tu_cleanup(dir);
}
END_TEST

/* This side past its own budget: the sets across hosts those of a scan
 * without one, a reference here, there or neither; the server reads what
 * it reads without (a reference there, told this side's sizes from the
 * spill, reads the files of those sizes and no other); this side keeps,
 * of L's 2,000 files, only those of the sizes R has. */
START_TEST(test_client_budget)
{
	char *dir = tu_tmpdir_shm();
	many(dir);
	struct told *told = mmap(NULL, 2 * sizeof(*told), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(told, MAP_FAILED);
	/* R's sizes, as many() makes them */
	static bool has[2200];
	for (unsigned i = 0; i < 6000; i++)
		has[i % 4 == 3 ? 100 + i % 2000 % 1000 * 2 : 100 + i % 1500] = true;
	uint32_t of_theirs = 0;
	for (unsigned i = 0; i < 2000; i++)
		of_theirs += has[100 + i % 1000 * 2];
	ck_assert_uint_lt(of_theirs, 2000);
	for (int ref = 0; ref <= 2; ref++) {
		char *s0, *u0, *s1, *u1;
		ck_assert_uint_eq(served_here(dir, ref, 0, 0, &s0, &u0, &told[0]), 2000);
		ck_assert_uint_eq(served_here(dir, ref, 0, 1, &s1, &u1, &told[1]), of_theirs);
		ck_assert_str_eq(s1, s0);
		ck_assert_uint_gt(told[0].read, 0);
		ck_assert_uint_eq(told[1].read, told[0].read);
		free(s0);
		free(u0);
		free(s1);
		free(u1);
	}
	munmap(told, 2 * sizeof(*told));
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_server_dies)
{
	int fd;
	pid_t pid = server(true, &fd);
	char *dir = tu_tmpdir();
	tree(dir);
	dupscan_scan *s = across(dir, fd);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_REMOTE);
	/* no half result: the local sets are not shown as the scan's either */
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	ck_assert_uint_ge(dupscan_error_count(s), 1);
	dupscan_free(s);
	wait_child(pid);
	close(fd);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	signal(SIGPIPE, SIG_DFL); /* the library must not need it ignored */
	Suite *s = suite_create("remote");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_frames);
	tcase_add_test(tc, test_hello);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_across);
	tcase_add_test(tc, test_server_dies);
	tcase_add_test(tc, test_client_at_work);
	tcase_add_test(tc, test_client_budget);
	tcase_add_test(tc, test_server_budget);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* check_scan: the handle's life (scan.c): options checked when given, one run
 * only, nothing added after it, NULL handles refused, the descriptors a run
 * may hold fitted to the process' limit, a run canceled before it starts
 * ending with whole sets (none) and DUPSCAN_E_CANCELED, and the progress
 * callbacks: each phase's files and bytes, the bound on bytes never below
 * what is read, both callbacks at once. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "scan.h"
#include "testutil.h"

START_TEST(test_options)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ZERO_MATCH, 1), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ZERO_MATCH, 2), DUPSCAN_E_OPTION); /* a flag is 0 or 1 */
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MIN_CHUNK - 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MAX_CHUNK + 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_CHUNK_SIZE, DS_MIN_CHUNK), 0);
	ck_assert(s->core.opt.chunk == DS_MIN_CHUNK && s->core.opt.chunk_given);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, -1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 1025), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 3), 0);
	ck_assert_int_eq(s->core.opt.threads, DUPSCAN_THREADS ? 3 : 1);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO_MEMORY, (1 << 20) - 1), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO_MEMORY, 1 << 20), 0);
	ck_assert_uint_eq(s->core.opt.sweep_budget, 1 << 20);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_ORDER, 7), DUPSCAN_E_OPTION);
	ck_assert_int_eq(dupscan_set_option(s, 9999, 1), DUPSCAN_E_OPTION);
	dupscan_free(s);
}
END_TEST

START_TEST(test_one_run)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "same\n");
	tu_text(dir, "b", "same\n");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_add_path(s, "", 1), -EINVAL);
	ck_assert_int_eq(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_add_path(s, dir, 0), 1);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_eq(dupscan_set_count(s), 1);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_add_path(s, dir, 1), DUPSCAN_E_STATE);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_QUICK, 1), DUPSCAN_E_STATE);
	ck_assert_uint_eq(dupscan_set_count(s), 1); /* the first run's sets stand */
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_null)
{
	ck_assert_int_eq(dupscan_create(NULL), -EINVAL);
	ck_assert_int_eq(dupscan_add_path(NULL, "x", 1), -EINVAL);
	ck_assert_int_eq(dupscan_set_option(NULL, DUPSCAN_OPT_QUICK, 1), -EINVAL);
	ck_assert_int_eq(dupscan_run(NULL), -EINVAL);
	ck_assert_uint_eq(dupscan_set_count(NULL), 0);
	ck_assert_ptr_null(dupscan_get_set(NULL, 0));
	ck_assert_int_eq(dupscan_io_mode(NULL), DUPSCAN_IO_AUTO);
	dupscan_cancel(NULL);
	dupscan_free(NULL);
}
END_TEST

/* Every thread may hold max_open files; together they fit the limit. */
START_TEST(test_open_files_fit)
{
	/* 200 in the test's own process; valgrind refuses it: then the limit it has */
	struct rlimit rl, low = { 200, 200 };
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	size_t limit = setrlimit(RLIMIT_NOFILE, &low) == 0 ? 200 : rl.rlim_cur == RLIM_INFINITY ? 1024 : rl.rlim_cur;
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "x");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, 4), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_ge(s->reading.max_open, 8);
	ck_assert_uint_le(s->reading.max_open * (size_t)s->core.opt.threads, limit - 64);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

START_TEST(test_canceled_before)
{
	char *dir = tu_tmpdir();
	tu_text(dir, "a", "same\n");
	tu_text(dir, "b", "same\n");
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	dupscan_cancel(s);
	ck_assert_int_eq(dupscan_run(s), DUPSCAN_E_CANCELED);
	ck_assert_uint_eq(dupscan_set_count(s), 0);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

#define MAX_EVENTS 4096
struct events {
	struct dupscan_progress ev[MAX_EVENTS];
	size_t n;
	size_t old_calls;
	uint64_t old_done, old_total; /* the old callback's last match report */
};

static void on_bytes(void *user, const struct dupscan_progress *p)
{
	struct events *e = user;
	if (e->n < MAX_EVENTS)
		e->ev[e->n++] = *p;
}

static void on_old(void *user, int phase, uint64_t done, uint64_t total)
{
	struct events *e = user;
	e->old_calls++;
	if (phase == DUPSCAN_PHASE_MATCH) {
		e->old_done = done;
		e->old_total = total;
	}
}

/* The last event of a phase, or NULL. */
static const struct dupscan_progress *last_of(const struct events *e, int phase)
{
	const struct dupscan_progress *last = NULL;
	for (size_t i = 0; i < e->n; i++)
		if (e->ev[i].phase == phase)
			last = &e->ev[i];
	return last;
}

START_TEST(test_progress_bytes)
{
	int io = _i ? DUPSCAN_IO_HDD : DUPSCAN_IO_SSD;
	char *dir = tu_tmpdir();
	tu_file(dir, "a1", 300000, 1, -1);
	tu_file(dir, "a2", 300000, 1, -1);
	tu_file(dir, "b1", 300000, 2, -1);  /* a's size, another first block */
	tu_text(dir, "c1", "same\n");
	tu_text(dir, "c2", "same\n");
	tu_file(dir, "u", 123, 4, -1);       /* alone in its size: never read */
	tu_file(dir, "d1", 2 << 20, 3, -1);
	tu_file(dir, "d2", 2 << 20, 3, 1500000); /* differs in the middle */
	uint64_t all = 3 * 300000 + 2 * 5 + 123 + 2 * (2 << 20), candidates = all - 123;
	static struct events e;
	memset(&e, 0, sizeof(e));
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, io), 0);
	dupscan_set_progress_bytes_callback(s, on_bytes, &e);
	dupscan_set_progress_callback(s, on_old, &e);
	ck_assert_int_eq(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_uint_eq(dupscan_set_count(s), 2);
	/* phases in order: the walk, (hdd) the first blocks, matching */
	ck_assert_uint_gt(e.n, 2);
	ck_assert_int_eq(e.ev[0].phase, DUPSCAN_PHASE_WALK);
	int rank[4] = { 0, 0, 2, 1 }; /* by phase: WALK, MATCH, FIRST */
	for (size_t i = 1; i < e.n; i++)
		ck_assert_int_le(rank[e.ev[i - 1].phase], rank[e.ev[i].phase]);
	const struct dupscan_progress *walk = last_of(&e, DUPSCAN_PHASE_WALK);
	ck_assert_uint_eq(walk->files_done, 8);
	ck_assert_uint_eq(walk->files_total, 8);
	ck_assert_uint_eq(walk->bytes_done, all);
	ck_assert(io == DUPSCAN_IO_HDD ? last_of(&e, DUPSCAN_PHASE_FIRST) != NULL : last_of(&e, DUPSCAN_PHASE_FIRST) == NULL);
	/* whatever the moment, the bound is at least what is read by then and
	 * at the phase's end: its bytes are never more than it said */
	const struct dupscan_progress *match = last_of(&e, DUPSCAN_PHASE_MATCH);
	for (size_t i = 0; i < e.n; i++) {
		const struct dupscan_progress *p = &e.ev[i];
		if (p->phase == DUPSCAN_PHASE_WALK)
			continue;
		ck_assert_uint_le(p->files_done, p->files_total);
		ck_assert_uint_le(p->bytes_done, p->bytes_total);
		if (p->phase == DUPSCAN_PHASE_MATCH)
			ck_assert_uint_ge(p->bytes_total, match->bytes_done);
	}
	/* matching's end: every candidate settled; what it read lies between
	 * the bytes proving a and d (d up to where it differs) and them all */
	ck_assert_uint_eq(match->files_done, 7);
	ck_assert_uint_eq(match->files_total, 7);
	ck_assert_uint_eq(match->bytes_done, match->bytes_total);
	ck_assert_uint_ge(match->bytes_done, 2 * 300000 + 2 * 1500000);
	ck_assert_uint_le(match->bytes_done, candidates + (io == DUPSCAN_IO_HDD ? 7 * 4096 : 0));
	/* the old callback still reports files */
	ck_assert_uint_gt(e.old_calls, 0);
	ck_assert_uint_eq(e.old_done, 7);
	ck_assert_uint_eq(e.old_total, 7);
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("handle");
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_one_run);
	tcase_add_test(tc, test_null);
	tcase_add_test(tc, test_open_files_fit);
	tcase_add_test(tc, test_canceled_before);
	tcase_add_loop_test(tc, test_progress_bytes, 0, 2);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

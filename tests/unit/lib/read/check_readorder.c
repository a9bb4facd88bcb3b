/* SPDX-License-Identifier: MIT */
/* check_readorder: the spinning disk's first pass (readorder.c) and sweep
 * (sweep.c), run on a group walked here: every file's first block hashed and
 * ranked in one disk order, kept within the budget (a file smaller than a
 * block taking its own bytes, not a block's), a file that cannot be
 * read failing at its group's turn, and the sweep's classes whole-file exact:
 * a copy joins, a file differing in its last byte or past its head does not. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"
#include "walk/walk.h"
#include "read/read.h"
#include "read/place.h"

#define SIZE (300u * 1024u) /* past a head (DS_HDD_HEAD), within a sweep */

struct walked {
	char *dir;
	dupscan_scan *s;
	uint32_t order[16];
	uint32_t groups[2];
	size_t n;
};

/* Files of one size: a, its copy b, c differing in the last byte, d past its
 * head, e in its first block; walked in hdd mode, as one group by name. */
static void walk_group(struct walked *w)
{
	w->dir = tu_tmpdir();
	tu_file(w->dir, "a", SIZE, 11, -1);
	tu_file(w->dir, "b", SIZE, 11, -1);
	tu_file(w->dir, "c", SIZE, 11, SIZE - 1);
	tu_file(w->dir, "d", SIZE, 11, DS_HDD_HEAD + 5);
	tu_file(w->dir, "e", SIZE, 11, 100);
	ck_assert_int_eq(dupscan_create(&w->s), 0);
	ck_assert_int_eq(dupscan_set_option(w->s, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
	ck_assert_int_ge(dupscan_add_path(w->s, w->dir, 1), 0);
	ck_assert_int_eq(ds_walk(&w->s->walk), 0);
	w->n = w->s->tree.nrecs;
	ck_assert_uint_eq(w->n, 5);
	/* by name: a b c d e */
	for (uint32_t i = 0; i < w->n; i++) {
		char *p = ds_rec_path_alloc(&w->s->tree, i);
		w->order[p[strlen(p) - 1] - 'a'] = i;
		free(p);
	}
	w->groups[0] = 0;
	w->groups[1] = (uint32_t)w->n;
}

static void done(struct walked *w)
{
	ds_sweep_free(w->s->reading.sweep);
	w->s->reading.sweep = NULL;
	ds_first_pass_free(w->s->reading.first_pass);
	w->s->reading.first_pass = NULL;
	dupscan_free(w->s);
	tu_cleanup(w->dir);
}

/* dir walked in hdd mode (threads: 0 for the default), n files found. */
static dupscan_scan *walk_hdd(const char *dir, int threads, uint32_t n)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
	if (threads)
		ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, threads), 0);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(ds_walk(&s->walk), 0);
	ck_assert_uint_eq(s->tree.nrecs, n);
	return s;
}

/* The first len bytes of record rec's file into buf. */
static void read_start(dupscan_scan *s, uint32_t rec, void *buf, size_t len)
{
	char *path = ds_rec_path_alloc(&s->tree, rec);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ds_pread_full(fd, buf, len, 0), 0);
	close(fd);
	free(path);
}

/* The end of a test that ran a first pass on its own scan. */
static void pass_done(dupscan_scan *s, char *dir)
{
	ds_first_pass_free(s->reading.first_pass);
	s->reading.first_pass = NULL;
	dupscan_free(s);
	tu_cleanup(dir);
}

/* Small files keep their first blocks in their own length: 40 files of
 * 20 bytes take 800 bytes of the pass's memory, not 40 blocks. */
START_TEST(test_first_pass_small)
{
	char *dir = tu_tmpdir();
	char name[16], text[24];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "f%02d", i);
		snprintf(text, sizeof(text), "twenty bytes, no. %02d", i % 20);
		tu_text(dir, name, text);
	}
	dupscan_scan *s = walk_hdd(dir, 0, 40);
	uint32_t order[40], groups[2] = { 0, 40 };
	for (uint32_t i = 0; i < 40; i++)
		order[i] = i;
	ck_assert_int_eq(ds_first_pass_run(&s->reading, order, 40, groups, 1, 0), 0);
	const struct ds_first_pass *fp = s->reading.first_pass;
	ck_assert_uint_eq(fp->capbytes, 40 * 20);
	for (uint32_t p = 0; p < 40; p++) {
		read_start(s, order[p], text, 20);
		ck_assert_ptr_nonnull(ds_fp_block(fp, p));
		ck_assert(memcmp(ds_fp_block(fp, p), text, 20) == 0);
	}
	pass_done(s, dir);
}
END_TEST

/* Before ds_first_pass_by_pos(): one disk order of positions [from, to)
 * (the entries read, each of them once and no other). @return a position
 * out of place, or DS_NONE. */
static uint32_t bad_order(const struct ds_first_pass *fp, uint32_t from, uint32_t to)
{
	static bool seen[1u << 16];
	ck_assert_uint_le(fp->n, 1u << 16);
	memset(seen, 0, sizeof(seen));
	if (fp->nent != to - from)
		return (uint32_t)fp->nent;
	for (size_t i = 0; i < fp->nent; i++) {
		uint32_t p = (uint32_t)fp->ent[i].pos;
		if (p < from || p >= to || seen[p])
			return p;
		seen[p] = true;
	}
	return DS_NONE;
}

/* The first position of positions [from, to) whose entry is not its file's
 * head (got, its hash, its kept bytes), or DS_NONE. */
static uint32_t bad_entry(dupscan_scan *s, const struct ds_first_pass *fp, const uint32_t *order, uint32_t from,
			  uint32_t to)
{
	char text[24];
	for (uint32_t p = from; p < to; p++) {
		char *path = ds_rec_path_alloc(&s->tree, order[p]);
		int fd = open(path, O_RDONLY);
		ssize_t len = fd < 0 ? -1 : read(fd, text, sizeof(text));
		if (fd >= 0)
			close(fd);
		free(path);
		if (len <= 0 || !ds_fp_got(fp, p) || ds_fp_err(fp, p) != 0 ||
		    ds_fp_partial(fp, p) != ds_hash_oneshot(text, (size_t)len) || !ds_fp_block(fp, p) ||
		    memcmp(ds_fp_block(fp, p), text, (size_t)len) != 0)
			return p;
	}
	return DS_NONE;
}

/* Many candidates are placed in slices (4,096 positions each) on several
 * threads: each is read once, its hash and kept bytes its own, the ranks one
 * order of them all. Two slices, the second short; the first positions in
 * no group. Put back in position order, each keeps its head. */
#define PLACE_SLICE_TEST 5000
#define OUTSIDE 100
START_TEST(test_first_pass_threads)
{
	enum { N = PLACE_SLICE_TEST };
	char *dir = tu_tmpdir_shm();
	char name[16], text[24];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%05d", i);
		snprintf(text, sizeof(text), "file %05d", i % (N / 2)); /* one size: one group */
		tu_text(dir, name, text);
	}
	dupscan_scan *s = walk_hdd(dir, 4, N);
	static uint32_t order[N];
	uint32_t groups[2] = { OUTSIDE, N - OUTSIDE };
	for (uint32_t i = 0; i < N; i++)
		order[i] = N - 1 - i;
	ck_assert_int_eq(ds_first_pass_run(&s->reading, order, N, groups, 1, 0), 0);
	struct ds_first_pass *fp = s->reading.first_pass;
	/* one assertion a check: Check writes a line for each it makes */
	uint32_t bad = bad_order(fp, OUTSIDE, N);
	ck_assert_msg(bad == DS_NONE, "position %u: not read once, or read outside its groups", bad);
	/* the disk order of groups: none for one not read, the first rank for the other */
	uint32_t both[4] = { 0, OUTSIDE, OUTSIDE, N - OUTSIDE };
	uint64_t key[2];
	ds_first_pass_by_pos(fp, both, 2, key);
	ck_assert(fp->by_pos && !fp->rank);
	ck_assert(key[0] == UINT64_MAX && key[1] == 0);
	bad = bad_entry(s, fp, order, OUTSIDE, N);
	ck_assert_msg(bad == DS_NONE, "position %u: its hash or kept bytes wrong in position order", bad);
	for (uint32_t p = 0; p < OUTSIDE && bad == DS_NONE; p++)
		bad = !ds_fp_got(fp, p) && !ds_fp_err(fp, p) ? DS_NONE : p;
	ck_assert_msg(bad == DS_NONE, "position %u is in no group, yet read", bad);
	pass_done(s, dir);
}
END_TEST

START_TEST(test_first_pass)
{
	struct walked w;
	walk_group(&w);
	ck_assert_int_eq(ds_first_pass_run(&w.s->reading, w.order, w.n, w.groups, 1, 0), 0);
	struct ds_first_pass *fp = w.s->reading.first_pass;
	/* one disk order: every file read once */
	ck_assert_uint_eq(bad_order(fp, 0, (uint32_t)w.n), DS_NONE);
	uint64_t key;
	ds_first_pass_by_pos(fp, w.groups, 1, &key);
	ck_assert_uint_eq(key, 0);
	unsigned char block[DS_BLOCK];
	for (size_t p = 0; p < w.n; p++) {
		ck_assert(ds_fp_got(fp, p));
		ck_assert_int_eq(ds_fp_err(fp, p), 0);
		/* the hash of the first block, which is kept (the budget holds five) */
		read_start(w.s, w.order[p], block, DS_BLOCK);
		ck_assert(ds_fp_partial(fp, p) == ds_hash_oneshot(block, DS_BLOCK));
		ck_assert_ptr_nonnull(ds_fp_block(fp, p));
		ck_assert(memcmp(ds_fp_block(fp, p), block, DS_BLOCK) == 0);
	}
	ck_assert(ds_fp_partial(fp, 0) == ds_fp_partial(fp, 1) && ds_fp_partial(fp, 0) == ds_fp_partial(fp, 3));
	ck_assert(ds_fp_partial(fp, 0) != ds_fp_partial(fp, 4));
	done(&w);
}
END_TEST

/* First blocks are kept for whole groups: a group whose blocks would pass the
 * budget keeps none (each would be read again anyway), a later group that
 * fits keeps all of its own. One more block than the budget holds, in holes
 * (tmpfs), then ten small files. */
START_TEST(test_first_pass_whole_groups)
{
	enum { LARGE = DS_FIRST_PASS_BUDGET / DS_BLOCK + 1, SMALL = 10, N = LARGE + SMALL };
	char *dir = tu_tmpdir_shm();
	char name[16], text[24];
	for (int i = 0; i < LARGE; i++) {
		snprintf(name, sizeof(name), "L%05d", i);
		char *path = tu_path(dir, name);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, 2 * DS_BLOCK), 0);
		close(fd);
		free(path);
	}
	for (int i = 0; i < SMALL; i++) {
		snprintf(name, sizeof(name), "S%02d", i);
		snprintf(text, sizeof(text), "small no. %02d", i);
		tu_text(dir, name, text);
	}
	dupscan_scan *s = walk_hdd(dir, 0, N);
	/* the large group first, as groups come (by size) when it is smaller */
	static uint32_t order[N];
	uint32_t nl = 0, ns = LARGE;
	for (uint32_t i = 0; i < N; i++)
		order[ds_rec_size(&s->tree, ds_rec(&s->tree, i)) == 2 * DS_BLOCK ? nl++ : ns++] = i;
	ck_assert_uint_eq(nl, LARGE);
	uint32_t groups[4] = { 0, LARGE, LARGE, SMALL };
	ck_assert_int_eq(ds_first_pass_run(&s->reading, order, N, groups, 2, 0), 0);
	struct ds_first_pass *fp = s->reading.first_pass;
	ck_assert_uint_eq(fp->capbytes, SMALL * 12);
	ds_first_pass_by_pos(fp, groups, 2, NULL);
	uint32_t bad = DS_NONE;
	for (uint32_t p = 0; p < LARGE && bad == DS_NONE; p++)
		bad = ds_fp_got(fp, p) && !ds_fp_block(fp, p) ? DS_NONE : p;
	ck_assert_msg(bad == DS_NONE, "position %u: not read, or a block kept of a group past the budget", bad);
	for (uint32_t p = LARGE; p < N; p++) {
		read_start(s, order[p], text, 12);
		ck_assert(ds_fp_got(fp, p) && ds_fp_partial(fp, p) == ds_hash_oneshot(text, 12));
		ck_assert_ptr_nonnull(ds_fp_block(fp, p));
		ck_assert(memcmp(ds_fp_block(fp, p), text, 12) == 0);
	}
	pass_done(s, dir);
}
END_TEST

/* A file removed between the walk and the pass fails there, reported later. */
START_TEST(test_first_pass_failure)
{
	struct walked w;
	walk_group(&w);
	char *c = tu_path(w.dir, "c");
	ck_assert_int_eq(unlink(c), 0);
	free(c);
	ck_assert_int_eq(ds_first_pass_run(&w.s->reading, w.order, w.n, w.groups, 1, 0), 0);
	struct ds_first_pass *fp = w.s->reading.first_pass;
	ds_first_pass_by_pos(fp, w.groups, 1, NULL);
	ck_assert(!ds_fp_got(fp, 2));
	ck_assert_int_eq(ds_fp_err(fp, 2), -ENOENT);
	ck_assert(ds_fp_got(fp, 0) && ds_fp_got(fp, 1) && ds_fp_got(fp, 3) && ds_fp_got(fp, 4));
	done(&w);
}
END_TEST

START_TEST(test_sweep)
{
	struct walked w;
	walk_group(&w);
	size_t budget = 64u << 20;
	ck_assert_int_eq(ds_first_pass_run(&w.s->reading, w.order, w.n, w.groups, 1, budget), 0);
	ck_assert_int_eq(ds_sweep_run(&w.s->reading, w.groups, 1, budget), 0);
	const struct ds_sweep *sw = w.s->reading.sweep;
	/* a, b, c, d share their first block: settled here */
	for (size_t p = 0; p < 4; p++)
		ck_assert_msg(sw->swept[p], "file %c not swept", (char)('a' + p));
	ck_assert_uint_ne(sw->rep[0], DS_NONE);
	ck_assert_uint_eq(sw->rep[0], sw->rep[1]);
	ck_assert(sw->rep[2] != sw->rep[0]);
	ck_assert(sw->rep[3] != sw->rep[0]);
	/* the class's full hash is the file's */
	char *a = tu_path(w.dir, "a");
	uint64_t hash = tu_full_hash(a);
	free(a);
	ck_assert(sw->full[0] == hash && sw->full[1] == hash);
	ck_assert_int_eq(sw->err[0] | sw->err[1] | sw->err[2] | sw->err[3], 0);
	done(&w);
}
END_TEST

/* A place is 12 bytes and orders reads by stream (disk, then device), then
 * extents before inodes, then where: exact to a sector where it fits, and
 * where it does not (an offset or inode number past the key's bits) last in
 * its stream, never in another's. With 65,536 streams as with three. */
START_TEST(test_place_keys)
{
	ck_assert_uint_eq(sizeof(struct ds_keypos32), 12);
	struct ds_fp_stream streams[3] = { { 0, 4 }, { 0, 7 }, { 1, 2 } };
	struct ds_first_pass fp = { .stream = streams, .sbits = 2 };
	const uint64_t huge = (uint64_t)1 << 62;
	struct ds_keypos32 pl[6] = {
		place(&fp, 1, false, 40960, 0), place(&fp, 0, true, 5, 1),     place(&fp, 0, false, 8192, 2),
		place(&fp, 2, true, 1, 3),      place(&fp, 1, false, huge, 4), place(&fp, 1, true, 3, 5),
	};
	ds_sort_by_key32(pl, 6);
	const uint32_t want[6] = { 2, 1, 0, 4, 5, 3 };
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(place_pos(&pl[i]), want[i]);
	ck_assert_uint_eq(place_where(&fp, &pl[0]), 8192);
	ck_assert_uint_eq(place_where(&fp, &pl[2]), 40960);
	ck_assert(place_where(&fp, &pl[1]) == UINT64_MAX && place_where(&fp, &pl[4]) == UINT64_MAX);
	ck_assert_uint_eq(place_devi(&fp, &pl[2]), 7);
	ck_assert(place_disk(&fp, &pl[5]) == 1 && place_devi(&fp, &pl[5]) == 2);
	ck_assert_uint_eq(place_where(&fp, &pl[3]), huge); /* (55 bits of sectors: any offset) */
	/* 65,536 streams: 47 bits of where, and the last stream still last */
	struct ds_first_pass wide = { .sbits = 16 };
	struct ds_keypos32 a = place(&wide, 65534, true, UINT64_MAX, 0), b = place(&wide, 65535, false, 0, 1),
			   c = place(&wide, 65535, false, ((uint64_t)1 << 47 << PLACE_SECTOR) - 512, 2);
	ck_assert(ds_keypos32_less(&a, &b) && ds_keypos32_less(&b, &c));
	ck_assert_uint_eq(place_stream(&wide, &a), 65534);
	ck_assert_uint_eq(place_stream(&wide, &c), 65535);
	ck_assert_uint_eq(place_where(&wide, &c), ((uint64_t)1 << 47 << PLACE_SECTOR) - 512);
	/* past them: the stream's last place, ordered by position */
	struct ds_keypos32 d = place(&wide, 65535, false, huge, 3);
	ck_assert(ds_keypos32_key(&d) == ds_keypos32_key(&c) && ds_keypos32_less(&c, &d));
}
END_TEST

/* ds_sort_by_key32 is a total order on key, then position: 20,000 pairs of
 * few keys (many ties) in a shuffled order, and an order built to be
 * quicksort's worst. */
START_TEST(test_sort_by_key32)
{
	enum { N = 20000 };
	struct ds_keypos32 *a = malloc(N * sizeof(*a));
	ck_assert_ptr_nonnull(a);
	for (int round = 0; round < 2; round++) {
		uint64_t x = 88172645463325252ull;
		for (uint32_t i = 0; i < N; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t key = round == 0 ? (x % 37) << 40 | (x % 3) : (i % 2 ? i : N - i);
			a[i] = ds_keypos32_of(key, (uint32_t)(round == 0 ? x >> 40 : i));
		}
		ds_sort_by_key32(a, N);
		for (uint32_t i = 1; i < N; i++)
			ck_assert_msg(!ds_keypos32_less(&a[i], &a[i - 1]), "pair %u out of order", i);
	}
	free(a);
}
END_TEST

/* A group matched gives its kept first blocks and its keys back (whole
 * pages of them) and leaves every other group's as they were: two groups
 * of 8,200 files, of 20 and 21 bytes, side by side in one mapping each (a
 * page holds the end of the one and the start of the other). */
START_TEST(test_first_pass_group_done)
{
	enum { EACH = 8200, N = 2 * EACH, A = 20, B = 21 };
	char *dir = tu_tmpdir_shm();
	char name[16];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "%c%04d", i < EACH ? 'a' : 'b', i % EACH);
		tu_file(dir, name, i < EACH ? A : B, 100u + (unsigned)i, -1);
	}
	dupscan_scan *s = walk_hdd(dir, 0, N);
	static uint32_t order[N];
	uint32_t na = 0, nb = EACH;
	for (uint32_t i = 0; i < N; i++)
		order[ds_rec_size(&s->tree, ds_rec(&s->tree, i)) == A ? na++ : nb++] = i;
	uint32_t groups[4] = { 0, EACH, EACH, EACH };
	ck_assert_int_eq(ds_first_pass_run(&s->reading, order, N, groups, 2, 0), 0);
	struct ds_first_pass *fp = s->reading.first_pass;
	ck_assert_uint_eq(fp->capbytes, EACH * A + EACH * B);
	ds_first_pass_by_pos(fp, groups, 2, NULL);
	ds_fp_group_done(fp, 0, EACH);
	unsigned char block[B], zero[A] = { 0 };
	for (uint32_t p = EACH; p < N; p++) {
		read_start(s, order[p], block, B);
		ck_assert_msg(memcmp(ds_fp_block(fp, p), block, B) == 0, "position %u: its block lost", p);
		ck_assert_msg(ds_fp_partial(fp, p) == ds_hash_oneshot(block, B), "position %u: its key lost", p);
	}
	/* the first group's first file and key lie in pages of its own: given
	 * back; its last, in a page it shares, stay */
	ck_assert(memcmp(ds_fp_block(fp, 0), zero, A) == 0);
	ck_assert(ds_fp_partial(fp, 0) == 0);
	read_start(s, order[EACH - 1], block, A);
	ck_assert(memcmp(ds_fp_block(fp, EACH - 1), block, A) == 0);
	ck_assert(ds_fp_partial(fp, EACH - 1) == ds_hash_oneshot(block, A));
	pass_done(s, dir);
}
END_TEST

/* A group's files reach the stage callback when the group is committed:
 * by then it has given its first-block hashes back, its blocks kept or not
 * (they were read once, into its own array). */
struct keys_seen {
	dupscan_scan *s;
	int calls;
	bool ok;
};
enum { KT_EACH = 8200, KT_A = 20, KT_B = 21 };
static void keys_at_turn(void *user, int stage, const dupscan_file *const *files, size_t count)
{
	struct keys_seen *k = user;
	if (stage != DUPSCAN_STAGE_EARLY || count < 2)
		return;
	const struct ds_first_pass *fp = k->s->reading.first_pass;
	/* positions by size, A's first; mine in a page of its group's own */
	bool a = ds_rec_size(&k->s->tree, files[0]->rec) == KT_A;
	size_t first = a ? 0 : KT_EACH, mine = first + 1000;
	k->ok = k->ok && fp && fp->by_pos && !ds_fp_group_blocks(fp, first, KT_EACH) && ds_fp_got(fp, mine) &&
		ds_fp_partial(fp, mine) == 0;
	k->calls++;
}

START_TEST(test_first_pass_keys_taken)
{
	char *dir = tu_tmpdir_shm();
	char name[16];
	for (int i = 0; i < 2 * KT_EACH; i++) {
		snprintf(name, sizeof(name), "%c%04d", i < KT_EACH ? 'a' : 'b', i % KT_EACH);
		tu_file(dir, name, i < KT_EACH ? KT_A : KT_B, 100u + (unsigned)i, -1);
	}
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
	s->core.opt.heads_budget = 0; /* no group's blocks kept */
	struct keys_seen k = { s, 0, true };
	dupscan_set_stage_callback(s, keys_at_turn, &k);
	ck_assert_int_ge(dupscan_add_path(s, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(s), 0);
	ck_assert_int_eq(k.calls, 2);
	ck_assert_msg(k.ok, "a group's keys not given back by its turn's end");
	dupscan_free(s);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("readorder");
	TCase *tc = tcase_create("first pass and sweep");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_place_keys);
	tcase_add_test(tc, test_sort_by_key32);
	tcase_add_test(tc, test_first_pass);
	tcase_add_test(tc, test_first_pass_small);
	tcase_add_test(tc, test_first_pass_threads);
	tcase_add_test(tc, test_first_pass_whole_groups);
	tcase_add_test(tc, test_first_pass_failure);
	tcase_add_test(tc, test_first_pass_group_done);
	tcase_add_test(tc, test_first_pass_keys_taken);
	tcase_add_test(tc, test_sweep);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

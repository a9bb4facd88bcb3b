/* SPDX-License-Identifier: MIT */
/* check_index.c: the binary tree keyed on (partial hash, full hash, size). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "testutil.h"

#define N 20000

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct key {
	uint64_t partial, full, size;
};

struct walk_state {
	const struct ds_node *prev;
	uint32_t nodes, recs;
	const struct key *all;
	const struct ds_index *ix;
};

static int check_order(void *user, const struct ds_node *n)
{
	struct walk_state *w = user;
	if (w->prev) {
		const struct ds_node *p = w->prev;
		bool less = p->partial < n->partial ||
			    (p->partial == n->partial && (p->full < n->full ||
			     (p->full == n->full && p->size < n->size)));
		ck_assert_msg(less, "index walk out of key order");
	}
	for (uint32_t m = n->head; m != DS_NONE; m = w->ix->mem[m].next) {
		uint32_t r = w->ix->mem[m].rec;
		ck_assert_uint_eq(w->all[r].partial, n->partial);
		ck_assert_uint_eq(w->all[r].full, n->full);
		ck_assert_uint_eq(w->all[r].size, n->size);
		w->recs++;
	}
	w->prev = n;
	w->nodes++;
	return 0;
}

START_TEST(test_insert_find_walk)
{
	struct key *recs = calloc(N, sizeof(*recs));
	ck_assert_ptr_nonnull(recs);
	uint64_t seed = 88172645463325252ull;
	/* every fourth record repeats an earlier key: it must join that node */
	for (uint32_t i = 0; i < N; i++) {
		if (i % 4 == 3) {
			uint32_t j = (uint32_t)(rnd(&seed) % i);
			recs[i].partial = recs[j].partial;
			recs[i].full = recs[j].full;
			recs[i].size = recs[j].size;
		} else {
			recs[i].partial = rnd(&seed) % 1000; /* many equal partial hashes */
			recs[i].full = rnd(&seed);
			recs[i].size = rnd(&seed) % 64;
		}
	}
	struct ds_index ix;
	ds_index_init(&ix);
	ck_assert_int_eq(ds_index_reserve(&ix, N), 0);
	ck_assert_uint_eq(ds_index_find(&ix, 1, 2, 3), DS_NONE);
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(ds_index_insert(&ix, i, i, recs[i].partial, recs[i].full, recs[i].size), 0);
	ck_assert_int_eq(ds_index_insert(&ix, N, 0, 0, 0, 0), -EINVAL);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t n = ds_index_find(&ix, recs[i].partial, recs[i].full, recs[i].size);
		ck_assert_uint_ne(n, DS_NONE);
		bool found = false;
		for (uint32_t m = ix.nodes[n].head; m != DS_NONE; m = ix.mem[m].next)
			found |= ix.mem[m].rec == i;
		ck_assert_msg(found, "record %u missing from its node", i);
	}
	/* same hashes, other size: a different key */
	uint32_t n0 = ds_index_find(&ix, recs[0].partial, recs[0].full, recs[0].size + 1000);
	ck_assert_uint_eq(n0, DS_NONE);
	struct walk_state w = { .all = recs, .ix = &ix };
	ck_assert_int_eq(ds_index_walk(&ix, check_order, &w), 0);
	ck_assert_uint_eq(w.recs, N);
	ck_assert_uint_eq(w.nodes, ix.count);
	ck_assert_uint_lt(ix.count, N);
	ds_index_free(&ix);
	free(recs);
}
END_TEST

static int stop_at_third(void *user, const struct ds_node *n)
{
	(void)n;
	int *count = user;
	return ++*count == 3 ? 42 : 0;
}

START_TEST(test_walk_stops_and_sorted_input)
{
	/* keys inserted in increasing size order with equal hashes degenerate the
	 * tree into a list: walking it must not recurse */
	enum { M = 5000 };
	struct key *recs = calloc(M, sizeof(*recs));
	for (uint32_t i = 0; i < M; i++)
		recs[i].size = i;
	struct ds_index ix;
	ds_index_init(&ix);
	ck_assert_int_eq(ds_index_reserve(&ix, M), 0);
	for (uint32_t i = 0; i < M; i++)
		ck_assert_int_eq(ds_index_insert(&ix, i, i, 0, 0, recs[i].size), 0);
	int count = 0;
	ck_assert_int_eq(ds_index_walk(&ix, stop_at_third, &count), 42);
	ck_assert_int_eq(count, 3);
	struct walk_state w = { .all = recs, .ix = &ix };
	ck_assert_int_eq(ds_index_walk(&ix, check_order, &w), 0);
	ck_assert_uint_eq(w.nodes, M);
	ds_index_free(&ix);
	free(recs);
}
END_TEST

/* The index is the one record of classes: each record's class is what it was
 * inserted with, a record not inserted has none, and a record joins once. */
START_TEST(test_classes)
{
	struct ds_index ix;
	ds_index_init(&ix);
	ck_assert_uint_eq(ds_index_class(&ix, 0), DS_NONE); /* nothing reserved yet */
	ck_assert_int_eq(ds_index_reserve(&ix, 6), 0);
	/* one key, two classes (equal hashes, different bytes): 0 2 4 and 1 3 */
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_int_eq(ds_index_insert(&ix, i, i % 2 ? 1 : 0, 9, 9, 100), 0);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_uint_eq(ds_index_class(&ix, i), i % 2 ? 1u : 0u);
	ck_assert_uint_eq(ds_index_class(&ix, 5), DS_NONE);
	ck_assert_uint_eq(ds_index_class(&ix, 6), DS_NONE);  /* past the records */
	ck_assert_int_eq(ds_index_insert(&ix, 2, 0, 9, 9, 100), -EINVAL);  /* again */
	ck_assert_int_eq(ds_index_insert(&ix, 5, 6, 9, 9, 100), -EINVAL);  /* no such class */
	ck_assert_uint_eq(ix.count, 1);
	/* growing keeps what is known and starts the new records in no class */
	ck_assert_int_eq(ds_index_reserve(&ix, 8), 0);
	ck_assert_uint_eq(ds_index_class(&ix, 3), 1);
	ck_assert_uint_eq(ds_index_class(&ix, 7), DS_NONE);
	ds_index_free(&ix);
}
END_TEST

/* Most records are in no class: members are found by record through the
 * bits and, once sealed, a binary search; before sealing (and after an
 * insert that follows it) by a search through the members. Both agree. */
START_TEST(test_sealed_lookup)
{
	enum { R = 30000 };
	struct ds_index ix;
	ds_index_init(&ix);
	ck_assert_int_eq(ds_index_reserve(&ix, R), 0);
	uint32_t *want = malloc(R * sizeof(*want));
	for (uint32_t i = 0; i < R; i++)
		want[i] = DS_NONE;
	/* every third record, in a scrambled order; classes named by a member */
	for (uint32_t k = 0; k < R / 3; k++) {
		uint32_t ri = (k * 7919u) % (R / 3) * 3;
		uint32_t cls = ri - ri % 30;
		want[ri] = cls;
		ck_assert_int_eq(ds_index_insert(&ix, ri, cls, cls, cls, 64), 0);
	}
	for (uint32_t i = 0; i < R; i += 97) /* each a search through the members */
		ck_assert_uint_eq(ds_index_class(&ix, i), want[i]);
	ck_assert_int_eq(ds_index_seal(&ix), 0);
	for (uint32_t i = 0; i < R; i++) {
		ck_assert_uint_eq(ds_index_class(&ix, i), want[i]);
		ck_assert(ds_index_has(&ix, i) == (want[i] != DS_NONE));
	}
	/* one more after the seal */
	ck_assert_int_eq(ds_index_insert(&ix, 1, 0, 0, 0, 64), 0);
	ck_assert_uint_eq(ds_index_class(&ix, 1), 0);
	ck_assert_uint_eq(ds_index_class(&ix, 3), want[3]);
	ck_assert_uint_eq(ds_index_class(&ix, 2), DS_NONE);
	ck_assert_uint_eq(ix.nmem, R / 3 + 1);
	free(want);
	ds_index_free(&ix);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("index");
	TCase *tc = tcase_create("ds_index_insert");
	tcase_add_test(tc, test_insert_find_walk);
	tcase_add_test(tc, test_classes);
	tcase_add_test(tc, test_sealed_lookup);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_index_walk");
	tcase_add_test(tc, test_walk_stops_and_sorted_input);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

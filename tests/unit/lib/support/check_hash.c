/* SPDX-License-Identifier: MIT */
/* check_hash.c: the full hash is XXH64 of what follows the first block,
 * seeded with the first block's hash (the partial hash), so it continues from
 * that one hash; and the first block is read once. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h> /* an independent oracle for the library's hashes */

#include "scan.h"
#include "testutil.h"

static const size_t sizes[] = { 1, 4095, 4096, 4097, 8191, 8192, 262143, 262144, 262145,
				(1u << 20) + 3 };

START_TEST(test_stream_split_equals_oneshot)
{
	size_t n = sizes[_i];
	unsigned char *data = malloc(n);
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 8));
	struct ds_hashes *h = ds_hashes_new(2);
	ck_assert_ptr_nonnull(h);
	size_t first = n < DS_BLOCK ? n : DS_BLOCK;
	ds_hash_update(h, 1, data, first);
	uint64_t partial = ds_hash_digest(h, 1);
	ck_assert_uint_eq(partial, XXH64(data, first, 0));
	ck_assert_uint_eq(ds_hash_oneshot(data, first), partial);
	/* the rest from the partial hash alone, in uneven pieces, as reads would deliver them */
	ds_hash_seed(h, 1, partial);
	for (size_t off = first; off < n;) {
		size_t len = (n - off) < 7777 ? n - off : 7777;
		ds_hash_update(h, 1, data + off, len);
		off += len;
	}
	uint64_t want = n > DS_BLOCK ? XXH64(data + DS_BLOCK, n - DS_BLOCK, partial) : partial;
	if (n > DS_BLOCK)
		ck_assert_uint_eq(ds_hash_digest(h, 1), want);
	ck_assert_uint_eq(ds_hash_full_of(data, n), want);
	/* a file's full hash is not its partial hash, nor XXH64 of all of it */
	if (n > DS_BLOCK)
		ck_assert(want != partial && want != XXH64(data, n, 0));
	ck_assert_uint_eq(ds_hash_oneshot(data, n), XXH64(data, n, 0));
	ds_hashes_free(h);
	free(data);
}
END_TEST

static unsigned char *slurp(const char *path, size_t n)
{
	unsigned char *buf = malloc(n ? n : 1);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ds_pread_full(fd, buf, n, 0), 0);
	close(fd);
	return buf;
}

/* Through a real scan: the stored full hash is the one computed independently. */
START_TEST(test_scan_full_hash_matches_oneshot)
{
	size_t n = sizes[_i];
	char *dir = tu_tmpdir();
	tu_file(dir, "a", n, 7, -1);
	tu_file(dir, "b", n, 7, -1);
	dupscan_scan *scan = tu_scan(dir, 0);
	ck_assert_uint_eq(dupscan_set_count(scan), 1);
	char *pa = tu_path(dir, "a");
	unsigned char *data = slurp(pa, n);
	uint64_t want_partial = XXH64(data, n < DS_BLOCK ? n : DS_BLOCK, 0);
	uint64_t want = n > DS_BLOCK ? XXH64(data + DS_BLOCK, n - DS_BLOCK, want_partial) : want_partial;
	/* both files sit in the index node keyed on the hashes computed independently */
	uint32_t node = ds_index_find(&scan->tree.index, want_partial, want, n);
	ck_assert_uint_ne(node, DS_NONE);
	uint32_t members = 0;
	for (uint32_t m = scan->tree.index.nodes[node].head; m != DS_NONE; m = scan->tree.index.mem[m].next)
		members++;
	ck_assert_uint_eq(members, 2);
	ck_assert_uint_eq(scan->tree.index.count, 1);
	free(data);
	free(pa);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

/* Two identical files are read once each: the first block is never read again
 * for the full hash or for the byte comparison; only the last 4 KiB of a large
 * file is read twice (it is checked first, to reject files differing at the end). */
START_TEST(test_each_byte_read_once)
{
	const uint64_t n = 3 * 1024 * 1024 + 5;
	char *dir = tu_tmpdir();
	tu_file(dir, "a", n, 3, -1);
	tu_file(dir, "b", n, 3, -1);
	unsigned long long probe0 = tu_rchar(), probe1 = tu_rchar();
	unsigned long long probe_cost = probe1 - probe0; /* reading /proc/self/io itself */
	unsigned long long before = tu_rchar();
	dupscan_scan *scan = tu_scan(dir, 0);
	unsigned long long after = tu_rchar();
	ck_assert_uint_eq(dupscan_set_count(scan), 1);
	unsigned long long used = after - before - probe_cost;
	ck_assert_msg(used >= 2 * n && used <= 2 * n + 2 * DS_BLOCK + 1024,
		      "read %llu bytes for two files of %llu", used, (unsigned long long)n);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

static Suite *hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("ds_hash_update");
	tcase_add_loop_test(tc, test_stream_split_equals_oneshot, 0, sizeof(sizes) / sizeof(sizes[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("full_hash_reuse");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_scan_full_hash_matches_oneshot, 0, sizeof(sizes) / sizeof(sizes[0]));
	tcase_add_test(tc, test_each_byte_read_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run(hash_suite());
}

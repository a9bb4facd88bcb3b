/* SPDX-License-Identifier: MIT */
/* records/known.h: what is known of a file's content, by matching or from the
 * cache: its hashes and the proofs of its class; never installed. */
#ifndef DUPSCAN_RECORDS_KNOWN_H
#define DUPSCAN_RECORDS_KNOWN_H

#include <stdbool.h>
#include <stdint.h>

/* What is known of a file's content before its bucket is settled: its hashes,
 * read this run or taken from the cache. */
struct ds_hashed {
	uint32_t rec;
	bool has_full;          /* full is the whole file's XXH64, not only its first block's */
	bool cached;            /* taken from the cache, not worked out in this run */
	uint64_t partial, full;
};
/* A proof the cache holds for a file: the class it was settled into by a run
 * (a file alone in its bucket has a class of its own), that run's start, and
 * whether that run grouped it with every file of its size and first block
 * (not with -1 or -p): files such a run settled into different classes differ. */
struct ds_proof {
	uint64_t cls;
	int64_t at;
	bool apart;
	bool full;              /* the entry holds the file's full hash */
	bool alone;             /* told apart from every other file of its bucket */
};
/* A proof a settled bucket gives one of its files anew (ds_note_proofs()),
 * kept for the save: at this run's start, in class cls; how: DS_PROVED_*.
 * (A proof it keeps as it was needs nothing: the save keeps those.) */
struct ds_proved {
	uint64_t cls;
	uint32_t rec;
	uint8_t how;
};
enum { DS_PROVED_APART = 1, DS_PROVED_ALONE = 2 };
_Static_assert(sizeof(struct ds_proved) == 16, "a proof kept for the save is 16 bytes");

#endif /* DUPSCAN_RECORDS_KNOWN_H */

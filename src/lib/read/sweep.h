/* SPDX-License-Identifier: MIT */
/* sweep.h: what the sweep's files share (sweep.c, sweepbuckets.c, lanes.c);
 * never installed. */
#ifndef DUPSCAN_SWEEP_H
#define DUPSCAN_SWEEP_H

#include "internal.h"
#include "read/read.h"

/* A bucket of more than DS_SWEEP_MEMBERS files is split in rounds first,
 * which reads files that differ early only as far as they agree: many files
 * of one size and one first block (a camera's RAW files) are seldom copies
 * of each other, and the sweep would keep each of them whole. */
#define SWEEP_MEMBERS DS_SWEEP_MEMBERS
#define DS_ASK_PIECE (128u * 1024u)

enum { M_PENDING, M_WAITING, M_DONE };                 /* a file in this sweep */
enum { B_WAIT, B_OPEN, B_LATER, B_DONE };              /* a bucket in this sweep */
/* a kept content: being read, read (and unlike the others kept), found equal
 * to another kept content, or failed */
enum { K_FILLING, K_READY, K_ALIAS, K_FAILED };

/* Every disk is read at once, each by its own lane in its own order, so the
 * files of one bucket may be read at the same time on two disks. A bucket's
 * state is shared under the run's monitor; three rules keep a sweep exact:
 * a file compared without being kept compares with every content kept or
 * being kept when it starts (waiting for bytes still being read); no file is
 * kept while such a comparison runs or once a file of the bucket waits; and a
 * kept content, once read, is compared with every content read before it. So
 * a file that waits was compared with every content its bucket settles. */
struct kept {
	unsigned char *buf;  /* the whole file: bytes up to filled are read */
	uint64_t filled;
	uint32_t pos;        /* its position in order */
	uint8_t state;
	uint8_t alias;       /* K_ALIAS: the kept content (K_READY) it equals */
	uint8_t users;       /* comparisons that may read buf */
	bool joined;         /* another file proved equal to it */
	bool held;           /* its size counts in the run's used bytes */
};

struct sbucket {
	uint32_t first, n;   /* its members: positions pos[first..first+n) */
	uint32_t unvisited;  /* members still to visit in this sweep */
	uint32_t active;     /* members being read now */
	uint32_t streaming;  /* of those, compared without being kept */
	uint8_t phase;
	uint8_t nkept;
	bool waits;          /* a member waits for the next sweep */
	uint64_t size;
	bool direct;         /* a group the first pass left unread (fp->direct) */
	struct kept *kept;   /* SWEEP_MEMBERS of them while the bucket is open, else NULL:
	                      * a tree of copies has a bucket for every two files */
};

/* A bucket member as the sweep visits it, in the order of its lane (its
 * place in the disk order looked up: 12 bytes a member, not 16). */
struct item {
	uint32_t lane, slot, bucket; /* slot: in run.pos */
};

/* One lane's reading: a disk's files in its order. */
struct sweep_run;
struct reader {
	struct sweep_run *rn;
	struct ds_hashes *h; /* one state: the file being read */
	unsigned char *chunk; /* taken when the lane first reads a chunk */
	const struct item *next; /* the lane's item after the one visited, or NULL */
	uint32_t ahead_slot; /* the member opened ahead (its first chunk asked for), or DS_NONE */
	int ahead_fd;
};

struct sweep_run {
	struct ds_reading *s;
	struct ds_first_pass *fp; /* a direct group's partial hashes go there */
	struct ds_sweep *sw;
	struct sbucket *b;   /* grown as buckets are found: they are few beside the files */
	size_t nb, capb;
	uint32_t *pos;       /* members of each bucket (positions in order), by bucket */
	size_t cappos;
	uint8_t *mstate;     /* by position in order */
	uint32_t *lane;      /* by position: its device's lane */
	struct reader *rd;   /* by lane */
	size_t nlanes;
	struct ds_monitor *mon; /* buckets, used, mstate and the sweep's results */
	size_t step;         /* bytes a read */
	size_t used;         /* bytes kept */
	bool more;           /* a bucket waits for another sweep */
	atomic_int rc;       /* -ENOMEM or DUPSCAN_E_CANCELED from any lane */
	uint64_t *tail;      /* by position: XXH64 of the last block, where read (see read_tails), or NULL */
};


/* lanes.c: one lane a device, all at once. Run fn over items 0..n whose
 * lanes lane_of(i) come in runs (items sorted by lane first), each run on its
 * own thread while threads last, with that lane's reader. @return 0, -ENOMEM
 * or DUPSCAN_E_CANCELED (also from any item that set rn->rc). */
int ds_lanes_run(struct sweep_run *rn, size_t n, uint32_t (*lane_of)(const void *arg, size_t i),
		 void (*fn)(struct reader *rd, size_t i, void *arg), void *arg);
/* A lane for each device the groups' files are on (rn->lane, rn->rd,
 * rn->nlanes). @return 0 or -ENOMEM. */
int ds_lanes_make(struct sweep_run *rn, const uint32_t *groups, size_t ngroups);
void ds_lanes_free(struct sweep_run *rn);
/* The lane's read buffer (rn->step bytes), taken the first time it is
 * needed; NULL (and rn->rc set) when out of memory. */
unsigned char *ds_lane_chunk(struct reader *rd);

/* sweepbuckets.c: the buckets a sweep takes. Hash the last blocks of the
 * files whose heads have a twin (large files only, each disk at once); a file
 * that cannot be read is settled with its error. scratch: fp->n entries.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_sweep_tails(struct sweep_run *rn, const uint32_t *groups, size_t ngroups, size_t budget, uint32_t *scratch);
/* Group first..first+n's buckets for the sweep (splitting those too large
 * for it in rounds). scratch: n entries. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_sweep_group(struct sweep_run *rn, uint32_t first, uint32_t n, uint32_t *scratch);

/* sweepio.c: a lane's reads. Hash buf[0..len), bytes at off of position p,
 * into the lane's state (the first chunk seeds it with the first block's
 * hash). */
void ds_sweep_hash_read(struct reader *rd, const struct sbucket *b, uint32_t p, const unsigned char *buf,
			uint64_t off, size_t len);
/* Would a visit now pass over member p of b, unread (monitor held)? */
bool ds_sweep_passed_over(const struct sweep_run *rn, const struct sbucket *b, uint32_t p);
/* Ask for the chunk of a member of b that starts at end. */
void ds_sweep_ask_next(const struct reader *rd, const struct sbucket *b, int fd, uint64_t end);
/* Bytes [off, off + len) of b's member at position p into buf (of what
 * matching compares: with --ignore-metadata its payload), what comes next
 * asked for behind them (the lane's next file after the last chunk; with
 * whole, its own next chunk). */
int ds_sweep_read_chunk(struct reader *rd, const struct sbucket *b, uint32_t p, int fd, unsigned char *buf,
			uint64_t off, size_t len, bool ahead, bool whole);
/* Open the member in slot for a read from its start (or take it opened ahead: *ahead). */
int ds_sweep_open_member(struct reader *rd, uint32_t slot, bool *ahead);
/* The member in slot read to its end (err 0): still the file scanned, its
 * full hash noted; fd closed. @return err, or why it fails. */
int ds_sweep_close_member(struct reader *rd, uint32_t slot, int fd, int err);

#endif /* DUPSCAN_SWEEP_H */

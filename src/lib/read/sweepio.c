/* SPDX-License-Identifier: MIT */
/* sweepio.c: a sweep lane's reads (sweep.c): files opened ahead, their bytes
 * asked for before they are read, hashed as they are read, checked when they
 * end. */
#include <fcntl.h>
#include <unistd.h>

#include "sweep.h"
#include "read/read.h"

/* Hash the bytes buf[0..len) at off of position p into the lane's state,
 * which the first chunk (a block at least) starts with the first block's
 * hash: the first pass's, or for a group it left unread, taken here as the
 * first pass takes it. */
void ds_sweep_hash_read(struct reader *rd, const struct sbucket *b, uint32_t p, const unsigned char *buf,
			uint64_t off, size_t len)
{
	struct ds_first_pass *fp = rd->rn->fp;
	size_t skip = 0;
	if (off == 0) {
		skip = len < DS_BLOCK ? len : DS_BLOCK;
		if (b->direct)
			ds_fp_took(fp, p, ds_hash_oneshot(buf, skip));
		ds_hash_seed(rd->h, 0, ds_fp_partial(fp, p));
	}
	ds_hash_update(rd->h, 0, buf + skip, len - skip);
}

/* Would a visit now pass over member p of b, unread (monitor held)? */
bool ds_sweep_passed_over(const struct sweep_run *rn, const struct sbucket *b, uint32_t p)
{
	if (rn->mstate[p] != M_PENDING || b->phase == B_LATER || b->phase == B_DONE)
		return true;
	/* a bucket opens at its first file, if that file fits (the first
	 * bucket of a sweep always does: each sweep settles one at least) */
	return b->phase == B_WAIT && rn->used > 0 && rn->used + b->size > rn->sw->budget;
}

static int open_for_sweep(const struct sweep_run *rn, uint32_t p)
{
	int fd = ds_open_scanned(rn->s, rn->fp->order[p]);
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return fd;
}

/* Ask for len bytes at off without waiting, queued behind those asked
 * before (not readahead's windows, each asked once the one before is
 * answered). Linux starts at most max(read_ahead_kb, max_sectors_kb) of one
 * advice and drops the rest: asked in pieces no device's is smaller than. */
static void ask(int fd, uint64_t off, uint64_t len)
{
	if (ds_all_cached(fd, off, len))
		return; /* on a warm cache: one call, not one a piece */
	for (uint64_t end = off + len; off < end; off += DS_ASK_PIECE)
		posix_fadvise(fd, (off_t)off, (off_t)(end - off < DS_ASK_PIECE ? end - off : DS_ASK_PIECE),
			      POSIX_FADV_WILLNEED);
}

/* A disk serves one request at a time, and a lane that asked for the next
 * only once the last was answered would leave it waiting between two files
 * (open, hash, compare: as long as reading a small photo). So while the last
 * chunk of a file is read, the lane's next file is opened and its first
 * chunk asked for, queued behind it in disk order. */
static void open_ahead(struct reader *rd)
{
	struct sweep_run *rn = rd->rn;
	const struct item *nx = rd->next;
	if (!nx || rd->ahead_slot != DS_NONE)
		return;
	const struct sbucket *b = &rn->b[nx->bucket];
	uint32_t p = rn->pos[nx->slot];
	ds_monitor_enter(rn->mon);
	bool skip = ds_sweep_passed_over(rn, b, p);
	ds_monitor_leave(rn->mon);
	int fd = skip ? -1 : open_for_sweep(rn, p);
	if (fd < 0)
		return; /* its visit opens it again and meets the error */
	ask(fd, 0, b->size < rn->step ? b->size : rn->step);
	rd->ahead_fd = fd;
	rd->ahead_slot = nx->slot;
}

/* Ask for the chunk of a member of b that starts at end. */
void ds_sweep_ask_next(const struct reader *rd, const struct sbucket *b, int fd, uint64_t end)
{
	ask(fd, end, b->size - end < rd->rn->step ? b->size - end : rd->rn->step);
}

/* Bytes [off, off + len) of a member of b into buf (asked for already,
 * but a first chunk not opened ahead), what comes next asked for behind
 * them: the lane's next file after the last chunk; with whole (it is read
 * to its end whatever its bytes), its own next chunk. */
int ds_sweep_read_chunk(struct reader *rd, const struct sbucket *b, uint32_t p, int fd, unsigned char *buf,
			uint64_t off, size_t len, bool ahead, bool whole)
{
	uint64_t end = off + len;
	if (off == 0 && !ahead)
		ask(fd, off, len);
	if (end == b->size)
		open_ahead(rd);
	else if (whole)
		ds_sweep_ask_next(rd, b, fd, end);
	return ds_read_rec(rd->rn->s, rd->rn->fp->order[p], fd, buf, len, off);
}

/* Open the member in slot for a read from its start (or take it opened
 * ahead: *ahead). */
int ds_sweep_open_member(struct reader *rd, uint32_t slot, bool *ahead)
{
	struct sweep_run *rn = rd->rn;
	uint32_t p = rn->pos[slot];
	int fd = rd->ahead_fd;
	*ahead = rd->ahead_slot == slot;
	if (*ahead)
		rd->ahead_slot = DS_NONE;
	else
		fd = open_for_sweep(rn, p);
	return fd;
}

/* The member in slot read to its end without error (err 0): still the file
 * scanned (a file written while it was read must not be reported on what was
 * read), its full hash noted. fd is closed. @return err, or why it fails. */
int ds_sweep_close_member(struct reader *rd, uint32_t slot, int fd, int err)
{
	struct sweep_run *rn = rd->rn;
	if (err == 0)
		err = ds_check_unchanged(rn->s, fd, ds_rec(rn->s->tree, rn->fp->order[rn->pos[slot]]));
	if (fd >= 0)
		close(fd);
	if (err == 0)
		rn->sw->full[rn->pos[slot]] = ds_hash_digest(rd->h, 0);
	return err;
}

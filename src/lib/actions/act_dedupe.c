/* SPDX-License-Identifier: MIT */
/* act_dedupe.c: a duplicate made to share the kept file's extents
 * (FIDEDUPERANGE; dupscan_dedupe()). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define DEDUPE_STEP (16u * 1024u * 1024u) /* btrfs caps one call at 16 MiB */

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "remote/remote.h"

/* ioctl(2) with a request of the kernel's width: glibc declares it unsigned
 * long, musl int, where constants past INT_MAX (FS_IOC_FIEMAP, FIDEDUPERANGE)
 * would not convert without a warning; through a variable they do. */
static int fs_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

/* Do the two files already map to the same blocks, extent for extent
 * (support/extents.c: the maps must prove it)? */
static bool extents_shared(int a, int b)
{
	struct ds_extmap ma = { 0 }, mb = { 0 };
	bool shared = ds_extent_map(a, &ma) == 0 && ds_extent_map(b, &mb) == 0 && ds_extmap_same(&ma, &mb);
	ds_extmap_free(&ma);
	ds_extmap_free(&mb);
	return shared;
}

/* FIDEDUPERANGE over the whole of kfd's size, a step at a time; d's
 * descriptor reopened for writing once where an older kernel wants it so
 * (the same inode as dst, checked). @return 0 or an error code. */
static int dedupe_ranges(int kfd, struct slot *d, const char *dup_path, const struct stat *dst, uint64_t size,
			 struct file_dedupe_range *req)
{
	bool reopened = false;
	for (uint64_t off = 0; off < size;) {
		uint64_t len = size - off < DEDUPE_STEP ? size - off : DEDUPE_STEP;
		memset(req, 0, sizeof(*req) + sizeof(struct file_dedupe_range_info));
		req->src_offset = off;
		req->src_length = len;
		req->dest_count = 1;
		req->info[0].dest_fd = d->fd;
		req->info[0].dest_offset = off;
		if (fs_ioctl(kfd, FIDEDUPERANGE, req) != 0) {
			int err = errno;
			if ((err == EPERM || err == EBADF || err == EACCES) && !reopened) {
				/* older kernels want the destination open for writing */
				int wfd = open(dup_path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
				reopened = true;
				if (wfd >= 0) {
					struct stat ws;
					if (fstat(wfd, &ws) == 0 && ws.st_ino == dst->st_ino && ws.st_dev == dst->st_dev) {
						close(d->fd);
						d->fd = wfd;
						continue;
					}
					close(wfd);
				}
			}
			return (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP || err == EXDEV) ? -EOPNOTSUPP : -err;
		}
		if (req->info[0].status == FILE_DEDUPE_RANGE_DIFFERS)
			return DUPSCAN_E_DIFFERS;
		if (req->info[0].status < 0)
			return req->info[0].status == -EINVAL ? -EOPNOTSUPP : req->info[0].status;
		if (req->info[0].bytes_deduped == 0)
			return -EIO;
		off += req->info[0].bytes_deduped;
	}
	return 0;
}

DUPSCAN_API int dupscan_dedupe(const dupscan_file *keep, const dupscan_file *dup, unsigned flags)
{
	/* a link or shared extents need both files on this host */
	if (ds_remote_of(keep) || ds_remote_of(dup))
		return DUPSCAN_E_REMOTE_FILE;
	/* shared blocks are one content: the same tags too */
	if (!dupscan_same_bytes(keep, dup))
		return DUPSCAN_E_PAYLOAD_ONLY;
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	struct file_dedupe_range *req = NULL;
	int rc = ds_act_prepare(keep, dup, flags, &k, &d);
	if (rc)
		goto out;
	if ((d.file.st_dev == k.st.st_dev && d.file.st_ino == k.st.st_ino) || k.st.st_size == 0) {
		rc = DUPSCAN_E_ALREADY;
		goto out;
	}
	/* a symlinked duplicate: its target, which ds_act_prepare() checked */
	if (d.fd < 0 && (d.fd = openat(d.dirfd, d.name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) >= 0) {
		struct stat st;
		if (fstat(d.fd, &st) != 0 || st.st_dev != d.file.st_dev || st.st_ino != d.file.st_ino)
			rc = ds_refuse(dup, DUPSCAN_E_CHANGED_INODE);
	}
	req = malloc(sizeof(*req) + sizeof(struct file_dedupe_range_info));
	if (rc == 0 && (d.fd < 0 || !req))
		rc = req ? ds_act_gone_or(errno) : -ENOMEM;
	if (rc)
		goto out;
	int kfd = k.fd;
	struct stat ks = k.st, ds = d.file;
	if (extents_shared(kfd, d.fd)) {
		rc = DUPSCAN_E_ALREADY;
		goto out;
	}
	if (flags & DUPSCAN_ACT_DRY_RUN)
		goto out;
	rc = dedupe_ranges(kfd, &d, dup->path, &ds, (uint64_t)ks.st_size, req);
out:
	free(req);
	ds_act_release(&k, &d);
	return rc;
}

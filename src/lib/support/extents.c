/* SPDX-License-Identifier: MIT */
/* extents.c: where a file's bytes lie, as FIEMAP tells (support.h): its
 * extents, whether the map proves anything (no extent the filesystem marks
 * unknown, delayed, unwritten, inline, encoded or unaligned), which
 * filesystem its addresses belong to, and what a set of files occupies.
 * Read-only: FIEMAP without FIEMAP_FLAG_SYNC writes nothing back (a file
 * with data not yet on disk shows delayed extents, and proves nothing). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"

#define BTRFS_MAGIC 0x9123683eu
#define XFS_MAGIC 0x58465342u
#define OCFS2_MAGIC 0x7461636fu
#define BCACHEFS_MAGIC 0xca451a4eu
#define EXTENTS_AT_ONCE 64u /* a batch of FIEMAP: 3.6 KiB, on the stack */

_Static_assert(DS_EXTENT_UNPROVEN == (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |
				      FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED |
				      FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN),
	       "the flags under which an extent proves nothing");

/* (ioctl's request through a variable: glibc takes unsigned long, musl int) */
static int fs_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

static bool fs_type_shares(unsigned long type)
{
	unsigned t = (unsigned)type;
	return t == BTRFS_MAGIC || t == XFS_MAGIC || t == OCFS2_MAGIC || t == BCACHEFS_MAGIC;
}

/* btrfs: the filesystem's UUID (every subvolume and snapshot has its own
 * device number, but their extents' addresses are the filesystem's). */
struct btrfs_fs_info_args { /* BTRFS_IOC_FS_INFO's argument, as linux/btrfs.h has it */
	uint64_t max_id, num_devices;
	uint8_t fsid[16];
	uint32_t nodesize, sectorsize, clone_alignment;
	uint16_t csum_type, csum_size;
	uint64_t flags, generation;
	uint8_t metadata_uuid[16];
	uint8_t reserved[944];
};
_Static_assert(sizeof(struct btrfs_fs_info_args) == 1024, "BTRFS_IOC_FS_INFO's argument is 1 KiB on every ABI");
#define BTRFS_IOC_FS_INFO_ _IOR(0x94, 31, struct btrfs_fs_info_args)

/* What names the filesystem whose block addresses fd's extents give: its
 * UUID on btrfs, else its device number. */
static uint64_t fs_key(int fd, dev_t dev)
{
	struct statfs sf;
	struct btrfs_fs_info_args fi;
	memset(&fi, 0, sizeof(fi));
	if (fstatfs(fd, &sf) == 0 && (unsigned)sf.f_type == BTRFS_MAGIC && fs_ioctl(fd, BTRFS_IOC_FS_INFO_, &fi) == 0)
		return ds_hash_oneshot(fi.fsid, sizeof(fi.fsid)) | (1ull << 63);
	return (uint64_t)dev & ~(1ull << 63);
}

bool ds_path_fs(const char *path, uint64_t dev, uint64_t *key)
{
	struct statfs sf;
	if (statfs(path, &sf) != 0 || !fs_type_shares((unsigned long)sf.f_type))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	*key = fs_key(fd, (dev_t)dev); /* (no descriptor: its device number, as elsewhere) */
	if (fd >= 0)
		close(fd);
	return true;
}


int ds_extent_map(int fd, struct ds_extmap *m)
{
	union {
		struct fiemap fm;
		unsigned char room[sizeof(struct fiemap) + EXTENTS_AT_ONCE * sizeof(struct fiemap_extent)];
	} buf;
	struct fiemap *fm = &buf.fm;
	m->n = 0;
	m->proves = true;
	uint64_t start = 0;
	int rc = 0;
	for (bool last = false; !last && rc == 0;) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = EXTENTS_AT_ONCE;
		if (fs_ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
			rc = -errno;
			break;
		}
		last = fm->fm_mapped_extents == 0;
		for (unsigned i = 0; i < fm->fm_mapped_extents && rc == 0; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (DS_GROW(m->v, m->cap, m->n + 1)) {
				rc = -ENOMEM;
				break;
			}
			m->v[m->n++] = (struct ds_extent){ e->fe_logical, e->fe_physical, e->fe_length, e->fe_flags };
			if (e->fe_flags & DS_EXTENT_UNPROVEN)
				m->proves = false;
			last = last || (e->fe_flags & FIEMAP_EXTENT_LAST);
			start = e->fe_logical + e->fe_length;
		}
	}
	if (rc)
		m->proves = false;
	return rc;
}

bool ds_extmap_same(const struct ds_extmap *a, const struct ds_extmap *b)
{
	if (!a->proves || !b->proves || a->n == 0 || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].logical != b->v[i].logical || a->v[i].physical != b->v[i].physical ||
		    a->v[i].length != b->v[i].length)
			return false;
	return true;
}

void ds_extmap_free(struct ds_extmap *m)
{
	free(m->v);
	*m = (struct ds_extmap){ 0 };
}

static int cmp_range(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_range *a = pa, *b = pb;
	if (a->fs != b->fs)
		return a->fs < b->fs ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

int ds_occupied(struct ds_range *r, size_t n, uint64_t *bytes)
{
	int rc = ds_sort(r, n, sizeof(*r), cmp_range, NULL);
	uint64_t total = 0;
	for (size_t i = 0; rc == 0 && i < n;) {
		uint64_t lo = r[i].start, hi = r[i].start + r[i].len;
		size_t j = i + 1;
		for (; j < n && r[j].fs == r[i].fs && r[j].start <= hi; j++)
			hi = r[j].start + r[j].len > hi ? r[j].start + r[j].len : hi;
		total += hi - lo;
		i = j;
	}
	*bytes = total;
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* storage.c: what kind of storage holds a device's files, so that reads can
 * be scheduled for it: one stream in disk order on a spinning disk, parallel
 * reads elsewhere.
 *
 * A block device is looked up in sysfs (/sys/dev/block/MAJ:MIN): a partition
 * stands for its disk; a device-mapper or md device for the devices under it
 * (slaves/), rotational when any of them is; a loop device for the device that
 * holds its backing file. A virtual machine's disk is unknown: its flag is no
 * news of what lies behind it. Filesystems without a block device of their own
 * (device major 0: btrfs, NFS, FUSE, tmpfs, overlay) are looked up in
 * mountinfo: a block device named as the mount's source is classified as
 * above; memory filesystems are memory, network filesystems network. */
#define _GNU_SOURCE /* major, minor */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"

#define DEPTH_MAX 8 /* stacked devices followed at most (dm over md over loop...) */

static int dev_kind(const char *sysfs, const char *mountinfo, uint64_t dev, int depth);

static bool in_list(const char *word, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(word, *list) == 0)
			return true;
	return false;
}

/* The first line of a small file, without its newline. */
static bool read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* The kind of a device made of two others: a spinning disk anywhere under it
 * makes it one; unknown only when nothing is known. */
static int combine(int a, int b)
{
	if (a == DS_STORE_HDD || b == DS_STORE_HDD)
		return DS_STORE_HDD;
	if (a == DS_STORE_UNKNOWN)
		return b;
	return a;
}

/* A virtual machine's disk (virtio, Xen, or a SCSI disk the hypervisor
 * emulates): its rotational flag says nothing of the storage behind it
 * (virtio-blk reports every disk as rotational). */
static bool virtual_disk(const char *dir)
{
	static const char *const drivers[] = { "virtio_blk", "xen_blkfront", "xen-blkfront", NULL };
	static const char *const vendors[] = { "QEMU", "VMware", "Msft", "VBOX", "Xen", NULL };
	char path[PATH_MAX], line[256];
	snprintf(path, sizeof(path), "%s/device/driver", dir);
	char *driver = realpath(path, NULL);
	bool virt = false;
	if (driver) {
		const char *name = strrchr(driver, '/');
		virt = name && in_list(name + 1, drivers);
		free(driver);
	}
	for (int f = 0; !virt && f < 2; f++) {
		snprintf(path, sizeof(path), "%s/device/%s", dir, f ? "model" : "vendor");
		if (!read_line(path, line, sizeof(line)))
			continue;
		for (const char *const *v = vendors; *v && !virt; v++)
			virt = strncmp(line, *v, strlen(*v)) == 0;
	}
	return virt;
}

static int rotational_flag(const char *dir)
{
	char path[PATH_MAX], line[16];
	snprintf(path, sizeof(path), "%s/queue/rotational", dir);
	if (!read_line(path, line, sizeof(line)))
		return DS_STORE_UNKNOWN;
	return strcmp(line, "1") == 0 ? DS_STORE_HDD : strcmp(line, "0") == 0 ? DS_STORE_SSD : DS_STORE_UNKNOWN;
}

/* The kind of the block device whose sysfs directory (resolved) is dir. */
static int dir_kind(const char *sysfs, const char *mountinfo, const char *dir, int depth)
{
	char path[PATH_MAX], line[PATH_MAX];
	if (depth > DEPTH_MAX)
		return DS_STORE_UNKNOWN;
	/* a loop device: where its backing file lives; when that cannot be told
	 * (a virtual disk), the loop's own flag, which whoever set it up may have
	 * set to say what the image stands for */
	snprintf(path, sizeof(path), "%s/loop/backing_file", dir);
	if (read_line(path, line, sizeof(line))) {
		struct stat st;
		int kind = stat(line, &st) == 0 ? dev_kind(sysfs, mountinfo, (uint64_t)st.st_dev, depth + 1)
						: DS_STORE_UNKNOWN;
		return kind != DS_STORE_UNKNOWN ? kind : rotational_flag(dir);
	}
	/* dm and md: the devices under it */
	snprintf(path, sizeof(path), "%s/slaves", dir);
	DIR *d = opendir(path);
	if (d) {
		int kind = DS_STORE_UNKNOWN;
		bool any = false;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char entry[PATH_MAX + 256];
			snprintf(entry, sizeof(entry), "%s/%s", path, e->d_name);
			char *under = realpath(entry, NULL);
			if (under)
				kind = combine(kind, dir_kind(sysfs, mountinfo, under, depth + 1));
			free(under);
			any = true;
		}
		closedir(d);
		if (any)
			return kind;
	}
	/* a partition: its disk is the directory above */
	snprintf(path, sizeof(path), "%s/partition", dir);
	if (access(path, F_OK) == 0) {
		snprintf(line, sizeof(line), "%s", dir);
		char *slash = strrchr(line, '/');
		if (!slash)
			return DS_STORE_UNKNOWN;
		*slash = '\0';
		return dir_kind(sysfs, mountinfo, line, depth + 1);
	}
	return virtual_disk(dir) ? DS_STORE_UNKNOWN : rotational_flag(dir);
}

/* The block device a mount's source names (btrfs names one), or 0: none
 * (tmpfs, NFS, FUSE). */
static uint64_t block_source(const char *source)
{
	struct stat st;
	if (source[0] == '/' && stat(source, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) != 0)
		return (uint64_t)st.st_rdev;
	return 0;
}

/* A filesystem without a block device of its own: by its mount's source and
 * type in mountinfo. */
static int mount_kind(const char *sysfs, const char *mountinfo, uint64_t dev, int depth)
{
	static const char *const memory[] = { "tmpfs", "ramfs", "devtmpfs", "hugetlbfs", NULL };
	static const char *const network[] = { "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "9p", "afs",
					       "ceph", "glusterfs", "fuse.sshfs", "fuse.glusterfs", "fuse.rclone",
					       "fuse.s3fs", "davfs", "fuse.davfs2", NULL };
	char type[64], source[PATH_MAX];
	if (!ds_mount_entry(mountinfo, dev, type, source, NULL))
		return DS_STORE_UNKNOWN;
	if (in_list(type, memory))
		return DS_STORE_MEMORY;
	if (in_list(type, network))
		return DS_STORE_NETWORK;
	uint64_t src = block_source(source);
	return src ? dev_kind(sysfs, mountinfo, src, depth + 1) : DS_STORE_UNKNOWN;
}

static int dev_kind(const char *sysfs, const char *mountinfo, uint64_t dev, int depth)
{
	if (depth > DEPTH_MAX)
		return DS_STORE_UNKNOWN;
	if (major((dev_t)dev) == 0)
		return mount_kind(sysfs, mountinfo, dev, depth);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs, major((dev_t)dev), minor((dev_t)dev));
	char *dir = realpath(path, NULL);
	if (!dir)
		return mount_kind(sysfs, mountinfo, dev, depth);
	int kind = dir_kind(sysfs, mountinfo, dir, depth);
	free(dir);
	return kind;
}

int ds_storage_kind(const char *sysfs, const char *mountinfo, uint64_t dev)
{
	return dev_kind(sysfs, mountinfo, dev, 0);
}

/* The device number a sysfs block directory names in its dev file, or dflt. */
static uint64_t dir_dev(const char *dir, uint64_t dflt)
{
	char path[PATH_MAX], line[64];
	unsigned maj, min;
	snprintf(path, sizeof(path), "%s/dev", dir);
	if (!read_line(path, line, sizeof(line)) || sscanf(line, "%u:%u", &maj, &min) != 2)
		return dflt;
	return (uint64_t)makedev(maj, min);
}

/* The disk under the block device whose sysfs directory is dir (its number
 * self): a partition's disk; for dm or md over one device, that device's;
 * itself otherwise (a RAID of several disks, a loop device: an image stands
 * for a disk of its own). */
static uint64_t dir_disk(const char *dir, uint64_t self, int depth)
{
	char path[PATH_MAX];
	if (depth > DEPTH_MAX)
		return self;
	snprintf(path, sizeof(path), "%s/slaves", dir);
	DIR *d = opendir(path);
	if (d) {
		char *only = NULL;
		int count = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.' || ++count > 1)
				continue;
			char entry[PATH_MAX + 256];
			snprintf(entry, sizeof(entry), "%s/%s", path, e->d_name);
			only = realpath(entry, NULL);
		}
		closedir(d);
		uint64_t disk = count == 1 && only ? dir_disk(only, dir_dev(only, self), depth + 1) : self;
		free(only);
		if (count > 0)
			return disk;
	}
	snprintf(path, sizeof(path), "%s/partition", dir);
	if (access(path, F_OK) != 0)
		return self;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	return slash ? dir_dev(parent, self) : self;
}

uint64_t ds_disk_of(const char *sysfs, const char *mountinfo, uint64_t dev)
{
	char path[PATH_MAX];
	if (major((dev_t)dev) == 0) {
		/* a filesystem on a block device it does not name as its own (btrfs) */
		char type[64], source[PATH_MAX];
		uint64_t src = ds_mount_entry(mountinfo, dev, type, source, NULL) ? block_source(source) : 0;
		return src ? ds_disk_of(sysfs, mountinfo, src) : dev;
	}
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs, major((dev_t)dev), minor((dev_t)dev));
	char *dir = realpath(path, NULL);
	uint64_t disk = dir ? dir_disk(dir, dev, 0) : dev;
	free(dir);
	return disk;
}

/* Mountinfo's escapes (\040 for a space, ...) undone in place. */
static void unescape(char *p)
{
	char *w = p;
	for (; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			*w++ = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
}

uint64_t ds_btrfs_source(const char *mountinfo, const char *path, uint64_t dev)
{
	uint64_t want, key;
	FILE *f = fopen(mountinfo, "re");
	if (!f || !ds_path_fs(path, dev, &want)) {
		if (f)
			fclose(f);
		return 0;
	}
	char line[4096], mnt[PATH_MAX], type[64], source[PATH_MAX];
	uint64_t src = 0;
	while (!src && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		struct stat st;
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %4095s", type, source) != 2 || strcmp(type, "btrfs") != 0)
			continue;
		unescape(mnt);
		if (stat(mnt, &st) == 0 && ds_path_fs(mnt, (uint64_t)st.st_dev, &key) && key == want)
			src = block_source(source);
	}
	fclose(f);
	return src;
}

/* A FUSE filesystem of no kind storage.c knows (not sshfs, rclone, ...). */
static bool other_fuse(const char *mountinfo, uint64_t dev)
{
	char type[64], source[PATH_MAX];
	/* (FUSE devices have major 0: a disk's kind is never looked up here) */
	return major((dev_t)dev) == 0 && ds_mount_entry(mountinfo, dev, type, source, NULL) && strncmp(type, "fuse", 4) == 0;
}

/* The scan's entry for device dev, looked up the first time it is asked
 * (NULL: out of memory, the answer k all the same). */
static struct ds_devkind *device_entry(struct ds_reading *s, uint64_t dev, struct ds_devkind *k)
{
	for (size_t i = 0; i < s->ndevkinds; i++)
		if (s->devkinds[i].dev == dev)
			return &s->devkinds[i];
	/* A spinning disk is read by one stream in disk order; a network
	 * filesystem (usually disks in a NAS, behind a link that answers each
	 * request a round trip later) by many requests at once (netio.c).
	 * Memory, solid-state and storage that cannot be told (overlay, most
	 * FUSE) keep reads on every thread. */
	int kind = ds_storage_kind(s->core->sysfs, s->core->mountinfo, dev);
	*k = (struct ds_devkind){ dev, kind == DS_STORE_HDD, kind == DS_STORE_NETWORK,
				  ds_disk_of(s->core->sysfs, s->core->mountinfo, dev),
				  kind == DS_STORE_UNKNOWN && other_fuse(s->core->mountinfo, dev),
				  kind == DS_STORE_UNKNOWN && major((dev_t)dev) == 0 };
	/* its inode numbers looked up with the rest, on the scan's thread, as
	 * reading threads ask ds_inodes_trusted_now() (records/inodes.c) */
	(void)ds_inodes_trusted(s->tree, dev);
	/* out of memory: asked again next time, the same answer */
	if (DS_GROW(s->devkinds, s->capdevkinds, s->ndevkinds + 1))
		return NULL;
	s->devkinds[s->ndevkinds] = *k;
	return &s->devkinds[s->ndevkinds++];
}

static struct ds_devkind device(struct ds_reading *s, uint64_t dev)
{
	struct ds_devkind k;
	const struct ds_devkind *e = device_entry(s, dev, &k);
	return e ? *e : k;
}

bool ds_device_wants_path(struct ds_reading *s, uint64_t dev)
{
	return device(s, dev).by_path;
}

void ds_device_path(struct ds_reading *s, uint64_t dev, const char *path)
{
	struct ds_devkind k;
	struct ds_devkind *e = device_entry(s, dev, &k);
	if (!e || !e->by_path)
		return;
	e->by_path = false; /* asked once */
	/* a btrfs subvolume (a snapshot, /home on most distributions; on recent
	 * kernels the top one too): the kind and disk of the filesystem's mount */
	uint64_t src = ds_btrfs_source(s->core->mountinfo, path, dev);
	if (!src)
		return;
	int kind = ds_storage_kind(s->core->sysfs, s->core->mountinfo, src);
	e->one = kind == DS_STORE_HDD;
	e->net = kind == DS_STORE_NETWORK;
	e->disk = ds_disk_of(s->core->sysfs, s->core->mountinfo, src);
}

bool ds_one_stream(struct ds_reading *s, uint64_t dev)
{
	if (s->core->opt.io != DUPSCAN_IO_AUTO)
		return s->core->opt.io == DUPSCAN_IO_HDD;
	return device(s, dev).one;
}

uint64_t ds_disk(struct ds_reading *s, uint64_t dev)
{
	return device(s, dev).disk;
}

void ds_probe_net(struct ds_reading *s, uint64_t dev, const char *dir)
{
	if (!device(s, dev).fuse)
		return;
	/* listed to its end: what a walk of it pays a directory (a local FUSE
	 * filesystem answers in tens of microseconds, sshfs on a 1 ms link in 7 ms) */
	int64_t t = ds_mono_ns();
	DIR *d = opendir(dir);
	while (d && readdir(d))
		;
	if (d)
		closedir(d);
	bool slow = d && ds_mono_ns() - t >= s->net_probe_ns;
	for (size_t i = 0; i < s->ndevkinds; i++)
		if (s->devkinds[i].dev == dev) {
			s->devkinds[i].fuse = false; /* asked once */
			s->devkinds[i].net = slow;
		}
}

/* The mode's own state, once chosen: NET's count in flight. */
static int set_mode(struct ds_reading *s, int mode)
{
	s->io_mode = mode;
	if (mode != DUPSCAN_IO_NET)
		return 0;
	int rc = ds_net_start(s);
	/* files one thread may hold open: room for every thread NET may run */
	if (rc == 0 && !s->core->opt.threads_given && s->core->opt.threads > 1)
		s->max_open = ds_open_per_thread(DS_NET_MOST);
	return rc;
}

int ds_choose_io(struct ds_reading *s, const uint64_t *devs, size_t n)
{
	if (s->core->opt.io != DUPSCAN_IO_AUTO)
		return s->io_mode == s->core->opt.io ? 0 : set_mode(s, s->core->opt.io);
	/* once a device read as one stream was met, the scan stays so; a
	 * network filesystem met makes it NET unless a spinning disk is read
	 * (hdd mode reads each disk as one stream and the others beside it) */
	int mode = s->io_mode == DUPSCAN_IO_NET ? DUPSCAN_IO_NET : DUPSCAN_IO_SSD;
	if (s->io_mode == DUPSCAN_IO_HDD)
		mode = DUPSCAN_IO_HDD;
	for (size_t i = 0; i < n && mode != DUPSCAN_IO_HDD; i++) {
		struct ds_devkind k = device(s, devs[i]);
		mode = k.one ? DUPSCAN_IO_HDD : k.net ? DUPSCAN_IO_NET : mode;
	}
	if (mode == s->io_mode)
		return 0;
	return set_mode(s, mode);
}

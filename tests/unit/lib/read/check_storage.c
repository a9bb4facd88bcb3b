/* SPDX-License-Identifier: MIT */
/* check_storage.c: telling a spinning disk from the rest, on a fake sysfs
 * tree and mountinfo: a partition is its disk, md and dm are the disks under
 * them (rotational when one is), a loop device is where its backing file
 * lives, filesystems without a device of their own go by mountinfo; and the
 * reading mode chosen from that. */
#define _GNU_SOURCE /* makedev */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scan.h"
#include "testutil.h"
#include "read/read.h"

static char *root;        /* the fake tree */
static char *sysfs, *mountinfo;

static void write_file(const char *rel, const char *text)
{
	char *parent = strdup(rel);
	char *slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		tu_mkdir(root, parent);
	}
	free(parent);
	char *p = tu_path(root, rel);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* sys/dev/block/MAJ:MIN -> target (relative to sys/dev/block) */
static void dev_link(unsigned maj, unsigned min, const char *target)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "sys/dev/block/%u:%u", maj, min);
	char *p = tu_path(root, rel);
	ck_assert_int_eq(symlink(target, p), 0);
	free(p);
}

static void link_at(const char *rel, const char *target)
{
	char *p = tu_path(root, rel);
	ck_assert_int_eq(symlink(target, p), 0);
	free(p);
}

static void setup(void)
{
	root = tu_tmpdir();
	sysfs = tu_path(root, "sys");
	mountinfo = tu_path(root, "mountinfo");
	tu_mkdir(root, "sys/dev/block");
	/* sda: a spinning disk with a partition; nvme0n1: solid state */
	write_file("sys/devices/pci/block/sda/queue/rotational", "1\n");
	write_file("sys/devices/pci/block/sda/sda1/partition", "1\n");
	write_file("sys/devices/pci/block/nvme0n1/queue/rotational", "0\n");
	write_file("sys/devices/pci/block/nvme0n1/nvme0n1p2/partition", "2\n");
	write_file("sys/devices/pci/block/nvme1n1/queue/rotational", "0\n");
	dev_link(8, 0, "../../devices/pci/block/sda");
	dev_link(8, 1, "../../devices/pci/block/sda/sda1");
	dev_link(259, 0, "../../devices/pci/block/nvme0n1");
	dev_link(259, 2, "../../devices/pci/block/nvme0n1/nvme0n1p2");
	/* md0 over sda1 and an SSD: rotational; md1 over two SSDs: not */
	write_file("sys/devices/virtual/block/md0/queue/rotational", "0\n");
	tu_mkdir(root, "sys/devices/virtual/block/md0/slaves");
	link_at("sys/devices/virtual/block/md0/slaves/sda1", "../../../../pci/block/sda/sda1");
	link_at("sys/devices/virtual/block/md0/slaves/nvme1n1", "../../../../pci/block/nvme1n1");
	write_file("sys/devices/virtual/block/md1/queue/rotational", "0\n");
	tu_mkdir(root, "sys/devices/virtual/block/md1/slaves");
	link_at("sys/devices/virtual/block/md1/slaves/nvme0n1p2", "../../../../pci/block/nvme0n1/nvme0n1p2");
	link_at("sys/devices/virtual/block/md1/slaves/nvme1n1", "../../../../pci/block/nvme1n1");
	dev_link(9, 0, "../../devices/virtual/block/md0");
	dev_link(9, 1, "../../devices/virtual/block/md1");
	/* dm-0 over md1 (crypt over RAID): as md1 */
	write_file("sys/devices/virtual/block/dm-0/queue/rotational", "0\n");
	tu_mkdir(root, "sys/devices/virtual/block/dm-0/slaves");
	link_at("sys/devices/virtual/block/dm-0/slaves/md1", "../../md1");
	dev_link(253, 0, "../../devices/virtual/block/dm-0");
	/* dm-1 made of itself: a loop in sysfs must end */
	write_file("sys/devices/virtual/block/dm-1/queue/rotational", "0\n");
	tu_mkdir(root, "sys/devices/virtual/block/dm-1/slaves");
	link_at("sys/devices/virtual/block/dm-1/slaves/dm-1", "../../dm-1");
	dev_link(253, 1, "../../devices/virtual/block/dm-1");
	/* virtual machines' disks: a virtio disk, a SCSI disk QEMU emulates (and
	 * its partition), and a real SCSI disk beside them */
	write_file("sys/devices/pci/virtio3/block/vdb/queue/rotational", "1\n");
	write_file("sys/bus/virtio/drivers/virtio_blk/bind", "");
	link_at("sys/devices/pci/virtio3/driver", "../../../bus/virtio/drivers/virtio_blk");
	link_at("sys/devices/pci/virtio3/block/vdb/device", "../../../virtio3");
	dev_link(254, 16, "../../devices/pci/virtio3/block/vdb");
	write_file("sys/devices/pci/host0/block/sdc/queue/rotational", "1\n");
	write_file("sys/devices/pci/host0/block/sdc/sdc1/partition", "1\n");
	write_file("sys/devices/pci/host0/vendor", "QEMU    \n");
	link_at("sys/devices/pci/host0/block/sdc/device", "../../../host0");
	dev_link(8, 32, "../../devices/pci/host0/block/sdc");
	dev_link(8, 33, "../../devices/pci/host0/block/sdc/sdc1");
	write_file("sys/devices/pci/host1/block/sdd/queue/rotational", "1\n");
	write_file("sys/devices/pci/host1/vendor", "ATA     \n");
	link_at("sys/devices/pci/host1/block/sdd/device", "../../../host1");
	dev_link(8, 48, "../../devices/pci/host1/block/sdd");
	/* filesystems without a block device of their own */
	write_file("mountinfo",
		   "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		   "30 1 0:45 / /mnt/nas rw,relatime - nfs4 nas:/photos rw,vers=4.2\n"
		   "31 1 0:46 / /tmp rw - tmpfs tmpfs rw\n"
		   "32 1 0:47 / /mnt/ssh rw - fuse.sshfs me@host:/ rw\n"
		   "33 1 0:48 / /merged rw - overlay overlay rw,lowerdir=/a\n"
		   "34 1 0:49 / /data rw - btrfs /nonexistent/device rw\n");
}

static void teardown(void)
{
	free(sysfs);
	free(mountinfo);
	tu_cleanup(root);
}

static int kind(unsigned maj, unsigned min)
{
	return ds_storage_kind(sysfs, mountinfo, (uint64_t)makedev(maj, min));
}

START_TEST(test_block_devices)
{
	ck_assert_int_eq(kind(8, 0), DS_STORE_HDD);
	ck_assert_int_eq(kind(8, 1), DS_STORE_HDD);       /* a partition: its disk */
	ck_assert_int_eq(kind(259, 0), DS_STORE_SSD);
	ck_assert_int_eq(kind(259, 2), DS_STORE_SSD);
	ck_assert_int_eq(kind(9, 0), DS_STORE_HDD);       /* md: one member spins */
	ck_assert_int_eq(kind(9, 1), DS_STORE_SSD);       /* md: none does */
	ck_assert_int_eq(kind(253, 0), DS_STORE_SSD);     /* dm over md over SSDs */
	ck_assert_int_ne(kind(253, 1), DS_STORE_HDD);     /* a loop in sysfs ends, unknown */
	ck_assert_int_eq(kind(8, 16), DS_STORE_UNKNOWN);  /* not in sysfs, not mounted */
}
END_TEST

START_TEST(test_no_block_device)
{
	ck_assert_int_eq(kind(0, 45), DS_STORE_NETWORK);  /* nfs4 */
	ck_assert_int_eq(kind(0, 46), DS_STORE_MEMORY);   /* tmpfs */
	ck_assert_int_eq(kind(0, 47), DS_STORE_NETWORK);  /* sshfs */
	ck_assert_int_eq(kind(0, 48), DS_STORE_UNKNOWN);  /* overlay */
	ck_assert_int_eq(kind(0, 49), DS_STORE_UNKNOWN);  /* its source is no block device */
	ck_assert_int_eq(kind(0, 99), DS_STORE_UNKNOWN);  /* not mounted */
	ck_assert_int_eq(ds_storage_kind(sysfs, "/nonexistent/mountinfo", (uint64_t)makedev(0, 45)),
			 DS_STORE_UNKNOWN);
}
END_TEST

/* A loop device is what holds its backing file: the fake tree says what the
 * backing file's own device is. 0: a spinning disk (the loop's flag, 0, is
 * not asked); 1 and 2: storage that cannot be told, so the loop's own flag
 * decides (1: rotational, as hddsim sets it; 2: not). */
START_TEST(test_loop)
{
	char *backing = tu_path(root, "disk.img");
	tu_file(root, "disk.img", 100, 1, -1);
	struct stat st;
	ck_assert_int_eq(stat(backing, &st), 0);
	unsigned maj = major(st.st_dev), min = minor(st.st_dev);
	if (maj == 0) {
		/* the test's own directory is on a device-less filesystem */
		FILE *f = fopen(mountinfo, "a");
		fprintf(f, "40 1 %u:%u / /x rw - %s none rw\n", maj, min, _i == 0 ? "tmpfs" : "overlay");
		fclose(f);
	} else {
		dev_link(maj, min, _i == 0 ? "../../devices/pci/block/sda/sda1" : "../../devices/pci/virtio3/block/vdb");
	}
	int want = _i == 0 ? (maj == 0 ? DS_STORE_MEMORY : DS_STORE_HDD) : _i == 1 ? DS_STORE_HDD : DS_STORE_SSD;
	write_file("sys/devices/virtual/block/loop0/queue/rotational", _i == 1 ? "1\n" : "0\n");
	char line[512];
	snprintf(line, sizeof(line), "%s\n", backing);
	write_file("sys/devices/virtual/block/loop0/loop/backing_file", line);
	dev_link(7, 0, "../../devices/virtual/block/loop0");
	ck_assert_int_eq(kind(7, 0), want);
	free(backing);
}
END_TEST

/* Virtual machines' disks say nothing true with their flag. */
START_TEST(test_virtual_disks)
{
	ck_assert_int_eq(kind(254, 16), DS_STORE_UNKNOWN);  /* virtio-blk, "rotational" */
	ck_assert_int_eq(kind(8, 32), DS_STORE_UNKNOWN);    /* a SCSI disk by QEMU */
	ck_assert_int_eq(kind(8, 33), DS_STORE_UNKNOWN);    /* its partition */
	ck_assert_int_eq(kind(8, 48), DS_STORE_HDD);        /* a real vendor's disk */
}
END_TEST

/* Devices of one disk are one stream: a partition is its disk, dm or md over
 * one device that device's disk, a RAID of several its own, a loop device its
 * own (an image stands for a disk), a filesystem without a device of its own
 * its own too. */
static uint64_t disk(unsigned maj, unsigned min)
{
	return ds_disk_of(sysfs, mountinfo, (uint64_t)makedev(maj, min));
}

START_TEST(test_disk_of)
{
	write_file("sys/devices/pci/block/sda/dev", "8:0\n");
	write_file("sys/devices/pci/block/sda/sda1/dev", "8:1\n");
	write_file("sys/devices/pci/block/sda/sda2/partition", "2\n");
	write_file("sys/devices/pci/block/sda/sda2/dev", "8:2\n");
	dev_link(8, 2, "../../devices/pci/block/sda/sda2");
	write_file("sys/devices/pci/block/nvme0n1/dev", "259:0\n");
	write_file("sys/devices/pci/block/nvme0n1/nvme0n1p2/dev", "259:2\n");
	write_file("sys/devices/virtual/block/md1/dev", "9:1\n");
	/* dm-2: LVM over sda2 */
	write_file("sys/devices/virtual/block/dm-2/dev", "253:2\n");
	tu_mkdir(root, "sys/devices/virtual/block/dm-2/slaves");
	link_at("sys/devices/virtual/block/dm-2/slaves/sda2", "../../../../pci/block/sda/sda2");
	dev_link(253, 2, "../../devices/virtual/block/dm-2");
	ck_assert_uint_eq(disk(8, 0), makedev(8, 0));
	ck_assert_uint_eq(disk(8, 1), makedev(8, 0));      /* sda1: sda */
	ck_assert_uint_eq(disk(8, 2), makedev(8, 0));      /* sda2: sda */
	ck_assert_uint_eq(disk(253, 2), makedev(8, 0));    /* LVM over sda2: sda */
	ck_assert_uint_eq(disk(259, 2), makedev(259, 0));  /* a partition of another disk */
	ck_assert_uint_eq(disk(9, 0), makedev(9, 0));      /* md0 over two: its own */
	ck_assert_uint_eq(disk(253, 0), makedev(9, 1));    /* dm-0 over md1 over two: md1 */
	ck_assert_uint_eq(disk(253, 1), makedev(253, 1));  /* a loop in sysfs ends */
	ck_assert_uint_eq(disk(0, 46), makedev(0, 46));    /* tmpfs */
	ck_assert_uint_eq(disk(0, 45), makedev(0, 45));    /* NFS */
	ck_assert_uint_eq(disk(8, 16), makedev(8, 16));    /* not in sysfs */
}
END_TEST

/* The reading mode: auto goes by the devices, an explicit mode wins. */
START_TEST(test_choose)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	s->core.sysfs = sysfs;
	s->core.mountinfo = mountinfo;
	uint64_t ssd_mem[] = { makedev(259, 0), makedev(0, 46), makedev(0, 48) };
	uint64_t with_nas[] = { makedev(259, 0), makedev(0, 45) };
	uint64_t with_hdd[] = { makedev(259, 0), makedev(9, 0) };
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_AUTO);
	ds_choose_io(&s->reading, ssd_mem, 3);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_SSD);
	ck_assert_int_eq(dupscan_io_inflight(s), 1);
	ck_assert_int_eq(ds_choose_io(&s->reading, with_nas, 2), 0);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_NET); /* many requests in flight */
	ck_assert_ptr_nonnull(s->reading.net);
	/* a phase may run all, so many at once at first (built without
	 * threads: one) */
	ck_assert_int_eq(ds_readers(&s->reading), DUPSCAN_THREADS ? DS_NET_MOST : 1);
	ck_assert_int_eq(*ds_net_cap(&s->reading), DUPSCAN_THREADS ? DS_NET_START : 1);
	ds_choose_io(&s->reading, ssd_mem, 3); /* once a network filesystem was seen, it stays */
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_NET);
	ds_choose_io(&s->reading, with_hdd, 2); /* a spinning disk: one stream each disk, the NAS beside */
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_HDD);
	ck_assert(!ds_one_stream(&s->reading, makedev(0, 45)));
	ds_choose_io(&s->reading, with_nas, 2); /* once a spinning disk was seen, it stays */
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_HDD);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_SSD), 0);
	ds_choose_io(&s->reading, with_hdd, 2);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_SSD);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
	ds_choose_io(&s->reading, ssd_mem, 3);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_HDD);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_NET), 0);
	ds_choose_io(&s->reading, ssd_mem, 3);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_NET);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, 4), DUPSCAN_E_OPTION);
	dupscan_free(s);
}
END_TEST

/* Which filesystems keep one inode number a file: FUSE never says it does,
 * SMB does unless mounted with noserverino; block devices' filesystems do. */
START_TEST(test_inode_numbers)
{
	FILE *f = fopen(mountinfo, "a");
	fprintf(f, "50 1 0:60 / /s rw - cifs //nas/s rw,noserverino,vers=3.1\n"
		   "51 1 0:61 / /t rw - cifs //nas/t rw,serverino,vers=3.1\n");
	fclose(f);
	ck_assert(!ds_inode_numbers_kept(mountinfo, makedev(0, 47)));  /* sshfs */
	ck_assert(!ds_inode_numbers_kept(mountinfo, makedev(0, 60)));  /* noserverino */
	ck_assert(ds_inode_numbers_kept(mountinfo, makedev(0, 61)));
	ck_assert(ds_inode_numbers_kept(mountinfo, makedev(0, 45)));   /* nfs4 */
	ck_assert(ds_inode_numbers_kept(mountinfo, makedev(8, 1)));    /* a block device's */
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	s->core.sysfs = sysfs;
	s->core.mountinfo = mountinfo;
	ck_assert(ds_inodes_trusted(&s->tree, makedev(0, 61)));
	ds_inodes_distrust(&s->tree, makedev(0, 61)); /* the scan saw two files of one number */
	ck_assert(!ds_inodes_trusted(&s->tree, makedev(0, 61)));
	ck_assert(ds_inodes_trusted(&s->tree, makedev(0, 45)));
	dupscan_free(s);
}
END_TEST

/* A FUSE filesystem of no known kind: NET when listing a directory of it is
 * slow (the threshold set to 0 and to an hour stands for a slow and a
 * quick one); known kinds and other filesystems are not probed. */
START_TEST(test_probe_fuse)
{
	FILE *f = fopen(mountinfo, "a");
	fprintf(f, "52 1 0:62 / /f rw - fuse.unknownfs src rw\n");
	fclose(f);
	for (int slow = 0; slow < 2; slow++) {
		dupscan_scan *s = NULL;
		ck_assert_int_eq(dupscan_create(&s), 0);
		s->core.sysfs = sysfs;
		s->core.mountinfo = mountinfo;
		s->reading.net_probe_ns = slow ? 0 : INT64_C(3600000000000);
		uint64_t dev = makedev(0, 62), sshfs = makedev(0, 47), overlay = makedev(0, 48);
		ds_probe_net(&s->reading, dev, root); /* (root stands for a directory of the mount) */
		ds_probe_net(&s->reading, overlay, root);
		ck_assert_int_eq(ds_choose_io(&s->reading, &dev, 1), 0);
		ck_assert_int_eq(dupscan_io_mode(s), slow ? DUPSCAN_IO_NET : DUPSCAN_IO_SSD);
		/* overlay is not FUSE: never probed, however slow */
		dupscan_scan *o = NULL;
		ck_assert_int_eq(dupscan_create(&o), 0);
		o->core.sysfs = sysfs;
		o->core.mountinfo = mountinfo;
		o->reading.net_probe_ns = 0;
		ds_probe_net(&o->reading, overlay, root);
		ck_assert_int_eq(ds_choose_io(&o->reading, &overlay, 1), 0);
		ck_assert_int_eq(dupscan_io_mode(o), DUPSCAN_IO_SSD);
		/* sshfs is known: NET without a probe */
		ck_assert_int_eq(ds_choose_io(&o->reading, &sshfs, 1), 0);
		ck_assert_int_eq(dupscan_io_mode(o), DUPSCAN_IO_NET);
		dupscan_free(o);
		dupscan_free(s);
	}
}
END_TEST

/* Each device is looked up once a scan: the answer stands even if sysfs
 * changes meanwhile, and every part of the scan gets the same one. */
START_TEST(test_one_decision)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	s->core.sysfs = sysfs;
	s->core.mountinfo = mountinfo;
	ck_assert(!ds_one_stream(&s->reading, makedev(259, 0)));
	write_file("sys/devices/pci/block/nvme0n1/queue/rotational", "1\n");
	ck_assert(ds_storage_kind(sysfs, mountinfo, makedev(259, 0)) == DS_STORE_HDD); /* looked up anew */
	ck_assert(!ds_one_stream(&s->reading, makedev(259, 0)));                                 /* decided once */
	ck_assert(ds_one_stream(&s->reading, makedev(259, 2)));  /* its partition, first met now: as sysfs says now */
	ck_assert(!ds_one_stream(&s->reading, makedev(0, 45)));  /* the NAS: many requests, not one stream */
	ck_assert(!ds_one_stream(&s->reading, makedev(0, 46)));
	uint64_t nvme[] = { makedev(259, 0) };
	ds_choose_io(&s->reading, nvme, 1);
	ck_assert_int_eq(dupscan_io_mode(s), DUPSCAN_IO_SSD);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_IO, DUPSCAN_IO_HDD), 0);
	ck_assert(ds_one_stream(&s->reading, makedev(0, 46)));   /* an explicit mode wins */
	dupscan_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("ds_storage_kind");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_block_devices);
	tcase_add_test(tc, test_no_block_device);
	tcase_add_loop_test(tc, test_loop, 0, 3);
	tcase_add_test(tc, test_virtual_disks);
	tcase_add_test(tc, test_disk_of);
	tcase_add_test(tc, test_choose);
	tcase_add_test(tc, test_one_decision);
	tcase_add_test(tc, test_inode_numbers);
	tcase_add_test(tc, test_probe_fuse);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

/* SPDX-License-Identifier: MIT */
/* mounts.c: a device's mount in mountinfo, and what it tells of the
 * filesystem's inode numbers: read by the records (may two paths of one
 * inode number be one file?) and by the reading stage (what storage holds a
 * device), so below both. */
#define _GNU_SOURCE /* major, minor */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "support/support.h"

bool ds_mount_entry(const char *mountinfo, uint64_t dev, char type[64], char source[PATH_MAX], char *super)
{
	FILE *f = fopen(mountinfo, "re");
	if (!f)
		return false;
	char want[32], line[4096], opts[1024];
	snprintf(want, sizeof(want), "%u:%u", major((dev_t)dev), minor((dev_t)dev));
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char id[32];
		if (sscanf(line, "%*s %*s %31s", id) != 1 || strcmp(id, want) != 0)
			continue;
		char *sep = strstr(line, " - ");
		int got = sep ? sscanf(sep + 3, "%63s %4095s %1023s", type, source, opts) : 0;
		if (got < 2)
			break;
		if (super)
			snprintf(super, 1024, "%s", got == 3 ? opts : "");
		found = true;
	}
	fclose(f);
	return found;
}

bool ds_inode_numbers_kept(const char *mountinfo, uint64_t dev)
{
	char type[64], source[PATH_MAX], super[1024];
	if (major((dev_t)dev) != 0 || !ds_mount_entry(mountinfo, dev, type, source, super))
		return true; /* a block device's filesystem */
	/* FUSE numbers what it serves unless asked to pass the server's on
	 * (use_ino, which mountinfo does not show), and may number a file
	 * anew once the kernel forgot it; SMB without server inode numbers
	 * makes them up on the client */
	if (strncmp(type, "fuse", 4) == 0)
		return false;
	bool smb = strcmp(type, "cifs") == 0 || strcmp(type, "smb3") == 0;
	return !(smb && strstr(super, "noserverino"));
}


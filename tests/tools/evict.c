/* SPDX-License-Identifier: MIT */
/* evict DIR: put DIR's regular files out of the page cache (written back
 * first: nothing is lost), so that a cold read of them goes to the disk. One
 * process for a tree, where a python3 per call cost test_io.sh a tenth of a
 * second each, seventy times a run. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

static int evict_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag != FTW_F)
		return 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return 0; /* a symlink or a file gone: nothing cached of it here */
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: evict DIR\n");
		return 2;
	}
	if (nftw(argv[1], evict_one, 16, FTW_PHYS) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}

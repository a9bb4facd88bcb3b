/* SPDX-License-Identifier: MIT */
/* payload FILE: the payload dupscan_payload() finds in FILE, its bytes end
 * to end on standard output, and "FORMAT COUNT BYTES" then each range as
 * "OFFSET+LENGTH" on standard error (test_payload.sh compares them with
 * what independent tools strip). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <dupscan.h>

int main(int argc, char **argv)
{
	struct dupscan_payload p;
	int fd = argc == 2 ? open(argv[1], O_RDONLY) : -1, rc = fd >= 0 ? dupscan_payload(fd, &p) : -1;
	if (rc != 0) {
		fprintf(stderr, "payload: %s: %s\n", argc == 2 ? argv[1] : "usage: payload FILE", dupscan_strerror(rc));
		return 1;
	}
	fprintf(stderr, "%d %zu %llu", p.format, p.count, (unsigned long long)p.bytes);
	for (size_t i = 0; i < p.count; i++)
		fprintf(stderr, " %llu+%llu", (unsigned long long)p.extent[i].offset, (unsigned long long)p.extent[i].length);
	fputc('\n', stderr);
	static char buf[1 << 16];
	for (size_t i = 0; i < p.count; i++) {
		for (uint64_t done = 0; done < p.extent[i].length;) {
			size_t n = p.extent[i].length - done < sizeof(buf) ? (size_t)(p.extent[i].length - done) : sizeof(buf);
			ssize_t r = pread(fd, buf, n, (off_t)(p.extent[i].offset + done));
			if (r <= 0 || fwrite(buf, 1, (size_t)r, stdout) != (size_t)r)
				return 1;
			done += (uint64_t)r;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* SPDX-License-Identifier: MIT */
/* media/media.h: where a picture's or a song's own bytes lie in its file,
 * apart from its tags (DUPSCAN_MEDIA_*, dupscan_payload()): one parser a
 * format, each reading the file's structure through a bounded reader and
 * giving its payload as at most DUPSCAN_PAYLOAD_EXTENTS ranges, or nothing
 * (the file is then all payload, as any other). Never installed. */
#ifndef DUPSCAN_MEDIA_MEDIA_H
#define DUPSCAN_MEDIA_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dupscan.h"

/* A file's bytes as the parsers read them: a file by its descriptor, or
 * bytes in memory (the fuzzer, the tests). */
struct ds_media_in {
	int (*read)(void *user, void *buf, size_t len, uint64_t off); /* 0 or -errno */
	void *user;
	uint64_t size;
	unsigned reads;  /* made so far: a file that asks for more than
	                  * DS_MEDIA_READS is not parsed (a box or a chunk a few
	                  * bytes long, millions of times) */
};
#define DS_MEDIA_READS 4096
/* A parser's answer besides 0 (parsed) and -errno (a read failed): the
 * structure does not parse to the file's last byte, or needs more ranges or
 * reads than the bounds: the file is compared whole. */
#define DS_MEDIA_WHOLE 1

/* Read len bytes at off: 0, DS_MEDIA_WHOLE (past the end, or the reads'
 * bound) or -errno. */
int ds_media_read(struct ds_media_in *in, void *buf, size_t len, uint64_t off);
/* Add [off, off + len) to p's payload, after what it holds (joined to the
 * last range when it follows it): 0 or DS_MEDIA_WHOLE (too many ranges). */
int ds_payload_add(struct dupscan_payload *p, uint64_t off, uint64_t len);
/* The payload of in, whatever its format (told by its first bytes): 0 with
 * p filled (format DUPSCAN_MEDIA_OTHER and the whole file for one of no
 * known format or that did not parse), or -errno. */
int ds_media_payload(struct ds_media_in *in, struct dupscan_payload *p);
/* ds_media_payload() of the regular file open as fd, size bytes long (as
 * fstat or a scan's record says), read with pread through a window of a
 * few KiB. @return 0 or -errno. */
int ds_media_payload_fd(int fd, uint64_t size, struct dupscan_payload *p);

static inline uint32_t ds_be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static inline uint32_t ds_le32(const unsigned char *b)
{
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/* The parsers, each given a file whose first bytes are its format's
 * (ds_media_payload() tells): 0, DS_MEDIA_WHOLE or -errno. */
int ds_parse_jpeg(struct ds_media_in *in, struct dupscan_payload *p);
int ds_parse_png(struct ds_media_in *in, struct dupscan_payload *p);
int ds_parse_webp(struct ds_media_in *in, struct dupscan_payload *p);
int ds_parse_mp3(struct ds_media_in *in, struct dupscan_payload *p);
int ds_parse_flac(struct ds_media_in *in, struct dupscan_payload *p);
int ds_parse_bmff(struct ds_media_in *in, struct dupscan_payload *p);

#endif /* DUPSCAN_MEDIA_MEDIA_H */

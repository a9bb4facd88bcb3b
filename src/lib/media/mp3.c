/* SPDX-License-Identifier: MIT */
/* mp3.c: an MP3's payload: its frames, between the ID3v2 tags that start it
 * and the tags that end it (ID3v1, APEv2 with its header, Lyrics3 v2, an
 * ID3v2 with a footer, in any order), and starting with a frame's sync. */
#include <string.h>

#include "media/media.h"

/* An ID3v2 size: four bytes of seven bits (UINT32_MAX: a byte of eight). */
static uint32_t syncsafe(const unsigned char *b)
{
	if ((b[0] | b[1] | b[2] | b[3]) & 0x80)
		return UINT32_MAX;
	return (uint32_t)b[0] << 21 | (uint32_t)b[1] << 14 | (uint32_t)b[2] << 7 | b[3];
}

/* The tag that ends [start, *end), taken off *end: 0 (none left), TAKEN,
 * DS_MEDIA_WHOLE or -errno. */
#define TAKEN (DS_MEDIA_WHOLE + 1)
static int tail_tag(struct ds_media_in *in, uint64_t start, uint64_t *end)
{
	uint64_t n = *end - start, len = 0;
	/* the last 32 bytes (fewer: zeros before them), and where ID3v1 would start */
	unsigned char b[32] = { 0 }, v1[3] = { 0 };
	size_t k = n < sizeof(b) ? (size_t)n : sizeof(b);
	int rc = k ? ds_media_read(in, b + sizeof(b) - k, k, *end - k) : 0;
	if (rc == 0 && n >= 128)
		rc = ds_media_read(in, v1, 3, *end - 128);
	if (rc != 0)
		return rc;
	if (n >= 128 && memcmp(v1, "TAG", 3) == 0) {
		len = 128;
	} else if (n >= 32 && memcmp(b, "APETAGEX", 8) == 0) {
		uint32_t size = ds_le32(b + 12), flags = ds_le32(b + 20);
		if (size < 32)
			return DS_MEDIA_WHOLE;
		len = (uint64_t)size + (flags & 0x80000000u ? 32 : 0);
	} else if (n >= 15 && memcmp(b + 32 - 9, "LYRICS200", 9) == 0) {
		static const uint64_t place[6] = { 100000, 10000, 1000, 100, 10, 1 };
		len = 15;
		for (int i = 0; i < 6; i++) {
			unsigned char c = b[32 - 15 + i];
			if (c < '0' || c > '9')
				return DS_MEDIA_WHOLE;
			len += (uint64_t)(c - '0') * place[i];
		}
	} else if (n >= 10 && memcmp(b + 32 - 10, "3DI", 3) == 0) {
		uint32_t size = syncsafe(b + 32 - 4);
		if (size == UINT32_MAX)
			return DS_MEDIA_WHOLE;
		len = 20 + (uint64_t)size;
	} else {
		return 0;
	}
	if (len > n)
		return DS_MEDIA_WHOLE;
	*end -= len;
	return TAKEN;
}

int ds_parse_mp3(struct ds_media_in *in, struct dupscan_payload *p)
{
	uint64_t start = 0, end = in->size;
	unsigned char h[10];
	int rc;
	/* the ID3v2 tags first, one after another */
	while (end - start >= 10) {
		if ((rc = ds_media_read(in, h, 10, start)) != 0)
			return rc;
		if (memcmp(h, "ID3", 3) != 0)
			break;
		uint32_t size = syncsafe(h + 6);
		uint64_t len = 10 + (uint64_t)size + (h[5] & 0x10 ? 10 : 0);
		if (h[3] == 0xff || h[4] == 0xff || size == UINT32_MAX || len > end - start)
			return DS_MEDIA_WHOLE;
		start += len;
	}
	while ((rc = tail_tag(in, start, &end)) == TAKEN)
		;
	if (rc != 0)
		return rc;
	/* what is left starts with a frame: its sync, a layer */
	if (end - start < 4 || (rc = ds_media_read(in, h, 2, start)) != 0)
		return end - start < 4 ? DS_MEDIA_WHOLE : rc;
	if (h[0] != 0xff || (h[1] & 0xe0) != 0xe0 || (h[1] & 6) == 0)
		return DS_MEDIA_WHOLE;
	return ds_payload_add(p, start, end - start);
}

/* SPDX-License-Identifier: MIT */
/* webp.c: a WebP's payload: the RIFF and WEBP words and every chunk but
 * EXIF, XMP and VP8X, whose flags say whether the others are there (a tool
 * that tags a simple WebP adds it) and whose canvas is the picture's size,
 * in its VP8/VP8L chunk too; the RIFF size, which the tags add to, is left
 * out. The chunks must end where the RIFF size says the file does. An
 * animation (ANIM), whose frames VP8X's canvas places, is all payload. */
#include <string.h>

#include "media/media.h"

int ds_parse_webp(struct ds_media_in *in, struct dupscan_payload *p)
{
	unsigned char h[12];
	int rc = ds_media_read(in, h, sizeof(h), 0);
	if (rc != 0)
		return rc;
	if ((uint64_t)ds_le32(h + 4) + 8 != in->size)
		return DS_MEDIA_WHOLE;
	rc = ds_payload_add(p, 0, 4);
	if (rc == 0)
		rc = ds_payload_add(p, 8, 4);
	for (uint64_t off = 12; rc == 0 && off < in->size;) {
		if ((rc = ds_media_read(in, h, 8, off)) != 0)
			return rc;
		uint64_t dlen = ds_le32(h + 4), len = 8 + dlen + (dlen & 1);
		if (len > in->size - off)
			return DS_MEDIA_WHOLE;
		if (memcmp(h, "ANIM", 4) == 0)
			return DS_MEDIA_WHOLE;
		if (memcmp(h, "VP8X", 4) != 0 && memcmp(h, "EXIF", 4) != 0 && memcmp(h, "XMP ", 4) != 0)
			rc = ds_payload_add(p, off, len);
		off += len;
	}
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* png.c: a PNG's payload: its signature and every chunk but the text and
 * time ones (tEXt, zTXt, iTXt, tIME) and EXIF (eXIf), whole (length, type,
 * data, CRC); IEND must end the file. */
#include <string.h>

#include "media/media.h"

static bool is_tag(const unsigned char *type)
{
	static const char tags[][5] = { "tEXt", "zTXt", "iTXt", "tIME", "eXIf" };
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (memcmp(type, tags[i], 4) == 0)
			return true;
	return false;
}

int ds_parse_png(struct ds_media_in *in, struct dupscan_payload *p)
{
	int rc = ds_payload_add(p, 0, 8);
	for (uint64_t off = 8; rc == 0;) {
		unsigned char h[8];
		if ((rc = ds_media_read(in, h, sizeof(h), off)) != 0)
			return rc;
		uint32_t dlen = ds_be32(h);
		uint64_t len = 12 + (uint64_t)dlen;
		if (dlen > 0x7fffffffu || len > in->size - off)
			return DS_MEDIA_WHOLE;
		if (!is_tag(h + 4))
			rc = ds_payload_add(p, off, len);
		off += len;
		if (memcmp(h + 4, "IEND", 4) == 0)
			return rc == 0 && off == in->size ? 0 : DS_MEDIA_WHOLE;
	}
	return rc;
}

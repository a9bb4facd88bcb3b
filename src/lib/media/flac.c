/* SPDX-License-Identifier: MIT */
/* flac.c: a FLAC's payload: its "fLaC", STREAMINFO's body (not its header,
 * whose last-block bit tags change) and the frames after the last metadata
 * block, which start with a frame's sync. */
#include "media/media.h"

int ds_parse_flac(struct ds_media_in *in, struct dupscan_payload *p)
{
	int rc = ds_payload_add(p, 0, 4);
	uint64_t off = 4;
	for (bool last = false, first = true; rc == 0 && !last; first = false) {
		unsigned char h[4];
		if ((rc = ds_media_read(in, h, sizeof(h), off)) != 0)
			return rc;
		unsigned type = h[0] & 0x7f;
		uint64_t len = 4 + ((uint64_t)h[1] << 16 | (uint64_t)h[2] << 8 | h[3]);
		last = h[0] & 0x80;
		/* STREAMINFO first, 34 bytes, and only there */
		if (type == 127 || first != (type == 0) || (type == 0 && len != 4 + 34) || len > in->size - off)
			return DS_MEDIA_WHOLE;
		if (type == 0)
			rc = ds_payload_add(p, off + 4, 34);
		off += len;
	}
	unsigned char sync[2];
	if (rc == 0 && (rc = ds_media_read(in, sync, 2, off)) == 0 && (sync[0] != 0xff || (sync[1] & 0xfe) != 0xf8))
		return DS_MEDIA_WHOLE;
	return rc == 0 ? ds_payload_add(p, off, in->size - off) : rc;
}

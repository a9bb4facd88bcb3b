/* SPDX-License-Identifier: MIT */
/* bmff.c: an ISO media file's payload (MP4, M4A, MOV, HEIC): the bodies of
 * its top-level mdat boxes; the boxes must tile the file to its end. */
#include <string.h>

#include "media/media.h"

int ds_parse_bmff(struct ds_media_in *in, struct dupscan_payload *p)
{
	int rc = 0;
	bool media = false;
	for (uint64_t off = 0; rc == 0 && off < in->size;) {
		unsigned char h[16];
		if ((rc = ds_media_read(in, h, 8, off)) != 0)
			return rc;
		uint64_t len = ds_be32(h), head = 8;
		if (len == 1) { /* a 64-bit size after the type */
			if ((rc = ds_media_read(in, h + 8, 8, off + 8)) != 0)
				return rc;
			len = (uint64_t)ds_be32(h + 8) << 32 | ds_be32(h + 12);
			head = 16;
		} else if (len == 0) { /* to the end of the file */
			len = in->size - off;
		}
		if (len < head || len > in->size - off)
			return DS_MEDIA_WHOLE;
		if (memcmp(h + 4, "mdat", 4) == 0) {
			rc = ds_payload_add(p, off + head, len - head);
			media = true;
		}
		off += len;
	}
	return rc == 0 && !media ? DS_MEDIA_WHOLE : rc;
}

/* SPDX-License-Identifier: MIT */
/* jpeg.c: a JPEG's payload: every segment but APPn and COM, then the scan
 * from its SOS to the EOI that must end the file. */
#include "media/media.h"

int ds_parse_jpeg(struct ds_media_in *in, struct dupscan_payload *p)
{
	int rc = ds_payload_add(p, 0, 2); /* SOI */
	for (uint64_t off = 2; rc == 0;) {
		unsigned char m[4];
		if ((rc = ds_media_read(in, m, sizeof(m), off)) != 0)
			return rc;
		/* a marker with a length (none of the standalone ones, RSTn, TEM
		 * or EOI, stands before the scan) */
		if (m[0] != 0xff || m[1] < 0xc0 || m[1] == 0xff || (m[1] >= 0xd0 && m[1] <= 0xd9))
			return DS_MEDIA_WHOLE;
		uint64_t len = 2 + ((uint64_t)m[2] << 8 | m[3]);
		if (len < 4 || len > in->size - off)
			return DS_MEDIA_WHOLE;
		if (m[1] == 0xda) {
			/* the scan, and all after it, up to the EOI at the end */
			unsigned char eoi[2];
			if ((rc = ds_media_read(in, eoi, 2, in->size - 2)) != 0)
				return rc;
			if (eoi[0] != 0xff || eoi[1] != 0xd9 || in->size - off < len + 2)
				return DS_MEDIA_WHOLE;
			return ds_payload_add(p, off, in->size - off);
		}
		bool tag = (m[1] >= 0xe0 && m[1] <= 0xef) || m[1] == 0xfe;
		if (!tag)
			rc = ds_payload_add(p, off, len);
		off += len;
	}
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* fuzz_media.c: libFuzzer target for the payload parsers (media/): any
 * bytes as a file. The parse must end within its bounds and give ranges in
 * order, apart, inside the file, at most DUPSCAN_PAYLOAD_EXTENTS of them,
 * their sum its bytes; a file of no format or that does not parse is one
 * range, the whole file; the same bytes give the same payload. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "media/media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_mem(void *user, void *buf, size_t len, uint64_t off)
{
	memcpy(buf, (const unsigned char *)user + off, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ds_media_in in = { read_mem, (void *)data, size, 0 };
	struct dupscan_payload p, q;
	if (ds_media_payload(&in, &p) != 0)
		abort(); /* reads from memory never fail */
	if (in.reads > DS_MEDIA_READS + 1 || p.count > DUPSCAN_PAYLOAD_EXTENTS)
		abort();
	uint64_t end = 0, sum = 0;
	for (size_t i = 0; i < p.count; i++) {
		if (p.extent[i].length == 0 || p.extent[i].offset < end || p.extent[i].offset > size ||
		    p.extent[i].length > size - p.extent[i].offset)
			abort();
		end = p.extent[i].offset + p.extent[i].length;
		sum += p.extent[i].length;
	}
	if (sum != p.bytes)
		abort();
	if (p.format == DUPSCAN_MEDIA_OTHER && (p.count != (size ? 1u : 0u) || p.bytes != size))
		abort();
	struct ds_media_in again = { read_mem, (void *)data, size, 0 };
	if (ds_media_payload(&again, &q) != 0 || memcmp(&p, &q, sizeof(p)) != 0)
		abort();
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* payloads.c: the payloads of the files of a known format, kept beside the
 * records for --ignore-metadata (DUPSCAN_OPT_IGNORE_METADATA): one entry and
 * its ranges a media file, four bytes a record for the others. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

int ds_payloads_start(struct ds_tree *t)
{
	struct ds_payloads *py = &t->pay;
	size_t n = t->nrecs ? t->nrecs : 1;
	if (!(py->at = malloc(n * sizeof(*py->at))) || !(py->whole = malloc(n * sizeof(*py->whole))))
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nrecs; i++) {
		py->at[i] = DS_NONE;
		py->whole[i] = i;
	}
	return 0;
}

int ds_payloads_add(struct ds_tree *t, uint32_t ri, const struct dupscan_payload *p)
{
	struct ds_payloads *py = &t->pay;
	/* (no payload at all, an MP4 with an empty mdat, is no picture:
	 * compared whole) */
	if (p->format == DUPSCAN_MEDIA_OTHER || p->count == 0 || p->count > DUPSCAN_PAYLOAD_EXTENTS || p->bytes == 0)
		return 0;
	if (py->nent == UINT32_MAX - 1 || py->next > UINT32_MAX - DUPSCAN_PAYLOAD_EXTENTS)
		return -ENOMEM;
	if (DS_GROW(py->ent, py->capent, py->nent + 1) || DS_GROW(py->ext, py->capext, py->next + p->count))
		return -ENOMEM;
	py->ent[py->nent] = (struct ds_pay){ p->bytes, (uint32_t)py->next, (uint8_t)p->count, (uint8_t)p->format };
	memcpy(py->ext + py->next, p->extent, p->count * sizeof(*py->ext));
	py->next += p->count;
	py->at[ri] = py->nent++;
	return 0;
}

uint64_t ds_payload_map(const struct ds_tree *t, const struct ds_pay *p, uint64_t off, uint64_t *room)
{
	const struct dupscan_extent *x = t->pay.ext + p->first;
	for (unsigned i = 0; i < p->n; i++) {
		if (off < x[i].length) {
			*room = x[i].length - off;
			return x[i].offset + off;
		}
		off -= x[i].length;
	}
	*room = 0;
	return 0;
}

bool ds_same_bytes(const struct ds_tree *t, uint32_t a, uint32_t b)
{
	/* (another name of an inode stands for it by its representative) */
	return !t->pay.whole || t->pay.whole[ds_rec_rep(t, a)] == t->pay.whole[ds_rec_rep(t, b)];
}

void ds_payloads_free(struct ds_tree *t)
{
	free(t->pay.at);
	free(t->pay.whole);
	free(t->pay.ent);
	free(t->pay.ext);
	memset(&t->pay, 0, sizeof(t->pay));
}

/* SPDX-License-Identifier: MIT */
/* bmff.c: an ISO media file's payload (MP4, M4A, MOV, HEIC): the bodies of
 * its top-level mdat boxes; the boxes must tile the file to its end. A HEIC
 * keeps its EXIF and XMP as items in mdat too (meta's iinf names them, iloc
 * places them): their bytes are left out of the bodies. */
#include <string.h>

#include "media/media.h"

#define MDATS 8     /* mdat boxes a file may have */
#define TAGS 8      /* tag items' ranges a HEIC may have */
#define META_MOST (16u * 1024u) /* iinf and iloc are read whole, this long at most */

struct range {
	uint64_t off, len;
};
struct bmff {
	struct range mdat[MDATS];
	unsigned nmdat;
	uint64_t meta, metalen; /* the top-level meta box (0: none) */
	uint32_t tag_id[TAGS];  /* items that are EXIF or XMP */
	unsigned ntag_ids;
	struct range tag[TAGS]; /* their bytes in the file */
	unsigned ntags;
};

/* A box's head at off within [off, end): its type, its length and its
 * header's. @return 0, DS_MEDIA_WHOLE or -errno. */
static int box_at(struct ds_media_in *in, uint64_t off, uint64_t end, unsigned char type[4], uint64_t *len,
		  uint64_t *head)
{
	unsigned char h[16];
	int rc = end - off >= 8 ? ds_media_read(in, h, 8, off) : DS_MEDIA_WHOLE;
	if (rc != 0)
		return rc;
	memcpy(type, h + 4, 4);
	*len = ds_be32(h);
	*head = 8;
	if (*len == 1) { /* a 64-bit size after the type */
		if ((rc = end - off >= 16 ? ds_media_read(in, h + 8, 8, off + 8) : DS_MEDIA_WHOLE) != 0)
			return rc;
		*len = (uint64_t)ds_be32(h + 8) << 32 | ds_be32(h + 12);
		*head = 16;
	} else if (*len == 0) { /* to the end */
		*len = end - off;
	}
	return *len < *head || *len > end - off ? DS_MEDIA_WHOLE : 0;
}

/* Big-endian fields read from a box held in memory. */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};
static uint64_t get(struct cursor *c, unsigned n)
{
	uint64_t v = 0;
	if (n > 8 || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | *c->p++;
	return v;
}

/* iinf's entries: the items of type Exif, or mime of XMP's type. */
static int item_infos(struct bmff *b, struct cursor c)
{
	unsigned version = (unsigned)get(&c, 1);
	get(&c, 3);
	uint64_t count = get(&c, version == 0 ? 2 : 4);
	for (uint64_t i = 0; i < count && !c.bad; i++) {
		const unsigned char *at = c.p;
		uint64_t len = get(&c, 4);
		bool infe = !c.bad && (size_t)(c.end - c.p) >= 4 && memcmp(c.p, "infe", 4) == 0;
		if (c.bad || !infe || len < 12 || len > (uint64_t)(c.end - at))
			return DS_MEDIA_WHOLE;
		struct cursor e = { c.p + 4, at + len, false };
		unsigned v = (unsigned)get(&e, 1);
		get(&e, 3);
		if (v < 2) /* (no type before version 2: no tags either) */
			goto next;
		uint32_t id = (uint32_t)get(&e, v == 2 ? 2 : 4);
		get(&e, 2);
		unsigned char type[4];
		for (int k = 0; k < 4; k++)
			type[k] = (unsigned char)get(&e, 1);
		bool tag = memcmp(type, "Exif", 4) == 0;
		if (!tag && memcmp(type, "mime", 4) == 0) {
			const unsigned char *name = e.p, *z = memchr(name, 0, (size_t)(e.end - name)); /* item_name */
			const char xmp[] = "application/rdf+xml";
			tag = z && (size_t)(e.end - z - 1) >= sizeof(xmp) && memcmp(z + 1, xmp, sizeof(xmp)) == 0;
		}
		if (e.bad)
			return DS_MEDIA_WHOLE;
		if (tag) {
			if (b->ntag_ids == TAGS)
				return DS_MEDIA_WHOLE;
			b->tag_id[b->ntag_ids++] = id;
		}
	next:
		c.p = at + len;
	}
	return c.bad ? DS_MEDIA_WHOLE : 0;
}

static bool is_tag(const struct bmff *b, uint32_t id)
{
	for (unsigned i = 0; i < b->ntag_ids; i++)
		if (b->tag_id[i] == id)
			return true;
	return false;
}

/* iloc's extents of the tag items, which must be in the file (not in idat). */
static int item_places(struct bmff *b, struct cursor c)
{
	unsigned version = (unsigned)get(&c, 1);
	get(&c, 3);
	unsigned sizes = (unsigned)get(&c, 2), osize = sizes >> 12, lsize = sizes >> 8 & 15, bsize = sizes >> 4 & 15,
		 isize = version >= 1 ? (sizes & 15) : 0;
	uint64_t count = get(&c, version < 2 ? 2 : 4), extents = 0;
	for (uint64_t i = 0; i < count && !c.bad; i++) {
		uint32_t id = (uint32_t)get(&c, version < 2 ? 2 : 4);
		unsigned method = version >= 1 ? (unsigned)get(&c, 2) & 15 : 0;
		get(&c, 2);
		uint64_t base = get(&c, bsize), n = get(&c, 2);
		/* (extents of no bytes each, 0-byte fields, would count up to 2^32) */
		if ((extents += n) > META_MOST)
			return DS_MEDIA_WHOLE;
		for (uint64_t x = 0; x < n && !c.bad; x++) {
			get(&c, isize);
			uint64_t off = get(&c, osize), len = get(&c, lsize);
			/* (in idat: not in mdat; of length 0: what a tool that empties
			 * a tag leaves, or the whole file, which leaves nothing out) */
			if (c.bad || !is_tag(b, id) || method == 1 || len == 0)
				continue;
			if (method != 0 || b->ntags == TAGS || base + off < base)
				return DS_MEDIA_WHOLE;
			b->tag[b->ntags++] = (struct range){ base + off, len };
		}
	}
	return c.bad ? DS_MEDIA_WHOLE : 0;
}

/* meta's iinf, then iloc (read whole, each at most META_MOST). */
static int meta_items(struct ds_media_in *in, struct bmff *b)
{
	unsigned char buf[META_MOST];
	uint64_t end = b->meta + b->metalen, iloc = 0, iloclen = 0, ilochead = 0, head, len;
	unsigned char type[4];
	int rc = box_at(in, b->meta, end, type, &len, &head);
	for (uint64_t off = b->meta + head + 4; rc == 0 && off < end; off += len) {
		if ((rc = box_at(in, off, end, type, &len, &head)) != 0)
			return rc;
		bool iinf = memcmp(type, "iinf", 4) == 0;
		if (memcmp(type, "iloc", 4) == 0)
			iloc = off, iloclen = len, ilochead = head;
		if (iinf && len - head > sizeof(buf))
			return DS_MEDIA_WHOLE;
		if (iinf && (rc = ds_media_read(in, buf, (size_t)(len - head), off + head)) == 0)
			rc = item_infos(b, (struct cursor){ buf, buf + (len - head), false });
	}
	if (rc != 0 || b->ntag_ids == 0)
		return rc;
	if (!iloc || iloclen - ilochead > sizeof(buf))
		return DS_MEDIA_WHOLE;
	if ((rc = ds_media_read(in, buf, (size_t)(iloclen - ilochead), iloc + ilochead)) != 0)
		return rc;
	return item_places(b, (struct cursor){ buf, buf + (iloclen - ilochead), false });
}

/* The mdat bodies without the tags' ranges, which must lie inside them. */
static int bodies(struct bmff *b, struct dupscan_payload *p)
{
	/* the tags in file order, apart */
	for (unsigned i = 1; i < b->ntags; i++)
		for (unsigned j = i; j > 0 && b->tag[j].off < b->tag[j - 1].off; j--) {
			struct range t = b->tag[j];
			b->tag[j] = b->tag[j - 1];
			b->tag[j - 1] = t;
		}
	unsigned t = 0, inside = 0;
	int rc = 0;
	for (unsigned m = 0; rc == 0 && m < b->nmdat; m++) {
		uint64_t at = b->mdat[m].off, end = at + b->mdat[m].len;
		for (; rc == 0 && t < b->ntags && b->tag[t].off < end; t++, inside++) {
			if (b->tag[t].off < at || b->tag[t].len > end - b->tag[t].off)
				return DS_MEDIA_WHOLE;
			rc = ds_payload_add(p, at, b->tag[t].off - at);
			at = b->tag[t].off + b->tag[t].len;
		}
		if (rc == 0)
			rc = ds_payload_add(p, at, end - at);
	}
	return rc == 0 && inside != b->ntags ? DS_MEDIA_WHOLE : rc;
}

int ds_parse_bmff(struct ds_media_in *in, struct dupscan_payload *p)
{
	struct bmff b = { .nmdat = 0 };
	int rc = 0;
	for (uint64_t off = 0, len, head; rc == 0 && off < in->size; off += len) {
		unsigned char type[4];
		if ((rc = box_at(in, off, in->size, type, &len, &head)) != 0)
			return rc;
		if (memcmp(type, "mdat", 4) == 0) {
			if (b.nmdat == MDATS)
				return DS_MEDIA_WHOLE;
			b.mdat[b.nmdat++] = (struct range){ off + head, len - head };
		} else if (memcmp(type, "meta", 4) == 0 && !b.meta) {
			b.meta = off;
			b.metalen = len;
		}
	}
	if (b.nmdat == 0)
		return DS_MEDIA_WHOLE;
	if (b.meta && (rc = meta_items(in, &b)) != 0)
		return rc;
	return bodies(&b, p);
}

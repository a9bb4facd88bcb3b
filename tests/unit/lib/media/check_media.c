/* SPDX-License-Identifier: MIT */
/* check_media: the payload of each format the parsers know (media/): files
 * built here with their tags and without, the same payload; a byte of the
 * picture or sound changed, a file cut short, a tag claiming more than the
 * file holds, too many ranges or reads: not the same, or all payload. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "media/media.h"
#include "testutil.h"

struct buf {
	unsigned char b[1 << 16];
	size_t n;
};
static void put(struct buf *f, const void *p, size_t n)
{
	ck_assert_uint_le(f->n + n, sizeof(f->b));
	memcpy(f->b + f->n, p, n);
	f->n += n;
}
static void put_be32(struct buf *f, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v };
	put(f, b, 4);
}
static void put_le32(struct buf *f, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24) };
	put(f, b, 4);
}
static void fill(struct buf *f, unsigned char seed, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->b[f->n + i] = (unsigned char)(seed + i * 7);
	f->n += n;
}

static int read_mem(void *user, void *buf, size_t len, uint64_t off)
{
	memcpy(buf, (const unsigned char *)user + off, len);
	return 0;
}

/* The payload of f, and its bytes end to end into out (NULL: not wanted). */
static struct dupscan_payload payload_of(const struct buf *f, struct buf *out)
{
	struct ds_media_in in = { read_mem, (void *)f->b, f->n, 0 };
	struct dupscan_payload p;
	ck_assert_int_eq(ds_media_payload(&in, &p), 0);
	uint64_t sum = 0, end = 0;
	for (size_t i = 0; i < p.count; i++) {
		ck_assert_uint_ge(p.extent[i].offset, end); /* in order, apart */
		end = p.extent[i].offset + p.extent[i].length;
		ck_assert_uint_le(end, f->n);
		sum += p.extent[i].length;
		if (out)
			put(out, f->b + p.extent[i].offset, (size_t)p.extent[i].length);
	}
	ck_assert_uint_eq(sum, p.bytes);
	return p;
}

/* A format's files as a test makes them: tags 0 none, 1 and 2 two ways. */
typedef void make_fn(struct buf *f, int tags, unsigned char content);

/* make's file tagged one way, another and not at all: one payload of format
 * fmt, the tags left out; d (a byte of its content changed, or other
 * content) another */
static void one_payload(make_fn *make, int fmt, const struct buf *d)
{
	static struct buf a, b, c, pa, pb, pc, pd;
	make(&a, 1, 9);
	make(&b, 2, 9);
	make(&c, 0, 9);
	pa.n = pb.n = pc.n = pd.n = 0;
	ck_assert_int_eq(payload_of(&a, &pa).format, fmt);
	ck_assert_int_eq(payload_of(&b, &pb).format, fmt);
	ck_assert_int_eq(payload_of(&c, &pc).format, fmt);
	payload_of(d, &pd);
	ck_assert_uint_lt(pa.n, a.n); /* the tags left out */
	ck_assert(pa.n == pb.n && memcmp(pa.b, pb.b, pa.n) == 0);
	ck_assert(pa.n == pc.n && memcmp(pa.b, pc.b, pa.n) == 0);
	ck_assert(pa.n != pd.n || memcmp(pa.b, pd.b, pa.n) != 0);
}

/* f all payload: DUPSCAN_MEDIA_OTHER, one range, the whole file */
static void whole(const struct buf *f)
{
	struct dupscan_payload p = payload_of(f, NULL);
	ck_assert_int_eq(p.format, DUPSCAN_MEDIA_OTHER);
	ck_assert_uint_eq(p.count, f->n ? 1 : 0);
	ck_assert_uint_eq(p.bytes, f->n);
}

/* ---- JPEG ---- */
static void jpeg_seg(struct buf *f, unsigned char marker, unsigned char seed, size_t n)
{
	unsigned char h[4] = { 0xff, marker, (unsigned char)((n + 2) >> 8), (unsigned char)(n + 2) };
	put(f, h, 4);
	fill(f, seed, n);
}
/* tags 0: none; 1, 2: others; picture: its scan's seed */
static void jpeg(struct buf *f, int tags, unsigned char picture)
{
	f->n = 0;
	put(f, "\xff\xd8", 2);
	if (tags)
		jpeg_seg(f, 0xe1, (unsigned char)(10 * tags), 100 + (size_t)tags); /* EXIF */
	jpeg_seg(f, 0xdb, 1, 67);                                          /* DQT */
	if (tags == 2)
		jpeg_seg(f, 0xfe, 3, 20); /* COM */
	jpeg_seg(f, 0xc0, 2, 17);         /* SOF0 */
	if (tags)
		jpeg_seg(f, 0xed, (unsigned char)tags, 300); /* APP13 */
	jpeg_seg(f, 0xc4, 4, 30);                                 /* DHT */
	jpeg_seg(f, 0xda, 5, 10);                                 /* SOS */
	fill(f, picture, 5000);
	put(f, "\xff\xd9", 2);
}

START_TEST(test_jpeg)
{
	static struct buf d;
	jpeg(&d, 1, 9);
	d.b[d.n - 100] ^= 1; /* one bit of the picture */
	one_payload(jpeg, DUPSCAN_MEDIA_JPEG, &d);
	jpeg(&d, 1, 9);
	d.n -= 1; /* cut short: no EOI */
	whole(&d);
	jpeg(&d, 1, 9);
	d.b[5] = 0xff; /* the EXIF segment claims 65 KB */
	whole(&d);
	/* more ranges than a payload holds */
	d.n = 0;
	put(&d, "\xff\xd8", 2);
	for (int i = 0; i < 40; i++) {
		jpeg_seg(&d, 0xe0, 1, 4);
		jpeg_seg(&d, 0xdb, 2, 4);
	}
	jpeg_seg(&d, 0xda, 5, 10);
	put(&d, "\xff\xd9", 2);
	whole(&d);
}
END_TEST

/* ---- PNG ---- */
static void png_chunk(struct buf *f, const char *type, unsigned char seed, size_t n)
{
	put_be32(f, (uint32_t)n);
	put(f, type, 4);
	fill(f, seed, n);
	put_be32(f, 0x12345678u + seed); /* (no CRC is checked: the bytes are compared) */
}
static void png(struct buf *f, int tags, unsigned char picture)
{
	f->n = 0;
	put(f, "\x89PNG\r\n\x1a\n", 8);
	png_chunk(f, "IHDR", 1, 13);
	if (tags)
		png_chunk(f, "tEXt", (unsigned char)tags, 30 + (size_t)tags);
	png_chunk(f, "IDAT", picture, 3000);
	if (tags == 2) {
		png_chunk(f, "tIME", 2, 7);
		png_chunk(f, "eXIf", 3, 60);
		png_chunk(f, "iTXt", 4, 60);
		png_chunk(f, "zTXt", 5, 60);
	}
	png_chunk(f, "IEND", 0, 0);
}

START_TEST(test_png)
{
	static struct buf d;
	png(&d, 2, 10);
	one_payload(png, DUPSCAN_MEDIA_PNG, &d);
	png(&d, 1, 9);
	put(&d, "x", 1); /* a byte after IEND */
	whole(&d);
	png(&d, 1, 9);
	d.b[8 + 25] = 0x7f; /* the tEXt chunk's length past the end */
	whole(&d);
	/* thousands of chunks: more reads than a file may ask */
	d.n = 0;
	put(&d, "\x89PNG\r\n\x1a\n", 8);
	for (int i = 0; i < 4200; i++)
		png_chunk(&d, "IDAT", 1, 0);
	png_chunk(&d, "IEND", 0, 0);
	whole(&d);
}
END_TEST

/* ---- WebP ---- */
static void webp_chunk(struct buf *f, const char *type, unsigned char seed, size_t n)
{
	put(f, type, 4);
	put_le32(f, (uint32_t)n);
	fill(f, seed, n);
	if (n & 1)
		put(f, "", 1);
}
/* The RIFF size: what follows it */
static void riff_size(struct buf *f)
{
	uint32_t riff = (uint32_t)f->n - 8;
	memcpy(f->b + 4, (unsigned char[4]){ (unsigned char)riff, (unsigned char)(riff >> 8), (unsigned char)(riff >> 16), 0 }, 4);
}
static void webp(struct buf *f, int tags, unsigned char picture)
{
	f->n = 0;
	put(f, "RIFF\0\0\0\0WEBP", 12);
	if (tags) { /* (a simple WebP has none; a tool that tags it adds it) */
		webp_chunk(f, "VP8X", 0, 10);
		f->b[20] = tags == 1 ? 0x08 : 0x0c; /* the flags: EXIF, XMP */
	}
	webp_chunk(f, "VP8 ", picture, 2001);
	if (tags) {
		webp_chunk(f, "EXIF", (unsigned char)tags, 40 + (size_t)tags);
		webp_chunk(f, "XMP ", 7, 33);
	}
	riff_size(f);
}

START_TEST(test_webp)
{
	static struct buf d;
	webp(&d, 1, 8);
	one_payload(webp, DUPSCAN_MEDIA_WEBP, &d);
	webp(&d, 1, 9);
	put(&d, "\0\0", 2); /* past the RIFF size */
	whole(&d);
	/* an animation: its canvas places its frames */
	webp(&d, 1, 9);
	webp_chunk(&d, "ANIM", 1, 6);
	riff_size(&d);
	whole(&d);
}
END_TEST

/* ---- MP3 ---- */
static void id3v2(struct buf *f, unsigned char seed, size_t n, bool footer)
{
	unsigned char h[10] = { 'I', 'D', '3', 4, 0, footer ? 0x10 : 0, (unsigned char)(n >> 21 & 0x7f), (unsigned char)(n >> 14 & 0x7f),
				(unsigned char)(n >> 7 & 0x7f), (unsigned char)(n & 0x7f) };
	put(f, h, 10);
	fill(f, seed, n);
	if (footer) {
		memcpy(h, "3DI", 3);
		put(f, h, 10);
	}
}
static void frames(struct buf *f, unsigned char seed)
{
	for (int i = 0; i < 8; i++) {
		put(f, "\xff\xfb\x90\x64", 4);
		fill(f, (unsigned char)(seed + i), 413);
	}
}
static void mp3(struct buf *f, int tags, unsigned char sound)
{
	f->n = 0;
	if (tags)
		id3v2(f, (unsigned char)tags, 500 + (size_t)tags, tags == 2);
	frames(f, sound);
	if (tags == 2) {
		/* APEv2 with its header, Lyrics3 v2, then ID3v1 */
		unsigned char ape[32] = "APETAGEX";
		ape[8] = 0xd0, ape[9] = 0x07;
		ape[12] = 32 + 50; /* items and footer */
		ape[23] = 0xa0;    /* has a header; (this one a footer) */
		put(f, ape, 32);
		fill(f, 4, 50);
		ape[23] = 0x80;
		put(f, ape, 32);
		put(f, "LYRICSBEGIN", 11);
		fill(f, 5, 20);
		put(f, "000031LYRICS200", 15);
	}
	if (tags) {
		put(f, "TAG", 3);
		fill(f, (unsigned char)tags, 125);
	}
}

START_TEST(test_mp3)
{
	static struct buf d;
	mp3(&d, 2, 9);
	d.b[d.n - 128 - 78 - 31 - 100] ^= 0x40; /* in the last frame */
	one_payload(mp3, DUPSCAN_MEDIA_MP3, &d);
	mp3(&d, 1, 9);
	d.b[6] = 0x7f; /* the ID3v2 tag claims 256 MB */
	whole(&d);
	mp3(&d, 2, 9);
	d.b[d.n - 128 - 15] = 'x'; /* a Lyrics3 size not of digits */
	whole(&d);
}
END_TEST

/* ---- FLAC ---- */
static void flac_block(struct buf *f, unsigned type, bool last, unsigned char seed, size_t n)
{
	unsigned char h[4] = { (unsigned char)(type | (last ? 0x80 : 0)), (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n };
	put(f, h, 4);
	fill(f, seed, n);
}
static void flac(struct buf *f, int tags, unsigned char sound)
{
	f->n = 0;
	put(f, "fLaC", 4);
	flac_block(f, 0, !tags, 1, 34);
	if (tags) {
		flac_block(f, 4, false, (unsigned char)tags, 200 + (size_t)tags); /* VORBIS_COMMENT */
		flac_block(f, 6, tags == 1, 3, 900);                               /* PICTURE */
	}
	if (tags == 2)
		flac_block(f, 1, true, 0, 1000); /* PADDING */
	put(f, "\xff\xf8", 2);
	fill(f, sound, 4000);
}

START_TEST(test_flac)
{
	static struct buf d;
	flac(&d, 2, 9);
	d.b[d.n - 1] ^= 1;
	one_payload(flac, DUPSCAN_MEDIA_FLAC, &d);
	flac(&d, 1, 9);
	d.b[4 + 4 + 34 + 1] = 0x7f; /* VORBIS_COMMENT past the end */
	whole(&d);
	flac(&d, 1, 9);
	d.b[4] = 4; /* STREAMINFO not first */
	whole(&d);
}
END_TEST

/* ---- MP4 ---- */
static void box(struct buf *f, const char *type, unsigned char seed, size_t n)
{
	put_be32(f, (uint32_t)(8 + n));
	put(f, type, 4);
	fill(f, seed, n);
}
static void mp4(struct buf *f, int tags, unsigned char media)
{
	f->n = 0;
	box(f, "ftyp", 1, 16);
	box(f, "moov", (unsigned char)(tags + 1), 700 + 20 * (size_t)tags); /* udta/meta/ilst inside */
	if (tags == 2)
		box(f, "free", 0, 64);
	/* mdat with a 64-bit size */
	put_be32(f, 1);
	put(f, "mdat", 4);
	put_be32(f, 0);
	put_be32(f, 16 + 6000);
	fill(f, media, 6000);
}

START_TEST(test_mp4)
{
	static struct buf d;
	mp4(&d, 1, 10);
	one_payload(mp4, DUPSCAN_MEDIA_MP4, &d);
	mp4(&d, 1, 9);
	d.n -= 10; /* mdat cut short */
	whole(&d);
	d.n = 0;
	box(&d, "ftyp", 1, 16);
	box(&d, "moov", 1, 100);
	whole(&d); /* no media data */
}
END_TEST

/* ---- HEIC: the tags are items in mdat ---- */
static void put_be16(struct buf *f, unsigned v)
{
	unsigned char b[2] = { (unsigned char)(v >> 8), (unsigned char)v };
	put(f, b, 2);
}
static void infe(struct buf *f, unsigned id, const char *type, bool xmp)
{
	size_t at = f->n;
	put_be32(f, 0);
	put(f, "infe\2\0\0\0", 8);
	put_be16(f, id);
	put_be16(f, 0);
	put(f, type, 4);
	put(f, "", 1); /* its name */
	if (xmp)
		put(f, "application/rdf+xml", 20);
	f->b[at + 3] = (unsigned char)(f->n - at);
}
/* meta (iinf, iloc) and mdat: the picture's item, and with tags an EXIF
 * and an XMP item before it in mdat; where: bytes before the first item */
static void heic_meta(struct buf *f, int tags, uint32_t body, size_t picture_len)
{
	size_t meta = f->n, iinf, iloc;
	put_be32(f, 0);
	put(f, "meta\0\0\0\0", 8);
	iinf = f->n;
	put_be32(f, 0);
	put(f, "iinf\0\0\0\0", 8);
	put_be16(f, tags ? 3 : 1);
	infe(f, 1, "hvc1", false);
	if (tags) {
		infe(f, 2, "Exif", false);
		infe(f, 3, "mime", true);
	}
	f->b[iinf + 3] = (unsigned char)(f->n - iinf);
	iloc = f->n;
	put_be32(f, 0);
	put(f, "iloc\0\0\0\0", 8);
	put_be16(f, 0x4400); /* 4-byte offsets and lengths, no base */
	put_be16(f, tags ? 3 : 1);
	uint32_t exif = 60 + (uint32_t)tags, xmp = 40, at = body;
	if (tags) {
		put_be16(f, 2), put_be16(f, 0), put_be16(f, 1), put_be32(f, at), put_be32(f, exif);
		put_be16(f, 3), put_be16(f, 0), put_be16(f, 1), put_be32(f, at + exif), put_be32(f, xmp);
		at += exif + xmp;
	}
	put_be16(f, 1), put_be16(f, 0), put_be16(f, 1), put_be32(f, at), put_be32(f, (uint32_t)picture_len);
	f->b[iloc + 2] = (unsigned char)((f->n - iloc) >> 8);
	f->b[iloc + 3] = (unsigned char)(f->n - iloc);
	f->b[meta + 2] = (unsigned char)((f->n - meta) >> 8);
	f->b[meta + 3] = (unsigned char)(f->n - meta);
}
static void heic(struct buf *f, int tags, unsigned char picture)
{
	/* once to know where mdat's body starts, again with it */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t body = pass ? (uint32_t)(f->n + 8) : 0;
		f->n = 0;
		box(f, "ftyp", 1, 16);
		heic_meta(f, tags, body, 3000);
	}
	uint32_t tagged = tags ? 60 + (uint32_t)tags + 40 : 0;
	put_be32(f, 8 + tagged + 3000);
	put(f, "mdat", 4);
	fill(f, (unsigned char)(tags * 9), tagged);
	fill(f, picture, 3000);
}

START_TEST(test_heic)
{
	static struct buf d;
	heic(&d, 1, 10);
	one_payload(heic, DUPSCAN_MEDIA_MP4, &d);
	/* an EXIF item placed past mdat's end */
	heic(&d, 1, 9);
	size_t exif_len_at = 0;
	for (size_t i = 0; i + 4 <= d.n; i++)
		if (memcmp(d.b + i, "iloc", 4) == 0) {
			exif_len_at = i + 4 + 4 + 2 + 2 + 2 + 2 + 2 + 4; /* item 2's first extent's length */
			break;
		}
	ck_assert_uint_gt(exif_len_at, 0);
	d.b[exif_len_at] = 0x7f;
	whole(&d);
}
END_TEST

/* Files of no known format, and the call through a descriptor. */
START_TEST(test_other_and_fd)
{
	static struct buf f;
	f.n = 0;
	whole(&f);
	fill(&f, 1, 100);
	whole(&f);
	char *dir = tu_tmpdir_shm();
	char *path = tu_path(dir, "p.png");
	png(&f, 2, 9);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, f.b, f.n), (ssize_t)f.n);
	close(fd);
	fd = open(path, O_RDONLY);
	struct dupscan_payload p, q = payload_of(&f, NULL);
	ck_assert_int_eq(dupscan_payload(fd, &p), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);
	ck_assert_int_eq(p.format, DUPSCAN_MEDIA_PNG);
	ck_assert_uint_eq(p.count, q.count);
	ck_assert_mem_eq(p.extent, q.extent, p.count * sizeof(p.extent[0]));
	ck_assert_int_eq(dupscan_payload(fd, NULL), -EINVAL);
	close(fd);
	fd = open(dir, O_RDONLY);
	ck_assert_int_eq(dupscan_payload(fd, &p), DUPSCAN_E_NOTREG);
	close(fd);
	ck_assert_int_eq(dupscan_payload(-1, &p), -EBADF);
	free(path);
	tu_cleanup(dir);
}
END_TEST

static void write_buf(const char *dir, const char *name, const struct buf *f);

/* Through a file (dupscan_payload(): pread through a window of a few KiB,
 * filled forward, and backward at the end), every format's payload is the
 * one read from memory, also past a window's length (ID3v2 of 40 KB, a
 * JPEG scan of 5 KB after 20 KB of tags) */
START_TEST(test_window)
{
	static struct buf f, big;
	make_fn *makers[] = { jpeg, png, webp, mp3, flac, mp4, heic };
	char *dir = tu_tmpdir_shm();
	char *path = tu_path(dir, "w");
	for (size_t m = 0; m < sizeof(makers) / sizeof(makers[0]); m++) {
		for (int tags = 0; tags <= 2; tags++) {
			makers[m](&f, tags, 9);
			const struct buf *use = &f;
			if (m == 3 && tags == 1) { /* a long ID3v2 before the frames */
				big.n = 0;
				id3v2(&big, 4, 40000, false);
				frames(&big, 9);
				use = &big;
			}
			if (m == 0 && tags == 2) { /* 20 KB of APP2 before the picture */
				big.n = 0;
				put(&big, "\xff\xd8", 2);
				for (int i = 0; i < 2; i++)
					jpeg_seg(&big, 0xe2, (unsigned char)i, 10000);
				put(&big, f.b + 2, f.n - 2);
				use = &big;
			}
			write_buf(dir, "w", use);
			int fd = open(path, O_RDONLY);
			ck_assert_int_ge(fd, 0);
			struct dupscan_payload p, q = payload_of(use, NULL);
			ck_assert_int_eq(dupscan_payload(fd, &p), 0);
			close(fd);
			ck_assert_int_eq(p.format, q.format);
			ck_assert_int_ne(p.format, DUPSCAN_MEDIA_OTHER);
			ck_assert_uint_eq(p.count, q.count);
			ck_assert_mem_eq(p.extent, q.extent, p.count * sizeof(p.extent[0]));
		}
	}
	free(path);
	tu_cleanup(dir);
}
END_TEST

static void write_buf(const char *dir, const char *name, const struct buf *f)
{
	char *path = tu_path(dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, f->b, f->n), (ssize_t)f->n);
	close(fd);
	free(path);
}

/* The file of a set named name (NULL: in none) */
static const dupscan_file *member(const dupscan_scan *scan, const char *name)
{
	for (size_t i = 0; i < dupscan_set_count(scan); i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			const char *p = dupscan_file_path(dupscan_set_file(set, k));
			if (strcmp(p + strlen(p) - strlen(name), name) == 0)
				return dupscan_set_file(set, k);
		}
	}
	return NULL;
}

/* DUPSCAN_OPT_IGNORE_METADATA: one picture tagged two ways and not at all,
 * and a byte copy, are one set; another picture and a file of other bytes
 * of the payload's length are in none; which hold the same bytes is told,
 * and a link between other tags refused */
START_TEST(test_scan_payloads)
{
	static struct buf f;
	char *dir = tu_tmpdir_shm();
	jpeg(&f, 1, 9);
	write_buf(dir, "a.jpg", &f);
	write_buf(dir, "a2.jpg", &f);
	jpeg(&f, 2, 9);
	write_buf(dir, "b.jpg", &f);
	jpeg(&f, 0, 9);
	write_buf(dir, "c.jpg", &f);
	uint64_t payload_len = payload_of(&f, NULL).bytes;
	jpeg(&f, 1, 10); /* another picture */
	write_buf(dir, "d.jpg", &f);
	f.n = 0;
	fill(&f, 3, (size_t)payload_len); /* no JPEG: all payload, of c's length */
	write_buf(dir, "e.bin", &f);
	dupscan_scan *plain = tu_scan(dir, 0);
	char *sets = tu_sets(plain, dir);
	ck_assert_str_eq(sets, "a.jpg a2.jpg");
	free(sets);
	ck_assert_int_eq(dupscan_same_bytes(member(plain, "a.jpg"), member(plain, "a2.jpg")), 1);
	ck_assert_int_eq(dupscan_file_media(member(plain, "a.jpg"), NULL), DUPSCAN_MEDIA_OTHER);
	dupscan_free(plain);

	dupscan_scan *scan = tu_scan(dir, DUPSCAN_OPT_IGNORE_METADATA, 1, 0);
	sets = tu_sets(scan, dir);
	ck_assert_str_eq(sets, "a.jpg a2.jpg b.jpg c.jpg");
	free(sets);
	const dupscan_file *a = member(scan, "a.jpg"), *a2 = member(scan, "a2.jpg"), *b = member(scan, "b.jpg"),
			   *c = member(scan, "c.jpg");
	ck_assert_int_eq(dupscan_same_bytes(a, a2), 1);
	ck_assert_int_eq(dupscan_same_bytes(a, b), 0);
	ck_assert_int_eq(dupscan_same_bytes(b, c), 0);
	uint64_t bytes = 0;
	ck_assert_int_eq(dupscan_file_media(b, &bytes), DUPSCAN_MEDIA_JPEG);
	ck_assert_uint_eq(bytes, payload_len);
	ck_assert_uint_gt(dupscan_file_size(b), bytes);
	/* a link would lose b's tags: refused before anything changes */
	ck_assert_int_eq(dupscan_replace_with_link(a, b, DUPSCAN_LINK_HARD, 0), DUPSCAN_E_PAYLOAD_ONLY);
	ck_assert_int_eq(dupscan_dedupe(a, c, 0), DUPSCAN_E_PAYLOAD_ONLY);
	ck_assert_int_eq(dupscan_replace_with_link(a, a2, DUPSCAN_LINK_HARD, DUPSCAN_ACT_DRY_RUN), 0);
	dupscan_free(scan);

	/* not with a cache, nor directory sets */
	ck_assert_int_eq(dupscan_create(&scan), 0);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_IGNORE_METADATA, 1), 0);
	ck_assert_int_eq(dupscan_set_option(scan, DUPSCAN_OPT_DIRS, 1), 0);
	ck_assert_int_eq(dupscan_add_path(scan, dir, 1), 0);
	ck_assert_int_eq(dupscan_run(scan), DUPSCAN_E_OPTION);
	dupscan_free(scan);
	tu_cleanup(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("media");
	TCase *tc = tcase_create("payload");
	tcase_add_test(tc, test_jpeg);
	tcase_add_test(tc, test_png);
	tcase_add_test(tc, test_webp);
	tcase_add_test(tc, test_mp3);
	tcase_add_test(tc, test_flac);
	tcase_add_test(tc, test_mp4);
	tcase_add_test(tc, test_heic);
	tcase_add_test(tc, test_other_and_fd);
	tcase_add_test(tc, test_scan_payloads);
	tcase_add_test(tc, test_window);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

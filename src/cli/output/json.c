/* SPDX-License-Identifier: MIT */
/* json.c: jdupes-shaped JSON. Output is plain ASCII: other characters
 * are \u escapes, and bytes that are not valid UTF-8 become \udc80..\udcff
 * (Python's "surrogateescape"), so no name is lost or turns JSON invalid. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

/* Length of the valid UTF-8 sequence at s (1..4) and its code point, or 0. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0];
	int len;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2; v = c & 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; v = c & 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; v = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		v = (v << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid */
	if (v < min || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return len;
}

/* The escaped characters of a JSON string, without its quotes; in_html: '<',
 * '>' and '&' escaped too, so the text cannot close the page's script. */
void json_chars_in(const char *str, FILE *out, bool in_html)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		uint32_t cp;
		int len = utf8_seq(s, &cp);
		if (len == 0) {
			fprintf(out, "\\udc%02x", *s);
			s++;
			continue;
		}
		s += len;
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (int)cp);
		else if (in_html && (cp == '<' || cp == '>' || cp == '&'))
			fprintf(out, "\\u%04" PRIx32, cp);
		else if (cp >= 0x20 && cp < 0x7f)
			fputc((int)cp, out);
		else if (cp < 0x10000)
			fprintf(out, "\\u%04" PRIx32, cp);
		else
			fprintf(out, "\\u%04" PRIx32 "\\u%04" PRIx32, 0xd800 + ((cp - 0x10000) >> 10),
				0xdc00 + ((cp - 0x10000) & 0x3ff));
	}
}

void json_chars(const char *str, FILE *out)
{
	json_chars_in(str, out, false);
}

void json_string(const char *str, FILE *out)
{
	fputc('"', out);
	json_chars(str, out);
	fputc('"', out);
}

void json_command_line(int argc, char **argv, FILE *out, bool in_html)
{
	for (int i = 0; i < argc; i++) {
		if (i)
			fputc(' ', out);
		json_chars_in(argv[i], out, in_html);
	}
}

void json_head(int argc, char **argv, FILE *out)
{
	fprintf(out, "{\n  \"dupscanVersion\": ");
	json_string(dupscan_version(), out);
	fprintf(out, ",\n  \"commandLine\": \"");
	json_command_line(argc, argv, out, false);
	fputc('"', out);
}

void act_print_json(const dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	json_head(argc, argv, out);
	fprintf(out, ",\n  \"extensionFlags\": \"\",\n  \"matchSets\": [\n");
	size_t n = dupscan_set_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		size_t count = dupscan_set_file_count(set);
		int64_t proven = 0;
		fprintf(out, "    {\n      \"fileSize\": %" PRIu64 ",\n", dupscan_file_size(dupscan_set_file(set, 0)));
		/* of the size times (files - 1) the copies take, the bytes in blocks
		 * they share already (reflinks, snapshots): not to be won */
		fprintf(out, "      \"sharedBytes\": %" PRIu64 ",\n", dupscan_set_shared_bytes(scan, i));
		if (dupscan_set_proof(set, &proven) == DUPSCAN_PROOF_CACHE) {
			/* when the oldest proof it rests on began: UTC, to the nanosecond */
			time_t sec = (time_t)(proven / 1000000000);
			struct tm tm;
			char when[32] = "unknown";
			if (gmtime_r(&sec, &tm))
				strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
			fprintf(out, "      \"proof\": \"cache\",\n      \"provenAt\": \"%s.%09" PRId64 "Z\",\n", when,
				proven % 1000000000);
		} else
			fprintf(out, "      \"proof\": \"scan\",\n");
		size_t kept = keep_index(set, &o->keep);
		/* --ignore-metadata: each file's format, payload and group of the
		 * same bytes (sameBytes: one group) */
		unsigned *group = NULL;
		size_t ngroups = o->ignore_metadata ? bytes_groups(set, kept, &group) : 1;
		if (o->ignore_metadata)
			fprintf(out, "      \"sameBytes\": %s,\n", ngroups == 1 ? "true" : "false");
		fprintf(out, "      \"fileList\": [\n");
		for (size_t k = 0; k < count; k++) {
			/* the kept file first; each file as scanned, to act on later */
			const dupscan_file *f = dupscan_set_file(set, keep_listed(kept, k));
			fprintf(out, "        { \"filePath\": ");
			json_string(dupscan_file_path(f), out);
			if (dupscan_file_host(f)) {
				/* on another host: its path there is filePath after "HOST:" */
				fprintf(out, ", \"host\": ");
				json_string(dupscan_file_host(f), out);
			}
			if (group) {
				uint64_t bytes;
				int format = dupscan_file_media(f, &bytes);
				fprintf(out, ", \"size\": %" PRIu64 ", \"media\": \"%s\", \"payloadBytes\": %" PRIu64
					", \"bytesGroup\": %u", dupscan_file_size(f), media_name(format), bytes, group[k]);
			}
			fprintf(out, ", \"device\": %" PRIu64 ", \"inode\": %" PRIu64 ", \"mtimeNs\": %" PRId64
				", \"ctimeNs\": %" PRId64 " }%s\n", dupscan_file_dev(f), dupscan_file_ino(f),
				dupscan_file_mtime_ns(f), dupscan_file_ctime_ns(f), k + 1 < count ? "," : "");
		}
		free(group);
		fprintf(out, "      ]\n    }%s\n", i + 1 < n ? "," : "");
	}
	fprintf(out, "  ]\n}\n");
}

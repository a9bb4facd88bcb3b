/* SPDX-License-Identifier: MIT */
/* fuzz_cache.c: libFuzzer target for the hash cache reader and the log a
 * killed run leaves. The first byte picks the mode: the rest is the cache
 * file (or, bit 1, the log) as it is, or the hashes and flags of a
 * well-formed cache (log: well-formed records, right checks) for the files of
 * a small fixed tree, so wrong cached hashes and proofs reach the matcher. A damaged file must be
 * ignored: the sets are those of a run without it. A well-formed file with
 * wrong hashes (forged: no write leaves a file's ctime as it was) may hide a
 * duplicate but never invent one: every set must lie within a set of the run
 * without it. Either way the file left behind must load cleanly. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "cache/cache.h"
#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64], cache[96], logfile[104], *expected;
static const char *const names[] = { "a1", "a2", "b1", "b2", "c", "d/a3", "d/e", "d/f" };
#define NFILES (sizeof(names) / sizeof(names[0]))

static void put(const char *rel, const char *content)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	if (!f)
		abort();
	fputs(content, f);
	fclose(f);
}

static int cache_errors;
static void on_error(void *user, const char *path, int code)
{
	(void)user;
	(void)path;
	if (code == DUPSCAN_E_CACHE)
		cache_errors++;
}

/* The sets of a scan of root, as one string (trusting the cache's proofs with trust). */
static char *scan_as(const char *cache_path, int trust)
{
	dupscan_scan *s = NULL;
	if (dupscan_create(&s) != 0 || dupscan_add_path(s, root, 1) < 0)
		abort();
	dupscan_set_option(s, DUPSCAN_OPT_THREADS, 1);
	dupscan_set_option(s, DUPSCAN_OPT_ZERO_MATCH, 1);
	if (cache_path)
		dupscan_set_cache(s, cache_path);
	dupscan_set_option(s, DUPSCAN_OPT_CACHE_TRUST, trust);
	dupscan_set_error_callback(s, on_error, NULL);
	int rc = dupscan_run(s);
	if (rc != 0) {
		fprintf(stderr, "dupscan_run: %s\n", dupscan_strerror(rc));
		abort();
	}
	size_t cap = 4096, len = 0;
	char *out = calloc(1, cap);
	for (size_t i = 0; out && i < dupscan_set_count(s); i++) {
		const dupscan_set *set = dupscan_get_set(s, i);
		for (size_t k = 0; k < dupscan_set_file_count(set); k++)
			len += (size_t)snprintf(out + len, cap - len, "%s%c", dupscan_file_path(dupscan_set_file(set, k)),
						k + 1 < dupscan_set_file_count(set) ? ' ' : '|');
	}
	dupscan_free(s);
	return out;
}

static char *scan(const char *cache_path)
{
	return scan_as(cache_path, 0);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/dupscan-fuzz-cache-%ld", (long)getpid());
	snprintf(cache, sizeof(cache), "%s.bin", root);
	snprintf(logfile, sizeof(logfile), "%s.log", cache);
	mkdir(root, 0700);
	char d[128];
	snprintf(d, sizeof(d), "%s/d", root);
	mkdir(d, 0700);
	/* pairs, a triple, same size with other bytes, an empty file */
	put("a1", "content of a, 4096 bytes would do too\n");
	put("a2", "content of a, 4096 bytes would do too\n");
	put("d/a3", "content of a, 4096 bytes would do too\n");
	put("b1", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	put("b2", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	put("c", "cbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	put("d/e", "");
	put("d/f", "");
	expected = scan(NULL);
}

/* Is every set of got ("a b|c d|") inside one set of want? */
static bool within(const char *got, const char *want)
{
	char *g = strdup(got);
	bool ok = g != NULL;
	for (char *set = g, *end; ok && set && *set; set = end ? end + 1 : NULL) {
		end = strchr(set, '|');
		if (end)
			*end = '\0';
		/* find the set of want holding its first file, then check the others */
		char *first = strndup(set, strcspn(set, " "));
		const char *w = want, *hit = NULL;
		while (first && *w && !hit) {
			size_t len = strcspn(w, "|");
			char *ws = strndup(w, len);
			for (char *f = ws; ws && f && *f && !hit; f = strchr(f, ' ') ? strchr(f, ' ') + 1 : NULL)
				if (strncmp(f, first, strlen(first)) == 0 && (f[strlen(first)] == ' ' || f[strlen(first)] == '\0'))
					hit = w;
			if (hit) {
				for (char *tok = strtok(set, " "); tok && ok; tok = strtok(NULL, " ")) {
					char *needle = malloc(strlen(tok) + 3);
					sprintf(needle, " %s ", tok);
					char *hay = malloc(len + 3);
					sprintf(hay, " %s ", ws);
					ok = strstr(hay, needle) != NULL;
					free(needle);
					free(hay);
				}
			}
			free(ws);
			w += len + (w[len] == '|');
		}
		ok = ok && hit;
		free(first);
	}
	free(g);
	return ok;
}

struct entry {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t partial, full;
	uint64_t cls;
	int64_t proven_ns;
	uint32_t flags, path;
};
#define PER_FILE 18 /* input bytes per file: partial, full, flags, proof */

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* A well-formed cache (or log) of the tree's files with hashes and flags from the input. */
static void write_assembled(const uint8_t *p, size_t n, FILE *f, bool log)
{
	struct entry e[NFILES];
	char strings[NFILES * 96];
	size_t ns = 0;
	for (size_t i = 0; i < NFILES; i++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		if (stat(path, &st) != 0)
			abort();
		uint8_t raw[PER_FILE] = { 0 };
		for (size_t k = 0; k < PER_FILE; k++)
			raw[k] = i * PER_FILE + k < n ? p[i * PER_FILE + k] : 0;
		/* a proof in one of three classes, dated an hour after the file (so it
		 * holds) or at its very time (racy); flags as given */
		int64_t ctime = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
		e[i] = (struct entry){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
				       (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, ctime, 0, 0,
				       raw[17] & 3u, (raw[17] & 4u) ? ctime : ctime + 3600LL * 1000000000,
				       raw[16] & 3u, (uint32_t)ns };
		memcpy(&e[i].partial, raw, 8);
		memcpy(&e[i].full, raw + 8, 8);
		memcpy(strings + ns, path, strlen(path) + 1);
		ns += strlen(path) + 1;
	}
	if (log) {
		/* records as a killed run appends them: no path, each checked */
		for (size_t i = 0; i < NFILES; i++) {
			struct log_record r;
			memcpy(&r.e, &e[i], sizeof(r.e));
			r.e.path = LOG_NO_PATH;
			r.check = XXH64(&r.e, sizeof(r.e), LOG_SEED);
			fwrite(&r, sizeof(r), 1, f);
		}
		return;
	}
	qsort(e, NFILES, sizeof(e[0]), cmp_entry);
	XXH64_state_t *x = XXH64_createState();
	XXH64_reset(x, 0);
	XXH64_update(x, e, sizeof(e));
	XXH64_update(x, strings, ns);
	struct {
		char magic[8];
		uint32_t version, entry_size;
		uint64_t count, strings, checksum, reserved;
	} h = { "DUPSCAN", 3, sizeof(struct entry), NFILES, ns, XXH64_digest(x), 0 };
	XXH64_freeState(x);
	memcpy(h.magic, "DUPSCANH", 8);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(e, sizeof(e), 1, f);
	fwrite(strings, ns, 1, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!expected)
		setup();
	bool log = size > 0 && (data[0] & 2);
	unlink(log ? cache : logfile); /* the other file: none */
	FILE *f = fopen(log ? logfile : cache, "wb");
	if (!f)
		abort();
	if (size > 0 && (data[0] & 1))
		write_assembled(data + 1, size - 1, f, log);
	else if (size > 0)
		fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	cache_errors = 0;
	char *got = scan(cache);
	bool forged = size > 0 && (data[0] & 1);
	if (!got || (!forged && strcmp(got, expected) != 0) || (forged && !within(got, expected)))
		abort(); /* a damaged cache changed the result, or a forged one made a set */
	free(got);
	if (forged) {
		/* trusted, forged proofs may make any set (documented): only no crash,
		 * and what it writes back must load */
		free(scan_as(cache, 1));
	}
	if (access(logfile, F_OK) == 0)
		abort(); /* a run that saved the cache folded the log and removed it */
	cache_errors = 0;
	got = scan(cache);
	if (!got || cache_errors != 0 || (!forged && strcmp(got, expected) != 0))
		abort(); /* what was written back must load cleanly */
	free(got);
	return 0;
}

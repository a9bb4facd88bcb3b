/* SPDX-License-Identifier: MIT */
/* fuzz_wire.c: libFuzzer target for both ends of the remote-scan channel.
 * The first byte picks the end; the rest is what the other end sends. Bit 0
 * clear: a client scanning L here and R "there" (with bit 1, DUPSCAN_OPT_DIRS:
 * the server's tree too) reads it as its server's
 * stream; the run must end (0, or DUPSCAN_E_PROTOCOL / _E_REMOTE: the
 * stream ends, so nothing waits for the timeout), and whatever a server
 * says, no set may join files of this host that a local scan keeps apart.
 * Bit 0 set: dupscan_serve() reads it as a client's; it must end, its
 * walk kept inside the fuzzer's directory by filters. The tree is at one
 * fixed place, /tmp/dupscan-fuzz-wire, named by the seeds. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64], L[80], R[80];
static char *local_sets; /* a local scan of L and R: "a b|c d|" */

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

static char *sets_of(dupscan_scan *s, bool local_only)
{
	size_t cap = 8192, len = 0;
	char *out = calloc(1, cap);
	for (size_t i = 0; out && i < dupscan_set_count(s); i++) {
		const dupscan_set *set = dupscan_get_set(s, i);
		for (size_t k = 0; k < dupscan_set_file_count(set) && len + 300 < cap; k++) {
			const dupscan_file *f = dupscan_set_file(set, k);
			if (!local_only || !dupscan_file_host(f))
				len += (size_t)snprintf(out + len, cap - len, "%s ", dupscan_file_path(f));
		}
		if (len + 2 < cap)
			out[len++] = '|';
	}
	return out;
}

static void setup(void)
{
	/* one fixed place: the seeds, a real run's transcripts, name it */
	snprintf(root, sizeof(root), "/tmp/dupscan-fuzz-wire");
	snprintf(L, sizeof(L), "%s/L", root);
	snprintf(R, sizeof(R), "%s/R", root);
	mkdir(root, 0700);
	mkdir(L, 0700);
	mkdir(R, 0700);
	const char *same = "the same bytes, here and there\n";
	put("L/a1", same);
	put("L/a2", same);
	put("L/b", "b: same size as c, other bytes\n");
	put("L/c", "c: same size as b, other bytes\n");
	put("R/a3", same);
	put("R/b2", "b: same size as c, other bytes\n");
	put("R/e", "only there, twice\n");
	put("R/e2", "only there, twice\n");
	dupscan_scan *s = NULL;
	if (dupscan_create(&s) != 0 || dupscan_add_path(s, L, 1) < 0 || dupscan_run(s) != 0)
		abort();
	local_sets = sets_of(s, true);
	dupscan_free(s);
}

/* Is name a whole word of the space-separated list set (up to its '|')? */
static bool in_set(const char *set, const char *name)
{
	size_t n = strlen(name), len = strcspn(set, "|");
	for (const char *f = set; f < set + len; f += strcspn(f, " |") + 1)
		if (strncmp(f, name, n) == 0 && (f[n] == ' ' || f[n] == '|'))
			return true;
	return false;
}

/* Are a and b in one set of the local scan? */
static bool together(const char *a, const char *b)
{
	for (const char *set = local_sets; *set; set += strcspn(set, "|") + (set[strcspn(set, "|")] ? 1 : 0))
		if (in_set(set, a) && in_set(set, b))
			return true;
	return false;
}

/* No set of got holds two files of this host the local scan keeps apart. */
static bool apart_kept(const char *got)
{
	char *g = strdup(got);
	bool ok = g != NULL;
	for (char *set = g, *end; ok && *set; set = end + 1) {
		end = set + strcspn(set, "|");
		if (!*end)
			break;
		*end = '\0';
		char *first = strtok(set, " ");
		for (char *f = first ? strtok(NULL, " ") : NULL; f && ok; f = strtok(NULL, " "))
			ok = together(first, f);
	}
	free(g);
	return ok;
}

/* The fuzzer's bytes on a pipe, then its end; writes go nowhere. */
static void channel(const uint8_t *data, size_t size, int *rfd, int *wfd)
{
	int p[2];
	if (size > 60000)
		size = 60000; /* within a pipe's buffer: written before anyone reads */
	if (pipe(p) != 0 || (size && write(p[1], data, size) != (ssize_t)size))
		abort();
	close(p[1]);
	*rfd = p[0];
	*wfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (*wfd < 0)
		abort();
}

static int inside(void *user, const char *path, const char *relpath)
{
	(void)user;
	(void)relpath;
	return strncmp(path, root, strlen(root)) == 0;
}

static int inside_file(void *user, const dupscan_file *f)
{
	return inside(user, dupscan_file_path(f), NULL);
}

static void as_client(const uint8_t *data, size_t size, bool dirs)
{
	int rfd, wfd;
	channel(data, size, &rfd, &wfd);
	dupscan_scan *s = NULL;
	if (dupscan_create(&s) != 0 || dupscan_add_path(s, L, 1) < 0 ||
	    dupscan_add_remote(s, "peer", rfd, wfd, R, 1) < 0)
		abort();
	dupscan_set_option(s, DUPSCAN_OPT_THREADS, 1);
	dupscan_set_option(s, DUPSCAN_OPT_REMOTE_TIMEOUT, 1);
	dupscan_set_option(s, DUPSCAN_OPT_DIRS, dirs);
	int rc = dupscan_run(s);
	if (rc != 0 && rc != DUPSCAN_E_PROTOCOL && rc != DUPSCAN_E_REMOTE && rc != -ENOMEM) {
		fprintf(stderr, "dupscan_run: %s\n", dupscan_strerror(rc));
		abort();
	}
	if (rc == 0) {
		char *got = sets_of(s, true);
		if (!apart_kept(got)) {
			fprintf(stderr, "joined what a local scan keeps apart: %s (local: %s)\n", got, local_sets);
			abort();
		}
		free(got);
		dupscan_unique_count(s); /* asks the server for names */
	}
	dupscan_free(s);
	close(rfd);
	close(wfd);
}

static void as_server(const uint8_t *data, size_t size)
{
	int rfd, wfd;
	channel(data, size, &rfd, &wfd);
	dupscan_scan *s = NULL;
	if (dupscan_create(&s) != 0)
		abort();
	dupscan_set_option(s, DUPSCAN_OPT_THREADS, 1);
	dupscan_set_dir_filter(s, inside, NULL);
	dupscan_set_filter(s, inside_file, NULL);
	dupscan_serve(s, rfd, wfd);
	dupscan_free(s);
	close(rfd);
	close(wfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!local_sets)
		setup();
	if (size == 0)
		return 0;
	if (data[0] & 1)
		as_server(data + 1, size - 1);
	else
		as_client(data + 1, size - 1, data[0] & 2);
	return 0;
}

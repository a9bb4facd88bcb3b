/* SPDX-License-Identifier: MIT */
/* consumer.c: a program that uses an installed libdupscan through its public
 * header only, as a packager's users would: prints the sets under argv[1]. */
#include <stdio.h>

#include <dupscan.h>

static void on_error(void *user, const char *path, int code)
{
	(void)user;
	fprintf(stderr, "%s: %s\n", path, dupscan_strerror(code));
}

int main(int argc, char **argv)
{
	dupscan_scan *scan = NULL;
	if (argc < 2 || dupscan_create(&scan) < 0)
		return 2;
	dupscan_set_error_callback(scan, on_error, NULL);
	for (int i = 1; i < argc; i++)
		dupscan_add_path(scan, argv[i], 1);
	int rc = dupscan_run(scan);
	if (rc < 0) {
		fprintf(stderr, "%s\n", dupscan_strerror(rc));
		dupscan_free(scan);
		return 1;
	}
	printf("libdupscan %s (header %s)\n", dupscan_version(), DUPSCAN_VERSION_STRING);
	for (size_t s = 0; s < dupscan_set_count(scan); s++) {
		const dupscan_set *set = dupscan_get_set(scan, s);
		for (size_t f = 0; f < dupscan_set_file_count(set); f++)
			puts(dupscan_file_path(dupscan_set_file(set, f)));
		putchar('\n');
	}
	dupscan_free(scan);
	return 0;
}

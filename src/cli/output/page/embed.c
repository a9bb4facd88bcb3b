/* SPDX-License-Identifier: MIT */
/* embed.c: the page's files as C strings at build time, so each stays a file
 * an editor and a browser open. Usage: embed NAME=FILE... > page_files.c:
 * "const char NAME[] = ...;" a file, its bytes as they are. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	puts("/* made by embed.c from the files of src/cli/output/page/: edit those */");
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		FILE *f = eq ? fopen(eq + 1, "rb") : NULL;
		if (!f) {
			fprintf(stderr, "embed: %s: cannot read\n", argv[i]);
			return 1;
		}
		printf("const char %.*s[] = {", (int)(eq - argv[i]), argv[i]);
		int c;
		for (unsigned long n = 0; (c = getc(f)) != EOF; n++)
			printf("%s%d,", n % 24 ? "" : "\n", c);
		puts(" 0 };");
		fclose(f);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

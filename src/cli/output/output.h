/* SPDX-License-Identifier: MIT */
/* output.h: what the program prints of a scan: the sets as text, JSON or
 * CSV, the summary, the views of where the copies are, the page, and the
 * progress line. */
#ifndef DUPSCAN_CLI_OUTPUT_H
#define DUPSCAN_CLI_OUTPUT_H

#include "cli.h"

/* meter.c: throttled progress on stderr when it is a terminal */
struct cli_progress;
enum { CLI_PROGRESS_NEVER, CLI_PROGRESS_TTY, CLI_PROGRESS_ALWAYS };
void cli_progress_bytes_cb(void *user, const struct dupscan_progress *progress);
struct cli_progress *cli_progress_new(int mode);
/* The scan whose reading mode the progress line shows. */
void cli_progress_watch(struct cli_progress *p, const dupscan_scan *scan);
void cli_progress_clear(struct cli_progress *p);
/* No advice to run where the data is (the scan reaches another host already). */
void cli_progress_no_hint(struct cli_progress *p);
void cli_progress_free(struct cli_progress *p);

/* listing.c */
/* With --ignore-metadata, which files of a set hold the same bytes: each
 * listed file's group (from 1, in the order listed, kept: the set's kept
 * file) into group[0..count). @return how many groups (1: every file the
 * same bytes), 0 when out of memory (*group NULL). The caller frees *group. */
size_t bytes_groups(const dupscan_set *set, size_t kept, unsigned **group);
/* Before a set whose files do not all hold the same bytes, a line saying
 * which do, by their place as listed (from 1), "|" between the groups:
 * "# the same picture or sound, tags differ: 1 3 | 2"; nothing for a set
 * of one content. */
void act_print_groups(const dupscan_set *set, size_t kept, FILE *out);
/* The name of a format of enum dupscan_media ("jpeg", ..., "other"). */
const char *media_name(int format);
void act_print_matches(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
void act_print_unique(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
/* the library's stage callback for -P; user is the FILE to print to */
void act_print_stage(void *user, int stage, const dupscan_file *const *files, size_t count);
/* csv.c: a CSV field, quoted when it must be (RFC 4180) */
void csv_field(const char *s, FILE *out);
/* @return the sets whose hash could not be read */
int act_print_csv(const dupscan_scan *scan, const struct cli_opts *o, FILE *out);
/* json.c */
/* A JSON string (json_chars: without its quotes), ASCII only: other
 * characters as \u escapes, bytes that are not UTF-8 as \udc80..\udcff. */
void json_chars(const char *str, FILE *out);
/* with in_html, '<', '>' and '&' escaped too (JSON inside a page's script) */
void json_chars_in(const char *str, FILE *out, bool in_html);
/* The arguments, space-separated, as the characters of a JSON string. */
void json_command_line(int argc, char **argv, FILE *out, bool in_html);
/* A report's first lines: '{', "dupscanVersion" and "commandLine" (no comma after). */
void json_head(int argc, char **argv, FILE *out);
void json_string(const char *str, FILE *out);
void act_print_json(const dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* summary.c: the figures leave out what could not be read: said beside
 * them on standard error ("N paths could not be read (named above):
 * FIGURES", which says where they are not), when anything was. */
void act_unread_note(const dupscan_scan *scan, FILE *out, const char *figures);
/* missing.c: --missing (text, -0, JSON) and its summary on stderr.
 * @return 0 (every file has a copy), 3 (some has none), or 1 (said). */
int act_missing(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* where.c: --overlap and --summary=dirs (text, json, csv); the scan's
 * directories tallied first. @return 0, or 1 after saying why on stderr. */
int act_where(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* The views' failure on standard error, with what to try instead. */
void where_error(const char *what, int rc);
/* A directory's path as shown, ending in '/' (malloc'ed; NULL on ENOMEM). */
char *where_dir_path(const dupscan_scan *scan, size_t dir);
/* The largest whole percentage of whole that part reaches (100 when whole is 0). */
unsigned where_percent(uint64_t part, uint64_t whole);
/* page.c: --format=html, one page. @return as act_where(). */
int act_html(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out);
/* summary.c */
void act_summarize(const dupscan_scan *scan, FILE *out);

#endif /* DUPSCAN_CLI_OUTPUT_H */

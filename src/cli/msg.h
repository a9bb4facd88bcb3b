/* SPDX-License-Identifier: MIT */
/* msg.h: every line the program says on standard error goes through here,
 * each "dupscan: ..." once (as curl's tool_msgs.c). Paths are written as
 * their bytes are, whatever their encoding, as a terminal shows them.
 *
 * The program's convention for return values:
 * - a function that tells the user what went wrong returns an exit status
 *   (0; 1: something could not be read or acted on; EXIT_USAGE: the
 *   command line or an input file is wrong);
 * - one that does not tell returns 0 or -errno (or a DUPSCAN_E_* code), and
 *   its caller says it;
 * - a parser of outside bytes (-X, a report, a journal line) returns 0 or
 *   -1 and writes what was wrong, and where, into its caller's buffer;
 * - a question (is it HOST:PATH? does the pattern match?) returns bool. */
#ifndef DUPSCAN_CLI_MSG_H
#define DUPSCAN_CLI_MSG_H

#include <stdarg.h>

#define EXIT_USAGE 2
#define EXIT_MISSING 3      /* --missing: some file has no copy */
#define EXIT_DUPE 255       /* -e: a duplicate was found */

/* "dupscan: " and the message, then a newline. */
__attribute__((format(printf, 1, 2))) void msg_say(const char *fmt, ...);
/* "dupscan: warning: " and the message, then a newline. */
__attribute__((format(printf, 1, 2))) void msg_warn(const char *fmt, ...);
/* A usage error, with where to read more. @return EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int msg_usage(const char *fmt, ...);
/* "dupscan: out of memory" (what: NULL, else "WHAT: out of memory"). @return 1. */
int msg_nomem(const char *what);
/* Text as it is: no prefix, no newline added (a set's lines under -e, the
 * progress line). */
__attribute__((format(printf, 1, 2))) int msg_raw(const char *fmt, ...);
/* What to call before any message: the progress line clears itself. */
void msg_before(void (*clear)(void *ctx), void *ctx);

#endif /* DUPSCAN_CLI_MSG_H */

/* SPDX-License-Identifier: MIT */
/* msg.c: the program's messages on standard error (msg.h). */
#include <stdio.h>

#include "msg.h"

static void (*before_fn)(void *ctx);
static void *before_ctx;

void msg_before(void (*clear)(void *ctx), void *ctx)
{
	before_fn = clear;
	before_ctx = ctx;
}

__attribute__((format(printf, 2, 0)))
static void say(const char *prefix, const char *fmt, va_list ap)
{
	if (before_fn)
		before_fn(before_ctx);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msg_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("dupscan: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("dupscan: warning: ", fmt, ap);
	va_end(ap);
}

int msg_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("dupscan: ", fmt, ap);
	va_end(ap);
	fputs("Try 'dupscan --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

int msg_nomem(const char *what)
{
	if (what)
		msg_say("%s: out of memory", what);
	else
		msg_say("out of memory");
	return 1;
}

int msg_raw(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(stderr, fmt, ap);
	va_end(ap);
	return n;
}

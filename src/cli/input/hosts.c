/* SPDX-License-Identifier: MIT */
/* hosts.c: HOST:PATH arguments. For each, the program starts a remote shell
 * (ssh, or --rsh / $DUPSCAN_RSH) running "dupscan --server" there, and gives
 * the library the two ends of its pipes; the protocol is the library's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hosts.h"

bool remote_arg(const char *arg)
{
	const char *colon = strchr(arg, ':'), *slash = strchr(arg, '/');
	struct stat st;
	return colon && colon != arg && (!slash || colon < slash) && lstat(arg, &st) != 0;
}

/* s quoted for a POSIX shell, appended to buf (NULL when out of memory). */
static char *append_quoted(char *buf, const char *s)
{
	size_t have = buf ? strlen(buf) : 0, n = strlen(s);
	char *b = realloc(buf, have + 4 * n + 4);
	if (!b) {
		free(buf);
		return NULL;
	}
	char *p = b + have;
	if (have)
		*p++ = ' ';
	*p++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return b;
}

/* The remote command: the server and the options that choose files there. */
static char *server_command(const struct cli_opts *o)
{
	char *cmd = append_quoted(NULL, o->remote_dupscan ? o->remote_dupscan : "dupscan");
	cmd = cmd ? append_quoted(cmd, "--server") : NULL;
	for (int i = 0; cmd && i < o->nforward; i++)
		cmd = append_quoted(cmd, o->forward[i]);
	return cmd;
}

/* The remote shell's words: --rsh, else $DUPSCAN_RSH, else ssh, split at
 * blanks (as rsync's -e: "ssh -p 2222 -i KEY"). */
static char **rsh_words(const struct cli_opts *o, char **copy)
{
	const char *rsh = o->rsh ? o->rsh : getenv("DUPSCAN_RSH");
	*copy = strdup(rsh && *rsh ? rsh : "ssh");
	size_t n = strlen(*copy ? *copy : "") / 2 + 4;
	char **w = *copy ? calloc(n, sizeof(*w)) : NULL;
	size_t k = 0;
	for (char *t = w ? strtok(*copy, " \t") : NULL; t; t = strtok(NULL, " \t"))
		w[k++] = t;
	return w;
}

/* A pipe whose ends no other command inherits. */
static int pipe_cloexec(int fd[2])
{
	if (pipe(fd) != 0)
		return -1;
	fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(fd[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

static int start(const struct cli_opts *o, const char *host, pid_t *pid, int *rfd, int *wfd)
{
	char *copy, *cmd = server_command(o);
	char **argv = rsh_words(o, &copy);
	int to[2] = { -1, -1 }, from[2] = { -1, -1 };
	if (!cmd || !argv || pipe_cloexec(to) != 0 || pipe_cloexec(from) != 0) {
		msg_say("%s: cannot start the remote shell: %s", host, strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	size_t n = 0;
	while (argv[n])
		n++;
	argv[n] = (char *)host;
	argv[n + 1] = cmd;
	argv[n + 2] = NULL;
	*pid = fork();
	if (*pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execvp(argv[0], argv);
		msg_say("%s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	if (*pid < 0) {
		msg_say("%s: cannot start the remote shell: %s", host, strerror(errno));
		goto fail;
	}
	close(to[0]);
	close(from[1]);
	*rfd = from[0];
	*wfd = to[1];
	free(cmd);
	free(argv);
	free(copy);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (to[i] >= 0)
			close(to[i]);
		if (from[i] >= 0)
			close(from[i]);
	}
	free(cmd);
	free(argv);
	free(copy);
	return 1;
}

int remote_add(dupscan_scan *scan, const struct cli_opts *o, const char *arg, bool recurse, bool reference,
	       struct remote_procs *procs)
{
	const char *colon = strchr(arg, ':');
	char *host = strndup(arg, (size_t)(colon - arg));
	const char *path = colon[1] ? colon + 1 : ".";
	pid_t *pid = realloc(procs->pid, (size_t)(procs->n + 1) * sizeof(*pid));
	if (pid)
		procs->pid = pid;
	int *fd = realloc(procs->fd, (size_t)(procs->n + 1) * 2 * sizeof(*fd));
	if (fd)
		procs->fd = fd;
	if (!host || !pid || !fd) {
		free(host);
		msg_say("out of memory");
		return 1;
	}
	int rfd, wfd;
	if (start(o, host, &pid[procs->n], &rfd, &wfd) != 0) {
		free(host);
		return 1;
	}
	fd[2 * procs->n] = rfd;
	fd[2 * procs->n + 1] = wfd;
	procs->n++;
	int rc = dupscan_add_remote(scan, host, rfd, wfd, path, recurse);
	if (rc >= 0 && reference)
		rc = dupscan_set_reference(scan, rc);
	free(host);
	if (rc < 0) {
		msg_say("%s: %s", arg, dupscan_strerror(rc));
		return 1;
	}
	return 0;
}

void remote_wait(struct remote_procs *procs, bool failed)
{
	for (int i = 0; i < 2 * procs->n; i++)
		close(procs->fd[i]);
	for (int i = 0; i < procs->n; i++) {
		/* a side that failed may be stuck: it is not waited for */
		if (failed)
			kill(procs->pid[i], SIGTERM);
		while (waitpid(procs->pid[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(procs->pid);
	free(procs->fd);
	*procs = (struct remote_procs){ 0 };
}

/* SPDX-License-Identifier: MIT */
/* remote.h: the client side of a scan across hosts (remote.c); never installed. */
#ifndef DUPSCAN_REMOTE_H
#define DUPSCAN_REMOTE_H

#include "internal.h"
#include "records/records.h"
#include "read/read.h"
#include "sets/sets.h"
#include "remote/wire.h"

struct ds_remote;
/* Another host's files: their records, names and paths, in a tree of their
 * own that is never walked (remote.c). Its core holds none of the caller's
 * options or callbacks: the files are added as the side sends them. */
struct ds_mirror {
	struct ds_core core;
	struct ds_tree tree;
};
/* The scan's other hosts: the sides, what they found, how their sets joined
 * this host's. */
struct ds_hosts {
	struct ds_core *core;
	struct ds_tree *tree;
	struct ds_reading *reading;
	struct ds_results *results;
	struct ds_remote **remotes;  /* dupscan_add_remote() (remote.c) */
	size_t nremotes;
	int remote_timeout_ms;       /* DUPSCAN_OPT_REMOTE_TIMEOUT */
	bool remote_uniques;         /* the remote sides' unique files still to be fetched for the uniques */
	uint64_t *xsizes;            /* a scan past its budget: the other hosts' sizes, ascending,
	                              * each once (ds_remote_early()); their unique files kept */
	size_t nxsizes;
	uint64_t *across;            /* classes joined across hosts: raw, class pairs, by raw
	                              * (ds_across_class()) */
	size_t nacross;
};

/* A path scanned on another host through a dupscan_serve() at the other end
 * of a channel. Its files the scan lists live as records of mirror, a scan
 * of its own that never walks: their handles point there, so a file's path,
 * size and times read the same way as a local one's. */
struct ds_remote {
	char *label;             /* the host as the caller named it */
	char *path;              /* the path asked for there */
	char *shown;             /* label ":" path, for messages */
	uint32_t arg;            /* its place among the scan's added paths */
	bool recurse;
	struct ds_chan ch;
	struct ds_mirror *mirror;
	uint32_t *wdir;          /* by wire directory number: the mirror's directory */
	size_t nwdir, capwdir;
	uint32_t *rec_of;        /* by file number: its mirror record, DS_NONE until named */
	uint64_t *id_of;         /* by mirror record: its file number */
	size_t capid;
	uint64_t nset, nuniq;    /* files 0..nset are the sets', then the unique ones */
	uint64_t *usize;         /* the unique ones' sizes */
	size_t capu, capset;
	struct ds_rset { uint64_t first, n; } *sets; /* the sets it found, by file numbers */
	size_t nsets, capsets;
	uint8_t *matched;        /* by unique file: in a set across hosts */
	uint8_t *held;           /* by file number, while the missing are listed: in a set */
	char **protect;          /* HOST:PATH given to dupscan_protect_path() */
	size_t nprotect;
	/* with DUPSCAN_OPT_DIRS, its whole tree: each file's directory and
	 * content (what: 0 the content of file number id, 1 empty, 2 unknown;
	 * 3: the directory is incomplete), and by entry the content's class
	 * across hosts (across.c: ds_across_class()) */
	struct ds_tent { uint64_t id; uint32_t dir, what; } *tent;
	size_t ntent, captent;
	uint64_t *tclass;
	bool started, done;
	bool collected;          /* its results taken (ds_remote_collect()) */
	bool want_sizes;         /* the paths of the other kind all here: DS_WIRE_SIZES asked */
	bool greeted;            /* its HELLO read (greet_rc: how that went) */
	int greet_rc;
	uint64_t features;       /* what its HELLO says it does */
};

/* Greet every remote side and ask for its scan, before the local walk: they
 * scan while this host does. @return 0 or -ENOMEM (a side that cannot be
 * reached fails in ds_remote_finish()). */
int ds_remote_start(struct ds_hosts *s);
/* The side's HELLO, read once (what it does into r->features). @return 0
 * or the channel's code. */
int ds_remote_greeting(struct ds_remote *r);
/* Past the memory budget, before this host's bands: every side's results
 * taken (each scan waits for the other hosts' to end), their sizes noted,
 * so that after each band only this host's files that may match theirs
 * stay (the sets' files, the unique ones of those sizes); what the sides'
 * results hold here is weighed in the budget. @return 0, -ENOMEM, or a
 * side's code (named). */
int ds_remote_early(struct ds_hosts *s);
/* (sizes.c) After the local walk: each reference side that asked for them (and
 * takes them) told the sizes of this host's other files, so it reads and
 * sends only files of those sizes. @return 0 or -ENOMEM (a side that
 * fails fails in ds_remote_finish()). */
int ds_remote_sizes(struct ds_hosts *s);
/* (across.c) After the local sets: each side's results, the files of one size on two
 * hosts matched (hashes, then bytes through the channel), and the sets
 * joined. @return 0, -ENOMEM, DUPSCAN_E_REMOTE or DUPSCAN_E_PROTOCOL. */
int ds_remote_finish(struct ds_hosts *s);
/* across.c */
/* A side's greeting and results, its files numbered (the unique ones named
 * only when asked for). @return 0, -ENOMEM, DUPSCAN_E_CANCELED, or the
 * channel's code (the side named through the error callback). */
int ds_remote_collect(struct ds_hosts *s, struct ds_remote *r);
/* The side's next frame but ALIVE ones (an answer to a request). */
int ds_remote_recv(struct ds_remote *r, int *type, struct ds_rd *rd);
/* The side sent what the protocol does not allow: what, in its reason.
 * @return DUPSCAN_E_PROTOCOL. */
int ds_remote_malformed(struct ds_remote *r, const char *what);
/* Name the side's unique files that joined a set across hosts. */
int ds_remote_name_matched(struct ds_remote *r, struct ds_wr *w);
/* The handle of the side's file number id (named), in its mirror. */
int ds_remote_file(struct ds_remote *r, uint64_t id, struct dupscan_file *f);
/* Tell the caller why a side failed: HOST:PATH: reason. */
void ds_remote_report(struct ds_hosts *s, struct ds_remote *r, int rc);
/* A content's class across hosts: raw (a local class record, or site << 56
 * | the number of a remote set's first file or of a unique file) as the
 * matching across hosts joined it (the class of its set's first item). */
uint64_t ds_across_class(const struct ds_hosts *s, uint64_t raw);
/* The remote sides' unique files joined to s->uniques (dupscan_unique_count()). */
int ds_remote_uniques(struct ds_hosts *s);
/* r's files in no set of s appended to s->missing (a reference is r
 * itself: none), named first where they are not. @return 0, -ENOMEM or
 * the channel's code (the side named). */
/* How many of r's files a missing list asks about: all of them, unless r is a reference. */
uint64_t ds_remote_asked(const struct ds_hosts *s, const struct ds_remote *r);
int ds_remote_missing(struct ds_hosts *s, struct ds_remote *r);
/* dupscan_protect_path() of a remote's HOST:PATH. @return 0, -ENOMEM, or
 * 1: no remote's. */
int ds_remote_protect(struct ds_hosts *s, const char *path);
/* Send BYE and free what the scan's remotes hold. */
void ds_remote_free(struct ds_hosts *s);
/* The remote f is on, or NULL for a local file. */
struct ds_remote *ds_remote_of(const dupscan_file *f);
/* Is the remote kept file keep still the one scanned (its server holds it
 * open from the first check on)? @return 0, DUPSCAN_E_CHANGED, or the channel's code. */
int ds_remote_check(const dupscan_file *keep);
/* across_sets.c: each other host's tree as the directory sets take it
 * (s->nremotes of them, in s->remotes' order). @return 0 or -ENOMEM. */
struct ds_host_tree;
int ds_host_trees(const struct ds_hosts *s, struct ds_host_tree **out);
void ds_host_trees_free(struct ds_host_tree *h, size_t n);
/* the library's calls of the same names (dupscan_...), for this stage */
int ds_add_remote(struct ds_hosts *s, const char *label, int read_fd, int write_fd, const char *path, int recurse);
void ds_remote_bytes(const struct ds_hosts *s, uint64_t *received, uint64_t *sent);

#endif /* DUPSCAN_REMOTE_H */

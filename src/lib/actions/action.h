/* SPDX-License-Identifier: MIT */
/* action.h: what the action files (act_*.c) share, kept in action.c: the
 * checks against the scan, the kept file held open and watched for writes,
 * the duplicate's entry (its "slot"), and its temporary names. */
#ifndef DUPSCAN_ACTION_H
#define DUPSCAN_ACTION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "dupscan.h"
#include "actions/acts.h"


/* ---- the kept file, held open: the inode every later check compares with ---- */

struct kept {
	int fd;
	struct stat st;
	/* inotify watches on both files for writes from before their check until
	 * after the change: the one change a check by metadata can miss is an
	 * in-place write whose mtime is put back in the instant before a link or
	 * rename moves the ctime anyway. The instance is the scan's (or our own
	 * for a handle without one); -1 where inotify is refused. */
	int watch;
	bool own_watch, written;
	int wd[2], nwd;
	const dupscan_file *watched[2]; /* the file of each watch */
	const dupscan_file *written_file; /* the one written, NULL when not known */
};

#define KEPT_INIT { -1, { 0 }, -1, false, false, { -1, -1 }, 0, { NULL, NULL }, NULL }

/* ---- the duplicate's directory entry: its directory open, its name ---- */

struct slot {
	int dirfd;
	char *dir, *name;
	struct stat entry;  /* the entry itself (a symlink with -s) */
	struct stat file;   /* what it names: the entry, or a symlink's target */
	ino_t made_ino;     /* the link an action put at the name */
	int fd;             /* the regular file it holds, open; -1 for a symlink */
	char tmp[24];       /* a temporary name in dirfd, when one was made */
};

#define SLOT_INIT { -1, NULL, NULL, { 0 }, { 0 }, 0, -1, { 0 } }

/* dupscan itself just changed the inode open at fd: later checks of any of
 * f's names expect the ctime it has now. */
void ds_act_own_change(const dupscan_file *f, int fd);
/* st is f as scanned (ds_same_file()), with the ctime of dupscan's own last
 * change. @return 0 or DUPSCAN_E_CHANGED. */
int ds_act_as_scanned(const struct stat *st, const dupscan_file *f, unsigned flags);
/* Does f's filesystem keep one inode number a file (ds_inodes_trusted();
 * always for another host's file)? Where not, a pair is compared byte by
 * byte before any change, and one number does not make two names one file. */
bool ds_act_numbers_kept(const dupscan_file *f);
/* After ds_act_prepare(): DUPSCAN_E_UNTOLD when dup has keep's inode number
 * where numbers are not kept (it may be keep by another path: never removed
 * nor moved), else 0. */
int ds_act_untold(const dupscan_file *keep, const struct kept *k, const struct slot *d);
/* errno of a lookup as a result: gone or replaced by something else is
 * DUPSCAN_E_CHANGED, anything else -err. */
int ds_act_gone_or(int err);
/* Pin keep, open dup's entry, check both (and compare them when this run did
 * not). @return 0 or the reason to leave the pair alone. */
int ds_act_prepare(const dupscan_file *keep, const dupscan_file *dup, unsigned flags, struct kept *k,
		   struct slot *d);
void ds_act_release(struct kept *k, struct slot *d);
/* keep's path still reaches the pinned inode, unchanged and not written since. */
int ds_act_kept_holds(const dupscan_file *keep, struct kept *k, unsigned flags);
/* The next name of the sequence *x (0: start one): ".dupscan-tmp-" and six
 * characters, the one spelling of the temporary names an action makes (the
 * walk reports names so spelled as left over). */
#define DS_TEMP_NAME_SIZE 20
void ds_act_temp_name(char name[DS_TEMP_NAME_SIZE], uint64_t *x);
/* A fresh temporary name in d's directory, made by create(). @return 0 or -errno. */
int ds_act_temp_in(struct slot *d, int (*create)(struct slot *d, const void *arg), const void *arg);
/* rename(2) that never replaces (looks first where the filesystem cannot
 * promise it). @return 0, or -1 with errno. */
int ds_act_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to);
/* The entry now at d->tmp is the one checked. @return 0 or DUPSCAN_E_CHANGED. */
int ds_act_tmp_holds_dup(const dupscan_file *dup, const struct slot *d, unsigned flags);
/* dup's entry set aside at d->tmp and checked, with keep still holding;
 * otherwise put back. */
int ds_act_hide_and_check(const dupscan_file *keep, const dupscan_file *dup, struct kept *k, struct slot *d,
			  unsigned flags);
/* The duplicate's content, still open, written back at its name. @return DUPSCAN_E_CHANGED. */
int ds_act_put_back_copy(struct slot *d, bool over_own_symlink);
/* Swap d->tmp and d->name. @return 1 swapped, 0 when the filesystem cannot, -errno. */
int ds_act_swap_in(struct slot *d);

/* access.c: 0 when b (open at fb, or at path pb when fb < 0; stat b) has a's
 * owner, group, permission bits, POSIX ACL and security labels; else the
 * first that differs (DUPSCAN_E_ACCESS_*) or -errno. */
int ds_access_differs(int fa, const char *pa, const struct stat *a, int fb, const char *pb, const struct stat *b);

/* readers.c: dup (open in d) is removed or moved away only when everyone
 * who may read it could read keep (asked once per reader and kept file).
 * @return 0, DUPSCAN_E_ACCESS_READ, DUPSCAN_E_ACCESS_UNTOLD or a change. */
int ds_access_owner_reads(const dupscan_file *keep, const struct kept *k, const struct slot *d);

#endif /* DUPSCAN_ACTION_H */

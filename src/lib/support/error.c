/* SPDX-License-Identifier: MIT */
/* error.c: the version and build, error codes to text, and per-path reports
 * to the caller's callback. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "dupscan_config.h"

DUPSCAN_API const char *dupscan_version(void)
{
	return DUPSCAN_VERSION_STRING;
}

DUPSCAN_API unsigned dupscan_features(void)
{
	return DUPSCAN_THREADS ? DUPSCAN_FEATURE_THREADS : 0;
}

DUPSCAN_API const char *dupscan_strerror(int code)
{
	switch (code) {
	case 0: return "Success";
	case DUPSCAN_E_CHANGED: return "File changed during the scan";
	case DUPSCAN_E_NOTREG: return "Not a regular file or directory";
	case DUPSCAN_E_STATE: return "Call not allowed in the scan's current state";
	case DUPSCAN_E_OPTION: return "Unknown option or value out of range";
	case DUPSCAN_E_SHORT: return "File ended before its scanned size";
	case DUPSCAN_E_CANCELED: return "Scan canceled";
	case DUPSCAN_E_ALREADY: return "Already the same file";
	case DUPSCAN_E_SAME_ENTRY: return "Both paths name the same directory entry";
	case DUPSCAN_E_DIFFERS: return "The contents differ";
	case DUPSCAN_E_CACHE: return "Hash cache damaged or of another version: ignored, and rewritten";
	case DUPSCAN_E_PROTECTED: return "Under a protected path: left as it is";
	case DUPSCAN_E_PROTOCOL: return "The remote side broke the protocol or speaks another version of it";
	case DUPSCAN_E_REMOTE: return "The remote side went away, fell silent or failed";
	case DUPSCAN_E_REMOTE_FILE: return "On another host: only local files are changed";
	case DUPSCAN_E_CHANGED_TYPE: return "Changed since the scan: no longer a regular file";
	case DUPSCAN_E_CHANGED_INODE: return "Changed since the scan: its name leads to another file, or to none";
	case DUPSCAN_E_CHANGED_SIZE: return "Changed since the scan: its size";
	case DUPSCAN_E_CHANGED_MTIME: return "Changed since the scan: its modification time";
	case DUPSCAN_E_CHANGED_CTIME: return "Changed since the scan: its inode (ctime; its mtime as it was)";
	case DUPSCAN_E_CHANGED_WRITTEN: return "Written to while the action ran";
	case DUPSCAN_E_TOO_MANY: return "More pairs of directories to weigh than files: many directories hold copies of the same files";
	case DUPSCAN_E_ACCESS_OWNER: return "Its owner differs from the kept file's: a link would change who may read it";
	case DUPSCAN_E_ACCESS_GROUP: return "Its group differs from the kept file's: a link would change who may read it";
	case DUPSCAN_E_ACCESS_MODE: return "Its mode differs from the kept file's: a link would change who may read it";
	case DUPSCAN_E_ACCESS_ACL: return "Its ACL differs from the kept file's: a link would change who may read it";
	case DUPSCAN_E_ACCESS_LABEL: return "Its security labels differ from the kept file's: a link would change who may read it";
	case DUPSCAN_E_ACCESS_READ: return "Someone who may read it could not read the kept file: they would lose this content";
	case DUPSCAN_E_ACCESS_UNTOLD: return "Another user's, kept on another host: whether they could read it there cannot be told";
	case DUPSCAN_E_REFERENCE: return "A reference path could not be scanned: no file can be called missing from it";
	case DUPSCAN_E_MEMORY: return "Past the memory budget (--max-memory), where every file's record must be held: not with directory sets, unique or missing files";
	case DUPSCAN_E_NOT_CACHE: return "Not a dupscan hash cache: left as it is, no cache used";
	case DUPSCAN_E_TWO_SETS: return "One file (the same device and inode) in two sets of the report";
	case DUPSCAN_E_PAYLOAD_ONLY: return "The same picture or sound with other tags: not linked (a link would lose one file's tags)";
	case DUPSCAN_E_LINK_UNCHECKED: return "Hard links cannot be checked on a filesystem that does not keep inode numbers: not linked";
	case DUPSCAN_E_UNTOLD: return "One inode number on a filesystem that does not keep them: may be the kept file itself";
	case DUPSCAN_E_LEFTOVER: return "Temporary name left by an interrupted dupscan action (check it, then remove it)";
	default: break;
	}
	/* strerror() may use a static buffer but its result for known errno
	 * values is a constant string in glibc and musl */
	if (code < 0 && code > -4096)
		return strerror(-code);
	return "Unknown error";
}

bool ds_is_change(int code)
{
	return code == DUPSCAN_E_CHANGED || (code <= DUPSCAN_E_CHANGED_TYPE && code >= DUPSCAN_E_CHANGED_WRITTEN);
}

void ds_report(struct ds_core *s, const char *path, int code)
{
	s->errors++;
	if (s->cb.on_error)
		s->cb.on_error(s->cb.error_user, path, code);
}

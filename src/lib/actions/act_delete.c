/* SPDX-License-Identifier: MIT */
/* act_delete.c: a duplicate removed, set aside first and taken back if
 * anything changed (dupscan_remove_duplicate()). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"

DUPSCAN_API int dupscan_remove_duplicate(const dupscan_file *keep, const dupscan_file *dup, unsigned flags)
{
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	int rc = ds_act_prepare(keep, dup, flags, &k, &d);
	if (rc == 0)
		rc = ds_act_untold(keep, &k, &d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_IGNORE_ACCESS))
		rc = ds_access_owner_reads(keep, &k, &d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_DRY_RUN))
		rc = ds_act_hide_and_check(keep, dup, &k, &d, flags);
	if (rc == 0 && !(flags & DUPSCAN_ACT_DRY_RUN)) {
		if (unlinkat(d.dirfd, d.tmp, 0) != 0) {
			rc = -errno;
			if (ds_act_rename_noreplace(d.dirfd, d.tmp, d.dirfd, d.name) == 0)
				d.tmp[0] = '\0';
		} else {
			d.tmp[0] = '\0';
			ds_act_own_change(dup, d.fd);
			/* keep replaced in the instant between its check and the unlink:
			 * the duplicate's content, still open, comes back (a symlink
			 * held none) */
			if (d.fd >= 0 && ds_act_kept_holds(keep, &k, flags) != 0)
				rc = ds_act_put_back_copy(&d, false);
		}
	}
	ds_act_release(&k, &d);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/* inodes.c: may two paths of one inode number on a device be called one
 * file? Looked up once a device from its mount (support/mounts.c), and
 * withdrawn for the rest of the scan once the walk met two paths of one
 * number, one of them the file's only name. Kept with the records, which
 * ask it most (their identity, their links); the reading stage and the
 * actions ask it too, from above. */
#include <stdlib.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

/* The scan's entry for dev, made the first time it is asked (NULL: out of
 * memory, the answer *kept all the same). */
static struct ds_inos *lookup(struct ds_tree *s, uint64_t dev, bool *kept)
{
	struct ds_tree *t = s;
	for (size_t i = 0; i < t->ninos; i++)
		if (t->inos[i].dev == dev) {
			*kept = t->inos[i].kept;
			return &t->inos[i];
		}
	*kept = ds_inode_numbers_kept(s->core->mountinfo, dev);
	/* out of memory: asked again next time, the same answer */
	if (DS_GROW(t->inos, t->cap_inos, t->ninos + 1))
		return NULL;
	t->inos[t->ninos] = (struct ds_inos){ dev, *kept };
	return &t->inos[t->ninos++];
}

bool ds_inodes_trusted(struct ds_tree *s, uint64_t dev)
{
	bool kept;
	lookup(s, dev, &kept);
	return kept;
}

bool ds_inodes_trusted_now(const struct ds_tree *s, uint64_t dev)
{
	for (size_t i = 0; i < s->ninos; i++)
		if (s->inos[i].dev == dev)
			return s->inos[i].kept;
	return ds_inode_numbers_kept(s->core->mountinfo, dev);
}

void ds_inodes_distrust(struct ds_tree *s, uint64_t dev)
{
	bool kept;
	struct ds_inos *e = lookup(s, dev, &kept);
	if (e)
		e->kept = false;
}

/* SPDX-License-Identifier: MIT */
/* progress.c: what the run has done and has left in its phase, for the
 * progress callbacks. The run's thread sets the phase and settles files;
 * every reading thread counts the bytes it reads; a report may come from
 * any of them, one at a time. */
#include "internal.h"
#include "support/support.h"


void ds_progress_report(struct ds_core *s)
{
	struct ds_progress *p = &s->progress;
	bool idle = false;
	if (!s->cb.on_bytes || !atomic_compare_exchange_strong(&p->busy, &idle, true))
		return; /* another thread is reporting: this one is not needed */
	struct dupscan_progress r = { .phase = atomic_load(&p->phase) };
	r.files_done = atomic_load(&p->files_done);
	r.files_total = atomic_load(&p->files_total);
	if (r.phase == DUPSCAN_PHASE_WALK) {
		r.bytes_done = atomic_load(&p->found);
	} else {
		r.bytes_done = atomic_load(&p->read) - atomic_load(&p->base);
		r.bytes_total = r.bytes_done + atomic_load(&p->left);
	}
	s->cb.on_bytes(s->cb.bytes_user, &r);
	atomic_store(&p->busy, false);
}

void ds_progress_phase(struct ds_core *s, int phase, uint64_t files, uint64_t bytes)
{
	struct ds_progress *p = &s->progress;
	if (p->whole)
		return; /* (one phase for the bands: a meter's clock and rate run on) */
	atomic_store(&p->phase, phase);
	atomic_store(&p->files_done, 0);
	atomic_store(&p->files_total, files);
	atomic_store(&p->left, bytes);
	atomic_store(&p->base, atomic_load(&p->read));
	ds_progress_report(s);
}

void ds_progress_settled(struct ds_core *s, uint64_t files, uint64_t bytes)
{
	struct ds_progress *p = &s->progress;
	/* (in bands, a file is counted once: when matched, not when its first
	 * block is read ahead in hdd mode) */
	if (!p->whole || !atomic_load(&p->first))
		atomic_fetch_add(&p->files_done, files);
	/* a file read twice (hdd mode, a bucket larger than --io-memory) is
	 * settled twice: what is left stops at nothing */
	uint64_t left = atomic_load(&p->left);
	while (!atomic_compare_exchange_weak(&p->left, &left, left > bytes ? left - bytes : 0))
		;
}

void ds_progress_whole(struct ds_core *s, uint64_t files, uint64_t bytes)
{
	ds_progress_phase(s, DUPSCAN_PHASE_MATCH, files, bytes);
	s->progress.whole = true;
}

void ds_progress_whole_end(struct ds_core *s)
{
	s->progress.whole = false;
	ds_progress_end(s);
}

void ds_progress_end(struct ds_core *s)
{
	struct ds_progress *p = &s->progress;
	if (p->whole)
		return;
	atomic_store(&p->left, 0);
	if (atomic_load(&p->phase) == DUPSCAN_PHASE_WALK)
		atomic_store(&p->files_total, atomic_load(&p->files_done));
	else
		atomic_store(&p->files_done, atomic_load(&p->files_total));
	ds_progress_report(s);
}

void ds_progress_found(struct ds_core *s, uint64_t size)
{
	struct ds_progress *p = &s->progress;
	atomic_fetch_add(&p->found, size);
	uint64_t n = atomic_fetch_add(&p->files_done, 1) + 1;
	if ((n & 1023) == 0)
		ds_progress_report(s);
}

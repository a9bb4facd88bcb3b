/* SPDX-License-Identifier: MIT */
/* remote.c: paths scanned on other hosts (dupscan_add_remote()): each
 * side asked for its scan, its results taken (its sets and the sizes of its
 * unique files), its files named when wanted and their handles, its kept
 * files re-checked; the matching across hosts is across.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote.h"
#include "records/spill.h"
#include "sets/sets.h"

/* label ":" path[0..len), malloc'ed: how a remote path is shown. */
static char *on_host(const char *label, const char *path, size_t len)
{
	size_t ll = strlen(label);
	char *p = malloc(ll + len + 2);
	if (p) {
		memcpy(p, label, ll);
		p[ll] = ':';
		memcpy(p + ll + 1, path, len);
		p[ll + 1 + len] = '\0';
	}
	return p;
}

/* A remote's files' tables: a tree that is never walked, whose directories
 * name the owner's arguments (owner) and whose files are on host r. */
static struct ds_mirror *mirror_new(const struct ds_tree *owner, struct ds_remote *r)
{
	struct ds_mirror *m = calloc(1, sizeof(*m));
	if (m) {
		ds_tree_init(&m->tree);
		ds_arena_init(&m->tree.out);
		m->tree.core = &m->core;
		m->tree.owner = owner;
		m->tree.host = r;
	}
	return m;
}

static void mirror_free(struct ds_mirror *m)
{
	if (!m)
		return;
	ds_tree_free(&m->tree);
	ds_arena_free(&m->tree.out);
	free(m);
}

int ds_add_remote(struct ds_hosts *s, const char *label, int read_fd, int write_fd,
				   const char *path, int recurse)
{
	if (!s || !label || !*label || !path || !*path || read_fd < 0 || write_fd < 0)
		return -EINVAL;
	if (s->core->ran)
		return DUPSCAN_E_STATE;
	struct ds_remote **rs = realloc(s->remotes, (s->nremotes + 1) * sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	s->remotes = rs;
	struct ds_remote *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->recurse = recurse != 0;
	r->label = strdup(label);
	r->path = strdup(path);
	r->shown = on_host(label, path, strlen(path));
	if (!r->label || !r->path || !r->shown || !(r->mirror = mirror_new(s->tree, r)))
		goto nomem;
	int arg = ds_add_arg(s->tree, r->shown, recurse != 0, true);
	if (arg < 0)
		goto nomem;
	r->arg = (uint32_t)arg;
	ds_chan_init(&r->ch, read_fd, write_fd, r->shown, DS_WIRE_TIMEOUT_MS);
	s->core->remote = true;
	rs[s->nremotes++] = r;
	return arg;
nomem:
	free(r->label);
	free(r->path);
	free(r->shown);
	mirror_free(r->mirror);
	free(r);
	return -ENOMEM;
}

/* The options that decide which files match, as the server should take them. */
static void put_options(const struct ds_hosts *s, struct ds_wr *w)
{
	const struct { int opt; int64_t val; } o[] = {
		{ DUPSCAN_OPT_ZERO_MATCH, s->core->opt.zero_match }, { DUPSCAN_OPT_HARD_LINKS, s->core->opt.hard_links },
		{ DUPSCAN_OPT_FOLLOW_SYMLINKS, s->core->opt.follow_symlinks }, { DUPSCAN_OPT_NO_HIDDEN, s->core->opt.no_hidden },
		{ DUPSCAN_OPT_QUICK, s->core->opt.quick }, { DUPSCAN_OPT_PARTIAL_ONLY, s->core->opt.partial_only },
		{ DUPSCAN_OPT_MAX_DEPTH, s->core->opt.max_depth }, { DUPSCAN_OPT_DIRS, s->core->opt.dir_sets },
	};
	ds_wr_u64(w, sizeof(o) / sizeof(o[0]));
	for (size_t i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
		ds_wr_u64(w, (uint64_t)o[i].opt);
		ds_wr_s64(w, o[i].val);
	}
}

/* Is every path of the other kind than r (reference or not) on this host?
 * Then r needs only files of the sizes those have (sizes.c): a reference
 * the other paths' sizes, another path the references'. */
static bool other_kind_here(const struct ds_hosts *s, const struct ds_remote *r)
{
	bool ref = s->tree->args[r->arg].reference;
	if (!s->tree->references)
		return false;
	for (uint32_t a = 0; a < s->tree->nargs; a++)
		if (s->tree->args[a].remote && s->tree->args[a].reference != ref)
			return false;
	return true;
}

int ds_remote_start(struct ds_hosts *s)
{
	struct ds_wr w = { 0 };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->nremotes; i++) {
		struct ds_remote *r = s->remotes[i];
		r->ch.timeout_ms = s->remote_timeout_ms;
		r->want_sizes = other_kind_here(s, r);
		ds_wire_hello(&w, r->want_sizes ? DS_WIRE_SIZES : 0);
		rc = ds_chan_send(&r->ch, &w);
		if (rc == 0) {
			ds_wr_begin(&w, DS_W_SCAN);
			put_options(s, &w);
			ds_wr_str(&w, r->path, strlen(r->path));
			ds_wr_u64(&w, r->recurse);
			ds_wr_u64(&w, (uint64_t)s->remote_timeout_ms);
			rc = ds_chan_send(&r->ch, &w);
		}
		/* one that cannot be reached fails the run once the local scan is done */
		rc = rc == -ENOMEM ? rc : 0;
		r->started = true;
	}
	ds_wr_free(&w);
	return rc;
}

/* ---- the results a side sends ---- */

int ds_remote_recv(struct ds_remote *r, int *type, struct ds_rd *rd)
{
	int rc;
	/* a server at long work says it is alive: that is all it says */
	while ((rc = ds_chan_recv(&r->ch, type, rd)) == 0 && *type == DS_W_ALIVE)
		;
	return rc;
}

int ds_remote_malformed(struct ds_remote *r, const char *what)
{
	ds_chan_fail(&r->ch, "malformed %s", what);
	return DUPSCAN_E_PROTOCOL;
}

/* A directory's or a file's name: one component. */
static bool good_name(const char *n, size_t len)
{
	return len > 0 && len <= 4096 && !memchr(n, '/', len) && !(len == 1 && n[0] == '.') &&
	       !(len == 2 && n[0] == '.' && n[1] == '.');
}

static int take_dirs(struct ds_remote *r, struct ds_rd *rd)
{
	while (ds_rd_more(rd)) {
		uint64_t parent = ds_rd_max(rd, r->nwdir);
		size_t len;
		const char *name = ds_rd_str(rd, &len);
		if (rd->bad || (parent ? !good_name(name, len) : len > 65536))
			return ds_remote_malformed(r, "directory");
		if (!parent && len == 0) {
			/* a bare file name's directory there: its working directory */
			name = ".";
			len = 1;
		}
		if (DS_GROW(r->wdir, r->capwdir, r->nwdir + 1))
			return -ENOMEM;
		struct stat st = { 0 };
		uint32_t d;
		int rc;
		if (parent == 0) {
			/* a root: shown as HOST:PATH */
			char *shown = on_host(r->label, name, len);
			if (!shown)
				return -ENOMEM;
			rc = ds_add_dir(&r->mirror->tree, shown, strlen(shown), DS_NONE, r->arg, &st, &d);
			free(shown);
		} else {
			rc = ds_add_dir(&r->mirror->tree, name, len, r->wdir[parent - 1], r->arg, &st, &d);
		}
		if (rc)
			return rc;
		r->wdir[r->nwdir++] = d;
	}
	return 0;
}

/* A file entry: its record in the mirror. @return 0, -ENOMEM or DUPSCAN_E_PROTOCOL. */
static int take_file(struct ds_remote *r, struct ds_rd *rd, uint32_t *rec)
{
	uint64_t dir = ds_rd_max(rd, r->nwdir ? r->nwdir - 1 : 0);
	size_t len;
	const char *name = ds_rd_str(rd, &len);
	struct stat st = { 0 };
	st.st_size = (off_t)ds_rd_max(rd, INT64_MAX);
	st.st_dev = (dev_t)ds_rd_u64(rd);
	st.st_ino = (ino_t)ds_rd_u64(rd);
	st.st_mode = (mode_t)ds_rd_max(rd, UINT32_MAX);
	st.st_uid = (uid_t)ds_rd_max(rd, UINT32_MAX);
	st.st_gid = (gid_t)ds_rd_max(rd, UINT32_MAX);
	int64_t mt = ds_rd_s64(rd), ct = ds_rd_s64(rd);
	if (rd->bad || r->nwdir == 0 || !good_name(name, len) || !S_ISREG(st.st_mode))
		return ds_remote_malformed(r, "file entry");
	st.st_mtim = (struct timespec){ mt / 1000000000, mt % 1000000000 };
	st.st_ctim = (struct timespec){ ct / 1000000000, ct % 1000000000 };
	st.st_nlink = 1;
	int rc = ds_add_rec(&r->mirror->tree, name, len, r->wdir[dir], &st);
	*rec = r->mirror->tree.nrecs - 1;
	if (rc == 0 && DS_GROW(r->id_of, r->capid, r->mirror->tree.nrecs))
		rc = -ENOMEM;
	return rc;
}

static int take_set(struct ds_remote *r, struct ds_rd *rd)
{
	uint64_t fresh = ds_rd_max(rd, 1);
	if (rd->bad || r->nuniq || (!fresh && r->nsets == 0))
		return ds_remote_malformed(r, "set");
	if (fresh) {
		if (DS_GROW(r->sets, r->capsets, r->nsets + 1))
			return -ENOMEM;
		r->sets[r->nsets++] = (struct ds_rset){ r->nset, 0 };
	}
	while (ds_rd_more(rd)) {
		uint32_t rec;
		if (DS_GROW(r->rec_of, r->capset, r->nset + 1))
			return -ENOMEM;
		int rc = take_file(r, rd, &rec);
		if (rc)
			return rc;
		r->id_of[rec] = r->nset;
		r->rec_of[r->nset++] = rec;
		r->sets[r->nsets - 1].n++;
	}
	return 0;
}

static int take_uniques(struct ds_remote *r, struct ds_rd *rd)
{
	if (ds_rd_u64(rd) != r->nset + r->nuniq || rd->bad)
		return ds_remote_malformed(r, "unique files");
	while (ds_rd_more(rd)) {
		if (DS_GROW(r->usize, r->capu, r->nuniq + 1))
			return -ENOMEM;
		r->usize[r->nuniq++] = ds_rd_max(rd, INT64_MAX);
	}
	return rd->bad ? ds_remote_malformed(r, "unique files") : 0;
}

/* A file the other side could not read: reported here as HOST:PATH. */
static int take_error(struct ds_hosts *s, struct ds_remote *r, struct ds_rd *rd)
{
	size_t len;
	const char *path = ds_rd_str(rd, &len);
	uint64_t code = ds_rd_max(rd, 100000);
	if (rd->bad || ds_rd_more(rd) || code == 0)
		return ds_remote_malformed(r, "error report");
	char *shown = on_host(r->label, path, len);
	if (!shown)
		return -ENOMEM;
	/* the path asked for itself: its tree is not there */
	if (len == strlen(r->path) && memcmp(path, r->path, len) == 0)
		s->tree->args[r->arg].unread = true;
	ds_report(s->core, shown, -(int)code);
	free(shown);
	return 0;
}

static int take_tree(struct ds_remote *r, struct ds_rd *rd)
{
	while (ds_rd_more(rd)) {
		struct ds_tent e = { 0 };
		e.dir = (uint32_t)ds_rd_max(rd, r->nwdir ? r->nwdir - 1 : 0);
		e.what = (uint32_t)ds_rd_max(rd, 3);
		if (!rd->bad && e.what == 0)
			e.id = ds_rd_max(rd, r->nset + r->nuniq ? r->nset + r->nuniq - 1 : 0);
		if (rd->bad || r->nwdir == 0 || (e.what == 0 && r->nset + r->nuniq == 0))
			return ds_remote_malformed(r, "tree");
		if (DS_GROW(r->tent, r->captent, r->ntent + 1))
			return -ENOMEM;
		r->tent[r->ntent++] = e;
	}
	return 0;
}

static int check_done(struct ds_remote *r, struct ds_rd *rd)
{
	uint64_t nset = ds_rd_u64(rd), nuniq = ds_rd_u64(rd), nsets = ds_rd_u64(rd);
	ds_rd_u64(rd);
	if (rd->bad || ds_rd_more(rd) || nset != r->nset || nuniq != r->nuniq || nsets != r->nsets)
		return ds_remote_malformed(r, "end of results (counts disagree)");
	for (size_t i = 0; i < r->nsets; i++)
		if (r->sets[i].n < 2)
			return ds_remote_malformed(r, "set (fewer than two files)");
	return 0;
}

int ds_remote_greeting(struct ds_remote *r)
{
	if (r->greeted)
		return r->greet_rc;
	int type;
	struct ds_rd rd;
	int rc = ds_chan_recv(&r->ch, &type, &rd);
	if (rc == 0 && type != DS_W_HELLO)
		rc = ds_remote_malformed(r, "greeting");
	if (rc == 0)
		rc = ds_wire_hello_check(&r->ch, &rd, &r->features);
	r->greeted = true;
	r->greet_rc = rc;
	return rc;
}

/* The other side's greeting and results, ALIVE frames between them. */
int ds_remote_collect(struct ds_hosts *s, struct ds_remote *r)
{
	int type;
	struct ds_rd rd;
	if (r->collected)
		return 0;
	int rc = ds_remote_greeting(r);
	while (rc == 0 && !r->done) {
		if ((rc = ds_chan_recv(&r->ch, &type, &rd)) != 0)
			break;
		switch (type) {
		case DS_W_ALIVE: break;
		case DS_W_DIR: rc = take_dirs(r, &rd); break;
		case DS_W_SET: rc = take_set(r, &rd); break;
		case DS_W_UNIQ: rc = take_uniques(r, &rd); break;
		case DS_W_ERR: rc = take_error(s, r, &rd); break;
		case DS_W_TREE: rc = s->core->opt.dir_sets ? take_tree(r, &rd) : ds_remote_malformed(r, "tree (not asked for)"); break;
		case DS_W_DONE: rc = check_done(r, &rd); r->done = rc == 0; break;
		default: rc = ds_remote_malformed(r, "frame among the results"); break;
		}
		if (s->core->canceled)
			rc = DUPSCAN_E_CANCELED;
	}
	if (rc == 0 && !(r->matched = calloc(r->nuniq ? r->nuniq : 1, 1)))
		rc = -ENOMEM;
	if (rc == 0 && DS_GROW(r->rec_of, r->capset, r->nset + r->nuniq + 1))
		rc = -ENOMEM;
	for (uint64_t i = r->nset; rc == 0 && i < r->nset + r->nuniq; i++)
		r->rec_of[i] = DS_NONE; /* named when asked for */
	if (rc && rc != -ENOMEM && rc != DUPSCAN_E_CANCELED)
		ds_remote_report(s, r, rc);
	r->collected = rc == 0;
	return rc;
}

int ds_remote_early(struct ds_hosts *s)
{
	int rc = 0;
	size_t n = 0, cap = 0;
	uint64_t held = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		rc = ds_remote_collect(s, s->remotes[k]);
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		/* (what it holds here a file: its size, its mark, its record's
		 * number; a set's files are named records) */
		held += r->nuniq * 13 + r->nset * 64;
		if (DS_GROW(s->xsizes, cap, n + r->nuniq + r->nsets))
			rc = -ENOMEM;
		for (uint64_t i = 0; rc == 0 && i < r->nuniq; i++)
			s->xsizes[n++] = r->usize[i];
		for (size_t i = 0; rc == 0 && i < r->nsets; i++)
			s->xsizes[n++] = ds_rec_size(&r->mirror->tree, ds_rec(&r->mirror->tree, r->rec_of[r->sets[i].first]));
	}
	if (rc == 0)
		rc = ds_sort_u64_set(s->xsizes, &n);
	if (rc == 0) {
		s->nxsizes = n;
		/* (unless the caller keeps more: DUPSCAN_OPT_KEEP_UNIQUE) */
		if (s->core->opt.keep_unique == DUPSCAN_KEEP_NONE)
			ds_spill_keep_sizes(s->tree, s->xsizes, n);
		ds_spill_hold(s->tree, 0, held + cap * sizeof(*s->xsizes));
	}
	return rc;
}

/* ---- the sets across hosts ---- */

/* Name files ids[0..n) of r (unique there, not named yet): NAMES, answered
 * by DIR frames, NAMES frames and END. */
static int fetch_names(struct ds_remote *r, struct ds_wr *w, const uint64_t *ids, size_t n)
{
	ds_wr_begin(w, DS_W_NAMES);
	for (size_t i = 0; i < n; i++)
		ds_wr_u64(w, ids[i]);
	int rc = ds_chan_send(&r->ch, w);
	while (rc == 0) {
		int type;
		struct ds_rd rd;
		if ((rc = ds_remote_recv(r, &type, &rd)) != 0)
			break;
		if (type == DS_W_DIR) {
			rc = take_dirs(r, &rd);
		} else if (type == DS_W_NAMES) {
			while (rc == 0 && ds_rd_more(&rd)) {
				uint64_t id = ds_rd_u64(&rd);
				uint32_t rec;
				if (rd.bad || id < r->nset || id >= r->nset + r->nuniq || r->rec_of[id] != DS_NONE)
					return ds_remote_malformed(r, "names");
				if ((rc = take_file(r, &rd, &rec)) == 0) {
					r->rec_of[id] = rec;
					r->id_of[rec] = id;
				}
			}
		} else if (type == DS_W_END) {
			if (ds_rd_max(&rd, 0) || rd.bad)
				return ds_remote_malformed(r, "end of names");
			for (size_t i = 0; i < n; i++)
				if (r->rec_of[ids[i]] == DS_NONE)
					return ds_remote_malformed(r, "names (a file asked for left out)");
			return 0;
		} else {
			rc = ds_remote_malformed(r, "answer to a names request");
		}
	}
	return rc;
}

/* Name every file of r that wanted(r, id) says is needed, in batches. */
static int name_all(struct ds_remote *r, struct ds_wr *w, bool (*wanted)(const struct ds_remote *, uint64_t))
{
	uint64_t ids[DS_WIRE_BATCH / 2];
	size_t k = 0;
	int rc = 0;
	for (uint64_t id = r->nset; rc == 0 && id <= r->nset + r->nuniq; id++) {
		if (id < r->nset + r->nuniq && r->rec_of[id] == DS_NONE && wanted(r, id))
			ids[k++] = id;
		if (k && (k == sizeof(ids) / sizeof(ids[0]) || id == r->nset + r->nuniq)) {
			rc = fetch_names(r, w, ids, k);
			k = 0;
		}
	}
	return rc;
}

static bool matched(const struct ds_remote *r, uint64_t id)
{
	return r->matched[id - r->nset];
}

int ds_remote_name_matched(struct ds_remote *r, struct ds_wr *w)
{
	return name_all(r, w, matched);
}

static bool unmatched(const struct ds_remote *r, uint64_t id)
{
	return !r->matched[id - r->nset];
}

/* Is path (HOST:PATH...) at or under one of r's protected paths? */
static bool remote_protected(const struct ds_remote *r, const char *path)
{
	for (size_t i = 0; i < r->nprotect; i++) {
		size_t n = strlen(r->protect[i]);
		if (strncmp(path, r->protect[i], n) == 0 && (path[n] == '\0' || path[n] == '/' || r->protect[i][n - 1] == '/'))
			return true;
	}
	return false;
}

/* The handle of r's file number id (named). */
int ds_remote_file(struct ds_remote *r, uint64_t id, struct dupscan_file *f)
{
	uint32_t rec = r->rec_of[id];
	char *p = ds_rec_path_dup(&r->mirror->tree, rec);
	if (!p)
		return -ENOMEM;
	if (remote_protected(r, p))
		ds_rec(&r->mirror->tree, rec)->flags |= DS_F_PROTECTED;
	*f = ds_file_of(&r->mirror->tree, p, rec, ds_rel_offset(&r->mirror->tree, ds_rec_dir(&r->mirror->tree, rec)));
	return 0;
}

/* Say why a side failed, as HOST:PATH: reason. */
void ds_remote_report(struct ds_hosts *s, struct ds_remote *r, int rc)
{
	char msg[1200];
	snprintf(msg, sizeof(msg), "%s: %s", r->shown, r->ch.why[0] ? r->ch.why : dupscan_strerror(rc));
	ds_report(s->core, msg, rc);
}

int ds_remote_uniques(struct ds_hosts *s)
{
	struct ds_wr w = { 0 };
	int rc = 0;
	size_t more = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		rc = name_all(r, &w, unmatched);
		if (rc && rc != -ENOMEM)
			ds_remote_report(s, r, rc);
		for (uint64_t i = 0; i < r->nuniq; i++)
			more += !r->matched[i];
	}
	ds_wr_free(&w);
	struct dupscan_file *u = rc ? NULL : realloc(s->results->uniques, (s->results->nuniques + more + 1) * sizeof(*u));
	if (!u)
		return rc ? rc : -ENOMEM;
	s->results->uniques = u;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		for (uint64_t i = 0; rc == 0 && i < r->nuniq; i++)
			if (!r->matched[i] && (rc = ds_remote_file(r, r->nset + i, &s->results->uniques[s->results->nuniques])) == 0)
				s->results->nuniques++;
	}
	s->remote_uniques = false;
	return rc ? rc : ds_sort(s->results->uniques, s->results->nuniques, sizeof(*s->results->uniques), ds_cmp_file, s);
}

static bool unheld(const struct ds_remote *r, uint64_t id)
{
	return !r->held[id];
}

/* r's files the sets hold: r->held. @return 0 or -ENOMEM. */
static int hold(const struct ds_hosts *s, struct ds_remote *r)
{
	r->held = calloc(r->nset + r->nuniq + 1, 1);
	if (!r->held)
		return -ENOMEM;
	for (size_t i = 0; i < s->results->nsets; i++)
		for (size_t k = 0; k < s->results->sets[i].count; k++)
			if (ds_remote_of(&s->results->sets[i].files[k]) == r)
				r->held[r->id_of[s->results->sets[i].files[k].idx]] = 1;
	return 0;
}

uint64_t ds_remote_asked(const struct ds_hosts *s, const struct ds_remote *r)
{
	return s->tree->args[r->arg].reference ? 0 : r->nset + r->nuniq;
}

int ds_remote_missing(struct ds_hosts *s, struct ds_remote *r)
{
	if (s->tree->args[r->arg].reference)
		return 0;
	struct ds_wr w = { 0 };
	int rc = hold(s, r);
	if (rc == 0 && (rc = name_all(r, &w, unheld)) != 0 && rc != -ENOMEM)
		ds_remote_report(s, r, rc);
	ds_wr_free(&w);
	uint64_t more = 0;
	for (uint64_t id = 0; rc == 0 && id < r->nset + r->nuniq; id++)
		more += !r->held[id];
	struct dupscan_file *m = rc ? NULL : realloc(s->results->missing, (s->results->nmissing + more + 1) * sizeof(*m));
	rc = rc ? rc : m ? 0 : -ENOMEM;
	if (m)
		s->results->missing = m;
	for (uint64_t id = 0; rc == 0 && id < r->nset + r->nuniq; id++)
		if (!r->held[id] && (rc = ds_remote_file(r, id, &s->results->missing[s->results->nmissing])) == 0)
			s->results->nmissing++;
	free(r->held);
	r->held = NULL;
	return rc;
}

int ds_remote_protect(struct ds_hosts *s, const char *path)
{
	for (size_t k = 0; k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		size_t ll = strlen(r->label);
		if (strncmp(path, r->label, ll) != 0 || path[ll] != ':')
			continue;
		char **p = realloc(r->protect, (r->nprotect + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->protect = p;
		if (!(p[r->nprotect] = strdup(path)))
			return -ENOMEM;
		r->nprotect++;
		return 0;
	}
	return 1;
}

void ds_remote_free(struct ds_hosts *s)
{
	struct ds_wr w = { 0 };
	for (size_t k = 0; k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		/* the server ends once told; a dead channel is not written to */
		if (r->started && !r->ch.dead) {
			ds_wr_begin(&w, DS_W_BYE);
			ds_chan_send(&r->ch, &w);
		}
		ds_chan_free(&r->ch);
		mirror_free(r->mirror);
		for (size_t i = 0; i < r->nprotect; i++)
			free(r->protect[i]);
		free(r->protect);
		free(r->label);
		free(r->path);
		free(r->shown);
		free(r->wdir);
		free(r->rec_of);
		free(r->usize);
		free(r->sets);
		free(r->matched);
		free(r->id_of);
		free(r->tent);
		free(r->tclass);
		free(r);
	}
	ds_wr_free(&w);
	free(s->remotes);
	free(s->xsizes);
	free(s->across);
	s->remotes = NULL;
	s->across = NULL;
	s->nremotes = s->nacross = 0;
}

struct ds_remote *ds_remote_of(const dupscan_file *f)
{
	return f ? f->tree->host : NULL;
}

int ds_remote_check(const dupscan_file *keep)
{
	struct ds_remote *r = ds_remote_of(keep);
	uint64_t id = r->id_of[keep->idx];
	struct ds_wr w = { 0 };
	ds_wr_begin(&w, DS_W_CHECK);
	ds_wr_u64(&w, id);
	int type, rc = ds_chan_send(&r->ch, &w);
	ds_wr_free(&w);
	struct ds_rd rd;
	if (rc == 0)
		rc = ds_remote_recv(r, &type, &rd);
	if (rc == 0) {
		uint64_t status = ds_rd_max(&rd, 100000);
		if (type != DS_W_END || rd.bad || ds_rd_more(&rd))
			rc = ds_remote_malformed(r, "answer to a check");
		else
			rc = -(int)status;
	}
	/* what its server saw changed, told with the file's HOST:PATH */
	return ds_is_change(rc) ? ds_refuse(keep, rc) : rc;
}

DUPSCAN_API const char *dupscan_file_host(const dupscan_file *f)
{
	struct ds_remote *r = ds_remote_of(f);
	return r ? r->label : NULL;
}

void ds_remote_bytes(const struct ds_hosts *s, uint64_t *received, uint64_t *sent)
{
	uint64_t in = 0, out = 0;
	for (size_t k = 0; s && k < s->nremotes; k++) {
		in += s->remotes[k]->ch.bytes_in;
		out += s->remotes[k]->ch.bytes_out;
	}
	if (received)
		*received = in;
	if (sent)
		*sent = out;
}

/* SPDX-License-Identifier: MIT */
/* serve.c: the remote side of a scan across hosts (dupscan_serve()): scan
 * the path the client names with this host's reading, send back the sets
 * found here and the sizes of the files left unique, then answer for files
 * by number only: their first block's or whole hash, their bytes, whether a
 * kept file is still the one scanned. Never writes a file; never opens one
 * the scan did not find. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serving.h"
#include "read/read.h"
#include "sets/sets.h"

/* ---- while scanning ---- */

static void on_error(void *user, const char *path, int code)
{
	struct serve *v = user;
	/* kept for after the scan: this may be any of the scan's threads'
	 * moments, and only the progress callback writes meanwhile */
	if (DS_GROW(v->errs, v->caperr, v->nerr + 1) != 0)
		return;
	char *p = strdup(path);
	if (p)
		v->errs[v->nerr++] = (struct serve_err){ p, code };
}

/* Records from on of tree t not of a size the client wants: left out, or
 * with DS_SIZES_KEEP settled as unique files, unread (sizes.c); settled
 * now, matching takes no record settled already. */
static void mark_sizes(struct serve *v, struct ds_tree *t, uint32_t from)
{
	for (uint32_t i = from; i < t->nrecs; i++) {
		struct ds_rec *r = ds_rec(t, i);
		if (!ds_sorted_has(v->want, v->nwant, ds_rec_size(t, r)))
			r->flags |= v->want_keep ? DS_F_SETTLED : DS_F_SKIPPED;
	}
}

/* Each band of a scan past its memory budget (records/spill.c), as it comes
 * back: the records the walk spilled were not there to be marked. */
static void mark_band(void *user, struct ds_tree *t, uint32_t from)
{
	mark_sizes(user, t, from);
}

/* Between the walk and the matching, with a client that sends them: only
 * files of the sizes it wants are matched. @return 0, -ENOMEM or the
 * channel's code. */
static int wanted_sizes(dupscan_scan *s, void *user)
{
	struct serve *v = user;
	/* as long as its walk takes: the channel closes if it goes away */
	int patience = v->ch.timeout_ms;
	v->ch.timeout_ms = -1;
	int rc = ds_wire_sizes_recv(&v->ch, &v->want, &v->nwant, &v->want_keep);
	v->ch.timeout_ms = patience;
	if (rc == 0)
		mark_sizes(v, &s->tree, 0);
	return rc;
}

static void on_bytes(void *user, const struct dupscan_progress *p)
{
	(void)p;
	ds_serve_alive(user);
}

/* The options a client may set: what decides which files match; how this
 * host reads is its own. */
static bool client_option(uint64_t opt)
{
	switch (opt) {
	case DUPSCAN_OPT_ZERO_MATCH: case DUPSCAN_OPT_HARD_LINKS: case DUPSCAN_OPT_FOLLOW_SYMLINKS:
	case DUPSCAN_OPT_NO_HIDDEN: case DUPSCAN_OPT_ONE_FILE_SYSTEM: case DUPSCAN_OPT_PERMISSIONS:
	case DUPSCAN_OPT_QUICK: case DUPSCAN_OPT_PARTIAL_ONLY: case DUPSCAN_OPT_MAX_DEPTH:
		return true;
	default:
		return false;
	}
}

/* SCAN: options, the path, recurse, the client's patience. */
static int take_scan(struct serve *v, struct ds_rd *r)
{
	uint64_t n = ds_rd_max(r, 64);
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		uint64_t opt = ds_rd_u64(r);
		int64_t val = ds_rd_s64(r);
		/* directories are keyed by the client, across hosts: it wants the tree */
		if (opt == DUPSCAN_OPT_DIRS)
			v->structure = val != 0;
		/* one this side does not know, or not the client's to set: dropped */
		if (!r->bad && client_option(opt) && dupscan_set_option(v->s, (int)opt, val) != 0) {
			ds_chan_fail(&v->ch, "option %llu: value %lld refused", (unsigned long long)opt, (long long)val);
			return DUPSCAN_E_PROTOCOL;
		}
	}
	size_t plen;
	const char *path = ds_rd_str(r, &plen);
	uint64_t recurse = ds_rd_max(r, 1);
	uint64_t ms = ds_rd_max(r, 86400000);
	if (r->bad || plen == 0 || plen > 65536 || ms < 100) {
		ds_chan_fail(&v->ch, "malformed scan request");
		return DUPSCAN_E_PROTOCOL;
	}
	/* ALIVE well within the client's patience */
	v->alive_ns = (int64_t)ms * 1000000 / 4;
	char *p = strndup(path, plen);
	if (!p)
		return -ENOMEM;
	int rc = dupscan_add_path(v->s, p, (int)recurse);
	free(p);
	return rc < 0 ? rc : 0;
}

/* ---- results ---- */

/* w's frame queued (it goes out with the next send, or once DS_CHAN_QUEUE
 * bytes are queued: a directory's frame before each file's set frame, in one
 * write with it), and w made ready for more of its kind. */
static int flush(struct serve *v, struct ds_wr *w, size_t header)
{
	if (ds_wr_size(w) <= header)
		return 0;
	int rc = ds_chan_queue(&v->ch, w);
	w->len = header;
	return rc;
}

/* Directory d on the wire (its parents first), in the pending DIR frame. */
static int send_dir(struct serve *v, uint32_t d)
{
	if (v->wire_dir[d] != DS_NONE)
		return 0;
	const struct ds_dir *dir = &v->s->tree.dirs[d];
	if (dir->parent != DS_NONE) {
		int rc = send_dir(v, dir->parent); /* as deep as the tree: bounded by the walk's own depth */
		if (rc)
			return rc;
	}
	if (ds_wr_size(&v->dirs) > FLUSH_AT) {
		int rc = flush(v, &v->dirs, 5);
		if (rc)
			return rc;
	}
	v->wire_dir[d] = v->ndirs_sent++;
	ds_wr_u64(&v->dirs, dir->parent == DS_NONE ? 0 : (uint64_t)v->wire_dir[dir->parent] + 1);
	ds_wr_str(&v->dirs, dir->name, strlen(dir->name));
	return v->dirs.oom ? -ENOMEM : 0;
}

/* Record rec's entry, its directory sent first. */
static int put_file(struct serve *v, struct ds_wr *w, uint32_t rec)
{
	const dupscan_scan *s = v->s;
	uint32_t d = ds_rec_dir(&s->tree, rec);
	int rc = send_dir(v, d);
	if (rc == 0)
		rc = flush(v, &v->dirs, 5);
	if (rc)
		return rc;
	const struct ds_rec *r = ds_rec(&s->tree, rec);
	char nbuf[DS_NAME_BUF];
	const char *name = ds_rec_name(&s->tree, r, nbuf);
	ds_wr_u64(w, v->wire_dir[d]);
	ds_wr_str(w, name, strlen(name));
	ds_wr_u64(w, ds_rec_size(&s->tree, r));
	ds_wr_u64(w, ds_rec_dev(&s->tree, r));
	ds_wr_u64(w, ds_rec_ino(&s->tree, r));
	ds_wr_u64(w, ds_rec_mode(&s->tree, r));
	uint64_t owner = ds_rec_owner(&s->tree, r);
	ds_wr_u64(w, owner >> 32);
	ds_wr_u64(w, owner & 0xffffffffu);
	ds_wr_s64(w, r->mtime_ns);
	ds_wr_s64(w, r->ctime_ns);
	return w->oom ? -ENOMEM : 0;
}

static int send_sets(struct serve *v)
{
	int rc = 0;
	size_t id = 0;
	for (size_t i = 0; rc == 0 && i < dupscan_set_count(v->s); i++) {
		const dupscan_set *set = dupscan_get_set(v->s, i);
		ds_wr_begin(&v->w, DS_W_SET);
		ds_wr_u64(&v->w, 1); /* a new set; 0: the last one goes on */
		for (size_t k = 0; rc == 0 && k < dupscan_set_file_count(set); k++, id++) {
			if (ds_wr_size(&v->w) > FLUSH_AT && (rc = flush(v, &v->w, 5)) == 0)
				ds_wr_u64(&v->w, 0);
			if (rc == 0)
				rc = put_file(v, &v->w, v->files[id]);
		}
		if (rc == 0)
			rc = flush(v, &v->w, 6);
	}
	return rc;
}

/* What the file of record i says of its directory's content. */
static void put_tree_entry(struct serve *v, const uint32_t *num, uint32_t i)
{
	const dupscan_scan *s = v->s;
	uint32_t rep = ds_rec_rep(&s->tree, i);
	const struct ds_rec *r = ds_rec(&s->tree, i), *rr = ds_rec(&s->tree, rep);
	uint32_t id = num[rep] != DS_NONE ? num[rep] : num[i];
	ds_wr_u64(&v->w, v->wire_dir[ds_rec_dir(&s->tree, i)]);
	if (ds_rec_size(&s->tree, rr) == 0) {
		ds_wr_u64(&v->w, 1);
	} else if ((r->flags | rr->flags) & DS_F_DROPPED || id == DS_NONE) {
		ds_wr_u64(&v->w, 2);
	} else {
		ds_wr_u64(&v->w, 0);
		ds_wr_u64(&v->w, id);
	}
}

/* With DUPSCAN_OPT_DIRS: every directory, and what each of its files is,
 * for the client to key directories across hosts. */
static int send_tree(struct serve *v)
{
	const dupscan_scan *s = v->s;
	uint32_t *num = malloc((s->tree.nrecs ? s->tree.nrecs : 1) * sizeof(*num));
	int rc = num ? 0 : -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < s->tree.nrecs; i++)
		num[i] = DS_NONE;
	for (size_t id = 0; rc == 0 && id < v->nfiles; id++)
		num[v->files[id]] = (uint32_t)id;
	for (uint32_t d = 0; rc == 0 && d < s->tree.ndirs; d++)
		rc = send_dir(v, d);
	if (rc == 0)
		rc = flush(v, &v->dirs, 5);
	ds_wr_begin(&v->w, DS_W_TREE);
	for (uint32_t d = 0; rc == 0 && d < s->tree.ndirs; d++)
		if (s->tree.dirs[d].incomplete || s->tree.dirs[d].pseudo) {
			ds_wr_u64(&v->w, v->wire_dir[d]);
			ds_wr_u64(&v->w, 3);
		}
	for (uint32_t i = 0; rc == 0 && i < s->tree.nrecs; i++) {
		if (ds_rec(&s->tree, i)->flags & DS_F_ALIAS)
			continue;
		if (ds_wr_size(&v->w) > FLUSH_AT)
			rc = flush(v, &v->w, 5);
		put_tree_entry(v, num, i);
	}
	if (rc == 0)
		rc = v->w.oom ? -ENOMEM : flush(v, &v->w, 5);
	free(num);
	return rc;
}

static int send_uniques(struct serve *v)
{
	int rc = 0;
	for (size_t id = v->nset; rc == 0 && id < v->nfiles;) {
		ds_wr_begin(&v->w, DS_W_UNIQ);
		ds_wr_u64(&v->w, id);
		for (; id < v->nfiles && ds_wr_size(&v->w) < FLUSH_AT; id++)
			ds_wr_u64(&v->w, ds_rec_size(&v->s->tree, ds_rec(&v->s->tree, v->files[id])));
		rc = v->w.oom ? -ENOMEM : ds_chan_send(&v->ch, &v->w);
	}
	if (rc == 0 && v->structure)
		rc = send_tree(v);
	for (size_t i = 0; rc == 0 && i < v->nerr; i++) {
		ds_wr_begin(&v->w, DS_W_ERR);
		ds_wr_str(&v->w, v->errs[i].path, strlen(v->errs[i].path));
		ds_wr_u64(&v->w, (uint64_t)-(int64_t)v->errs[i].code);
		rc = ds_chan_send(&v->ch, &v->w);
	}
	if (rc == 0) {
		ds_wr_begin(&v->w, DS_W_DONE);
		ds_wr_u64(&v->w, v->nset);
		ds_wr_u64(&v->w, v->nfiles - v->nset);
		ds_wr_u64(&v->w, dupscan_set_count(v->s));
		ds_wr_u64(&v->w, v->nerr);
		rc = ds_chan_send(&v->ch, &v->w);
	}
	return rc;
}

static int number_one(void *user, uint32_t rec)
{
	struct serve *v = user;
	if (DS_GROW(v->files, v->capfiles, v->nfiles + 1))
		return -ENOMEM;
	v->files[v->nfiles++] = rec;
	return 0;
}

/* Number every file the client may ask about: the sets' files in their
 * order, then the unique ones by record (no path built for them). */
static int number_files(struct serve *v)
{
	v->wire_dir = malloc((v->s->tree.ndirs ? v->s->tree.ndirs : 1) * sizeof(*v->wire_dir));
	if (!v->wire_dir)
		return -ENOMEM;
	for (uint32_t d = 0; d < v->s->tree.ndirs; d++)
		v->wire_dir[d] = DS_NONE;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < dupscan_set_count(v->s); i++) {
		const dupscan_set *set = dupscan_get_set(v->s, i);
		for (size_t k = 0; rc == 0 && k < dupscan_set_file_count(set); k++)
			rc = set->dirs ? DUPSCAN_E_STATE : number_one(v, dupscan_set_file(set, k)->idx);
	}
	v->nset = v->nfiles;
	return rc ? rc : ds_each_unique(&v->s->results, number_one, v);
}

/* ---- requests ---- */

/* A file by the number the client gave, opened and checked against the scan.
 * @return an fd or a negative code. */
static int open_id(struct serve *v, uint64_t id)
{
	return ds_open_scanned(&v->s->reading, v->files[id]);
}

static int answer_names(struct serve *v, struct ds_rd *r)
{
	uint64_t ids[DS_WIRE_BATCH];
	size_t n = ds_serve_ids(v, r, ids);
	if (n == 0)
		return DUPSCAN_E_PROTOCOL;
	ds_wr_begin(&v->w, DS_W_NAMES);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (ds_wr_size(&v->w) > FLUSH_AT)
			rc = flush(v, &v->w, 5);
		ds_wr_u64(&v->w, ids[i]);
		if (rc == 0)
			rc = put_file(v, &v->w, v->files[ids[i]]);
	}
	if (rc == 0)
		rc = flush(v, &v->w, 5);
	if (rc == 0) {
		ds_wr_begin(&v->w, DS_W_END);
		ds_wr_u64(&v->w, 0);
		rc = ds_chan_send(&v->ch, &v->w);
	}
	return rc;
}

/* END, queued: a client asking in a row gets the answers in few writes
 * (the queue goes out when this side next waits for a request). */
static int send_end(struct serve *v, int code)
{
	ds_wr_begin(&v->w, DS_W_END);
	ds_wr_u64(&v->w, code < 0 ? (uint64_t)-(int64_t)code : 0);
	return ds_chan_queue(&v->ch, &v->w);
}

/* READ: len bytes from off, in DATA frames, then END; the file stays open
 * for the next READ of it (a comparison asks in rounds). */
static int answer_read(struct serve *v, struct ds_rd *r)
{
	uint64_t id = ds_rd_max(r, v->nfiles ? v->nfiles - 1 : 0), off = ds_rd_u64(r), len = ds_rd_max(r, READ_MAX);
	uint64_t size = v->nfiles ? ds_rec_size(&v->s->tree, ds_serve_rec(v, id)) : 0;
	if (r->bad || ds_rd_more(r) || v->nfiles == 0 || off > size || len > size - off)
		return DUPSCAN_E_PROTOCOL;
	if (v->fd < 0 || v->fd_id != id) {
		if (v->fd >= 0)
			close(v->fd);
		v->fd = open_id(v, id);
		v->fd_id = id;
		if (v->fd < 0)
			return send_end(v, v->fd);
	}
	int rc = 0;
	for (uint64_t at = off; rc == 0 && at < off + len;) {
		size_t k = off + len - at < DS_WIRE_DATA ? (size_t)(off + len - at) : DS_WIRE_DATA;
		ds_wr_begin(&v->w, DS_W_DATA);
		uint8_t *to = ds_wr_take(&v->w, k);
		if (!to)
			return -ENOMEM;
		rc = ds_pread_full(v->fd, to, k, at);
		if (rc)
			return send_end(v, rc);
		rc = ds_chan_queue(&v->ch, &v->w);
		at += k;
	}
	/* the bytes sent are the scanned file's only if it is unchanged now */
	return rc ? rc : send_end(v, ds_check_unchanged(&v->s->reading, v->fd, ds_serve_rec(v, id)));
}

/* What a check of file id that failed with code says to the client: for a
 * change, what differs at its path now (DUPSCAN_E_CHANGED_*); a file gone
 * from its name counts as another at it (renamed or removed away). */
static int why_changed(struct serve *v, uint64_t id, int code)
{
	if (code == -ENOENT || code == -ENOTDIR || code == -ELOOP)
		return DUPSCAN_E_CHANGED_INODE;
	if (code != DUPSCAN_E_CHANGED)
		return code;
	const struct ds_rec *rec = ds_serve_rec(v, id);
	char *path = ds_rec_path_alloc(&v->s->tree, v->files[id]);
	struct stat st;
	int why = !path ? 0 : stat(path, &st) != 0 ? DUPSCAN_E_CHANGED_INODE : ds_file_change(&v->s->tree, &st, rec, rec->ctime_ns);
	free(path);
	return why ? why : code;
}

/* CHECK: a kept file, held open from its first check on, still the one
 * scanned, and still at its path. The last HELD_MAX files checked are held
 * (an action checks a set's kept file before and after its change, and sets
 * come one after another); an older one is opened again when asked, and
 * checked against its record all the same. Before, the 65th kept file was
 * refused (EMFILE, taken for a change): a run across hosts keeping the
 * remote copies acted on 64 sets. */
static int answer_check(struct serve *v, struct ds_rd *r)
{
	uint64_t id = ds_rd_max(r, v->nfiles ? v->nfiles - 1 : 0);
	if (r->bad || ds_rd_more(r) || v->nfiles == 0)
		return DUPSCAN_E_PROTOCOL;
	size_t h = 0;
	while (h < v->nheld && v->held[h].id != id)
		h++;
	if (h == v->nheld) {
		int fd = open_id(v, id);
		if (fd < 0)
			return send_end(v, why_changed(v, id, fd));
		if (v->nheld == HELD_MAX) {
			h = v->held_next;
			v->held_next = (v->held_next + 1) % HELD_MAX;
			close(v->held[h].fd);
		} else {
			v->nheld++;
		}
		v->held[h] = (struct held){ id, fd };
	}
	const struct ds_rec *rec = ds_serve_rec(v, id);
	struct stat st;
	/* what changed, said (DUPSCAN_E_CHANGED_*): the client tells its user */
	int rc = fstat(v->held[h].fd, &st) != 0 ? -errno : ds_file_change(&v->s->tree, &st, rec, rec->ctime_ns);
	char *path = rc == 0 ? ds_rec_path_alloc(&v->s->tree, v->files[id]) : NULL;
	if (rc == 0 && !path)
		return -ENOMEM;
	/* and its name still reaches it */
	if (rc == 0)
		rc = stat(path, &st) != 0 ? -errno : ds_file_change(&v->s->tree, &st, rec, rec->ctime_ns);
	free(path);
	return send_end(v, why_changed(v, id, rc));
}

static int serve_requests(struct serve *v)
{
	for (;;) {
		int type;
		struct ds_rd r;
		/* between its requests the client walks and matches its own
		 * files, reads its side of a comparison: as long as that takes
		 * (the channel closes if it goes away) */
		int patience = v->ch.timeout_ms;
		v->ch.timeout_ms = -1;
		int rc = ds_chan_recv(&v->ch, &type, &r);
		v->ch.timeout_ms = patience;
		if (rc)
			return rc;
		switch (type) {
		case DS_W_HASH: rc = ds_serve_hash(v, &r); break;
		case DS_W_NAMES: rc = answer_names(v, &r); break;
		case DS_W_READ: rc = answer_read(v, &r); break;
		case DS_W_CHECK: rc = answer_check(v, &r); break;
		case DS_W_BYE: return 0;
		default: rc = DUPSCAN_E_PROTOCOL; break;
		}
		if (rc == DUPSCAN_E_PROTOCOL)
			ds_chan_fail(&v->ch, "malformed request (frame type %d)", type);
		if (rc)
			return rc;
	}
}

/* The client's HELLO and SCAN, ours in between. */
static int greet(struct serve *v)
{
	int type;
	struct ds_rd r;
	ds_wire_hello(&v->w, DS_WIRE_SIZES);
	int rc = ds_chan_send(&v->ch, &v->w);
	if (rc == 0)
		rc = ds_chan_recv(&v->ch, &type, &r);
	if (rc == 0 && type != DS_W_HELLO) {
		ds_chan_fail(&v->ch, "expected a greeting, got frame type %d", type);
		rc = DUPSCAN_E_PROTOCOL;
	}
	uint64_t features = 0;
	if (rc == 0)
		rc = ds_wire_hello_check(&v->ch, &r, &features);
	v->sizes = (features & DS_WIRE_SIZES) != 0;
	if (rc == 0)
		rc = ds_chan_recv(&v->ch, &type, &r);
	if (rc == 0 && type != DS_W_SCAN) {
		ds_chan_fail(&v->ch, "expected a scan request, got frame type %d", type);
		rc = DUPSCAN_E_PROTOCOL;
	}
	return rc ? rc : take_scan(v, &r);
}

DUPSCAN_API int dupscan_serve(dupscan_scan *s, int read_fd, int write_fd)
{
	if (!s || read_fd < 0 || write_fd < 0)
		return -EINVAL;
	if (s->core.ran || s->tree.nargs)
		return DUPSCAN_E_STATE;
	struct serve v = { .s = s, .fd = -1 };
	/* a silent client fails the channel past the scan's own patience
	 * (DUPSCAN_OPT_REMOTE_TIMEOUT), but while it does its own work */
	ds_chan_init(&v.ch, read_fd, write_fd, "client", s->hosts.remote_timeout_ms);
	v.alive_lock = ds_monitor_new();
	int rc = (v.buf = malloc(DS_COPY_BUF)) && v.alive_lock ? greet(&v) : -ENOMEM;
	if (rc == 0) {
		v.last_alive = ds_mono_ns();
		dupscan_set_error_callback(s, on_error, &v);
		dupscan_set_progress_bytes_callback(s, on_bytes, &v);
		if (v.sizes) {
			s->after_walk = wanted_sizes;
			s->after_walk_user = &v;
			s->match.each_band = mark_band;
			s->match.each_band_user = &v;
		}
		/* past a memory budget only the files it may ask about stay: the
		 * sets' and the unique ones of the sizes it wants; its tree needs
		 * every file's record */
		s->served = true;
		s->every_record = v.structure;
		rc = dupscan_run(s);
		dupscan_set_progress_bytes_callback(s, NULL, NULL);
		if (rc == 0 && v.ch.dead)
			rc = DUPSCAN_E_REMOTE;
	}
	if (rc == 0)
		rc = number_files(&v);
	ds_wr_begin(&v.dirs, DS_W_DIR);
	if (rc == 0)
		rc = send_sets(&v);
	if (rc == 0)
		rc = send_uniques(&v);
	if (rc == 0)
		rc = serve_requests(&v);
	if (rc && rc != DUPSCAN_E_REMOTE) {
		/* tell the client why, when it can still hear */
		const char *why = v.ch.dead ? v.ch.why : dupscan_strerror(rc);
		struct ds_wr w = { 0 };
		ds_wr_begin(&w, DS_W_FAIL);
		ds_wr_str(&w, why, strlen(why));
		v.ch.dead = false;
		ds_chan_send(&v.ch, &w);
		ds_wr_free(&w);
	}
	if (v.fd >= 0)
		close(v.fd);
	for (size_t i = 0; i < v.nheld; i++)
		close(v.held[i].fd);
	for (size_t i = 0; i < v.nerr; i++)
		free(v.errs[i].path);
	free(v.errs);
	free(v.want);
	free(v.files);
	free(v.wire_dir);
	free(v.buf);
	ds_monitor_free(v.alive_lock);
	ds_wr_free(&v.w);
	ds_wr_free(&v.dirs);
	ds_chan_free(&v.ch);
	return rc;
}

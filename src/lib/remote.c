/* SPDX-License-Identifier: MIT */
/* remote.c: paths scanned on other hosts (dupscan_add_remote()). Each side
 * scans its own files where they are; this side takes its sets and the
 * sizes of its unique files, and for files of one size on two hosts asks
 * first-block hashes, then whole hashes where those agree, then compares
 * the bytes through the channel before joining anything. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote.h"

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

/* A remote's files' tables: a scan that is never run (its records, names
 * and paths; its handles' scan). */
static dupscan_scan *mirror_new(void)
{
	dupscan_scan *m = calloc(1, sizeof(*m));
	if (m) {
		ds_tree_init(&m->tree);
		ds_arena_init(&m->out);
	}
	return m;
}

static void mirror_free(dupscan_scan *m)
{
	if (!m)
		return;
	ds_tree_free(&m->tree);
	ds_arena_free(&m->out);
	free(m);
}

DUPSCAN_API int dupscan_add_remote(dupscan_scan *s, const char *label, int read_fd, int write_fd,
				   const char *path, int recurse)
{
	if (!s || !label || !*label || !path || !*path || read_fd < 0 || write_fd < 0)
		return -EINVAL;
	if (s->ran)
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
	if (!r->label || !r->path || !r->shown || !(r->mirror = mirror_new()))
		goto nomem;
	int arg = ds_add_arg(&s->tree, r->shown, recurse != 0, true);
	if (arg < 0)
		goto nomem;
	r->arg = (uint32_t)arg;
	ds_chan_init(&r->ch, read_fd, write_fd, r->shown, DS_WIRE_TIMEOUT_MS);
	r->mirror->mirror_of = r;
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
static void put_options(const dupscan_scan *s, struct ds_wr *w)
{
	const struct { int opt; int64_t val; } o[] = {
		{ DUPSCAN_OPT_ZERO_MATCH, s->opt.zero_match }, { DUPSCAN_OPT_HARD_LINKS, s->opt.hard_links },
		{ DUPSCAN_OPT_FOLLOW_SYMLINKS, s->opt.follow_symlinks }, { DUPSCAN_OPT_NO_HIDDEN, s->opt.no_hidden },
		{ DUPSCAN_OPT_QUICK, s->opt.quick }, { DUPSCAN_OPT_PARTIAL_ONLY, s->opt.partial_only },
		{ DUPSCAN_OPT_MAX_DEPTH, s->opt.max_depth },
	};
	ds_wr_u64(w, sizeof(o) / sizeof(o[0]));
	for (size_t i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
		ds_wr_u64(w, (uint64_t)o[i].opt);
		ds_wr_s64(w, o[i].val);
	}
}

int ds_remote_start(dupscan_scan *s)
{
	struct ds_wr w = { 0 };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->nremotes; i++) {
		struct ds_remote *r = s->remotes[i];
		r->ch.timeout_ms = s->remote_timeout_ms;
		ds_wire_hello(&w);
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

static int bad(struct ds_remote *r, const char *what)
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
			return bad(r, "directory");
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
			rc = ds_add_dir(r->mirror, shown, strlen(shown), DS_NONE, r->arg, &st, &d);
			free(shown);
		} else {
			rc = ds_add_dir(r->mirror, name, len, r->wdir[parent - 1], r->arg, &st, &d);
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
		return bad(r, "file entry");
	st.st_mtim = (struct timespec){ mt / 1000000000, mt % 1000000000 };
	st.st_ctim = (struct timespec){ ct / 1000000000, ct % 1000000000 };
	st.st_nlink = 1;
	int rc = ds_add_rec(r->mirror, name, len, r->wdir[dir], &st);
	*rec = r->mirror->tree.nrecs - 1;
	if (rc == 0 && DS_GROW(r->id_of, r->capid, r->mirror->tree.nrecs))
		rc = -ENOMEM;
	return rc;
}

static int take_set(struct ds_remote *r, struct ds_rd *rd)
{
	uint64_t fresh = ds_rd_max(rd, 1);
	if (rd->bad || r->nuniq || (!fresh && r->nsets == 0))
		return bad(r, "set");
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
		return bad(r, "unique files");
	while (ds_rd_more(rd)) {
		if (DS_GROW(r->usize, r->capu, r->nuniq + 1))
			return -ENOMEM;
		r->usize[r->nuniq++] = ds_rd_max(rd, INT64_MAX);
	}
	return rd->bad ? bad(r, "unique files") : 0;
}

/* A file the other side could not read: reported here as HOST:PATH. */
static int take_error(dupscan_scan *s, struct ds_remote *r, struct ds_rd *rd)
{
	size_t len;
	const char *path = ds_rd_str(rd, &len);
	uint64_t code = ds_rd_max(rd, 100000);
	if (rd->bad || ds_rd_more(rd) || code == 0)
		return bad(r, "error report");
	char *shown = on_host(r->label, path, len);
	if (!shown)
		return -ENOMEM;
	ds_report(s, shown, -(int)code);
	free(shown);
	return 0;
}

static int check_done(struct ds_remote *r, struct ds_rd *rd)
{
	uint64_t nset = ds_rd_u64(rd), nuniq = ds_rd_u64(rd), nsets = ds_rd_u64(rd);
	ds_rd_u64(rd);
	if (rd->bad || ds_rd_more(rd) || nset != r->nset || nuniq != r->nuniq || nsets != r->nsets)
		return bad(r, "end of results (counts disagree)");
	for (size_t i = 0; i < r->nsets; i++)
		if (r->sets[i].n < 2)
			return bad(r, "set (fewer than two files)");
	return 0;
}

/* The other side's greeting and results, ALIVE frames between them. */
static int collect(dupscan_scan *s, struct ds_remote *r)
{
	int type;
	struct ds_rd rd;
	int rc = ds_chan_recv(&r->ch, &type, &rd);
	if (rc == 0 && type != DS_W_HELLO)
		rc = bad(r, "greeting");
	if (rc == 0)
		rc = ds_wire_hello_check(&r->ch, &rd);
	while (rc == 0 && !r->done) {
		if ((rc = ds_chan_recv(&r->ch, &type, &rd)) != 0)
			break;
		switch (type) {
		case DS_W_ALIVE: break;
		case DS_W_DIR: rc = take_dirs(r, &rd); break;
		case DS_W_SET: rc = take_set(r, &rd); break;
		case DS_W_UNIQ: rc = take_uniques(r, &rd); break;
		case DS_W_ERR: rc = take_error(s, r, &rd); break;
		case DS_W_DONE: rc = check_done(r, &rd); r->done = rc == 0; break;
		default: rc = bad(r, "frame among the results"); break;
		}
		if (s->canceled)
			rc = DUPSCAN_E_CANCELED;
	}
	if (rc == 0 && !(r->matched = calloc(r->nuniq ? r->nuniq : 1, 1)))
		rc = -ENOMEM;
	return rc;
}

/* ---- matching across hosts ---- */

/* Something that may match across hosts: a set found on one host (it
 * stands for all its files: they are equal) or a file unique there. */
enum { X_LSET, X_LUNIQ, X_RSET, X_RUNIQ };
struct xitem {
	uint64_t size, partial, full;
	uint64_t ref;      /* s->sets index or record; the remote's set index or file number */
	uint32_t site;     /* 0: this host; 1 + the remote's index */
	uint32_t kind : 2;
	uint32_t live : 1; /* still in play */
	uint32_t group;    /* the first item of its set across hosts, or DS_NONE */
};

struct xmatch {
	dupscan_scan *s;
	struct xitem *it;
	size_t n;
	unsigned char *ba, *bb;  /* comparison buffers, DS_COPY_BUF each */
	struct ds_wr w;
};

static struct ds_remote *site_remote(const struct xmatch *x, const struct xitem *t)
{
	return t->site ? x->s->remotes[t->site - 1] : NULL;
}

/* The remote file number an item's bytes are read by. */
static uint64_t remote_id(const struct xmatch *x, const struct xitem *t)
{
	return t->kind == X_RSET ? site_remote(x, t)->sets[t->ref].first : t->ref;
}

/* The local record an item's bytes are read by. */
static uint32_t local_rec(const struct xmatch *x, const struct xitem *t)
{
	return t->kind == X_LSET ? x->s->sets[t->ref].files[0].idx : (uint32_t)t->ref;
}

/* The sizes each host has, sorted and each once: an item is in play only
 * when another host has its size (most files are in none, and cost nothing). */
struct sizes {
	uint64_t *v;
	size_t n, cap;
};

static int add_size(struct sizes *z, uint64_t size)
{
	if (DS_GROW(z->v, z->cap, z->n + 1))
		return -ENOMEM;
	z->v[z->n++] = size;
	return 0;
}

static int cmp_u64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

static int seal_sizes(struct sizes *z)
{
	int rc = ds_sort(z->v, z->n, sizeof(*z->v), cmp_u64, NULL);
	size_t n = 0;
	for (size_t i = 0; rc == 0 && i < z->n; i++)
		if (n == 0 || z->v[n - 1] != z->v[i])
			z->v[n++] = z->v[i];
	z->n = rc ? z->n : n;
	return rc;
}

static bool has_size(const struct sizes *z, uint64_t size)
{
	size_t lo = 0, hi = z->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->v[mid] < size)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < z->n && z->v[lo] == size;
}

struct gathering {
	struct xmatch *x;
	struct sizes *z;     /* by site */
	size_t cap;
	bool adding;         /* the second pass: items, not sizes */
};

/* Does a host other than site have this size? */
static bool across(const struct gathering *g, uint32_t site, uint64_t size)
{
	for (uint32_t k = 0; k <= g->x->s->nremotes; k++)
		if (k != site && has_size(&g->z[k], size))
			return true;
	return false;
}

static int consider(struct gathering *g, struct xitem t)
{
	if (!g->adding)
		return add_size(&g->z[t.site], t.size);
	if (!across(g, t.site, t.size))
		return 0;
	struct xmatch *x = g->x;
	if (DS_GROW(x->it, g->cap, x->n + 1))
		return -ENOMEM;
	t.live = 1;
	t.group = DS_NONE;
	x->it[x->n++] = t;
	return 0;
}

static int consider_unique(void *user, uint32_t rec)
{
	struct gathering *g = user;
	const dupscan_scan *s = g->x->s;
	return consider(g, (struct xitem){ .size = ds_rec_size(s, ds_rec(s, rec)), .ref = rec, .kind = X_LUNIQ });
}

/* Every host's sets and unique files, as sizes (first) or items (then). */
static int each_item(struct gathering *g)
{
	dupscan_scan *s = g->x->s;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->nsets; i++)
		if (!s->sets[i].dirs)
			rc = consider(g, (struct xitem){ .size = ds_rec_size(s, s->sets[i].files[0].rec), .ref = i,
							 .kind = X_LSET });
	if (rc == 0)
		rc = ds_each_unique(s, consider_unique, g);
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		for (size_t i = 0; rc == 0 && i < r->nsets; i++) {
			const struct ds_rec *rec = ds_rec(r->mirror, r->rec_of[r->sets[i].first]);
			rc = consider(g, (struct xitem){ .size = ds_rec_size(r->mirror, rec), .ref = i,
							 .site = (uint32_t)k + 1, .kind = X_RSET });
		}
		for (uint64_t i = 0; rc == 0 && i < r->nuniq; i++)
			rc = consider(g, (struct xitem){ .size = r->usize[i], .ref = r->nset + i,
							 .site = (uint32_t)k + 1, .kind = X_RUNIQ });
	}
	return rc;
}

static int gather(struct xmatch *x)
{
	struct gathering g = { x, calloc(x->s->nremotes + 1, sizeof(struct sizes)), 0, false };
	int rc = g.z ? each_item(&g) : -ENOMEM;
	for (size_t k = 0; rc == 0 && k <= x->s->nremotes; k++)
		rc = seal_sizes(&g.z[k]);
	g.adding = true;
	if (rc == 0)
		rc = each_item(&g);
	for (size_t k = 0; g.z && k <= x->s->nremotes; k++)
		free(g.z[k].v);
	free(g.z);
	return rc;
}

/* Key order: size, then (with depth) the first block's hash, then the
 * whole's; the site last, so a run's local items come first. */
static int cmp_depth(void *ctx, const void *pa, const void *pb)
{
	int depth = *(const int *)ctx;
	const struct xitem *a = pa, *b = pb;
	uint64_t ka[4] = { a->size, depth > 0 ? a->partial : 0, depth > 1 ? a->full : 0, a->site };
	uint64_t kb[4] = { b->size, depth > 0 ? b->partial : 0, depth > 1 ? b->full : 0, b->site };
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* Keep live only the items whose key (to depth) another host's item shares;
 * the rest go. @return 0 or -ENOMEM. */
static int keep_shared(struct xmatch *x, int depth)
{
	size_t n = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->it[i].live)
			x->it[n++] = x->it[i];
	x->n = n;
	int rc = ds_sort(x->it, x->n, sizeof(*x->it), cmp_depth, &depth);
	for (size_t i = 0, j; rc == 0 && i < x->n; i = j) {
		bool across = false;
		for (j = i + 1; j < x->n; j++) {
			struct xitem a = x->it[i], b = x->it[j];
			a.site = b.site = 0;
			if (cmp_depth(&depth, &a, &b) != 0)
				break;
			across |= x->it[j].site != x->it[i].site;
		}
		for (size_t k = i; k < j; k++)
			x->it[k].live = across;
	}
	return rc;
}

static void item_failed(struct xmatch *x, struct xitem *t, int code)
{
	t->live = 0;
	if (t->site == 0) {
		char *p = ds_rec_path_alloc(x->s, local_rec(x, t));
		ds_report(x->s, p ? p : "(a file)", code);
		free(p);
	} else if (t->kind == X_RSET) {
		struct ds_remote *r = site_remote(x, t);
		char *p = ds_rec_path_alloc(r->mirror, r->rec_of[remote_id(x, t)]);
		ds_report(x->s, p ? p : r->shown, code);
		free(p);
	} else {
		ds_report(x->s, site_remote(x, t)->shown, code);
	}
}

static int local_hash(struct xmatch *x, struct xitem *t, bool whole)
{
	uint32_t rec = local_rec(x, t);
	int fd = ds_open_scanned(x->s, rec);
	int rc = fd < 0 ? fd : ds_hash_fd(fd, t->size, whole, &t->partial, &t->full, x->ba, DS_COPY_BUF);
	if (fd >= 0 && rc == 0)
		rc = ds_check_unchanged(x->s, fd, ds_rec(x->s, rec));
	if (fd >= 0)
		close(fd);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		item_failed(x, t, rc);
	return 0;
}

/* Items of one site whose hashes are asked for at once. */
struct batch {
	size_t idx[DS_WIRE_BATCH];
	size_t n;
	size_t next;  /* where the next batch's search starts */
};

static bool wants_hash(const struct xitem *t, uint32_t site, bool whole)
{
	/* within one block the whole hash is the first block's */
	return t->live && t->site == site && !(whole && t->size <= DS_BLOCK);
}

/* The next batch of site's items: false when none is left. */
static bool next_batch(const struct xmatch *x, struct batch *b, uint32_t site, bool whole)
{
	b->n = 0;
	for (; b->next < x->n && b->n < DS_WIRE_BATCH; b->next++)
		if (wants_hash(&x->it[b->next], site, whole))
			b->idx[b->n++] = b->next;
	return b->n > 0;
}

static int hash_ask(struct xmatch *x, struct ds_remote *r, const struct batch *b, bool whole)
{
	ds_wr_begin(&x->w, DS_W_HASH);
	ds_wr_u64(&x->w, whole);
	for (size_t i = 0; i < b->n; i++)
		ds_wr_u64(&x->w, remote_id(x, &x->it[b->idx[i]]));
	return ds_chan_send(&r->ch, &x->w);
}

static int hash_take(struct xmatch *x, struct ds_remote *r, const struct batch *b, bool whole)
{
	int type;
	struct ds_rd rd;
	int rc = ds_chan_recv(&r->ch, &type, &rd);
	if (rc == 0 && type != DS_W_HASH)
		rc = bad(r, "answer to a hash request");
	for (size_t i = 0; rc == 0 && i < b->n; i++) {
		struct xitem *t = &x->it[b->idx[i]];
		uint64_t status = ds_rd_max(&rd, 100000), h = ds_rd_u64(&rd);
		if (rd.bad)
			return bad(r, "answer to a hash request");
		if (status)
			item_failed(x, t, -(int)status);
		else if (whole)
			t->full = h;
		else
			t->partial = t->full = h;
	}
	return rc == 0 && ds_rd_more(&rd) ? bad(r, "answer to a hash request") : rc;
}

/* The first block's or the whole hash of every live item: read here, or
 * asked of its side in batches. Each side's first batch is asked before
 * this host reads its own, so every host reads at once. */
static int hash_live(struct xmatch *x, bool whole)
{
	size_t nr = x->s->nremotes;
	struct batch *b = calloc(nr ? nr : 1, sizeof(*b));
	bool *asked = calloc(nr ? nr : 1, sizeof(*asked));
	int rc = b && asked ? 0 : -ENOMEM;
	for (size_t k = 0; rc == 0 && k < nr; k++)
		if ((asked[k] = next_batch(x, &b[k], (uint32_t)k + 1, whole)))
			rc = hash_ask(x, x->s->remotes[k], &b[k], whole);
	for (size_t i = 0; rc == 0 && i < x->n; i++)
		if (wants_hash(&x->it[i], 0, whole))
			rc = local_hash(x, &x->it[i], whole);
	for (size_t k = 0; rc == 0 && k < nr; k++) {
		struct ds_remote *r = x->s->remotes[k];
		for (bool more = asked[k]; rc == 0 && more; more = next_batch(x, &b[k], (uint32_t)k + 1, whole) &&
							       (rc = hash_ask(x, r, &b[k], whole)) == 0)
			rc = hash_take(x, r, &b[k], whole);
	}
	free(b);
	free(asked);
	return rc;
}

/* An item's bytes as a comparison reads them: from a local descriptor, or
 * asked of its side range by range. */
struct src {
	struct xitem *t;
	int fd;
	uint32_t rec;
	struct ds_remote *r;
	uint64_t id;
};

static bool fatal(int rc)
{
	return rc == -ENOMEM || rc == DUPSCAN_E_REMOTE || rc == DUPSCAN_E_PROTOCOL || rc == DUPSCAN_E_CANCELED;
}

static int src_open(struct xmatch *x, struct xitem *t, struct src *c)
{
	*c = (struct src){ t, -1, 0, site_remote(x, t), 0 };
	if (c->r) {
		c->id = remote_id(x, t);
		return 0;
	}
	c->rec = local_rec(x, t);
	c->fd = ds_open_scanned(x->s, c->rec);
	return c->fd < 0 ? c->fd : 0;
}

/* Ask a remote item's side for len bytes at off (a local item: nothing to
 * ask). Asked before this host reads its own, so both read at once.
 * @return 0 or a fatal code. */
static int src_ask(struct xmatch *x, struct src *c, uint64_t off, size_t len)
{
	if (!c->r)
		return 0;
	ds_wr_begin(&x->w, DS_W_READ);
	ds_wr_u64(&x->w, c->id);
	ds_wr_u64(&x->w, off);
	ds_wr_u64(&x->w, len);
	return ds_chan_send(&c->r->ch, &x->w);
}

/* The len bytes at off asked for, into buf. @return 0, the file's trouble,
 * or a fatal code. */
static int src_take(struct xmatch *x, struct src *c, unsigned char *buf, uint64_t off, size_t len)
{
	if (!c->r)
		return ds_read(x->s, c->fd, buf, len, off);
	size_t got = 0;
	for (;;) {
		int type;
		struct ds_rd rd;
		int rc = ds_chan_recv(&c->r->ch, &type, &rd);
		if (rc)
			return rc;
		if (type == DS_W_DATA && (size_t)(rd.end - rd.p) <= len - got) {
			memcpy(buf + got, rd.p, (size_t)(rd.end - rd.p));
			got += (size_t)(rd.end - rd.p);
		} else if (type == DS_W_END) {
			uint64_t status = ds_rd_max(&rd, 100000);
			if (rd.bad || ds_rd_more(&rd) || (status == 0 && got != len))
				return bad(c->r, "answer to a read");
			return -(int)status;
		} else {
			return bad(c->r, "answer to a read");
		}
	}
}

static int src_close(struct xmatch *x, struct src *c, int rc)
{
	if (c->fd >= 0) {
		/* read as it was scanned, or the comparison says nothing */
		if (rc == 0 || rc == DUPSCAN_E_DIFFERS) {
			int ch = ds_check_unchanged(x->s, c->fd, ds_rec(x->s, c->rec));
			rc = ch ? ch : rc;
		}
		close(c->fd);
	}
	return rc;
}

/* Are a's and b's bytes the same? Read side by side in rounds growing from
 * 64 KiB, so a difference early costs little. @return 0, DUPSCAN_E_DIFFERS,
 * or a fatal code; a file's own trouble is reported and counts as differing. */
static int same_bytes(struct xmatch *x, struct xitem *a, struct xitem *b)
{
	struct src ca, cb;
	int ra = src_open(x, a, &ca), rb = 0;
	bool b_open = ra == 0;
	if (b_open)
		rb = src_open(x, b, &cb);
	size_t round = DS_FIRST_ROUND;
	for (uint64_t off = 0; ra == 0 && rb == 0 && off < a->size;) {
		size_t k = a->size - off < round ? (size_t)(a->size - off) : round;
		/* both asked, then both taken: an answer asked for is always read whole */
		if ((ra = src_ask(x, &ca, off, k)) == 0 && (rb = src_ask(x, &cb, off, k)) == 0) {
			ra = src_take(x, &ca, x->ba, off, k);
			rb = fatal(ra) && ca.r == cb.r ? ra : src_take(x, &cb, x->bb, off, k);
		}
		if (ra == 0 && rb == 0 && memcmp(x->ba, x->bb, k) != 0)
			ra = DUPSCAN_E_DIFFERS;
		if (ra == 0 && x->s->canceled)
			ra = DUPSCAN_E_CANCELED;
		off += k;
		round = round * 4 > DS_COPY_BUF ? DS_COPY_BUF : round * 4;
	}
	if (b_open)
		rb = src_close(x, &cb, rb);
	ra = src_close(x, &ca, ra);
	if (fatal(ra) || fatal(rb))
		return fatal(ra) ? ra : rb;
	if (ra && ra != DUPSCAN_E_DIFFERS) {
		item_failed(x, a, ra);
		return DUPSCAN_E_DIFFERS;
	}
	if (rb) {
		if (rb != DUPSCAN_E_DIFFERS)
			item_failed(x, b, rb);
		return DUPSCAN_E_DIFFERS;
	}
	return ra;
}

/* In each run of one key across hosts: the first item still in play
 * anchors a set; each item of another host whose bytes equal its joins.
 * What stays out anchors the next try. */
static int confirm(struct xmatch *x, int depth)
{
	for (size_t i = 0, j; i < x->n; i = j) {
		for (j = i + 1; j < x->n; j++) {
			struct xitem a = x->it[i], b = x->it[j];
			a.site = b.site = 0;
			if (cmp_depth(&depth, &a, &b) != 0)
				break;
		}
		for (size_t a = i; a < j; a++) {
			if (!x->it[a].live || x->it[a].group != DS_NONE)
				continue;
			for (size_t b = a + 1; b < j; b++) {
				struct xitem *tb = &x->it[b];
				if (!tb->live || tb->group != DS_NONE || tb->site == x->it[a].site)
					continue;
				/* -Q and -TT: the hashes are the user's word */
				int rc = x->s->opt.quick || x->s->opt.partial_only ? 0 : same_bytes(x, &x->it[a], tb);
				if (fatal(rc))
					return rc;
				if (rc == 0 && x->it[a].live) {
					tb->group = (uint32_t)a;
					x->it[a].group = (uint32_t)a;
				}
			}
		}
	}
	return 0;
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
		if ((rc = ds_chan_recv(&r->ch, &type, &rd)) != 0)
			break;
		if (type == DS_W_DIR) {
			rc = take_dirs(r, &rd);
		} else if (type == DS_W_NAMES) {
			while (rc == 0 && ds_rd_more(&rd)) {
				uint64_t id = ds_rd_u64(&rd);
				uint32_t rec;
				if (rd.bad || id < r->nset || id >= r->nset + r->nuniq || r->rec_of[id] != DS_NONE)
					return bad(r, "names");
				if ((rc = take_file(r, &rd, &rec)) == 0) {
					r->rec_of[id] = rec;
					r->id_of[rec] = id;
				}
			}
		} else if (type == DS_W_END) {
			if (ds_rd_max(&rd, 0) || rd.bad)
				return bad(r, "end of names");
			for (size_t i = 0; i < n; i++)
				if (r->rec_of[ids[i]] == DS_NONE)
					return bad(r, "names (a file asked for left out)");
			return 0;
		} else {
			rc = bad(r, "answer to a names request");
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
static int remote_file(struct ds_remote *r, uint64_t id, struct dupscan_file *f)
{
	uint32_t rec = r->rec_of[id];
	char *p = ds_rec_path_dup(r->mirror, rec);
	if (!p)
		return -ENOMEM;
	if (remote_protected(r, p))
		ds_rec(r->mirror, rec)->flags |= DS_F_PROTECTED;
	*f = ds_file_of(r->mirror, p, rec, ds_rel_offset(r->mirror, ds_rec_dir(r->mirror, rec)));
	return 0;
}

/* Files an item stands for, into files (NULL: only counted). */
static int item_files(struct xmatch *x, const struct xitem *t, struct dupscan_file *files, size_t *n)
{
	dupscan_scan *s = x->s;
	struct ds_remote *r = site_remote(x, t);
	int rc = 0;
	switch (t->kind) {
	case X_LSET:
		for (size_t k = 0; k < s->sets[t->ref].count; k++, (*n)++)
			if (files)
				files[*n] = s->sets[t->ref].files[k];
		return 0;
	case X_LUNIQ:
		if (files) {
			uint32_t rec = (uint32_t)t->ref;
			char *p = ds_rec_path_dup(s, rec);
			if (!p)
				return -ENOMEM;
			files[*n] = ds_file_of(s, p, rec, ds_rel_offset(s, ds_rec_dir(s, rec)));
			/* no longer unique here: ds_each_unique() leaves it out */
			ds_rec(s, rec)->flags |= DS_F_ACROSS;
		}
		(*n)++;
		return 0;
	case X_RSET:
		for (uint64_t k = 0; rc == 0 && k < r->sets[t->ref].n; k++, (*n)++)
			if (files)
				rc = remote_file(r, r->sets[t->ref].first + k, &files[*n]);
		return rc;
	default:
		if (files)
			rc = remote_file(r, t->ref, &files[*n]);
		(*n)++;
		return rc;
	}
}

/* A set of the items t[0..n) that are group's (all, for DS_NONE). */
static int items_set(struct xmatch *x, const struct xitem *t, size_t n, uint32_t group, struct dupscan_set *set)
{
	size_t count = 0;
	int rc = 0;
	for (size_t b = 0; rc == 0 && b < n; b++)
		if (group == DS_NONE || t[b].group == group)
			rc = item_files(x, &t[b], NULL, &count);
	struct dupscan_file *files = ds_arena_alloc(&x->s->out, count * sizeof(*files));
	if (!files)
		return -ENOMEM;
	*set = (struct dupscan_set){ .files = files };
	for (size_t b = 0; rc == 0 && b < n; b++)
		if (group == DS_NONE || t[b].group == group)
			rc = item_files(x, &t[b], files, &set->count);
	return rc;
}

static int build(struct xmatch *x)
{
	dupscan_scan *s = x->s;
	size_t total = s->nsets, n = 0;
	for (size_t k = 0; k < s->nremotes; k++)
		total += s->remotes[k]->nsets;
	for (size_t i = 0; i < x->n; i++) {
		struct xitem *t = &x->it[i];
		total += t->group == i;
		if (t->group != DS_NONE && t->kind == X_RUNIQ)
			site_remote(x, t)->matched[t->ref - site_remote(x, t)->nset] = 1;
	}
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		rc = name_all(s->remotes[k], &x->w, matched);
	struct dupscan_set *sets = malloc((total ? total : 1) * sizeof(*sets));
	/* the sets of each side that joined one across hosts */
	uint8_t *used = calloc(total ? total : 1, 1);
	if (rc == 0 && (!sets || !used))
		rc = -ENOMEM;
	for (size_t i = 0, j; rc == 0 && i < x->n; i = j) {
		for (j = i + 1; j < x->n && x->it[j].size == x->it[i].size && x->it[j].partial == x->it[i].partial &&
				x->it[j].full == x->it[i].full; j++)
			;
		for (size_t a = i; rc == 0 && a < j; a++)
			if (x->it[a].group == a)
				rc = items_set(x, x->it + a, j - a, (uint32_t)a, &sets[n++]);
		for (size_t a = i; a < j; a++) {
			const struct xitem *t = &x->it[a];
			if (t->group == DS_NONE || (t->kind != X_LSET && t->kind != X_RSET))
				continue;
			size_t at = t->ref;
			for (uint32_t k = 1; k <= t->site; k++)
				at += k == 1 ? s->nsets : s->remotes[k - 2]->nsets;
			used[at] = 1;
		}
	}
	size_t at = 0;
	for (size_t i = 0; rc == 0 && i < s->nsets; i++, at++)
		if (!used[at])
			sets[n++] = s->sets[i];
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		for (size_t i = 0; rc == 0 && i < s->remotes[k]->nsets; i++, at++) {
			const struct xitem t = { .kind = X_RSET, .ref = i, .site = (uint32_t)k + 1 };
			if (!used[at] && (rc = items_set(x, &t, 1, DS_NONE, &sets[n])) == 0)
				n++;
		}
	free(used);
	if (rc) {
		free(sets);
		return rc;
	}
	free(s->sets);
	s->sets = sets;
	s->nsets = n;
	return ds_finish_sets(s);
}

/* Say why a side failed, as HOST:PATH: reason. */
static void report_side(dupscan_scan *s, struct ds_remote *r, int rc)
{
	char msg[1200];
	snprintf(msg, sizeof(msg), "%s: %s", r->shown, r->ch.why[0] ? r->ch.why : dupscan_strerror(rc));
	ds_report(s, msg, rc);
}

static int match_across(struct xmatch *x)
{
	dupscan_scan *s = x->s;
	int rc = gather(x);
	/* -1: another host is another file system */
	if (rc == 0 && s->opt.one_fs)
		x->n = 0;
	if (rc == 0)
		rc = keep_shared(x, 0);
	if (rc == 0)
		rc = hash_live(x, false);
	if (rc == 0)
		rc = keep_shared(x, 1);
	if (rc == 0 && !s->opt.partial_only) {
		rc = hash_live(x, true);
		if (rc == 0)
			rc = keep_shared(x, 2);
	}
	if (rc == 0)
		rc = confirm(x, s->opt.partial_only ? 1 : 2);
	return rc ? rc : build(x);
}

int ds_remote_finish(dupscan_scan *s)
{
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		rc = collect(s, r);
		if (rc == 0 && DS_GROW(r->rec_of, r->capset, r->nset + r->nuniq + 1))
			rc = -ENOMEM;
		for (uint64_t i = r->nset; rc == 0 && i < r->nset + r->nuniq; i++)
			r->rec_of[i] = DS_NONE;
		if (rc && rc != -ENOMEM && rc != DUPSCAN_E_CANCELED)
			report_side(s, r, rc);
	}
	struct xmatch x = { .s = s };
	if (rc == 0) {
		x.ba = malloc(DS_COPY_BUF);
		x.bb = malloc(DS_COPY_BUF);
		rc = x.ba && x.bb ? match_across(&x) : -ENOMEM;
	}
	free(x.it);
	free(x.ba);
	free(x.bb);
	ds_wr_free(&x.w);
	for (size_t k = 0; rc != 0 && rc != -ENOMEM && k < s->nremotes; k++)
		if (s->remotes[k]->ch.dead && rc != DUPSCAN_E_CANCELED && s->remotes[k]->done)
			report_side(s, s->remotes[k], rc);
	if (rc)
		return rc;
	s->remote_uniques = true;
	return 0;
}

int ds_remote_uniques(dupscan_scan *s)
{
	struct ds_wr w = { 0 };
	int rc = 0;
	size_t more = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		rc = name_all(r, &w, unmatched);
		if (rc && rc != -ENOMEM)
			report_side(s, r, rc);
		for (uint64_t i = 0; i < r->nuniq; i++)
			more += !r->matched[i];
	}
	ds_wr_free(&w);
	struct dupscan_file *u = rc ? NULL : realloc(s->uniques, (s->nuniques + more + 1) * sizeof(*u));
	if (!u)
		return rc ? rc : -ENOMEM;
	s->uniques = u;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		for (uint64_t i = 0; rc == 0 && i < r->nuniq; i++)
			if (!r->matched[i] && (rc = remote_file(r, r->nset + i, &s->uniques[s->nuniques])) == 0)
				s->nuniques++;
	}
	s->remote_uniques = false;
	return rc ? rc : ds_sort(s->uniques, s->nuniques, sizeof(*s->uniques), ds_cmp_file, s);
}

int ds_remote_protect(dupscan_scan *s, const char *path)
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

void ds_remote_free(dupscan_scan *s)
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
		free(r);
	}
	ds_wr_free(&w);
	free(s->remotes);
	s->remotes = NULL;
	s->nremotes = 0;
}

struct ds_remote *ds_remote_of(const dupscan_file *f)
{
	return f ? f->scan->mirror_of : NULL;
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
		rc = ds_chan_recv(&r->ch, &type, &rd);
	if (rc == 0) {
		uint64_t status = ds_rd_max(&rd, 100000);
		if (type != DS_W_END || rd.bad || ds_rd_more(&rd))
			rc = bad(r, "answer to a check");
		else
			rc = -(int)status;
	}
	return rc;
}

DUPSCAN_API const char *dupscan_file_host(const dupscan_file *f)
{
	struct ds_remote *r = ds_remote_of(f);
	return r ? r->label : NULL;
}

DUPSCAN_API void dupscan_remote_bytes(const dupscan_scan *s, uint64_t *received, uint64_t *sent)
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

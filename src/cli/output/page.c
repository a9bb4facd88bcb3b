/* SPDX-License-Identifier: MIT */
/* page.c: --format=html, one self-contained page (no network, nothing
 * beside it; its Content-Security-Policy allows no other source): the sets,
 * sortable by wasted bytes and filtered by path; the overlapping
 * directories; and a treemap of the space the copies waste, directory by
 * directory (a set of k copies wastes the bytes of k - 1, shared among its
 * k files), a click opening one level down. The scan's figures go into the
 * page as JSON inside a script element of type application/json, with '<',
 * '>' and '&' escaped, so no name can close it; the page's script shows
 * every name as text (textContent), never as markup. Opened as
 * report.html#selftest=TEXT, the page clicks its first box, sorts by size,
 * filters by TEXT and leaves what it saw in the body's data-selftest
 * attribute, for the tests in a headless browser. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output.h"

static const char *const page_head[] = {
	"<!DOCTYPE html>\n",
	"<html lang=\"en\">\n",
	"<head>\n",
	"<meta charset=\"utf-8\">\n",
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
	"<title>dupscan report</title>\n",
	"<style>\n",
	"body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }\n",
	"h1 { font-size: 1.4em; margin: 0 0 .3em; }\n",
	"h2 { font-size: 1.1em; margin: 1.5em 0 .5em; }\n",
	"table { border-collapse: collapse; width: 100%; }\n",
	"th, td { text-align: left; padding: .25em .5em; border-bottom: 1px solid #ddd; vertical-align: top; }\n",
	"th.sortable { cursor: pointer; text-decoration: underline dotted; }\n",
	"td.num, th.num { text-align: right; white-space: nowrap; }\n",
	".path { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }\n",
	"#treemap { position: relative; height: 420px; border: 1px solid #999; background: #f4f4f4; }\n",
	".cell { position: absolute; box-sizing: border-box; border: 1px solid #fff; overflow: hidden; padding: 2px 4px;\n",
	"        font-size: 12px; color: #fff; cursor: pointer; }\n",
	".cell.here { cursor: default; background: #777 !important; }\n",
	"#crumbs button { margin-right: .3em; }\n",
	"#filter { width: 40em; max-width: 100%; margin-bottom: .5em; }\n",
	".muted { color: #777; }\n",
	"</style>\n",
	"</head>\n",
	"<body>\n",
	"<h1>dupscan report</h1>\n",
	"<p id=\"summary\"></p>\n",
	"<h2>Where the copies are</h2>\n",
	"<p class=\"muted\">Each box is a directory, its area the space its files waste (a set of k copies wastes the bytes of k - 1, shared among the k); click one to open it.</p>\n",
	"<div id=\"crumbs\"></div>\n",
	"<div id=\"treemap\"></div>\n",
	"<h2>Directories that overlap</h2>\n",
	"<table id=\"pairs\"><thead><tr><th>Directory</th><th class=\"num\">Its bytes with a copy in the other</th><th>Other directory</th><th class=\"num\">Its bytes with a copy in the first</th></tr></thead><tbody></tbody></table>\n",
	"<p><span id=\"pairsshown\" class=\"muted\"></span> <button id=\"pairsmore\" hidden>Show more</button></p>\n",
	"<h2>Duplicate sets</h2>\n",
	"<input id=\"filter\" type=\"search\" placeholder=\"Show the sets with a path containing...\">\n",
	"<table id=\"sets\"><thead><tr><th class=\"num sortable\" data-key=\"waste\">Wasted</th><th class=\"num sortable\" data-key=\"size\">Size</th><th class=\"num sortable\" data-key=\"count\">Files</th><th>Paths</th></tr></thead><tbody></tbody></table>\n",
	"<p><span id=\"setsshown\" class=\"muted\"></span> <button id=\"setsmore\" hidden>Show more</button></p>\n",
	NULL
};

static const char *const page_script[] = {
	"(function () {\n",
	"  'use strict';\n",
	"  var errors = [];\n",
	"  window.addEventListener('error', function (e) {\n",
	"    errors.push(String(e.message));\n",
	"    document.body.setAttribute('data-errors', errors.join('; '));\n",
	"  });\n",
	"  var D = JSON.parse(document.getElementById('data').textContent);\n",
	"  var dirs = D.dirs; /* [path, parent, files, bytes, dupFiles, dupBytes] */\n",
	"  var kids = dirs.map(function () { return []; }), tops = [];\n",
	"  dirs.forEach(function (d, i) { if (d[1] < 0) tops.push(i); else kids[d[1]].push(i); });\n",
	"\n",
	"  function el(tag, cls, text) {\n",
	"    var e = document.createElement(tag);\n",
	"    if (cls) e.className = cls;\n",
	"    if (text !== undefined) e.textContent = text;\n",
	"    return e;\n",
	"  }\n",
	"  function size(b) {\n",
	"    if (b < 1000) return b + (b === 1 ? ' byte' : ' bytes');\n",
	"    var u = ['KB', 'MB', 'GB', 'TB', 'PB', 'EB'], i = 0;\n",
	"    b /= 1000;\n",
	"    while (b >= 999.95 && i < 5) { b /= 1000; i++; }\n",
	"    return b.toFixed(1) + ' ' + u[i];\n",
	"  }\n",
	"  function count(n) { return String(n).replace(/\\B(?=(\\d{3})+(?!\\d))/g, ','); }\n",
	"  function pct(part, whole) { return whole ? Math.floor(part * 100 / whole) : 100; }\n",
	"  function name(i) {\n",
	"    var p = dirs[i][0], up = dirs[i][1];\n",
	"    return up < 0 ? p : p.slice(dirs[up][0].length).replace(/^\\/+/, '');\n",
	"  }\n",
	"\n",
	"  var waste = 0, dupFiles = 0;\n",
	"  D.sets.forEach(function (s) { waste += s[0] * (s[1].length - 1); dupFiles += s[1].length; });\n",
	"  document.getElementById('summary').textContent = count(D.sets.length) + ' sets of duplicates, ' +\n",
	"    count(dupFiles) + ' files; ' + size(waste) + ' would be freed keeping one file of each set. ' + D.command;\n",
	"\n",
	"  /* ---- the treemap: squarified rows in a 160 x 100 box, shown in percent ---- */\n",
	"  /* each directory's waste: a set's k - 1 copies shared among its k files, rolled up */\n",
	"  var waste = dirs.map(function () { return 0; }), at = {};\n",
	"  dirs.forEach(function (d, i) { at[d[0]] = i; });\n",
	"  D.sets.forEach(function (s) {\n",
	"    var share = s[0] * (s[1].length - 1) / s[1].length;\n",
	"    s[1].forEach(function (p) {\n",
	"      var j = p.lastIndexOf('/'), d = j < 0 ? undefined : (p.slice(0, j) in at ? at[p.slice(0, j)] : at[p.slice(0, j + 1)]);\n",
	"      if (d !== undefined) waste[d] += share;\n",
	"    });\n",
	"  });\n",
	"  for (var w = dirs.length - 1; w >= 0; w--) if (dirs[w][1] >= 0) waste[dirs[w][1]] += waste[w];\n",
	"  var cur = -1; /* -1: the arguments; one argument with copies: opened at once */\n",
	"  var withCopies = tops.filter(function (i) { return waste[i] > 0.5; });\n",
	"  if (withCopies.length === 1) cur = withCopies[0];\n",
	"  var MAXBOX = 60;\n",
	"  function items(d) {\n",
	"    var ids = d < 0 ? tops : kids[d], out = [], sub = 0;\n",
	"    ids.forEach(function (i) { sub += waste[i]; if (waste[i] > 0.5) out.push({ id: i, label: name(i), v: waste[i] }); });\n",
	"    if (d >= 0 && waste[d] - sub > 0.5) out.push({ id: -1, label: '(files here)', v: waste[d] - sub });\n",
	"    out.sort(function (a, b) { return b.v - a.v; });\n",
	"    if (out.length > MAXBOX) { /* the smallest in one box: thousands would be too thin to see or click */\n",
	"      var rest = out.splice(MAXBOX - 1), v = 0;\n",
	"      rest.forEach(function (r) { v += r.v; });\n",
	"      out.push({ id: -1, label: '(' + count(rest.length) + ' more)', v: v });\n",
	"      out.sort(function (a, b) { return b.v - a.v; });\n",
	"    }\n",
	"    return out;\n",
	"  }\n",
	"  function worst(row, side) {\n",
	"    var s = 0, mx = 0, mn = Infinity;\n",
	"    row.forEach(function (r) { s += r.a; mx = Math.max(mx, r.a); mn = Math.min(mn, r.a); });\n",
	"    return Math.max(side * side * mx / (s * s), s * s / (side * side * mn));\n",
	"  }\n",
	"  function layout(list, x, y, w, h) {\n",
	"    var total = 0, rects = [];\n",
	"    list.forEach(function (it) { total += it.v; });\n",
	"    var rest = list.map(function (it) { return { it: it, a: it.v * w * h / total }; });\n",
	"    while (rest.length) {\n",
	"      var side = Math.min(w, h), row = [], best = Infinity;\n",
	"      while (rest.length) {\n",
	"        var cand = row.concat([rest[0]]), wr = worst(cand, side);\n",
	"        if (row.length && wr > best) break;\n",
	"        row = cand; best = wr; rest.shift();\n",
	"      }\n",
	"      var sum = 0, off = 0;\n",
	"      row.forEach(function (r) { sum += r.a; });\n",
	"      var thick = sum / side;\n",
	"      row.forEach(function (r) {\n",
	"        var len = r.a / thick;\n",
	"        rects.push(w >= h ? { it: r.it, x: x, y: y + off, w: thick, h: len } : { it: r.it, x: x + off, y: y, w: len, h: thick });\n",
	"        off += len;\n",
	"      });\n",
	"      if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }\n",
	"    }\n",
	"    return rects;\n",
	"  }\n",
	"  function crumbs() {\n",
	"    var c = document.getElementById('crumbs'), chain = [];\n",
	"    c.textContent = '';\n",
	"    for (var d = cur; d >= 0; d = dirs[d][1]) chain.unshift(d);\n",
	"    var top = el('button', null, 'All');\n",
	"    top.addEventListener('click', function () { cur = -1; draw(); });\n",
	"    c.appendChild(top);\n",
	"    chain.forEach(function (d) {\n",
	"      var b = el('button', 'path', name(d));\n",
	"      b.addEventListener('click', function () { cur = d; draw(); });\n",
	"      c.appendChild(b);\n",
	"    });\n",
	"  }\n",
	"  function draw() {\n",
	"    var box = document.getElementById('treemap');\n",
	"    box.textContent = '';\n",
	"    crumbs();\n",
	"    var list = items(cur);\n",
	"    if (!list.length) { box.appendChild(el('p', 'muted', 'No file here has a copy.')); return; }\n",
	"    layout(list, 0, 0, 160, 100).forEach(function (r, k) {\n",
	"      var c = el('div', r.it.id < 0 ? 'cell here' : 'cell');\n",
	"      c.style.left = (r.x / 1.6) + '%'; c.style.top = r.y + '%';\n",
	"      c.style.width = (r.w / 1.6) + '%'; c.style.height = r.h + '%';\n",
	"      c.style.background = 'hsl(' + (k * 47 % 360) + ', 45%, 42%)';\n",
	"      c.appendChild(el('div', 'path', r.it.label));\n",
	"      c.appendChild(el('div', null, size(Math.round(r.it.v))));\n",
	"      if (r.it.id >= 0) {\n",
	"        c.title = dirs[r.it.id][0];\n",
	"        c.setAttribute('data-dir', String(r.it.id));\n",
	"        c.addEventListener('click', function () { cur = r.it.id; draw(); });\n",
	"      }\n",
	"      box.appendChild(c);\n",
	"    });\n",
	"  }\n",
	"  draw();\n",
	"\n",
	"  /* ---- the tables: a page of rows at a time (a report of half a million sets\n",
	"   * would be as many rows to lay out); a row made when first shown ---- */\n",
	"  var PAGE = 200;\n",
	"  function pager(one, many, tbody, shownEl, more, make) {\n",
	"    var p = { list: [], limit: PAGE, note: '' };\n",
	"    function put(from) {\n",
	"      for (var i = from; i < Math.min(p.limit, p.list.length); i++) {\n",
	"        var r = p.list[i];\n",
	"        if (!r.tr) r.tr = make(r);\n",
	"        tbody.appendChild(r.tr);\n",
	"      }\n",
	"      var n = Math.min(p.limit, p.list.length);\n",
	"      var all = p.list.length, what = (all === 1 ? one : many) + p.note + '.';\n",
	"      shownEl.textContent = n < all ? 'The first ' + count(n) + ' of ' + count(all) + ' ' + what :\n",
	"        (all ? count(all) + ' ' : 'No ') + what;\n",
	"      more.hidden = n >= p.list.length;\n",
	"      more.textContent = 'Show ' + count(Math.min(PAGE, p.list.length - n)) + ' more';\n",
	"    }\n",
	"    p.show = function (list, note) {\n",
	"      p.list = list; p.note = note || ''; p.limit = PAGE;\n",
	"      tbody.textContent = '';\n",
	"      put(0);\n",
	"    };\n",
	"    more.addEventListener('click', function () { var n = p.limit; p.limit += PAGE; put(n); });\n",
	"    return p;\n",
	"  }\n",
	"\n",
	"  /* ---- the overlapping directories ---- */\n",
	"  var pairs = pager('pair of directories overlapping by ' + D.percent + '% or more',\n",
	"    'pairs of directories overlapping by ' + D.percent + '% or more',\n",
	"    document.querySelector('#pairs tbody'), document.getElementById('pairsshown'),\n",
	"    document.getElementById('pairsmore'), function (r) {\n",
	"      var p = r.p, tr = el('tr'); /* [a, b, filesA, bytesA, filesB, bytesB] */\n",
	"      [[p[0], p[2], p[3]], [p[1], p[4], p[5]]].forEach(function (s) {\n",
	"        tr.appendChild(el('td', 'path', dirs[s[0]][0] + '/'));\n",
	"        tr.appendChild(el('td', 'num', pct(s[2], dirs[s[0]][3]) + '% (' + count(s[1]) + ' of ' +\n",
	"          count(dirs[s[0]][2]) + ' files, ' + size(s[2]) + ')'));\n",
	"      });\n",
	"      return tr;\n",
	"    });\n",
	"  pairs.show(D.pairs.map(function (p) { return { p: p }; }));\n",
	"  if (D.pairsError) document.getElementById('pairsshown').textContent = D.pairsError + ': no pair weighed (dupscan --dirs lists directories alike).';\n",
	"\n",
	"  /* ---- the sets: sorted by a column, filtered by path ---- */\n",
	"  var rows = D.sets.map(function (s) {\n",
	"    return { s: s, waste: s[0] * (s[1].length - 1), size: s[0], count: s[1].length, text: null };\n",
	"  });\n",
	"  var sets = pager('set', 'sets', document.querySelector('#sets tbody'), document.getElementById('setsshown'),\n",
	"    document.getElementById('setsmore'), function (r) {\n",
	"      var tr = el('tr'), td = el('td', 'path');\n",
	"      tr.appendChild(el('td', 'num', size(r.waste)));\n",
	"      tr.appendChild(el('td', 'num', size(r.size)));\n",
	"      tr.appendChild(el('td', 'num', String(r.count)));\n",
	"      r.s[1].forEach(function (p) { td.appendChild(el('div', null, p)); });\n",
	"      tr.appendChild(td);\n",
	"      return tr;\n",
	"    });\n",
	"  var key = 'waste', desc = true, query = '';\n",
	"  function showSets() {\n",
	"    if (!query) { sets.show(rows); return; }\n",
	"    sets.show(rows.filter(function (r) {\n",
	"      if (r.text === null) r.text = r.s[1].join('\\n').toLowerCase();\n",
	"      return r.text.indexOf(query) >= 0;\n",
	"    }), ' with a path containing \\u201c' + query + '\\u201d (of ' + count(rows.length) + ')');\n",
	"  }\n",
	"  Array.prototype.forEach.call(document.querySelectorAll('#sets th.sortable'), function (th) {\n",
	"    th.addEventListener('click', function () {\n",
	"      desc = th.getAttribute('data-key') === key ? !desc : true;\n",
	"      key = th.getAttribute('data-key');\n",
	"      rows.sort(function (a, b) { return (desc ? b[key] - a[key] : a[key] - b[key]); });\n",
	"      showSets();\n",
	"    });\n",
	"  });\n",
	"  document.getElementById('filter').addEventListener('input', function (e) {\n",
	"    query = e.target.value.toLowerCase();\n",
	"    showSets();\n",
	"  });\n",
	"  rows.sort(function (a, b) { return b.waste - a.waste; });\n",
	"  showSets();\n",
	"\n",
	"  /* ---- #selftest: the page drives itself and leaves what it saw in data-selftest ---- */\n",
	"  if (location.hash.indexOf('#selftest') === 0) {\n",
	"    var seen = { cells: document.querySelectorAll('#treemap .cell').length,\n",
	"                 wasteTotal: Math.round(tops.reduce(function (t, i) { return t + waste[i]; }, 0)),\n",
	"                 boxLabels: Array.prototype.map.call(document.querySelectorAll('#treemap .cell .path'), function (e) { return e.textContent; }) };\n",
	"    var first = document.querySelector('#treemap .cell[data-dir]');\n",
	"    if (first) {\n",
	"      var want = Number(first.getAttribute('data-dir'));\n",
	"      first.dispatchEvent(new MouseEvent('click', { bubbles: true }));\n",
	"      seen.opened = cur === want ? dirs[want][0] : 'not opened';\n",
	"      seen.crumbs = document.querySelectorAll('#crumbs button').length;\n",
	"      seen.cellsInside = document.querySelectorAll('#treemap .cell').length;\n",
	"    }\n",
	"    document.querySelector('#sets th[data-key=\"size\"]').dispatchEvent(new MouseEvent('click', { bubbles: true }));\n",
	"    seen.firstBySize = rows.length ? rows[0].size : 0;\n",
	"    var sb = document.querySelector('#sets tbody');\n",
	"    seen.setRows = sb.rows.length;\n",
	"    document.getElementById('setsmore').dispatchEvent(new MouseEvent('click', { bubbles: true }));\n",
	"    seen.setRowsMore = sb.rows.length;\n",
	"    seen.setsShown = document.getElementById('setsshown').textContent;\n",
	"    var f = document.getElementById('filter');\n",
	"    f.value = decodeURIComponent(location.hash.slice('#selftest='.length));\n",
	"    f.dispatchEvent(new Event('input'));\n",
	"    seen.shownByFilter = sets.list.length;\n",
	"    seen.setRowsFiltered = sb.rows.length;\n",
	"    seen.setsShownFiltered = document.getElementById('setsshown').textContent;\n",
	"    f.value = '';\n",
	"    f.dispatchEvent(new Event('input'));\n",
	"    seen.setRowsCleared = sb.rows.length; /* and the DOM dumped holds the first page of every set */\n",

	"    document.body.setAttribute('data-selftest', JSON.stringify(seen));\n",
	"  }\n",
	"})();\n",
	NULL
};

static void put_lines(const char *const *lines, FILE *out)
{
	for (; *lines; lines++)
		fputs(*lines, out);
}

static void html_string(const char *s, FILE *out)
{
	fputc('"', out);
	json_chars_in(s, out, true);
	fputc('"', out);
}

/* [path, parent, files, bytes, dupFiles, dupBytes] a directory */
static int data_dirs(const dupscan_scan *scan, FILE *out)
{
	size_t n = dupscan_dir_count(scan);
	fputs("\"dirs\": [", out);
	for (size_t d = 0; d < n; d++) {
		size_t len = dupscan_dir_path(scan, d, NULL, 0);
		char *p = malloc(len + 1);
		if (!p)
			return -1;
		dupscan_dir_path(scan, d, p, len + 1);
		size_t up = dupscan_dir_parent(scan, d);
		fputs(d ? ",\n[" : "\n[", out);
		html_string(p, out);
		fprintf(out, ", %lld, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]",
			up == SIZE_MAX ? -1LL : (long long)up, dupscan_dir_tally(scan, d, DUPSCAN_TALLY_FILES),
			dupscan_dir_tally(scan, d, DUPSCAN_TALLY_BYTES), dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_FILES),
			dupscan_dir_tally(scan, d, DUPSCAN_TALLY_DUP_BYTES));
		free(p);
	}
	fputs("],\n", out);
	return 0;
}

/* [a, b, filesA, bytesA, filesB, bytesB] a pair; [size, [paths]] a set */
static void data_sets(const dupscan_scan *scan, FILE *out)
{
	size_t n = dupscan_overlap_count(scan);
	fputs("\"pairs\": [", out);
	for (size_t i = 0; i < n; i++) {
		size_t a, b;
		dupscan_overlap_dirs(scan, i, &a, &b);
		fprintf(out, "%s[%zu, %zu, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", i ? ",\n" : "\n", a, b,
			dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_FILES),
			dupscan_overlap_tally(scan, i, 0, DUPSCAN_TALLY_BYTES),
			dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_FILES),
			dupscan_overlap_tally(scan, i, 1, DUPSCAN_TALLY_BYTES));
	}
	fputs("],\n\"sets\": [", out);
	n = dupscan_set_count(scan);
	for (size_t i = 0; i < n; i++) {
		const dupscan_set *set = dupscan_get_set(scan, i);
		fprintf(out, "%s[%" PRIu64 ", [", i ? ",\n" : "\n", dupscan_file_size(dupscan_set_file(set, 0)));
		for (size_t k = 0; k < dupscan_set_file_count(set); k++) {
			if (k)
				fputs(", ", out);
			html_string(dupscan_file_path(dupscan_set_file(set, k)), out);
		}
		fputs("]]", out);
	}
	fputs("]\n", out);
}

int act_html(dupscan_scan *scan, const struct cli_opts *o, int argc, char **argv, FILE *out)
{
	unsigned percent = o->overlap ? o->overlap : 50;
	int rc = dupscan_find_overlaps(scan, percent);
	/* too many pairs to weigh: the page without them (the sets and the map
	 * are what such a tree needs most), and status 1 */
	if (rc < 0)
		where_error("--format=html", rc);
	if (rc < 0 && rc != DUPSCAN_E_TOO_MANY)
		return 1;
	put_lines(page_head, out);
	fputs("<script id=\"data\" type=\"application/json\">\n{\"command\": \"", out);
	json_command_line(argc, argv, out, true);
	fprintf(out, "\",\n\"percent\": %u,\n", percent);
	if (rc < 0) {
		fputs("\"pairsError\": ", out);
		html_string(dupscan_strerror(rc), out);
		fputs(",\n", out);
	}
	if (data_dirs(scan, out) < 0) {
		fprintf(stderr, "dupscan: %s\n", dupscan_strerror(-ENOMEM));
		return 1;
	}
	data_sets(scan, out);
	fputs("}\n</script>\n<script>\n", out);
	put_lines(page_script, out);
	fputs("</script>\n</body>\n</html>\n", out);
	return rc < 0;
}

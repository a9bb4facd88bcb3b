(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    document.body.setAttribute('data-errors', errors.join('; '));
  });
  var D = JSON.parse(document.getElementById('data').textContent);
  var dirs = D.dirs; /* [path, parent, files, bytes, dupFiles, dupBytes] */
  var kids = dirs.map(function () { return []; }), tops = [];
  dirs.forEach(function (d, i) { if (d[1] < 0) tops.push(i); else kids[d[1]].push(i); });

  /* a name's control characters shown as escapes (\n, \x1b): a newline
   * in a file name would otherwise break it into what looks like two rows */
  function visible(p) {
    return p.replace(/[\x00-\x1f\x7f]/g, function (c) {
      return c === '\n' ? '\\n' : c === '\t' ? '\\t' : '\\x' + ('0' + c.charCodeAt(0).toString(16)).slice(-2);
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = cls && /(^| )path( |$)/.test(cls) ? visible(text) : text;
    return e;
  }
  function size(b) {
    if (b < 1000) return b + (b === 1 ? ' byte' : ' bytes');
    var u = ['KB', 'MB', 'GB', 'TB', 'PB', 'EB'], i = 0;
    b /= 1000;
    while (b >= 999.95 && i < 5) { b /= 1000; i++; }
    return b.toFixed(1) + ' ' + u[i];
  }
  function count(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function pct(part, whole) { return whole ? Math.floor(part * 100 / whole) : 100; }
  function name(i) {
    var p = dirs[i][0], up = dirs[i][1];
    return up < 0 ? p : p.slice(dirs[up][0].length).replace(/^\/+/, '');
  }

  /* a set's copies take size x (k - 1), less what they share already (s[2]:
   * reflinks, snapshots; given only where any copy shares blocks) */
  function reclaim(s) { return s[0] * (s[1].length - 1) - (s[2] || 0); }
  var waste = 0, dupFiles = 0, shared = 0;
  D.sets.forEach(function (s) { waste += reclaim(s); shared += s[2] || 0; dupFiles += s[1].length; });
  document.getElementById('summary').textContent = count(D.sets.length) + ' sets of duplicates, ' +
    count(dupFiles) + ' files; ' + size(waste) + ' would be freed keeping one file of each set' +
    (shared ? ' (' + size(shared) + ' more of their copies share their blocks already: reflinks, snapshots)' : '') +
    '. ' + D.command;
  if (shared)
    document.getElementById('treemap').previousElementSibling.previousElementSibling.textContent +=
      ' Bytes that copies share already (reflinks, snapshots) take no space and are left out.';

  /* ---- the treemap: squarified rows in a 160 x 100 box, shown in percent ---- */
  /* each directory's waste: a set's k - 1 copies shared among its k files, rolled up */
  var waste = dirs.map(function () { return 0; }), at = {};
  dirs.forEach(function (d, i) { at[d[0]] = i; });
  D.sets.forEach(function (s) {
    var share = reclaim(s) / s[1].length;
    s[1].forEach(function (p) {
      var j = p.lastIndexOf('/'), d = j < 0 ? undefined : (p.slice(0, j) in at ? at[p.slice(0, j)] : at[p.slice(0, j + 1)]);
      if (d !== undefined) waste[d] += share;
    });
  });
  for (var w = dirs.length - 1; w >= 0; w--) if (dirs[w][1] >= 0) waste[dirs[w][1]] += waste[w];
  var cur = -1; /* -1: the arguments; one argument with copies: opened at once */
  var withCopies = tops.filter(function (i) { return waste[i] > 0.5; });
  if (withCopies.length === 1) cur = withCopies[0];
  var MAXBOX = 60;
  function items(d) {
    var ids = d < 0 ? tops : kids[d], out = [], sub = 0;
    ids.forEach(function (i) { sub += waste[i]; if (waste[i] > 0.5) out.push({ id: i, label: name(i), v: waste[i] }); });
    if (d >= 0 && waste[d] - sub > 0.5) out.push({ id: -1, label: '(files here)', v: waste[d] - sub });
    out.sort(function (a, b) { return b.v - a.v; });
    if (out.length > MAXBOX) { /* the smallest in one box: thousands would be too thin to see or click */
      var rest = out.splice(MAXBOX - 1), v = 0;
      rest.forEach(function (r) { v += r.v; });
      out.push({ id: -1, label: '(' + count(rest.length) + ' more)', v: v });
      out.sort(function (a, b) { return b.v - a.v; });
    }
    return out;
  }
  function worst(row, side) {
    var s = 0, mx = 0, mn = Infinity;
    row.forEach(function (r) { s += r.a; mx = Math.max(mx, r.a); mn = Math.min(mn, r.a); });
    return Math.max(side * side * mx / (s * s), s * s / (side * side * mn));
  }
  function layout(list, x, y, w, h) {
    var total = 0, rects = [];
    list.forEach(function (it) { total += it.v; });
    var rest = list.map(function (it) { return { it: it, a: it.v * w * h / total }; });
    while (rest.length) {
      var side = Math.min(w, h), row = [], best = Infinity;
      while (rest.length) {
        var cand = row.concat([rest[0]]), wr = worst(cand, side);
        if (row.length && wr > best) break;
        row = cand; best = wr; rest.shift();
      }
      var sum = 0, off = 0;
      row.forEach(function (r) { sum += r.a; });
      var thick = sum / side;
      row.forEach(function (r) {
        var len = r.a / thick;
        rects.push(w >= h ? { it: r.it, x: x, y: y + off, w: thick, h: len } : { it: r.it, x: x + off, y: y, w: len, h: thick });
        off += len;
      });
      if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
    }
    return rects;
  }
  function crumbs() {
    var c = document.getElementById('crumbs'), chain = [];
    c.textContent = '';
    for (var d = cur; d >= 0; d = dirs[d][1]) chain.unshift(d);
    var top = el('button', null, 'All');
    top.addEventListener('click', function () { cur = -1; draw(); });
    c.appendChild(top);
    chain.forEach(function (d) {
      var b = el('button', 'path', name(d));
      b.addEventListener('click', function () { cur = d; draw(); });
      c.appendChild(b);
    });
  }
  function draw() {
    var box = document.getElementById('treemap');
    box.textContent = '';
    crumbs();
    var list = items(cur);
    if (!list.length) { box.appendChild(el('p', 'muted', 'No file here has a copy.')); return; }
    layout(list, 0, 0, 160, 100).forEach(function (r, k) {
      var c = el('div', r.it.id < 0 ? 'cell here' : 'cell');
      c.style.left = (r.x / 1.6) + '%'; c.style.top = r.y + '%';
      c.style.width = (r.w / 1.6) + '%'; c.style.height = r.h + '%';
      c.style.background = 'hsl(' + (k * 47 % 360) + ', 45%, 42%)';
      c.appendChild(el('div', 'path', r.it.label));
      c.appendChild(el('div', null, size(Math.round(r.it.v))));
      if (r.it.id >= 0) {
        c.title = dirs[r.it.id][0];
        c.setAttribute('data-dir', String(r.it.id));
        c.addEventListener('click', function () { cur = r.it.id; draw(); });
      }
      box.appendChild(c);
    });
  }
  draw();

  /* ---- the tables: a page of rows at a time (a report of half a million sets
   * would be as many rows to lay out); a row made when first shown ---- */
  var PAGE = 200;
  function pager(one, many, tbody, shownEl, more, make) {
    var p = { list: [], limit: PAGE, note: '' };
    function put(from) {
      for (var i = from; i < Math.min(p.limit, p.list.length); i++) {
        var r = p.list[i];
        if (!r.tr) r.tr = make(r);
        tbody.appendChild(r.tr);
      }
      var n = Math.min(p.limit, p.list.length);
      var all = p.list.length, what = (all === 1 ? one : many) + p.note + '.';
      shownEl.textContent = n < all ? 'The first ' + count(n) + ' of ' + count(all) + ' ' + what :
        (all ? count(all) + ' ' : 'No ') + what;
      more.hidden = n >= p.list.length;
      more.textContent = 'Show ' + count(Math.min(PAGE, p.list.length - n)) + ' more';
    }
    p.show = function (list, note) {
      p.list = list; p.note = note || ''; p.limit = PAGE;
      tbody.textContent = '';
      put(0);
    };
    more.addEventListener('click', function () { var n = p.limit; p.limit += PAGE; put(n); });
    return p;
  }

  /* ---- the overlapping directories ---- */
  var pairs = pager('pair of directories overlapping by ' + D.percent + '% or more',
    'pairs of directories overlapping by ' + D.percent + '% or more',
    document.querySelector('#pairs tbody'), document.getElementById('pairsshown'),
    document.getElementById('pairsmore'), function (r) {
      var p = r.p, tr = el('tr'); /* [a, b, filesA, bytesA, filesB, bytesB(, sharedA, sharedB)] */
      [[p[0], p[2], p[3], p[6]], [p[1], p[4], p[5], p[7]]].forEach(function (s) {
        tr.appendChild(el('td', 'path', dirs[s[0]][0] + '/'));
        tr.appendChild(el('td', 'num', pct(s[2], dirs[s[0]][3]) + '% (' + count(s[1]) + ' of ' +
          count(dirs[s[0]][2]) + ' files, ' + size(s[2]) + (s[3] ? ', ' + size(s[3]) + ' of it shared' : '') + ')'));
      });
      return tr;
    });
  pairs.show(D.pairs.map(function (p) { return { p: p }; }));
  if (D.pairsError) document.getElementById('pairsshown').textContent = D.pairsError + ': no pair weighed (dupscan --dirs lists directories alike).';

  /* ---- the sets: sorted by a column, filtered by path ---- */
  var rows = D.sets.map(function (s) {
    return { s: s, waste: reclaim(s), size: s[0], count: s[1].length, text: null };
  });
  var sets = pager('set', 'sets', document.querySelector('#sets tbody'), document.getElementById('setsshown'),
    document.getElementById('setsmore'), function (r) {
      var tr = el('tr'), td = el('td', 'path');
      tr.appendChild(el('td', 'num', size(r.waste)));
      tr.appendChild(el('td', 'num', size(r.size)));
      tr.appendChild(el('td', 'num', String(r.count)));
      /* --ignore-metadata: files of one picture or sound, their groups of
         the same bytes (the tags differ between groups) */
      if (r.s[3]) td.appendChild(el('div', 'tags', 'The same picture or sound; the tags differ between the groups:'));
      r.s[1].forEach(function (p, i) {
        var d = td.appendChild(el('div', 'path', p));
        if (r.s[3]) d.appendChild(el('span', 'group', ' \u2014 group ' + r.s[3][i]));
      });
      tr.appendChild(td);
      return tr;
    });
  var key = 'waste', desc = true, query = '';
  function showSets() {
    if (!query) { sets.show(rows); return; }
    sets.show(rows.filter(function (r) {
      if (r.text === null) r.text = r.s[1].join('\n').toLowerCase();
      return r.text.indexOf(query) >= 0;
    }), ' with a path containing \u201c' + query + '\u201d (of ' + count(rows.length) + ')');
  }
  Array.prototype.forEach.call(document.querySelectorAll('#sets th.sortable'), function (th) {
    th.addEventListener('click', function () {
      desc = th.getAttribute('data-key') === key ? !desc : true;
      key = th.getAttribute('data-key');
      rows.sort(function (a, b) { return (desc ? b[key] - a[key] : a[key] - b[key]); });
      showSets();
    });
  });
  document.getElementById('filter').addEventListener('input', function (e) {
    query = e.target.value.toLowerCase();
    showSets();
  });
  rows.sort(function (a, b) { return b.waste - a.waste; });
  showSets();

  /* ---- with --reference: the files with no copy under the references, filtered by path ---- */
  var gone = null;
  if (D.references) {
    var gonePart = document.getElementById('missingpart'), goneSay = document.getElementById('missingsummary');
    gonePart.hidden = false;
    if (D.missingError) {
      goneSay.textContent = D.missingError + '.';
      document.getElementById('mfilter').hidden = document.getElementById('missing').hidden = true;
    } else {
      var goneBytes = 0, goneRows = D.missing.map(function (m) { goneBytes += m[1]; return { m: m, text: m[0].toLowerCase() }; });
      var one = goneRows.length === 1;
      goneSay.textContent = count(goneRows.length) + (one ? ' file (' : ' files (') + size(goneBytes) + ') ' +
        (one ? 'has' : 'have') + ' no copy under ' + D.references.join(' or ') + '.';
      gone = pager('file with no copy', 'files with no copy', document.querySelector('#missing tbody'),
        document.getElementById('missingshown'), document.getElementById('missingmore'), function (r) {
          var tr = el('tr');
          tr.appendChild(el('td', 'num', size(r.m[1])));
          tr.appendChild(el('td', 'path', r.m[0]));
          return tr;
        });
      gone.filter = function (q) {
        gone.show(q ? goneRows.filter(function (r) { return r.text.indexOf(q) >= 0; }) : goneRows,
          q ? ' with a path containing \u201c' + q + '\u201d (of ' + count(goneRows.length) + ')' : '');
      };
      document.getElementById('mfilter').addEventListener('input', function (e) { gone.filter(e.target.value.toLowerCase()); });
      gone.filter('');
    }
  }

  /* ---- #selftest: the page drives itself and leaves what it saw in data-selftest ---- */
  if (location.hash.indexOf('#selftest') === 0) {
    var seen = { cells: document.querySelectorAll('#treemap .cell').length,
                 wasteTotal: Math.round(tops.reduce(function (t, i) { return t + waste[i]; }, 0)),
                 boxLabels: Array.prototype.map.call(document.querySelectorAll('#treemap .cell .path'), function (e) { return e.textContent; }) };
    var first = document.querySelector('#treemap .cell[data-dir]');
    if (first) {
      var want = Number(first.getAttribute('data-dir'));
      first.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      seen.opened = cur === want ? dirs[want][0] : 'not opened';
      seen.crumbs = document.querySelectorAll('#crumbs button').length;
      seen.cellsInside = document.querySelectorAll('#treemap .cell').length;
    }
    document.querySelector('#sets th[data-key="size"]').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    seen.firstBySize = rows.length ? rows[0].size : 0;
    var sb = document.querySelector('#sets tbody');
    seen.setRows = sb.rows.length;
    document.getElementById('setsmore').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    seen.setRowsMore = sb.rows.length;
    seen.setsShown = document.getElementById('setsshown').textContent;
    var f = document.getElementById('filter');
    f.value = decodeURIComponent(location.hash.slice('#selftest='.length));
    f.dispatchEvent(new Event('input'));
    seen.shownByFilter = sets.list.length;
    seen.setRowsFiltered = sb.rows.length;
    seen.setsShownFiltered = document.getElementById('setsshown').textContent;
    f.value = '';
    f.dispatchEvent(new Event('input'));
    seen.setRowsCleared = sb.rows.length; /* and the DOM dumped holds the first page of every set */
    if (gone) {
      var mb = document.querySelector('#missing tbody'), mf = document.getElementById('mfilter');
      seen.missingRows = mb.rows.length;
      seen.missingShown = document.getElementById('missingshown').textContent;
      document.getElementById('missingmore').dispatchEvent(new MouseEvent('click', { bubbles: true }));
      seen.missingRowsMore = mb.rows.length;
      mf.value = decodeURIComponent(location.hash.slice('#selftest='.length));
      mf.dispatchEvent(new Event('input'));
      seen.missingByFilter = gone.list.length;
      seen.missingRowsFiltered = mb.rows.length;
    }
    if (D.references) seen.missingSummary = document.getElementById('missingsummary').textContent;
    document.body.setAttribute('data-selftest', JSON.stringify(seen));
  }
})();

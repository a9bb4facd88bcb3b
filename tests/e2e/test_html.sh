#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --format=html in a real browser (Debian's chromium, headless; scripts/test
# installs it; skipped where it cannot run): the page loads from a file with
# no error, shows every set's files and every overlapping pair of the tree,
# draws the treemap and opens a directory on a click, sorts and filters the
# sets, needs nothing beside it, and shows a name holding <script> as text.
. "$(dirname "$0")/../fixtures/lib.sh"
# the page is the program's, the same in every build: checked once a run (scripts/test)
[ -n "${HTML_TESTED:-}" ] && { ok "# SKIP the page is checked once a run, in a step of its own (scripts/test)"; done_testing; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { ok "# SKIP no chromium here"; done_testing; }

mk 'p/2019/a' 'first photo, taken in January'
mk 'p/2019/b' 'second photo, taken in February, a longer one'
mk 'p/2019/c' 'third photo, alone'
mk 'p/2018/<script>alert(1)</script>/d' 'a photo under a hostile name'
mk 'p/2018/e' 'fifth'
mkdir -p bk && cp -r p/2019 bk/2019 && cp 'p/2018/<script>alert(1)</script>/d' bk/d-copy
mk "bk/line
break" 'fifth'
"$DUPSCAN" -rq --format=html p bk > report.html
rc=$?
[ "$rc" = 0 ] && [ -s report.html ] && ok "--format=html writes the page (status 0)" || not_ok "--format=html" "$rc"

# nothing is fetched: no URL in the page but the standard's own name spaces
urls=$(grep -oE '(src|href)=|https?://|url\(' report.html | sort -u | tr '\n' ' ')
[ -z "$urls" ] && ok "the page names no other file and no address" || not_ok "the page refers to: $urls"

# chromium headless: the DOM after the page's script ran, and the console
# (a user of its own: root needs --no-sandbox, and no profile is kept)
dump() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
    --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$T/${2:-report.html}$1" 2>console.log
}
dom=$(dump '#selftest=2019') || { ok "# SKIP chromium does not run here: $(tail -n 3 console.log | tr '\n' ' ')"; done_testing; }
printf '%s' "$dom" > dom.html

# the page's own record of errors, and the console's
if ! grep -q 'data-errors=' dom.html && ! grep -qiE 'CONSOLE.*(error|uncaught)|Uncaught' console.log; then
  ok "the page loads with no error in the console"
else
  not_ok "errors" "$(grep -o 'data-errors="[^"]*"' dom.html)" "$(grep -iE 'console|uncaught' console.log | head -n 5)"
fi

# every file of every set, and every pair, as the DOM shows them (HTML text)
python3 - "$DUPSCAN" <<'PY' && ok "every set's files and every overlapping pair are on the page" || not_ok "sets and pairs on the page"
import html, json, subprocess, sys
dom = open("dom.html", encoding="utf-8").read()
sets = json.loads(subprocess.run([sys.argv[1], "-rqj", "p", "bk"], capture_output=True).stdout)["matchSets"]
pairs = json.loads(subprocess.run([sys.argv[1], "-rq", "--overlap", "--format=json", "p", "bk"],
                                  capture_output=True).stdout)["overlaps"]
import re
# (a name's control characters are shown as escapes: a newline as \n, never a line break)
vis = lambda p: re.sub(r"[\x00-\x1f\x7f]", lambda m: {"\n": "\\n", "\t": "\\t"}.get(m.group(), "\\x%02x" % ord(m.group())), p)
shown = lambda p: ">" + html.escape(vis(p), quote=False) + "<"
missing = [f["filePath"] for s in sets for f in s["fileList"] if shown(f["filePath"]) not in dom]
missing += [p[s]["path"] for p in pairs for s in "ab" if shown(p[s]["path"]) not in dom]
if ">bk/line\\nbreak<" not in dom or "bk/line\nbreak" in dom:
    missing.append("bk/line\\nbreak, as one row")
rows = dom.count("<tr")
if missing or not sets or not pairs or rows != len(sets) + len(pairs) + 3:  # and the three header rows (the hidden missing table's one)
    print("missing:", missing, "sets", len(sets), "pairs", len(pairs), "rows", rows, file=sys.stderr)
    sys.exit(1)
PY

# the hostile name is text: the DOM holds the page's two scripts and no other
scripts=$(grep -o '<script' dom.html | wc -l)
if [ "$scripts" = 2 ] && grep -q '&lt;script&gt;alert(1)&lt;/script&gt;/d' dom.html; then
  ok "a path holding <script> is shown as text, no script made of it"
else
  not_ok "hostile name" "$scripts script elements" "$(grep -o '.\{40\}alert(1).\{40\}' dom.html | head -n 3)"
fi

# the page drove itself (#selftest=2019): treemap boxes, one opened by a
# click, the sets sorted by size and filtered by "2019"
python3 - <<'PY' && ok "the treemap draws, a click opens a directory, the sets sort and filter" || not_ok "self-test" "$(grep -o 'data-selftest="[^"]*"' dom.html)"
import html, json, os, re, subprocess, sys
sets = json.loads(subprocess.run([os.environ["DUPSCAN"], "-rqj", "p", "bk"], capture_output=True).stdout)["matchSets"]
waste = sum(s["fileSize"] * (len(s["fileList"]) - 1) for s in sets)
m = re.search(r'data-selftest="([^"]*)"', open("dom.html", encoding="utf-8").read())
seen = json.loads(html.unescape(m.group(1))) if m else {}
# p and bk both hold copies: the top shows both; either opens to two boxes
ok = (seen.get("cells") == 2 and seen.get("opened") in ("p", "bk") and seen.get("crumbs") == 2
      and seen.get("cellsInside", 0) >= 2 and seen.get("firstBySize") == len("second photo, taken in February, a longer one")
      and seen.get("shownByFilter") == 3  # the sets of a, b and c, under 2019/
      and seen.get("setsShown") == "5 sets." and seen.get("setRows") == 5
      and seen.get("wasteTotal") == waste)  # the treemap's boxes hold the sets' waste, each byte once
sys.exit(0 if ok else 1)
PY

# a larger report: 450 sets in 90 folders under one argument. The sets come
# 200 rows at a time ("Show more" adds 200), the filter counts every match
# and shows its first page; the treemap shows 59 folders and one box for the
# 31 smallest
python3 - <<'PY'
import os
for d in range(90):
    os.makedirs(f"w/d{d:02d}")
    for i in range(5):
        data = f"set {d}-{i} ".encode() * (1 + d)
        for name in (f"f{i}", f"f{i}.copy"):
            with open(f"w/d{d:02d}/{name}", "wb") as f:
                f.write(data)
PY
"$DUPSCAN" -rq --format=html w > big.html
dump '#selftest=d07/' big.html > bigdom.html
python3 - <<'PY' && ok "450 sets: 200 rows, 200 more on a click, the filter's 5, and 60 boxes of 90 folders" || not_ok "450 sets" "$(grep -o 'data-selftest="[^"]*"' bigdom.html)" "$(grep -o 'data-errors="[^"]*"' bigdom.html)"
import html, json, re, sys
dom = open("bigdom.html", encoding="utf-8").read()
m = re.search(r'data-selftest="([^"]*)"', dom)
seen = json.loads(html.unescape(m.group(1))) if m else {}
labels = seen.get("boxLabels", [])
ok = ("data-errors=" not in dom and seen.get("setRows") == 200 and seen.get("setRowsMore") == 400
      and seen.get("setsShown") == "The first 400 of 450 sets."
      and seen.get("shownByFilter") == 5 and seen.get("setRowsFiltered") == 5 and seen.get("setRowsCleared") == 200
      and seen.get("setsShownFiltered") == "5 sets with a path containing \u201cd07/\u201d (of 450)."
      and seen.get("cells") == 60 and labels.count("(31 more)") == 1 and "d89" in labels and "d00" not in labels
      and dom.count("<tr") == 200 + 1 + 1 + 1)  # the first page again, and the three tables' header rows
sys.exit(0 if ok else 1)
PY

# 1,500 folders holding one file alike: too many pairs to weigh (test_where.sh);
# the page still shows its set and map, and says why it has no pair
python3 - <<'PY'
import os
for i in range(1500):
    os.makedirs(f"alike/d{i:04d}")
    with open(f"alike/d{i:04d}/desktop.ini", "w") as f:
        f.write("[.ShellClassInfo]\nIconResource=x\n")
PY
"$DUPSCAN" -rq --format=html alike > alike.html 2>/dev/null
rc=$?
dump '#selftest=d0007' alike.html > alikedom.html
python3 - "$rc" <<'PY' && ok "too many pairs: the page (status 1) shows the set, the map and why no pair" || not_ok "too many pairs, the page" "$(grep -o 'data-selftest="[^"]*"' alikedom.html)" "$(grep -o '<span id="pairsshown"[^<]*' alikedom.html)"
import html, json, re, sys
dom = open("alikedom.html", encoding="utf-8").read()
m = re.search(r'data-selftest="([^"]*)"', dom)
seen = json.loads(html.unescape(m.group(1))) if m else {}
note = re.search(r'<span id="pairsshown"[^>]*>([^<]*)<', dom)
ok = (sys.argv[1] == "1" and "data-errors=" not in dom and seen.get("setsShown") == "1 set."
      and seen.get("shownByFilter") == 1 and seen.get("cells", 0) >= 2
      and note and html.unescape(note.group(1)).startswith("More pairs of directories to weigh than files")
      and dom.count("<tr") == 1 + 1 + 1 + 1)  # the set, and the three header rows
sys.exit(0 if ok else 1)
PY

# --reference --missing: the page lists the files with no copy under the
# reference, 200 at a time, filtered by path, and the status says some are
mkdir -p ref card && echo 'in both' > ref/x && cp ref/x card/x
for i in $(seq 1 250); do echo "only on the card, $i" > "card/m$i"; done
"$DUPSCAN" -rq --reference=ref card --missing --format=html > miss.html; mrc=$?
dump '#selftest=m17' miss.html > missdom.html
python3 - "$mrc" <<'PY' && ok "--missing --format=html: 250 files, 200 then all, the filter's 11, status 3" || not_ok "--missing page" "$(grep -o 'data-selftest="[^"]*"' missdom.html)" "$(grep -o 'data-errors="[^"]*"' missdom.html)"
import html, json, re, sys
dom = open("missdom.html", encoding="utf-8").read()
m = re.search(r'data-selftest="([^"]*)"', dom)
seen = json.loads(html.unescape(m.group(1))) if m else {}
ok = (sys.argv[1] == "3" and "data-errors=" not in dom and seen.get("setsShown") == "1 set."
      and seen.get("missingRows") == 200 and seen.get("missingRowsMore") == 250
      and seen.get("missingShown") == "The first 200 of 250 files with no copy."
      and seen.get("missingByFilter") == 11 and seen.get("missingRowsFiltered") == 11
      and re.fullmatch(r"250 files \([0-9.]+ KB\) have no copy under ref\.", seen.get("missingSummary", "")))
sys.exit(0 if ok else 1)
PY
# without --reference the part stays hidden
grep -q '<section id="missingpart" hidden' dom.html && ok "no reference: no missing part" || not_ok "missing part shown without a reference"

done_testing

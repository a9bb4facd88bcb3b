#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the copies are (issue 50): --summary=dirs and --overlap give, on a
# photo tree with two partial backups, nested copies, hard links, empty files
# and names with a newline and with invalid UTF-8, exactly the rows that
# where_oracle.py computes from the tree alone (every pair of directories
# tried, the bytes read and compared there); text and CSV say what JSON
# says; the options are refused where they make no sense. The HTML page
# is checked in test_html.sh.
. "$(dirname "$0")/../fixtures/lib.sh"
ORACLE="$SOURCE_ROOT/tests/fixtures/where_oracle.py"

# t/: Photos, Backup1 (2019, Feb in part; one of Feb's files a hard link of
# the original), Backup2 (2018 and one of January's under other names)
python3 - <<'PY'
import os
def mk(path, data):
    path = os.fsencode(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
def body(tag, size):
    return (tag.encode() * (size // len(tag) + 1))[:size]
jan = {f"a{i}": body(f"jan{i}-", 3000 + 700 * i) for i in range(1, 5)}
feb = {f"b{i}": body(f"feb{i}-", 5000 + 300 * i) for i in range(1, 4)}
old = {f"c{i}": body(f"old{i}-", 800 * i) for i in range(1, 4)}
for n, d in jan.items():
    mk(f"t/Photos/2019/Jan/{n}", d)
    mk(f"t/Backup1/2019/Jan/{n}", d)
for n in ("a1", "a2"):
    mk(f"t/Photos/2019/Jan/again/{n}.copy", jan[n])          # a copy inside its own folder
for n, d in feb.items():
    mk(f"t/Photos/2019/Feb/{n}", d)
mk("t/Backup1/2019/Feb/b1", feb["b1"])
os.link("t/Photos/2019/Feb/b2", "t/Backup1/2019/Feb/b2")       # a hard link, not a copy of its own
mk("t/Photos/2019/Feb/u1", body("unique-", 20000))
mk("t/Photos/2019/Feb/empty0", b"")
for n, d in old.items():
    mk(f"t/Photos/2018/{n}", d)
mk("t/Photos/2018/empty", b"")
mk("t/Photos/2018/new\nline", body("newline-", 1500))
mk("t/Photos/bad\xff\xfename/d1", body("d1-", 900))
mk("t/Photos/bad\xff\xfename/d2", old["c1"])
mk("t/Backup2/old/Photos-2018/c1", old["c1"])
mk("t/Backup2/old/Photos-2018/c2", old["c2"])
mk("t/Backup2/old/Photos-2018/line\nbreak", body("newline-", 1500))
mk("t/Backup2/old/misc/third", jan["a3"])
mk("t/Backup2/u2", body("u2-", 700))
PY

# the rows as dupscan --format=json gives them, both lists, keys sorted
rows() { python3 -c 'import json, sys
d = json.load(sys.stdin)
json.dump({k: d[k] for k in ("overlaps", "directories")}, sys.stdout, indent=1, sort_keys=True)'; }

for flags in "-H" "-H -z"; do
  for pct in 50 90 100; do
    want=$(python3 "$ORACLE" t "$pct" $flags)
    got=$("$DUPSCAN" -rq $flags --overlap="$pct" --summary=dirs --format=json t | rows)
    n=$(printf '%s' "$want" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d["overlaps"]), len(d["directories"]))')
    if [ -n "$got" ] && [ "$got" = "$want" ]; then
      ok "-r $flags --overlap=$pct --summary=dirs: the oracle's pairs and directories ($n)"
    else
      not_ok "-r $flags --overlap=$pct --summary=dirs against the oracle" "$(diff <(echo "$want") <(echo "$got") | head -n 40)"
    fi
  done
done

# the pairs at 50% are more than nothing: a test of the rules, not of an empty list
pairs=$("$DUPSCAN" -rqH --overlap --format=json t | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["overlaps"]))')
[ "$pairs" -ge 3 ] && ok "the tree has $pairs pairs at 50%" || not_ok "pairs at 50%: $pairs"

# a backup wrapped in folders holding nothing else (backup/home/user/Photos):
# one row, named by the deepest of them, not one a level
mkdir -p c/Photos c/backup/home/user/Photos
printf 'aaaaaaaaaaaa' > c/Photos/a
printf 'bbbbbbbbbbbbbbbbbb' > c/Photos/b
printf 'unique' > c/Photos/u
cp c/Photos/a c/Photos/b c/backup/home/user/Photos/
expect "--overlap: folders that only wrap a copy are not pairs of their own" 0 "c/Photos/: 83% (2 of 3 files, 30 bytes) also in c/backup/home/user/Photos/
c/backup/home/user/Photos/: 100% (2 of 2 files, 30 bytes) also in c/Photos/" "$DUPSCAN" -rq --overlap c
# both sides wrapped: still one row (each side's parent is looked for past
# the folders that only wrap it, where the other side is no longer apart)
mkdir -p w2/x/home/user/P w2/y/home/user/P
cp c/Photos/a c/Photos/b w2/x/home/user/P/
cp c/Photos/a c/Photos/b w2/y/home/user/P/
expect "--overlap: two wrapped copies, one row" 0 "w2/x/home/user/P/: 100% (2 of 2 files, 30 bytes) also in w2/y/home/user/P/
w2/y/home/user/P/: 100% (2 of 2 files, 30 bytes) also in w2/x/home/user/P/" "$DUPSCAN" -rq --overlap w2
want=$(python3 "$ORACLE" c 50 -H)
got=$("$DUPSCAN" -rqH --overlap --summary=dirs --format=json c | rows)
[ -n "$got" ] && [ "$got" = "$want" ] && ok "the wrapped backup: the oracle's rows" ||
  not_ok "the wrapped backup against the oracle" "$(diff <(echo "$want") <(echo "$got") | head -n 20)"

# many pairs: 200 folders and a backup of each (a file missing from every
# third, every seventh rewritten), more pairs than the pair table's first
# size holds: it grows and rehashes, and every pair against the one backup
# folder still lands where it is found (the rows equal the oracle's)
python3 - <<'PY'
import os
for i in range(200):
    for side in ("m", "b"):
        d = f"g/{side}/{i:03d}"
        os.makedirs(d)
        for j in range(2):
            if side == "b" and j == 1 and i % 3 == 0:
                continue
            data = f"g{i}-{j}-".encode() * (3 + i % 5)
            if side == "b" and i % 7 == 0:
                data = b"new " + data
            with open(f"{d}/f{j}", "wb") as f:
                f.write(data)
PY
want=$(python3 "$ORACLE" g 50 -H)
got=$("$DUPSCAN" -rqH --overlap --summary=dirs --format=json g | rows)
n=$(printf '%s' "$want" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["overlaps"]))')
[ -n "$got" ] && [ "$got" = "$want" ] && [ "$n" -ge 150 ] && ok "200 folders and their backups: the oracle's $n pairs" ||
  not_ok "200 folders against the oracle ($n pairs)" "$(diff <(echo "$want") <(echo "$got") | head -n 20)"
# the library's own timing tool (docs/performance.md) sees the same pairs
if [ -n "${PHASES:-}" ]; then
  p=$("$PHASES" g 1)
  printf '%s' "$p" | grep -q "(.* sets, $n pairs)\$" && ok "phases: the same $n pairs, each step timed" || not_ok "phases" "$p"
fi

# text: two lines a pair, then a blank line; the same figures as JSON
"$DUPSCAN" -rqH --overlap --format=json t | python3 -c '
import json, sys
def count(n): return f"{n:,}"
def size(b):
    if b < 1000: return f"{b} byte" + ("" if b == 1 else "s")
    v, u = b / 1000, 0
    while v >= 999.95 and u < 5: v, u = v / 1000, u + 1
    return f"{v:.1f} " + ["KB", "MB", "GB", "TB", "PB", "EB"][u]
for p in json.load(sys.stdin)["overlaps"]:
    for x, y in ((p["a"], p["b"]), (p["b"], p["a"])):
        print(f"{x['"'"'path'"'"']}: {x['"'"'percent'"'"']}% ({count(x['"'"'files'"'"'])} of {count(x['"'"'filesTotal'"'"'])} files, {size(x['"'"'bytes'"'"'])}) also in {y['"'"'path'"'"']}")
    print()' > want.txt
"$DUPSCAN" -rqH --overlap t > got.txt
cmp -s want.txt got.txt && ok "--overlap as text: the JSON's figures, two lines a pair" || not_ok "--overlap text" "$(diff want.txt got.txt | head -n 20)"
# by hand: Photos/2019's files with a copy in Backup1/2019 are a1-a4 and the
# two copies in again/ (27,100 bytes), b1 and b2 (10,900); of 10 files (the
# empty one left out), 64,500 bytes; all of them are under Photos/2019, so
# Photos itself is no pair of Backup1/2019 (the smallest folder is named)
grep -q '^t/Photos/2019/: 59% (8 of 10 files, 38.0 KB) also in t/Backup1/2019/$' got.txt &&
  ! grep -q '^t/Photos/: .* also in t/Backup1/2019/$' got.txt &&
  ok "--overlap: 't/Photos/2019/: 59% (8 of 10 files, 38.0 KB) also in t/Backup1/2019/', and not t/Photos/" ||
  not_ok "--overlap: Photos/2019 in Backup1/2019" "$(cat got.txt)"

# CSV: a header and a row a pair, the JSON's numbers
"$DUPSCAN" -rqH --overlap --format=csv t > got.csv
python3 - <<'PY' && ok "--overlap --format=csv: the JSON's rows" || not_ok "--overlap csv" "$(head -n 5 got.csv)"
import csv, json, subprocess, sys, os
j = json.loads(subprocess.run([os.environ["DUPSCAN"], "-rqH", "--overlap", "--format=json", "t"], capture_output=True).stdout)
rows = list(csv.reader(open("got.csv", newline="", encoding="utf-8", errors="surrogateescape")))
keys = ("percent", "files", "filesTotal", "bytes", "bytesTotal")
want = [[p["a"]["path"], p["b"]["path"]] + [str(p[s][k]) for s in "ab" for k in keys] for p in j["overlaps"]]
sys.exit(0 if rows[0][0] == "dir_a" and rows[1:] == want and len(want) > 0 else 1)
PY

# --summary=dirs --max-depth=1: the arguments and their children only; as du, the whole tree counted
"$DUPSCAN" -rqH --summary=dirs --max-depth=1 --format=csv t > d1.csv
python3 - <<'PY' && ok "--summary=dirs --max-depth=1: t/ and its children, each counting its whole subtree" || not_ok "--max-depth=1 listing" "$(cat d1.csv)"
import csv, json, subprocess, os, sys
rows = list(csv.reader(open("d1.csv", newline="", encoding="utf-8", errors="surrogateescape")))
full = json.loads(subprocess.run([os.environ["DUPSCAN"], "-rqH", "--summary=dirs", "--format=json", "t"], capture_output=True).stdout)
want = [[e["path"], str(e["depth"]), str(e["files"]), str(e["bytes"]), str(e["dupFiles"]), str(e["dupBytes"]), str(e["percent"])]
        for e in full["directories"] if e["depth"] <= 1]
sys.exit(0 if rows[1:] == want and {r[0] for r in rows[1:]} == {"t/", "t/Photos/", "t/Backup1/", "t/Backup2/"} else 1)
PY

# hard links without -H: one inode counted once, and no copy of itself
mkdir -p h/A h/B && printf 'linked' > h/A/x && ln h/A/x h/B/x && printf 'alone' > h/B/y
expect "without -H, two names of one inode are one file and no copy: no directory listed" 0 "" \
  "$DUPSCAN" -rq --summary=dirs h
run "$DUPSCAN" -rq --summary=dirs --format=json h
files=$(printf '%s' "$out" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["directories"]))')
[ "$files" = 0 ] && ok "--summary=dirs --format=json: an empty list" || not_ok "json, no copies: $out"
expect "with -H they are copies of each other: A and B overlap whole" 0 "h/A/: 100% (1 of 1 files, 6 bytes) also in h/B/
h/B/: 54% (1 of 2 files, 6 bytes) also in h/A/" "$DUPSCAN" -rqH --overlap h

# 1,500 folders holding one file alike: 1,124,250 pairs, all at 100%. The pairs
# to weigh would grow as the square of the folders (3,000 of them took 1.7
# GB and 18 s): past one entry a file listed (at least 1,048,576) --overlap
# stops, status 1, and says why and what lists such folders
python3 - <<'PY'
import os
for i in range(1500):
    os.makedirs(f"alike/d{i:04d}")
    with open(f"alike/d{i:04d}/desktop.ini", "w") as f:
        f.write("[.ShellClassInfo]\nIconResource=x\n")
PY
for view in "--overlap" "--overlap --format=json"; do
  run "$DUPSCAN" -rq $view alike
  [ "$rc" = 1 ] && [ -z "$out" ] && printf '%s' "$err" | grep -q "^dupscan: ${view%% *}: More pairs of directories to weigh than files" &&
    printf '%s' "$err" | grep -q -- "--dirs lists the directories equal in content as sets" &&
    ok "$view: 1,500 folders alike: stops (status 1), says why, nothing on standard output" || not_ok "$view on 1,500 folders alike" "$rc" "$err" "$(printf '%s' "$out" | head -c 300)"
done
# the page is written without the pairs (its sets and map are what such a
# tree needs most), saying why; status 1 (test_html.sh opens it)
run "$DUPSCAN" -rq --format=html alike
[ "$rc" = 1 ] && printf '%s' "$err" | grep -q "^dupscan: --format=html: More pairs of directories to weigh than files" &&
  printf '%s' "$out" | grep -q '"pairsError": "More pairs of directories' && printf '%s' "$out" | grep -q '^</html>$' &&
  ok "--format=html: 1,500 folders alike: the page without pairs, saying why (status 1)" || not_ok "--format=html on 1,500 folders alike" "$rc" "$err"
run "$DUPSCAN" -rq --dirs alike
[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" = 1500 ] && ok "--dirs: the 1,500 folders, one set" || not_ok "--dirs alike" "$rc" "$(printf '%s' "$out" | head -n 3)"
run "$DUPSCAN" -rq --summary=dirs alike
[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" = 1501 ] && ok "--summary=dirs on them: weighs no pair, lists the 1,501 folders" || not_ok "--summary=dirs alike" "$rc" "$err"

# a copy on another host (HOST:PATH through a fake remote shell that runs
# the server here): a copy for --summary=dirs, no directory of its own, no
# pair (L/Photos' b has its only copy there)
cat > rsh <<'SH'
#!/bin/sh
shift
exec sh -c "$*"
SH
chmod +x rsh
mkdir -p L/Photos L/Old R/Backup
body() { python3 -c "import sys; sys.stdout.write((sys.argv[1] * int(sys.argv[2]))[:int(sys.argv[2])])" "$1" "$2"; }
body "a-" 1000 > L/Photos/a; body "b-" 2000 > L/Photos/b; body "u-" 500 > L/Photos/u
cp L/Photos/a L/Old/a; cp L/Photos/b R/Backup/b
expect "--overlap --summary=dirs with a copy on another host: counted, not listed" 0 "L/Old/: 100% (1 of 1 files, 1.0 KB) also in L/Photos/
L/Photos/: 28% (1 of 3 files, 1.0 KB) also in L/Old/


    4.0 KB  88%  3 of 4 files  L/
    3.0 KB  85%  2 of 3 files  L/Photos/
    1.0 KB 100%  1 of 1 files  L/Old/" "$DUPSCAN" -rq --rsh="$T/rsh" --remote-dupscan="$DUPSCAN" --overlap --summary=dirs L localhost:R

# refusals (status 2, the option named)
for bad in "-d" "-m" "-u" "--dirs" "-e" "-TT"; do
  run "$DUPSCAN" -rq --overlap $bad t
  [ "$rc" = 2 ] && printf '%s' "$err" | grep -q -- "--overlap shows where the copies are" &&
    ok "--overlap $bad: refused (status 2)" || not_ok "--overlap $bad" "$rc" "$err"
done
run "$DUPSCAN" -rq --overlap=0 t
[ "$rc" = 2 ] && expect_err "--overlap=0: a percentage from 1 to 100" "invalid value '0' for --overlap" || not_ok "--overlap=0: $rc"
run "$DUPSCAN" -rq --summary=files t
[ "$rc" = 2 ] && expect_err "--summary=files: only dirs" "invalid value 'files' for --summary" || not_ok "--summary=files: $rc"
run "$DUPSCAN" -rq --overlap --summary=dirs --format=csv t
[ "$rc" = 2 ] && ok "--format=csv with --overlap and --summary=dirs: refused, one table" || not_ok "csv, two tables: $rc"

# a folder copied whole is one pair, at any depth, with folders that only
# wrap it or not, whichever side is given first (the rules above hid a pair
# one way round only: a subfolder against the whole copy was listed)
whole() { # NAME SRC DEST [inner]: SRC holds a few folders; DEST/... a copy of it
  rm -rf wc; mkdir -p "wc/$2"
  python3 - "wc/$2" "${4:-}" <<'PY'
import os, shutil, sys
top = sys.argv[1]
for i, d in enumerate(["2019/jan", "2019/feb", "2020", "2020/x/y", ""]):
    os.makedirs(os.path.join(top, d), exist_ok=True)
    for k in range(3):
        open(os.path.join(top, d, f"f{k}"), "wb").write(f"{d}:{k}:".encode() * (50 + 37 * i + k))
if sys.argv[2] == "inner":  # copies of its own files inside it (a card's pictures also under 2019)
    os.makedirs(os.path.join(top, "card"))
    for k in range(3):
        shutil.copy(os.path.join(top, "2019/jan", f"f{k}"), os.path.join(top, "card", f"c{k}"))
PY
  mkdir -p "$(dirname "wc/$3")" && cp -a "wc/$2" "wc/$3"
  local want a b
  a=$(printf '%s\n%s\n' "wc/$2/" "wc/$3/" | sort | head -1); b=$(printf '%s\n%s\n' "wc/$2/" "wc/$3/" | sort | tail -1)
  for order in "wc/$2 wc/$3" "wc/$3 wc/$2" "wc"; do
    # shellcheck disable=SC2086
    run "$DUPSCAN" -rq --overlap --format=json $order
    # the pairs across the two copies (a copy inside one of them pairs its folders too)
    want=$(printf '%s\n' "$out" | python3 -c 'import json, sys
a, b = sys.argv[1:]
rows = [(p["a"]["path"], p["b"]["path"]) for p in json.load(sys.stdin)["overlaps"]]
print("\n".join(sorted(x for r in rows if sum(x.startswith(a) for x in r) == 1 for x in r)))' "wc/$2/" "wc/$3/")
    [ "$rc" = 0 ] && [ "$want" = "$(printf '%s\n%s' "$a" "$b")" ] && ok "$1 ($order): one pair, the two copies" ||
      not_ok "$1 ($order)" "$(printf '%s\n' "$out" | head -c 600)"
  done
}
whole "copied whole, side by side" Photos Backup/Photos
whole "copied whole, three levels down" Photos b/home/user/Photos
whole "copied whole, holding copies of its own files" Photos Backup/Photos inner
whole "copied whole three levels down, holding copies of its own files" Photos b/home/user/Photos inner
whole "copied whole, next to other folders" Photos Backup/2024/Photos
mkdir -p wc/Backup/2024/other && echo unrelated > wc/Backup/2024/other/u
run "$DUPSCAN" -rq --overlap wc
[ "$(printf '%s\n' "$out" | grep -c .)" = 2 ] && ok "copied whole beside an unrelated folder: one pair" || not_ok "beside an unrelated folder" "$out"

# random trees, each with a folder copied whole somewhere else (wrapped in
# folders or not, with copies of its own files or not): the rows are the
# oracle's, and exactly one row pairs the copy with the tree it came from
random_whole() { # SEED
  python3 - "$1" <<'PY'
import os, random, shutil, sys
r = random.Random(int(sys.argv[1]))
top = "rw"
shutil.rmtree(top, ignore_errors=True)
dirs = [top]
os.makedirs(top)
for i in range(r.randrange(3, 9)):
    d = os.path.join(r.choice(dirs), f"d{i}")
    os.makedirs(d, exist_ok=True)
    dirs.append(d)
contents = [bytes(r.randrange(256) for _ in range(r.randrange(50, 400))) for _ in range(12)]
n = 0
for d in dirs:
    for k in range(r.randrange(0, 4)):
        open(os.path.join(d, f"f{n}"), "wb").write(r.choice(contents))
        n += 1
src = r.choice(dirs[1:])
dst = os.path.join(top, "copy", *(["w"] * r.randrange(0, 3)), os.path.basename(src))
shutil.copytree(src, dst)
print(src, dst)
PY
}
bad=""
for seed in $(seq 1 15); do
  read -r src dst < <(random_whole "$seed")
  want=$("$ORACLE" rw 50 | rows)
  got=$("$DUPSCAN" -rqH --overlap --format=json rw | rows)
  cross=$("$DUPSCAN" -rqH --overlap --format=json rw | python3 -c 'import json, sys
src, dst = sys.argv[1] + "/", sys.argv[2] + "/"
rows = [(p["a"]["path"], p["b"]["path"]) for p in json.load(sys.stdin)["overlaps"]]
print(sum(1 for a, b in rows if (a.startswith(src) and b.startswith(dst)) or (b.startswith(src) and a.startswith(dst))))' "$src" "$dst")
  # (a source holding no file, or files alike, has no row of its own to give)
  files=$(find "$src" -type f | wc -l)
  if [ "$got" != "$want" ] || { [ "$files" -gt 0 ] && [ "$cross" != 1 ]; }; then bad="$bad $seed($cross)"; fi
done
[ -z "$bad" ] && ok "15 random trees with a folder copied whole: the oracle's rows, one row for the copy" ||
  not_ok "random trees with a whole copy: seeds$bad"

done_testing

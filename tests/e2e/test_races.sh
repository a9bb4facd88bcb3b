#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writers racing the actions never make dupscan lose a content: a kept file
# saved by rename or rewritten in place with its mtime put back right after its
# set is journaled, a duplicate rewritten the same way, one entry seen twice
# through a bind mount, two runs deleting in opposite orders at once, and a
# kept file made private while -L and -l run (no path changes who may read it).
# on the disk: its windows were measured there (on tmpfs the writer never
# caught --move-to between its journal line and its rename: "0 of 0")
ON_DISK=1
. "$(dirname "$0")/../fixtures/lib.sh"
N=${RACE_SETS:-300}

# sets N: t/k/NNNN (kept: the first argument with -O) and t/d/NNNN, "set N"
# each; with LINKS=1 the duplicate has two more names, t/d/NNNN.b and .c
sets() {
  rm -rf t; mkdir -p t/k t/d
  python3 - "$1" "${LINKS:-0}" <<'PY'
import os, sys
for i in range(int(sys.argv[1])):
    for side in "kd":
        with open(f"t/{side}/{i:04d}", "w") as f:
            f.write(f"set {i:04d} " + "x" * (i % 50) + "\n")
    if sys.argv[2] == "1":
        for x in "bc":
            os.link(f"t/d/{i:04d}", f"t/d/{i:04d}.{x}")
PY
}

# writer MODE WHO JOURNAL: for every change line the journal gains, change that
# line's kept file (WHO=kept) or duplicate (WHO=dup): MODE=rename saves new
# content by rename, as editors do; MODE=inplace rewrites it in place with the
# same size and puts the mtime back, as cp -p and rsync --inplace -t do.
# Right after each edit it looks for the content that must survive it (the
# duplicate's original with WHO=kept, the edit with WHO=dup) at the
# duplicate's name or set aside under a temporary name beside it: if it is
# there, the edit came first and dupscan must not lose it; those go to the
# file 'expect', one hex content per line. Writes 'ready' when it watches;
# stops when the file 'stop' appears.
writer() {
  python3 - "$@" <<'PY' &
import os, sys
mode, who, journal = sys.argv[1:4]
seen, buf, n = 0, b"", 0
edited = set()
expect = open("expect", "w")
unlinked = open("unlinked", "w")
open("ready", "w").close()

def present(content, dup):
    d = os.path.dirname(dup)
    for name in [os.path.basename(dup)] + [x for x in os.listdir(d) if x.startswith(".dupscan-tmp-")]:
        p = os.path.join(d, name)
        try:
            if not os.path.islink(p) and open(p, "rb").read() == content:
                return True
        except OSError:
            pass
    return False

while not os.path.exists("stop"):
    try:
        with open(journal, "rb") as f:
            f.seek(seen); chunk = f.read()
    except FileNotFoundError:
        continue
    if not chunk:
        continue
    seen += len(chunk); buf += chunk
    *lines, buf = buf.split(b"\n")
    for line in lines:
        f = line.split(b"\t")
        if f[0] not in (b"hardlink", b"symlink", b"delete", b"move") or len(f) < 3:
            continue
        if f[0] == b"move":
            # move DUP DEST ...: the kept file is t/k/ beside the duplicate's t/d/
            dup = f[1].decode()
            kept = dup.replace("/t/d/", "/t/k/").split(".")[0] if "." in os.path.basename(dup) else dup.replace("/t/d/", "/t/k/")
            path = kept if who == "kept" else dup
        else:
            path, dup = (f[1] if who == "kept" else f[2]).decode(), f[2].decode()
        n += 1
        try:
            st = os.stat(path)
            # an inode of several names is edited once: a second edit would
            # overwrite the first itself
            if (st.st_dev, st.st_ino) in edited:
                continue
            edited.add((st.st_dev, st.st_ino))
            if mode == "chmod":
                # the kept file made private: a duplicate not linked to it by
                # now may no longer be (who may read its path would change)
                os.chmod(path, 0o600)
                ds = os.lstat(dup)
                if os.path.islink(dup) is False and (ds.st_dev, ds.st_ino) != (st.st_dev, st.st_ino):
                    unlinked.write(dup + "\n")
                continue
            old = open(path, "rb").read()
            if mode == "rename":
                new = f"EDITED {n} {path}\n".encode()
                with open(path + ".new", "wb") as out:
                    out.write(new)
                os.rename(path + ".new", path)
            else:
                new = f"EDIT{n:06d}".encode().ljust(len(old), b"y")[:len(old)]
                with open(path, "r+b") as out:
                    out.write(new)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            must = old if who == "kept" else new
            if present(must, dup):
                expect.write(must.hex() + "\n")
        except OSError:
            pass
expect.close()
unlinked.close()
PY
  writer_pid=$!
}

# missing: how many contents listed in 'expect' are nowhere in t
missing() {
  python3 - <<'PY'
import os
have = set()
for d, _, files in os.walk("t"):
    for n in files:
        try:
            have.add(open(os.path.join(d, n), "rb").read())
        except OSError:
            pass
want = [bytes.fromhex(l) for l in open("expect").read().split()]
print(f"{sum(1 for w in want if w not in have)} {len(want)}")
PY
}

# race NAME MODE WHO DELAY ACTION...: N sets, a writer, the action; no content
# lost. DELAY (a fault-shim spec) makes a chosen call of the action wait 5 ms,
# holding a window open for the writer: then edits must have raced it.
race() {
  local name=$1 mode=$2 who=$3 delay=$4; shift 4
  local pre=()
  if [ -n "$delay" ]; then
    [ -n "${FAULT_LIB:-}" ] || { ok "# SKIP $name: no fault library"; return; }
    pre=(env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="$delay")
  fi
  sets "$N"; rm -f stop ready expect j; : > j
  writer "$mode" "$who" "$PWD/j"
  for _ in $(seq 300); do [ -e ready ] && break; sleep 0.05; done
  "${pre[@]}" "$DUPSCAN" -rqO "$@" --journal="$PWD/j" t/k t/d > act.out 2> act.err; local arc=$?
  touch stop; wait "$writer_pid"
  local m checked; read -r m checked < <(missing)
  local acted; acted=$(grep -cE '^(---->|-@@->| *\[-\]| *\[>\])' act.out)
  local refused; refused=$(grep -cE '^(-//->| *\[!\])' act.out)
  [ "$m" = 0 ] && { [ -z "$delay" ] || [ "$checked" -gt 0 ]; } \
    && ok "$name: no content lost ($checked edits came first, $acted changed, $refused refused, status $arc)" \
    || not_ok "$name: $m of $checked contents lost" "$(head -5 act.err)"
  [ -z "$(find t -name '.dupscan-tmp-*')" ] && ok "$name: no temporary name left" || not_ok "$name: temporaries left" "$(find t -name '.dupscan-tmp-*' | head)"
}

# race_access NAME DELAY ACTION...: the writer makes each kept file private
# (0600) as its line is journaled; a duplicate not yet linked to it then must
# not be linked (nor symlinked) after: its path would change who may read it
race_access() {
  local name=$1 delay=$2; shift 2
  [ -n "${FAULT_LIB:-}" ] || { ok "# SKIP $name: no fault library"; return; }
  sets "$N"; rm -f stop ready expect unlinked j; : > j
  writer chmod kept "$PWD/j"
  for _ in $(seq 300); do [ -e ready ] && break; sleep 0.05; done
  env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="$delay" "$DUPSCAN" -rqO "$@" --journal="$PWD/j" t/k t/d > act.out 2> act.err
  touch stop; wait "$writer_pid"
  local raced bad
  raced=$(grep -c . unlinked)
  bad=$(while read -r d; do k=${d/\/t\/d\//\/t\/k\/}; [ -L "$d" ] || [ "$d" -ef "$k" ] && echo "$d"; done < unlinked | head -3)
  [ "$raced" -gt 0 ] && [ -z "$bad" ] && ok "$name: none of the $raced made private before their link was linked" ||
    not_ok "$name: linked after the kept file changed its mode" "$raced raced" "$bad"
}
race_access "-L, kept file made private, window at the swap" "rename:t/d/:DELAY" -L
race_access "-l, kept file made private, window at the swap" "rename:t/d/:DELAY" -l

# as it comes, and with a window held open at the step that makes the change final
race "-L, kept file saved by rename" rename kept "" -L
race "-L, kept file saved by rename, window at the swap" rename kept "rename:t/d/:DELAY" -L
race "-dN, kept file saved by rename" rename kept "" -dN
race "-dN, kept file saved by rename, window at the unlink" rename kept "unlink:t/d/.dupscan-tmp-:DELAY" -dN
race "-l, kept file saved by rename" rename kept "" -l
race "-l, kept file saved by rename, window at the unlink" rename kept "unlink:t/d/.dupscan-tmp-:DELAY" -l
race "-dN, kept file rewritten in place, mtime put back" inplace kept "" -dN
race "-dN, kept file rewritten in place, mtime put back, window at the unlink" inplace kept "unlink:t/d/.dupscan-tmp-:DELAY" -dN
race "-L, kept file rewritten in place, mtime put back, window at the swap" inplace kept "rename:t/d/:DELAY" -L
race "-dN, duplicate rewritten in place, mtime put back, window at the set-aside" inplace dup "rename:t/d/.dupscan-tmp-:DELAY" -dN
race "-L, duplicate saved by rename, window at the swap" rename dup "rename:t/d/:DELAY" -L
# --move-to (into t/mv, which missing looks in too): the duplicate rewritten
# in place while it moves; then duplicates
# of three names each (moved by one rename a name, each checked against the
# ctime dupscan's own renames left), rewritten in place while they move
race "--move-to, duplicate rewritten in place, mtime put back, window at the rename" inplace dup "rename:t/d/:DELAY" \
  --move-to="$PWD/t/mv"
LINKS=1 race "--move-to, three names an inode, rewritten in place, mtime put back, window at each rename" inplace dup \
  "rename:t/d/:DELAY" --move-to="$PWD/t/mv"

# the issue's reproducer: an in-place edit with the mtime put back while -d
# waits at its prompt: the duplicate is not deleted
rm -rf t stop; mkdir t; printf 'original content X\n' > t/a; cp t/a t/b; mkfifo in
( "$DUPSCAN" -rd --journal="$PWD/jd" t < in > d.out 2>&1; echo "rc=$?" >> d.out ) &
exec 7> in
wait_for d.out "keep which files?"
m=$(stat -c %y t/a); printf 'EDITED content Y\n' 1<>t/a; touch -d "$m" t/a
echo 1 >&7; exec 7>&-; wait
[ "$(cat t/b)" = "original content X" ] && ok "-d: kept file edited in place, mtime put back: duplicate kept" || not_ok "in-place edit" "$(cat d.out)"
grep -q "rc=1" d.out && grep -q "\[!\] t/b -- File changed" d.out && ok "-d: the refusal is reported, status 1" || not_ok "in-place report" "$(cat d.out)"

# two runs at once, each keeping what the other deletes: every set keeps a copy
for round in 1 2 3; do
  sets "$((N * 5))"
  "$DUPSCAN" -rqdNO --journal="$PWD/ja" t/k t/d > a.out 2>&1 &
  "$DUPSCAN" -rqdNO --journal="$PWD/jb" t/d t/k > b.out 2>&1 &
  wait
  n=$(python3 - "$((N * 5))" <<'PY'
import os, sys
print(sum(1 for i in range(int(sys.argv[1]))
          if not os.path.exists(f"t/k/{i:04d}") and not os.path.exists(f"t/d/{i:04d}")))
PY
)
  [ "$n" = 0 ] && ok "two -dN runs in opposite orders, round $round: every set kept a file" || not_ok "concurrent -dN round $round: $n sets lost both files"
done

# one entry seen twice through a bind mount (symlinks followed with -s)
if [ "$(id -u)" = 0 ]; then
  rm -rf tree view; mkdir tree view; echo "only copy" > tree/file
  if mount --bind tree view 2>/dev/null; then
    ln -s "$PWD/view/file" tree/0link
    # -l and -dNH would act: refused; -L and --move-to find one inode, nothing to do
    for spec in "1 -rsl" "1 -rsdNH" "0 -rsL" "0 -rs --move-to=$T/mv"; do
      want=${spec%% *}; act=${spec#* }
      run "$DUPSCAN" $act --journal="$PWD/jb" tree
      [ "$rc" = "$want" ] && [ -f tree/file ] && [ ! -L tree/file ] && [ "$(cat tree/0link)" = "only copy" ] \
        && ok "bind mount, $act: the only copy kept, status $want" || not_ok "bind mount $act" "status $rc" "$out" "$err" "$(ls -l tree)"
      [ "$want" = 0 ] || { printf '%s\n%s' "$out" "$err" | grep -q "same directory entry" && ok "bind mount, $act: one entry under two names is named" || not_ok "bind mount, $act: reason" "$out" "$err"; }
    done
    umount view
  else
    ok "# SKIP bind mounts refused here"
  fi
else
  ok "# SKIP bind mounts need root"
fi
done_testing

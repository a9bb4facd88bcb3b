#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --undo killed at any instant, then run again, gives every path its own
# content back, loses nothing, and finishes: killed at each step the fault
# shim can stop (each create, write, fsync, link, rename, unlink, symlink,
# mkdir) and at
# random moments, after --move-to across filesystems and within one, -L, -l
# and -d. The tree is on ext4, which reuses a freed inode number at once: the
# number a moved file had is soon an undo's own new file's (the undo of
# 0.8.0 took such a copy, cut short or of another file, for the file a killed
# move had set aside, and gave a path the wrong bytes).
. "$(dirname "$0")/../fixtures/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 > /dev/null; then
  ok "# SKIP loop-mounted ext4 and tmpfs need root"; done_testing
fi
mkdir ext x
# the image in memory where it can be: fsync, which undo calls at each step, costs little there
img=$(mktemp "$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "$T")/dupscan-undokill-XXXXXX.img")
if ! { truncate -s 64M "$img" && mkfs.ext4 -q -F "$img" && mount -o loop "$img" ext; } 2>/dev/null; then
  rm -f "$img"
  ok "# SKIP ext4 could not be loop-mounted here"; done_testing
fi
if ! mount -t tmpfs -o size=64m tmpfs x 2>/dev/null; then
  umount ext; rm -f "$img"; ok "# SKIP tmpfs could not be mounted here"; done_testing
fi
trap 'umount "$T/ext" "$T/x" 2>/dev/null; rm -f "$img"; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT

# base: SETS sets of 2 or 3 copies, a few KB to a few hundred KB, in nested
# directories; one set holds two names of one inode, one file is empty
python3 - ext/base "${UNDO_SETS:-4}" <<'PY'
import os, random, sys
root, sets = sys.argv[1], int(sys.argv[2])
r = random.Random(45)
dirs = [root, f"{root}/a", f"{root}/a/b", f"{root}/a/c", f"{root}/d"]
for d in dirs:
    os.makedirs(d, exist_ok=True)
n = 0
for s in range(sets):
    size = r.choice([700, 5000, 40000, 150000, 300000]) + s
    data = bytes(r.getrandbits(8) for _ in range(251)) * (size // 251 + 1)
    data = data[:size]
    first = None
    for k in range(2 + s % 2):
        p = f"{r.choice(dirs)}/f{n}"
        n += 1
        if s == 1 and k == 2:
            os.link(first, p)  # a second name of one inode
            continue
        with open(p, "wb") as f:
            f.write(data)
        first = first or p
with open(f"{root}/d/unique", "wb") as f:
    f.write(b"only one of these")
PY
# every path: its type, its content and which of the tree's names share its inode
state() {
  (cd "$1" && find . \( -type f -o -type l \) ! -name '.dupscan-tmp-*' -printf '%y %p %l\n' | sort &&
   find . -type f ! -name '.dupscan-tmp-*' -exec sha256sum {} + | sort -k2 &&
   find . -type f ! -name '.dupscan-tmp-*' -printf '%i %p\n' | sort -n |
     awk '{ if ($1 == last) g = g " " $2; else { if (g ~ / .* /) print g; g = " " $2 } last = $1 }
          END { if (g ~ / .* /) print g }')
}
want=$(state ext/base)

# MODE: the action and where it moves to
act() { # mode
  case $1 in
    move-x) "$DUPSCAN" -rHq --move-to="$T/x/dest" --journal=j ext/t ;;
    move-1) "$DUPSCAN" -rHq --move-to="$T/ext/dest" --journal=j ext/t ;;
    link-L) "$DUPSCAN" -rL --journal=j ext/t ;;
    link-l) "$DUPSCAN" -rl --journal=j ext/t ;;
    delete) "$DUPSCAN" -rdN --journal=j ext/t ;;
  esac > /dev/null 2>&1
}
fresh() { # mode: the tree copied from base, acted on
  rm -rf ext/t ext/dest x/dest j; cp -a ext/base ext/t; act "$1"
}
# after an undo killed and one run again: every path as it was; after -d,
# whose deletions cannot be undone, the tree as -d left it and status 1
fresh delete; want_delete=$(state ext/t)
undone() { # mode: is the tree as it should be after the second undo (status $rc)?
  if [ "$1" = delete ]; then [ "$rc" = 1 ] && [ "$(state ext/t)" = "$want_delete" ]
  else [ "$rc" = 0 ] && [ "$(state ext/t)" = "$want" ]; fi
}
wrong() { # mode, what
  echo "# $1 killed $2: second undo status $rc: $err" | head -3
  diff <(if [ "$1" = delete ]; then echo "$want_delete"; else echo "$want"; fi) <(state ext/t) | head -4 | sed 's/^/# /'
}

calls="creat,write,fsync,linkat,rename,unlink,symlink,mkdir"
modes="move-x move-1 link-L link-l delete"
# ---- killed at each step the fault shim can stop ----
# (the undo of -d changes nothing: no step to stop; it is killed by the clock below)
if [ -n "${FAULT_LIB:-}" ]; then
  for mode in move-x move-1 link-L link-l; do
    fresh "$mode"
    : > calls.log
    DUPSCAN_FAULT="$calls:$T/:LOG" DUPSCAN_FAULT_LOG="$T/calls.log" LD_PRELOAD="$FAULT_LIB" \
      "$DUPSCAN" --undo=j > /dev/null 2>&1
    steps=$(wc -l < calls.log)
    bad=0 killed=0
    for i in $(seq 1 "${UNDO_STRIDE:-1}" "$steps"); do
      fresh "$mode"
      (DUPSCAN_FAULT="$calls:$T/:KILL@$i" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" --undo=j > /dev/null 2>&1)
      [ $? = 137 ] && killed=$((killed + 1))
      run "$DUPSCAN" --undo=j
      undone "$mode" || { bad=$((bad + 1)); wrong "$mode" "at step $i of $steps"; }
    done
    [ "$bad" = 0 ] && [ "$killed" -gt 0 ] \
      && ok "--undo after $mode killed at each of $steps steps ($killed kills), run again: every path its own content" \
      || not_ok "--undo after $mode killed at each step" "$bad of $steps wrong, $killed killed"
  done
else
  ok "# SKIP kills at each step: no fault shim in this build"
fi

# ---- killed at random moments ----
seed=${KILL_SEED:-$RANDOM}
echo "# kill loop seed: $seed (KILL_SEED=$seed reproduces the moments)"
for mode in $modes; do
  # UNDO_LOOPS_X, UNDO_LOOPS: fewer in scripts/test's lighter legs
  loops=${UNDO_LOOPS:-20}
  [ "$mode" = move-x ] && loops=${UNDO_LOOPS_X:-200}
  fresh "$mode"
  start=$(date +%s%N); "$DUPSCAN" --undo=j > /dev/null 2>&1; took=$(( ($(date +%s%N) - start) / 1000 ))
  delays=$(python3 -c "import random,sys; r=random.Random(int(sys.argv[1])); print(' '.join('%.6f' % (r.random() * int(sys.argv[2]) / 1e6) for _ in range(int(sys.argv[3]))))" "$seed" "$took" "$loops")
  bad=0
  for d in $delays; do
    fresh "$mode"
    "$DUPSCAN" --undo=j > /dev/null 2>&1 &
    pid=$!
    sleep "$d"; kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    run "$DUPSCAN" --undo=j
    undone "$mode" || { bad=$((bad + 1)); wrong "$mode" "after ${d}s"; }
  done
  [ "$bad" = 0 ] && ok "--undo after $mode killed at $loops random moments of its $((took / 1000)) ms, run again: every path its own content" \
    || not_ok "--undo after $mode killed at random moments" "$bad of $loops wrong"
done
done_testing

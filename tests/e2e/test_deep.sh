#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# 10,000 nested directories: no recursion per level (no stack overflow) and
# paths far past PATH_MAX still opened (in pieces).
. "$(dirname "$0")/../fixtures/lib.sh"
# DEEP_LEVELS: smaller in scripts/test's lighter builds (still far past PATH_MAX)
levels=${DEEP_LEVELS:-10000}
python3 - "$levels" <<'PY'
import os, sys
os.mkdir("deep")
os.chdir("deep")
open("top", "w").write("deep twin\n")
for i in range(int(sys.argv[1])):
    os.mkdir("d")
    os.chdir("d")
open("bottom", "w").write("deep twin\n")
open("other", "w").write("deep zzzz\n")
PY
run "$DUPSCAN" -rm deep
[ "$rc" = 0 ] && [ "$out" = "1 duplicate files (in 1 sets), occupying 10 bytes" ] && ok "$levels levels: the pair at top and bottom is found" || not_ok "$levels levels" "status $rc" "$out" "${err:0:300}"
run "$DUPSCAN" -r deep
len=$(printf '%s' "$out" | head -1 | wc -c)
[ "$len" -gt $((2 * levels)) ] && ok "the deep path is printed whole ($len bytes)" || not_ok "deep path length" "$len"
# each directory opened by name in its open parent, not by its path: a lookup
# per level for each would make the walk quadratic in the depth
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
  strace -f -s 16 -e trace=openat,open -o trace.log "$DUPSCAN" -rq deep > /dev/null 2>&1
  # (O_PATH: the two files read at the bottom, opened in pieces of PATH_MAX)
  grep 'O_DIRECTORY' trace.log | grep -v O_PATH > dirs.log
  opens=$(wc -l < dirs.log); by_path=$(grep -c '"deep/' dirs.log)
  [ "$opens" -ge "$levels" ] && [ "$by_path" = 0 ] && ok "$levels levels: $opens directories opened, none by its path" ||
    not_ok "directories opened by path" "$opens opens, $by_path by a path below deep/" "$(grep '"deep/' dirs.log | head -3 | cut -c1-120)"
else
  ok "# SKIP strace cannot trace here"
fi
done_testing

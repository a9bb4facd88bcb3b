#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# 10,000 nested directories: no recursion per level (no stack overflow) and
# paths far past PATH_MAX still opened (in pieces).
. "$(dirname "$0")/lib.sh"
python3 - <<'PY'
import os
os.mkdir("deep")
os.chdir("deep")
open("top", "w").write("deep twin\n")
for i in range(10000):
    os.mkdir("d")
    os.chdir("d")
open("bottom", "w").write("deep twin\n")
open("other", "w").write("deep zzzz\n")
PY
run "$DUPSCAN" -rm deep
[ "$rc" = 0 ] && [ "$out" = "1 duplicate files (in 1 sets), occupying 10 bytes" ] && ok "10,000 levels: the pair at top and bottom is found" || not_ok "10,000 levels" "status $rc" "$out" "${err:0:300}"
run "$DUPSCAN" -r deep
len=$(printf '%s' "$out" | head -1 | wc -c)
[ "$len" -gt 20000 ] && ok "the deep path is printed whole ($len bytes)" || not_ok "deep path length" "$len"
done_testing

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kill safety: actions killed with SIGKILL at several points of their run leave
# every content present, and nothing behind but ".dupscan-tmp-*" names, which
# the next scan reports.
. "$(dirname "$0")/../fixtures/lib.sh"
# fifteen copies of the tree made and removed: on tmpfs, where deleting is
# not the disk's discard (the kills and what they leave are the same there)
work_in_shm kill

# KILL_SETS: smaller in scripts/test's lighter builds
python3 - "${KILL_SETS:-1000}" <<'PY'
import os, sys
for s in range(int(sys.argv[1])):          # 1000 sets of 3 copies: 3000 files
    data = (f"content {s} " * (1 + s % 50)).encode()
    for k in range(3):
        d = f"base/d{(s * 3 + k) % 37}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/f{s}-{k}", "wb") as f:
            f.write(data)
PY
digests() { find "$1" -type f -exec sha256sum {} + 2>/dev/null | awk '{print $1}' | sort -u; }
want=$(digests base)
for act in -L -l -dN; do
  for delay in 0.005 0.02 0.05 0.1 0.2; do
    rm -rf t; cp -a base t
    "$DUPSCAN" -rq $act t > /dev/null 2>&1 &
    pid=$!
    sleep "$delay"; kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    got=$(digests t)
    stray=$(find t -name '.dupscan-tmp-*' | wc -l)
    other=$(find t \( -type f -o -type l \) ! -name 'f*' ! -name '.dupscan-tmp-*' | wc -l)
    if [ "$got" = "$want" ] && [ "$other" = 0 ]; then
      ok "$act killed after ${delay}s: every content present ($stray temporary names left)"
    else
      not_ok "$act killed after ${delay}s" "contents: $(diff <(echo "$want") <(echo "$got") | head -3)" "other files: $other"
    fi
    if [ "$stray" -gt 0 ]; then
      run "$DUPSCAN" -rq t
      n=$(printf '%s\n' "$err" | grep -c "Temporary name left by an interrupted dupscan action")
      [ "$rc" = 1 ] && [ "$n" = "$stray" ] && ok "the next scan reports the $stray temporary names" || not_ok "leftovers not reported" "$rc $n/$stray"
    fi
  done
done
done_testing

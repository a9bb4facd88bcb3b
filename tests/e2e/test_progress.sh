#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Progress goes to stderr only when it is a terminal (or with --progress),
# never with -q; each phase shows its files and bytes, the most it may still
# read, the rate, and the time left at most once there is a rate.
. "$(dirname "$0")/../fixtures/lib.sh"
mk d/a p; mk d/b p
run "$DUPSCAN" -r d
[ -z "$err" ] && ok "no progress when stderr is not a terminal" || not_ok "no progress when stderr is not a terminal" "$err"
if command -v script >/dev/null; then
  tty_out=$(script -qec "'$DUPSCAN' -r d" /dev/null)
  case "$tty_out" in *Scanning:*) ok "progress on a terminal" ;; *) not_ok "progress on a terminal" "$tty_out" ;; esac
  case "$tty_out" in *d/a*d/b*) ok "sets still printed on a terminal" ;; *) not_ok "sets still printed on a terminal" "$tty_out" ;; esac
  for io in hdd ssd; do
    tty_out=$(script -qec "'$DUPSCAN' -r --io=$io d" /dev/null)
    case "$tty_out" in *"Progress ["*"($io"*) ok "--io=$io: the progress line says so" ;; *) not_ok "--io=$io progress" "$tty_out" ;; esac
  done
  # files many enough that matching takes over a second (each read slowed
  # by the fault shim by 5 ms): the line names a rate and a time left
  mkdir -p big; for i in $(seq 1 120); do head -c 50000 /dev/zero | tr '\0' "$((i % 10))" > "big/f$i"; done
  if [ -n "${FAULT_LIB:-}" ]; then
    tty_out=$(script -qec "env LD_PRELOAD='$FAULT_LIB' DUPSCAN_FAULT='pread64:big/:DELAY' '$DUPSCAN' -r --io=ssd --threads=1 big" /dev/null | tr '\r' '\n')
    if printf '%s\n' "$tty_out" | grep -qE '^Progress \[[0-9]+/120\] +[0-9]+%, [0-9.]+ [kMG]?B of at most [0-9.]+ [kMG]?B read, [0-9.]+ [kMG]?B/s, at most [0-9]+ s left \(ssd\)'; then
      ok "matching shows files, bytes read of at most how many, a rate and a time left"
    else
      not_ok "no rate or time left in the progress line" "$tty_out"
    fi
    printf '%s\n' "$tty_out" | grep -qE '^Scanning: 120 files, 6.0 MB' && ok "the walk shows files and bytes found" ||
      not_ok "walk progress" "$tty_out"
  else
    ok "# SKIP no fault shim to slow reads down"
  fi
  tty_out=$(script -qec "'$DUPSCAN' -rq d" /dev/null)
  case "$tty_out" in *Scanning:*|*Progress*) not_ok "-q hides progress" "$tty_out" ;; *) ok "-q hides progress" ;; esac
else
  ok "# SKIP script(1) not installed"
fi
# --progress: lines on a pipe too, one per update; -q still silences
run "$DUPSCAN" -r --progress d
case "$err" in *"Scanning: 2 files"*"Progress [2/2] 100%"*) ok "--progress: lines on a pipe" ;; *) not_ok "--progress on a pipe" "$err" ;; esac
[ "$(printf '%s' "$err" | tr -cd '\r' | wc -c)" = 0 ] && ok "--progress on a pipe: whole lines, no carriage returns" ||
  not_ok "--progress on a pipe wrote carriage returns" "$err"
run "$DUPSCAN" -rq --progress d
[ -z "$err" ] && ok "-q wins over --progress" || not_ok "-q --progress" "$err"
done_testing

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Progress goes to stderr only when it is a terminal, and never with -q.
. "$(dirname "$0")/lib.sh"
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
  tty_out=$(script -qec "'$DUPSCAN' -rq d" /dev/null)
  case "$tty_out" in *Scanning:*|*Progress*) not_ok "-q hides progress" "$tty_out" ;; *) ok "-q hides progress" ;; esac
else
  ok "# SKIP script(1) not installed"
fi
done_testing

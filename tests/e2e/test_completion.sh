#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Completions for bash, zsh and fish, each loaded in its shell: every long
# option of the option table offered, option values and file names completed
# as a user would type them (zsh through a pseudo-terminal, fish with
# complete -C). A shell that is not installed is skipped.
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?}
# the completions are made from the option table by optgen at build time:
# once per run of scripts/test is enough
[ -n "${COMPLETION_TESTED:-}" ] && { ok "# SKIP the completions were tested in an earlier build of this run"; done_testing; }
BASH_C="$COMPLETIONS/dupscan" ZSH_C="$COMPLETIONS/_dupscan" FISH_C="$COMPLETIONS/dupscan.fish"
longs=$("$OPTGEN" list | grep -oE -- '--[a-z0-9:-]+$' | sort)
[ "$(echo "$longs" | wc -l)" -gt 50 ] && ok "the option table lists $(echo "$longs" | wc -l) long options" || not_ok "optgen list" "$longs"
# and the other way: no shell offers an option the table lacks
offered=$(grep -oE -- "(^|[ '|(])--[a-z0-9-]+:?" "$BASH_C" | grep -oE -- '--[a-z0-9:-]+' | sort -u)
extra=$(comm -13 <(echo "$longs") <(echo "$offered"))
[ -z "$extra" ] && ok "bash offers no option the table lacks" || not_ok "bash offers more than the table" "$extra"
mkdir -p d/sub; : > d/report.json

# bash: the function fills COMPREPLY for the words given
bash_complete() { # WORDS...: what _dupscan offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; _dupscan; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$BASH_C" "$@"
}
# (each asked for with its last letter off: a word that holds '=' or ':'
# has the part bash keeps taken off its replies)
missing=$(for o in $longs; do bash_complete dupscan "${o%?}" | grep -qxF -e "$o" -e "$o=" || echo "$o"; done)
[ -z "$missing" ] && ok "bash: every long option offered ($(echo "$longs" | wc -l))" || not_ok "bash lacks" "$missing"

# bash as a user meets it: an interactive bash on a pseudo-terminal (which
# splits words at '=' and ':', as setting COMP_WORDS by hand does not), a
# TAB typed, the line read back (every choice listed when there are several)
cat > drive_bash.py <<'PY'
import os, pty, select, sys, time
# one bash for every line (a line, a TAB, the screen read, then ^C for a new
# prompt); the screens go out NUL-separated, in the order of the lines
comp, lines = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(PS1="$ ", TERM="dumb", INPUTRC="/dev/null")
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def read(until=None, quiet=0.25, limit=10.0):
    out, end, last = b"", time.time() + limit, time.time()
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.02)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
            last = time.time()
        elif (until is None or out.endswith(until)) and time.time() - last > quiet:
            break
    return out
os.write(fd, ("source '%s'; bind 'set show-all-if-ambiguous on'; bind 'set completion-query-items 0'; "
              "bind 'set bell-style none'; echo __READY__\n" % comp).encode())
read(b"__READY__\r\n$ ")
for line in lines:
    os.write(fd, (line + "\t").encode())
    screen = read()
    os.write(fd, b"\x03")
    read(b"$ ", quiet=0.05)
    sys.stdout.write(screen.decode(errors="replace").replace("\r", "") + "\0")
os.write(fd, b"exit\n")
read(limit=1.0)
PY
# every line's screen, once: BASH_LINES (in order), then bash_screen N
bash_lines=()
bash_line() { bash_lines+=("line|$1|$2"); }
bash_lists() { local l=$1; shift; bash_lines+=("lists|$l|$*"); }
bash_check() {
  local screens=() lines=() k kind line want screen w miss
  for k in "${bash_lines[@]}"; do IFS='|' read -r kind line want <<< "$k"; lines+=("$line"); done
  mapfile -d '' screens < <(python3 "$T/drive_bash.py" "$BASH_C" "${lines[@]}")
  for k in "${!bash_lines[@]}"; do
    IFS='|' read -r kind line want <<< "${bash_lines[$k]}"
    screen=${screens[$k]-}
    if [ "$kind" = line ]; then
      [ "$screen" = "$want" ] && ok "bash (a terminal): '$line' TAB gives '$want'" ||
        not_ok "bash (a terminal): '$line' TAB" "got: $(printf '%q' "$screen")" "want: $(printf '%q' "$want")"
    else
      miss=""
      for w in $want; do grep -qE -- "(^| )$w( |$)" <<< "$screen" || miss="$miss $w"; done
      [ -z "$miss" ] && ok "bash (a terminal): '$line' TAB lists $want" || not_ok "bash (a terminal): '$line' TAB lacks$miss" "$screen"
    fi
  done
}
if command -v python3 >/dev/null && python3 -c 'import pty' 2>/dev/null; then
  mkdir -p t/dd t/d2 && : > t/j.journal && : > t/d2/r.json
  cd t || exit 1
  bash_line "dupscan --form" "dupscan --format="
  bash_lists "dupscan --format=" csv fdupes html json text
  bash_line "dupscan --format=c" "dupscan --format=csv "
  bash_line "dupscan --keep=new" "dupscan --keep=newest "
  bash_line "dupscan --order=t" "dupscan --order=time "
  bash_line "dupscan --io=h" "dupscan --io=hdd "
  bash_line "dupscan --print=f" "dupscan --print=fullhash "
  bash_line "dupscan --summary=d" "dupscan --summary=dirs "
  bash_lists "dupscan --overlap=" 50 90 100
  bash_line "dupscan --journal=j" "dupscan --journal=j.journal "
  bash_line "dupscan --move-to=d2" "dupscan --move-to=d2/"
  bash_line "dupscan --reference=dd" "dupscan --reference=dd/"
  bash_line "dupscan --from-report=d2/" "dupscan --from-report=d2/r.json "
  bash_line "dupscan --undo=j" "dupscan --undo=j.journal "
  bash_lists "dupscan --recurse" --recurse --recurse:
  bash_line "dupscan -X onlye" "dupscan -X onlyext:"
  bash_line "dupscan --ext-filter=onlye" "dupscan --ext-filter=onlyext:"
  bash_lists "dupscan --max-depth=" 0 1 2 3
  bash_lists "dupscan --threads=" 1 2 4 8
  bash_line "dupscan --io-memory=2" "dupscan --io-memory=256M "
  bash_line "dupscan --chunk-size=13" "dupscan --chunk-size=131072 "
  bash_line "dupscan --cache=j" "dupscan --cache=j.journal "
  bash_lists "dupscan --protect=d" d2/ dd/
  bash_line "dupscan --files-from=j" "dupscan --files-from=j.journal "
  bash_line "dupscan --order t" "dupscan --order time "
  bash_check
  cd .. || exit 1
else
  echo "ok $((tap_n += 1)) # SKIP no python3 pty here to drive bash"
fi

# zsh: type in an interactive zsh on a pseudo-terminal, press TAB, read the screen
if command -v zsh >/dev/null && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
  mkdir -p zfunc && cp "$ZSH_C" zfunc/_dupscan
  cat > drive.zsh <<'ZSH'
zmodload zsh/zpty
zpty -b z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; setopt nobeep; LISTMAX=10000; print __ready__"
# wait for the shell to be ready (compinit done), type the line and a TAB,
# then read until nothing more comes for half a second
out= chunk=
for i in {1..100}; do
  while zpty -r -t z chunk; do out+=$chunk; done
  [[ $out == *$'\n'__ready__* ]] && break
  sleep 0.05
done
zpty -w -n z "$2"$'\t'
out= quiet=0
for i in {1..80}; do
  sleep 0.05
  if zpty -r -t z chunk; then out+=$chunk; quiet=0; while zpty -r -t z chunk; do out+=$chunk; done; else (( quiet++ )); fi
  [[ -n $out ]] && (( quiet >= 10 )) && break
done
print -r -- "$out"
zpty -d z
ZSH
  zsh_complete() { # LINE: the screen after LINE and a TAB, escapes removed
    zsh -f drive.zsh "$T/zfunc" "$1" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tr '\r' '\n'
  }
  zsh_complete "dupscan --max-d" | grep -q "dupscan --max-depth=" && ok "zsh: --max-d completes to --max-depth=" ||
    not_ok "zsh --max-d" "$(zsh_complete "dupscan --max-d" | tail -5)"
  screen=$(zsh_complete "dupscan --format=")
  grep -q "csv" <<< "$screen" && grep -q "fdupes" <<< "$screen" && grep -q "json" <<< "$screen" && grep -q "text" <<< "$screen" &&
    ok "zsh: --format= lists its values" || not_ok "zsh --format=" "$screen"
  zsh_complete "dupscan d/rep" | grep -q "dupscan d/report.json" && ok "zsh: a path argument completes a file" ||
    not_ok "zsh file" "$(zsh_complete "dupscan d/rep" | tail -5)"
  screen=$(zsh_complete "dupscan --")
  missing=$(for o in $longs; do grep -qE -- "(^|[ ])${o//:/\\\\?:}(=|[ ]|$)" <<< "$screen" || echo "$o"; done)
  [ -z "$missing" ] && ok "zsh: every long option listed after --" || not_ok "zsh lacks" "$missing"
else
  echo "ok $((tap_n += 1)) # SKIP zsh (with zsh/zpty) is not installed"
fi

# fish: complete -C gives what fish would offer for a command line
if command -v fish >/dev/null; then
  fish_complete() { fish --no-config -c "source '$FISH_C'; complete -C'$1'" | cut -f1; }
  got=$(fish_complete "dupscan --")
  missing=$(for o in $longs; do grep -qxF -- "$o" <<< "$got" || echo "$o"; done)
  [ -z "$missing" ] && ok "fish: every long option offered" || not_ok "fish lacks" "$missing"
  [ "$(fish_complete "dupscan --format=" | tr '\n' ' ')" = "--format=csv --format=fdupes --format=html --format=json --format=text " ] &&
    ok "fish: --format= offers its values" || not_ok "fish --format=" "$(fish_complete "dupscan --format=")"
  fish_complete "dupscan --from-report d/rep" | grep -qx "d/report.json" && ok "fish: --from-report completes a file" ||
    not_ok "fish --from-report" "$(fish_complete "dupscan --from-report d/rep")"
else
  echo "ok $((tap_n += 1)) # SKIP fish is not installed"
fi
done_testing

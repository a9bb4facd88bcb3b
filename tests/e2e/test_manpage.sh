#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The option table (src/cli/input/optable.c, listed by optgen), --help and man/dupscan.1 list the same
# options, short and long (jdupes 1.20's man page once lacked options --help had).
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}

table=$("$OPTGEN" list | grep '^-[^-]' | sort)
help=$("$DUPSCAN" --help | grep -oE '^ -[^ ] --[a-z0-9:-]+' | sed 's/^ //' | sort)
man=$(grep -E '^\.BR \\-. ", " \\-\\-' "$SRC/man/dupscan.1" | sed -E 's/^\.BR \\-(.) ", " \\-\\-([^ ]+).*/-\1 --\2/; s/\\-/-/g' | sort)

# long-only options: "{ "name", ..., OPT_NAME }", "    --name" in --help, an entry in the man page
table_long=$("$OPTGEN" list | grep '^--' | sort)
help_long=$("$DUPSCAN" --help | grep -oE '^    --[a-z0-9-]+' | sed 's/^ *//' | sort)
# (option entries only: the line after .TP, ".B \-\-name" or ".BI \-\-name= ARG")
man_long=$(awk 'prev == ".TP" && /^\.BI? \\-\\-[a-z]/ {print} {prev = $0}' "$SRC/man/dupscan.1" |
  sed -E 's/^\.BI? (\\-\\-[^ =]+).*/\1/; s/\\-/-/g' | sort -u)
[ -n "$table_long" ] && [ "$table_long" = "$help_long" ] && [ "$table_long" = "$man_long" ] && ok "long-only options agree ($(echo $table_long))" || not_ok "long-only options agree" "table: $table_long" "help: $help_long" "man: $man_long"
[ -n "$table" ] && ok "option table parsed ($(echo "$table" | wc -l) options)" || not_ok "option table parsed"
if [ "$table" = "$help" ]; then ok "--help lists exactly the option table"; else not_ok "--help lists exactly the option table" "$(diff <(echo "$table") <(echo "$help"))"; fi
if [ "$table" = "$man" ]; then ok "man page documents exactly the option table"; else not_ok "man page documents exactly the option table" "$(diff <(echo "$table") <(echo "$man"))"; fi
# every documented option is accepted by the binary (a file here: a scan
# that examined no file is refused, status 2)
echo accepted > accepted.txt
while read -r short long; do
  case "$long" in
    --help|--version|--partial-only) continue ;;
    --order) val==name ;;
    --chunk-size) val==4096 ;;
    --print) val==early ;;
    --ext-filter) val==size+:0 ;;
    --delete|--link-soft|--link-hard|--dedupe) val=" --dry-run" ;;
    --threads) val==2 ;;
    *) val= ;;
  esac
  # shellcheck disable=SC2086
  run "$DUPSCAN" -q $long$val .
  [ "$rc" != 2 ] && ok "accepts $long" || not_ok "accepts $long" "$err"
done <<< "$table"
index=$(grep -oE "^\.\\\\\" options: .*" "$SRC/man/dupscan.1" | sed 's/.*options: //' | tr ' ' '\n' | sort)
all=$("$OPTGEN" list | grep -oE -- '--[a-z0-9:-]+$' | sort)
[ -n "$index" ] && [ "$index" = "$all" ] && ok "the man page's plain index of long options is complete" || not_ok "man page index" "$(diff <(echo "$all") <(echo "$index"))"
missing=$(for o in $all; do grep -qE -- "(^|[ '])$o(=|[ ']|$)" "$COMPLETIONS/dupscan" || echo "$o"; done)
[ -z "$missing" ] && ok "bash completion offers every long option" || not_ok "bash completion lacks" "$missing"
grep -q '^\.SH EXIT STATUS' "$SRC/man/dupscan.1" && ok "man page has EXIT STATUS" || not_ok "man page has EXIT STATUS"
# every variable the program reads is in ENVIRONMENT; FILES names the cache and the journals
envsec=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH FILES/p' "$SRC/man/dupscan.1")
files=$(sed -n '/^\.SH FILES/,/^\.SH EXIT STATUS/p' "$SRC/man/dupscan.1")
vars=$(grep -ohE 'getenv\("[A-Z_]+"\)' "$SRC"/src/cli/*.c "$SRC"/src/cli/*/*.c "$SRC"/src/util/*.c | grep -oE '"[A-Z_]+"' | tr -d '"' | sort -u)
missing=$(for v in $vars; do grep -q "^\.B $v\$" <<< "$envsec" || echo "$v"; done)
[ -n "$vars" ] && [ -z "$missing" ] && ok "ENVIRONMENT: each variable read ($(echo $vars))" || not_ok "ENVIRONMENT lacks" "$missing"
grep -q 'dupscan/hashes' <<< "$files" && grep -q 'journal' <<< "$files" && ok "FILES: the cache and the journals" || not_ok "FILES section"
# section 3: a page for every function dupscan.h declares (a link to the page
# that describes it, or that page); every option and callback type described
declared=$(grep -oE 'DUPSCAN_API [^(]*\(' "$SRC/include/dupscan.h" | grep -oE 'dupscan_[a-z0-9_]+ *\($' | tr -d ' (' | sort)
pages=$( (grep -oE "'dupscan_[a-z0-9_]+'" "$SRC/man/meson.build" | tr -d "'"; ls "$SRC/man" | sed -n 's/^\(dupscan_[a-z0-9_]*\)\.3$/\1/p') | sort)
[ -n "$declared" ] && [ "$declared" = "$pages" ] && ok "a man 3 page for each of the $(echo "$declared" | wc -l) public functions" ||
  not_ok "man 3 pages and dupscan.h's functions differ" "$(diff <(echo "$declared") <(echo "$pages"))"
opts=$(grep -oE '^\s*DUPSCAN_OPT_[A-Z_]+' "$SRC/include/dupscan.h" | tr -d ' \t' | sort)
described=$(grep -oE '^\.B DUPSCAN_OPT_[A-Z_]+$' "$SRC/man/dupscan_set_option.3" | sed 's/^\.B //' | sort)
[ -n "$opts" ] && [ "$opts" = "$described" ] && ok "dupscan_set_option(3) describes every DUPSCAN_OPT_* ($(echo "$opts" | wc -l))" ||
  not_ok "options described differ" "$(diff <(echo "$opts") <(echo "$described"))"
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$SRC/man/libdupscan.3")
missing=$(for t in $(grep -oE 'typedef [a-z]+ \(\*dupscan_[a-z_]+_fn\)' "$SRC/include/dupscan.h" | grep -oE 'dupscan_[a-z_]+_fn'); do
  grep -q "typedef.*$t" <<< "$synopsis" || echo "$t"; done)
[ -z "$missing" ] && ok "libdupscan(3)'s SYNOPSIS has every callback type" || not_ok "callback types not in the SYNOPSIS" "$missing"
# the pages as installed (date and version filled in) parse without warnings
built=$(dirname "${DUPSCAN_VERSION_H:?}")/man
if command -v mandoc >/dev/null; then
  run mandoc -Tlint -W warning "$built/dupscan.1" "$built/libdupscan.3" "$built/dupscan_set_option.3"
  [ "$rc" = 0 ] && [ -z "$out$err" ] && ok "mandoc -Tlint: no warnings" || not_ok "mandoc -Tlint" "$out" "$err"
else
  ok "# SKIP mandoc not installed"
fi
done_testing

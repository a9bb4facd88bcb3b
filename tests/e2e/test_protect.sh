#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --protect: protected files are listed but never deleted, linked over, moved or
# deduplicated, whatever the order options say, and are the kept file of a set.
. "$(dirname "$0")/../fixtures/lib.sh"

tree() {
  rm -rf t; mkdir -p t/master/sub t/import/deep
  echo photo1 > t/master/sub/p1; cp t/master/sub/p1 t/import/p1; cp t/master/sub/p1 t/import/deep/p1b
  echo photo2 > t/master/p2; cp t/master/p2 t/master/p2copy      # duplicates only inside master
  echo photo3 > t/import/p3; cp t/import/p3 t/import/p3b           # duplicates only outside
  echo unique > t/master/u
}
tree
plain=$("$DUPSCAN" -r t)
run "$DUPSCAN" -r --protect=t/master t
# the same sets; the kept file, protected, comes first in each (what -dN keeps)
setsof() { awk 'BEGIN{RS=""} {n=split($0,f,"\n"); asort(f); s=""; for(i=1;i<=n;i++) s=s f[i] " "; print s}' <<< "$1" | sort; }
firsts=$(awk 'BEGIN{RS=""} {split($0,f,"\n"); print f[1]}' <<< "$out")
[ "$rc" = 0 ] && [ "$(setsof "$out")" = "$(setsof "$plain")" ] && [ "$firsts" = "$(printf 't/master/sub/p1\nt/import/p3b\nt/master/p2copy')" ] && [ "$(head -n 1 <<< "$plain")" = t/import/deep/p1b ] &&
  ok "--protect: the same sets, each listing its kept (protected) file first" || not_ok "--protect listing" "$out"

for order in "" "-i" "-o time" "-O t/import t/master" "-O -i t/import t/master"; do
  tree; touch -d '2000-01-01' t/import/p1 t/import/deep/p1b
  master_before=$(snapshot t/master)
  # shellcheck disable=SC2086
  run "$DUPSCAN" -rdNq --protect=t/master --journal=j $order $( [ "${order#-O}" = "$order" ] && echo t)
  [ "$(snapshot t/master)" = "$master_before" ] && [ ! -e t/import/p1 ] && [ ! -e t/import/deep/p1b ] && [ "$(ls t/import | grep -c '^p3')" = 1 ] &&
    ok "-dN ${order:-(name order)}: protected tree untouched, copies outside deleted" || not_ok "-dN $order" "$out" "$(find t | sort)"
done
printf '%s' "$out" | grep -qF "   [+] t/master/p2copy -- protected" && ok "-dN: a set only of protected files is left alone, said so" || not_ok "all-protected set" "$out"

for act in -L -l -B --move-to=mv; do
  tree; rm -rf mv; master_before=$(snapshot t/master)
  run "$DUPSCAN" -rq --protect=t/master --journal=j $act t
  [ "$(snapshot t/master)" = "$master_before" ] && ok "$act: protected files untouched" || not_ok "$act touched protected" "$(diff <(echo "$master_before") <(snapshot t/master))"
  case "$act" in
    -L) [ "$(stat -c %i t/import/p1)" = "$(stat -c %i t/master/sub/p1)" ] && ok "-L: the copy outside now links to the protected file" || not_ok "-L link" "$out" ;;
    -l) [ "$(readlink t/import/p1)" = ../master/sub/p1 ] && ok "-l: the copy outside now points to the protected file" || not_ok "-l link" "$out" "$(ls -l t/import)" ;;
    --move-to=mv) [ -f mv/import/p1 ] && [ ! -e mv/master ] && ok "--move-to: only unprotected copies moved" || not_ok "--move-to" "$(find mv)" ;;
    -B) printf '%s' "$out" | grep -qE "\[PRO\] t/master/p2(copy)?$" && ok "-B: protected duplicates shown as [PRO], left alone" || not_ok "-B [PRO]" "$out" ;;
  esac
done

# interactive -d: a protected file is kept even when not chosen
tree
printf '2\n1\n1\n' | "$DUPSCAN" -rdq --protect=t/master --journal=j t > d.out 2>&1
[ -f t/master/sub/p1 ] && grep -qF "   [+] t/master/sub/p1 -- protected" d.out && ok "-d prompt: a protected file not chosen is kept anyway" || not_ok "-d prompt protected" "$(cat d.out)"

# any spelling of the path, a symlink to it, a file, a path outside the arguments
for spec in ./t/master/ "t//master" "$T/t/master" link-to-master t/master/sub/p1; do
  tree; ln -sfn t/master link-to-master
  run "$DUPSCAN" -rqL --protect="$spec" --journal=j t
  [ "$(stat -c %h t/master/sub/p1)" -ge 2 ] && [ "$(stat -c %i t/import/p1)" = "$(stat -c %i t/master/sub/p1)" ] && ok "--protect=$spec: recognised" || not_ok "--protect=$spec" "$out"
done
tree
run "$DUPSCAN" -rqdN --protect=t --journal=j t/import
[ -f t/import/p3b ] && [ -f t/import/p1 ] && ok "--protect above the argument protects the files under it" || not_ok "protect above arg" "$out"
tree
run "$DUPSCAN" -qdN --protect=t/master --journal=j t/master/sub/p1 t/import/p1
[ -f t/master/sub/p1 ] && [ ! -e t/import/p1 ] && ok "--protect with files given directly" || not_ok "protect file args" "$out"

run "$DUPSCAN" -r --protect=t/nowhere t
[ "$rc" = 2 ] && expect_err "--protect of a missing path: usage error naming it" "--protect 't/nowhere': $E_NOENT"
done_testing

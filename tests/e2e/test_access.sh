#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Links that would change who may read a file: -L and -l link only files of
# one owner, group, mode, ACL and security labels (each set in classes that
# agree, each class to its own kept file), name every refusal, and keep for
# every user every content they could read; --ignore-access links them all,
# as before. As root, with nobody as the other user.
. "$(dirname "$0")/../fixtures/lib.sh"
if [ "$(id -u)" != 0 ] || ! getent passwd 65534 >/dev/null; then
  echo "ok 1 # SKIP needs root and the nobody user (65534)"; echo "1..1"; exit 0
fi
# (a copy in the test's folder: nobody runs it, and may not reach the checkout)
cp "$(dirname "$0")/../fixtures/access_tree.py" "$T/.access_tree.py" && chmod 644 "$T/.access_tree.py"
TREE=$T/.access_tree.py
# the interpreter nobody may run (a version manager's lies under /root)
PY=$(command -v /usr/bin/python3 || echo python3)
as_nobody() {
  if command -v setpriv >/dev/null; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  else runuser -u nobody -- "$@"; fi
}

# the issue's example: a private file of root's and nobody's copy
mkdir -p ex && echo secret > ex/a && echo secret > ex/b && chmod 600 ex/a && chmod 644 ex/b && chown 65534 ex/b
user=$(getent passwd 65534 | cut -d: -f1)
for act in -L -l; do
  run "$DUPSCAN" -r $act ex
  [ "$rc" = 1 ] && [ "$err" = "dupscan: ex/b: Not linked: its owner differs from ex/a's ($user, root)" ] &&
    [ "$(stat -c '%U %a %h' ex/b)" = "$user 644 1" ] && [ ! -L ex/b ] &&
    ok "$act: nobody's copy of root's private file refused, named, left as it was" || not_ok "$act: refused" "rc $rc" "$out" "$err"
done
chown 0 ex/b
run "$DUPSCAN" -rL ex
[ "$err" = "dupscan: ex/b: Not linked: its mode differs from ex/a's (0644, 0600)" ] && ok "-L: the mode named" || not_ok "-L: the mode" "$err"
setfacl_like() { "$PY" -c 'import os, struct, sys
e = [(1, 6, 0xFFFFFFFF), (2, 4, 65534), (4, 0, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))' "$1"; }
chmod 640 ex/a ex/b && setfacl_like ex/a
run "$DUPSCAN" -rL ex
[ "$err" = "dupscan: ex/b: Not linked: its ACL differs from ex/a's" ] && ok "-L: an ACL named" || not_ok "-L: the ACL" "$err" "$(getfacl ex/a 2>&1)"

# 200 sets mixing owners, groups, modes, ACLs and labels
labels=$("$PY" "$TREE" make t 200)
before=$("$PY" "$TREE" snap t)
readable_root=$("$PY" "$TREE" readable t)
readable_nobody=$(as_nobody "$PY" "$TREE" readable t)
[ -n "$readable_nobody" ] && [ "$readable_nobody" != "$readable_root" ] &&
  ok "the tree: 200 sets ($labels); nobody reads $(wc -l <<< "$readable_nobody") of $(wc -l <<< "$readable_root") contents" ||
  not_ok "the tree" "$labels" "$readable_nobody"
cp -a t t.orig
run "$DUPSCAN" -rL --dry-run t
[ "$("$PY" "$TREE" snap t)" = "$before" ] && grep -q "Not linked: its owner differs" <<< "$err" &&
  ok "--dry-run: the refusals shown, nothing changed" || not_ok "--dry-run" "$err"
for act in -L -l; do
  rm -rf t && cp -a t.orig t
  run "$DUPSCAN" -r $act t
  after=$("$PY" "$TREE" snap t)
  [ "$after" = "$before" ] && ok "$act: every path resolves to the owner, group, mode, ACL and labels it had" ||
    not_ok "$act changed who may read a path" "$(diff <(echo "$before") <(echo "$after") | head -20)"
  [ "$("$PY" "$TREE" readable t)" = "$readable_root" ] && [ "$(as_nobody "$PY" "$TREE" readable t)" = "$readable_nobody" ] &&
    ok "$act: root and nobody read the contents they read before" || not_ok "$act: readable contents changed"
  unlinked=$("$PY" "$TREE" classes t | awk '$4 != 1')
  [ -z "$unlinked" ] && ok "$act: every class of equal access linked to one file" || not_ok "$act: classes not linked" "$unlinked"
  refused=$(grep -c "Not linked: its" <<< "$err")
  [ "$rc" = 1 ] && [ "$refused" -gt 0 ] && [ "$refused" = "$(grep -c -- '-//->' <<< "$out")" ] &&
    ok "$act: $refused refusals, each named" || not_ok "$act: refusals" "rc $rc, $refused named" "$(grep -c -- '-//->' <<< "$out") shown"
done
# --ignore-access: the old behaviour, every set one file
rm -rf t && cp -a t.orig t
run "$DUPSCAN" -rL --ignore-access t
[ "$rc" = 0 ] && [ "$("$PY" "$TREE" classes t | awk '{ n[$1] = 1 } END { print length(n) }')" -gt 0 ] &&
  [ "$(find t -type f -links 1 | wc -l)" = 0 ] && ok "--ignore-access: every duplicate linked, whoever owned it" ||
  not_ok "--ignore-access" "rc $rc" "$(find t -type f -links 1 | head)"
run "$DUPSCAN" -r --ignore-access -B t
[ "$rc" = 2 ] && expect_err "--ignore-access with -B (which keeps every file's own): a usage error" \
  "--ignore-access goes with -L, -l, -d or --move-to" || not_ok "--ignore-access -B" "rc $rc"

# -dN and --move-to: a file goes only when its owner could read the kept file
rm -rf ex && mkdir ex && echo secret > ex/a && echo secret > ex/b && chmod 600 ex/a && chown 65534 ex/b
for act in -dN --move-to=moved; do
  rm -rf moved
  run "$DUPSCAN" -rq $act ex
  [ "$rc" = 1 ] && grep -q "\[!\] ex/b -- Someone who may read it could not read the kept file" <<< "$out" && [ -e ex/b ] && [ -z "$(find moved -type f 2>/dev/null)" ] &&
    ok "$act: nobody's only readable copy of root's private file kept, named" || not_ok "$act: refused" "rc $rc" "$out" "$err"
done
# the kept file's ACL denies nobody what "others" may: nobody reads the copy
# by its mode, not the kept file
chmod 644 ex/a ex/b && chown 0 ex/b && "$PY" -c 'import os, struct, sys
e = [(1, 6, 0xFFFFFFFF), (2, 0, 65534), (4, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)]
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))' ex/a
run "$DUPSCAN" -rq -dN ex
[ "$rc" = 1 ] && [ -e ex/b ] && grep -q "\[!\] ex/b -- Someone who may read it" <<< "$out" &&
  [ "$(as_nobody cat ex/b)" = secret ] && ! as_nobody cat ex/a 2>/dev/null &&
  ok "-dN: a copy kept for the user the kept file's ACL denies" || not_ok "-dN: ACL-denied reader" "rc $rc" "$out"
chown 65534 ex/b && "$PY" -c 'import os, sys; os.removexattr(sys.argv[1], "system.posix_acl_access")' ex/a && chmod 644 ex/a
run "$DUPSCAN" -rq -dN ex
[ "$rc" = 0 ] && [ ! -e ex/b ] && ok "-dN: removed once its owner could read the kept file" || not_ok "-dN readable" "$out"
for act in -dN --move-to=moved; do
  rm -rf t moved && cp -a t.orig t
  run "$DUPSCAN" -rq $act t
  [ "$("$PY" "$TREE" readable t)" = "$readable_root" ] && [ "$(as_nobody "$PY" "$TREE" readable t)" = "$readable_nobody" ] &&
    ok "$act: root and nobody read the contents they read before" || not_ok "$act: readable contents changed" "$err"
  # the sets all of root's 0644 (every fifth) end with one file; every file
  # left past one a set is a refusal, named
  alike=$(for s in $(seq 0 5 195); do find t -name "f$s-*" | wc -l; done | sort -u)
  refused=$(grep -c "Someone who may read it could not read the kept file" <<< "$out")
  left=$(( $(find t -type f | wc -l) - 200 ))
  [ "$alike" = 1 ] && [ "$refused" -gt 0 ] && [ "$refused" = "$left" ] &&
    ok "$act: the sets alike down to one file; $refused refused, each named" ||
    not_ok "$act: removed" "files a set alike: $alike" "$refused refused, $left left past one a set"
done
rm -rf t && cp -a t.orig t
run "$DUPSCAN" -rq -dN --ignore-access t
[ "$rc" = 0 ] && [ "$(find t -type f | wc -l)" = 200 ] && ok "-dN --ignore-access: one file a set, whoever could read it" ||
  not_ok "-dN --ignore-access" "rc $rc" "$(find t -type f | wc -l) files"
# run by a user, not root: the same judgement (root's copy readable by
# anyone, nobody's kept file private: refused)
mkdir u j && chown 65534 u j && echo same > u/a && chown 65534 u/a && chmod 600 u/a && echo same > u/b && chmod 644 u/b
out=$(as_nobody "$DUPSCAN" -rqdN --journal=j/journal u 2>&1); rc=$?
[ "$rc" = 1 ] && grep -q "\[!\] u/b -- Someone who may read it could not read the kept file" <<< "$out" && [ -e u/b ] &&
  ok "-dN run by nobody: root's world-readable copy of nobody's private file left, named" || not_ok "-dN as nobody" "rc $rc" "$out"
chmod 644 u/a
out=$(as_nobody "$DUPSCAN" -rqdN --journal=j/journal u 2>&1); rc=$?
[ "$rc" = 0 ] && [ ! -e u/b ] && ok "-dN run by nobody: removed once anyone may read the kept file" || not_ok "-dN as nobody, readable" "rc $rc" "$out"
done_testing

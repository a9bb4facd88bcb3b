#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a run says is about what it examined, and a slip in an argument is
# refused (status 2, one line naming it) before anything changes: a journal
# that is not one, an undo of a folder, an output that closes mid-run, a
# --move-to inside the tree or onto a file, a question that examined
# nothing, a pattern that matched nothing.
. "$(dirname "$0")/../fixtures/lib.sh"

# pairs DIR N: N pairs of copies, DIR/aI and DIR/bI
pairs() { mkdir -p "$1"; local i; for i in $(seq "$2"); do echo "$i" > "$1/a$i"; echo "$i" > "$1/b$i"; done; }
state() { snapshot "$1"; }

# --journal=FILE that is not a journal: refused, untouched, nothing linked
rm -rf p; pairs p 3; echo '<html>' > report.html; before=$(state p)
run "$DUPSCAN" -rL --journal=report.html p
[ "$rc" = 2 ] && [ "$(cat report.html)" = '<html>' ] && [ "$(state p)" = "$before" ] &&
  ok "--journal= a page: status 2, the page untouched, nothing changed" || not_ok "--journal= a page" "rc $rc" "$err"
expect_err "--journal= a page: named as not a journal" "^dupscan: --journal 'report\.html': is not a dupscan journal"
run "$DUPSCAN" -rL --journal=p p
[ "$rc" = 2 ] && [ "$(state p)" = "$before" ] && ok "--journal= a folder: status 2, nothing changed" || not_ok "--journal= a folder" "rc $rc" "$err"
# an empty file (touch) is a journal to begin
: > j.empty
run "$DUPSCAN" -rLq --journal=j.empty p
[ "$rc" = 0 ] && [ "$(head -1 j.empty)" = "# dupscan journal 1" ] && [ "$(grep -c '^hardlink' j.empty)" = 3 ] &&
  ok "--journal= an empty file: written as a journal" || not_ok "--journal= an empty file" "rc $rc" "$err"
run "$DUPSCAN" --undo=j.empty
[ "$rc" = 0 ] && [ "$(state p)" = "$before" ] && ok "--undo of it gives every name back" || not_ok "--undo of a journal begun empty" "rc $rc" "$err"

# --undo of what holds no journal: status 2, "is not a dupscan journal"
mkdir -p somedir; : > empty.journal
for j in somedir empty.journal report.html; do
  run "$DUPSCAN" --undo="$j"
  [ "$rc" = 2 ] && [ -z "$out" ] && printf '%s' "$err" | grep -q "^dupscan: --undo: '$j' is not a dupscan journal$" &&
    ok "--undo=$j: status 2, not a journal" || not_ok "--undo=$j" "rc $rc" "out: $out" "err: $err"
done

# an output closed by `head`: the journal named on stderr before the first
# change, the run stopped between two changes, and --undo gives all back.
# Names of 200 bytes: the listing (400 KB) outgrows the pipe (64 KiB), so the
# run waits on it until head has gone, whatever the scheduler does (with
# short names a fast run once wrote all of it before head read a line)
long=$(printf 'n%.0s' $(seq 200))
rm -rf p; mkdir p
for i in $(seq 1000); do echo "$i" > "p/a$i$long"; echo "$i" > "p/b$i$long"; done
before=$(state p)
rm -rf "$XDG_STATE_HOME/dupscan"
"$DUPSCAN" -rL p 2> pipe.err | head -n 2 > /dev/null
st=${PIPESTATUS[0]}
j=$(sed -n 's/^dupscan: journal of this run: \(.*\) (dupscan --undo=FILE reverses it)$/\1/p' pipe.err)
linked=$(grep -c '^hardlink' "$j" 2>/dev/null)
[ "$st" = 1 ] && [ -n "$j" ] && [ "$(head -1 pipe.err)" = "dupscan: journal of this run: $j (dupscan --undo=FILE reverses it)" ] &&
  grep -q '^dupscan: output closed (.*): stopping before the next change$' pipe.err && [ "${linked:-0}" -ge 1 ] && [ "$linked" -lt 1000 ] &&
  ok "output closed: journal named first, the run stopped ($linked of 1000 linked), status 1" ||
  not_ok "output closed mid-run" "status $st, linked ${linked:-?}" "$(cat pipe.err)"
# every change made is in the journal: as many second names as lines
made=$(find p -type f -links +1 | wc -l)
[ "$made" = $((2 * linked)) ] && ok "output closed: every link made is journaled" || not_ok "links made $made, journaled $linked"
run "$DUPSCAN" --undo="$j"
[ "$rc" = 0 ] && [ "$(state p)" = "$before" ] && ok "output closed: --undo restores everything" || not_ok "undo after a closed output" "rc $rc" "$err"

# the journal's line says what --undo can do with it: a deletion is no change it reverses
rm -rf dl; pairs dl 1
run "$DUPSCAN" -rdN dl
expect_err "-dN: the journal named as a record, deletions not undoable" "^dupscan: journal of this run: .* \(a record of what is deleted: deletions cannot be undone\)$"

# a rename-saving writer puts another file at the journal's name while -d
# waits at its prompt: the journal was checked before the scan, and is
# checked again at its first write; nothing is appended and nothing deleted
rm -rf rj; pairs rj 2; : > race.journal; before=$(state rj)
rm -f race.in; mkfifo race.in
"$DUPSCAN" -rd --journal=race.journal rj < race.in > race.out 2> race.err &
pid=$!
exec 3> race.in
wait_for race.out "keep which files?" &&
  { printf '<html>saved by an editor</html>\n' > race.tmp && mv race.tmp race.journal; }
# (in a subshell: the run may stop before it reads them, and a closed FIFO
# would kill this script with SIGPIPE)
( printf '1\n1\n' >&3 ) 2>/dev/null
exec 3>&-
wait "$pid"; st=$?
[ "$st" != 0 ] && [ "$(cat race.journal)" = "<html>saved by an editor</html>" ] && [ "$(state rj)" = "$before" ] &&
  grep -q "is no longer a dupscan journal; stopping before the next change" race.err &&
  ok "a journal swapped while -d waits: not appended to, nothing deleted, said" ||
  not_ok "journal swapped under -d: status $st" "$(cat race.err)" "$(cat race.journal)"

# --move-to inside the scanned tree: said once, left out of the walk, so a
# second run moves nothing again (it moved photos/dupes/dupes/... before)
rm -rf photos; mkdir -p photos/x; echo 1 > photos/a; echo 1 > photos/x/b; echo 2 > photos/c; echo 2 > photos/x/d
run "$DUPSCAN" -rq --move-to=photos/dupes photos
[ "$rc" = 0 ] && [ -f photos/dupes/x/b ] && [ -f photos/dupes/x/d ] && ok "--move-to inside the tree: moved" || not_ok "--move-to inside" "rc $rc" "$out" "$err"
before=$(state photos)
run "$DUPSCAN" -r --move-to=photos/dupes photos
[ "$rc" = 0 ] && [ -z "$out" ] && [ "$(state photos)" = "$before" ] && ok "--move-to inside the tree, again: nothing moved twice" ||
  not_ok "--move-to run twice" "rc $rc" "$out" "$(find photos)"
[ "$(printf '%s\n' "$err" | grep -c "^dupscan: --move-to 'photos/dupes' lies inside 'photos': what it holds is left out of the scan$")" = 1 ] &&
  ok "--move-to inside the tree: said once" || not_ok "--move-to inside: said once" "$err"
# the folder reached under another name (a bind mount of it inside the
# tree): left out all the same, by its identity
if [ "$(id -u)" = 0 ] && mkdir -p photos/view && mount --bind photos/dupes photos/view 2>/dev/null; then
  run "$DUPSCAN" -r --move-to=photos/dupes photos
  umount photos/view; rmdir photos/view
  [ "$rc" = 0 ] && [ -z "$out" ] && [ "$(state photos)" = "$before" ] && ok "--move-to reached through a bind mount: left out too" ||
    not_ok "--move-to through a bind mount: rc $rc" "$out" "$err"
else
  rmdir photos/view 2>/dev/null
  ok "# SKIP no bind mount here (not root)"
fi
# a file, the scanned path itself, a folder holding it: status 2 before the scan
for dest in photos/a photos . "$T"; do
  run "$DUPSCAN" -r --move-to="$dest" photos
  [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [ "$(state photos)" = "$before" ] &&
    ok "--move-to=$dest: status 2, one line, nothing changed" || not_ok "--move-to=$dest" "rc $rc" "out: $out" "err: $err"
done
run "$DUPSCAN" -r --move-to=photos/a/sub photos
[ "$rc" = 2 ] && expect_err "--move-to below a file: cannot be made" "^dupscan: --move-to 'photos/a/sub': .*; nothing was changed$" ||
  not_ok "--move-to below a file: status $rc" "$err"

# --missing that examined nothing: said on stderr, status 2, nothing listed
rm -rf ph; mkdir -p ph/library/2020 ph/card/DCIM; echo a > ph/library/2020/a.jpg; echo b > ph/card/DCIM/b.jpg; echo a > ph/card/DCIM/a.jpg
run "$DUPSCAN" --reference=ph/library ph/card --missing
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "--missing without -r over a card of folders: status 2, nothing checked" \
  "^dupscan: --missing: no file under 'ph/card' was checked against the reference .*-r" || not_ok "--missing, no -r: rc $rc" "$out" "$err"
run "$DUPSCAN" -r --reference=ph/library ph/card --missing -X size+:100
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "--missing, every file filtered out: status 2" "no file under 'ph/card' was checked" ||
  not_ok "--missing filtered out: rc $rc" "$out" "$err"
for card in ph/library/2020 "ph/library/2020 ph/card/../library/."; do
  # shellcheck disable=SC2086
  run "$DUPSCAN" -r --reference=ph/library $card --missing
  card=${card%% *}
  [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && expect_err "--missing, the card $card in its reference: status 2" \
    "^dupscan: '$card' (lies inside|is) the reference 'ph/library': its files are the reference" || not_ok "card in reference: rc $rc" "$err"
done
run "$DUPSCAN" -r --reference=ph/card ph --missing
[ "$rc" = 0 ] && expect_err "a reference inside the card: said" "^dupscan: warning: the reference 'ph/card' lies inside 'ph'" &&
  expect_err "a reference inside the card: the rest checked" "^dupscan: 0 files \(0 bytes\) of 1 checked have no copy under ph/card$" ||
  not_ok "reference in card: rc $rc" "$err"
mkdir -p only/lib && echo z > only/lib/z
run "$DUPSCAN" -r --reference=only/lib only --missing
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "a card holding nothing but its reference: status 2, said" \
  "no file under 'only' was checked against the reference \\(its only files are the reference's" || not_ok "card = reference only: rc $rc" "$err"
run "$DUPSCAN" -r --reference=ph/library ph/card --missing
[ "$rc" = 3 ] && [ "$out" = ph/card/DCIM/b.jpg ] && expect_err "--missing: the summary counts what was checked" \
  "^dupscan: 1 file \(2 bytes\) of 2 checked has no copy under ph/library$" || not_ok "--missing: rc $rc" "$out" "$err"
# a file that could not be read is counted in the summary (as another user)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  chmod 000 ph/card/DCIM/b.jpg
  run su nobody -s /bin/sh -c "cd '$PWD' && '$DUPSCAN' -r --reference=ph/library ph/card --missing"
  chmod 644 ph/card/DCIM/b.jpg
  [ "$rc" = 1 ] && expect_err "--missing with an unreadable file: counted in the summary, status 1" \
    "^dupscan: 0 files \(0 bytes\) of 1 checked have no copy under ph/library; 1 path could not be read \(named above\)$" ||
    not_ok "--missing unreadable: rc $rc" "$err"
  chmod 000 ph/card/DCIM/b.jpg
  run su nobody -s /bin/sh -c "cd '$PWD' && '$DUPSCAN' -rm ph"
  chmod 644 ph/card/DCIM/b.jpg
  [ "$rc" = 1 ] && [ "$out" = "1 duplicate files (in 1 sets), occupying 2 bytes" ] &&
    expect_err "-m with an unreadable file: its summary says it left it out" "^dupscan: 1 path could not be read \(named above\): in no figure of the summary$" ||
    not_ok "-m unreadable: rc $rc" "$out" "$err"
  chmod 000 ph/card/DCIM/b.jpg
  run su nobody -s /bin/sh -c "cd '$PWD' && '$DUPSCAN' -r --summary=dirs ph"
  chmod 644 ph/card/DCIM/b.jpg
  [ "$rc" = 1 ] && expect_err "--summary=dirs with an unreadable file: said beside its figures" "^dupscan: 1 path could not be read \(named above\): in no folder's figures$" ||
    not_ok "--summary=dirs unreadable: rc $rc" "$out" "$err"
else
  ok "# SKIP not root: no other user to be"
fi

# '~' after '=' is left as it is by the shell: no folder named '~' is made
for opt in --move-to --journal --cache; do
  case $opt in --move-to) act=-r ;; --journal) act=-rL ;; *) act=-r ;; esac
  run "$DUPSCAN" $act "$opt=~/dupscan-test-x" pr
  [ "$rc" = 2 ] && [ ! -e '~' ] && expect_err "$opt=~/...: status 2, the shell's '~' named" "^dupscan: $opt '~/dupscan-test-x': the shell leaves '~' as it is" ||
    not_ok "$opt=~: rc $rc" "$err"
done
run "$DUPSCAN" -rL --journal="$T/no/such/dir/j" pr
[ "$rc" = 2 ] && ok "--journal in a folder that is not there: status 2 before the scan" || not_ok "--journal missing folder: rc $rc" "$err"

# -B where the filesystem cannot share extents (tmpfs, ext4): not "done"
rm -rf bb; mkdir bb; head -c 100000 /dev/urandom > bb/a; cp bb/a bb/b; cp bb/a bb/c
run "$DUPSCAN" -rB bb
if printf '%s' "$err" | grep -q "does not support deduplication"; then
  [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | tail -1)" = "Deduplication not done: none of the 2 files processed could be deduplicated (named above)" ] &&
    ok "-B on a filesystem that cannot share: 'not done', status 1" || not_ok "-B unsupported: rc $rc" "$out" "$err"
else
  ok "# SKIP this filesystem shares extents"
fi

# a scan that took no file: not "no duplicates"
rm -rf nf; mkdir -p nf/sub/deeper nf/empty; echo x > nf/sub/a; echo x > nf/sub/deeper/b
run "$DUPSCAN" nf
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "a folder of folders without -r: status 2, said" "^dupscan: no file was examined: 'nf' holds only folders, and without -r" ||
  not_ok "no -r over folders: rc $rc" "$err"
run "$DUPSCAN" -r -X size+:100 nf
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "every file filtered out: status 2, said" "^dupscan: no file was examined: the filters" ||
  not_ok "filtered to nothing: rc $rc" "$err"
run "$DUPSCAN" -r --exclude='sub/' nf
[ "$rc" = 2 ] && ok "every folder excluded: status 2" || not_ok "excluded to nothing: rc $rc" "$err"
run "$DUPSCAN" -r nf/empty
[ "$rc" = 0 ] && [ -z "$out" ] && [ -z "$err" ] && ok "an empty tree: no duplicates is the truth, status 0" || not_ok "empty tree: rc $rc" "$err"
run "$DUPSCAN" -r nf
[ "$rc" = 0 ] && [ "$out" = "$(printf 'nf/sub/a\nnf/sub/deeper/b')" ] && [ -z "$err" ] && ok "the same tree with -r: its set, nothing said" || not_ok "nf -r: rc $rc" "$out" "$err"

# --cache= a file that is no cache (notes, a page): never written over, and
# --cache-clear never removes it
printf 'my notes\n' > notes.txt; printf '<html>\n' > page.html
rm -rf pr; mkdir -p pr/m pr/i; echo a > pr/m/a; echo a > pr/i/a
run "$DUPSCAN" -r --cache=notes.txt pr
[ "$rc" = 1 ] && [ "$(cat notes.txt)" = "my notes" ] && [ ! -e notes.txt.lock ] && [ "$out" = "$(printf 'pr/i/a\npr/m/a')" ] &&
  expect_err "--cache= a text file: left as it is, said, the sets still given" "^dupscan: cache notes.txt: Not a dupscan hash cache: left as it is" ||
  not_ok "--cache= notes: rc $rc" "$(cat notes.txt)" "$err"
run "$DUPSCAN" --cache-clear --cache=page.html
[ "$rc" = 1 ] && [ "$(cat page.html)" = "<html>" ] && ok "--cache-clear of a page: refused, the page kept" || not_ok "--cache-clear page: rc $rc" "$err"
run "$DUPSCAN" -rq --cache=real.cache pr
run "$DUPSCAN" --cache-clear --cache=real.cache
[ "$rc" = 0 ] && [ ! -e real.cache ] && ok "--cache-clear of a cache: removed" || not_ok "--cache-clear of a cache: rc $rc" "$err"

# a pattern that matches nothing in the whole run is named, with the rule
rm -rf pat; mkdir -p pat/library pat/renamed; echo a > pat/library/a; echo a > pat/renamed/a; echo b > pat/b; echo b > pat/library/b
run "$DUPSCAN" -r --exclude='pat/library/' pat
[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" = 4 ] &&
  expect_err "--exclude matching nothing: named, with the rule" "^dupscan: warning: --exclude 'pat/library/' matched nothing in this run \(a pattern is matched against the path below each argument" ||
  not_ok "--exclude matching nothing: rc $rc" "$out" "$err"
run "$DUPSCAN" -r --exclude='library/' --include='nothing*' pat
expect_err "--include matching nothing: named" "^dupscan: warning: --include 'nothing\*' matched nothing"
printf '%s' "$err" | grep -q "exclude 'library/'" && not_ok "--exclude that matched: not named" "$err" || ok "--exclude that matched: not named"
run "$DUPSCAN" -rdN --keep='path=renamed/*' --dry-run pat/renamed pat/library
expect_err "--keep path=GLOB matching no file of any set: named" "^dupscan: warning: --keep 'path=renamed/\*' matched no file of any set \(a pattern"
# with an action, such a pattern is refused before the first change: the
# keep rule that matches nothing would delete the copies it was to keep
before=$(state pat)
run "$DUPSCAN" -rdN --keep='path=renamed/*' pat/renamed pat/library
[ "$rc" = 2 ] && [ "$(state pat)" = "$before" ] &&
  expect_err "-dN with a --keep pattern that matches nothing: refused, nothing deleted" "^dupscan: nothing was changed: a pattern that matches nothing" ||
  not_ok "-dN --keep matching nothing: rc $rc" "$out" "$err"
run "$DUPSCAN" -rL --exclude='pat/library/' pat
[ "$rc" = 2 ] && [ "$(state pat)" = "$before" ] && ok "-L with an --exclude that matches nothing: refused, nothing linked" ||
  not_ok "-L --exclude matching nothing: rc $rc" "$err"
run "$DUPSCAN" -rdN --keep='path=a' --dry-run pat/renamed pat/library
[ "$rc" = 0 ] && ! printf '%s' "$err" | grep -q "keep 'path" && ok "--keep that matched: not named" || not_ok "--keep that matched" "$err"

# --help names every exit status the man page does
run "$DUPSCAN" --help
for st in 0 1 2 3 255; do
  printf '%s\n' "$out" | sed -n '/^Exit status:/,$p' | grep -qE "(^|[ ,:])$st [a-z]" && ok "--help names exit status $st" || not_ok "--help lacks exit status $st" "$(printf '%s\n' "$out" | tail -4)"
done

# an optional value given after a space: the "path" is not there, so it was the value
run "$DUPSCAN" -r --overlap 90 pat
[ "$rc" = 2 ] && [ -z "$out" ] && expect_err "--overlap 90: status 2, the value's spelling named" "^dupscan: --overlap 90: a value of --overlap is given after '=' \(--overlap=90\)" ||
  not_ok "--overlap 90: rc $rc" "$err"
run "$DUPSCAN" -r --cache hashes pat
[ "$rc" = 2 ] && [ ! -e hashes ] && ok "--cache FILE (no '='): status 2" || not_ok "--cache FILE: rc $rc" "$err"
run "$DUPSCAN" -r --overlap pat
[ "$rc" = 0 ] && ok "--overlap before a path that is there: the path" || not_ok "--overlap PATH: rc $rc" "$err"

# -dN: a protected file is marked as such, kept or not
rm -rf pr; mkdir -p pr/m pr/i; echo a > pr/m/a; echo a > pr/i/a
run "$DUPSCAN" -rdN --protect=pr/m --dry-run pr
[ "$out" = "$(printf '\n   [-] pr/i/a\n   [+] pr/m/a -- protected')" ] && ok "-dN: the protected kept file marked" || not_ok "-dN protected" "$out"

# the progress line: no rate before there is one, the phase's end once
rm -rf pg; mkdir pg; for i in $(seq 30); do head -c 50000 /dev/urandom > pg/f$i; cp pg/f$i pg/g$i; done
run "$DUPSCAN" -r --progress pg
[ -n "$err" ] || not_ok "progress: no line at all"
printf '%s\n' "$err" | grep -q ' 0 bytes/s' && not_ok "progress: '0 bytes/s'" "$err" || ok "progress: never '0 bytes/s'"
[ -z "$(printf '%s\n' "$err" | grep . | uniq -d)" ] && ok "progress: no line twice in a row" || not_ok "progress: a line twice" "$err"
printf '%s\n' "$err" | tail -1 | grep -qE '^Progress \[60/60\] 100%, .* done in [0-9.]+ s \(' && ok "progress: the end says done" || not_ok "progress end" "$err"

# --undo of --move-to takes away the folders the move made (empty again),
# and leaves one that holds something else since
rm -rf mv dupes; mkdir -p mv/x/y; echo 1 > mv/a; echo 1 > mv/x/y/b; echo 2 > mv/c; echo 2 > mv/x/d; before=$(state mv)
run "$DUPSCAN" -rq --move-to=dupes/deep --journal=mv.journal mv
[ "$rc" = 0 ] && [ -f dupes/deep/x/y/b ] && [ -f dupes/deep/x/d ] && ok "--move-to made its folders" || not_ok "--move-to: rc $rc" "$err"
run "$DUPSCAN" --undo=mv.journal
[ "$rc" = 0 ] && [ ! -e dupes ] && [ "$(state mv)" = "$before" ] && ok "--undo of --move-to: the files back, the folders it made gone" ||
  not_ok "--undo of --move-to: rc $rc" "$out" "$err" "$(find dupes 2>&1)"
run "$DUPSCAN" -rq --move-to=dupes/deep --journal=mv2.journal mv
echo other > dupes/deep/x/mine
run "$DUPSCAN" --undo=mv2.journal
[ "$rc" = 0 ] && [ "$(cat dupes/deep/x/mine)" = other ] && [ ! -e dupes/deep/x/y ] && [ "$(state mv)" = "$before" ] &&
  ok "--undo of --move-to: a folder holding a file since stays" || not_ok "--undo keeps a used folder: rc $rc" "$err" "$(find dupes)"

# the uninstalled pkg-config file: README's example builds against the build
# tree with the public header only, and runs without LD_LIBRARY_PATH
pcdir=$(dirname "${DUPSCAN_LIB:-/nonexistent}")
if [ -f "$pcdir/libdupscan-uninstalled.pc" ] && command -v pkg-config >/dev/null && command -v cc >/dev/null &&
   [ -z "${DUPSCAN_SANITIZE:-}" -o "${DUPSCAN_SANITIZE:-}" = none ]; then
  sed -n '/^```c$/,/^```$/p' "$SOURCE_ROOT/README.md" | sed '1d;$d' > example.c
  flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs libdupscan)
  case "$flags" in *src/lib/..*|*"-I$SOURCE_ROOT/src"*) not_ok "the uninstalled .pc names the library's own folders" "$flags" ;;
    *) ok "the uninstalled .pc gives the public headers only" ;; esac
  # (a build for another C library or machine than cc's, musl's or i386's,
  # is not what a C user of this machine links)
  interp() { readelf -l "$1" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p'; }
  printf 'int main(void) { return 0; }\n' > native.c && cc native.c -o native
  if [ "$(interp native)" != "$(interp "$DUPSCAN")" ]; then
    ok "# SKIP this build is for another C library or machine than cc's"
  # shellcheck disable=SC2086
  elif ! cc example.c $flags -o example 2> cc.err; then
    not_ok "README's example does not build against the build tree" "$(cat cc.err)"
  else
    run env -u LD_LIBRARY_PATH ./example pr
    [ "$rc" = 0 ] && [ "$out" = "$(printf 'pr/i/a\npr/m/a')" ] && ok "README's example, built against the build tree, runs" || not_ok "README example: rc $rc" "$out" "$err"
  fi
else
  ok "# SKIP no uninstalled pkg-config file, pkg-config or cc here (or a sanitizer build)"
fi

done_testing

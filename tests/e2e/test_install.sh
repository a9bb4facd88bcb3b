#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A packager's view: configure with --prefix=/usr and -Ddefault_library=both,
# install into a DESTDIR, then build a consumer with pkg-config only (shared and
# static), run it, and check what was installed.
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?}
command -v pkg-config >/dev/null || { ok "# SKIP pkg-config missing"; done_testing; }
# it builds and installs the tree its own way, whatever this build is: once is enough (scripts/test)
[ -n "${INSTALL_TESTED:-}" ] && { ok "# SKIP the install was tested in an earlier build of this run"; done_testing; }
# a musl build (scripts/test) is tested as a program; a packager's build here is glibc's (cc, ldd)
readelf -l "$DUPSCAN" 2>/dev/null | grep -q 'ld-musl' && { ok "# SKIP a musl build: the packager's test builds with the system's glibc toolchain"; done_testing; }

if ! meson setup b "$SRC" --prefix=/usr -Ddefault_library=both -Dtests=disabled --buildtype=release >setup.log 2>&1 \
   || ! ninja -C b >build.log 2>&1 || ! DESTDIR="$T/root" meson install -C b --quiet >install.log 2>&1; then
  not_ok "configure, build and install into a DESTDIR" "$(tail -n 20 setup.log build.log install.log)"
  done_testing
fi
ok "configure, build and install into a DESTDIR"
libdir=$(cd root/usr && ls -d lib/*/pkgconfig lib/pkgconfig 2>/dev/null | head -1); libdir=${libdir%/pkgconfig}
v=$(grep -oE "version: '[0-9.]+'" "$SRC/meson.build" | head -1 | grep -oE '[0-9.]+')
for f in "bin/dupscan" "include/dupscan.h" "include/dupscan_version.h" "$libdir/libdupscan.so.$v" \
         "$libdir/libdupscan.a" "$libdir/pkgconfig/libdupscan.pc" "share/man/man1/dupscan.1" "share/man/man3/libdupscan.3"; do
  [ -e "root/usr/$f" ] && ok "installed $f" || not_ok "installed $f" "$(cd root && find . | head -40)"
done
[ "$(readlink "root/usr/$libdir/libdupscan.so")" = libdupscan.so.0 ] && ok "dev symlink -> soname" || not_ok "dev symlink" "$(ls -l root/usr/$libdir)"
soname=$(objdump -p "root/usr/$libdir/libdupscan.so.$v" | awk '/SONAME/ {print $2}')
[ "$soname" = libdupscan.so.0 ] && ok "soname libdupscan.so.0" || not_ok "soname" "$soname"
comp=$(find root -path '*bash-completion*' -name dupscan | head -1)
[ -n "$comp" ] && ok "bash completion installed (${comp#root})" || not_ok "bash completion" "$(cd root && find . -name '*dupscan*')"
[ -f root/usr/share/zsh/site-functions/_dupscan ] && ok "zsh completion installed (/usr/share/zsh/site-functions/_dupscan)" ||
  not_ok "zsh completion" "$(cd root && find . -name '*dupscan*')"
comp=$(find root -path '*fish*' -name dupscan.fish | head -1)
[ -n "$comp" ] && ok "fish completion installed (${comp#root})" || not_ok "fish completion" "$(cd root && find . -name '*dupscan*')"
grep -q '^Requires.private:.*libxxhash' "root/usr/$libdir/pkgconfig/libdupscan.pc" && ok "libxxhash is a private requirement" || not_ok ".pc" "$(cat root/usr/$libdir/pkgconfig/libdupscan.pc)"
grep -q "^Version: $v\$" "root/usr/$libdir/pkgconfig/libdupscan.pc" && ok ".pc version $v" || not_ok ".pc version"
grep -q "DUPSCAN_VERSION_STRING \"$v\"" root/usr/include/dupscan_version.h && ok "header version $v" || not_ok "header version"
grep -q "dupscan $v" root/usr/share/man/man1/dupscan.1 && grep -q "libdupscan $v" root/usr/share/man/man3/libdupscan.3 && ok "man pages carry $v" || not_ok "man version"
for page in root/usr/share/man/man1/dupscan.1 root/usr/share/man/man3/libdupscan.3 root/usr/share/man/man3/dupscan_set_option.3; do
  w=$(groff -ww -z -man "$page" 2>&1)
  [ -z "$w" ] && ok "groff -ww: no warning in ${page##*/}" || not_ok "groff warnings in ${page##*/}" "$w"
done
# man 3 FUNCTION for every public function: the link pages resolve as installed
funcs=$(grep -oE 'DUPSCAN_API [^(]*\(' "$SRC/include/dupscan.h" | grep -oE 'dupscan_[a-z0-9_]+ *\($' | tr -d ' (')
missing=$(for f in $funcs; do [ -e "root/usr/share/man/man3/$f.3" ] || echo "$f"; done)
[ -z "$missing" ] && ok "a man 3 page installed for each public function" || not_ok "man 3 pages missing" "$missing"
if command -v man >/dev/null; then
  bad=$(for f in dupscan_run dupscan_set_option dupscan_file_path; do
    MANPAGER=cat man -M "$T/root/usr/share/man" 3 "$f" 2>/dev/null | grep -q "dupscan_run(dupscan_scan \*scan)\|DUPSCAN_OPT_MAX_DEPTH" || echo "$f"; done)
  [ -z "$bad" ] && ok "man -M DESTDIR 3 dupscan_run (and others) shows the page that describes it" || not_ok "man 3 pages do not resolve" "$bad"
fi

# the consumer, with pkg-config and nothing else
export PKG_CONFIG_SYSROOT_DIR="$T/root" PKG_CONFIG_PATH="$T/root/usr/$libdir/pkgconfig"
mkdir -p tree/a tree/b; printf same > tree/a/x; printf same > tree/b/y; printf other > tree/a/z
# shellcheck disable=SC2046
if cc -o consumer "$SRC/tests/consumer.c" $(pkg-config --cflags --libs libdupscan) 2>cc.log; then
  run env LD_LIBRARY_PATH="$T/root/usr/$libdir" ./consumer tree
  [ "$out" = "$(printf 'libdupscan %s (header %s)\ntree/a/x\ntree/b/y' "$v" "$v")" ] && ok "shared consumer prints the set" || not_ok "shared consumer" "$out" "$err"
  env LD_LIBRARY_PATH="$T/root/usr/$libdir" ldd consumer | grep -q "root/usr/$libdir/libdupscan.so.0" && ok "shared consumer uses the installed library" || not_ok "consumer's library" "$(env LD_LIBRARY_PATH="$T/root/usr/$libdir" ldd consumer)"
else
  not_ok "shared consumer builds with pkg-config only" "$(cat cc.log)"
fi
# shellcheck disable=SC2046
if cc -static-libgcc -o consumer-static "$SRC/tests/consumer.c" $(pkg-config --cflags libdupscan) \
     "$T/root/usr/$libdir/libdupscan.a" $(pkg-config --libs --static libxxhash) $(pkg-config --static --libs-only-other libdupscan) -pthread 2>cc.log; then
  run ./consumer-static tree
  [ "$out" = "$(printf 'libdupscan %s (header %s)\ntree/a/x\ntree/b/y' "$v" "$v")" ] && ok "static consumer prints the set" || not_ok "static consumer" "$out" "$err"
  ldd consumer-static | grep -q libdupscan && not_ok "static consumer needs no libdupscan.so" || ok "static consumer needs no libdupscan.so"
else
  not_ok "static consumer builds" "$(cat cc.log)"
fi
# scripts/dupscan, README's way to try it from a clone: the first run builds
# (its output hidden) and says so on stderr; a later run says nothing more
mkdir clone && (cd "$SRC" && tar --exclude='./build*' --exclude='./.git' -cf - .) | (cd clone && tar -xf -)
run clone/scripts/dupscan -v
[ "$rc" = 0 ] && [ "$err" = "building dupscan (first run)..." ] && grep -q "^dupscan $v " <<< "$out" &&
  ok "scripts/dupscan, first run: says it builds, then answers" || not_ok "scripts/dupscan first run" "$rc" "$out" "$err"
run clone/scripts/dupscan -v
[ "$rc" = 0 ] && [ -z "$err" ] && ok "scripts/dupscan, later runs: no message" || not_ok "scripts/dupscan later run" "$rc" "$err"
# whatever library the caller's LD_LIBRARY_PATH names (a sanitizer build's
# would not load into this binary), scripts/dupscan runs with its own
mkdir badlib && echo "not a library" > badlib/libdupscan.so.0
run env LD_LIBRARY_PATH="$PWD/badlib" clone/scripts/dupscan -v
[ "$rc" = 0 ] && grep -q "^dupscan $v " <<< "$out" &&
  ok "scripts/dupscan runs its own library whatever LD_LIBRARY_PATH holds" ||
  not_ok "scripts/dupscan with LD_LIBRARY_PATH set" "$rc" "$out" "$err"
done_testing

# SPDX-License-Identifier: MIT
# Sourced by scripts/test and scripts/dupscan: install missing Debian packages
# (as root: apt-get update once, then apt-get install -y) or say which are missing.
# missing_packages PACKAGE...: the ones not installed, space-separated (nothing when none)
missing_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || echo "${missing[*]}"
}
ensure_packages() {
  local missing=()
  read -r -a missing <<< "$(missing_packages "$@")"
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing with apt-get (missing): ${missing[*]}" >&2
    # a mirror caught mid-sync fails one list; what was fetched may be enough
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  else
    echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    return 1
  fi
}
BUILD_PACKAGES=(gcc meson ninja-build pkg-config libxxhash-dev)
TEST_PACKAGES=(check python3 mandoc abigail-tools jdupes bsdutils util-linux btrfs-progs xfsprogs e2fsprogs valgrind g++ clang libclang-rt-14-dev strace zsh fish openssh-client openssh-server fuse3 libfuse3-dev sshfs
  libimage-exiftool-perl flac python3-mutagen lame webp libjpeg-turbo-progs libheif-examples)
# the browser the HTML report is checked in (scripts/test installs it in the
# background, after the others: its 100 MB would wait on nothing else)
BROWSER_PACKAGES=(chromium)

# The i386 toolchain for the 32-bit test build: gcc -m32 and the i386 builds of
# the libraries. Installed (as root) when missing; @return 1 when it cannot be,
# e.g. no root or the i386 package lists cannot be fetched.
I386_PACKAGES=(gcc-multilib libxxhash-dev:i386 check:i386 libsubunit-dev:i386)
ensure_i386() {
  local missing=() p
  for p in "${I386_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || return 1
  echo "installing: ${missing[*]}" >&2
  dpkg --add-architecture i386 || return 1
  # a mirror caught mid-sync fails one list; what was fetched may be enough
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
}

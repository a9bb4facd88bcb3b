# SPDX-License-Identifier: MIT
# Sourced by scripts/test and scripts/dupscan: install missing Debian packages
# (as root: apt-get update once, then apt-get install -y) or say which are missing.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing: ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  else
    echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    return 1
  fi
}
BUILD_PACKAGES=(gcc meson ninja-build pkg-config libxxhash-dev)
TEST_PACKAGES=(check python3 mandoc abigail-tools jdupes bsdutils util-linux btrfs-progs e2fsprogs valgrind g++ clang libclang-rt-14-dev)

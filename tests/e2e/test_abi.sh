#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library exports exactly the public API: every DUPSCAN_API function of
# dupscan.h, every name of the version script, and nothing else; and the header
# compiles alone as strict C99 and as C++.
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?}; LIB=${DUPSCAN_LIB:?}

exported=$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^DUPSCAN_' | sed 's/@.*//' | sort)
mapped=$(grep -oE 'dupscan_[a-z0-9_]+' "$SRC/src/lib/libdupscan.map" | sort)
declared=$(grep -oE 'DUPSCAN_API [^(]*\(' "$SRC/include/dupscan.h" | grep -oE 'dupscan_[a-z0-9_]+ *\($' | tr -d ' (' | sort)
[ -n "$exported" ] && ok "library exports $(echo "$exported" | wc -l) symbols" || not_ok "no exports"
[ "$exported" = "$mapped" ] && ok "exports = version script" || not_ok "exports differ from the version script" "$(diff <(echo "$mapped") <(echo "$exported"))"
[ "$exported" = "$declared" ] && ok "exports = DUPSCAN_API declarations of dupscan.h" || not_ok "exports differ from the header" "$(diff <(echo "$declared") <(echo "$exported"))"
# each symbol carries the version node it was added in, and nothing moves between nodes
node_of() { awk -v s="$1" '/^DUPSCAN_[0-9.]+ *\{/ {n=$1} $1 == s";" {print n}' "$SRC/src/lib/libdupscan.map"; }
wrong=0
for sym in $(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^DUPSCAN_'); do
  [ "${sym#*@@}" = "$(node_of "${sym%@@*}")" ] || { wrong=$((wrong + 1)); echo "# $sym"; }
done
[ "$wrong" = 0 ] && ok "every export carries the version node of the script that added it" || not_ok "misversioned exports" "$wrong"

printf '#include <dupscan.h>\nint main(void) { return dupscan_strerror(0) == 0; }\n' > h.c
cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$SRC/include" -I"$(dirname "$DUPSCAN_VERSION_H")" -c h.c -o h.o 2>err.log \
  && ok "dupscan.h alone: -std=c99 -pedantic -Wall -Werror" || not_ok "C99 compile" "$(cat err.log)"
if command -v c++ >/dev/null; then
  cp h.c h.cc
  c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$SRC/include" -I"$(dirname "$DUPSCAN_VERSION_H")" -c h.cc -o hxx.o 2>err.log \
    && ok "dupscan.h from C++" || not_ok "C++ compile" "$(cat err.log)"
  nm hxx.o | grep -q ' U dupscan_strerror$' && ok "C++ sees unmangled names (extern \"C\")" || not_ok "C++ mangled" "$(nm hxx.o)"
else
  ok "# SKIP no C++ compiler"
fi

# against the last release's ABI (abidw of 0.2.0, public types only): nothing
# removed or changed incompatibly; additions are fine. abidiff's status has bit
# 8 for an incompatible change, 1 and 2 for its own errors.
base="$SRC/tests/abi/libdupscan-0.2.0.abi"
base_arch=$(grep -o "architecture='[^']*'" "$base" | head -n 1)
lib_arch=$(command -v abidw >/dev/null && abidw "$LIB" 2>/dev/null | grep -o "architecture='[^']*'" | head -n 1)
if ! command -v abidiff >/dev/null; then
  ok "# SKIP abidiff not installed (abigail-tools)"
elif [ "$base_arch" != "$lib_arch" ]; then
  # type sizes differ between architectures: the baseline speaks for its own
  ok "# SKIP the 0.2.0 baseline is $base_arch, this library $lib_arch"
else
  run abidiff --headers-dir2 "$SRC/include" "$base" "$LIB"
  [ $((rc & 11)) = 0 ] && ok "ABI: compatible with 0.2.0 (abidiff status $rc)" || not_ok "ABI against 0.2.0: status $rc" "$out" "$err"
  # the check can fail: seen the other way round, 0.2.0 lacks a function this
  # library has, which is a removal
  run abidiff --headers-dir1 "$SRC/include" "$LIB" "$base"
  [ $((rc & 8)) = 8 ] && ok "ABI check: a removed function is caught" || not_ok "ABI control: status $rc" "$out"
fi
done_testing

#!/usr/bin/env bash
# Builds libnvmf4j_spdk (src/main/c) against SPDK into the jar's META-INF/native; run by Maven.
#
#   build-native.sh <output dir> <library file name> <java.home>
#
# SPDK comes from spdk-build.sh (SPDK_DIR, or the vendored tarball built once into the cache). Without
# either, the library is not built: META-INF/native/nvmf4j_spdk.unavailable says why (the spdk engine
# reports that line) and the rest of the tree builds as usual. On x86-64 the aarch64 library is linked too,
# against the aarch64 SPDK that spdk-build.sh --arch aarch64 cross-built before (./dev.sh setup builds it;
# Maven never starts that build): without it nvmf4j_spdk_aarch64.unavailable says why, or with
# NVMF4J_CROSS=require the build fails. target/spdk-dir records the SPDK tree used, for the tests that run
# SPDK's own host tools.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1 lib=$2 jhome=$3
mkdir -p "$out"
rm -f "$out/$lib" "$out/${lib/_x86_64.so/_aarch64.so}" "$out"/nvmf4j_spdk*.unavailable "$here/target/spdk-dir"

set +e
spdk=$("$here/spdk-build.sh" 2>"$here/target/spdk-build.err")
rc=$?
set -e
cat "$here/target/spdk-build.err" >&2
if [ "$rc" = 3 ]; then
  reason=$(tail -1 "$here/target/spdk-build.err")
  echo "build-native: libnvmf4j_spdk not built: $reason" >&2
  printf '%s\n' "$reason" > "$out/nvmf4j_spdk.unavailable"
  exit 0
elif [ "$rc" != 0 ]; then
  exit "$rc"
fi
echo "$spdk" > "$here/target/spdk-dir"

# link_spdk <compiler> <SPDK tree> <library> [compiler flags...]: src/main/c against that SPDK's libraries
link_spdk() {
  local cc=$1 tree=$2 so=$3
  shift 3
  local spdk_libs dpdk_libs sys_libs whole
  export PKG_CONFIG_PATH=$tree/build/lib/pkgconfig
  # every SPDK library the engine needs, whole (their constructors register subsystems, bdev modules,
  # transports and socket implementations), then DPDK's, then the system libraries
  spdk_libs=$(pkg-config --libs spdk_event_nvmf spdk_event_bdev spdk_event_accel spdk_event_iobuf \
    spdk_event_sock spdk_event_keyring spdk_bdev_malloc spdk_bdev_null spdk_bdev_aio spdk_bdev_lvol spdk_sock_posix \
    spdk_accel_modules spdk_keyring_modules spdk_event)
  dpdk_libs=$(pkg-config --libs spdk_env_dpdk)
  sys_libs=$(pkg-config --libs --static spdk_syslibs)
  # pkg-config repeats a library once per dependent; a whole archive may appear only once
  whole=$(printf '%s\n' $spdk_libs $dpdk_libs | awk '!seen[$0]++' | tr '\n' ' ')
  # shellcheck disable=SC2086 # the pkg-config outputs are lists of flags
  $cc -shared -fPIC -O2 -g -Wall -Werror -std=gnu11 -fno-strict-aliasing -Wno-format-truncation \
    -Wl,-soname,"$(basename "$so")" -Wl,-Bsymbolic -Wl,--exclude-libs,ALL \
    -I"$jhome/include" -I"$jhome/include/linux" -I"$here/../native/src/main/c" \
    -I"$tree/include" -I"$tree/lib" -I"$tree/module/bdev/malloc" -I"$tree/module/bdev/null" \
    -I"$tree/module/bdev/aio" -I"$tree/module/bdev/lvol" "$@" \
    "$here"/src/main/c/*.c -o "$so" \
    -Wl,-Bstatic -Wl,--whole-archive $whole -Wl,--no-whole-archive -Wl,-Bdynamic $sys_libs -Wl,-z,defs
  echo "build-native: built $(basename "$so") against $tree ($(du -h "$so" | cut -f1))" >&2
}

# The aarch64 twin on an x86-64 machine: the cross compiler, the arm64 sysroot's headers and libraries, the
# aarch64 SPDK if it was built; else nvmf4j_spdk_aarch64.unavailable says why (SpdkNative reads it before
# trying to load), and NVMF4J_CROSS=require fails the build
link_aarch64() {
  local twin=${lib/_x86_64.so/_aarch64.so} tree sysroot reason=
  if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
    reason="aarch64-linux-gnu-gcc missing"
  elif ! sysroot=$("$here/../native/aarch64.sh" path 2>&1); then
    reason=$sysroot
  elif ! tree=$("$here/spdk-build.sh" --arch aarch64 --cached 2>"$here/target/spdk-build-aarch64.err"); then
    reason=$(tail -1 "$here/target/spdk-build-aarch64.err")
    reason=${reason#spdk-build: }
  fi
  if [ -n "$reason" ]; then
    [ "${NVMF4J_CROSS:-}" = require ] && { echo "build-native: $twin not built: $reason" >&2; exit 1; }
    echo "build-native: WARNING: $twin not built: $reason" >&2
    echo "SPDK and DPDK are not cross-built for aarch64 on the $(uname -m) machine this build came from: $reason" \
      > "$out/nvmf4j_spdk_aarch64.unavailable"
    return 0
  fi
  local libdir=$sysroot/usr/lib/aarch64-linux-gnu
  PKG_CONFIG_LIBDIR=$libdir/pkgconfig link_spdk aarch64-linux-gnu-gcc "$tree" "$out/$twin" \
    -I"$sysroot/usr/include" -L"$libdir" -L"$sysroot/lib/aarch64-linux-gnu" \
    -Wl,-rpath-link,"$libdir:$sysroot/lib/aarch64-linux-gnu"
}

link_spdk "${CC:-gcc}" "$spdk" "$out/$lib"
case "$lib" in
  *_x86_64.so) link_aarch64 ;;
esac

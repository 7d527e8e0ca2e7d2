#!/usr/bin/env bash
# Builds libnvmf4j_spdk (src/main/c) against SPDK into the jar's META-INF/native; run by Maven.
#
#   build-native.sh <output dir> <library file name> <java.home>
#
# SPDK comes from spdk-build.sh (SPDK_DIR, or the vendored tarball built once into the cache). Without
# either, the library is not built: META-INF/native/nvmf4j_spdk.unavailable says why (the spdk engine
# reports that line) and the rest of the tree builds as usual. The aarch64 library is never built here
# (SPDK is not cross-built): nvmf4j_spdk_aarch64.unavailable says so. target/spdk-dir records the SPDK tree used,
# for the tests that run SPDK's own host tools.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1 lib=$2 jhome=$3
mkdir -p "$out"
rm -f "$out/$lib" "$out"/nvmf4j_spdk*.unavailable "$here/target/spdk-dir"

# SPDK is not cross-built: an x86-64 build carries no aarch64 library, and says so for the aarch64
# package's spdk engine (SpdkNative reads nvmf4j_spdk_<arch>.unavailable before trying to load)
case "$lib" in
  *_aarch64.so) ;;
  *) echo "SPDK and DPDK are not cross-built for aarch64; this build came from an $(uname -m) machine (build on an aarch64 machine with SPDK for the spdk engine there)" \
       > "$out/nvmf4j_spdk_aarch64.unavailable" ;;
esac

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

export PKG_CONFIG_PATH=$spdk/build/lib/pkgconfig
# every SPDK library the engine needs, whole (their constructors register subsystems, bdev modules,
# transports and socket implementations), then DPDK's, then the system libraries
spdk_libs=$(pkg-config --libs spdk_event_nvmf spdk_event_bdev spdk_event_accel spdk_event_iobuf \
  spdk_event_sock spdk_event_keyring spdk_bdev_malloc spdk_bdev_null spdk_bdev_aio spdk_bdev_lvol spdk_sock_posix \
  spdk_accel_modules spdk_keyring_modules spdk_event)
dpdk_libs=$(pkg-config --libs spdk_env_dpdk)
sys_libs=$(pkg-config --libs --static spdk_syslibs)
# pkg-config repeats a library once per dependent; a whole archive may appear only once
whole=$(printf '%s\n' $spdk_libs $dpdk_libs | awk '!seen[$0]++' | tr '\n' ' ')

${CC:-gcc} -shared -fPIC -O2 -g -Wall -Werror -std=gnu11 -fno-strict-aliasing -Wno-format-truncation \
  -Wl,-soname,"$lib" -Wl,-Bsymbolic -Wl,--exclude-libs,ALL \
  -I"$jhome/include" -I"$jhome/include/linux" -I"$here/../native/src/main/c" \
  -I"$spdk/include" -I"$spdk/lib" -I"$spdk/module/bdev/malloc" -I"$spdk/module/bdev/null" \
  -I"$spdk/module/bdev/aio" -I"$spdk/module/bdev/lvol" \
  "$here"/src/main/c/*.c -o "$out/$lib" \
  -Wl,-Bstatic -Wl,--whole-archive $whole -Wl,--no-whole-archive -Wl,-Bdynamic $sys_libs -Wl,-z,defs
echo "build-native: built $lib against $spdk ($(du -h "$out/$lib" | cut -f1))" >&2

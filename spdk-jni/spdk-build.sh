#!/usr/bin/env bash
# Prints the directory of an SPDK build for the spdk engine, building one when needed.
#
#   SPDK_DIR=<tree>   an existing SPDK build (as on a DPU image): checked and used as it is
#   otherwise         the vendored tarball ($SPDK_TARBALL, or shared/vendor/spdk/spdk-*.tar.xz in the
#                     checkout's parent directory or one above it) is unpacked and
#                     built once into $NVMF4J_CACHE (default ~/.cache/nvmf4j), in a directory named
#                     after the tarball's checksum, so a machine builds each SPDK version once
#
# spdk-patches/*.patch are applied to the vendored source (fixes found by our tests; each says why).
# Exit 0 with the tree on stdout; exit 3 with one line on stderr saying why there is none (no
# tarball and no SPDK_DIR): the caller builds everything else and the engine reports that line.
# --install-packages: apt-get the packages SPDK's build needs (as root) before building.
#
# --arch aarch64 (on an x86-64 machine): the same source cross-built for aarch64 into
# $NVMF4J_CACHE/aarch64-spdk-<key> (SPDK_AARCH64_DIR: an existing aarch64 build instead). DPDK is built first
# with meson and our cross file (generic Armv8-A with CRC, the code DPDK's "generic" platform emits: it runs
# on QEMU's -cpu max and on BlueField-2/3's Cortex-A72/A78), then SPDK against it with Debian's
# aarch64-linux-gnu toolchain and the arm64 sysroot of native/aarch64.sh (its -dev packages). Exit 3 when the
# cross compiler or the sysroot is missing (--install-packages installs the one and prepares the other).
#
# Of SPDK only what the project uses is built (make_spdk): its libraries and modules, which libnvmf4j_spdk
# links, and the tools of host_tools (x86-64: what the tests, e2e and fio-jobs run) or aarch64_tools; none of
# SPDK's other apps, examples and tests.
# --cached: print a build that exists (exit 3 when there is none), never start one.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
install=0 arch=$(uname -m) cached=0
while [ $# -gt 0 ]; do
  case "$1" in
    --install-packages) install=1 ;;
    --cached) cached=1 ;;
    --arch) arch=${2:?--arch needs x86_64 or aarch64}; shift ;;
    *) echo "spdk-build: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
cross=0
[ "$arch" = "$(uname -m)" ] || cross=1
if [ "$cross" = 1 ] && { [ "$arch" != aarch64 ] || [ "$(uname -m)" != x86_64 ]; }; then
  echo "spdk-build: no cross build of SPDK for $arch on $(uname -m) (aarch64 on x86_64 only)" >&2
  exit 3
fi
# the directory an existing build is named by (SPDK_DIR, SPDK_AARCH64_DIR) and the cache's prefix
dir_var=SPDK_DIR prefix=spdk
[ "$cross" = 1 ] && dir_var=SPDK_AARCH64_DIR prefix=aarch64-spdk

# SPDK's tools built besides its libraries, as <directory to make>:<the program it builds>. x86-64: those the
# tests, e2e and fio-jobs run on the host; aarch64: those the Arm guest may run (spdk_nvme_perf, bdevperf)
host_tools=(app/spdk_nvme_identify:build/bin/spdk_nvme_identify app/spdk_nvme_perf:build/bin/spdk_nvme_perf
  app/nvmf_tgt:build/bin/nvmf_tgt examples/bdev/bdevperf:build/examples/bdevperf
  test/app/fuzz/nvme_fuzz:test/app/fuzz/nvme_fuzz/nvme_fuzz)
aarch64_tools=(app/spdk_nvme_perf:build/bin/spdk_nvme_perf examples/bdev/bdevperf:build/examples/bdevperf)
if [ "$cross" = 1 ]; then tools=("${aarch64_tools[@]}"); else tools=("${host_tools[@]}"); fi

# check_tree DIR [built]: the libraries the spdk engine links; with "built" (a tree this script built) also
# the tools it builds. An SPDK_DIR (as on a DPU image) needs the libraries only.
check_tree() {
  local d=$1 missing=() f t
  local need=(build/lib/libspdk_nvmf.a build/lib/libspdk_event.a build/lib/libspdk_bdev_malloc.a
    build/lib/libspdk_bdev_null.a build/lib/libspdk_bdev_aio.a include/spdk/nvmf.h)
  if [ "${2:-}" = built ]; then
    for t in "${tools[@]}"; do need+=("${t#*:}"); done
  fi
  for f in "${need[@]}"; do
    [ -e "$d/$f" ] || missing+=("$f")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "spdk-build: $d is not a usable SPDK build (missing ${missing[*]})" >&2
    return 1
  fi
}

if [ -n "${!dir_var:-}" ]; then
  check_tree "${!dir_var}" || exit 3
  echo "${!dir_var}"
  exit 0
fi

tarball=${SPDK_TARBALL:-}
if [ -z "$tarball" ]; then
  # the vendored source sits in shared/vendor/spdk beside the checkout (or beside one of its parents)
  d=$(cd "$here/.." && pwd)
  while [ -z "$tarball" ] && [ "$d" != / ]; do
    d=$(dirname "$d")
    for t in "$d"/shared/vendor/spdk/spdk-*.tar.xz; do
      [ -f "$t" ] && { tarball=$t; break; }
    done
  done
fi
cache=${NVMF4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nvmf4j}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
  # no source here, but this machine may have built one before (another checkout): use the newest
  prev=$(ls -td "$cache"/$prefix-*/.nvmf4j-built 2>/dev/null | head -1 || true)
  if [ -n "$prev" ] && check_tree "$(dirname "$prev")/tree" built 2>/dev/null; then
    echo "spdk-build: no vendored tarball beside this checkout; using the SPDK this machine built before" >&2
    echo "$(dirname "$prev")/tree"
    exit 0
  fi
  echo "spdk-build: no SPDK: $dir_var is unset and no vendored tarball (shared/vendor/spdk/spdk-*.tar.xz beside the checkout or a parent, or SPDK_TARBALL)" >&2
  exit 3
fi

# SPDK's configure options, the same for both architectures (the aarch64 build adds its target below)
options=(--with-rdma --disable-tests --disable-unit-tests --without-crypto --without-vhost --without-virtio
  --without-nvme-cuse --without-ocf --without-xnvme)
# the DPDK libraries and drivers SPDK builds (dpdkbuild/Makefile, for the options above), for the aarch64 build
dpdk_options=(-Denable_docs=false -Dtests=false --default-library=static '-Ddisable_apps=*'
  -Denable_libs=eal,hash,log,mbuf,mempool,pci,ring,argparse,cmdline,ethdev,kvargs,meter,net,rcu,stack,telemetry,power,timer
  -Denable_drivers=bus,bus/pci,bus/vdev,mempool/ring,power/acpi,power/amd_pstate,power/cppc,power/intel_pstate,power/intel_uncore,power/kvm_vm)
# the build's revision: raise it when the way a tree is built changes
revision=2
triplet=aarch64-linux-gnu

# the packages the build needs on the build machine (the aarch64 build's arm64 ones are in the sysroot)
install_packages() {
  local pkgs=(meson nasm autoconf automake libtool pkg-config libnuma-dev libaio-dev python3-pyelftools
        python3-tabulate python3-jinja2 python3-yaml libjson-c-dev libcunit1-dev libncurses-dev
        uuid-dev libssl-dev libkeyutils-dev help2man libibverbs-dev librdmacm-dev make gcc g++ xz-utils patch)
  [ "$cross" = 1 ] && pkgs+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross)
  local need=() p
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if [ "${#need[@]}" -gt 0 ]; then
    echo "spdk-build: installing ${need[*]}" >&2
    local sudo_=()
    [ "$(id -u)" = 0 ] || sudo_=(sudo)
    "${sudo_[@]}" apt-get update -qq >&2
    "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
  fi
}

# the cross build's toolchain and arm64 sysroot; exit 3 naming what is missing
sysroot=
if [ "$cross" = 1 ]; then
  if [ "$install" = 1 ] && [ "$cached" = 0 ]; then
    install_packages
    "$here/../native/aarch64.sh" sysroot >/dev/null || exit 3
  fi
  for tool in $triplet-gcc $triplet-g++; do
    command -v "$tool" >/dev/null || { echo "spdk-build: $tool missing (./dev.sh setup installs it)" >&2; exit 3; }
  done
  sysroot=$("$here/../native/aarch64.sh" path 2>&1) \
    || { echo "spdk-build: $sysroot" >&2; exit 3; }
fi

# The meson cross file for DPDK: Debian's cross toolchain, pkg-config reading the arm64 sysroot's .pc files,
# DPDK's generic Armv8 platform (armv8-a+crc), and no libnuma (one NUMA node on a DPU; DPDK runs without it)
cross_file() {
  cat <<MESON
[binaries]
c = '$triplet-gcc'
cpp = '$triplet-g++'
ar = '$triplet-gcc-ar'
strip = '$triplet-strip'
pkg-config = 'pkg-config'

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'armv8-a'
endian = 'little'

[properties]
platform = 'generic'
numa = false
sys_root = '$sysroot'
pkg_config_libdir = ['$sysroot/usr/lib/$triplet/pkgconfig', '$sysroot/usr/share/pkgconfig']
MESON
}

# the key covers the tarball, the patches applied to it (spdk-patches/*.patch, in name order), the build's
# revision, the options and the tools built; the aarch64 one also DPDK's options and the cross file (the
# sysroot's name in it carries its package list)
patches=$(ls "$here"/spdk-patches/*.patch 2>/dev/null | sort || true)
key_text() {
  printf '%s\n' "$revision" "${options[@]}" "${tools[@]}"
  if [ "$cross" = 1 ]; then
    printf '%s\n' "${dpdk_options[@]}"
    cross_file
  fi
}
sum=$( (cat "$tarball" $patches; key_text) | sha256sum | cut -c1-16)
out=$cache/$prefix-$sum
mkdir -p "$cache"
exec 9>"$cache/$prefix-$sum.lock"
flock 9
if [ -f "$out/.nvmf4j-built" ] && check_tree "$out/tree" built 2>/dev/null; then
  echo "$out/tree"
  exit 0
fi
if [ "$cached" = 1 ]; then
  echo "spdk-build: SPDK for $arch is not built on this machine yet (./dev.sh setup, or spdk-jni/spdk-build.sh --arch $arch, builds it once)" >&2
  exit 3
fi
[ "$install" = 1 ] && [ "$cross" = 0 ] && install_packages

# make_spdk: SPDK's libraries and modules (and the DPDK and ISA-L they link, where the tree builds them), then
# the tools, each in its own directory, under one make (its jobs shared). MAKECMDGOALS=all: SPDK's makefiles
# hand the command line's goals down to every directory's make, which knows only "all".
make_spdk() {
  local t dirs=()
  make -j"$(nproc)" MAKECMDGOALS=all lib module python
  for t in "${tools[@]}"; do dirs+=("${t%%:*}"); done
  {
    echo "all: ${dirs[*]}"
    echo ".PHONY: all ${dirs[*]}"
    echo "${dirs[*]}:"
    printf '\t+$(MAKE) -C $@ MAKECMDGOALS=all\n'
  } | make -j"$(nproc)" -f -
}

# the host build. x86-64-v2: the same binaries run on the host and in the QEMU/TCG guest (no AVX-512 there)
build_host() {
  ./configure "${options[@]}" --target-arch=x86-64-v2
  make_spdk
}

# the aarch64 build: DPDK with meson into $out/dpdk, then SPDK against it, with the
# sysroot's headers and libraries after the cross toolchain's own
build_aarch64() {
  local libdir=$sysroot/usr/lib/$triplet
  cross_file >"$out/aarch64-cross.ini"
  (
    cd dpdk
    meson setup --cross-file "$out/aarch64-cross.ini" --prefix="$out/dpdk" --libdir lib \
      -Dc_args="-fPIC -Wno-error" "${dpdk_options[@]}" build-aarch64
    # as dpdkbuild/Makefile: the drivers are linked in, never loaded from a directory
    sed -i 's/#define RTE_EAL_PMD_PATH .*/#define RTE_EAL_PMD_PATH ""/' build-aarch64/rte_build_config.h
    meson compile -C build-aarch64 -j "$(nproc)"
    meson install -C build-aarch64 --only-changed >/dev/null
  )
  export CC=$triplet-gcc CXX=$triplet-g++ AR=$triplet-ar LD=$triplet-ld
  export CFLAGS="-I$sysroot/usr/include -I$sysroot/usr/include/$triplet"
  # both library directories: linker scripts (libncurses.so: INPUT(libncurses.so.6 -ltinfo)) search -L only
  export LDFLAGS="-L$libdir -L$sysroot/lib/$triplet -Wl,-rpath-link,$libdir:$sysroot/lib/$triplet"
  export PKG_CONFIG_LIBDIR=$libdir/pkgconfig:$sysroot/usr/share/pkgconfig
  ./configure "${options[@]}" --target-arch=armv8-a+crc --cross-prefix=$triplet --with-dpdk="$out/dpdk"
  make_spdk
}

echo "spdk-build: building SPDK for $arch from $(basename "$tarball") into $out (once per machine: ~5 min on 2 cores, more for aarch64)" >&2
rm -rf "$out"
mkdir -p "$out"
tar -C "$out" -xf "$tarball"
src=$(find "$out" -mindepth 1 -maxdepth 1 -type d | head -1)
mv "$src" "$out/tree"
for p in $patches; do
  echo "spdk-build: applying $(basename "$p")" >&2
  patch -s -p1 -d "$out/tree" < "$p"
done
log=$out/build.log
start=$SECONDS
(
  cd "$out/tree"
  # the build's Python scripts need Debian's python3 and its python3-* modules
  export PATH=/usr/bin:$PATH
  if [ "$cross" = 1 ]; then build_aarch64; else build_host; fi
) >"$log" 2>&1 || { echo "spdk-build: the SPDK build failed; the last lines of $log:" >&2; tail -30 "$log" >&2; exit 1; }
check_tree "$out/tree" built
touch "$out/.nvmf4j-built"
echo "spdk-build: SPDK for $arch built in $((SECONDS - start)) s" >&2
echo "$out/tree"

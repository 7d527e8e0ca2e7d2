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
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
install=0
[ "${1:-}" = --install-packages ] && install=1

# the libraries the spdk engine links, and the host tools its tests run
check_tree() {
  local d=$1 missing=()
  for f in build/lib/libspdk_nvmf.a build/lib/libspdk_event.a build/lib/libspdk_bdev_malloc.a \
           build/lib/libspdk_bdev_null.a build/lib/libspdk_bdev_aio.a include/spdk/nvmf.h; do
    [ -e "$d/$f" ] || missing+=("$f")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "spdk-build: $d is not a usable SPDK build (missing ${missing[*]})" >&2
    return 1
  fi
}

if [ -n "${SPDK_DIR:-}" ]; then
  check_tree "$SPDK_DIR" || exit 3
  echo "$SPDK_DIR"
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
  prev=$(ls -td "$cache"/spdk-*/.nvmf4j-built 2>/dev/null | head -1 || true)
  if [ -n "$prev" ] && check_tree "$(dirname "$prev")/tree" 2>/dev/null; then
    echo "spdk-build: no vendored tarball beside this checkout; using the SPDK this machine built before" >&2
    echo "$(dirname "$prev")/tree"
    exit 0
  fi
  echo "spdk-build: no SPDK: SPDK_DIR is unset and no vendored tarball (shared/vendor/spdk/spdk-*.tar.xz beside the checkout or a parent, or SPDK_TARBALL)" >&2
  exit 3
fi

# the key covers the tarball and the patches applied to it (spdk-patches/*.patch, in name order)
patches=$(ls "$here"/spdk-patches/*.patch 2>/dev/null | sort || true)
sum=$(cat "$tarball" $patches | sha256sum | cut -c1-16)
out=$cache/spdk-$sum
mkdir -p "$cache"
exec 9>"$cache/spdk-$sum.lock"
flock 9
if [ -f "$out/.nvmf4j-built" ] && check_tree "$out/tree" 2>/dev/null; then
  echo "$out/tree"
  exit 0
fi

if [ "$install" = 1 ]; then
  pkgs=(meson nasm autoconf automake libtool pkg-config libnuma-dev libaio-dev python3-pyelftools
        python3-tabulate python3-jinja2 python3-yaml libjson-c-dev libcunit1-dev libncurses-dev
        uuid-dev libssl-dev libkeyutils-dev help2man libibverbs-dev librdmacm-dev make gcc g++ xz-utils patch)
  need=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if [ "${#need[@]}" -gt 0 ]; then
    echo "spdk-build: installing ${need[*]}" >&2
    sudo_=(); [ "$(id -u)" = 0 ] || sudo_=(sudo)
    "${sudo_[@]}" apt-get update -qq >&2
    "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
  fi
fi

echo "spdk-build: building SPDK from $(basename "$tarball") into $out (once per machine, ~5 min on 2 cores)" >&2
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
(
  cd "$out/tree"
  # x86-64-v2: the same binaries run on the host and in the QEMU/TCG guest (no AVX-512 there)
  export PATH=/usr/bin:$PATH
  ./configure --with-rdma --disable-unit-tests --without-crypto --without-vhost --without-virtio \
    --without-nvme-cuse --without-ocf --without-xnvme --target-arch=x86-64-v2
  make -j"$(nproc)"
) >"$log" 2>&1 || { echo "spdk-build: the SPDK build failed; the last lines of $log:" >&2; tail -30 "$log" >&2; exit 1; }
check_tree "$out/tree"
touch "$out/.nvmf4j-built"
echo "$out/tree"

#!/usr/bin/env bash
# The aarch64 (arm64) build of nvmf4j's JNI libraries on an x86-64 machine: Debian's gcc-aarch64-linux-gnu
# against an arm64 "sysroot" unpacked from Debian's own arm64 packages (rdma-core's and Ceph's librbd/librados -dev packages and the
# libraries they link, plus libc6 for its symbols file). Nothing is installed for arm64 on the host: apt
# downloads the packages with a private state directory (APT::Architecture=arm64), dpkg -x unpacks them.
#
#   aarch64.sh sysroot             prepare the sysroot once into $NVMF4J_CACHE (default ~/.cache/nvmf4j)
#                                  /sysroot-arm64-<key>; prints its path. Needs network the first time.
#   aarch64.sh path                print the sysroot's path if prepared (exit 3 with the reason if not)
#   aarch64.sh apt <apt-get args>  apt-get for arm64 in the private state the sysroot came from (the
#                                  arm64 package test resolves the .deb's Depends with "apt -s install")
#   aarch64.sh cc <native.arch> <output .so> <java.home> <ldlibs> <source...>
#                                  run by Maven (the parent's "native" execution) after the host build:
#                                  cross-compile the same sources into the aarch64 library beside the host
#                                  one. When the host is itself aarch64 there is nothing to do; without the
#                                  cross compiler or the sysroot it says why on stderr and builds nothing,
#                                  unless NVMF4J_CROSS=require (then it fails).
#
# The sysroot also carries DEBIAN/symbols and DEBIAN/shlibs (every package's, concatenated), so
# dpkg-shlibdeps -S<sysroot> computes the arm64 package's Depends from arm64 libraries and Debian's own
# dependency templates (dpu-profile/package.sh --arch arm64).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${NVMF4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nvmf4j}
triplet=aarch64-linux-gnu
cc=${NVMF4J_AARCH64_CC:-$triplet-gcc}
# the arm64 packages the JNI libraries build against (headers, link-time .so) or depend on at run time;
# librbd/librados for the rbd bdev's library (their own dependencies are not needed to link it); the
# rest for SPDK and DPDK (native/aarch64-spdk.sh): what SPDK's build links on Debian (libnvmf4j_spdk's NEEDED
# on x86-64: uuid, ssl, keyutils, aio, numa) and what its configure and apps look for (json-c, ncurses)
packages=(libibverbs-dev libibverbs1 librdmacm-dev librdmacm1 libnl-3-200 libnl-route-3-200 libc6 libgcc-s1
  librbd-dev librbd1 librados-dev librados2
  libnuma-dev libnuma1 libaio-dev libaio1 libssl-dev libssl3 uuid-dev libuuid1 libkeyutils-dev libkeyutils1
  libjson-c-dev libjson-c5 libncurses-dev libncurses6 libncursesw6 libtinfo6)
# the cache key: the package list and this layout's revision
key=$(printf '%s\n' 2 "${packages[@]}" | sha256sum | cut -c1-12)
sysroot=$cache/sysroot-arm64-$key

die() { echo "aarch64.sh: $*" >&2; exit 1; }

prepared() { [ -f "$sysroot/.complete" ]; }

# apt-get for arm64 with a private state ($cache/apt-arm64: the host's sources, read for arm64): the host's
# dpkg database and package lists are not touched. The lists are read once (again with "apt-get update").
apt_state=$cache/apt-arm64
arm64_apt() {
  mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial"
  [ -f "$apt_state/status" ] || : >"$apt_state/status"
  apt-get -q -o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
    -o Dir::State="$apt_state" -o Dir::State::Lists="$apt_state/lists" -o Dir::State::status="$apt_state/status" \
    -o Dir::Cache="$apt_state/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}
arm64_lists() {
  mkdir -p "$apt_state"
  compgen -G "$apt_state/lists/*_Packages*" >/dev/null && return 0
  echo "aarch64.sh: reading the arm64 package lists" >&2
  arm64_apt update >"$apt_state/update.log" 2>&1 || { cat "$apt_state/update.log" >&2; die "apt-get update (arm64) failed"; }
}

make_sysroot() {
  prepared && { echo "$sysroot"; return; }
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || die "apt-get and dpkg-deb are needed (Debian)"
  mkdir -p "$cache"
  arm64_lists
  work=$(mktemp -d "$cache/sysroot-arm64.XXXXXX") # global: the EXIT trap removes it
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/debs" "$work/root/DEBIAN"
  (cd "$work/debs" && arm64_apt download "${packages[@]}" >"$work/apt-download.log" 2>&1) \
    || { cat "$work/apt-download.log" >&2; die "apt-get download (arm64) failed"; }
  local deb ctl
  for deb in "$work"/debs/*.deb; do
    [ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || die "$(basename "$deb") is not an arm64 package"
    dpkg-deb -x "$deb" "$work/root"
    ctl=$work/ctl/$(dpkg-deb -f "$deb" Package)
    mkdir -p "$ctl"
    dpkg-deb -e "$deb" "$ctl"
    [ -f "$ctl/symbols" ] && cat "$ctl/symbols" >>"$work/root/DEBIAN/symbols"
    [ -f "$ctl/shlibs" ] && cat "$ctl/shlibs" >>"$work/root/DEBIAN/shlibs"
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$work/root/.complete.tmp"
  done
  [ -f "$work/root/usr/include/infiniband/verbs.h" ] && [ -f "$work/root/usr/include/rdma/rdma_cma.h" ] \
    || die "the arm64 packages carry no verbs.h/rdma_cma.h"
  [ -f "$work/root/usr/include/rbd/librbd.h" ] || die "the arm64 packages carry no rbd/librbd.h"
  relative_links "$work/root"
  rm -rf "$sysroot"
  mv "$work/root" "$sysroot"
  mv "$sysroot/.complete.tmp" "$sysroot/.complete"
  echo "aarch64.sh: arm64 sysroot ready: $(tr '\n' ' ' <"$sysroot/.complete")" >&2
  echo "$sysroot"
}

# dpkg -x keeps a package's absolute symlinks (libaio.so -> /lib/aarch64-linux-gnu/libaio.so.1.0.2), which
# would point into the host's root: each becomes relative, to the same file inside the sysroot
relative_links() {
  local root=$1 link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
  done < <(find "$root" -type l -lname '/*' -print0)
}

cross_cc() {
  local host_arch=$1 out=$2 jhome=$3 ldlibs=$4
  shift 4
  local lib reason=
  lib=$(basename "$out")
  lib=${lib/_$host_arch.so/_aarch64.so}
  [ "$host_arch" = aarch64 ] && return 0 # the host build is the aarch64 one
  rm -f "$(dirname "$out")/$lib" # never a stale one from an earlier build
  if ! command -v "$cc" >/dev/null; then
    reason="$cc missing (./dev.sh setup installs gcc-aarch64-linux-gnu)"
  elif ! prepared; then
    reason="no arm64 sysroot in $sysroot (./dev.sh setup prepares it: native/aarch64.sh sysroot)"
  fi
  if [ -n "$reason" ]; then
    [ "${NVMF4J_CROSS:-}" = require ] && die "$lib: $reason"
    echo "aarch64.sh: WARNING: $lib not built: $reason" >&2
    return 0
  fi
  local libdirs="$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet"
  # the host build's flags (the parent pom), for aarch64
  # shellcheck disable=SC2086 # ldlibs is a list of -l flags
  "$cc" -shared -fPIC -O2 -g -Wall -Werror -std=gnu11 -Wl,-z,defs -Wl,-soname,"$lib" \
    -I"$jhome/include" -I"$jhome/include/linux" -I"$here/src/main/c" -I"$sysroot/usr/include" \
    "$@" -o "$(dirname "$out")/$lib" -L"$sysroot/usr/lib/$triplet" -Wl,-rpath-link,"$libdirs" $ldlibs
  echo "aarch64.sh: built $lib" >&2
}

case "${1:-}" in
  sysroot) make_sysroot ;;
  apt) shift; arm64_lists; arm64_apt "$@" ;;
  path) prepared || { echo "no arm64 sysroot in $sysroot (native/aarch64.sh sysroot prepares it)" >&2; exit 3; }
        echo "$sysroot" ;;
  cc) shift; [ $# -ge 5 ] || die "usage: aarch64.sh cc <native.arch> <output .so> <java.home> <ldlibs> <source...>"
      cross_cc "$@" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

#!/bin/bash
# Build the busybox initramfs that mounts the host root over virtio-9p (lib/initramfs-init).
# usage: build-initramfs.sh KROOT KVER OUT.cpio.gz
# env (the arm64 guest, e2e/arm64/run.sh, sets them): INITRAMFS_BUSYBOX (a static busybox of the guest's
# architecture; default this machine's), INITRAMFS_INIT (the /init; default lib/initramfs-init),
# INITRAMFS_MODULES (modules to load before /init's mounts, with their dependencies)
set -euo pipefail
KROOT=$1 KVER=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
BUSYBOX=${INITRAMFS_BUSYBOX:-$(command -v busybox)}
INIT=${INITRAMFS_INIT:-$HERE/initramfs-init}
file -L "$BUSYBOX" | grep -q 'statically linked' || { echo "busybox at $BUSYBOX is not static (install busybox-static)"; exit 1; }
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,dev,proc,sys,modules,lower,rw,newroot}
cp "$BUSYBOX" "$STAGE/bin/busybox"
# the applet list from this machine's busybox (a foreign one cannot run here; the same Debian version
# has the same applets, and a missing one is only a dangling link)
for a in $("$(command -v busybox)" --list); do [ "$a" = busybox ] || ln -s busybox "$STAGE/bin/$a"; done
ln -s bin "$STAGE/sbin"
# modules needed before the host root is reachable, in dependency order
: > "$STAGE/modules.list"
for m in ${INITRAMFS_MODULES:-virtio_pci 9pnet_virtio 9p overlay}; do
  modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  b=$(basename "$ko")
  case "$ko" in
    *.ko) cp "$ko" "$STAGE/modules/$b" ;;
    *.ko.xz) xz -dc "$ko" > "$STAGE/modules/${b%.xz}"; b=${b%.xz} ;;
    *.ko.zst) zstd -dqc "$ko" > "$STAGE/modules/${b%.zst}"; b=${b%.zst} ;;
    *.ko.gz) gzip -dc "$ko" > "$STAGE/modules/${b%.gz}"; b=${b%.gz} ;;
  esac
  echo "$b" >> "$STAGE/modules.list"
done
install -m 0755 "$INIT" "$STAGE/init"
(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "initramfs: $OUT ($(du -h "$OUT" | cut -f1)), modules: $(tr '\n' ' ' < "$STAGE/modules.list")"

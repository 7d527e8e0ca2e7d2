#!/bin/bash
# nvmf4j on Arm, not just compiled for it: an aarch64 QEMU guest (TCG, -M virt -cpu max) boots Debian
# bookworm's arm64 kernel, installs the arm64 package (dist/nvmf4j_<version>_arm64.deb) with dpkg, runs
# `nvmf4j-target check --profile bluefield3 --simulate --scale-down` with soft-RoCE (rdma_rxe on a dummy
# netdev) standing in for the ConnectX ports, starts the service from the installed unit's ExecStart
# (its EnvironmentFile, StateDirectory and limits applied by hand, as systemd would), and the guest's
# own Linux host connects with `nvme connect -t rdma` and runs a fio write+verify; then disconnect and
# SIGTERM, which must end the service with exit status 0.
#
# The guest's root is Debian bookworm arm64 (openjdk-17-jre-headless, rdma-core, ibverbs-providers,
# rdmacm-utils, nvme-cli, fio, kmod, iproute2, adduser for the package's user): `debootstrap --foreign --arch=arm64` unpacks it here,
# the second stage runs in one bootstrap boot of the guest itself (the maintainer scripts are arm64
# programs; no binfmt/qemu-user needed on this machine), and the resulting ext4 image is cached. Each
# run boots that image with QEMU's snapshot=on (the guest's writes are dropped at the end). The kernel
# and a static arm64 busybox come from `apt-get download` through a private apt configuration for
# arm64 (nothing is installed or configured for arm64 on this machine). The guest has no network
# device; the package, this folder and the results folder reach it over virtio-9p.
#
# usage: e2e/arm64/run.sh [options]
#   --deb FILE          the arm64 package to install (default: the newest dist/nvmf4j_*_arm64.deb)
#   --tree              no package: run bin/nvmf4j-target of this checkout's build (mgmt-api/target,
#                       shared read-only) with the guest's arm64 JDK; RDMA only when the build's
#                       rdma-cm jar carries the aarch64 library (the cross-compiled build), else TCP
#   --tree-dir DIR      with --tree: the checkout whose build runs (default this one)
#   --transports LIST   comma-separated: rdma, tcp (default rdma with a package, tcp with --tree,
#                       rdma,tcp with --engine spdk); each is one connect + fio verify + disconnect
#                       against the same service
#   --engine ENGINE     java (default): the service on a configuration written here (the java engine,
#                       2 poll groups); spdk: the machine set up as a DPU's is, `nvmf4j-target setup
#                       --profile bluefield3 --scale-down` (its hugepages, configuration, TLS API and
#                       drop-in), which must choose the spdk engine (the package's aarch64 SPDK), then a
#                       malloc namespace, the guest's host NQN and a TCP listener added to the profile's
#                       document before the start; on the first transport a namespace is added live with
#                       nvmfctl over the API's TLS; after SIGTERM every hugepage must be free again
#   --perf              with --engine spdk: SPDK's spdk_nvme_perf (the aarch64 build of spdk-build.sh,
#                       shared read-only) measures 4 KiB random reads and writes at QD 32 over TCP in
#                       the guest against the spdk engine, then against the java engine started on its
#                       own state directory (the same malloc size, the profile's core); prints each and
#                       the ratio java/spdk (TCG: a sign, never a threshold)
#   --no-check          do not run `nvmf4j-target check` (a build without the check command)
#   --check-args "ARGS" the check's arguments (default "--profile bluefield3 --simulate --scale-down")
#   --fio-size SIZE     bytes fio writes and verifies per transport (default 16m)
#   --jvm-opts "OPTS"   NVMF4J_JAVA_OPTS, written to /etc/default/nvmf4j (the unit's EnvironmentFile);
#                       default "-XX:TieredStopAtLevel=1" (C1 only: the JVM crashed under multi-threaded
#                       TCG when C2 replaced compiled code; see e2e/run.sh)
#   --timeout S         limit for the test boot in seconds (default 1800)
#   --out DIR           results folder (default e2e/out-arm64, wiped at each run)
#   --cache DIR         kernel, apt lists, root image (default ${XDG_CACHE_HOME:-~/.cache}/nvmf4j/arm64)
#   --rebuild-root      build the root image again (otherwise it is rebuilt only when its package list
#                       or stage2.sh change; a build takes one bootstrap boot, ~15-30 min under TCG)
#   --no-apt            do not apt-get install missing host packages
#   --quiet             do not echo the guest console (it is always in OUT/console.log)
#   -h, --help          this text
# env: E2E_SMP (2), E2E_MEM (3G), DEBIAN_MIRROR (http://deb.debian.org/debian)
# Results in OUT: results.tsv (check, PASS|FAIL, detail), timings.tsv (boot, install, check, JVM start,
# connect, fio per transport, in seconds), console.log, guest.log, nvmf4j-service.log, check.txt,
# fio-<transport>.json, dmesg.txt. Exit status 0 only when no check failed; last line "N passed, N failed".
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(cd "$HERE/../.." && pwd) TREE_DIR=""
DEB="" TREE=0 TRANSPORTS="" ENGINE=java PERF=0 DO_CHECK=1 CHECK_ARGS="--profile bluefield3 --simulate --scale-down"
FIO_SIZE=16m JVM_OPTS="-XX:TieredStopAtLevel=1" VM_TIMEOUT=1800 BOOTSTRAP_TIMEOUT=3600
OUT=$REPO/e2e/out-arm64 CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nvmf4j/arm64 REBUILD=0 DO_APT=1 QUIET=0
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
  case $1 in
    --deb) DEB=$2; shift ;;
    --tree) TREE=1 ;;
    --tree-dir) TREE_DIR=$(cd "$2" && pwd); shift ;;
    --transports) TRANSPORTS=$2; shift ;;
    --engine) ENGINE=$2; shift ;;
    --perf) PERF=1 ;;
    --no-check) DO_CHECK=0 ;;
    --check-args) CHECK_ARGS=$2; shift ;;
    --fio-size) FIO_SIZE=$2; shift ;;
    --jvm-opts) JVM_OPTS=$2; shift ;;
    --timeout) VM_TIMEOUT=$2; shift ;;
    --out) OUT=$2; shift ;;
    --cache) CACHE=$2; shift ;;
    --rebuild-root) REBUILD=1 ;;
    --no-apt) DO_APT=0 ;;
    --quiet) QUIET=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case $ENGINE in java|spdk) ;; *) echo "--engine takes java or spdk, not '$ENGINE'" >&2; exit 2 ;; esac
[ "$ENGINE" = java ] || [ $TREE = 0 ] || { echo "--engine spdk runs the package (its setup and unit), not --tree" >&2; exit 2; }
[ $PERF = 0 ] || [ "$ENGINE" = spdk ] || { echo "--perf compares the two engines: give --engine spdk" >&2; exit 2; }
[ -n "$TRANSPORTS" ] || { [ $TREE = 1 ] && TRANSPORTS=tcp || { [ "$ENGINE" = spdk ] && TRANSPORTS=rdma,tcp || TRANSPORTS=rdma; }; }
for t in ${TRANSPORTS//,/ }; do
  case $t in tcp|rdma) ;; *) echo "--transports takes rdma, tcp (comma-separated), not '$t'" >&2; exit 2 ;; esac
done
case $VM_TIMEOUT in ''|*[!0-9]*) echo "--timeout takes whole seconds" >&2; exit 2 ;; esac
if [ $TREE = 1 ]; then
  [ -z "$DEB" ] || { echo "--tree and --deb exclude each other" >&2; exit 2; }
else
  [ -n "$DEB" ] || DEB=$(ls "$REPO"/dist/nvmf4j_*_arm64.deb 2>/dev/null | sort -V | tail -n 1)
  [ -n "$DEB" ] && [ -f "$DEB" ] || { echo "no arm64 package${DEB:+ $DEB}: build it with ./dev.sh package --arch arm64 (or run --tree)" >&2; exit 2; }
  DEB=$(readlink -f "$DEB")
  [ "$(dpkg-deb -f "$DEB" Architecture)" = arm64 ] || { echo "$DEB is not an arm64 package" >&2; exit 2; }
fi
E2E_LOG_TAG=e2e-arm64
. "$REPO/e2e/lib/common.sh"
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd) CACHE=$(cd "$CACHE" && pwd)
results_dir "$OUT"
T_START=$(now_us)

# ------------------------------------------------------------- 1. host packages
PKGS="qemu-system-arm debootstrap busybox-static e2fsprogs kmod cpio gzip file"
# shellcheck disable=SC2086
[ "$DO_APT" = 0 ] || apt_missing "$OUT/apt.log" $PKGS

# ------------------------------------------------------------- 2. kernel and busybox (arm64, cached)
# A private apt configuration: arm64 lists in the cache, an empty dpkg status; this machine's apt
# and dpkg are not told about arm64.
APTD=$CACHE/apt
mkdir -p "$APTD/lists/partial" "$APTD/archives/partial" "$APTD/cache"
[ -f "$APTD/status" ] || : > "$APTD/status"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
cat > "$APTD/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $MIRROR bookworm-updates main
deb [signed-by=$KEYRING] ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
EOF
APT_ARM64=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o "Dir::Etc::SourceList=$APTD/sources.list"
  -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$APTD/lists" -o "Dir::State::status=$APTD/status"
  -o "Dir::Cache=$APTD/cache" -o "Dir::Cache::archives=$APTD/archives" -o Debug::NoLocking=1)
# lists older than a day are refreshed (a kernel the mirror dropped could not be downloaded)
if [ -z "$(find "$APTD" -maxdepth 1 -name updated -mtime -1 2>/dev/null)" ]; then
  log "apt-get update (arm64 lists, private configuration under $APTD)"
  apt-get "${APT_ARM64[@]}" update -qq 2>&1 | grep -v unsandboxed || true
  touch "$APTD/updated"
fi
KPKG=$(apt-cache "${APT_ARM64[@]}" depends linux-image-arm64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$KPKG" ] || { echo "cannot determine the Debian arm64 kernel package" >&2; exit 1; }
KROOT=$CACHE/$KPKG
fetch_kernel "$KROOT" "${APT_ARM64[@]}"
# a static arm64 busybox for the initramfs
if [ ! -x "$CACHE/busybox" ]; then
  rm -rf "$CACHE/bb.dl" && mkdir -p "$CACHE/bb.dl"
  (cd "$CACHE/bb.dl" && apt-get "${APT_ARM64[@]}" download busybox-static 2>&1 | grep -v unsandboxed || true)
  dpkg -x "$CACHE"/bb.dl/busybox-static_*.deb "$CACHE/bb.dl/x"
  install -m 0755 "$CACHE/bb.dl/x/bin/busybox" "$CACHE/busybox"
  rm -rf "$CACHE/bb.dl"
fi
KVER=$(ls "$KROOT/lib/modules")
KERNEL=$KROOT/boot/vmlinuz-$KVER
log "guest kernel: $KPKG $(cat "$KROOT/.pkgversion") ($KVER)"

# ------------------------------------------------------------- 3. initramfs (cached)
INIT_MODULES="virtio_pci virtio_blk ext4 9pnet_virtio 9p"
IHASH=$( (cat "$HERE/initramfs-init" "$REPO/e2e/lib/build-initramfs.sh"; echo "$KVER $INIT_MODULES"; sha256sum "$CACHE/busybox") | sha256sum | cut -c1-12)
INITRD=$CACHE/initramfs-$KVER-$IHASH.cpio.gz
if [ ! -f "$INITRD" ]; then
  log "building the initramfs"
  rm -f "$CACHE"/initramfs-*.cpio.gz
  INITRAMFS_BUSYBOX=$CACHE/busybox INITRAMFS_INIT=$HERE/initramfs-init INITRAMFS_MODULES=$INIT_MODULES \
    "$REPO/e2e/lib/build-initramfs.sh" "$KROOT" "$KVER" "$INITRD"
fi

# ------------------------------------------------------------- 4. QEMU
SMP=${E2E_SMP:-2} MEM=${E2E_MEM:-3G}
# pauth-impdef: QEMU's own pointer-authentication hash instead of the architected QARMA, which costs
# much time under TCG (the guest sees the same feature)
CPU=max,pauth-impdef=on
vm() { # image results-dir init [9p shares: tag:host-dir:guest-dir:ro|rw ...] : sets QEMU
  local img=$1 dir=$2 init=$3 s shares="" args=() tag rest host gdir mode ro; shift 3
  for s in "results:$dir:/mnt:rw" "$@"; do
    tag=${s%%:*} rest=${s#*:}; host=${rest%%:*} rest=${rest#*:}; gdir=${rest%%:*} mode=${rest#*:}
    shares+="${shares:+,}$tag:$gdir:$mode"
    ro=""; [ "$mode" != ro ] || ro=,readonly=on
    args+=(-virtfs "local,path=$host,mount_tag=$tag,security_model=none,multidevs=remap$ro")
  done
  QEMU=(qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu "$CPU" -smp "$SMP" -m "$MEM"
    -nodefaults -no-user-config -display none -monitor none -serial stdio -no-reboot
    -kernel "$KERNEL" -initrd "$INITRD"
    -append "console=ttyAMA0 panic=-1 loglevel=4 mitigations=off e2e.init=$init e2e.shares=$shares"
    -drive "file=$img,if=none,id=root,format=raw${SNAPSHOT:+,snapshot=on}" -device virtio-blk-pci,drive=root
    "${args[@]}")
  # no -nic/-netdev: the guest has no network device, so no packet can leave it
  printf '%q ' "${QEMU[@]}" > "$dir/qemu-cmdline.txt"; echo >> "$dir/qemu-cmdline.txt"
}

# ------------------------------------------------------------- 5. the arm64 root image (cached)
# openssl: setup's self-signed certificate for the API; the package's Depends (its native libraries' Debian
# packages, first alternative, versions dropped) are added, so that dpkg -i finds them in the root
ROOT_PKGS=openjdk-17-jre-headless,rdma-core,ibverbs-providers,ibverbs-utils,rdmacm-utils,libnuma1,libaio1,nvme-cli,fio,kmod,iproute2,procps,util-linux,adduser,openssl
if [ -n "$DEB" ]; then
  ROOT_PKGS=$( (tr ',' '\n' <<< "$ROOT_PKGS"; dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/[[:space:]]//g') \
    | grep . | sort -u | paste -sd,)
fi
SHASH=$(echo "$ROOT_PKGS $MIRROR" | sha256sum | cut -c1-12)    # stage 1
RHASH=$( (echo "$SHASH $KVER"; cat "$HERE/stage2.sh") | sha256sum | cut -c1-12)
IMG=$CACHE/debian12-arm64-root-$RHASH.img
if [ $REBUILD = 1 ] || [ ! -f "$IMG" ]; then
  # stage 1 is kept until stage 2 succeeds: a failed or changed stage 2 does not download again
  B=$CACHE/root-build-$SHASH
  rm -f "$IMG" "$B/root.img"
  find "$CACHE" -maxdepth 1 -name 'root-build-*' ! -name "$(basename "$B")" -exec rm -rf {} +
  if [ $REBUILD = 1 ] || [ ! -f "$B/stage1.ok" ]; then
    rm -rf "$B"; mkdir -p "$B"
    log "arm64 root, stage 1: debootstrap --foreign --arch=arm64 bookworm ($ROOT_PKGS)"
    debootstrap --arch=arm64 --foreign --variant=minbase --include="$ROOT_PKGS" bookworm "$B/root" "$MIRROR" \
      > "$B/debootstrap.log" 2>&1 || { tail -n 20 "$B/debootstrap.log"; exit 1; }
    touch "$B/stage1.ok"
  fi
  # debootstrap --foreign leaves /proc a symlink to the host's /proc (it could not mount one): a directory
  [ ! -L "$B/root/proc" ] || { rm -f "$B/root/proc"; mkdir -m 0555 "$B/root/proc"; }
  install -m 0755 "$HERE/stage2.sh" "$B/root/e2e-stage2.sh"
  # the kernel's modules, so that modprobe works in the guest (the package itself is not installed)
  mkdir -p "$B/root/lib/modules" && rm -rf "$B/root/lib/modules/$KVER" && cp -a "$KROOT/lib/modules/$KVER" "$B/root/lib/modules/"
  truncate -s 4G "$B/root.img"
  mkfs.ext4 -q -F -L nvmf4j-arm64 -d "$B/root" "$B/root.img"
  log "arm64 root, stage 2: debootstrap --second-stage in the guest (one boot, console -> $B/console.log)"
  SNAPSHOT="" vm "$B/root.img" "$B" /e2e-stage2.sh
  run_qemu "$B/console.log" "$BOOTSTRAP_TIMEOUT"
  if grep -q 'E2E-STAGE2: OK' "$B/console.log" && debugfs -R 'stat /e2e-stage2.ok' "$B/root.img" 2>/dev/null | grep -q Inode; then
    debugfs -R 'cat /e2e-root-versions.txt' "$B/root.img" 2>/dev/null > "$B/versions.txt" || true
    mv "$B/root.img" "$IMG"; mv "$B/versions.txt" "$IMG.versions"
    find "$CACHE" -maxdepth 1 -name 'debian12-arm64-root-*.img' ! -name "$(basename "$IMG")" -delete
    rm -rf "$B"
  else
    log "the second stage failed (qemu rc $QRC); see $B/console.log"; tail -n 30 "$B/console.log"; exit 1
  fi
fi
log "arm64 root: $(basename "$IMG") ($(tr '\t\n' '= ' < "$IMG.versions"))"
T_PREP=$(now_us)

# ------------------------------------------------------------- 6. the test boot
SHARES=("e2e:$HERE:/e2e:ro")
if [ $TREE = 1 ]; then
  TREE_DIR=${TREE_DIR:-$REPO}
  [ -d "$TREE_DIR/mgmt-api/target/lib" ] || { echo "no build under $TREE_DIR/mgmt-api/target: mvn -q -DskipTests package first" >&2; exit 2; }
  if [[ ",$TRANSPORTS," == *,rdma,* ]] && ! unzip -l "$TREE_DIR"/mgmt-api/target/lib/rdma-cm-*.jar 2>/dev/null | grep -q 'native/libnvmf4j_rdma_aarch64.so'; then
    echo "--tree with rdma: the build's rdma-cm jar has no aarch64 library (build with the cross toolchain, or --transports tcp)" >&2; exit 2
  fi
  SHARES+=("repo:$TREE_DIR:/repo:ro") LAUNCHER=/repo/bin/nvmf4j-target DEBNAME=""
else
  SHARES+=("dist:$(dirname "$DEB"):/dist:ro") LAUNCHER="" DEBNAME=$(basename "$DEB")
fi
if [ $PERF = 1 ]; then
  SPDK_A64=$("$REPO/spdk-jni/spdk-build.sh" --arch aarch64 --cached) \
    || { echo "--perf: no aarch64 SPDK build (./dev.sh package --arch arm64 makes one)" >&2; exit 2; }
  [ -x "$SPDK_A64/build/bin/spdk_nvme_perf" ] || { echo "--perf: $SPDK_A64 has no build/bin/spdk_nvme_perf" >&2; exit 2; }
  SHARES+=("tools:$SPDK_A64/build/bin:/tools:ro")
fi
{
  printf 'E2E_DEB=%q\n' "$DEBNAME"
  printf 'E2E_LAUNCHER=%q\n' "$LAUNCHER"
  printf 'E2E_TRANSPORTS=%q\n' "$TRANSPORTS"
  printf 'E2E_ENGINE=%q\n' "$ENGINE"
  printf 'E2E_PERF=%q\n' "$PERF"
  printf 'E2E_DO_CHECK=%q\n' "$DO_CHECK"
  printf 'E2E_CHECK_ARGS=%q\n' "$CHECK_ARGS"
  printf 'E2E_FIO_SIZE=%q\n' "$FIO_SIZE"
  printf 'E2E_JVM_OPTS=%q\n' "$JVM_OPTS"
} > "$OUT/params.env"
: > "$OUT/results.tsv"; : > "$OUT/timings.tsv"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
SNAPSHOT=1 vm "$IMG" "$OUT" /e2e/guest.sh "${SHARES[@]}"
log "starting the arm64 VM: tcg cpu=$CPU smp=$SMP mem=$MEM timeout=${VM_TIMEOUT}s, ${DEBNAME:-the build tree}, engine $ENGINE, transports $TRANSPORTS (console -> $OUT/console.log)"
T_VM0=$(now_us)
run_qemu "$OUT/console.log" "$VM_TIMEOUT"
T_VM1=$(now_us)
GRC=$(cat "$OUT/guest.rc" 2>/dev/null || echo missing)
if [ "$QRC" != 0 ] || [ "$GRC" = missing ]; then
  printf 'vm-run\tFAIL\tqemu rc=%s (124 = --timeout %ss hit), guest rc=%s\n' "$QRC" "$VM_TIMEOUT" "$GRC" >> "$OUT/results.tsv"
elif [ "$GRC" != 0 ] && ! awk -F'\t' '$2 == "FAIL" {f = 1} END {exit !f}' "$OUT/results.tsv"; then
  printf 'guest-script\tFAIL\tguest.sh exited with %s and no failed check\n' "$GRC" >> "$OUT/results.tsv"
fi
{
  echo "host_prep_s	$(fmt_s $((T_PREP - T_START)))"
  echo "vm_wall_s	$(fmt_s $((T_VM1 - T_VM0)))"
  echo "total_wall_s	$(fmt_s $((T_VM1 - T_START)))"
} >> "$OUT/timings.tsv"

# ------------------------------------------------------------- 7. verdict
count() { awk -F'\t' -v s="$1" '$2==s' "$OUT/results.tsv" | wc -l; }
NPASS=$(count PASS) NFAIL=$(count FAIL)
[ "$NPASS" -gt 0 ] || [ "$NFAIL" -gt 0 ] || NFAIL=1
echo
log "checks:"
awk -F'\t' '{printf "  %-4s  %-28s %s\n", $2, $1, $3}' "$OUT/results.tsv"
log "timings (s; TCG aarch64 on $(nproc) host cpus, load $LOAD0 -> $(cut -d' ' -f1-3 /proc/loadavg)):"
awk -F'\t' '{printf "  %-28s %10s  %s\n", $1, $2, $3}' "$OUT/timings.tsv"
if [ "$NFAIL" -gt 0 ]; then
  log "FAILURE: qemu rc=$QRC guest rc=$GRC; results in $OUT"
  echo "----- tail of $OUT/console.log"; tail -n 40 "$OUT/console.log" 2>/dev/null
  [ ! -s "$OUT/nvmf4j-service.log" ] || { echo "----- tail of $OUT/nvmf4j-service.log"; tail -n 40 "$OUT/nvmf4j-service.log"; }
fi
echo "$NPASS passed, $NFAIL failed"
[ "$NFAIL" = 0 ]

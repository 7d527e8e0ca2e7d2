#!/bin/bash
# nvmf4j end-to-end suite: the unmodified Linux NVMe-oF host (nvme-cli, fio,
# kernel nvme-tcp / nvme-rdma) against the built nvmf4j service, inside a
# QEMU guest, with the kernel's own target (nvmet) as control and as the
# benchmark peer.
#
# The guest boots Debian's kernel (fetched with `apt-get download`, never
# installed on this machine) with a busybox initramfs, mounts this machine's
# root read-only over virtio-9p (RAM overlay on top) and runs e2e/guest/suite.sh
# with the host's own userland and JDK. The guest has no network device: every
# address it uses exists only inside it.
#
# usage: e2e/run.sh [options]
#   --quiet             do not echo the guest console (it is always in OUT/console.log)
#   --fio-runtime N     seconds per fio latency job (default 10)
#   --bench-warmup N    the bench part: seconds of 4 KiB random reads and writes at QD 32, not measured,
#                       after each connect and before the measured jobs (default 15; 0: none), so that a JVM
#                       target's first job (QD 1) does not measure its interpreter and its JIT
#   --fuzz-seconds N    seconds per fuzzer of the fuzzrdma part (default 20; the issue's long run: 600)
#   --timeout S         hard limit for the main VM run in seconds (default 5400; each power-cut
#                       boot has 1200; bounds for a failure only: the clean run takes ~42 and ~3 min)
#   --out DIR           results folder (default: e2e/out, wiped at each run)
#   --cache DIR         kernel + initramfs cache (default: e2e/cache)
#   --apt-only          only install the host packages the run needs (with --only, those of its parts), then
#                       exit: dev.sh test does it once before it starts two runs at once with --no-apt
#   --no-apt            do not apt-get install missing host packages
#   --no-build          do not run Maven, even when mgmt-api/target/lib is missing
#   --no-cds            no class-data archive for the guest's JVMs (by default one start of the
#                       service on this machine writes one; the guest's starts map it)
#   --jvm-opts "OPTS"   JVM options for the service in the guest (NVMF4J_JAVA_OPTS of
#                       bin/nvmf4j-target; default "-XX:TieredStopAtLevel=1": C1 only, which
#                       avoids a JVM crash seen under multi-threaded TCG; "" for C1+C2)
#   --idle-strategy S   idleStrategy of the service config: backoff (default), busy, interrupt
#   --cores N           cores (poll groups) of the service config of the tcp, rdma, spdk and bench
#                       parts (default 2). The bench part's java engine runs with 1 and busy, pinned
#                       to vCPU 0, unless these two options say otherwise (--cores: not pinned): one
#                       busy-polling core, as the spdk engine's one reactor (and the host rows of
#                       fio-jobs/engines.sh) have, leaving fio a vCPU
#   --only LIST         run only these parts, comma-separated: nvmet, tcp (nvmf4j over TCP),
#                       rdma (nvmf4j over RDMA), spdk (the service with the spdk engine over TCP
#                       and RDMA), ana (two nvmf4j instances, one namespace, the host's native
#                       multipath failing over), rbd (a Ceph cluster in the guest, two nvmf4j gateways on one
#                       RBD image: multipath failover under fio verify with the image's lock following ANA,
#                       reservations seen through both gateways, a second host fenced), volumes (within tcp:
#                       a reflink pool on XFS, ext4 on a volume, a snapshot under fio, its clone on a second
#                       host NQN, a group snapshot, a live grow; needs tcp too), qos (within tcp and spdk:
#                       an IOPS and a read MB/s limit held within 5 % under fio, an unlimited neighbour
#                       not held, the limit removed; needs tcp or spdk too), powercut (two more
#                       boots: records written with FUA and flushes, SIGKILL to QEMU, read back), auth (DH-HMAC-CHAP: kernel nvmet, then nvmf4j),
#                       tls (NVMe/TCP TLS with a PSK: kernel nvmet); auth and tls need --suite trixie;
#                       fuzzrdma (SPDK's nvme_fuzz, then the live RDMA fuzzer of guest/RdmaHost.java, each
#                       --fuzz-seconds against one subsystem of the service over RDMA while the Linux host
#                       verifies I/O on another over nvme-rdma; heap, threads, fds, controllers and RDMA
#                       connections of the service checked before and after);
#                       bench (the benchmark kit's rows: fio latency and iops against nvmet, the java
#                       engine and the spdk engine over TCP and RDMA, ratios to nvmet in bench-guest.tsv;
#                       never part of the default: fio-jobs/bench.sh --guest runs it);
#                       default all but bench (auth and tls only with --suite trixie; a development aid: CI runs all)
#   --cut-after N       power cut once N records written with FUA only are acknowledged (150)
#   --suite SUITE       the Debian suite of the guest's kernel and NVMe userland: default this machine's
#                       (bookworm: kernel 6.1, nvme-cli 2.3); "trixie": Debian 13's kernel 6.12 (NVMe
#                       in-band authentication and TLS) with trixie's nvme-cli, libnvme and tlshd
#                       (ktls-utils) and their libraries, all fetched with apt-get download through a
#                       private apt state in the cache and unpacked there: nothing is installed
#   --kernel-pkg NAME   Debian kernel package (default: what linux-image-amd64 depends on, in the suite)
#   --fake-target       harness self-test: run the nvmf4j scenarios against the kernel
#                       nvmet dressed up as nvmf4j (guest/fake-target.sh), not the service
#   -h, --help          this text
# env: E2E_SMP (2), E2E_MEM (4G), E2E_ACCEL (default tcg,thread=multi; kvm where nested KVM works)
# Results in OUT: results.tsv (check, PASS|FAIL|SKIP, detail), results.json,
# bench.tsv (nvmf4j vs nvmet fio latency), bench-guest.tsv (--only bench), console.log, nvmf4j-service.log,
# spdk-service.log, guest.log, dmesg.txt, fio-*.json, summary.tsv; powercut-write/ and powercut-verify/ (the
# results shares of the power-cut boots), powercut.tsv (their checks, also in results.tsv).
# Exit status: 0 only when no check failed; last line: "N passed, N failed, N skipped".
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
IDLE="" CORES="" ONLY="" DO_APT=1 APT_ONLY=0 DO_BUILD=1 DO_CDS=1 FIO_RUNTIME=10 BENCH_WARMUP=15 FUZZ_SECONDS=20 VM_TIMEOUT=5400 QUIET=0 LAUNCHER=$REPO/bin/nvmf4j-target
# C1 only: under QEMU TCG with several vCPUs the JVM crashed now and then (SIGSEGV executing freed
# compiled code, never on real hardware) when C2 replaced C1 methods; without C2 nothing is replaced
JVM_OPTS="-XX:TieredStopAtLevel=1"
OUT=$HERE/out CACHE=$HERE/cache KPKG=${E2E_KERNEL_PKG:-} SUITE=${E2E_SUITE:-}
PC_CUT_AFTER=150 PC_TIMEOUT=1200   # power cut: FUA records before the SIGKILL; limit per boot (s)
while [ $# -gt 0 ]; do
  case $1 in
    --quiet) QUIET=1 ;;
    --fio-runtime) FIO_RUNTIME=$2; shift ;;
    --bench-warmup) BENCH_WARMUP=$2; shift ;;
    --fuzz-seconds) FUZZ_SECONDS=$2; shift ;;
    --timeout) VM_TIMEOUT=$2; shift ;;
    --out) OUT=$2; shift ;;
    --cache) CACHE=$2; shift ;;
    --no-apt) DO_APT=0 ;;
    --apt-only) APT_ONLY=1 ;;
    --no-build) DO_BUILD=0 ;;
    --no-cds) DO_CDS=0 ;;
    --jvm-opts) JVM_OPTS=$2; shift ;;
    --idle-strategy) IDLE=$2; shift ;;
    --cores) CORES=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --kernel-pkg) KPKG=$2; shift ;;
    --suite) SUITE=$2; shift ;;
    --cut-after) PC_CUT_AFTER=$2; shift ;;
    --fake-target) LAUNCHER=$HERE/guest/fake-target.sh DO_BUILD=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# auth and tls need the 6.12 guest: part of the default only with --suite trixie
[ -n "$ONLY" ] || { ONLY=nvmet,tcp,rdma,spdk,ana,rbd,fuzzrdma,volumes,qos,powercut; [ "$SUITE" != trixie ] || ONLY+=,auth,tls; }
for part in ${ONLY//,/ }; do
  case $part in nvmet|tcp|rdma|spdk|ana|rbd|fuzzrdma|volumes|qos|powercut|auth|tls|bench) ;; *) echo "--only takes nvmet, tcp, rdma, spdk, ana, rbd, fuzzrdma, volumes, qos, powercut, auth, tls, bench (comma-separated), not '$part'" >&2; exit 2 ;; esac
done
case $FIO_RUNTIME$VM_TIMEOUT$FUZZ_SECONDS$BENCH_WARMUP in *[!0-9]*) echo "--fio-runtime, --bench-warmup, --fuzz-seconds and --timeout take whole seconds" >&2; exit 2 ;; esac
case $IDLE in ''|backoff|busy|interrupt) ;; *) echo "--idle-strategy takes backoff, busy or interrupt, not '$IDLE'" >&2; exit 2 ;; esac
case $CORES in '') ;; *[!0-9]*|0*) echo "--cores takes a whole number of at least 1, not '$CORES'" >&2; exit 2 ;; esac
case $SUITE in ''|trixie|bookworm) ;; *) echo "--suite takes trixie or bookworm (the guest's programs run with their own C library; other suites are untried)" >&2; exit 2 ;; esac
case $PC_CUT_AFTER in ''|*[!0-9]*) echo "--cut-after takes a number of records" >&2; exit 2 ;; esac
. "$HERE/lib/common.sh"
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd) CACHE=$(cd "$CACHE" && pwd)
# what a run writes into the cache for itself (the class-data archive, the guest's compiled classes), apart
# per suite: dev.sh test runs the 6.1 and the 6.12 guest at once on one cache
RUN_CACHE=$CACHE/run${SUITE:+-$SUITE}
results_dir "$OUT"   # OUT is wiped (only a previous results folder)
T_START=$(now_us)

# ------------------------------------------------------------- 1. host packages
# qemu + busybox build the VM; everything else is the userland the guest runs
# from this machine's root over 9p.
need_build=0
[ "$DO_BUILD" = 1 ] && [ ! -d "$REPO/mgmt-api/target/lib" ] && need_build=1
PKGS="qemu-system-x86 busybox-static kmod cpio gzip xz-utils file iproute2 procps util-linux
      coreutils e2fsprogs mount rdma-core ibverbs-utils rdmacm-utils ibverbs-providers nvme-cli fio jq
      openjdk-17-jdk-headless"
[ "$need_build" = 1 ] && PKGS+=" maven"
# the rbd part runs the host's Ceph daemons and tools in the guest (and the service's librbd)
[[ ",$ONLY," != *,rbd,* ]] || PKGS+=" ceph-mon ceph-osd ceph-common librbd1"
# shellcheck disable=SC2086
[ "$DO_APT" = 0 ] || apt_missing "$CACHE/apt.log" $PKGS
[ "$APT_ONLY" = 0 ] || { log "host packages in place (--apt-only)"; exit 0; }
T_APT=$(now_us)

# ------------------------------------------------------------- 2. build nvmf4j
if [ "$need_build" = 1 ]; then
  log "building nvmf4j (mvn -q -B -DskipTests package)"
  (cd "$REPO" && mvn -q -B -DskipTests package) > "$OUT/build.log" 2>&1 \
    || { log "maven build failed (the guest will report the service as not startable):"; tail -30 "$OUT/build.log"; }
fi
T_BUILD=$(now_us)

# ------------------------------------------------------------- 2b. class-data archive of the service
# The guest starts the service (and nvmfctl) about twenty times; under TCG each start takes 75-110 s, most
# of it loading and verifying classes. The guest runs this machine's JDK and jars over 9p, so an archive of
# the classes one start loads, written here in seconds, serves it too: every JVM of the guest with the
# service's class path maps it (-XX:SharedArchiveFile); a JVM that cannot (another JDK, a jar rebuilt since)
# says so in its log and starts as it would without one.
if [ "$DO_CDS" = 1 ] && [ "$LAUNCHER" = "$REPO/bin/nvmf4j-target" ] && [ -d "$REPO/mgmt-api/target/lib" ]; then
  if write_cds "$LAUNCHER" "$RUN_CACHE/cds/nvmf4j-target.jsa" "$JVM_OPTS"; then
    JVM_OPTS+=" -XX:SharedArchiveFile=$RUN_CACHE/cds/nvmf4j-target.jsa"
    log "class-data archive for the guest's JVMs: $RUN_CACHE/cds/nvmf4j-target.jsa ($(($(stat -c %s "$RUN_CACHE/cds/nvmf4j-target.jsa") >> 20)) MiB, $(fmt_s $(($(now_us) - T_BUILD))) s)"
  fi
fi

# The guest's Java programs (guest/*.java: the RDMA host, the CM-reject client) compiled here: launched from
# source, each of their seven runs in the guest would compile them again under TCG first. On a failure the
# guest launches them from source as before.
GUEST_CLASSES=""
if [ -d "$REPO/native/target/classes" ] && [ -d "$REPO/rdma-cm/target/classes" ] \
    && [ -d "$REPO/nvmf-target/target/test-classes" ]; then
  rm -rf "$RUN_CACHE/guest-classes"; mkdir -p "$RUN_CACHE/guest-classes"
  if javac -nowarn -d "$RUN_CACHE/guest-classes" -cp "$REPO/native/target/classes:$REPO/rdma-cm/target/classes:$REPO/nvmf-target/target/test-classes" \
      "$HERE"/guest/*.java > "$OUT/guest-javac.log" 2>&1; then
    GUEST_CLASSES=$RUN_CACHE/guest-classes
  else
    log "guest/*.java did not compile here (the guest compiles them at each run): $(tail -n 3 "$OUT/guest-javac.log" | tr '\n' ' ')"
  fi
fi

# ------------------------------------------------------------- 3. guest kernel and userland (cached)
# --suite: a private apt state in the cache (lists, empty dpkg status) reads that suite; this machine's
# apt sources, lists and dpkg database stay as they are
APT_PRIV=() USERLAND=""
[ -z "$SUITE" ] || private_apt "$CACHE/apt-$SUITE" "$SUITE"
if [ -z "$KPKG" ]; then
  dep() { apt-cache "${APT_PRIV[@]}" depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
  KPKG=$(dep)
  [ -n "$KPKG" ] || [ -n "$SUITE" ] || { apt-get update -qq; KPKG=$(dep); }
fi
[ -n "$KPKG" ] || { echo "cannot determine the Debian kernel package" >&2; exit 1; }
KROOT=$CACHE/$KPKG
fetch_kernel "$KROOT" "${APT_PRIV[@]}"
if [ -n "$SUITE" ]; then
  # the suite's nvme-cli (with libnvme) and tlshd (ktls-utils), unpacked with their libraries down to the C
  # library; the guest puts USERLAND/bin (wrappers running them with that C library) first in its PATH
  USERLAND=$CACHE/userland-$SUITE
  USERLAND_PROGRAMS="nvme tlshd" fetch_userland "$USERLAND" nvme-cli ktls-utils
  log "guest userland: $(grep -E '^(nvme-cli|libnvme|ktls-utils)' "$USERLAND/packages.txt" | tr '\n' ' ')from $SUITE in $USERLAND"
fi
KVER=$(ls "$KROOT/lib/modules")
KERNEL=$KROOT/boot/vmlinuz-$KVER
# Boot the uncompressed vmlinux through QEMU's PVH entry: saves the ~4.5 s the
# bzImage spends decompressing itself under TCG.
if grep -q '^CONFIG_PVH=y' "$KROOT/boot/config-$KVER"; then
  [ -f "$KROOT/boot/vmlinux-$KVER" ] || "$HERE/lib/extract-vmlinux.sh" "$KERNEL" "$KROOT/boot/vmlinux-$KVER" || true
  [ -f "$KROOT/boot/vmlinux-$KVER" ] && KERNEL=$KROOT/boot/vmlinux-$KVER
fi
log "guest kernel: $KPKG $(cat "$KROOT/.pkgversion") ($KVER), booting $(basename "$KERNEL")"

# ------------------------------------------------------------- 4. initramfs (cached)
IHASH=$( (cat "$HERE/lib/initramfs-init" "$HERE/lib/build-initramfs.sh"; echo "$KVER"; sha256sum "$(command -v busybox)") | sha256sum | cut -c1-12)
INITRD=$CACHE/initramfs-$KVER-$IHASH.cpio.gz
if [ ! -f "$INITRD" ]; then
  log "building initramfs"
  rm -f "$CACHE/initramfs-$KVER"-*.cpio.gz
  "$HERE/lib/build-initramfs.sh" "$KROOT" "$KVER" "$INITRD"
fi
T_PREP=$(now_us)

# ------------------------------------------------------------- 5. run the VMs
want() { [[ ",$ONLY," == *",$1,"* ]]; }
params() { # results-dir [NAME=value...] : parameters for the guest, read by guest/init.sh from its share
  local dir=$1 kv; shift
  mkdir -p "$dir"; touch "$dir/.e2e-results"
  {
    printf 'E2E_REPO=%q\n' "$REPO"
    printf 'E2E_KROOT=%q\n' "$KROOT"
    printf 'E2E_FIO_RUNTIME=%q\n' "$FIO_RUNTIME"
    printf 'E2E_BENCH_WARMUP=%q\n' "$BENCH_WARMUP"
    printf 'E2E_FUZZ_SECONDS=%q\n' "$FUZZ_SECONDS"
    printf 'E2E_JVM_OPTS=%q\n' "$JVM_OPTS"
    printf 'E2E_LAUNCHER=%q\n' "$LAUNCHER"
    printf 'E2E_GUEST_CLASSES=%q\n' "$GUEST_CLASSES"
    printf 'E2E_IDLE=%q\n' "$IDLE"
    printf 'E2E_CORES=%q\n' "$CORES"
    printf 'E2E_ONLY=%q\n' "$ONLY"
    printf 'E2E_SUITE=%q\n' "${SUITE:-host}"
    printf 'E2E_USERLAND=%q\n' "$USERLAND"
    for kv in "$@"; do printf '%s=%q\n' "${kv%%=*}" "${kv#*=}"; done
  } > "$dir/params.env"
}
# TCG by default: /dev/kvm exists on some of our machines but nested KVM there
# stops the guest early with "KVM internal error ... emulation failure".
ACCEL=${E2E_ACCEL:-tcg,thread=multi}
case $ACCEL in kvm*) CPU=host ;; *) CPU=max ;; esac
SMP=${E2E_SMP:-2} MEM=${E2E_MEM:-4G}
# tsc=reliable: keep the TSC clocksource (the HPET fallback is an emulated MMIO
# read under QEMU's global lock, with no vDSO fast path)
APPEND="console=ttyS0 panic=-1 loglevel=4 e2e.init=$HERE/guest/init.sh tsc=reliable mitigations=off"
vm() { # results-dir [extra qemu args...] : sets QEMU, the command line of a guest with that results share
  local dir=$1; shift
  QEMU=(qemu-system-x86_64 -M q35 -accel "$ACCEL" -cpu "$CPU" -smp "$SMP" -m "$MEM"
    -nodefaults -no-user-config -display none -monitor none -serial stdio -no-reboot
    -kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND"
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
    -virtfs "local,path=$dir,mount_tag=results,security_model=none,multidevs=remap" "$@")
  # no -nic/-netdev: the guest has no network device, so no packet can leave it
  printf '%q ' "${QEMU[@]}" > "$dir/qemu-cmdline.txt"; echo >> "$dir/qemu-cmdline.txt"
}
run_vm() { # results-dir timeout [extra qemu args...] : runs $QEMU to its end; sets QRC (124: timeout)
  local dir=$1 to=$2; shift 2
  vm "$dir" "$@"
  run_qemu "$dir/console.log" "$to"
}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T_VM0=$(now_us)
QRC=0 GRC=0
touch "$OUT/results.tsv" "$OUT/bench.tsv" "$OUT/metrics.tsv"
if want nvmet || want tcp || want rdma || want spdk || want ana || want rbd || want fuzzrdma || want volumes || want qos || want auth || want tls || want bench; then
  params "$OUT"
  log "starting VM: accel=$ACCEL smp=$SMP mem=$MEM timeout=${VM_TIMEOUT}s (console -> $OUT/console.log)"
  run_vm "$OUT" "$VM_TIMEOUT"
  GRC=$(cat "$OUT/guest.rc" 2>/dev/null || echo missing)
  # a VM that timed out or died before the guest finished is one more failure
  if [ "$QRC" != 0 ] || [ "$GRC" = missing ]; then
    printf 'vm-run\tFAIL\tqemu rc=%s (124 = --timeout %ss hit), guest rc=%s\n' "$QRC" "$VM_TIMEOUT" "$GRC" >> "$OUT/results.tsv"
  fi
  # a guest script that failed without a failed check is one failure too
  if [ "$GRC" != 0 ] && [ "$GRC" != missing ] && ! awk -F'\t' '$2 == "FAIL" {f = 1} END {exit !f}' "$OUT/results.tsv"; then
    printf 'guest-script\tFAIL\tguest/suite.sh exited with %s and no failed check\n' "$GRC" >> "$OUT/results.tsv"
  fi
fi

# The power cut: two boots on one virtio disk (cache=directsync: every write the guest sends reaches
# the image file on this machine at once, the guest's own page cache is all that a SIGKILL loses).
# Boot 1 (guest/powercut.sh write) writes acknowledged records until PC_CUT_AFTER FUA records are
# acknowledged; then QEMU gets SIGKILL. Boot 2 (verify) reads every acknowledged record back.
if want powercut; then
  PCW=$OUT/powercut-write PCV=$OUT/powercut-verify DISK=$OUT/powercut-disk.img
  PCTAG=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
  rm -f "$DISK"; truncate -s 512M "$DISK"
  DRIVE=(-drive "file=$DISK,if=virtio,format=raw,cache=directsync")
  : > "$OUT/powercut.tsv"   # the scenario's rows in order: boot 1, the cut, boot 2
  pcrow() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$OUT/powercut.tsv"; }
  acked() { local n; n=$(grep -cE "^[0-9]+ ${1:-(dsync|fua)}$" "$PCW/acked.txt" 2>/dev/null); echo "${n:-0}"; }
  params "$PCW" E2E_SCRIPT=powercut.sh E2E_PC_MODE=write E2E_PC_TAG="$PCTAG"
  log "power cut, boot 1: writing records (tag $PCTAG), SIGKILL to QEMU after $PC_CUT_AFTER FUA records (console -> $PCW/console.log)"
  vm "$PCW" "${DRIVE[@]}"
  t0=$(now_us)
  "${QEMU[@]}" < /dev/null > >(stamp "$t0" | console "$PCW/console.log") 2>&1 &
  QPID=$!
  cut=""
  while kill -0 "$QPID" 2>/dev/null; do
    if [ "$(acked fua)" -ge "$PC_CUT_AFTER" ]; then cut=threshold; break; fi
    if [ $(( $(now_us) - t0 )) -gt $((PC_TIMEOUT * 1000000)) ]; then cut=timeout; break; fi
    sleep 0.2
  done
  tcut=$(fmt_s $(( $(now_us) - t0 )))
  kill -KILL "$QPID" 2>/dev/null || true
  wait "$QPID" 2>/dev/null || true
  sleep 0.5   # the console's last lines
  cat "$PCW/results.tsv" >> "$OUT/powercut.tsv" 2>/dev/null || true
  detail="$(acked) records acknowledged ($(acked dsync) dsync, $(acked fua) fua), fio fsync=1 $([ -f "$PCW/fio-done" ] && echo done || echo "not done")"
  case $cut in
    threshold) pcrow powercut/cut PASS "SIGKILL to QEMU pid $QPID ${tcut}s after its start, mid-write: $detail" ;;
    timeout) pcrow powercut/cut FAIL "fewer than $PC_CUT_AFTER FUA records after ${PC_TIMEOUT}s, killed anyway: $detail" ;;
    *) pcrow powercut/cut FAIL "the VM ended by itself before the cut (guest rc $(cat "$PCW/guest.rc" 2>/dev/null || echo missing)): $detail" ;;
  esac
  log "power cut after ${tcut}s: $detail"
  if [ "$(acked)" -gt 0 ]; then
    params "$PCV" E2E_SCRIPT=powercut.sh E2E_PC_MODE=verify E2E_PC_TAG="$PCTAG"
    cp "$PCW/acked.txt" "$PCV/acked.txt"; [ ! -f "$PCW/fio-done" ] || cp "$PCW/fio-done" "$PCV/"
    log "power cut, boot 2: reading the records back (console -> $PCV/console.log)"
    run_vm "$PCV" "$PC_TIMEOUT" "${DRIVE[@]}"
    g=$(cat "$PCV/guest.rc" 2>/dev/null || echo missing)
    cat "$PCV/results.tsv" >> "$OUT/powercut.tsv" 2>/dev/null || true
    if [ "$QRC" != 0 ] || [ "$g" = missing ]; then
      pcrow powercut/vm-verify FAIL "qemu rc=$QRC (124 = ${PC_TIMEOUT}s hit), guest rc=$g"
    elif [ "$g" != 0 ] && ! awk -F'\t' '$2 == "FAIL" {f = 1} END {exit !f}' "$PCV/results.tsv"; then
      pcrow powercut/guest-script FAIL "guest/powercut.sh exited with $g and no failed check"
    fi
  else
    pcrow powercut/verify SKIP "nothing was acknowledged before the cut"
  fi
  # the boots' checks and metrics join the suite's
  cat "$OUT/powercut.tsv" >> "$OUT/results.tsv"
  cat "$PCV/metrics.tsv" >> "$OUT/metrics.tsv" 2>/dev/null || true
  # the image is only kept when a check of the scenario failed
  awk -F'\t' '$2 == "FAIL" {f = 1} END {exit !f}' "$OUT/powercut.tsv" || rm -f "$DISK"
fi
T_VM1=$(now_us)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------- 6. verdict
count() { awk -F'\t' -v s="$1" '$2==s' "$OUT/results.tsv" | wc -l; }
NPASS=$(count PASS) NFAIL=$(count FAIL) NSKIP=$(count SKIP)
[ "$NPASS" -gt 0 ] || [ "$NFAIL" -gt 0 ] || NFAIL=1

{
  echo "# e2e summary ($(date -u +%FT%TZ), host $(uname -r), $(nproc) cpus)"
  echo "kernel	$KPKG $(cat "$KROOT/.pkgversion")"
  if [ -n "$USERLAND" ]; then echo "userland	$SUITE: $(tr '\n' ' ' < "$USERLAND/packages.txt")"; else echo "userland	this machine's"; fi
  echo "accel	$ACCEL cpu=$CPU smp=$SMP mem=$MEM kernel=$(basename "$KERNEL")"
  echo "qemu	$(qemu-system-x86_64 --version | head -1)"
  echo "jvm_opts	$JVM_OPTS"
  echo "idle_strategy	${IDLE:-backoff (bench part, java engine: busy)}"
  echo "cores	${CORES:-2 (bench part, java engine: 1)}"
  echo "host_loadavg_before_after	$LOAD0 / $LOAD1"
  echo "qemu_exit	$QRC"
  echo "guest_rc	$GRC"
  echo "host_prep_s	$(fmt_s $((T_PREP - T_START)))	(apt $(fmt_s $((T_APT - T_START))), build $(fmt_s $((T_BUILD - T_APT))))"
  echo "vm_wall_s	$(fmt_s $((T_VM1 - T_VM0)))"
  echo "total_wall_s	$(fmt_s $((T_VM1 - T_START)))"
  echo "## metrics (guest)"; cat "$OUT/metrics.tsv"
} > "$OUT/summary.tsv"

# results.json: checks, counts, and the nvmf4j/nvmet benchmark table
jq -n --rawfile checks "$OUT/results.tsv" --rawfile bench "$OUT/bench.tsv" --rawfile metrics "$OUT/metrics.tsv" \
  --arg kernel "$KPKG $(cat "$KROOT/.pkgversion")" --arg accel "$ACCEL" --arg jvm "$JVM_OPTS" \
  --argjson vm_wall "$(fmt_s $((T_VM1 - T_VM0)))" --argjson total "$(fmt_s $((T_VM1 - T_START)))" \
  --argjson p "$NPASS" --argjson f "$NFAIL" --argjson s "$NSKIP" '
  def rows($t): $t | split("\n") | map(select(length > 0 and (startswith("#") | not)) | split("\t"));
  def num: . as $x | (try tonumber catch $x);
  {summary: {passed: $p, failed: $f, skipped: $s},
   env: {kernel: $kernel, accel: $accel, jvm_opts: $jvm, vm_wall_s: $vm_wall, total_wall_s: $total},
   checks: [rows($checks)[] | {check: .[0], status: .[1], detail: (.[2] // "")}],
   benchmark: [rows($bench)[] | select(.[0] != "metric")
               | {metric: .[0], nvmf4j: (.[1] | num), nvmet: (.[2] | num), ratio_nvmf4j_over_nvmet: (.[3] | num)}],
   metrics: [rows($metrics)[] | {name: .[0], value: (.[1] | num), unit: (.[2] // "")}]}' > "$OUT/results.json" \
  || log "could not write results.json"

echo
log "checks:"
awk -F'\t' '{printf "  %-4s  %-40s %s\n", $2, $1, $3}' "$OUT/results.tsv"
if [ -s "$OUT/bench.tsv" ]; then
  log "fio 4k randread, nvmf4j vs kernel nvmet (same guest, same-sized RAM namespace):"
  awk -F'\t' '{printf "  %-28s %12s %12s %10s\n", $1, $2, $3, $4}' "$OUT/bench.tsv"
fi
if [ -s "$OUT/bench-rdma.tsv" ]; then
  log "fio 4k randread over RDMA (rxe), nvmf4j vs kernel nvmet:"
  awk -F'\t' '{printf "  %-28s %12s %12s %10s\n", $1, $2, $3, $4}' "$OUT/bench-rdma.tsv"
fi
if [ -s "$OUT/bench-guest.tsv" ]; then
  log "benchmark rows (fio in the guest, TCP and RDMA over rxe), target / kernel nvmet:"
  awk -F'\t' '{printf "  %-9s %-6s %-28s %12s %12s %10s\n", $1, $2, $3, $4, $5, $6}' "$OUT/bench-guest.tsv"
fi
log "VM $(fmt_s $((T_VM1 - T_VM0)))s, total $(fmt_s $((T_VM1 - T_START)))s; results in $OUT"
if [ "$NFAIL" -gt 0 ]; then
  log "FAILURE: qemu rc=$QRC guest rc=$GRC"
  echo "----- tail of $OUT/console.log"; tail -n 40 "$OUT/console.log" 2>/dev/null
  for f in nvmf4j-service.log spdk-service.log; do
    [ ! -s "$OUT/$f" ] || { echo "----- tail of $OUT/$f"; tail -n 40 "$OUT/$f"; }
  done
fi
echo "$NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]

#!/bin/bash
# Engine benchmark: SPDK's spdk_nvme_perf against NVMe/TCP targets on 127.0.0.1, one target core each, in
# one run: SPDK's standalone nvmf_tgt (-m 0x1, set up through its rpc.py), nvmf4j's spdk engine (coreMask
# 0x1), nvmf4j's java engine as this tree builds it (cores 1, the whole JVM pinned to core 0 with taskset)
# and, with --java-ref, the java engine as other commits build it (before/after in one run).
# spdk_nvme_perf runs on core 1. Every target exports the same malloc bdev (size, block size) with the
# same transport limits. Rounds interleave the targets (each round starts each target in turn, runs
# every row against it and stops it; the order rotates from round to round). The tables show the median
# of the rounds per cell and the best round: IOPS with the ratios target/nvmf_tgt (and java/java@ref),
# mean and p99 latency; with --sweep also 4 KiB random reads by queue depth, plotted (IOPS and p99
# latency against queue depth, one line per target) into qd-sweep.png. Numbers never make it fail.
#
# usage: fio-jobs/engines.sh [options]          (build first: mvn -q -DskipTests package)
#   --rounds N          rounds (default 3)
#   --time S            seconds per measurement (default 10)
#   --warmup S          spdk_nvme_perf warm-up before each measurement, seconds (default 2)
#   --syscalls          also count, in each measurement, the system calls of the target and of spdk_nvme_perf
#                       per I/O (Linux perf's syscall tracepoints, needs root and linux-perf): epoll, socket
#                       reads and writes, all; a table of the medians (syscalls.tsv holds every count)
#   --profile           also record, in each measurement, where the target's core and spdk_nvme_perf's core
#                       go: Linux perf samples both (cpu-clock, 999 Hz, call graphs; the JVM's JIT symbols
#                       from jcmd Compiler.perfmap) and fio-jobs/profile-categories.py sorts the samples into
#                       categories (system calls by kind, Netty, nvmf4j, copies, time, the JVM; SPDK's
#                       layers); per row a table of nanoseconds of each side's core per I/O by category,
#                       median of the rounds (profiles.tsv holds every count, profiles/ each recording's top
#                       leaf symbols)
#   --keep-perf-data    --profile, and keep each recording (profiles/round<N>-<target>-<row>-{target,host}.data,
#                       and a JVM target's perf map beside it) for perf report's call graphs
#   --io-path           also trace, for 1 s of each measurement, the system calls of the target and of
#                       spdk_nvme_perf together (Linux perf's raw_syscalls tracepoints, one clock): socket reads,
#                       writes and epoll waits that returned events; fio-jobs/io-path.py cuts each round trip of
#                       an I/O into segments (the host's send, to the target, the target's read, work and send,
#                       to the host, the host's reads and work) and a table shows the mean of each, median of the
#                       rounds (iopath.tsv holds every figure). For QD 1 rows: it assumes one I/O in flight
#   --interleave        start every target once and keep it: the targets not being measured are stopped
#                       (SIGSTOP: no CPU time), and each row is measured for every target in turn (the order
#                       rotating by round and row), so a row's figures of two targets lie seconds apart rather
#                       than minutes: the machine's drift cancels better in their ratio. Needs every target's
#                       memory at once (SPDK targets: --mem-mb each). See also the paired table below
#   --start-warmup S    after each target starts, S seconds of 4 KiB random reads and S of 4 KiB random
#                       writes at QD 32 that are not measured (default 4; every target gets it): a JVM target
#                       runs interpreted and compiles its hot paths in its first seconds, and without this
#                       the first row measured (QD 1) would measure the JIT, not the target
#   --rows LIST         comma-separated rows (default qd1,qd32,w4k,r128k,w128k): qd1 (4 KiB randread
#                       QD1), qd32 (4 KiB randread QD32), w4k (4 KiB randwrite QD32), w4k1 (4 KiB randwrite
#                       QD1), r128k (128 KiB randread QD8), w128k (128 KiB randwrite QD8), sr128k and sw128k
#                       (128 KiB sequential read and write, QD8); qdN: 4 KiB randread at QD N (1-128);
#                       qdNxP: the same over P I/O queue pairs (spdk_nvme_perf -P P, QD N in all; P 1-8)
#   --sweep             also 4 KiB random reads at queue depth 1, 2, 4, 8, 16, 32 and 64 (rows qdN; qd1
#                       and qd32 are measured once for both), a table and the plot qd-sweep.png
#   --sweep-qd LIST     the same with these queue depths (comma-separated, 1-128)
#   --targets LIST      comma-separated targets (default nvmf_tgt,spdk,java, then each --java-ref; with
#                       --tls nvmf_tgt,nvmf_tgt+tls,java,java+tls); also nvmf_tgt-2c (nvmf_tgt -m 0x3: two
#                       reactors) and java-2c (cores 2: two poll groups, the JVM on cores 0 and 1), for the
#                       scaling rows (qdNx2): they share core 1 with spdk_nvme_perf, so on a 2-core machine they
#                       show what a second core gives under that contention; their ratio columns are to the
#                       one-core target (java-2c/java); and java+c2h: the java engine with tcp
#                       c2hSuccessWithSqFlowControl, which ends a read with SUCCESS on its C2HData and no
#                       CapsuleResp as nvmf_tgt does for spdk_nvme_perf (a host that keeps SQ flow control on);
#                       with --disk also java+threads and nvmf_tgt+uring (see --disk); java+uring and java+nio:
#                       the java engine with socketIo io_uring (its poll groups and acceptor on Netty's io_uring
#                       transport; a target that falls back to epoll counts as not started) and nio, ratio
#                       columns over java (see --java-socket-io)
#   --java-socket-io L  the java engine once per socket I/O in L (comma-separated: epoll, io_uring, nio) where the
#                       targets name java: targets java (epoll), java+uring (io_uring) and java+nio (nio) in the
#                       same rounds, e.g. --java-socket-io epoll,io_uring for java and java+uring
#   --tls               NVMe/TCP TLS 1.3 with a PSK as well: targets nvmf_tgt+tls (SPDK's nvmf_tgt, listener
#                       --secure-channel, the host's PSK in its keyring: keyring_file_add_key,
#                       nvmf_subsystem_add_host --psk) and java+tls (listener secureChannel required,
#                       hostKeys[].tlsKey with tlsKeyDerivation rfc8446), spdk_nvme_perf with -S ssl
#                       --psk-path and a hostnqn; a SHA-256 PSK (TLS_AES_128_GCM_SHA256), made for the run.
#                       Plaintext nvmf_tgt and java in the same rounds; the ratios X+tls/X and
#                       java+tls/nvmf_tgt+tls. Default rows: qd32 and w4k
#   --java-ref REF      also the java engine built from git commit REF (repeatable, or comma-separated):
#                       a temporary git worktree of REF under the run's temporary directory, built with
#                       mvn -q -o -DskipTests package -pl mgmt-api -am before the lock is taken, removed at
#                       exit; target java@<short sha>, ratios to nvmf_tgt and java/java@<short sha>
#   --malloc-mb MB      malloc bdev size (default 256)
#   --block-size B      malloc bdev block size (default 4096; with --disk the namespace's block size)
#   --disk PATH         the disk rows: every target exports PATH instead of a malloc bdev, opened with O_DIRECT:
#                       nvmf_tgt through bdev_aio_create (libaio from its reactor), nvmf_tgt+uring through
#                       bdev_uring_create (only where SPDK was built with liburing), the spdk engine through its file
#                       bdev (SPDK's aio), java through its file bdev with directIo and ioEngine io_uring (each poll
#                       group's ring), java+threads the same with ioEngine threads (the worker threads). PATH is a
#                       regular file on a disk file system (made of --disk-mb MiB of zeros written with O_DIRECT when
#                       it does not exist; tmpfs refuses O_DIRECT) or a block device; THE WRITE ROWS OVERWRITE IT.
#                       Default rows: qd1,w4k1,qd32,w4k,sr128k,sw128k; default targets: nvmf_tgt,java,java+threads;
#                       implies --cpu
#   --disk-mb MB        size of the file --disk makes when PATH does not exist (default 2048)
#   --volumes           the volume rows (issue 35): instead of a malloc bdev each target exports volumes of a pool
#                       on an XFS file system (mkfs.xfs -m reflink=1) that the script makes on a loop device over a
#                       file and unmounts and detaches at exit: nvmf_tgt an SPDK lvol store (bdev_lvol_create_lvstore,
#                       4 MiB clusters) on an aio bdev over a file of that XFS, java (and java@<ref>) a reflink-dir
#                       pool (made through its REST API) in a directory of it. Each target, at each start, makes
#                       a thin volume (ns 1), a thick one (ns 2) and a volume it fills with sequential writes
#                       (ns 4) that it then snapshots and clones (the clone is ns 3: every first write to a
#                       block breaks sharing). Rows (the only ones allowed, default all three): vthin, vthick and
#                       vclone, 4 KiB random writes at QD 32 on ns 1, 2 and 3, from their first write (no
#                       --warmup; the start warm-up writes ns 4). A table adds each target's thin/thick and
#                       clone/thin. Default targets nvmf_tgt,java; needs root, mkfs.xfs, losetup and curl
#   --volume-mb MB      --volumes: the size of each volume (default 1024, a multiple of 4: whole lvol clusters);
#                       a row writes IOPS x --time x 4 KiB, so what share of its writes are first writes depends
#                       on this (the file system takes 6 x MB + 512 MiB, sparse)
#   --volumes-dir DIR   --volumes: where the file under the loop device goes (default the run's temporary
#                       directory under /tmp; removed at exit)
#   --cpu               also the target's CPU time per I/O: its process's user and system time (every thread, the
#                       kernel's io_uring workers and SPDK's aio completions included; interrupts not) over the
#                       measured seconds, divided by the I/Os; a table of the medians in us per I/O with the ratio
#                       to nvmf_tgt (cpu.tsv holds every figure). A polling target spends its core whether it has work
#                       or not (nvmf_tgt's reactor always, java with --java-idle busy), so where the disk bounds the
#                       IOPS its figure is its core over the IOPS; --java-idle backoff shows what java needs when it
#                       may sleep
#   --mem-mb MB         SPDK memory of nvmf_tgt and of the spdk engine (default 1024)
#   --perf-mem-mb MB    SPDK memory of spdk_nvme_perf (default 512)
#   --no-huge           ordinary memory for every SPDK process (the default is 2 MiB hugepages: as root
#                       the script reserves what is missing and mounts hugetlbfs on /dev/hugepages when
#                       none is mounted, and undoes both at exit; when it cannot, it says so and
#                       falls back to --no-huge for all)
#   --java-idle S       the java engine's idleStrategy (default busy: SPDK's reactors poll too)
#   --spdk-dir DIR      the SPDK build (default: $SPDK_DIR, else what spdk-jni/spdk-build.sh prints)
#   --lock FILE         hold flock FILE while measuring (e.g. the lock QEMU guests of this machine take)
#   --out DIR           results (default fio-jobs/out/engines, wiped first): raw.tsv (round target row
#                       iops mib_s mean_us p99_us), cpu.tsv (--cpu: round target row cpu_seconds seconds), table.txt
#                       (the printed tables), sweep.tsv and
#                       qd-sweep.png (--sweep; the plot needs gnuplot), logs/ (target, perf, build output)
#   --smoke             1 round, 2 s per measurement, no warm-up, row qd1, every target (CI; < 1 minute)
# Every measurement prints a progress line: [round 2/3] java qd32: 318252 IOPS, ... p99 ... us.
# Exit status: 0 when every measurement gave a number; 1 when a target did not start or a run failed
# (the table shows "-" there); 2 for a usage error, a missing build or a --java-ref that did not build.
# Needs root for hugepages; python3 for rpc.py; stops every process it started (by PID) and removes
# its temporary files and worktrees at exit.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "engines.sh: $*" >&2; exit 2; }
log() { printf '[engines %(%H:%M:%S)T] %s\n' -1 "$*"; }

ROUNDS=3 TIME=10 WARMUP=2 START_WARMUP=4 SYSCALLS="" PROFILE="" KEEP_PERF_DATA="" IO_PATH="" PROFILE_HZ=999 INTERLEAVE="" ROWS=qd1,qd32,w4k,r128k,w128k TARGETS="" MALLOC_MB=256 BS=4096 SWEEP="" REFS=""
MEM_MB=1024 PERF_MEM_MB=512 NO_HUGE=0 JAVA_IDLE=busy SPDK=${SPDK_DIR:-} LOCK="" OUT=$HERE/out/engines TLS=0
ROWS_SET=0 DISK="" DISK_MB=2048 CPU= VOLUMES="" VOLUME_MB=1024 VOLUMES_DIR="" JAVA_SOCKET_IO=""
while [ $# -gt 0 ]; do
  opt=$1 val=""; shift
  case $opt in
    --smoke|--no-huge|--sweep|--tls|--syscalls|--profile|--keep-perf-data|--io-path|--interleave|--cpu|--volumes|-h|--help) ;;
    --rounds|--time|--warmup|--start-warmup|--rows|--targets|--malloc-mb|--block-size|--mem-mb|--perf-mem-mb|--java-idle|--spdk-dir|--lock|--out|--sweep-qd|--java-ref|--disk|--disk-mb|--volume-mb|--volumes-dir|--java-socket-io)
      [ $# -gt 0 ] || die "$opt needs a value (see --help)"; val=$1; shift ;;
    *) die "unknown option $opt (see --help)" ;;
  esac
  case $opt in
    --rounds) ROUNDS=$val ;;
    --time) TIME=$val ;;
    --warmup) WARMUP=$val ;;
    --start-warmup) START_WARMUP=$val ;;
    --rows) ROWS=$val ROWS_SET=1 ;;
    --targets) TARGETS=$val ;;
    --malloc-mb) MALLOC_MB=$val ;;
    --block-size) BS=$val ;;
    --mem-mb) MEM_MB=$val ;;
    --perf-mem-mb) PERF_MEM_MB=$val ;;
    --no-huge) NO_HUGE=1 ;;
    --java-idle) JAVA_IDLE=$val ;;
    --java-socket-io) JAVA_SOCKET_IO=$val ;;
    --spdk-dir) SPDK=$val ;;
    --lock) LOCK=$val ;;
    --out) OUT=$val ;;
    --sweep) SWEEP=1,2,4,8,16,32,64 ;;
    --sweep-qd) SWEEP=$val ;;
    --java-ref) REFS+=${REFS:+,}$val ;;
    --syscalls) SYSCALLS=1 ;;
    --profile) PROFILE=1 ;;
    --keep-perf-data) PROFILE=1 KEEP_PERF_DATA=1 ;;
    --io-path) IO_PATH=1 ;;
    --interleave) INTERLEAVE=1 ;;
    --smoke) ROUNDS=1 TIME=2 WARMUP=0 START_WARMUP=0 ROWS=qd1 ROWS_SET=1 ;;
    --tls) TLS=1 ;;
    --disk) DISK=$val CPU=1 ;;
    --disk-mb) DISK_MB=$val ;;
    --cpu) CPU=1 ;;
    --volumes) VOLUMES=1 ;;
    --volume-mb) VOLUME_MB=$val ;;
    --volumes-dir) VOLUMES_DIR=$val ;;
    -h|--help) usage 0 ;;
  esac
done

[ "$TLS" = 0 ] || [ "$ROWS_SET" = 1 ] || ROWS=qd32,w4k
[ -z "$DISK" ] || [ "$ROWS_SET" = 1 ] || ROWS=qd1,w4k1,qd32,w4k,sr128k,sw128k
[ -z "$VOLUMES" ] || [ "$ROWS_SET" = 1 ] || ROWS=vthin,vthick,vclone
# the rows: name -> spdk_nvme_perf's -w -o -q, and the label of the tables; qdN: 4 KiB random reads at QD N
declare -A ROW_ARGS=([w4k]="randwrite 4096 32" [w4k1]="randwrite 4096 1" [r128k]="randread 131072 8"
  [w128k]="randwrite 131072 8" [sr128k]="read 131072 8" [sw128k]="write 131072 8")
declare -A ROW_LABEL=([w4k]="4k randwrite QD32" [w4k1]="4k randwrite QD1" [r128k]="128k randread QD8"
  [w128k]="128k randwrite QD8" [sr128k]="128k seq read QD8" [sw128k]="128k seq write QD8")
# --volumes: the volume rows, 4 KiB random writes at QD 32 on one namespace each (see start_volumes_*)
declare -A ROW_NS=([vthin]=1 [vthick]=2 [vclone]=3)
VOL_ORIGIN_NS=4       # the volume filled, snapshot and cloned; the start warm-up's namespace
ROW_ARGS+=([vthin]="randwrite 4096 32" [vthick]="randwrite 4096 32" [vclone]="randwrite 4096 32")
ROW_LABEL+=([vthin]="thin vol 4k rw QD32" [vthick]="thick vol 4k rw QD32" [vclone]="clone vol 4k rw QD32")
row_known() { # name : defines a qdN or qdNxP row on first use; false for an unknown name
  if [[ $1 =~ ^qd([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -le 128 ]; then
    ROW_ARGS[$1]="randread 4096 ${BASH_REMATCH[1]}" ROW_LABEL[$1]="4k randread QD${BASH_REMATCH[1]}"
  elif [[ $1 =~ ^qd([1-9][0-9]*)x([1-8])$ ]] && [ "${BASH_REMATCH[1]}" -le 128 ]; then
    ROW_ARGS[$1]="randread 4096 ${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
    ROW_LABEL[$1]="4k rr QD${BASH_REMATCH[1]} ${BASH_REMATCH[2]} qpairs"
  fi
  [ -n "${ROW_ARGS[$1]:-}" ]
}
for n in rounds:ROUNDS time:TIME malloc-mb:MALLOC_MB block-size:BS mem-mb:MEM_MB perf-mem-mb:PERF_MEM_MB disk-mb:DISK_MB volume-mb:VOLUME_MB; do
  v=${n#*:}
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${n%%:*} takes a positive whole number, not '${!v}'"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup takes whole seconds, not '$WARMUP'"
[[ $START_WARMUP =~ ^[0-9]+$ ]] || die "--start-warmup takes whole seconds, not '$START_WARMUP'"
[ $((BS & (BS - 1))) = 0 ] && [ "$BS" -ge 512 ] || die "--block-size must be a power of two of at least 512"
[ -z "$DISK" ] || [ "$BS" -ge 4096 ] || die "--disk needs --block-size 4096 or more (the java engine's directIo)"
IFS=, read -ra ROW_LIST <<< "$ROWS"
for r in "${ROW_LIST[@]}"; do row_known "$r" || die "unknown row '$r' (rows: qd1, qd32, w4k, w4k1, r128k, w128k, sr128k, sw128k, qdN with N 1-128, qdNxP with P 1-8; vthin, vthick, vclone with --volumes)"; done
if [ -n "$VOLUMES" ]; then   # every row writes one volume from its first write: each round must make them afresh
  [ -z "$DISK" ] || die "--volumes and --disk: one medium at a time"
  [ -z "$INTERLEAVE" ] || die "--volumes needs fresh volumes in every round, which --interleave does not give"
  [ "$TLS" = 0 ] && [ -z "$SWEEP" ] || die "--volumes runs its rows only (no --tls, no --sweep)"
  [ $((VOLUME_MB % 4)) = 0 ] || die "--volume-mb must be a multiple of 4 (whole 4 MiB lvol clusters), not $VOLUME_MB"
  [ "$BS" = 512 ] || [ "$BS" = 4096 ] || die "--volumes needs --block-size 512 or 4096 (a volume's block sizes)"
  for r in "${ROW_LIST[@]}"; do [ -n "${ROW_NS[$r]:-}" ] || die "--volumes runs the rows vthin, vthick and vclone only, not '$r'"; done
  [ -z "$VOLUMES_DIR" ] || [ -d "$VOLUMES_DIR" ] || die "--volumes-dir: no directory $VOLUMES_DIR"
else
  for r in "${ROW_LIST[@]}"; do [ -z "${ROW_NS[$r]:-}" ] || die "row '$r' writes a volume: it needs --volumes"; done
  [ -z "$VOLUMES_DIR" ] || die "--volumes-dir needs --volumes"
fi
SWEEP_LIST=()         # the sweep's rows, qdN by rising N; those not among the rows are measured after them
SWEEP_ONLY=()
if [ -n "$SWEEP" ]; then
  IFS=, read -ra qds <<< "$SWEEP"
  for q in $(printf '%s\n' "${qds[@]}" | sort -nu); do
    row_known "qd$q" || die "--sweep-qd takes queue depths 1-128, not '$q'"
    SWEEP_LIST+=("qd$q")
    [[ " ${ROW_LIST[*]} " == *" qd$q "* ]] || SWEEP_ONLY+=("qd$q")
  done
fi
TABLE_ROWS=("${ROW_LIST[@]}") ROW_LIST=("${ROW_LIST[@]}" "${SWEEP_ONLY[@]}")
ROWS=$(IFS=,; echo "${ROW_LIST[*]}")

# the targets: nvmf_tgt, spdk, java (this tree), java@<short sha> (a --java-ref); the root each nvmf4j
# target's launcher runs from
declare -A TARGET_ROOT=([spdk]=$ROOT [java]=$ROOT [java-2c]=$ROOT [java+tls]=$ROOT [java+c2h]=$ROOT [java+threads]=$ROOT
  [java+uring]=$ROOT [java+nio]=$ROOT) REF_OF=() REF_SHA=()
# the java engine's targets by socket I/O (--java-socket-io), and the socketIo each of them runs with
declare -A SOCKET_IO_TARGET=([epoll]=java [io_uring]=java+uring [nio]=java+nio)
declare -A TARGET_SOCKET_IO=([java+uring]=io_uring [java+nio]=nio)
REF_TARGETS=()
if [ -n "$REFS" ]; then
  git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1 || die "--java-ref needs a git checkout; $ROOT is none"
  IFS=, read -ra refs <<< "$REFS"
  for ref in "${refs[@]}"; do
    sha=$(git -C "$ROOT" rev-parse --verify -q "$ref^{commit}") || die "--java-ref: '$ref' is no commit of $ROOT"
    t=java@$(git -C "$ROOT" rev-parse --short=7 "$sha")
    [ -n "${REF_SHA[$t]:-}" ] && continue
    REF_OF[$t]=$ref REF_SHA[$t]=$sha REF_TARGETS+=("$t")
  done
fi
if [ -n "$TARGETS" ]; then IFS=, read -ra TARGET_LIST <<< "$TARGETS"
elif [ "$TLS" = 1 ]; then TARGET_LIST=(nvmf_tgt nvmf_tgt+tls java java+tls "${REF_TARGETS[@]}")
elif [ -n "$DISK" ]; then TARGET_LIST=(nvmf_tgt java java+threads "${REF_TARGETS[@]}")
elif [ -n "$VOLUMES" ]; then TARGET_LIST=(nvmf_tgt java "${REF_TARGETS[@]}")
else TARGET_LIST=(nvmf_tgt spdk java "${REF_TARGETS[@]}"); fi
if [ -n "$JAVA_SOCKET_IO" ]; then   # java, where the targets name it, once per socket I/O
  IFS=, read -ra ios <<< "$JAVA_SOCKET_IO"
  variants=()
  for io in "${ios[@]}"; do
    [ -n "${SOCKET_IO_TARGET[$io]:-}" ] || die "--java-socket-io takes epoll, io_uring and nio, not '$io'"
    [[ " ${variants[*]} " == *" ${SOCKET_IO_TARGET[$io]} "* ]] || variants+=("${SOCKET_IO_TARGET[$io]}")
  done
  [[ " ${TARGET_LIST[*]} " == *" java "* ]] || die "--java-socket-io: the targets (${TARGET_LIST[*]}) do not name java"
  expanded=()
  for t in "${TARGET_LIST[@]}"; do
    if [ "$t" = java ]; then expanded+=("${variants[@]}"); else expanded+=("$t"); fi
  done
  TARGET_LIST=("${expanded[@]}")
fi
for t in "${TARGET_LIST[@]}"; do
  case $t in
    nvmf_tgt|spdk|java|nvmf_tgt-2c|java-2c|nvmf_tgt+tls|java+tls|java+c2h|java+uring|java+nio) ;;
    java+threads|nvmf_tgt+uring) [ -n "$DISK" ] || die "target '$t' exports a disk: it needs --disk" ;;
    java@*) [ -n "${REF_SHA[$t]:-}" ] || die "target '$t' is no --java-ref of this run (their targets: ${REF_TARGETS[*]:-none})" ;;
    *) die "unknown target '$t' (targets: nvmf_tgt, spdk, java, nvmf_tgt-2c, java-2c, nvmf_tgt+tls, java+tls, java+c2h, java+uring, java+nio, java+threads and nvmf_tgt+uring with --disk, java@<short sha> of a --java-ref)" ;;
  esac
  [ -z "$VOLUMES" ] || [[ $t == nvmf_tgt || $t == java || $t == java@* ]] || die "--volumes: target '$t' has no volume rows (targets: nvmf_tgt, java, java@<short sha>)"
done
[ "${#ROW_LIST[@]}" -gt 0 ] && [ "${#TARGET_LIST[@]}" -gt 0 ] || die "no rows or no targets"
TARGETS=$(IFS=,; echo "${TARGET_LIST[*]}")
case $JAVA_IDLE in busy|backoff|interrupt) ;; *) die "--java-idle is busy, backoff or interrupt" ;; esac
[ "$(nproc)" -ge 2 ] || die "needs 2 cores (targets on core 0, spdk_nvme_perf on core 1); this machine has $(nproc)"
if [ -z "$SPDK" ]; then
  SPDK=$("$ROOT/spdk-jni/spdk-build.sh") || die "no SPDK build (spdk-jni/spdk-build.sh failed; set SPDK_DIR or --spdk-dir)"
fi
PERF=$SPDK/build/bin/spdk_nvme_perf NVMF_TGT=$SPDK/build/bin/nvmf_tgt RPC_PY=$SPDK/scripts/rpc.py
for f in "$PERF" "$NVMF_TGT" "$RPC_PY"; do [ -x "$f" ] || die "$f is missing (an SPDK build with its apps?)"; done
[ -d "$ROOT/mgmt-api/target/classes" ] && [ -d "$ROOT/mgmt-api/target/lib" ] ||
  die "no nvmf4j build under $ROOT/mgmt-api/target: build first (mvn -q -DskipTests package)"
command -v python3 > /dev/null && command -v taskset > /dev/null || die "needs python3 (rpc.py) and taskset"
[ -z "$SYSCALLS" ] || type -P perf > /dev/null || die "--syscalls needs Linux perf (apt-get install linux-perf)"
[ -z "$PROFILE" ] || type -P perf > /dev/null || die "--profile needs Linux perf (apt-get install linux-perf)"
[ -z "$IO_PATH" ] || type -P perf > /dev/null || die "--io-path needs Linux perf (apt-get install linux-perf)"
[ -z "$PROFILE" ] || type -P jcmd > /dev/null || die "--profile needs the JDK's jcmd (the JIT's symbols)"
if [ -n "$VOLUMES" ]; then
  [ "$(id -u)" = 0 ] || die "--volumes needs root (losetup, mount)"
  for c in mkfs.xfs losetup curl; do type -P $c > /dev/null || die "--volumes needs $c"; done
fi

TMP=$(mktemp -d)
PIDS=()              # every process this script started and has not yet seen exit
HUGE_RESTORE=""      # nr_hugepages to write back at exit
HUGE_MOUNTED=""      # the hugetlbfs mount point this script made
HUGE_MKDIR=0         # it also created that directory
HUGE_DIR=""          # the hugetlbfs SPDK uses
WORKTREES=()         # the git worktrees of --java-ref commits, removed at exit
VOL_IMG=""           # --volumes: the file under the loop device, removed at exit
VOL_LOOP=""          # the loop device this script attached, detached at exit
VOL_MNT=""           # where it mounted the XFS on it, unmounted at exit
NQN=nqn.2016-06.io.spdk:engines-bench
# the +tls targets' host and its PSK: interchange format (NVMeTLSkey-1:01:<base64 of key || CRC-32>:), mode
# 0600, no newline, drawn so that SPDK's host uses it (fio-jobs/tls-psk.py says why)
TLS_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6e766d66-346a-4a75-8000-0000000000e1 PSK=$TMP/host.psk
(umask 077; python3 "$HERE/tls-psk.py" "$TLS_HOSTNQN" "$NQN" > "$PSK") || die "cannot make the +tls PSK"
NR_HUGE=/proc/sys/vm/nr_hugepages

forget_pid() { # pid : no longer one to stop at exit
  local keep=() q
  for q in "${PIDS[@]}"; do [ "$q" = "$1" ] || keep+=("$q"); done
  PIDS=("${keep[@]}")
}

stop_pid() { # pid : SIGTERM, up to 20 s, then SIGKILL; forgets it; removes its hugepage files
  local p=$1 n=0
  if kill -0 "$p" 2> /dev/null; then
    kill -TERM "$p" 2> /dev/null
    kill -CONT "$p" 2> /dev/null     # --interleave stops targets between their measurements
    while kill -0 "$p" 2> /dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    kill -0 "$p" 2> /dev/null && { log "PID $p did not stop within 20 s: SIGKILL"; kill -KILL "$p" 2> /dev/null; }
  fi
  wait "$p" 2> /dev/null
  [ -n "$HUGE_DIR" ] && rm -f "$HUGE_DIR/spdk_pid${p}map_"* 2> /dev/null
  [ -z "$PROFILE" ] || rm -f "/tmp/perf-$p.map"
  forget_pid "$p"
}
cleanup() {
  local p
  trap - EXIT INT TERM
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
  if [ -n "$HUGE_MOUNTED" ]; then
    umount "$HUGE_MOUNTED" 2> /dev/null || log "could not unmount $HUGE_MOUNTED"
    [ "$HUGE_MKDIR" = 1 ] && rmdir "$HUGE_MOUNTED" 2> /dev/null
  fi
  if [ -n "$HUGE_RESTORE" ]; then
    echo "$HUGE_RESTORE" > "$NR_HUGE" 2> /dev/null && log "nr_hugepages back to $HUGE_RESTORE" ||
      log "could not restore nr_hugepages to $HUGE_RESTORE"
  fi
  for w in "${WORKTREES[@]}"; do
    git -C "$ROOT" worktree remove --force "$w" 2> /dev/null || log "could not remove the worktree $w"
  done
  [ ${#WORKTREES[@]} = 0 ] || git -C "$ROOT" worktree prune 2> /dev/null
  if [ -n "$VOL_MNT" ]; then umount "$VOL_MNT" 2> /dev/null && rmdir "$VOL_MNT" || log "could not unmount $VOL_MNT"; fi
  if [ -n "$VOL_LOOP" ]; then losetup -d "$VOL_LOOP" 2> /dev/null || log "could not detach $VOL_LOOP"; fi
  [ -z "$VOL_IMG" ] || rm -f "$VOL_IMG"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'log "interrupted: stopping what it started"; exit 130' INT TERM

mkdir -p "$OUT/logs" || die "cannot create $OUT"
rm -f "$OUT"/raw.tsv "$OUT"/cpu.tsv "$OUT"/table.txt "$OUT"/sweep.tsv "$OUT"/qd-sweep.png "$OUT"/logs/*

# --java-ref: each commit's java engine, built in a worktree of its own before the lock is taken (a build
# is no measurement); the arm64 libraries are left out (NVMF4J_AARCH64_CC names no compiler), SPDK is
# this run's
build_ref() { # target : sets TARGET_ROOT[target]; 1 when it did not build
  local t=$1 dir=$TMP/worktree-${1#java@} blog=$OUT/logs/build-$1.log p rc
  log "building $t (${REF_OF[$t]}: ${REF_SHA[$t]}) in a temporary worktree: mvn -q -o -DskipTests package -pl mgmt-api -am"
  git -C "$ROOT" worktree add --detach "$dir" "${REF_SHA[$t]}" > "$blog" 2>&1 || return 1
  WORKTREES+=("$dir")
  (cd "$dir" && SPDK_DIR=$SPDK NVMF4J_AARCH64_CC=no-aarch64-cc-for-a-benchmark \
     exec mvn -B -ntp -q -o -DskipTests package -pl mgmt-api -am) >> "$blog" 2>&1 &
  p=$!; PIDS+=("$p")
  wait "$p"; rc=$?
  forget_pid "$p"
  [ $rc = 0 ] && [ -d "$dir/mgmt-api/target/lib" ] && [ -x "$dir/bin/nvmf4j-target" ] || return 1
  TARGET_ROOT[$t]=$dir
}
for t in "${TARGET_LIST[@]}"; do
  [ -n "${REF_SHA[$t]:-}" ] || continue
  t0=$SECONDS
  build_ref "$t" || { tail -n 15 "$OUT/logs/build-$t.log" >&2; die "$t (--java-ref ${REF_OF[$t]}) did not build; log: $OUT/logs/build-$t.log"; }
  log "built $t in $((SECONDS - t0)) s"
done

# --disk: the file every target exports, made before the lock is taken (writing it is no measurement); a file
# bdev of the java engine may only open what storage allows: the file's directory, or the block device itself
BDEV=malloc0 DISK_STORAGE=""
if [ -n "$DISK" ]; then
  DISK=$(realpath -m -- "$DISK")
  if [ -b "$DISK" ]; then
    DISK_STORAGE="\"storage\": {\"blockDevices\": [\"$DISK\"]},"
  else
    [ -d "$(dirname "$DISK")" ] || die "--disk: no directory $(dirname "$DISK")"
    [ "$(stat -f -c %T "$(dirname "$DISK")")" != tmpfs ] || die "--disk: $(dirname "$DISK") is tmpfs, which refuses O_DIRECT; put the file on a disk"
    if [ ! -e "$DISK" ]; then
      log "writing $DISK_MB MiB of zeros to $DISK (O_DIRECT), so that reads find allocated blocks"
      dd if=/dev/zero of="$DISK" bs=1M count="$DISK_MB" oflag=direct conv=fsync status=none || { rm -f "$DISK"; die "--disk: cannot write $DISK"; }
    fi
    [ -f "$DISK" ] || die "--disk: $DISK is neither a regular file nor a block device"
    DISK_STORAGE="\"storage\": {\"fileDirectories\": [\"$(dirname "$DISK")\"]},"
  fi
  dd if="$DISK" of=/dev/null bs="$BS" count=1 iflag=direct status=none || die "--disk: $DISK cannot be read with O_DIRECT in $BS-byte blocks"
  DISK_BYTES=$(blockdev --getsize64 "$DISK" 2> /dev/null || stat -c %s "$DISK")
  [ "$DISK_BYTES" -ge $((BS * 1024)) ] || die "--disk: $DISK holds $DISK_BYTES bytes, too few"
  BDEV=disk0
fi

# --volumes: the XFS (reflink=1) the pools live on, on a loop device over a sparse file, made before the lock is
# taken. It holds one target's volumes at a time (5 volumes' worth: thin, thick, the filled one's snapshot, its
# own writes after the snapshot (the start warm-up), the clone; the lvol store's file a little more) and is
# emptied at each start (see volumes_reset)
if [ -n "$VOLUMES" ]; then
  VOL_IMG=$(mktemp "${VOLUMES_DIR:-$TMP}/nvmf4j-volumes.XXXXXX.img") || die "--volumes: cannot make a file in ${VOLUMES_DIR:-$TMP}"
  truncate -s $((6 * VOLUME_MB + 512))M "$VOL_IMG" || die "--volumes: cannot size $VOL_IMG"
  VOL_LOOP=$(losetup --find --show "$VOL_IMG") || { VOL_LOOP=""; die "--volumes: losetup cannot attach $VOL_IMG"; }
  mkfs.xfs -q -m reflink=1 "$VOL_LOOP" > "$OUT/logs/mkfs.xfs.log" 2>&1 || die "--volumes: mkfs.xfs -m reflink=1 failed (see $OUT/logs/mkfs.xfs.log)"
  mkdir "$TMP/volumes" && mount -t xfs "$VOL_LOOP" "$TMP/volumes" || die "--volumes: cannot mount $VOL_LOOP"
  VOL_MNT=$TMP/volumes
  log "volumes: XFS (reflink=1) of $((6 * VOLUME_MB + 512)) MiB on $VOL_LOOP (over $VOL_IMG) at $VOL_MNT"
fi

# the lock first: hugepages are reserved only while this run may measure
if [ -n "$LOCK" ]; then
  exec {LOCK_FD}>> "$LOCK" || die "cannot open $LOCK"
  if ! flock -n "$LOCK_FD"; then
    log "waiting for $LOCK"; t0=$SECONDS
    flock "$LOCK_FD" & p=$!; PIDS+=("$p")      # in the background, so that a signal ends the wait
    wait "$p"; forget_pid "$p"
    log "got $LOCK after $((SECONDS - t0)) s"
  fi
fi

# ---------------------------------------------------------------------------------------------- memory
meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
huge_setup() { # reserves 2 MiB pages and finds (or mounts) hugetlbfs; returns 1 with a reason in WHY
  local need have total mnt
  WHY=""
  [ "$(meminfo Hugepagesize)" = 2048 ] || { WHY="the default hugepage size is not 2 MiB"; return 1; }
  local spdk_targets=1 t
  if [ -n "$INTERLEAVE" ]; then   # every SPDK target (nvmf_tgt*, spdk) holds its memory for the whole run
    spdk_targets=0
    for t in "${TARGET_LIST[@]}"; do [[ $t == nvmf_tgt* || $t == spdk ]] && spdk_targets=$((spdk_targets + 1)); done
  fi
  need=$(( (spdk_targets * MEM_MB + PERF_MEM_MB) / 2 + 64 ))     # the targets' and perf's memory, plus slack
  have=$(meminfo HugePages_Free)
  if [ "${have:-0}" -lt "$need" ]; then
    [ -w "$NR_HUGE" ] || { WHY="$((need - ${have:-0})) more 2 MiB pages needed and $NR_HUGE is not writable (not root?)"; return 1; }
    total=$(cat "$NR_HUGE")
    HUGE_RESTORE=$total
    echo $((total + need - have)) > "$NR_HUGE" 2> /dev/null
    have=$(meminfo HugePages_Free)
    [ "${have:-0}" -ge "$need" ] || { WHY="asked for $need free 2 MiB pages, the kernel gave $have"; return 1; }
    log "reserved 2 MiB pages: nr_hugepages $total -> $(cat "$NR_HUGE") (restored at exit)"
  fi
  mnt=$(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)
  if [ -z "$mnt" ]; then
    mnt=/dev/hugepages
    [ -d $mnt ] || { mkdir -p $mnt 2> /dev/null && HUGE_MKDIR=1; }
    mount -t hugetlbfs -o pagesize=2M nodev $mnt 2> "$TMP/mount.err" ||
      { WHY="no hugetlbfs mounted and mounting one on $mnt failed: $(cat "$TMP/mount.err")"; return 1; }
    HUGE_MOUNTED=$mnt
    log "mounted hugetlbfs on $mnt (unmounted at exit)"
  fi
  HUGE_DIR=$mnt
}
HUGE=0
if [ "$NO_HUGE" = 0 ]; then
  if huge_setup; then HUGE=1
  else
    log "NOTE: no hugepages ($WHY): every SPDK process runs with --no-huge (ordinary memory)"
    [ -n "$HUGE_RESTORE" ] && { echo "$HUGE_RESTORE" > "$NR_HUGE"; HUGE_RESTORE=""; }
  fi
fi
if [ $HUGE = 1 ]; then MEM_ARGS=() MEMORY="2 MiB hugepages"
else MEM_ARGS=(--no-huge) MEMORY="ordinary memory (--no-huge)"; fi

# ---------------------------------------------------------------------------------------------- targets
free_port() { python3 "$HERE/lib/free_port.py" "$@"; }
rpc() { PYTHONPATH=$SPDK/python PATH=/usr/bin:$PATH "$RPC_PY" -s "$SPDK_SOCK" -t 30 "$@" >> "$LOG" 2>&1; }
wait_for() { # pid seconds command... : until the command succeeds; 1 when the pid died or time ran out
  local p=$1 n=$(($2 * 10)); shift 2
  until "$@"; do
    kill -0 "$p" 2> /dev/null || return 1
    n=$((n - 1)); [ $n -gt 0 ] || return 1
    sleep 0.1
  done
}

start_nvmf_tgt() { # mask [tls|uring] : sets TPID; 1 when it did not come up
  rm -f "$SPDK_SOCK"
  # no core lock: another SPDK process of this machine may hold core 0's (the spdk engine's test JVMs)
  "$NVMF_TGT" -m "$1" --disable-cpumask-locks -u "${MEM_ARGS[@]}" -s "$MEM_MB" -r "$SPDK_SOCK" >> "$LOG" 2>&1 &
  TPID=$!; PIDS+=("$TPID")
  wait_for "$TPID" 30 test -S "$SPDK_SOCK" || return 1
  rpc framework_wait_init &&
  rpc nvmf_create_transport -t TCP -q 128 -m 8 -c 8192 -i 131072 || return 1
  if [ -n "$VOLUMES" ]; then start_volumes_nvmf_tgt; return; fi
  if [ -z "$DISK" ]; then rpc bdev_malloc_create -b malloc0 "$MALLOC_MB" "$BS" || return 1
  elif [ "${2:-}" = uring ]; then rpc bdev_uring_create "$DISK" disk0 "$BS" || return 1
  else rpc bdev_aio_create "$DISK" disk0 "$BS" || return 1; fi
  if [ "${2:-}" = tls ]; then
    rpc keyring_file_add_key psk0 "$PSK" &&
    rpc nvmf_create_subsystem "$NQN" -s ENGINESBENCH0001 -d nvmf_tgt &&
    rpc nvmf_subsystem_add_ns "$NQN" "$BDEV" &&
    rpc nvmf_subsystem_add_listener "$NQN" -t tcp -f ipv4 -a 127.0.0.1 -s "$PORT" --secure-channel &&
    rpc nvmf_subsystem_add_host "$NQN" "$TLS_HOSTNQN" --psk psk0
  else
    rpc nvmf_create_subsystem "$NQN" -a -s ENGINESBENCH0001 -d nvmf_tgt &&
    rpc nvmf_subsystem_add_ns "$NQN" "$BDEV" &&
    rpc nvmf_subsystem_add_listener "$NQN" -t tcp -f ipv4 -a 127.0.0.1 -s "$PORT"
  fi
}

# --volumes: the volumes of one target's start. volumes_reset empties the file system (only one target runs at a
# time); fill_origin writes every block of namespace 4 once (sequential 128 KiB writes, as many as the namespace
# holds); volumes_settled writes the dirty pages of the whole machine back (the fill's, an earlier row's, the
# previous target's deletes), so that a row's writes do not share the disk with them
volumes_reset() { find "$VOL_MNT" -mindepth 1 -delete; }
fill_origin() {
  local p rc
  log "$ROUND_TAG $TARGET_STARTING: filling volume vorigin (ns $VOL_ORIGIN_NS, $VOLUME_MB MiB)"
  "$PERF" -c 0x2 "${MEM_ARGS[@]}" -s "$PERF_MEM_MB" -w write -o 131072 -q 8 -d 100% -t 600 \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN ns:$VOL_ORIGIN_NS" >> "$LOG" 2>&1 &
  p=$!; PIDS+=("$p")
  wait "$p"; rc=$?
  forget_pid "$p"
  [ $rc = 0 ] || log "$ROUND_TAG $TARGET_STARTING: filling vorigin failed (spdk_nvme_perf status $rc)"
  return $rc
}
volumes_settled() { sync; }
# nvmf_tgt: an lvol store "lvs" (SPDK's default 4 MiB clusters) on an aio bdev over a file of the XFS: the same
# file system and device as the java engine's pool (a malloc base bdev would give SPDK RAM where java has a
# file system); lvols thin (-t), thick and vorigin (thin, filled), bdev_lvol_snapshot of vorigin, bdev_lvol_clone
start_volumes_nvmf_tgt() {
  local f=$VOL_MNT/lvs.img
  volumes_reset
  truncate -s $((5 * VOLUME_MB + VOLUME_MB / 8 + 64))M "$f" &&
  rpc bdev_aio_create "$f" aio0 "$BS" &&
  rpc bdev_lvol_create_lvstore aio0 lvs &&
  rpc bdev_lvol_create -l lvs -t vthin "$VOLUME_MB" &&
  rpc bdev_lvol_create -l lvs vthick "$VOLUME_MB" &&
  rpc bdev_lvol_create -l lvs -t vorigin "$VOLUME_MB" &&
  rpc nvmf_create_subsystem "$NQN" -a -s ENGINESBENCH0001 -d nvmf_tgt &&
  rpc nvmf_subsystem_add_ns -n "$VOL_ORIGIN_NS" "$NQN" lvs/vorigin &&
  rpc nvmf_subsystem_add_listener "$NQN" -t tcp -f ipv4 -a 127.0.0.1 -s "$PORT" &&
  fill_origin &&
  rpc bdev_lvol_snapshot lvs/vorigin vsnap &&
  rpc bdev_lvol_clone lvs/vsnap vclone &&
  rpc nvmf_subsystem_add_ns -n "${ROW_NS[vthin]}" "$NQN" lvs/vthin &&
  rpc nvmf_subsystem_add_ns -n "${ROW_NS[vthick]}" "$NQN" lvs/vthick &&
  rpc nvmf_subsystem_add_ns -n "${ROW_NS[vclone]}" "$NQN" lvs/vclone &&
  volumes_settled
}
# java: a reflink-dir pool "vp" in a directory of the XFS, made through the REST API as an operator would (the
# same volumes, snapshot and clone as nvmf_tgt's), the namespaces added the same way
api() { # method path [json] : one call to the target's REST API; 1 (and the answer in the log) when it fails
  local out rc body=()
  [ -z "${3:-}" ] || body=(-H 'Content-Type: application/json' -d "$3")
  out=$(curl -sS -X "$1" -H "Authorization: Bearer $API_TOKEN" "${body[@]}" -w ' [%{http_code}]' \
    "http://127.0.0.1:$API_PORT$2" 2>&1); rc=$?
  echo "api $1 $2 ${3:-}: $(tr -s ' \n' ' ' <<< "$out")" >> "$LOG"
  [ $rc = 0 ] && [[ $out =~ \[2[0-9][0-9]\]$ ]]
}
start_volumes_java() {
  local size=$((VOLUME_MB * 1048576)) ns=/api/v1/subsystems/$NQN/namespaces vols=/api/v1/pools/vp/volumes
  mkdir "$VOL_MNT/vp" &&
  api POST /api/v1/pools "{\"name\": \"vp\", \"kind\": \"reflink-dir\", \"path\": \"$VOL_MNT/vp\"}" &&
  api POST $vols "{\"name\": \"vthin\", \"size\": $size, \"blockSize\": $BS}" &&
  api POST $vols "{\"name\": \"vthick\", \"size\": $size, \"blockSize\": $BS, \"thick\": true}" &&
  api POST $vols "{\"name\": \"vorigin\", \"size\": $size, \"blockSize\": $BS}" &&
  api POST "$ns" "{\"nsid\": $VOL_ORIGIN_NS, \"bdev\": \"vp/vorigin\"}" &&
  fill_origin &&
  api POST $vols/vorigin/snapshots '{"name": "vsnap"}' &&
  api POST $vols/vorigin/snapshots/vsnap/clone '{"name": "vclone"}' &&
  api POST "$ns" "{\"nsid\": ${ROW_NS[vthin]}, \"bdev\": \"vp/vthin\"}" &&
  api POST "$ns" "{\"nsid\": ${ROW_NS[vthick]}, \"bdev\": \"vp/vthick\"}" &&
  api POST "$ns" "{\"nsid\": ${ROW_NS[vclone]}, \"bdev\": \"vp/vclone\"}" &&
  volumes_settled
}

start_nvmf4j() { # target : sets TPID; 1 when it did not come up
  local engine=${1%%[@+]*} state=$TMP/state-${1/@/-} root=${TARGET_ROOT[$1]} extra hosts='"allowAnyHost": true,'
  local secure="" cores=1 cpus=0
  [ "$1" = java-2c ] && engine=java cores=2 cpus=0,1
  local c2h="" socket_io=${TARGET_SOCKET_IO[$1]:-}
  [ "$1" = java+c2h ] && c2h=', "c2hSuccessWithSqFlowControl": true'
  if [[ $1 == *+tls ]]; then
    hosts="\"allowAnyHost\": false, \"hosts\": [\"$TLS_HOSTNQN\"], \"hostKeys\": [{\"host\": \"$TLS_HOSTNQN\", \"tlsKey\": \"$PSK\", \"tlsKeyDerivation\": \"rfc8446\"}],"
    secure=', "secureChannel": "required"'
  fi
  rm -rf "$state"; mkdir -p "$state"
  if [ "$engine" = spdk ]; then
    extra="\"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $MEM_MB, \"hugepages\": $([ $HUGE = 1 ] && echo true || echo false)},"
  else
    extra="\"cores\": $cores, \"idleStrategy\": \"$JAVA_IDLE\","
    [ -z "$socket_io" ] || extra+=" \"socketIo\": \"$socket_io\","
  fi
  local bdev="{\"name\": \"malloc0\", \"type\": \"malloc\", \"blockSize\": $BS, \"numBlocks\": $((MALLOC_MB * 1048576 / BS))}"
  if [ -n "$DISK" ]; then   # the whole file or device, O_DIRECT; the java engine's path by target (see --disk)
    local io=""
    [ "$engine" = java ] && io=", \"ioEngine\": \"$([ "$1" = java+threads ] && echo threads || echo io_uring)\""
    bdev="{\"name\": \"disk0\", \"type\": \"file\", \"blockSize\": $BS, \"numBlocks\": 0, \"path\": \"$DISK\", \"directIo\": true$io}"
    extra+=" $DISK_STORAGE"
  fi
  local namespaces="{\"nsid\": 1, \"bdev\": \"$BDEV\"}" api='{"port": 0}'
  if [ -n "$VOLUMES" ]; then   # no bdev: the volumes and their namespaces come through the API once it is up
    volumes_reset
    bdev="" namespaces="" API_PORT=$(free_port) API_TOKEN=engines-bench-$RANDOM$RANDOM$RANDOM
    api="{\"port\": $API_PORT, \"token\": \"$API_TOKEN\"}"
    extra+=" \"storage\": {\"fileDirectories\": [\"$VOL_MNT\"]},"
  fi
  # the transport limits of nvmf_tgt's nvmf_create_transport above (-q 128 -m 8 -c 8192 -i 131072)
  cat > "$state/config.json" << EOF
{"engine": "$engine", $extra
 "tcp": {"inCapsuleDataSize": 8192, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072$c2h},
 "bdevs": [$bdev],
 "subsystems": [{"nqn": "$NQN", $hosts "serial": "ENGINESBENCH0001",
   "namespaces": [$namespaces],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT$secure}]}],
 "api": $api}
EOF
  if [ "$engine" = java ]; then # the whole JVM on core 0: one core, like the SPDK targets' reactor (java-2c: 0, 1)
    taskset -c "$cpus" "$root/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  else
    "$root/bin/nvmf4j-target" --state-dir "$state" --config "$state/config.json" >> "$LOG" 2>&1 &
  fi
  TPID=$!; PIDS+=("$TPID")      # bin/nvmf4j-target and taskset exec: this is the JVM
  wait_for "$TPID" 60 grep -q "listening on tcp 127.0.0.1:$PORT " "$LOG" || return 1
  if [ -n "$socket_io" ]; then   # the poll groups on what was asked for, not on a fallback (the start's last line)
    wait_for "$TPID" 30 grep -q "target up: " "$LOG" || return 1
    grep "target up: " "$LOG" | tail -n 1 | grep -q ", $socket_io\$" || {
      log "$ROUND_TAG $1: not on $socket_io: $(grep -o 'target up: .*' "$LOG" | tail -n 1)"; return 1; }
  fi
  if [ -n "$VOLUMES" ]; then
    wait_for "$TPID" 60 curl -sf -o /dev/null "http://127.0.0.1:$API_PORT/api/v1/health/ready" && start_volumes_java
  fi
}

# perf rw size qd[/qpairs] seconds warmup : one spdk_nvme_perf run on core 1, with its latency histogram
# (-L), over TLS when TLS_PERF is set, on namespace PERF_NS alone when set (else on every namespace); sets RES to
# "iops mib_s mean_us p99_us" (empty when it failed)
TLS_PERF="" PERF_NS=""
perf() {
  local p rc tls=() host="" qd=${3%/*} np=1
  [[ $3 == */* ]] && np=${3#*/}
  RES=""
  [ -z "$TLS_PERF" ] || { tls=(-S ssl --psk-path "$PSK"); host=" hostnqn:$TLS_HOSTNQN"; }
  local lb=()          # --syscalls watches for the start of the I/O in its output: line-buffered
  [ -z "$SYSCALLS$PROFILE$IO_PATH" ] || lb=(stdbuf -oL)
  "${lb[@]}" "$PERF" -c 0x2 "${MEM_ARGS[@]}" -s "$PERF_MEM_MB" -w "$1" -o "$2" -q "$qd" -P "$np" -t "$4" -a "$5" -L "${tls[@]}" \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN$host${PERF_NS:+ ns:$PERF_NS}" > "$TMP/perf.out" 2>&1 &
  p=$!; PIDS+=("$p")
  local c=""
  if [ -n "$SYSCALLS" ] && [ -n "${ROW:-}" ]; then count_syscalls "$p" "$4" "$5" & c=$!; fi
  local pr=""
  if [ -n "$PROFILE" ] && [ -n "${ROW:-}" ]; then record_profile "$p" "$4" "$5" & pr=$!; fi
  local ip=""
  if [ -n "$IO_PATH" ] && [ -n "${ROW:-}" ]; then record_io_path "$p" "$4" "$5" & ip=$!; fi
  local cp=""
  if [ -n "$CPU" ] && [ -n "${ROW:-}" ]; then sample_cpu "$4" "$5" & cp=$!; fi
  wait "$p"; rc=$?
  forget_pid "$p"
  [ -z "$cp" ] || wait "$cp"
  [ -z "$c" ] || wait "$c"
  [ -z "$pr" ] || wait "$pr"
  [ -z "$ip" ] || wait "$ip"
  cat "$TMP/perf.out" >> "$LOG"
  [ $rc = 0 ] || return 0
  # "Total : IOPS MiB/s Average min max", then -L's "Summary latency data" with lines " 99.00000% :  45.123us"
  RES=$(awk '$1 == "Total" && $2 == ":" && $3 > 0 {t = sprintf("%.2f %.2f %.2f", $3, $4, $5)}
             $1 == "99.00000%" && $2 == ":" {sub(/us$/, "", $3); p = sprintf("%.2f", $3)}
             END {if (t != "") print t, (p == "" ? "-" : p)}' "$TMP/perf.out")
}

# sample_cpu SECONDS WARMUP: with --cpu, once spdk_nvme_perf has begun its I/O and its warm-up is over, the
# target's ($TPID) user + system time over SECONDS - 1 seconds (/proc/PID/stat: every thread of the process, those
# that ended included); appends "round target row cpu_seconds seconds" to cpu.tsv
cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$TPID/stat" 2> /dev/null; }
sample_cpu() {
  local w=$(( $1 > 2 ? $1 - 1 : 1 )) i a b t0 t1 hz
  hz=$(getconf CLK_TCK)
  for ((i = 0; i < 200; i++)); do grep -q "Initialization complete" "$TMP/perf.out" 2> /dev/null && break; sleep 0.05; done
  sleep "$2"; sleep 0.3
  a=$(cpu_ticks) t0=$(date +%s.%N)
  sleep "$w"
  b=$(cpu_ticks) t1=$(date +%s.%N)
  [ -n "$a" ] && [ -n "$b" ] || return 0
  awk -v pre="$ROUND_NO	$TARGET	$ROW" -v a="$a" -v b="$b" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
    'BEGIN {printf "%s\t%.3f\t%.3f\n", pre, (b - a) / hz, t1 - t0}' >> "$OUT/cpu.tsv"
}

# count_syscalls PERF_PID SECONDS WARMUP: with --syscalls, once spdk_nvme_perf has begun its I/O and its
# warm-up is over, counts for SECONDS - 1 seconds the system calls of the target ($TPID) and of spdk_nvme_perf,
# each by Linux perf's tracepoints; appends "round target row side event count seconds" to syscalls.tsv
SYSCALL_EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait
SYSCALL_EVENTS+=,syscalls:sys_enter_read,syscalls:sys_enter_readv,syscalls:sys_enter_recvfrom,syscalls:sys_enter_recvmsg
SYSCALL_EVENTS+=,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_sendto,syscalls:sys_enter_sendmsg
count_syscalls() {
  local w=$(( $2 > 2 ? $2 - 1 : 1 )) i side pid
  for ((i = 0; i < 200; i++)); do grep -q "Initialization complete" "$TMP/perf.out" 2> /dev/null && break; sleep 0.05; done
  sleep "$3"; sleep 0.3
  command perf stat -x, -e "$SYSCALL_EVENTS" -p "$TPID" -o "$TMP/sc-target.csv" -- sleep "$w" 2> /dev/null &
  command perf stat -x, -e "$SYSCALL_EVENTS" -p "$1" -o "$TMP/sc-host.csv" -- sleep "$w" 2> /dev/null
  wait
  for side in target host; do
    awk -F, -v pre="$ROUND_NO	$TARGET	$ROW	$side" -v w="$w" '$3 ~ /sys_enter/ && $1 ~ /^[0-9]+$/ {
        e = $3; sub(/^.*sys_enter_?/, "", e); if (e == "") e = "all"; printf "%s\t%s\t%s\t%s\n", pre, e, $1, w }' \
      "$TMP/sc-$side.csv" >> "$OUT/syscalls.tsv"
  done
}

# record_profile PERF_PID SECONDS WARMUP: with --profile, once spdk_nvme_perf has begun its I/O and its
# warm-up is over, samples the target ($TPID) and spdk_nvme_perf for SECONDS - 1 seconds into
# $TMP/profile-target.data and $TMP/profile-host.data (see profile_row); the seconds recorded go to
# $TMP/profile.seconds
record_profile() {
  local w=$(( $2 > 2 ? $2 - 1 : 1 )) i rc=0 side
  rm -f "$TMP"/profile-*.data "$TMP"/profile-*.err "$TMP/profile.seconds"
  for ((i = 0; i < 200; i++)); do grep -q "Initialization complete" "$TMP/perf.out" 2> /dev/null && break; sleep 0.05; done
  sleep "$3"; sleep 0.3
  # perf record's status is not the test: it is not 0 when the process it samples ends inside the window (a slow
  # machine's spdk_nvme_perf that finishes early), and the samples taken until then are written all the same
  command perf record -e cpu-clock -F "$PROFILE_HZ" -g -p "$TPID" -o "$TMP/profile-target.data" -- sleep "$w" > "$TMP/profile-target.err" 2>&1 &
  command perf record -e cpu-clock -F "$PROFILE_HZ" -g -p "$1" -o "$TMP/profile-host.data" -- sleep "$w" > "$TMP/profile-host.err" 2>&1 || rc=1
  wait $! || rc=1
  for side in target host; do
    grep -q "Captured and wrote .*([1-9][0-9]* samples)" "$TMP/profile-$side.err" 2> /dev/null ||
      { log "perf record of the $side wrote no samples: $(tr '\n' ' ' < "$TMP/profile-$side.err" 2> /dev/null)"; return 0; }
  done
  [ $rc = 0 ] || log "perf record ended with a status other than 0 (a sampled process ended inside the window); its samples are used"
  echo "$w" > "$TMP/profile.seconds"
}

# record_io_path PERF_PID SECONDS WARMUP: with --io-path, once spdk_nvme_perf has begun its I/O and its
# warm-up is over, traces for 1 s the socket reads and writes (entry and exit) and the epoll waits that
# returned events (exit) of the target ($TPID) and spdk_nvme_perf into $TMP/iopath.data (see io_path_row);
# the two PIDs go to $TMP/iopath.pids
IO_RW="id == 0 || id == 1 || id == 17 || id == 18 || id == 19 || id == 20 || id == 44 || id == 45 || id == 46 || id == 47 || id == 295 || id == 296"
IO_POLL="id == 7 || id == 23 || id == 232 || id == 281 || id == 441"
record_io_path() {
  local i
  rm -f "$TMP/iopath.data" "$TMP/iopath.pids"
  for ((i = 0; i < 200; i++)); do grep -q "Initialization complete" "$TMP/perf.out" 2> /dev/null && break; sleep 0.05; done
  sleep "$3"; sleep 0.3
  # perf's status is not 0 when spdk_nvme_perf ends inside the second (a loaded machine); what it wrote is used
  command perf record -q -m 2048 -e raw_syscalls:sys_enter --filter "$IO_RW" \
      -e raw_syscalls:sys_exit --filter "$IO_RW || ($IO_POLL) && ret > 0" \
      -p "$TPID,$1" -o "$TMP/iopath.data" -- sleep 1 > /dev/null 2>&1 ||
    log "perf record (system calls) ended with a status other than 0 (a traced process ended inside the second)"
  [ -s "$TMP/iopath.data" ] && echo "$1 $TPID" > "$TMP/iopath.pids"
}

# io_path_row: after a measurement with --io-path, the round trip's segments (fio-jobs/io-path.py) appended
# to iopath.tsv as "round target row segment mean_ns median_ns repetitions"
io_path_row() {
  [ -s "$TMP/iopath.pids" ] || { log "[round $ROUND_NO/$ROUNDS] $TARGET $ROW: no system-call trace recorded"; return 0; }
  local pids
  read -ra pids < "$TMP/iopath.pids"
  command perf script --ns -F pid,tid,time,event,trace -i "$TMP/iopath.data" 2> /dev/null |
    python3 "$HERE/io-path.py" "${pids[0]}" "${pids[1]}" 2>> "$LOG" |
    awk -F'\t' -v pre="$ROUND_NO	$TARGET	$ROW" '{printf "%s\t%s\t%s\t%s\t%s\n", pre, $1, $2, $3, $4}' >> "$OUT/iopath.tsv"
  rm -f "$TMP/iopath.data" "$TMP/iopath.pids"
}

# profile_row: after a measurement with --profile, the JIT's symbols of a JVM target (jcmd Compiler.perfmap,
# /tmp/perf-<pid>.map, removed when the target stops), then each side's samples by category appended to
# profiles.tsv as "round target row side category samples hz seconds", and its top leaf symbols to profiles/
profile_row() {
  [ -s "$TMP/profile.seconds" ] || { log "[round $ROUND_NO/$ROUNDS] $TARGET $ROW: no profile recorded"; return 0; }
  local w side name
  w=$(cat "$TMP/profile.seconds")
  [[ $TARGET == nvmf_tgt* ]] || jcmd "$TPID" Compiler.perfmap > /dev/null 2>&1 || log "jcmd $TPID Compiler.perfmap failed: Java frames stay unnamed"
  mkdir -p "$OUT/profiles"
  for side in target host; do
    name=$OUT/profiles/round$ROUND_NO-$TARGET-$ROW-$side.txt
    command perf script -F comm,tid,ip,sym,dso -i "$TMP/profile-$side.data" 2> /dev/null |
      python3 "$HERE/profile-categories.py" --top 30 > "$name"
    awk -F'\t' -v pre="$ROUND_NO $TARGET $ROW $side" -v hz="$PROFILE_HZ" -v w="$w" \
      'BEGIN {gsub(/ /, "\t", pre)} $1 != "top" {printf "%s\t%s\t%s\t%s\t%s\n", pre, $1, $2, hz, w}' "$name" >> "$OUT/profiles.tsv"
  done
  if [ -n "$KEEP_PERF_DATA" ]; then
    for side in target host; do
      mv "$TMP/profile-$side.data" "$OUT/profiles/round$ROUND_NO-$TARGET-$ROW-$side.data"
    done
    [[ $TARGET == nvmf_tgt* ]] || cp "/tmp/perf-$TPID.map" "$OUT/profiles/round$ROUND_NO-$TARGET-$ROW-perf-$TPID.map" 2> /dev/null || true
  fi
  rm -f "$TMP"/profile-*.data "$TMP/profile.seconds"
}

# ---------------------------------------------------------------------------------------------- measure
log "SPDK $SPDK; memory: $MEMORY ($MEM_MB MiB per target, $PERF_MEM_MB MiB for spdk_nvme_perf)"
log "$ROUNDS round(s) x ${#TARGET_LIST[@]} target(s) (${TARGET_LIST[*]}) x ${#ROW_LIST[@]} row(s) (${ROW_LIST[*]}), ${TIME} s each after ${WARMUP} s warm-up (and ${START_WARMUP} s of reads and of writes after each start); $(if [ -n "$DISK" ]; then echo "disk $DISK ($DISK_BYTES bytes, O_DIRECT)"; elif [ -n "$VOLUMES" ]; then echo "volumes of $VOLUME_MB MiB"; else echo "malloc $MALLOC_MB MiB"; fi), ${BS}-byte blocks"
printf 'round\ttarget\trow\tiops\tmib_s\tmean_us\tp99_us\n' > "$OUT/raw.tsv"
[ -z "$SYSCALLS" ] || printf 'round\ttarget\trow\tside\tsyscall\tcount\tseconds\n' > "$OUT/syscalls.tsv"
[ -z "$PROFILE" ] || printf 'round\ttarget\trow\tside\tcategory\tsamples\thz\tseconds\n' > "$OUT/profiles.tsv"
[ -z "$IO_PATH" ] || printf 'round\ttarget\trow\tsegment\tmean_ns\tmedian_ns\trepetitions\n' > "$OUT/iopath.tsv"
[ -z "$CPU" ] || printf 'round\ttarget\trow\tcpu_seconds\tseconds\n' > "$OUT/cpu.tsv"
FAILED=0
start_target() { # target : starts it on a free port (PORT, LOG, TPID, SPDK_SOCK), then its start warm-up; 1 when it did not come up
  local t=$1 up
  PORT=$(free_port) TPID="" SPDK_SOCK=$TMP/spdk-$t.sock TARGET_STARTING=$t
  : > "$LOG"
  log "$ROUND_TAG $t: starting on 127.0.0.1:$PORT$([ -z "${REF_SHA[$t]:-}" ] || echo " (${REF_OF[$t]})")"
  TLS_PERF=""; [[ $t != *+tls ]] || TLS_PERF=1
  case $t in
    nvmf_tgt) start_nvmf_tgt 0x1 ;;
    nvmf_tgt-2c) start_nvmf_tgt 0x3 ;;
    nvmf_tgt+tls) start_nvmf_tgt 0x1 tls ;;
    nvmf_tgt+uring) start_nvmf_tgt 0x1 uring ;;
    *) start_nvmf4j "$t" ;;
  esac
  up=$?
  if [ $up = 0 ] && [ "$START_WARMUP" -gt 0 ]; then     # not measured: see --start-warmup
    [ -z "$VOLUMES" ] || PERF_NS=$VOL_ORIGIN_NS            # not the volumes the rows measure from their first write
    perf randread 4096 32 "$START_WARMUP" 0
    perf randwrite 4096 32 "$START_WARMUP" 0
    PERF_NS=""
  fi
  if [ $up != 0 ]; then
    log "$ROUND_TAG $t did not start; the end of $LOG:"; tail -n 8 "$LOG" | sed 's/^/    /'
  fi
  return $up
}
measure() { # round target row up(0|1) : one measurement of a started target (up 0) into raw.tsv
  local round=$1 t=$2 r=$3 up=$4 res iops mibs lat p99 warmup=$WARMUP
  RES="" ROUND_NO=$round TARGET=$t ROW=$r PERF_NS=${ROW_NS[$r]:-}
  # a volume row measures from the volume's first write, and after the earlier rows' dirty pages are written back
  [ -z "$PERF_NS" ] || { warmup=0; [ "$up" = 0 ] && volumes_settled; }
  # shellcheck disable=SC2086 # ROW_ARGS holds three words
  [ "$up" = 0 ] && perf ${ROW_ARGS[$r]} "$TIME" "$warmup"
  # no number from a target that is up: spdk_nvme_perf failed or completed nothing in its time (a cold JVM on a
  # loaded machine, seen at QD1 right after a start with --smoke's 2 s and no warm-up); measured once more, said so
  if [ "$up" = 0 ] && [ -z "$RES" ]; then
    log "[round $round/$ROUNDS] $t $r: spdk_nvme_perf gave no number (its output: $(tail -n 2 "$TMP/perf.out" | tr '\n' ' ')); measuring once more"
    [ -z "$PERF_NS" ] || log "[round $round/$ROUNDS] $t $r: (its volume is no longer fresh: the first attempt wrote to it)"
    # shellcheck disable=SC2086 # ROW_ARGS holds three words
    perf ${ROW_ARGS[$r]} "$TIME" "$warmup"
  fi
  PERF_NS=""
  [ "$up" = 0 ] && [ -n "$PROFILE" ] && profile_row
  [ "$up" = 0 ] && [ -n "$IO_PATH" ] && io_path_row
  ROW=""
  res=$RES
  if [ -z "$res" ]; then
    FAILED=1
    [ "$up" = 0 ] && log "[round $round/$ROUNDS] $t $r: spdk_nvme_perf gave no number (see $LOG)"
    res="- - - -"
  else
    read -r iops mibs lat p99 <<< "$res"
    log "[round $round/$ROUNDS] $t $r: ${iops%.*} IOPS, $mibs MiB/s, mean $lat us, p99 $p99 us (${ROW_LABEL[$r]})"
  fi
  printf '%s\t%s\t%s\t%s\n' "$round" "$t" "$r" "${res// /$'\t'}" >> "$OUT/raw.tsv"
}
if [ -z "$INTERLEAVE" ]; then
  for ((round = 1; round <= ROUNDS; round++)); do
    n=${#TARGET_LIST[@]}
    for ((i = 0; i < n; i++)); do
      t=${TARGET_LIST[$(( (i + round - 1) % n ))]}    # the order rotates: each target leads a round
      LOG=$OUT/logs/round$round-$t.log ROUND_TAG="[round $round/$ROUNDS]"
      start_target "$t"; up=$?
      for r in "${ROW_LIST[@]}"; do measure "$round" "$t" "$r" "$up"; done
      [ -n "$TPID" ] && stop_pid "$TPID"
    done
  done
else
  # --interleave: every target up at once, all but the one measured stopped (SIGSTOP: a stopped SPDK reactor
  # or JVM takes no CPU time); a row is measured for each target in turn, the order rotating by round and row
  declare -A TPIDS=() UP=() LOGS=() PORTS=() SOCKS=()
  for t in "${TARGET_LIST[@]}"; do
    LOG=$OUT/logs/$t.log ROUND_TAG="[start]"
    start_target "$t"; UP[$t]=$?
    TPIDS[$t]=$TPID LOGS[$t]=$LOG PORTS[$t]=$PORT SOCKS[$t]=$SPDK_SOCK
    [ -n "$TPID" ] && kill -STOP "$TPID" 2> /dev/null
  done
  n=${#TARGET_LIST[@]} k=0
  for ((round = 1; round <= ROUNDS; round++)); do
    for r in "${ROW_LIST[@]}"; do
      for ((i = 0; i < n; i++)); do
        t=${TARGET_LIST[$(( (i + k) % n ))]}
        TPID=${TPIDS[$t]} LOG=${LOGS[$t]} PORT=${PORTS[$t]} SPDK_SOCK=${SOCKS[$t]}
        TLS_PERF=""; [[ $t != *+tls ]] || TLS_PERF=1
        [ -n "$TPID" ] && kill -CONT "$TPID" 2> /dev/null
        measure "$round" "$t" "$r" "${UP[$t]}"
        [ -n "$TPID" ] && kill -STOP "$TPID" 2> /dev/null
      done
      k=$((k + 1))
    done
  done
  for t in "${TARGET_LIST[@]}"; do [ -n "${TPIDS[$t]}" ] && stop_pid "${TPIDS[$t]}"; done
fi
[ -n "$LOCK" ] && exec {LOCK_FD}>&-

# ---------------------------------------------------------------------------------------------- tables
# per target, row and column: the median of the rounds (the mean of the middle two for an even count), or
# the best round (highest IOPS, lowest latency): on a shared machine interference only ever slows a run,
# so the best round estimates what a target can do and the median what it typically did.
#   iops: IOPS of every target, the ratios target/nvmf_tgt and java/java@<ref>, "spdk within 5 %"
#   lat: mean / p99 latency of every target
#   sweep: the sweep's rows as "qd iops p99 ..." per target (sweep.tsv, the plot's data)
stats() { # median|best iops|lat|sweep
  awk -F'\t' -v stat="$1" -v mode="$2" -v rows="$(IFS=,; echo "${TABLE_ROWS[*]}")" -v targets="$TARGETS" \
      -v sweep="${SWEEP_LIST[*]}" -v labels="$(for r in "${TABLE_ROWS[@]}"; do printf '%s,' "${ROW_LABEL[$r]}"; done)" '
    function pick(k, low,   n, v, i, j, x) { # the median or the best of the rounds of one cell
      n = split(vals[k], v, " "); if (n == 0) return ""
      for (i = 2; i <= n; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
      if (stat == "best") return low ? v[1] : v[n]
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function w(s, n) { return length(s) > n ? length(s) : n }
    function ratio(a, b) { return (b > 0 && a != "") ? sprintf("%.3f", a / b) : "-" }
    NR > 1 { for (c = 4; c <= 7; c++) if ($c != "-") vals[$2 SUBSEP $3 SUBSEP c] = vals[$2 SUBSEP $3 SUBSEP c] " " $c
             if ($4 != "-") ri[$1 SUBSEP $2 SUBSEP $3] = $4; if ($1 > nround) nround = $1 }
    function paired(a, b, row,   n, v, i, j, x, k) { # median [lower quartile, upper quartile] of the rounds ratios a/b
      n = 0
      for (i = 1; i <= nround; i++) if ((i SUBSEP a SUBSEP row) in ri && ri[i SUBSEP b SUBSEP row] > 0) v[++n] = ri[i SUBSEP a SUBSEP row] / ri[i SUBSEP b SUBSEP row]
      if (n == 0) return "-"
      for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
      k = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      return n < 4 ? sprintf("%.3f (%d)", k, n) : sprintf("%.3f [%.3f, %.3f]", k, v[int((n + 3) / 4)], v[n + 1 - int((n + 3) / 4)])
    }
    END {
      nr = split(rows, R, ","); nt = split(targets, T, ","); split(labels, L, ","); ns = split(sweep, S, " ")
      for (r = 1; r <= nr + ns; r++) for (t = 1; t <= nt; t++) {
        k = T[t] SUBSEP (r <= nr ? R[r] : S[r - nr])
        iops[k] = pick(k SUBSEP 4, 0); mean[k] = pick(k SUBSEP 6, 1); p99[k] = pick(k SUBSEP 7, 1)
        has[T[t]] = 1
      }
      if (mode == "sweep") {
        printf "qd"; for (t = 1; t <= nt; t++) printf "\t%s_iops\t%s_p99_us", T[t], T[t]; printf "\n"
        for (s = 1; s <= ns; s++) {
          printf "%s", substr(S[s], 3)
          for (t = 1; t <= nt; t++) {
            k = T[t] SUBSEP S[s]
            printf "\t%s\t%s", iops[k] == "" ? "-" : sprintf("%.0f", iops[k]), p99[k] == "" ? "-" : sprintf("%.1f", p99[k])
          }
          printf "\n"
        }
        exit
      }
      # the ratio columns: every target over nvmf_tgt, then java over each java@<ref>
      nq = 0
      for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt" && T[t] !~ /\+tls$/ && has["nvmf_tgt"]) { nq++; QA[nq] = T[t]; QB[nq] = "nvmf_tgt"; QH[nq] = T[t] "/tgt" }
      for (t = 1; t <= nt; t++) if (T[t] ~ /-2c$/ && has[substr(T[t], 1, length(T[t]) - 3)]) {
        nq++; QA[nq] = T[t]; QB[nq] = substr(T[t], 1, length(T[t]) - 3); QH[nq] = T[t] "/" QB[nq]
      }
      for (t = 1; t <= nt; t++) if (T[t] ~ /^java@/ && has["java"]) { nq++; QA[nq] = "java"; QB[nq] = T[t]; QH[nq] = "java/" T[t] }
      # TLS: each +tls target over its plaintext self, and java+tls over nvmf_tgt+tls; java+c2h over java
      for (t = 1; t <= nt; t++) if (T[t] ~ /\+(tls|c2h)$/ && has[substr(T[t], 1, length(T[t]) - 4)]) {
        nq++; QA[nq] = T[t]; QB[nq] = substr(T[t], 1, length(T[t]) - 4); QH[nq] = T[t] "/" QB[nq]
      }
      if (has["java+tls"] && has["nvmf_tgt+tls"]) { nq++; QA[nq] = "java+tls"; QB[nq] = "nvmf_tgt+tls"; QH[nq] = "java+tls/tgt+tls" }
      # --disk: io_uring over the worker threads (after over before)
      if (has["java"] && has["java+threads"]) { nq++; QA[nq] = "java"; QB[nq] = "java+threads"; QH[nq] = "java/java+threads" }
      # --java-socket-io: the java engine on io_uring or NIO over the same on epoll
      for (t = 1; t <= nt; t++) if (T[t] ~ /^java\+(uring|nio)$/ && has["java"]) { nq++; QA[nq] = T[t]; QB[nq] = "java"; QH[nq] = T[t] "/java" }
      if (mode == "paired") {
        printf "%-20s", "row"; for (q = 1; q <= nq; q++) printf " | %-21s", QH[q]; printf "\n"
        for (r = 1; r <= nr; r++) { printf "%-20s", L[r]; for (q = 1; q <= nq; q++) printf " | %-21s", paired(QA[q], QB[q], R[r]); printf "\n" }
        exit
      }
      printf "%-20s", "row"
      for (t = 1; t <= nt; t++) printf " | %-*s", (mode == "iops" ? w(T[t], 10) : w(T[t], 19)), T[t]
      if (mode == "iops") {
        for (q = 1; q <= nq; q++) printf " | %-*s", w(QH[q], 8), QH[q]
        if (has["spdk"] && has["nvmf_tgt"]) printf " | spdk within 5 %%"
      }
      printf "\n"
      for (r = 1; r <= nr; r++) {
        printf "%-20s", L[r]
        for (t = 1; t <= nt; t++) {
          k = T[t] SUBSEP R[r]
          if (mode == "iops") printf " | %*s", w(T[t], 10), iops[k] == "" ? "-" : sprintf("%.0f", iops[k])
          else printf " | %*s", w(T[t], 19), mean[k] == "" ? "-" : sprintf("%8.1f / %8s", mean[k], p99[k] == "" ? "-" : sprintf("%.1f", p99[k]))
        }
        if (mode != "iops") { printf "\n"; continue }
        for (q = 1; q <= nq; q++) printf " | %-*s", w(QH[q], 8), ratio(iops[QA[q] SUBSEP R[r]], iops[QB[q] SUBSEP R[r]])
        if (has["spdk"] && has["nvmf_tgt"]) {
          base = iops["nvmf_tgt" SUBSEP R[r]]; x = iops["spdk" SUBSEP R[r]]
          if (base <= 0 || x == "") verdict = "-"
          else if (x / base < 0.95) verdict = sprintf("NO (%.1f %% slower)", (1 - x / base) * 100)
          else if (x / base > 1.05) verdict = sprintf("yes (%.1f %% faster)", (x / base - 1) * 100)
          else verdict = "yes"
          printf " | %s", verdict
        }
        printf "\n"
      }
    }' "$OUT/raw.tsv"
}
# the awk function both tables take the median of the rounds with: med(key) of the numbers in vals[key]
# (space-separated), "-" for none; the mean of the middle two for an even count
AWK_MEDIAN='
    function med(k,   n, v, i, j, x) {
      n = split(vals[k], v, " "); if (n == 0) return "-"
      for (i = 2; i <= n; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }'
# per_io_awk PROGRAM FILE: awk over raw.tsv, whose IOPS it keeps in iops[round, target, row], then PROGRAM over FILE
# (its header line skipped), with the rows, targets and their labels (rows, targets, labels) and med() at hand
per_io_awk() {
  awk -F'\t' -v rows="$(IFS=,; echo "${ROW_LIST[*]}")" -v targets="$TARGETS" \
      -v labels="$(for r in "${ROW_LIST[@]}"; do printf '%s,' "${ROW_LABEL[$r]}"; done)" "$AWK_MEDIAN"'
    FNR == 1 { f++; next }
    f == 1 { if ($4 != "-") iops[$1 SUBSEP $2 SUBSEP $3] = $4; next }'"$1" "$OUT/raw.tsv" "$2"
}
# syscall_table: from syscalls.tsv and raw.tsv, per row and target the median over the rounds of each side's
# system calls per I/O (count / (IOPS x seconds counted)): all, epoll_wait+epoll_pwait, read+readv+recvfrom+
# recvmsg, write+writev+sendto+sendmsg
syscall_table() {
  per_io_awk '
    function med2(k,   x) { x = med(k); return x == "-" ? x : sprintf("%.2f", x) }
    {
      io = iops[$1 SUBSEP $2 SUBSEP $3] * $7; if (io <= 0) next
      g = $5 == "all" ? "all" : $5 ~ /^epoll/ ? "poll" : $5 ~ /^(read|readv|recvfrom|recvmsg)$/ ? "rd" : "wr"
      sum[$1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP g] += $6 / io; seen[$1 SUBSEP $2 SUBSEP $3] = 1
    }
    END {
      for (k in seen) { split(k, a, SUBSEP); for (s = 1; s <= 2; s++) for (gi = 1; gi <= 4; gi++) {
        side = s == 1 ? "target" : "host"; g = gi == 1 ? "all" : gi == 2 ? "poll" : gi == 3 ? "rd" : "wr"
        vals[a[2] SUBSEP a[3] SUBSEP side SUBSEP g] = vals[a[2] SUBSEP a[3] SUBSEP side SUBSEP g] " " (sum[k SUBSEP side SUBSEP g] + 0) } }
      nr = split(rows, R, ","); nt = split(targets, T, ","); split(labels, L, ",")
      printf "%-20s %-14s | %-31s | %s\n", "row", "target", "target: all / epoll / rd / wr", "spdk_nvme_perf: all / epoll / rd / wr"
      for (r = 1; r <= nr; r++) for (t = 1; t <= nt; t++) {
        b = T[t] SUBSEP R[r] SUBSEP
        printf "%-20s %-14s | %6s / %6s / %6s / %6s | %6s / %6s / %6s / %6s\n", L[r], T[t],
          med2(b "target" SUBSEP "all"), med2(b "target" SUBSEP "poll"), med2(b "target" SUBSEP "rd"), med2(b "target" SUBSEP "wr"),
          med2(b "host" SUBSEP "all"), med2(b "host" SUBSEP "poll"), med2(b "host" SUBSEP "rd"), med2(b "host" SUBSEP "wr")
      }
    }' "$OUT/syscalls.tsv"
}
# volume_table: with --volumes, per kind of volume (thin, thick, fresh clone) each target's IOPS (median of the
# rounds) and each target's over nvmf_tgt's; then per target thin/thick and clone/thin, the median of each round's
# ratio (the two rows measured on the same start of the target)
volume_table() {
  awk -F'\t' -v targets="$TARGETS" "$AWK_MEDIAN"'
    function f(x, p) { return x == "-" || x == "" ? "-" : sprintf(p, x) }
    NR == 1 || $4 == "-" { next }
    { iops[$1 SUBSEP $2 SUBSEP $3] = $4; vals[$2 SUBSEP $3] = vals[$2 SUBSEP $3] " " $4; if ($1 > nr) nr = $1 }
    END {
      nt = split(targets, T, ","); split("vthin vthick vclone", K, " "); split("thin thick clone", N, " ")
      for (t = 1; t <= nt; t++) for (i = 1; i <= nr; i++) {
        a = iops[i SUBSEP T[t] SUBSEP "vthin"]; b = iops[i SUBSEP T[t] SUBSEP "vthick"]; c = iops[i SUBSEP T[t] SUBSEP "vclone"]
        if (a > 0 && b > 0) vals[T[t] SUBSEP "thin/thick"] = vals[T[t] SUBSEP "thin/thick"] " " a / b
        if (a > 0 && c > 0) vals[T[t] SUBSEP "clone/thin"] = vals[T[t] SUBSEP "clone/thin"] " " c / a
      }
      printf "%-11s", "volume"; for (t = 1; t <= nt; t++) printf " | %12s", T[t]
      for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt") printf " | %12s", T[t] "/tgt"
      printf "\n"
      for (k = 1; k <= 3; k++) {
        printf "%-11s", N[k] " IOPS"; base = med("nvmf_tgt" SUBSEP K[k])
        for (t = 1; t <= nt; t++) printf " | %12s", f(med(T[t] SUBSEP K[k]), "%.0f")
        for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt") { x = med(T[t] SUBSEP K[k])
          printf " | %12s", (base == "-" || x == "-") ? "-" : sprintf("%.3f", x / base) }
        printf "\n"
      }
      split("thin/thick clone/thin", Q, " ")
      for (q = 1; q <= 2; q++) {
        printf "%-11s", Q[q]; for (t = 1; t <= nt; t++) printf " | %12s", f(med(T[t] SUBSEP Q[q]), "%.3f"); printf "\n"
      }
    }' "$OUT/raw.tsv"
}
# cpu_table: from cpu.tsv and raw.tsv, per row and target the median over the rounds of the target's CPU time per
# I/O in us (cpu_seconds / (IOPS x seconds)), and each target's over nvmf_tgt's
cpu_table() {
  per_io_awk '
    {
      io = iops[$1 SUBSEP $2 SUBSEP $3] * $5; if (io <= 0) next
      vals[$2 SUBSEP $3] = vals[$2 SUBSEP $3] " " ($4 / io * 1e6)
    }
    END {
      nr = split(rows, R, ","); nt = split(targets, T, ","); split(labels, L, ",")
      printf "%-20s", "row"; for (t = 1; t <= nt; t++) printf " | %12s", T[t]
      for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt") printf " | %12s", T[t] "/tgt"
      printf "\n"
      for (r = 1; r <= nr; r++) {
        printf "%-20s", L[r]
        for (t = 1; t <= nt; t++) { x = med(T[t] SUBSEP R[r]); c[t] = x; printf " | %12s", x == "-" ? x : sprintf("%.2f", x) }
        base = med("nvmf_tgt" SUBSEP R[r])
        for (t = 1; t <= nt; t++) if (T[t] != "nvmf_tgt") printf " | %12s", (base == "-" || base <= 0 || c[t] == "-") ? "-" : sprintf("%.3f", c[t] / base)
        printf "\n"
      }
    }' "$OUT/cpu.tsv"
}
# with --profile: per row and side (the target's core, spdk_nvme_perf's core), nanoseconds per I/O by category
# (samples / Hz / (IOPS x seconds recorded)), median of the rounds, the categories by their largest value;
# "all" is the core's whole time per I/O, "busy" the same less the epoll waits (a polling process's idle time)
profile_table() {
  per_io_awk '
    {
      io = iops[$1 SUBSEP $2 SUBSEP $3] * $8; if (io <= 0) next
      ns = $6 / $7 / io * 1e9; k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
      cell[k SUBSEP $5] += ns; all[k] += ns; if ($5 !~ /epoll wait/) busy[k] += ns
      runs[k] = 1; cats[$3 SUBSEP $4 SUBSEP $5] = 1
    }
    END {
      for (k in runs) {
        split(k, a, SUBSEP); b = a[2] SUBSEP a[3] SUBSEP a[4] SUBSEP
        vals[b "all"] = vals[b "all"] " " all[k]; vals[b "busy"] = vals[b "busy"] " " busy[k]
      }
      for (kc in cats) { split(kc, c, SUBSEP); for (k in runs) { split(k, a, SUBSEP); if (a[3] != c[1] || a[4] != c[2]) continue
        b = a[2] SUBSEP a[3] SUBSEP a[4] SUBSEP c[3]; vals[b] = vals[b] " " (cell[k SUBSEP c[3]] + 0) } }
      nr = split(rows, R, ","); nt = split(targets, T, ","); split(labels, L, ",")
      for (r = 1; r <= nr; r++) for (s = 1; s <= 2; s++) {
        side = s == 1 ? "target" : "host"
        nc = 0; delete C; delete M
        for (kc in cats) { split(kc, c, SUBSEP); if (c[1] != R[r] || c[2] != side) continue
          m = 0; for (t = 1; t <= nt; t++) { x = med(T[t] SUBSEP R[r] SUBSEP side SUBSEP c[3]); if (x != "-" && x > m) m = x }
          C[++nc] = c[3]; M[nc] = m }
        if (nc == 0) continue
        for (i = 2; i <= nc; i++) { x = M[i]; y = C[i]; for (j = i - 1; j >= 1 && M[j] < x; j--) { M[j + 1] = M[j]; C[j + 1] = C[j] } M[j + 1] = x; C[j + 1] = y }
        printf "\n%-58s", L[r] ", " (s == 1 ? "the target" : "spdk_nvme_perf") ": ns per I/O"
        for (t = 1; t <= nt; t++) printf " | %12s", T[t]; printf "\n"
        for (i = 0; i <= nc + 1; i++) {
          name = i == 0 ? "all (the core per I/O)" : i == 1 ? "busy (all less epoll waits)" : C[i - 1]
          key = i == 0 ? "all" : i == 1 ? "busy" : C[i - 1]
          printf "%-58s", (i >= 2 ? "  " : "") name
          for (t = 1; t <= nt; t++) { x = med(T[t] SUBSEP R[r] SUBSEP side SUBSEP key); printf " | %12s", x == "-" ? "-" : sprintf("%.0f", x) }
          printf "\n"
        }
      }
    }' "$OUT/profiles.tsv"
}
{
  echo
  echo "spdk_nvme_perf on core 1 over NVMe/TCP 127.0.0.1, each target on core 0; memory: $MEMORY"
  [[ ",$TARGETS," != *+tls,* ]] || echo "+tls: NVMe/TCP TLS 1.3 with a SHA-256 PSK (TLS_AES_128_GCM_SHA256), spdk_nvme_perf -S ssl (OpenSSL, no kTLS)"
  for t in "${REF_TARGETS[@]}"; do echo "$t: the java engine of ${REF_OF[$t]} (${REF_SHA[$t]}); java: this tree"; done
  [ -z "$VOLUMES" ] || echo "volumes of $VOLUME_MB MiB on XFS (reflink=1) on a loop device: nvmf_tgt an lvol store (4 MiB clusters) on an aio bdev over a file; java a reflink-dir pool"
  echo "median of $ROUNDS round(s), ${TIME} s each: IOPS and ratios of IOPS (MiB/s gives the same)"
  stats median iops
  echo
  echo "median of $ROUNDS round(s): mean / p99 latency, us"
  stats median lat
  echo
  echo "best of $ROUNDS round(s) (highest IOPS, lowest latency; interference only slows a run): IOPS and ratios"
  stats best iops
  echo
  echo "best of $ROUNDS round(s): mean / p99 latency, us"
  stats best lat
  echo
  echo "paired: each round's ratio of IOPS (the two targets measured in the same round$([ -z "$INTERLEAVE" ] || echo ", seconds apart")), median [quartiles] of $ROUNDS round(s)"
  stats median paired
  if [ -n "$VOLUMES" ]; then
    echo
    echo "volumes: 4 KiB random writes at QD 32 from each volume's first write; IOPS median of $ROUNDS round(s), ratios to nvmf_tgt of the medians; thin/thick and clone/thin: median of each round's ratio"
    volume_table
  fi
  if [ -n "$CPU" ]; then
    echo
    echo "the target's CPU time per I/O, us (user + system of its process over the measured seconds), median of $ROUNDS round(s), and over nvmf_tgt's"
    cpu_table
  fi
  if [ -n "$SYSCALLS" ]; then
    echo
    echo "system calls per I/O, median of $ROUNDS round(s): all of them / epoll waits / socket reads / socket writes, of the target and of spdk_nvme_perf"
    syscall_table
  fi
  if [ -n "$PROFILE" ]; then
    echo
    echo "where the target's core and spdk_nvme_perf's core go, in ns per I/O, median of $ROUNDS round(s) (Linux perf, $PROFILE_HZ Hz, during the measurement; the IOPS under the profiler)"
    profile_table
  fi
  if [ -n "$IO_PATH" ]; then
    echo
    echo "an I/O's round trip by segment, us: the mean over 1 s of each measurement, median of $ROUNDS round(s) (system calls traced: slower than untraced; see fio-jobs/io-path.py)"
    python3 "$HERE/io-path.py" --table "$OUT/iopath.tsv" "$TARGETS"
  fi
  if [ ${#SWEEP_LIST[@]} -gt 0 ]; then
    stats median sweep > "$OUT/sweep.tsv"
    echo
    echo "4k randread by queue depth, median of $ROUNDS round(s): IOPS / p99 latency (us)"
    awk -F'\t' 'NR == 1 {printf "%-4s", "QD"; for (i = 2; i <= NF; i += 2) {n = $i; sub(/_iops$/, "", n); printf " | %-20s", n}; printf "\n"; next}
                {printf "%-4s", $1; for (i = 2; i <= NF; i += 2) printf " | %9s / %8s", $i, $(i + 1); printf "\n"}' "$OUT/sweep.tsv"
  fi
  echo
  echo "raw numbers (IOPS of rounds 1 to $ROUNDS; each round starts a different target first):"
  for r in "${ROW_LIST[@]}"; do
    for t in "${TARGET_LIST[@]}"; do
      printf '  %-20s %-12s %s\n' "${ROW_LABEL[$r]}" "$t" \
        "$(awk -F'\t' -v t="$t" -v r="$r" '$2 == t && $3 == r {printf "%s ", $4}' "$OUT/raw.tsv")"
    done
  done
} | tee "$OUT/table.txt"

# ---------------------------------------------------------------------------------------------- plot
# qd-sweep.png: IOPS (left) and p99 latency (right) against the queue depth, one line per target
plot() {
  command -v gnuplot > /dev/null || { log "no gnuplot: no plot (./dev.sh bench installs it: apt-get install gnuplot-nox)"; return 1; }
  local i=0 t iops=() p99=()
  for t in "${TARGET_LIST[@]}"; do
    iops+=("'$OUT/sweep.tsv' using 1:$((2 * i + 2)) with linespoints lw 2 title '$t'")
    p99+=("'$OUT/sweep.tsv' using 1:$((2 * i + 3)) with linespoints lw 2 title '$t'")
    i=$((i + 1))
  done
  gnuplot > "$OUT/logs/gnuplot.log" 2>&1 << EOF
set terminal pngcairo size 1400,560 font "sans,11" noenhanced
set output "$OUT/qd-sweep.png"
set datafile separator "\t"
set datafile missing "-"
set key below horizontal
set logscale x 2
set xrange [$(awk 'NR == 2 {print $1 / 1.25}' "$OUT/sweep.tsv"):$(awk 'END {print $1 * 1.25}' "$OUT/sweep.tsv")]
set xtics ($(awk 'NR > 1 {printf "%s%s", s, $1; s = ", "}' "$OUT/sweep.tsv"))
set xlabel "queue depth (4 KiB random reads)"
set grid
set multiplot layout 1,2 title "spdk_nvme_perf over NVMe/TCP 127.0.0.1, each target on one core; median of $ROUNDS round(s) of ${TIME} s, $(date -u '+%F %H:%M') UTC"
set ylabel "IOPS"
set yrange [0:*]
plot $(IFS=,; echo "${iops[*]}")
set ylabel "p99 latency, us"
set yrange [*:*]
set logscale y
set format y "%.0f"
plot $(IFS=,; echo "${p99[*]}")
unset multiplot
EOF
}
if [ ${#SWEEP_LIST[@]} -gt 0 ]; then
  if plot; then log "plot: $OUT/qd-sweep.png"
  elif command -v gnuplot > /dev/null; then log "gnuplot failed: $(tail -n 3 "$OUT/logs/gnuplot.log" | tr '\n' ' ')"; FAILED=1; fi
fi
echo
log "results in $OUT (raw.tsv, $([ -z "$CPU" ] || echo "cpu.tsv, ")table.txt$([ ${#SWEEP_LIST[@]} = 0 ] || echo ", sweep.tsv, qd-sweep.png"), logs/)"
exit $FAILED

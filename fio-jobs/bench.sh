#!/bin/bash
# The benchmark kit (./dev.sh bench installs what it needs, builds and runs this): one run of
#   1. engines.sh: spdk_nvme_perf against SPDK's nvmf_tgt, the spdk engine, the java engine of this tree and
#      of every --java-ref, interleaved in rounds, on this machine: the five rows (4 KiB randread QD1 and
#      QD32, 4 KiB randwrite QD32, 128 KiB randread and randwrite QD8) and the queue-depth sweep (4 KiB
#      randread QD 1-64) with its plot (IOPS and p99 latency against queue depth, one line per target);
#   2. with --guest, after 1 (never beside it: the guest loads the CPU): the Linux host's fio rows in the
#      QEMU guest (e2e/run.sh --only bench): kernel nvmet, the java engine and the spdk engine over TCP and
#      RDMA (rxe), ratios to nvmet.
# Every measurement prints a progress line; the tables print the ratios.
#
# usage: fio-jobs/bench.sh [options] [-- engines.sh options...]
#   --rounds N          rounds of engines.sh (default 3)
#   --time S            seconds per measurement (default 10)
#   --warmup S          warm-up per measurement (default 2)
#   --java-ref REF      also the java engine of git commit REF (repeatable): before/after in one run, e.g.
#                       --java-ref main on a branch
#   --java-socket-io L  the java engine once per socket I/O in L (engines.sh --java-socket-io), e.g. epoll,io_uring:
#                       targets java (epoll) and java+uring (socketIo io_uring) in the same interleaved rounds, the
#                       column java+uring/java; the local rows' table only (as --java-ref)
#   --no-sweep          only the five rows (no queue-depth sweep, no plot)
#   --scaling           then the scaling rows (engines.sh --targets nvmf_tgt,nvmf_tgt-2c,java,java-2c --rows
#                       qd32x2,qd64x2: 4 KiB random reads over two queue pairs against each target on one core
#                       and on two; results in engines-scaling/)
#   --profile           then the profile rows (engines.sh --profile --targets nvmf_tgt,java, the five rows):
#                       where the target's core and spdk_nvme_perf's core go per I/O, by category (system
#                       calls by kind, Netty, nvmf4j, copies, time, the JVM; SPDK's layers), both sides
#                       sampled by Linux perf; a run of its own, as the profiler slows what it watches
#                       (results in engines-profile/)
#   --tls               NVMe/TCP TLS 1.3 with a PSK against plaintext (engines.sh --tls, no sweep): rows 4 KiB
#                       randread and randwrite QD32 of nvmf_tgt, nvmf_tgt+tls, java and java+tls in the same
#                       rounds, ratios X+tls/X and java+tls/nvmf_tgt+tls
#   --guest             then the guest rows (e2e/run.sh --only bench)
#   --guest-only        only the guest rows
#   --fio-runtime S     seconds per fio job in the guest (default 10)
#   --e2e-args "ARGS"   more e2e/run.sh options for the guest rows, e.g. "--cores 2 --idle-strategy backoff"
#                       (the java engine in the guest runs with the bench part's defaults: one poll group,
#                       busy, on vCPU 0, as the spdk engine's one reactor; C1 only)
#   --lock FILE         hold flock FILE while measuring and while the guest runs (the lock QEMU guests of a
#                       shared machine take)
#   --out DIR           results (default fio-jobs/out/bench): engines/ (engines.sh's raw.tsv, table.txt,
#                       sweep.tsv, qd-sweep.png, logs/) and guest/ (e2e/run.sh's results, bench-guest.tsv)
#   --docs              also copy the plot to docs/bench-qd-sweep.png (docs/BENCHMARKS.md shows it)
#   --smoke             engines.sh --smoke with a sweep of QD 1 and 4 (CI: every target gives a number, the
#                       plot is drawn)
# Exit status: 0 when every part measured every cell; 1 otherwise; 2 for a usage error.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "bench.sh: $*" >&2; exit 2; }
log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*"; }

ENGINE_ARGS=() E2E_ARGS=() SWEEP=(--sweep) GUEST=0 LOCAL=1 SCALING=0 PROFILE=0 FIO_RUNTIME=10 LOCK="" OUT=$HERE/out/bench DOCS=0 TLS=0
while [ $# -gt 0 ]; do
  opt=$1; shift
  case $opt in
    --rounds|--time|--warmup|--java-ref|--java-socket-io|--fio-runtime|--lock|--out|--e2e-args)
      [ $# -gt 0 ] || die "$opt needs a value (see --help)" ;;
  esac
  case $opt in
    --rounds|--time|--warmup|--java-ref|--java-socket-io) ENGINE_ARGS+=("$opt" "$1"); shift ;;
    --no-sweep) SWEEP=() ;;
    --scaling) SCALING=1 ;;
    --profile) PROFILE=1 ;;
    --tls) ENGINE_ARGS+=(--tls) SWEEP=() TLS=1 ;;
    --guest) GUEST=1 ;;
    --guest-only) GUEST=1 LOCAL=0 ;;
    --fio-runtime) FIO_RUNTIME=$1; shift ;;
    --e2e-args) read -ra E2E_ARGS <<< "$1"; shift ;;
    --lock) LOCK=$1; shift ;;
    --out) OUT=$1; shift ;;
    --docs) DOCS=1 ;;
    --smoke) ENGINE_ARGS+=(--smoke) SWEEP=(--sweep-qd 1,4) ;;
    --) ENGINE_ARGS+=("$@"); break ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $opt (see --help)" ;;
  esac
done
[[ $FIO_RUNTIME =~ ^[1-9][0-9]*$ ]] || die "--fio-runtime takes whole seconds, not '$FIO_RUNTIME'"
[ "$DOCS" = 0 ] || [ "$LOCAL" = 1 ] || die "--docs needs the local rows (the plot comes from them)"
[ "$DOCS" = 0 ] || [ "$TLS" = 0 ] || die "--docs needs the queue-depth sweep, which --tls leaves out"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

RC=0
if [ "$LOCAL" = 1 ]; then
  log "local rows: fio-jobs/engines.sh ${SWEEP[*]} ${ENGINE_ARGS[*]} (results in $OUT/engines)"
  "$HERE/engines.sh" "${SWEEP[@]}" ${LOCK:+--lock "$LOCK"} --out "$OUT/engines" "${ENGINE_ARGS[@]}"
  rc=$?
  [ $rc = 2 ] && exit 2
  [ $rc = 0 ] || RC=1
  if [ "$DOCS" = 1 ]; then
    if [ -s "$OUT/engines/qd-sweep.png" ]; then
      cp "$OUT/engines/qd-sweep.png" "$ROOT/docs/bench-qd-sweep.png" && log "plot copied to docs/bench-qd-sweep.png"
    else
      log "no plot to copy into docs/ (see $OUT/engines/logs/gnuplot.log)"; RC=1
    fi
  fi
fi

# the runs after the first: the --java-ref and --java-socket-io targets and the sweep are the first table's
# business; rounds, time and warm-up are shared
scale_args=()
for ((i = 0; i < ${#ENGINE_ARGS[@]}; i++)); do
  case ${ENGINE_ARGS[$i]} in
    --rounds|--time|--warmup) scale_args+=("${ENGINE_ARGS[$i]}" "${ENGINE_ARGS[$((i + 1))]}"); i=$((i + 1)) ;;
    --java-ref|--java-socket-io) i=$((i + 1)) ;;
    --smoke) scale_args+=(--rounds 1 --time 2 --warmup 0) ;;
  esac
done
if [ "$LOCAL" = 1 ] && [ "$SCALING" = 1 ]; then
  log "scaling rows: fio-jobs/engines.sh --targets nvmf_tgt,nvmf_tgt-2c,java,java-2c --rows qd32x2,qd64x2 ${scale_args[*]} (results in $OUT/engines-scaling)"
  "$HERE/engines.sh" --targets nvmf_tgt,nvmf_tgt-2c,java,java-2c --rows qd32x2,qd64x2 ${LOCK:+--lock "$LOCK"} \
    --out "$OUT/engines-scaling" "${scale_args[@]}"
  rc=$?
  [ $rc = 2 ] && exit 2
  [ $rc = 0 ] || RC=1
fi

if [ "$LOCAL" = 1 ] && [ "$PROFILE" = 1 ]; then
  rows=(); [[ " ${ENGINE_ARGS[*]} " == *" --smoke "* ]] && rows=(--rows qd1)
  log "profile rows: fio-jobs/engines.sh --profile --targets nvmf_tgt,java ${rows[*]} ${scale_args[*]} (results in $OUT/engines-profile)"
  "$HERE/engines.sh" --profile --targets nvmf_tgt,java "${rows[@]}" ${LOCK:+--lock "$LOCK"} \
    --out "$OUT/engines-profile" "${scale_args[@]}"
  rc=$?
  [ $rc = 2 ] && exit 2
  [ $rc = 0 ] || RC=1
fi

if [ "$GUEST" = 1 ]; then
  # after the local rows: a guest and a benchmark never run side by side
  log "guest rows: e2e/run.sh --only bench --fio-runtime $FIO_RUNTIME ${E2E_ARGS[*]} (results in $OUT/guest)"
  lock=(); [ -z "$LOCK" ] || lock=(flock "$LOCK")
  "${lock[@]}" "$ROOT/e2e/run.sh" --quiet --no-build --only bench --fio-runtime "$FIO_RUNTIME" \
    --out "$OUT/guest" "${E2E_ARGS[@]}" > "$OUT/guest.log" 2>&1
  rc=$?
  sed -n '/benchmark rows/,$p' "$OUT/guest.log"
  [ $rc = 0 ] || { RC=1; log "the guest run failed (exit $rc): see $OUT/guest.log and $OUT/guest/"; tail -n 5 "$OUT/guest.log"; }
fi
log "results in $OUT"
exit $RC

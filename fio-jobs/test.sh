#!/bin/bash
# Tests of fio-jobs/run.sh on this machine, without any target: two loop devices over temporary
# files stand in for the target and the peer (--device / --peer-device). Checks the usage errors, that
# every job file runs, the summary rows, the ratio table and the exit status. The connect path
# (nvme connect, sysfs lookup in lib/fio.sh) runs in the e2e guest, which sources the same library.
# Also runs the benchmark kit's smoke (bench.sh --smoke --java-ref HEAD: spdk_nvme_perf against nvmf_tgt,
# both engines and the java engine of HEAD built in a worktree, QD 1 and 4; ~1 minute plus that build): it
# checks that every target gave its numbers, the tables printed and the plot is a PNG, never a figure.
# Needs root (losetup) and fio + jq; prints SKIP and exits 0 when losetup cannot attach here.
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
RUN=$HERE/run.sh
TMP=$(mktemp -d)
LOOPS=()
cleanup() {
  local l
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2> /dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
FAILS=0 N=0
ok() { N=$((N + 1)); echo "PASS  $1"; }
bad() { N=$((N + 1)); FAILS=$((FAILS + 1)); echo "FAIL  $1"; }
expect_rc() { # name want command... : the command's exit status and that its output mentions $WANT_TEXT
  local name=$1 want=$2 out rc; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && { [ -z "${WANT_TEXT:-}" ] || grep -q -- "$WANT_TEXT" <<< "$out"; }; then ok "$name"
  else bad "$name: rc=$rc (want $want), output: $(tail -n 2 <<< "$out" | tr '\n' ' ')"; fi
  WANT_TEXT=""
}

for c in fio jq losetup; do command -v $c > /dev/null || { echo "fio-jobs test: $c missing"; exit 1; }; done
# usage errors come first: they need no device
WANT_TEXT="give -t" expect_rc "no target -> usage error" 2 "$RUN"
WANT_TEXT="--destroy-data" expect_rc "write job without --destroy-data -> refused" 2 "$RUN" --device /dev/null --jobs mixed
WANT_TEXT="no job file" expect_rc "unknown job -> refused" 2 "$RUN" --device /dev/null --jobs nosuch
WANT_TEXT="whole seconds" expect_rc "bad runtime -> refused" 2 "$RUN" --device /dev/null --runtime 1s
WANT_TEXT="the peer needs" expect_rc "half a peer -> refused" 2 "$RUN" --device /dev/null --peer-traddr 127.0.0.1

# engines.sh: its usage errors, then the kit (bench.sh --smoke: one short round of one row and a two-point
# queue-depth sweep against every target, the java engine of HEAD built in a worktree as one more)
ENGINES=$HERE/engines.sh
WANT_TEXT="unknown row" expect_rc "engines.sh: unknown row -> usage error" 2 "$ENGINES" --rows nosuch
WANT_TEXT="unknown row" expect_rc "engines.sh: qd above 128 -> usage error" 2 "$ENGINES" --rows qd1000
WANT_TEXT="qdNxP with P 1-8" expect_rc "engines.sh: 9 queue pairs -> usage error" 2 "$ENGINES" --rows qd32x9
WANT_TEXT="unknown target" expect_rc "engines.sh: java-3c -> usage error" 2 "$ENGINES" --targets java-3c
WANT_TEXT="positive whole number" expect_rc "engines.sh: --time 0 -> usage error" 2 "$ENGINES" --time 0
WANT_TEXT="needs a value" expect_rc "engines.sh: option without its value -> usage error" 2 "$ENGINES" --rounds
WANT_TEXT="queue depths 1-128" expect_rc "engines.sh: --sweep-qd 0 -> usage error" 2 "$ENGINES" --sweep-qd 1,0
# engines.sh --volumes (issue 35's row): its rows and options are checked before anything is made or started
WANT_TEXT="it needs --volumes" expect_rc "engines.sh: volume row without --volumes -> usage error" 2 "$ENGINES" --rows vthin
WANT_TEXT="vthin, vthick and vclone only" expect_rc "engines.sh: --volumes with a malloc row -> usage error" 2 "$ENGINES" --volumes --rows vthin,qd1
WANT_TEXT="fresh volumes in every round" expect_rc "engines.sh: --volumes --interleave -> usage error" 2 "$ENGINES" --volumes --interleave
WANT_TEXT="multiple of 4" expect_rc "engines.sh: --volume-mb 6 -> usage error" 2 "$ENGINES" --volumes --volume-mb 6
WANT_TEXT="has no volume rows" expect_rc "engines.sh: --volumes on the spdk engine -> usage error" 2 "$ENGINES" --volumes --targets nvmf_tgt,spdk
# qos.sh (the QoS check): its usage errors, parsing and verdicts, without a target
WANT_TEXT="qos.sh --check:" expect_rc "qos.sh --check" 0 "$HERE/qos.sh" --check
# e2e/run.sh (the kit's guest rows): its poll-group options are checked before anything is installed or booted
E2E_RUN=$HERE/../e2e/run.sh
WANT_TEXT="--cores takes a whole number of at least 1, not '0'" expect_rc "e2e/run.sh: --cores 0 -> usage error" 2 "$E2E_RUN" --cores 0
WANT_TEXT="--cores takes a whole number of at least 1, not 'two'" expect_rc "e2e/run.sh: --cores two -> usage error" 2 "$E2E_RUN" --cores two
WANT_TEXT="--idle-strategy takes backoff, busy or interrupt, not 'spin'" expect_rc "e2e/run.sh: --idle-strategy spin -> usage error" 2 "$E2E_RUN" --idle-strategy spin
WANT_TEXT="is no commit" expect_rc "engines.sh: --java-ref of no commit -> usage error" 2 "$ENGINES" --java-ref no-such-ref-here
WANT_TEXT="no --java-ref of this run" expect_rc "engines.sh: java@ target without its --java-ref -> usage error" 2 "$ENGINES" --targets java@1234567
WANT_TEXT="whole seconds" expect_rc "engines.sh: --start-warmup 1.5 -> usage error" 2 "$ENGINES" --start-warmup 1.5
WANT_TEXT="takes epoll, io_uring and nio" expect_rc "engines.sh: --java-socket-io uring -> usage error" 2 "$ENGINES" --java-socket-io epoll,uring
WANT_TEXT="do not name java" expect_rc "engines.sh: --java-socket-io without a java target -> usage error" 2 "$ENGINES" --targets nvmf_tgt,spdk --java-socket-io io_uring
WANT_TEXT="unknown option" expect_rc "bench.sh: unknown option -> usage error" 2 "$HERE/bench.sh" --nosuch
WANT_TEXT="takes epoll, io_uring and nio" expect_rc "bench.sh: --java-socket-io passed on, checked -> usage error" 2 "$HERE/bench.sh" --java-socket-io epoll,uring
WANT_TEXT="leaves out" expect_rc "bench.sh: --tls with --docs (no sweep, no plot) -> usage error" 2 "$HERE/bench.sh" --tls --docs
# tls-psk.py (the +tls targets' PSK): the TLS PSK it derives is what nvmf4j's TlsPsk (RFC 8446 labels) derives
# for the kit's NQNs (vector computed with TlsPsk), and a key whose TLS PSK starts with a zero byte (which
# SPDK's host takes for no PSK) is drawn again
PSKH=nqn.2014-08.org.nvmexpress:uuid:6e766d66-346a-4a75-8000-0000000000e1 PSKS=nqn.2016-06.io.spdk:engines-bench
got=$(python3 "$HERE/tls-psk.py" "$PSKH" "$PSKS" --key "$(printf '%02x' $(seq 0 31))" --tls-psk)
[ "$got" = ec861ab551ec26077169c03ab7240c1f24a85890d23d0258060b719b3db2177e ] &&
  ok "tls-psk.py: the TLS PSK of a test key is nvmf4j TlsPsk's" || bad "tls-psk.py: TLS PSK of the test key is $got"
got=$(cd "$HERE" && python3 -B -c '
import importlib, os, sys
m = importlib.import_module("tls-psk")
keys = [bytes(31) + bytes([0x2c]), bytes(range(32))]   # the first one derives a TLS PSK starting with 00
assert m.tls_psk(keys[0], sys.argv[1], sys.argv[2])[0] == 0
os.urandom = lambda n: keys.pop(0)
m.main([sys.argv[1], sys.argv[2]])' "$PSKH" "$PSKS" 2>&1)
[ "$got" = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:" ] &&
  ok "tls-psk.py: a key SPDK's host would not use is drawn again" || bad "tls-psk.py: drew $got"
# io-path.py (--io-path): a made-up trace of 5 round trips of known segments, in perf script's format (and another
# of the target's threads that writes in two of them, which is not its busiest)
got=$(python3 -c '
for k in range(5):
    T = 1000 + k * 30000
    for pid, tid, t, kind, nr, ret in [(100, 100, 0, "enter", 46, None), (100, 100, 1000, "exit", 46, 72),
            (200, 201, 1200, "exit", 232, 1), (200, 201, 1500, "enter", 0, None), (200, 201, 2000, "exit", 0, 72),
            (200, 201, 3000, "enter", 20, None), (200, 201, 5000, "exit", 20, 4144), (100, 100, 5500, "exit", 232, 1),
            (100, 100, 5600, "enter", 19, None), (100, 100, 6000, "exit", 19, 4144),
            (100, 100, 6100, "enter", 19, None), (100, 100, 6200, "exit", 19, -11), (200, 202, 7000, "enter", 1, None),
            (200, 202, 7100, "exit", 1, 8)][:12 if k > 1 else 14]:
        ns = T + t
        tail = " = %d" % ret if kind == "exit" else " (3, 7f00, 72, 0, 0, 0)"
        print("%8d/%-8d %d.%09d: %s raw_syscalls:sys_%s: NR %d%s" % (pid, tid, 40000 + ns // 10**9, ns % 10**9,
              " " if kind == "exit" else "", kind, nr, tail))
' | python3 "$HERE/io-path.py" 100 200 | awk -F'\t' '{printf "%s=%s;", $1, $2}')
want="host send=1000;to the target=200;target: to read=300;target: read=500;target: work=1000;target: send=2000;to the host=500;host: read=500;host: work=24000;round trip=30000;host reads=1.00;host empty reads=1.00;"
[ "$got" = "$want" ] && ok "io-path.py: the segments of a made-up trace" || bad "io-path.py: got $got"
# the two scripts' bad input: a clear message and exit 2 (1 for a trace without a round trip)
WANT_TEXT="64 hex digits" expect_rc "tls-psk.py: a --key that is not hex -> usage error" 2 python3 "$HERE/tls-psk.py" a b --key zz
WANT_TEXT="got 2 bytes" expect_rc "tls-psk.py: a 2-byte --key -> usage error" 2 python3 "$HERE/tls-psk.py" a b --key 00ff
WANT_TEXT="usage" expect_rc "tls-psk.py: one NQN only -> usage error" 2 python3 "$HERE/tls-psk.py" nqn.only
WANT_TEXT="no complete round trip" expect_rc "io-path.py: a trace of garbage -> exit 1, said why" 1 \
  bash -c 'echo "not a trace" | python3 "$1" 100 200' _ "$HERE/io-path.py"
WANT_TEXT="No such file" expect_rc "io-path.py: --table of a missing file -> exit 2" 2 python3 "$HERE/io-path.py" --table "$TMP/none.tsv" java
WANT_TEXT="usage" expect_rc "io-path.py: no arguments -> usage error" 2 python3 "$HERE/io-path.py"
# lib/free_port.py: a port below the kernel's ephemeral range, never an excluded one; a bad argument is a usage error
low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range)
p1=$(python3 "$HERE/lib/free_port.py") && p2=$(python3 "$HERE/lib/free_port.py" "$p1")
if [ -n "${p1:-}" ] && [ -n "${p2:-}" ] && [ "$p1" -ge 10000 ] && [ "$p1" -lt "$low" ] && [ "$p2" != "$p1" ] && [ "$p2" -lt "$low" ]
then ok "free_port.py: $p1 and $p2 (excluding $p1) below the ephemeral range ($low)"
else bad "free_port.py: got '${p1:-}' and '${p2:-}' (range starts at $low)"; fi
WANT_TEXT="excluded ports are numbers" expect_rc "free_port.py: an excluded port that is no number -> usage error" 2 \
  python3 "$HERE/lib/free_port.py" 12000 x1
if ! "$HERE/../spdk-jni/spdk-build.sh" > /dev/null 2> "$TMP/spdk.err"; then
  echo "SKIP  bench.sh --smoke: no SPDK build ($(tail -n 1 "$TMP/spdk.err"))"
elif [ ! -d "$HERE/../mgmt-api/target/lib" ]; then
  echo "SKIP  bench.sh --smoke: nvmf4j is not built (mvn -q -DskipTests package)"
else
  # BENCH_LOCK: a lock to hold while it measures (the one QEMU guests of a shared machine take)
  head=$(git -C "$HERE/.." rev-parse --short=7 HEAD)
  "$HERE/bench.sh" --smoke --java-ref HEAD --scaling --out "$TMP/bench" ${BENCH_LOCK:+--lock "$BENCH_LOCK"} > "$TMP/bench.log" 2>&1
  rc=$?
  E=$TMP/bench/engines
  [ $rc = 0 ] && ok "bench.sh --smoke: exit 0" || bad "bench.sh --smoke: exit $rc: $(tail -n 5 "$TMP/bench.log" | tr '\n' ' ')"
  for t in nvmf_tgt spdk java "java@$head"; do
    for r in qd1 qd4; do
      # IOPS, MiB/s, mean and p99 latency (spdk_nvme_perf -L) all there
      if awk -F'\t' -v t="$t" -v r=$r '$2 == t && $3 == r && $4 > 0 && $5 > 0 && $6 > 0 && $7 > 0 {f = 1} END {exit !f}' "$E/raw.tsv" 2> /dev/null
      then ok "bench.sh --smoke: $t gave $r IOPS, MiB/s, mean and p99 latency"
      else bad "bench.sh --smoke: no $r numbers for $t in raw.tsv: $(tr '\n' '|' < "$E/raw.tsv" 2> /dev/null)"; fi
    done
    grep -Eq "\[round 1/1\] $t qd1: [0-9]+ IOPS, [0-9.]+ MiB/s, mean [0-9.]+ us, p99 [0-9.]+ us" "$TMP/bench.log" &&
      ok "bench.sh --smoke: a progress line for $t qd1" || bad "bench.sh --smoke: no progress line for $t qd1"
  done
  # the IOPS table: the four targets' IOPS, then the ratios to nvmf_tgt and java/java@HEAD
  if grep -q "^row .*| java@$head .*| java@$head/tgt .*| java/java@$head .*| spdk within 5 %" "$TMP/bench.log" &&
     grep -Eq '^4k randread QD1 +(\| +[0-9]+ ){4}(\| [0-9.]+ +){4}\| (yes|NO)' "$TMP/bench.log"
  then ok "bench.sh --smoke: the table printed with every target's IOPS and the ratios"
  else bad "bench.sh --smoke: no complete table in its output: $(grep -A 2 '^row ' "$TMP/bench.log" | tr '\n' '|')"; fi
  grep -Eq '^4k randread QD1 +(\| +[0-9.]+ / +[0-9.]+ *){4}$' "$TMP/bench.log" &&
    ok "bench.sh --smoke: the latency table (mean / p99) printed" || bad "bench.sh --smoke: no latency table"
  [ "$(awk -F'\t' 'NR > 1 {print $1}' "$E/sweep.tsv" 2> /dev/null | tr '\n' ' ')" = "1 4 " ] &&
    ok "bench.sh --smoke: sweep.tsv has QD 1 and 4" || bad "bench.sh --smoke: sweep.tsv: $(tr '\n' '|' < "$E/sweep.tsv" 2> /dev/null)"
  if [ "$(head -c 8 "$E/qd-sweep.png" 2> /dev/null | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] && [ "$(stat -c %s "$E/qd-sweep.png")" -gt 10000 ]
  then ok "bench.sh --smoke: qd-sweep.png is a PNG ($(stat -c %s "$E/qd-sweep.png") bytes)"
  else bad "bench.sh --smoke: no PNG plot: $(file "$E/qd-sweep.png" 2>&1)"; fi
  # --scaling: two queue pairs against each target on one core and on two, with the two-core/one-core ratios
  S=$TMP/bench/engines-scaling
  for t in nvmf_tgt nvmf_tgt-2c java java-2c; do
    if awk -F'\t' -v t="$t" '$2 == t && $3 == "qd32x2" && $4 > 0 && $7 > 0 {f = 1} END {exit !f}' "$S/raw.tsv" 2> /dev/null
    then ok "bench.sh --smoke --scaling: $t gave qd32x2 IOPS and p99 latency"
    else bad "bench.sh --smoke --scaling: no qd32x2 numbers for $t: $(tr '\n' '|' < "$S/raw.tsv" 2> /dev/null)"; fi
  done
  if grep -q '^row .*| nvmf_tgt-2c/nvmf_tgt .*| java-2c/java' "$S/table.txt" 2> /dev/null &&
     grep -Eq '^4k rr QD32 2 qpairs +(\| +[0-9]+ ){4}(\| [0-9.]+ +){5}' "$S/table.txt"
  then ok "bench.sh --smoke --scaling: the table with the two-core/one-core ratios"
  else bad "bench.sh --smoke --scaling: no scaling table: $(grep -A 2 '^row ' "$S/table.txt" 2> /dev/null | tr '\n' '|')"; fi
  # the worktree of HEAD was built, then removed at exit
  if grep -q "built java@$head in" "$TMP/bench.log" && ! git -C "$HERE/.." worktree list | grep -q "$TMP"
  then ok "bench.sh --smoke: java@$head built in a worktree that is gone after the run"
  else bad "bench.sh --smoke: worktree: $(grep -m1 'java@' "$TMP/bench.log"); $(git -C "$HERE/.." worktree list | grep "$TMP")"; fi
  # --interleave: each target started once, stopped while another is measured; the paired table's ratio is the
  # median of the rounds' ratios in raw.tsv
  I=$TMP/interleave
  "$ENGINES" --smoke --rounds 3 --interleave --targets nvmf_tgt,java --out "$I" ${BENCH_LOCK:+--lock "$BENCH_LOCK"} > "$TMP/interleave.log" 2>&1
  rc=$?
  [ $rc = 0 ] && ok "engines.sh --interleave: exit 0" || bad "engines.sh --interleave: exit $rc: $(tail -n 5 "$TMP/interleave.log" | tr '\n' ' ')"
  starts=$(grep -c '\[start\] [a-z_]*: starting' "$TMP/interleave.log")
  measured=$(awk -F'\t' 'NR > 1 && $4 > 0 {n++} END {print n + 0}' "$I/raw.tsv" 2> /dev/null)
  [ "$starts" = 2 ] && [ "$measured" = 6 ] && ok "engines.sh --interleave: 2 targets started once each, 3 rounds measured of both" ||
    bad "engines.sh --interleave: $starts starts, $measured measurements (want 2 and 6)"
  want=$(awk -F'\t' 'NR > 1 {v[$1 " " $2] = $4} END {for (r = 1; r <= 3; r++) x[r] = v[r " java"] / v[r " nvmf_tgt"]
    for (i = 1; i <= 3; i++) for (j = i + 1; j <= 3; j++) if (x[j] < x[i]) {t = x[i]; x[i] = x[j]; x[j] = t}
    printf "%.3f (3)", x[2]}' "$I/raw.tsv" 2> /dev/null)
  grep -A 1 '^row .*| java/tgt' "$I/table.txt" 2> /dev/null | grep -q "^4k randread QD1 *| $want" &&
    ok "engines.sh --interleave: the paired table's java/tgt is the median of the rounds' ratios ($want)" ||
    bad "engines.sh --interleave: paired table: want $want: $(grep -A 1 -F 'paired' "$I/table.txt" 2> /dev/null | tr '\n' '|')"
  # --syscalls (the counts of both sides in syscalls.tsv, the table of system calls per I/O) and --profile (each
  # side's samples by category in profiles.tsv, the JVM's frames named through its JIT's map and SPDK's by their
  # symbols; the tables of ns per I/O)
  if ! type -P perf > /dev/null; then
    echo "SKIP  engines.sh --syscalls, --profile, --io-path: no Linux perf here (apt-get install linux-perf)"
  else
    for opt in syscalls profile io-path; do
      "$ENGINES" --smoke --time 3 --targets nvmf_tgt,java --$opt --out "$TMP/$opt" ${BENCH_LOCK:+--lock "$BENCH_LOCK"} > "$TMP/$opt.log" 2>&1
      rc=$?
      [ $rc = 0 ] && ok "engines.sh --$opt: exit 0" || bad "engines.sh --$opt: exit $rc: $(tail -n 5 "$TMP/$opt.log" | tr '\n' ' ')"
    done
    for t in nvmf_tgt java; do
      for side in target host; do
        if awk -F'\t' -v t="$t" -v s="$side" '$2 == t && $4 == s && $5 == "all" && $6 > 0 {f = 1} END {exit !f}' "$TMP/syscalls/syscalls.tsv" 2> /dev/null
        then ok "engines.sh --syscalls: $t's $side made system calls that were counted"
        else bad "engines.sh --syscalls: no count of $t's $side: $(tr '\n' '|' < "$TMP/syscalls/syscalls.tsv" 2> /dev/null)"; fi
        # any sample counts: how many fit in the smoke run's window depends on the machine's speed and load
        if awk -F'\t' -v t="$t" -v s="$side" '$2 == t && $4 == s && $6 > 0 {n += $6} END {exit !(n > 0)}' "$TMP/profile/profiles.tsv" 2> /dev/null
        then ok "engines.sh --profile: $t's $side was sampled ($(awk -F'\t' -v t="$t" -v s="$side" '$2 == t && $4 == s {n += $6} END {print n + 0}' "$TMP/profile/profiles.tsv") samples)"
        else bad "engines.sh --profile: no samples of $t's $side: $(grep -P "\t$t\t" "$TMP/profile/profiles.tsv" 2> /dev/null | tr '\n' '|')"; fi
      done
    done
    if awk '/^4k randread QD1 +java +\|/ && $6 + 0 > 0 {f = 1} END {exit !f}' "$TMP/syscalls/table.txt" 2> /dev/null
    then ok "engines.sh --syscalls: the table of system calls per I/O printed"
    else bad "engines.sh --syscalls: no table: $(grep -A 3 'system calls per I/O' "$TMP/syscalls/table.txt" 2> /dev/null | tr '\n' '|')"; fi
    # a compiled Java frame named through the JIT's map: nvmf4j's own or Netty's (on a loaded machine the smoke
    # run's few seconds may end before the JIT compiled any nvmf4j method, while the event loop's are)
    if awk -F'\t' '$2 == "java" && $4 == "target" && $5 ~ /^(nvmf4j|netty): / && $6 > 0 {f = 1} END {exit !f}' "$TMP/profile/profiles.tsv" 2> /dev/null &&
       awk -F'\t' '$2 == "nvmf_tgt" && $4 == "target" && $5 ~ /^SPDK: / && $6 > 0 {f = 1} END {exit !f}' "$TMP/profile/profiles.tsv" 2> /dev/null
    then ok "engines.sh --profile: the JVM's compiled methods and SPDK's functions are named"
    else bad "engines.sh --profile: categories: $(cut -f2,4,5 "$TMP/profile/profiles.tsv" 2> /dev/null | sort -u | tr '\n' '|')"; fi
    # --io-path: the round trip of each target cut into segments that add up to it
    for t in nvmf_tgt java; do
      if awk -F'\t' -v t="$t" '$2 == t && $4 == "round trip" && $5 > 0 && $7 > 0 {r = $5}
           $2 == t && $4 ~ /^(host|to|target)/ && $4 !~ /reads$/ {s += $5} END {exit !(r > 0 && s - r < 10 && r - s < 10)}' "$TMP/io-path/iopath.tsv" 2> /dev/null
      then ok "engines.sh --io-path: $t's round trips cut into segments that add up to them"
      else bad "engines.sh --io-path: $t: $(grep -P "\t$t\t" "$TMP/io-path/iopath.tsv" 2> /dev/null | tr '\n' '|')"; fi
    done
    grep -Eq '^round trip +\| +[0-9.]+ +\| +[0-9.]+$' "$TMP/io-path/table.txt" 2> /dev/null &&
      ok "engines.sh --io-path: the table of segments printed" || bad "engines.sh --io-path: no table: $(grep -A 12 'round trip by segment' "$TMP/io-path/table.txt" 2> /dev/null | tr '\n' '|')"
    if grep -q '^4k randread QD1, the target: ns per I/O .*| *nvmf_tgt *| *java' "$TMP/profile/table.txt" 2> /dev/null &&
       grep -q '^4k randread QD1, spdk_nvme_perf: ns per I/O' "$TMP/profile/table.txt" &&
       grep -Eq '^all \(the core per I/O\) +\| +[0-9]+ +\| +[0-9]+' "$TMP/profile/table.txt"
    then ok "engines.sh --profile: the tables of ns per I/O by category printed, for the target and spdk_nvme_perf"
    else bad "engines.sh --profile: no tables: $(grep -A 3 'ns per I/O' "$TMP/profile/table.txt" 2> /dev/null | tr '\n' '|')"; fi
  fi
fi

for i in 0 1; do
  truncate -s 64M "$TMP/dev$i.img"
  if ! l=$(losetup -f --show "$TMP/dev$i.img" 2> "$TMP/losetup.err"); then
    echo "SKIP  runs against loop devices: losetup cannot attach here ($(cat "$TMP/losetup.err"))"
    echo "fio-jobs test: $N checks, $FAILS failed (device runs skipped)"
    exit $((FAILS > 0))
  fi
  LOOPS+=("$l")
done
WANT_TEXT="not a block device" expect_rc "a file as --device -> job fails" 1 "$RUN" --device "$TMP/dev0.img" --out "$TMP/out0"

OUT=$TMP/out
"$RUN" --device "${LOOPS[0]}" --peer-device "${LOOPS[1]}" --label a --peer-label b --jobs latency,iops,mixed,verify \
  --runtime 1 --destroy-data --out "$OUT" > "$TMP/run.log" 2>&1
rc=$?
[ $rc = 0 ] && ok "all jobs on two loop devices: exit 0" || bad "all jobs: exit $rc: $(tail -n 5 "$TMP/run.log" | tr '\n' ' ')"
for side in a b; do
  # latency: qd1 + qd32 reads; iops: randread + randwrite; mixed: read + write rows; verify: read + write
  for want in "latency qd1 read" "latency qd32 read" "iops randread read" "iops randwrite write" \
              "mixed randrw-70-30 read" "mixed randrw-70-30 write" "verify verify read" "verify verify write"; do
    read -r job name op <<< "$want"
    if awk -F'\t' -v n="$name" -v o="$op" '$1 == n && $2 == o && $3 > 0 && $7 == 0 {f = 1} END {exit !f}' "$OUT/$side-$job.tsv" 2> /dev/null
    then ok "$side: $job has a $name $op row with IOPS > 0 and no errors"
    else bad "$side: $job: no $name $op row with IOPS > 0 and 0 errors in $side-$job.tsv"; fi
  done
done
rows=$(wc -l < "$OUT/summary.tsv" 2> /dev/null)
[ "${rows:-0}" = 16 ] && ok "summary.tsv: 16 rows" || bad "summary.tsv: ${rows:-0} rows, want 16 (8 per side)"
# ratio: a header and 4 metrics per row of the job, each the quotient of the two summaries' raw values
if awk -F'\t' '
     FILENAME ~ /a-latency/ { a[$1 "-" $2] = $0; next }
     FILENAME ~ /b-latency/ { b[$1 "-" $2] = $0; next }
     FNR == 1 { h = ($4 == "ratio_a_over_b"); next }
     { n++; split($1, k, "-"); key = k[2] "-" k[3];
       c = (k[4] == "IOPS" ? 3 : k[4] == "p50_us" ? 4 : k[4] == "p99_us" ? 5 : 6)
       split(a[key], x, "\t"); split(b[key], y, "\t")
       if ($4 == "" || y[c] == 0 || (x[c] / y[c] - $4) > 0.0006 || ($4 - x[c] / y[c]) > 0.0006) e = 1 }
     END {exit !(h && n == 8 && !e)}' "$OUT/a-latency.tsv" "$OUT/b-latency.tsv" "$OUT/ratio-latency.tsv"
then ok "ratio-latency.tsv: 8 metrics, each a/b of the raw values"
else bad "ratio-latency.tsv: $(tr '\n' '|' < "$OUT/ratio-latency.tsv")"; fi
grep -q '^latency-qd1-read-IOPS' "$OUT/ratio-latency.tsv" && ok "metric names job-op-measure" || bad "metric names"
echo "fio-jobs test: $N checks, $FAILS failed"
exit $((FAILS > 0))

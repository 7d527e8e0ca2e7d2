#!/usr/bin/env bash
# nvmf4j developer entry point. On a fresh Debian 12 machine each command installs what it needs.
#
#   ./dev.sh run [--state-dir DIR] [--config FILE]   build, then run the target in the foreground
#                                                     (embedded default: 256 MiB RAM namespace,
#                                                     NVMe/TCP on 127.0.0.1:4420)
#   ./dev.sh test                                     every test: unit + loopback (mvn verify), the
#                                                     fio runner (fio-jobs/test.sh), the packages'
#                                                     clean-root install (dpu-profile/test.sh), the
#                                                     arm64 packages (dpu-profile/test-arm64.sh), then
#                                                     the QEMU end-to-end suite (e2e/run.sh, and beside
#                                                     it, in a second guest, its auth and tls parts on
#                                                     kernel 6.12: --suite trixie)
#   ./dev.sh build                                    build only (mgmt-api/target/{classes,lib})
#   ./dev.sh fuzz [--cases N] [--seed S] [--targets T,..] [--replay T:SEED]
#                                                     the long parser fuzz run (default 10 000 000 cases
#                                                     over tcp-pdu, rdma-sgl, rdma-cm-private-data and
#                                                     config; prints cases, escapes, hangs, time); exit 1
#                                                     on any escape or hang
#   ./dev.sh fuzz --rest [--cases N] [--seed S] [--replay SEED]
#                                                     the REST body fuzz (default 100 000 cases): mutated,
#                                                     garbage, huge, deeply nested and wrong-typed bodies on every
#                                                     mutating route of an in-process service; exit 1 on any 5xx,
#                                                     hang, 4xx without a JSON message or refusal that changed
#                                                     the configuration
#   ./dev.sh soak [--cycles N]                        the leak soak: N (default 1000) controller connect/disconnect
#                                                     cycles and N namespace add/remove cycles with a host connected
#                                                     over loopback TCP; prints heap after GC, direct memory,
#                                                     threads, open fds and controllers before and after; exit 1
#                                                     unless each is back to its baseline (mvn verify runs 200)
#   ./dev.sh authflood [SECONDS]                      a benchmark line: a QD1 4 KiB read host's p99 latency on
#                                                     one poll group alone and beside a host looping ffdhe8192
#                                                     DH-HMAC-CHAP Negotiate/Receive (SECONDS per phase, 10)
#   ./dev.sh scale [--sizes 100,500,1000,2000] [--engine java|spdk] [--hosts H] [--per-subsystem K] [--controllers C]
#                                                     the scale probe (fio-jobs/scale.py): build, start the
#                                                     target, add null namespaces (K per subsystem) through
#                                                     the REST API and print at each size the time per add
#                                                     (p50/p99), list, one-field change, bytes on disk, heap,
#                                                     direct, RSS, fds, restart to ready; then each cost's
#                                                     growth from the smallest size to the largest
#   ./dev.sh jmh [JMH options]                        JMH: the engine's cost per command without sockets
#                                                     (CommandCostBenchmark: 4 KiB read, 4 KiB write, flush
#                                                     through a real NVMe/TCP queue), ns per command
#   ./dev.sh package [--arch arm64]                   build dist/nvmf4j_<version>_amd64.deb and
#                                                     dist/nvmf4j-<version>-linux-x86_64.tar.gz (arm64:
#                                                     nvmf4j_<version>_arm64.deb, ...-linux-aarch64.tar.gz)
#   ./dev.sh bench [--java-ref REF] [--guest] [--docs] [--lock FILE] [...]
#                                                     the benchmark kit (fio-jobs/bench.sh; as root): build,
#                                                     then spdk_nvme_perf against SPDK's nvmf_tgt, the spdk
#                                                     engine and the java engine (and the java engine of
#                                                     each REF) in interleaved rounds: the five rows, the
#                                                     queue-depth sweep and its plot (gnuplot), ratios to
#                                                     nvmf_tgt; --guest then the Linux host's fio rows in
#                                                     the QEMU guest (nvmet, both engines, TCP and RDMA);
#                                                     ./dev.sh bench --help lists every option
#   ./dev.sh setup                                    install the build's packages only (JDK, Maven,
#                                                     gcc, libibverbs-dev, librdmacm-dev, the aarch64
#                                                     cross compiler and arm64 sysroot, and for the
#                                                     packages asciidoctor, dpkg-dev, debootstrap)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian packages, installed with apt when any are named (the setup_* functions name the missing ones).
install_missing() {
  [ $# -gt 0 ] || return 0
  echo "dev.sh: installing $*" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# A main in nvmf-target's test classes (the leak soak, the auth flood line) on their classpath: test_main CLASS ARGS...
test_main() {
  local cls=$1
  shift
  setup_build_tools
  setup_native_tools
  mvn_cmd -q test-compile dependency:build-classpath -Dmdep.outputFile=target/test-main.classpath \
    -Dmdep.includeScope=test -pl nvmf-target -am
  exec java -Xmx1g -Dio.netty.leakDetection.level=disabled \
    -cp "nvmf-target/target/test-classes:nvmf-target/target/classes:$(cat nvmf-target/target/test-main.classpath)" \
    "$cls" "$@"
}

# JDK 17 and Maven, from Debian's packages when missing.
setup_build_tools() {
  local missing=()
  command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  install_missing "${missing[@]}"
}

# gcc and the verbs/rdmacm headers for rdma-cm's JNI library, librbd's for the rbd bdev's, from Debian's packages when missing.
# (The libraries themselves come with the -dev packages; no RDMA device is needed to build.)
setup_native_tools() {
  local missing=()
  command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  [ -f /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
  [ -f /usr/include/rdma/rdma_cma.h ] || missing+=(librdmacm-dev)
  [ -f /usr/include/rbd/librbd.h ] || missing+=(librbd-dev librados-dev)
  install_missing "${missing[@]}"
}

# Ceph's monitor, OSD and tools for the rbd bdev's tests and benchmark (e2e/ceph/cluster.sh starts a one-node
# cluster from them; no systemd unit of the packages is used).
setup_ceph() {
  local missing=()
  command -v ceph-mon >/dev/null 2>&1 && command -v ceph-osd >/dev/null 2>&1 && command -v rbd >/dev/null 2>&1 \
    || missing+=(ceph)
  install_missing "${missing[@]}"
}

# mkfs.xfs for the volume tests: they make an XFS with reflink=1 on a loop device (a reflink-dir pool's file system).
setup_xfs() {
  command -v mkfs.xfs >/dev/null 2>&1 || install_missing xfsprogs
}

# The aarch64 build of the JNI libraries on an x86-64 machine: Debian's cross compiler, and an arm64 sysroot
# unpacked from Debian's arm64 packages into ~/.cache/nvmf4j (native/aarch64.sh; nothing arm64 is installed
# on the host). With both, every Maven build also builds lib<name>_aarch64.so into the jars. Without network
# the build goes on for x86-64 only, unless the arm64 package was asked for ($1 = require).
setup_cross() {
  [ "$(uname -m)" = x86_64 ] || return 0
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || install_missing gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  if ! native/aarch64.sh sysroot >/dev/null; then
    [ "${1:-}" = require ] && return 1
    echo "dev.sh: no arm64 sysroot: building the x86-64 libraries only" >&2
  fi
}

# fio and jq for fio-jobs/ (the runner and its test); Linux perf for the kit's --syscalls and --profile.
setup_bench_tools() {
  local missing=()
  command -v fio >/dev/null 2>&1 || missing+=(fio)
  type -P perf >/dev/null 2>&1 || missing+=(linux-perf)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v losetup >/dev/null 2>&1 || missing+=(mount)
  install_missing "${missing[@]}"
}

# gnuplot (without X) draws the benchmark kit's plot (fio-jobs/engines.sh --sweep: qd-sweep.png).
setup_plot_tools() {
  command -v gnuplot >/dev/null 2>&1 || install_missing gnuplot-nox
}

# For the packages (dpu-profile/package.sh, dpu-profile/test.sh): asciidoctor turns picocli's AsciiDoc man
# pages into troff, dpkg-shlibdeps (dpkg-dev) computes the native libraries' Depends, debootstrap and zstd
# make and cache the clean Debian 12 root of the install test, systemd-nspawn boots it to run the unit.
setup_package_tools() {
  local missing=()
  command -v asciidoctor >/dev/null 2>&1 || missing+=(asciidoctor)
  command -v dpkg-shlibdeps >/dev/null 2>&1 || missing+=(dpkg-dev)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v zstd >/dev/null 2>&1 || missing+=(zstd)
  command -v systemd-nspawn >/dev/null 2>&1 || missing+=(systemd-container)
  command -v unzip >/dev/null 2>&1 || missing+=(unzip)
  command -v zip >/dev/null 2>&1 || missing+=(zip)
  install_missing "${missing[@]}"
}

# SPDK for the spdk engine (spdk-jni): SPDK_DIR, or the vendored tarball built once into ~/.cache/nvmf4j
# (about 4 minutes on 2 cores, with the Debian packages its build needs). Without either the rest still
# builds and the spdk engine says why it is unavailable. On x86-64 also SPDK cross-built for aarch64
# (spdk-build.sh --arch aarch64, with the cross toolchain and arm64 sysroot of setup_cross; once per machine,
# longer than the x86-64 build), which the arm64 package's libnvmf4j_spdk links: without it the build goes
# on, the arm64 package's spdk engine saying why it is unavailable (dpu-profile/test-arm64.sh fails on that).
setup_spdk() {
  local rc=0
  spdk-jni/spdk-build.sh --install-packages >/dev/null || rc=$?
  if [ "$rc" = 3 ]; then
    echo "dev.sh: no SPDK (set SPDK_DIR or provide the vendored tarball): building without the spdk engine" >&2
    return 0
  elif [ "$rc" != 0 ]; then
    return "$rc"
  fi
  [ "$(uname -m)" = x86_64 ] || return 0
  spdk-jni/spdk-build.sh --arch aarch64 --install-packages >/dev/null || rc=$?
  [ "$rc" = 0 ] || echo "dev.sh: no SPDK for aarch64 (above): the arm64 package's spdk engine will say why it is unavailable" >&2
}

setup() {
  setup_build_tools
  setup_native_tools
  setup_cross "$@"
  setup_spdk
}

# The 6.12 guest of `test`, started in the background beside the 6.1 guest; its output in e2e/out-trixie.log,
# printed when it is waited for.
e2e_trixie() {
  E2E_LOG_TAG=e2e-6.12 e2e/run.sh --quiet --no-build --no-apt --suite trixie --only auth,tls --out e2e/out-trixie
}
e2e_trixie_start() {
  E2E_TRIXIE_T0=$SECONDS
  rm -f e2e/out-trixie.took
  # the time it took, written when it ends (the 6.1 guest usually ends later, when it is waited for)
  ( rc=0; e2e_trixie || rc=$?; echo "$((SECONDS - E2E_TRIXIE_T0))" > e2e/out-trixie.took; exit "$rc" ) \
    > e2e/out-trixie.log 2>&1 &
  E2E_TRIXIE_PID=$!
}
e2e_trixie_wait() { # 0 when the 6.12 guest passed (once more after a kernel panic of its own)
  local rc=0 took
  wait "$E2E_TRIXIE_PID" || rc=$?
  cat e2e/out-trixie.log
  took=$(cat e2e/out-trixie.took 2> /dev/null || echo $((SECONDS - E2E_TRIXIE_T0)))
  echo "dev.sh: the 6.12 guest took $((took / 60)) min $((took % 60)) s beside the 6.1 guest (exit status $rc)" >&2
  [ "$rc" != 0 ] || return 0
  # Under multi-threaded TCG this guest's kernel once died with "Oops: int3" in __schedule (a vCPU ran the
  # int3 of a patch of kernel text that another vCPU had finished): a defect of the emulation, which a
  # one-thread TCG avoids but slows the spdk engine's connects past their bounds. Only a guest kernel panic
  # runs it once more, the first run's results kept beside the second's; any other failure is red.
  grep -aq 'Kernel panic' e2e/out-trixie/console.log || return 1
  echo "dev.sh: the 6.12 guest's kernel panicked ($(grep -a -m1 -o 'Oops:.*' e2e/out-trixie/console.log | cut -c1-80)); its results in e2e/out-trixie-panicked; the guest once more" >&2
  rm -rf e2e/out-trixie-panicked && mv e2e/out-trixie e2e/out-trixie-panicked
  e2e_trixie
}

# The test run's stages and the time each took, printed at the end, green or red: `stage NAME` ends the stage
# before it and starts NAME; the EXIT trap closes the last one (marked failed when the run fails in it).
STAGE_NAMES=() STAGE_SECONDS=() STAGE_OPEN="" STAGE_T0=0 RUN_T0=$SECONDS
stage() {
  stage_close
  STAGE_OPEN=$1 STAGE_T0=$SECONDS
  echo "dev.sh: stage $1 ($(date -u +%H:%M:%S) UTC)" >&2
}
stage_close() {
  [ -n "$STAGE_OPEN" ] || return 0
  STAGE_NAMES+=("$STAGE_OPEN") STAGE_SECONDS+=($((SECONDS - STAGE_T0)))
  STAGE_OPEN=""
}
stage_times() { # exit status of the run
  local failed=$STAGE_OPEN i
  stage_close
  [ ${#STAGE_NAMES[@]} -gt 0 ] || return 0
  echo "dev.sh: time per stage (total $(((SECONDS - RUN_T0) / 60)) min $(((SECONDS - RUN_T0) % 60)) s):" >&2
  for i in "${!STAGE_NAMES[@]}"; do
    printf '  %-24s %4d min %2d s%s\n' "${STAGE_NAMES[$i]}" $((STAGE_SECONDS[i] / 60)) $((STAGE_SECONDS[i] % 60)) \
      "$([ "$1" != 0 ] && [ "${STAGE_NAMES[$i]}" = "$failed" ] && echo "  (failed: exit status $1)")" >&2
  done
}

# After the tests, green or red: a JVM crash report or a core file anywhere in the checkout fails the run. Each is
# named, the head of each crash report printed, and all are moved out of the tree to
# ${TMPDIR:-/tmp}/nvmf4j-crash-reports/<time>/ (a core of a JVM that ran SPDK holds gigabytes).
check_crash_reports() {
  local rc=$? found=()
  stage_times "$rc"
  mapfile -t found < <(find . -path ./e2e/cache -prune -o -type f \( -name 'hs_err_pid*' -o -name core \
    -o -name 'core.[0-9]*' \) -print 2>/dev/null)
  if [ ${#found[@]} -gt 0 ]; then
    local dest="${TMPDIR:-/tmp}/nvmf4j-crash-reports/$(date +%Y%m%dT%H%M%S)"
    mkdir -p "$dest"
    echo "dev.sh: ${#found[@]} crash report(s) or core file(s) written during the tests (moved to $dest):" >&2
    local f
    for f in "${found[@]}"; do
      echo "  $f" >&2
      case "$f" in *hs_err_pid*) head -n 20 "$f" | sed 's/^/    /' >&2 ;; esac
      mv "$f" "$dest/$(echo "${f#./}" | tr / _)"
    done
    [ "$rc" = 0 ] && rc=1
  fi
  exit "$rc"
}

mvn_cmd() {
  mvn -B -ntp "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  build)
    setup
    mvn_cmd -q -DskipTests package
    ;;
  run)
    setup
    mvn_cmd -q -DskipTests package
    exec bin/nvmf4j-target "$@"
    ;;
  fuzz)
    setup_build_tools
    setup_native_tools
    if [ "${1:-}" = --rest ]; then
      shift
      mvn_cmd -q test-compile dependency:build-classpath -Dmdep.outputFile=target/restfuzz.classpath \
        -Dmdep.includeScope=test -pl mgmt-api -am
      exec java -Xmx1g -Dio.netty.leakDetection.level=disabled \
        -cp "mgmt-api/target/test-classes:mgmt-api/target/classes:$(cat mgmt-api/target/restfuzz.classpath)" \
        io.nvmf4j.service.api.RestBodyFuzz "$@"
    fi
    mvn_cmd -q test-compile dependency:build-classpath -Dmdep.outputFile=target/fuzz.classpath \
      -Dmdep.includeScope=test -pl nvmf-target -am
    exec java -Xmx1g -XX:+UseParallelGC -Dio.netty.leakDetection.level=disabled \
      -cp "nvmf-target/target/test-classes:nvmf-target/target/classes:$(cat nvmf-target/target/fuzz.classpath)" \
      io.nvmf4j.fuzz.ParserFuzz "$@"
    ;;
  jmh)
    # JMH benchmarks of the engine without sockets (CommandCostBenchmark: cost per command); JMH's options follow
    setup_build_tools
    setup_native_tools
    mvn_cmd -q test-compile dependency:build-classpath -Dmdep.outputFile=target/jmh.classpath \
      -Dmdep.includeScope=test -pl nvmf-target -am
    exec java -cp "nvmf-target/target/test-classes:nvmf-target/target/classes:$(cat nvmf-target/target/jmh.classpath)" \
      org.openjdk.jmh.Main "$@"
    ;;
  scale)
    case "${1:-}" in -h|--help) exec fio-jobs/scale.py --help ;; esac
    setup_build_tools
    setup_native_tools
    mvn_cmd -q -DskipTests package -pl mgmt-api -am
    exec fio-jobs/scale.py "$@"
    ;;
  soak)
    test_main io.nvmf4j.it.Soak "$@"
    ;;
  authflood)
    # the benchmark line of DH-HMAC-CHAP off the poll threads: QD1 read p99 alone and beside a ffdhe8192 flood
    test_main io.nvmf4j.it.AuthFloodLatency "$@"
    ;;
  package)
    arch=()
    case "${1:-}" in
      --arch) arch=(--arch "${2:?--arch needs amd64 or arm64}") ;;
      --arch=*) arch=(--arch "${1#--arch=}") ;;
      "") ;;
      *) echo "dev.sh package: unknown argument $1 (--arch amd64|arm64)" >&2; exit 2 ;;
    esac
    if [ "${arch[1]:-}" = arm64 ] && [ "$(uname -m)" = x86_64 ]; then setup require; else setup; fi
    setup_package_tools
    mvn_cmd -q -DskipTests package
    dpu-profile/package.sh "${arch[@]}"
    ;;
  setup)
    setup
    setup_package_tools
    ;;
  bench)
    case "${1:-}" in -h|--help) exec fio-jobs/bench.sh --help ;; esac
    setup
    setup_bench_tools
    setup_plot_tools
    mvn_cmd -q -DskipTests package
    exec fio-jobs/bench.sh "$@"
    ;;
  test)
    trap check_crash_reports EXIT
    stage setup
    setup
    setup_bench_tools
    setup_plot_tools  # fio-jobs/test.sh checks the kit's smoke run draws its PNG
    setup_ceph
    setup_xfs
    stage "maven verify"
    mvn_cmd verify
    # the fio runner against two loop devices (no target needed)
    stage fio-jobs
    fio-jobs/test.sh
    # the .deb installed into a clean Debian 12 root, the unit's command serving there (mvn verify packaged it)
    stage packages
    setup_package_tools
    dpu-profile/test.sh --no-build
    # the arm64 packages: layout, AArch64 libraries registering every native, Depends resolvable for arm64
    stage "arm64 packages"
    dpu-profile/test-arm64.sh --no-build
    # the Linux host in QEMU guests against the service just built: the 6.1 guest (everything but DH-HMAC-CHAP
    # and TLS) and, at the same time, the 6.12 guest (DH-HMAC-CHAP and TLS need Debian 13's kernel 6.12 and
    # nvme-cli 2.13, which 6.1 and nvme-cli 2.3 lack; fetched into e2e/cache, nothing installed). The 6.12
    # guest spends much of its time waiting on the timeouts its scenarios test, so beside the 6.1 guest it
    # costs the run little of the time it took alone after it.
    stage "e2e (kernels 6.1 and 6.12, two guests at once)"
    e2e/run.sh --quiet --apt-only   # the host packages of both, installed once before they start
    e2e_trixie_start
    e2e61=0; e2e/run.sh --quiet --no-build --no-apt || e2e61=$?
    e2e_trixie_wait || exit 1
    [ "$e2e61" = 0 ] || exit "$e2e61"
    stage_close
    stage_close
    ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
    ;;
esac

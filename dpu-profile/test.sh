#!/bin/bash
# The packages' install test: builds dist/*.deb and *.tar.gz (dpu-profile/package.sh; the Maven build
# first when nothing is staged), makes a clean Debian 12 root with debootstrap (cached as a tarball under
# ~/.cache/nvmf4j, so later runs take seconds; the packages apt fetches are cached beside it), installs
# the .deb there with apt (so its Depends resolve from Debian's mirror), checks the files and
# `systemd-analyze verify` on the installed unit, then runs the unit's ExecStart in the chroot inside a
# private network namespace (only lo: the fixed ports 4420/8420 cannot collide with anything), with the
# state directory the unit gives, and checks that it serves the embedded default: nvmfctl against its API
# and SPDK's spdk_nvme_identify over NVMe/TCP on loopback; SIGTERM then must end it with exit 0. Also
# `man -l` on every page and `bash -n` on the completions. Last, the unit itself under systemd with its
# hardening: the root booted by systemd-nspawn (private network), systemctl start, nvmfctl and identify,
# systemctl stop with exit status 0. Needs root (debootstrap, chroot, unshare, systemd-nspawn).
#
# Every mount lives in a private mount namespace (unshare --mount) that ends with the step that made
# it, so nothing is mounted in the host's namespace and no exit path can leave a mount behind; the trap
# stops the service (by its PID) and removes the root.
#
#   dpu-profile/test.sh [--no-build]    --no-build: package what dpu-profile/target/dist holds
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nvmf4j
BASE=$CACHE/debian12-root.tar.zst
ARCHIVES=$CACHE/debian12-apt-archives
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NQN=nqn.2026-11.io.nvmf4j:default
START=$(date +%s)

# ---- inner steps (run by this script inside unshare; print PASS/FAIL lines) ----
mount_chroot() { # ROOT: /proc, /sys, a /dev with the few nodes a JVM and apt use, /dev/shm
  local root=$1 n
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount -t tmpfs -o mode=0755,size=1m devtmp "$root/dev"
  for n in null zero full random urandom tty; do
    touch "$root/dev/$n"
    mount --bind "/dev/$n" "$root/dev/$n"
  done
  mkdir -p "$root/dev/shm" "$root/dev/pts"
  mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
  ln -s /proc/self/fd "$root/dev/fd"
}
running_as() { # PID USER UID:GID STATE-DIR: the service runs as USER (UID:GID in the root it runs in) with
  # CAP_IPC_LOCK only; its state is USER's
  local pid=$1 user=$2 ids=$3 dir=$4 uid=${3%%:*} who eff
  who=$(stat -c %u "/proc/$pid" 2> /dev/null)
  eff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$pid/status" 2> /dev/null)
  # CAP_IPC_LOCK is capability 14
  [ "$who" = "$uid" ] && [ "$eff" = 0000000000004000 ] \
    && echo "PASS  the service runs as $user (uid $uid) with CAP_IPC_LOCK only (CapEff $eff)" \
    || echo "FAIL  the service runs as uid '$who' with CapEff '$eff' (want $user, uid $uid, 0000000000004000)"
  who=$(stat -c %u:%g "$dir" "$dir/api-token" "$dir/config.json" 2> /dev/null | sort -u | paste -sd' ')
  [ "$who" = "$ids" ] && echo "PASS  the state directory, config.json and api-token belong to $user ($who)" \
    || echo "FAIL  state ownership: $who (want $ids)"
}
io_over_tcp() { # SPDK-TREE TMP WHAT: bdevperf's verify workload (write, read back, compare) over NVMe/TCP
  local spdk=$1 tmp=$2 what=$3 out rc
  cat > "$tmp/bdevperf.json" <<JSON
{"subsystems": [{"subsystem": "bdev", "config": [{"method": "bdev_nvme_attach_controller", "params":
 {"name": "Nvme0", "trtype": "tcp", "adrfam": "IPv4", "traddr": "127.0.0.1", "trsvcid": "4420", "subnqn": "$NQN"}}]}]}
JSON
  out=$("$spdk/build/examples/bdevperf" --no-huge -s 512 -m 0x1 --no-rpc-server --disable-cpumask-locks \
    -c "$tmp/bdevperf.json" -q 8 -o 4096 -w verify -t 2 2>&1); rc=$?
  # Total: runtime-less columns IOPS, MiB/s, Fail/s, TO/s, latencies
  grep -E '^[[:space:]]*Total ' <<< "$out" | sed 's/^[[:space:]]*/      /'
  [ $rc = 0 ] && grep -qE '^[[:space:]]*Total +: +[0-9.]+ +[0-9.]+ +0\.00 +0\.00 ' <<< "$out" \
    && echo "PASS  I/O over NVMe/TCP against $what: bdevperf verify 2 s, no failed I/O, exit 0" \
    || echo "FAIL  bdevperf verify against $what: rc=$rc: $(tail -n 4 <<< "$out" | tr '\n' ' ')"
}
if [ "${1:-}" = --inner-install ]; then
  root=$2 deb=$3 archives=$4
  set -e
  mount_chroot "$root"
  mount --bind "$archives" "$root/var/cache/apt/archives"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp "$deb" "$root/tmp/"
  chroot "$root" apt-get update -qq
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")"
  exit 0
fi
if [ "${1:-}" = --inner-verify ]; then
  root=$2
  mount_chroot "$root"
  chroot "$root" systemd-analyze verify /lib/systemd/system/nvmf4j.service
  exit $?
fi
if [ "${1:-}" = --inner-serve ]; then
  root=$2 tmp=$3 spdk=$4
  mount_chroot "$root"
  ip link set lo up
  unit=$root/lib/systemd/system/nvmf4j.service
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
  state=$(sed -n 's/^StateDirectory=//p' "$unit")
  mode=$(sed -n 's/^StateDirectoryMode=//p' "$unit")
  user=$(sed -n 's/^User=//p' "$unit")
  # AmbientCapabilities=CAP_IPC_LOCK ... as setpriv's list: +ipc_lock,...
  caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd,)
  chroot "$root" install -d -m "${mode:-0755}" -o "$user" -g "$user" "/var/lib/$state"
  echo "INFO  ExecStart: $exec_start as $user with ${caps:-no capabilities} (state directory /var/lib/$state, mode ${mode:-0755})"
  # as systemd would start it: the unit's user, its capabilities only (bounding, inheritable and ambient set,
  # as CapabilityBoundingSet= and AmbientCapabilities= give them), LimitMEMLOCK, a clean environment
  # shellcheck disable=SC2086
  (ulimit -l unlimited; exec chroot "$root" setpriv --reuid="$user" --regid="$user" --init-groups \
    --bounding-set="-all${caps:+,$caps}" --inh-caps="-all${caps:+,$caps}" --ambient-caps="-all${caps:+,$caps}" \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    $exec_start) > "$tmp/service.log" 2>&1 &
  pid=$!
  echo "$pid" > "$tmp/service.pid"
  up=""
  for _ in $(seq 1 120); do
    grep -q "listening on tcp 127.0.0.1:4420 for $NQN" "$tmp/service.log" && grep -q 'management API' "$tmp/service.log" && { up=1; break; }
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.5
  done
  if [ -n "$up" ]; then echo "PASS  the unit's ExecStart serves: listening on tcp 127.0.0.1:4420 for $NQN"
  else echo "FAIL  the unit's ExecStart did not come up: $(tail -n 5 "$tmp/service.log" | tr '\n' ' ')"; fi
  [ -f "$root/var/lib/$state/config.json" ] && echo "PASS  the embedded default was written to /var/lib/$state/config.json" \
    || echo "FAIL  no /var/lib/$state/config.json"
  [ "$(stat -c %a "$root/var/lib/$state/api-token" 2> /dev/null)" = 600 ] && echo "PASS  api-token created with mode 0600" \
    || echo "FAIL  api-token missing or not 0600"
  running_as "$pid" "$user" "$(chroot "$root" id -u "$user"):$(chroot "$root" id -g "$user")" "$root/var/lib/$state"
  # nvmfctl ls (the tree) where this nvmfctl has it, else subsystem list
  if chroot "$root" nvmfctl --help 2>&1 | grep -qE '^ +ls( |$)'; then ls_cmd=(ls); else ls_cmd=(subsystem list); fi
  out=$(chroot "$root" env -i PATH=/usr/bin:/bin nvmfctl "${ls_cmd[@]}" 2>&1); rc=$?
  echo "INFO  nvmfctl ${ls_cmd[*]}:"; sed 's/^/      /' <<< "$out"
  if [ $rc = 0 ] && grep -q "$NQN" <<< "$out"; then echo "PASS  nvmfctl ${ls_cmd[*]} (installed, against its API in the namespace) shows $NQN"
  else echo "FAIL  nvmfctl ${ls_cmd[*]}: rc=$rc"; fi
  out=$(chroot "$root" nvmfctl --json health 2>&1); rc=$?
  [ $rc = 0 ] && echo "PASS  nvmfctl health: $(tr -d '\n ' <<< "$out" | cut -c1-100)" || echo "FAIL  nvmfctl health: rc=$rc $out"
  # NVMe/TCP identify of the default subsystem over loopback, by SPDK's host (this machine's SPDK build)
  if [ -x "$spdk/build/bin/spdk_nvme_identify" ]; then
    out=$("$spdk/build/bin/spdk_nvme_identify" --no-huge -s 512 \
      -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:$NQN" 2>&1); rc=$?
    grep -E '^(Model Number|Serial Number|Subsystem NQN|Namespace ID:|Size \(in LBAs\))' <<< "$out" | sed 's/^/      /' | head -8
    if [ $rc = 0 ] && grep -q 'Model Number: *nvmf4j' <<< "$out" && grep -q "$NQN" <<< "$out" \
      && grep -q 'Size (in LBAs): *524288 ' <<< "$out"; then
      echo "PASS  spdk_nvme_identify over NVMe/TCP: model nvmf4j, $NQN, namespace of 524288 LBAs (256 MiB)"
    else echo "FAIL  spdk_nvme_identify: rc=$rc: $(tail -n 5 <<< "$out" | tr '\n' ' ')"; fi
    io_over_tcp "$spdk" "$tmp" "the unit's ExecStart as $user"
  else
    echo "FAIL  no spdk_nvme_identify under $spdk/build/bin (spdk-jni/spdk-build.sh builds it)"
  fi
  kill -TERM "$pid"
  wait "$pid"; rc=$?
  [ $rc = 0 ] && echo "PASS  SIGTERM: the service exited 0" || echo "FAIL  SIGTERM: exit status $rc: $(tail -n 3 "$tmp/service.log" | tr '\n' ' ')"
  rm -f "$tmp/service.pid"
  exit 0
fi

# ---- the outer test ----
[ "$(id -u)" = 0 ] || { echo "package test: needs root (debootstrap, chroot, unshare)"; exit 1; }
for c in debootstrap unshare chroot zstd ip systemd-nspawn nsenter; do
  command -v $c > /dev/null || { echo "package test: $c missing (./dev.sh setup installs it)"; exit 1; }
done
TMP=$(mktemp -d)
ROOT=$TMP/root
cleanup() {
  local pid
  pid=$(cat "$TMP/service.pid" 2> /dev/null) && kill -KILL "$pid" 2> /dev/null
  # the container's init: killing it ends every process of the container and nspawn with it
  pid=$(cat "$TMP/nspawn.init" 2> /dev/null) && { kill -KILL "$pid" 2> /dev/null; sleep 1; }
  # the mounts were made in namespaces that are gone; refuse to delete through one that is not
  if grep -q " $TMP/" /proc/self/mounts; then echo "package test: mounts left under $TMP, not removing it" >&2
  else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
FAILS=0 N=0
ok() { N=$((N + 1)); echo "PASS  $1"; }
bad() { N=$((N + 1)); FAILS=$((FAILS + 1)); echo "FAIL  $1"; }
tally() { # counts the PASS/FAIL lines of an inner step and shows them
  local line
  while IFS= read -r line; do
    echo "$line"
    case "$line" in PASS*) N=$((N + 1)) ;; FAIL*) N=$((N + 1)); FAILS=$((FAILS + 1)) ;; esac
  done
}
summary() { echo "package test: $N checks, $FAILS failed ($(( $(date +%s) - START )) s)"; [ $FAILS = 0 ]; exit $?; }

# 1. the packages
if [ "${1:-}" != --no-build ] || [ ! -d "$HERE/target/dist/lib" ]; then
  (cd "$TOP" && mvn -B -ntp -q ${MAVEN_ARGS:-} -DskipTests package -pl dpu-profile -am) > "$TMP/mvn.log" 2>&1 \
    || { tail -n 30 "$TMP/mvn.log"; bad "mvn package"; summary; }
fi
if out=$("$HERE/package.sh" 2>&1); then ok "package.sh built both packages"; else bad "package.sh: $out"; summary; fi
echo "$out" | sed 's/^/      /'
DEB=$(ls "$TOP"/dist/nvmf4j_*_amd64.deb | tail -n 1)
TGZ=$(ls "$TOP"/dist/nvmf4j-*-linux-x86_64.tar.gz | tail -n 1)
tar -tzf "$TGZ" > "$TMP/tgz.list"
for f in bin/nvmf4j-target bin/nvmfctl lib/mgmt-api- conf/nvmf4j.json systemd/nvmf4j.service man/man1/nvmfctl.1 \
  man/man1/nvmf4j-target.1 completion/nvmfctl completion/nvmf4j-target; do
  grep -q "^nvmf4j-[^/]*/$f" "$TMP/tgz.list" || bad "tarball lacks $f"
done
ok "tarball has bin/, lib/, conf/, systemd/, man/man1/, completion/ ($(wc -l < "$TMP/tgz.list") entries)"
# the tarball's launchers run from its layout (JAVA_HOME honoured)
mkdir -p "$TMP/tgz" && tar -C "$TMP/tgz" -xzf "$TGZ"
out=$(JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")} "$TMP"/tgz/nvmf4j-*/bin/nvmfctl --version 2>&1) \
  && ok "tarball: bin/nvmfctl --version runs from the unpacked layout: $out" || bad "tarball: bin/nvmfctl --version: $out"
out=$(JAVA_HOME=/nonexistent "$TMP"/tgz/nvmf4j-*/bin/nvmf4j-target --version 2>&1) \
  && bad "JAVA_HOME=/nonexistent still ran" || ok "tarball: the launcher uses JAVA_HOME (a bad one fails: $(head -c 80 <<< "$out"))"

# 2. a clean Debian 12 root (cached)
mkdir -p "$CACHE" "$ARCHIVES"
if [ ! -s "$BASE" ]; then
  echo "INFO  no cached Debian 12 root: debootstrap bookworm from $MIRROR (once per machine)"
  if debootstrap --variant=minbase --include=systemd,man-db bookworm "$TMP/base" "$MIRROR" > "$TMP/debootstrap.log" 2>&1; then
    rm -f "$TMP"/base/var/cache/apt/archives/*.deb
    tar -C "$TMP/base" -cf - . | zstd -q -T0 -o "$BASE.tmp" && mv "$BASE.tmp" "$BASE"
    rm -rf "$TMP/base"
  else
    tail -n 20 "$TMP/debootstrap.log"; bad "debootstrap bookworm"; summary
  fi
fi
mkdir -p "$ROOT" && zstd -dc -q "$BASE" | tar -C "$ROOT" -xf - && ok "clean Debian 12 root from $(basename "$BASE")" \
  || { bad "unpacking $BASE"; summary; }
[ ! -e "$ROOT/usr/bin/java" ] && [ ! -e "$ROOT/usr/share/nvmf4j" ] && ok "the root has no Java and no nvmf4j before the install" \
  || bad "the base root is not clean"

# 3. apt-get install ./nvmf4j_….deb (Depends from Debian's mirror)
t0=$(date +%s)
if unshare --mount --propagation private "$0" --inner-install "$ROOT" "$DEB" "$ARCHIVES" > "$TMP/apt.log" 2>&1; then
  ok "apt-get install ./$(basename "$DEB") in the clean root ($(( $(date +%s) - t0 )) s; $(grep -c '^Setting up' "$TMP/apt.log") packages set up)"
else
  tail -n 20 "$TMP/apt.log"; bad "apt-get install ./$(basename "$DEB")"; summary
fi
grep -E '^(Setting up|Selecting) ' "$TMP/apt.log" | grep -E 'nvmf4j|openjdk|librdmacm|libibverbs' | sed 's/^/      /'
for p in openjdk-17-jre-headless librdmacm1 libibverbs1 libnuma1 libaio1; do
  chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || bad "Depends: $p not installed"
done
ok "Depends resolved: openjdk-17-jre-headless, librdmacm1, libibverbs1, libnuma1, libaio1 installed"
for f in usr/bin/nvmf4j-target usr/bin/nvmfctl usr/share/nvmf4j/lib lib/systemd/system/nvmf4j.service \
  usr/share/man/man1/nvmfctl.1.gz usr/share/man/man1/nvmf4j-target.1.gz usr/share/bash-completion/completions/nvmfctl \
  usr/share/zsh/vendor-completions/_nvmfctl usr/share/doc/nvmf4j/examples/nvmf4j.json usr/share/doc/nvmf4j/copyright; do
  [ -e "$ROOT/$f" ] || bad "not installed: /$f"
done
ok "files under Debian paths (/usr/bin, /usr/share/nvmf4j/lib, /lib/systemd/system, man1, completions, doc/examples)"
if grep -rlsF "$TOP" "$ROOT/usr/share/nvmf4j/bin" "$ROOT/lib/systemd/system/nvmf4j.service" "$ROOT/usr/share/bash-completion" \
  "$ROOT/usr/share/zsh/vendor-completions" "$ROOT/usr/share/doc/nvmf4j" > /dev/null; then bad "the build tree's path is baked into an installed file"
else ok "no path of the build machine in the installed scripts, unit, completions and docs"; fi
if out=$(unshare --mount --propagation private "$0" --inner-verify "$ROOT" 2>&1); then
  ok "systemd-analyze verify /lib/systemd/system/nvmf4j.service (in the root): no findings${out:+: $out}"
else bad "systemd-analyze verify: $out"; fi

# 4. man pages and completion
pages=0 pfail=0
for p in $(chroot "$ROOT" dpkg -L nvmf4j | grep '^/usr/share/man/man1/.*\.1\.gz$'); do
  pages=$((pages + 1))
  chroot "$ROOT" env MANWIDTH=80 man -l "$p" 2> "$TMP/man.err" | grep -q '^NAME' && [ ! -s "$TMP/man.err" ] \
    || { pfail=$((pfail + 1)); echo "      man -l $p: $(head -c 200 "$TMP/man.err")"; }
done
[ $pfail = 0 ] && [ $pages -gt 2 ] && ok "man -l: all $pages pages render (NAME section, no warnings)" || bad "man -l: $pfail of $pages pages failed"
for c in nvmfctl nvmf4j-target; do
  chroot "$ROOT" bash -n "/usr/share/bash-completion/completions/$c" && ok "bash -n completions/$c" || bad "bash -n completions/$c"
  # loaded, it completes the subcommands / options
  case $c in nvmfctl) word="" want=subsystem ;; *) word=--st want=--state-dir ;; esac
  # (compopt works only inside a real completion: a no-op here)
  words=$(chroot "$ROOT" bash -c "compopt() { :; }; source /usr/share/bash-completion/completions/$c; COMP_WORDS=($c '$word'); COMP_CWORD=1; \
    fn=\$(complete -p $c | sed 's/.*-F \([^ ]*\).*/\1/'); \$fn; printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1 | tr '\n' ' ')
  grep -qw -- "$want" <<< "$words" && ok "bash completion of '$c $word<TAB>' offers $want" || bad "bash completion of $c: $words"
done

# 5. the unit's ExecStart in a private network namespace
SPDK=$("$TOP/spdk-jni/spdk-build.sh" 2> /dev/null || true)
tally < <(unshare --mount --propagation private --net "$0" --inner-serve "$ROOT" "$TMP" "$SPDK" 2>&1)
grep -E 'ERROR|Exception' "$TMP/service.log" | head -n 5 | sed 's/^/      service: /'

# 6. the unit itself under systemd, hardening included: the root booted with systemd-nspawn (its own
# systemd as PID 1, a private network with only lo), systemctl start, the same checks, systemctl stop
if ! command -v systemd-nspawn > /dev/null; then bad "systemd-nspawn missing (./dev.sh setup installs systemd-container)"; summary; fi
rm -rf "$ROOT/var/lib/nvmf4j"
# CAP_IPC_LOCK is not in nspawn's default set; a machine's systemd has it to give the unit
systemd-nspawn -q -D "$ROOT" --boot --private-network --register=no --keep-unit -M "nvmf4j-test-$$" \
  --capability=CAP_IPC_LOCK \
  > "$TMP/nspawn.log" 2>&1 &
NSPAWN=$!
INIT=""
for _ in $(seq 1 60); do
  INIT=$(pgrep -P "$NSPAWN" | head -n 1)
  [ -n "$INIT" ] && echo "$INIT" > "$TMP/nspawn.init" && \
    nsenter -t "$INIT" -a systemctl is-system-running 2> /dev/null | grep -Eq 'running|degraded' && break
  kill -0 "$NSPAWN" 2> /dev/null || break
  sleep 1
done
in_ct() { nsenter -t "$INIT" -a "$@"; }
if [ -n "$INIT" ] && in_ct systemctl is-system-running 2> /dev/null | grep -Eq 'running|degraded'; then
  ok "the root boots with systemd-nspawn (systemd is PID 1 there, private network)"
else
  tail -n 10 "$TMP/nspawn.log"; bad "systemd-nspawn --boot"; summary
fi
in_ct systemctl start nvmf4j.service
up=""
for _ in $(seq 1 60); do
  in_ct journalctl -u nvmf4j -q --no-pager 2> /dev/null | grep -q 'management API on' && { up=1; break; }
  sleep 1
done
state=$(in_ct systemctl show nvmf4j -p ActiveState --value)
[ -n "$up" ] && [ "$state" = active ] && ok "systemctl start nvmf4j: active and serving under the unit's hardening" \
  || bad "systemctl start nvmf4j: $state: $(in_ct journalctl -u nvmf4j -q --no-pager | tail -n 5 | tr '\n' ' ')"
[ "$(stat -c %a "$ROOT/var/lib/nvmf4j" 2> /dev/null)" = 700 ] && [ -f "$ROOT/var/lib/nvmf4j/config.json" ] \
  && ok "StateDirectory: systemd made /var/lib/nvmf4j (0700), the service wrote config.json there" \
  || bad "StateDirectory /var/lib/nvmf4j: $(ls -ld "$ROOT/var/lib/nvmf4j" 2>&1)"
out=$(in_ct nvmfctl subsystem list 2>&1)
grep -q "$NQN" <<< "$out" && ok "nvmfctl subsystem list against the unit's service shows $NQN" || bad "nvmfctl under systemd: $out"
if [ -x "$SPDK/build/bin/spdk_nvme_identify" ]; then
  out=$(nsenter -t "$INIT" -n "$SPDK/build/bin/spdk_nvme_identify" --no-huge -s 512 \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:$NQN" 2>&1)
  grep -q 'Model Number: *nvmf4j' <<< "$out" && grep -q 'Size (in LBAs): *524288 ' <<< "$out" \
    && ok "spdk_nvme_identify over NVMe/TCP against the unit's service" || bad "identify under systemd: $(tail -n 3 <<< "$out" | tr '\n' ' ')"
  tally < <(nsenter -t "$INIT" -n bash -c "$(declare -f io_over_tcp); NQN='$NQN' io_over_tcp '$SPDK' '$TMP' 'the unit under systemd'")
fi
MAIN=$(in_ct systemctl show nvmf4j -p MainPID --value)
# the container shares the host's PID numbers only through its own /proc: read it there
tally < <(in_ct bash -c "$(declare -f running_as); running_as $MAIN nvmf4j \$(id -u nvmf4j):\$(id -g nvmf4j) /var/lib/nvmf4j")
echo "INFO  systemd-analyze security nvmf4j: $(in_ct systemd-analyze security nvmf4j.service --no-pager 2>&1 | tail -n 1)"
in_ct systemctl stop nvmf4j.service
show=$(in_ct systemctl show nvmf4j -p ExecMainStatus -p Result -p ActiveState | tr '\n' ' ')
grep -q 'ExecMainStatus=0' <<< "$show" && grep -q 'Result=success' <<< "$show" \
  && ok "systemctl stop (SIGTERM): $show" || bad "systemctl stop: $show"
in_ct systemctl poweroff 2> /dev/null
for _ in $(seq 1 30); do kill -0 "$NSPAWN" 2> /dev/null || break; sleep 1; done
kill -0 "$NSPAWN" 2> /dev/null && bad "the container did not power off" || rm -f "$TMP/nspawn.init"

# 7. purge keeps the state (volume images) unless asked
out=$(chroot "$ROOT" dpkg --purge nvmf4j 2>&1)
[ -f "$ROOT/var/lib/nvmf4j/config.json" ] && grep -q 'kept /var/lib/nvmf4j' <<< "$out" \
  && ok "dpkg --purge keeps /var/lib/nvmf4j and says so: $(grep 'kept' <<< "$out" | cut -c1-90)…" \
  || bad "dpkg --purge: $(ls /var/lib/nvmf4j 2>&1 | head -n 2) $out"
summary

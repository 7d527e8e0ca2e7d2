#!/bin/bash
# PID 1 of the arm64 test boot (e2e/arm64/run.sh), in the Debian arm64 root: installs the package,
# (engine spdk: `nvmf4j-target setup --profile bluefield3 --scale-down`, as a DPU's first boot would,)
# runs `nvmf4j-target check`, starts the service from the installed unit's ExecStart, connects the
# kernel's NVMe host over each transport (rdma: soft-RoCE on a dummy netdev; tcp: loopback), fio
# write+verify (engine spdk: a namespace added live on the first transport), disconnects, SIGTERM
# (every hugepage free again after it). Results: /mnt/results.tsv (check, PASS|FAIL, detail),
# /mnt/timings.tsv (name, seconds, what); its exit status goes to /mnt/guest.rc.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
RES=/mnt
uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "E2E: guest init (PID $$), uptime $(uptime_s)s"
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
hostname nvmf4j-arm64
ip link set lo up

main() {
  set -a; . "$RES/params.env"; set +a
  local NQN=nqn.2026-11.io.nvmf4j:arm64-e2e RXE_IF=e2e0 RXE_ADDR=10.213.0.1 TCP_PORT=4420 RDMA_PORT=4421
  local ENGINE=${E2E_ENGINE:-java} HOSTNQN=""
  # the profile's subsystem and RDMA port (dpu-profile/src/profiles/bluefield3)
  [ "$ENGINE" = java ] || NQN=nqn.2026-11.io.nvmf4j:bluefield3 RDMA_PORT=4420
  local SVC_LOG=$RES/nvmf4j-service.log NFAIL=0 t rc out
  now_us() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000000 + 10#${t#*.} )); }
  since() { local d=$(( $(now_us) - $1 )); printf '%d.%03d' $((d / 1000000)) $(((d % 1000000) / 1000)); }
  row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$RES/results.tsv"; echo "E2E: $2 $1: $3"; }
  pass() { row "$1" PASS "$2"; }
  fail() { row "$1" FAIL "$2"; NFAIL=$((NFAIL + 1)); }
  alive() { local st; st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; st=${st##*) }; [ "${st%% *}" != Z ]; }
  timing() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$RES/timings.tsv"; }
  timing boot "$(uptime_s)" "kernel start to the guest script (uptime)"

  # ---- the machine
  out="$(uname -m), $(nproc) cpus, $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo), kernel $(uname -r)"
  [ "$(uname -m)" = aarch64 ] && pass arm64/machine "$out" || fail arm64/machine "not aarch64: $out"
  t=$(now_us)
  out=$(java -XshowSettings:properties -version 2>&1)
  rc=$?
  timing java-version "$(since "$t")" "java -version (JVM start and exit)"
  if [ $rc = 0 ] && grep -q 'os.arch = aarch64' <<< "$out"; then
    pass arm64/jdk "$(grep -m1 'java.vm.name' <<< "$out" | sed 's/^ *//') $(grep -m1 'java.runtime.version' <<< "$out" | sed 's/^ *//'), os.arch = aarch64"
  else fail arm64/jdk "java: rc=$rc $(head -n 3 <<< "$out" | tr '\n' ' ')"; fi

  # ---- soft-RoCE in place of the ConnectX ports
  local RXE_OK=0
  for m in nvme-tcp nvme-rdma dummy rdma_rxe ib_uverbs rdma_ucm; do modprobe "$m" || echo "modprobe $m failed"; done
  if ip link add "$RXE_IF" type dummy && ip addr add "$RXE_ADDR/24" dev "$RXE_IF" && ip link set "$RXE_IF" up &&
      rdma link add rxe0 type rxe netdev "$RXE_IF" && out=$(timeout 60 ibv_devinfo -d rxe0 2>&1) && grep -q PORT_ACTIVE <<< "$out"; then
    RXE_OK=1; pass rxe "rxe0 on $RXE_IF ($RXE_ADDR): $(grep -m1 -o 'PORT_ACTIVE.*' <<< "$out"), libibverbs' rxe provider (arm64)"
  else fail rxe "soft-RoCE rxe0 on $RXE_IF: $(tail -n 2 <<< "$out" | tr '\n' ' ')"; fi

  # ---- the package
  local LAUNCHER=$E2E_LAUNCHER UNIT=""
  if [ -n "$E2E_DEB" ]; then
    t=$(now_us)
    out=$(dpkg -i "/dist/$E2E_DEB" 2>&1); rc=$?
    echo "$out" > "$RES/dpkg-install.txt"
    timing install "$(since "$t")" "dpkg -i $E2E_DEB"
    if [ $rc = 0 ] && [ "$(dpkg-query -W -f='${Status} ${Architecture}' nvmf4j 2>/dev/null)" = "install ok installed arm64" ]; then
      pass install "dpkg -i $E2E_DEB: nvmf4j $(dpkg-query -W -f='${Version}' nvmf4j) arm64 installed, Depends satisfied by the Debian arm64 root"
    else fail install "dpkg -i $E2E_DEB: rc=$rc $(tail -n 3 <<< "$out" | tr '\n' ' ')"; return; fi
    for u in /lib/systemd/system/nvmf4j.service /usr/lib/systemd/system/nvmf4j.service; do [ -f "$u" ] && { UNIT=$u; break; }; done
    [ -n "$UNIT" ] || { fail unit "no nvmf4j.service installed"; return; }
    LAUNCHER=/usr/bin/nvmf4j-target
  fi

  # ---- engine spdk: the machine set up as the profile says (what a DPU's provisioning runs once)
  if [ "$ENGINE" = spdk ]; then
    mkdir -p /etc/nvme
    [ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn > /etc/nvme/hostnqn
    HOSTNQN=$(cat /etc/nvme/hostnqn)
    t=$(now_us)
    out=$(timeout 600 env NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS" "$LAUNCHER" setup --profile bluefield3 --scale-down \
      --uplink "$RXE_ADDR" --mgmt-address 127.0.0.1 2>&1); rc=$?
    echo "$out" > "$RES/setup.txt"; echo "$out"
    timing setup "$(since "$t")" "nvmf4j-target setup --profile bluefield3 --scale-down"
    local eline
    eline=$(grep -m1 -E '^ *engine: ' <<< "$out" | sed 's/^ *//')
    # the pages setup reports reserved must be those the kernel shows (a read-back of /proc/sys that saw
    # one digit of "320" once warned of "3 of 320" here while all 320 were reserved)
    local got wline want
    got=$(cat /proc/sys/vm/nr_hugepages)
    wline=$(grep -m1 'the kernel reserved' <<< "$out")
    want=$(sed -nE 's/.*the kernel reserved [0-9]+ of ([0-9]+) pages.*/\1/p' <<< "$wline")
    if [ -n "$want" ] && [ "$got" -ge "$want" ]; then
      fail profile/setup "setup warned '$wline' but the kernel holds $got pages"; return
    fi
    if [ $rc = 0 ] && [[ "$eline" == "engine: spdk "* ]]; then
      pass profile/setup "setup --profile bluefield3 --scale-down: exit 0, $(cat /proc/sys/vm/nr_hugepages) x 2 MiB hugepages reserved; $eline"
    else fail profile/setup "setup: exit $rc, engine line '${eline:-none}': $(grep -iE 'error|fail|refus' <<< "$out" | head -n 3 | tr '\n' ' ')"; return; fi
  fi

  # ---- check --profile
  # the machine as a DPU's boot prepares it (check verifies, never changes anything): 2 MiB hugepages
  # (320: what the scaled-down profile wants for the engine check reports where the package's spdk engine
  # loads, SPDK's 512 MiB and 64 pages for DPDK; more than the java engine's RDMA buffers want, and the
  # config below uses them), hugetlbfs on /dev/hugepages (systemd's dev-hugepages.mount), and the check
  # run with the unit's LimitMEMLOCK
  [ "$ENGINE" = spdk ] || echo 320 > /proc/sys/vm/nr_hugepages   # engine spdk: setup reserved them
  mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages
  echo "E2E: $(cat /proc/sys/vm/nr_hugepages) x 2 MiB hugepages reserved, hugetlbfs on /dev/hugepages"
  if [ "$E2E_DO_CHECK" = 1 ]; then
    t=$(now_us)
    # shellcheck disable=SC2086
    (ulimit -l unlimited; exec timeout 600 env NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS" "$LAUNCHER" check $E2E_CHECK_ARGS) \
      > "$RES/check.txt" 2>&1; rc=$?
    timing check "$(since "$t")" "nvmf4j-target check $E2E_CHECK_ARGS"
    cat "$RES/check.txt"
    [ $rc = 0 ] && pass check "nvmf4j-target check $E2E_CHECK_ARGS: exit 0 ($(grep -ciE '^ *(ok|pass)' "$RES/check.txt") checks ok)" \
      || fail check "nvmf4j-target check $E2E_CHECK_ARGS: exit $rc: $(grep -iE 'fail|error' "$RES/check.txt" | head -n 3 | tr '\n' ' ')"
  fi

  # ---- the service, from the unit's command line (or the build tree's launcher)
  local STATE=/var/lib/nvmf4j exec_start run_as=()
  if [ -n "$UNIT" ]; then
    exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
    STATE=/var/lib/$(sed -n 's/^StateDirectory=//p' "$UNIT")
    # the unit's User= with only its AmbientCapabilities= (bounding, inheritable, ambient), as systemd runs it
    local user caps
    user=$(sed -n 's/^User=//p' "$UNIT")
    caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd,)
    install -d -m "$(sed -n 's/^StateDirectoryMode=//p' "$UNIT" | grep . || echo 0755)" ${user:+-o "$user" -g "$user"} "$STATE"
    [ -n "$user" ] && run_as=(setpriv --reuid="$user" --regid="$user" --init-groups --bounding-set="-all${caps:+,$caps}"
      --inh-caps="-all${caps:+,$caps}" --ambient-caps="-all${caps:+,$caps}")
    # the unit's EnvironmentFile: where an administrator puts the JVM options (engine spdk: after the
    # profile's, which setup wrote there)
    local profile_opts=""
    [ "$ENGINE" = java ] || profile_opts=$(. /etc/default/nvmf4j 2>/dev/null; echo "${NVMF4J_JAVA_OPTS:-}")
    printf 'NVMF4J_JAVA_OPTS="%s"\n' "${profile_opts:+$profile_opts }$E2E_JVM_OPTS -XX:ErrorFile=$RES/hs_err_pid%p.log" > /etc/default/nvmf4j
    # the drop-in's ExecStartPre=+ commands, run as root before the start as systemd does (engine spdk:
    # the hugetlbfs handed to the service's user)
    local dropin=/etc/systemd/system/nvmf4j.service.d/profile.conf pre
    if [ -f "$dropin" ]; then
      cp "$dropin" "$RES/profile.conf"
      while read -r pre; do echo "E2E: ExecStartPre=+$pre"; $pre || fail unit/exec-start-pre "'$pre' failed"; done \
        < <(sed -n 's/^ExecStartPre=+//p' "$dropin")
    fi
  else
    exec_start="$LAUNCHER --state-dir $STATE"
    install -d -m 0700 "$STATE"
    printf 'NVMF4J_JAVA_OPTS="%s"\n' "$E2E_JVM_OPTS -XX:ErrorFile=$RES/hs_err_pid%p.log" > /etc/default/nvmf4j
  fi
  local rdma_listener=""
  [ $RXE_OK = 1 ] && [[ ",$E2E_TRANSPORTS," == *,rdma,* ]] && rdma_listener=", {\"transport\": \"rdma\", \"address\": \"$RXE_ADDR\", \"port\": $RDMA_PORT}"
  if [ "$ENGINE" = spdk ]; then
    # the profile's document as setup wrote it, with what an operator adds before the first start: a
    # malloc namespace, this host's NQN (the profile admits no host by default) and a TCP listener
    # beside the uplink's RDMA one (Jackson's layout, as ConfigStore writes it)
    local cfg=$STATE/config.json
    sed -i -e 's|"bdevs" : \[ \]|"bdevs" : [ {"name": "malloc0", "type": "malloc", "blockSize": 4096, "numBlocks": 16384} ]|' \
      -e "0,/\"hosts\" : \[ \]/s||\"hosts\" : [ \"$HOSTNQN\" ]|" \
      -e '0,/"namespaces" : \[ \]/s||"namespaces" : [ {"nsid": 1, "bdev": "malloc0"} ]|' \
      -e "0,/\"listeners\" : \[ {/s||\"listeners\" : [ {\"transport\": \"tcp\", \"address\": \"127.0.0.1\", \"port\": $TCP_PORT}, {|" "$cfg"
    if ! grep -q '"engine" : "spdk"' "$cfg" || [ "$(grep -c '"malloc0"' "$cfg")" != 2 ] || ! grep -qF "\"$HOSTNQN\"" "$cfg" \
        || ! grep -q '"transport": "tcp"' "$cfg"; then
      cp "$cfg" "$RES/config.json"; fail profile/config "the profile's document ($cfg) is not as expected: see config.json"; return
    fi
  else
  cat > "$STATE/config.json" <<EOF
{"engine": "java", "cores": 2, "idleStrategy": "backoff",
 "tcp": {"inCapsuleDataSize": 8192, "maxQueueDepth": 128, "maxIoQueues": 2, "mdtsBytes": 131072},
 "rdma": {"inCapsuleDataSize": 4096, "maxQueueDepth": 128, "maxIoQueues": 2, "mdtsBytes": 131072,
          "srqDepth": 256, "dataBuffers": 128, "hugepages": true},
 "api": {"address": "127.0.0.1", "port": 8420},
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": 4096, "numBlocks": 16384}],
 "subsystems": [{"nqn": "$NQN", "model": "nvmf4j-arm64", "allowAnyHost": true,
   "namespaces": [{"nsid": 1, "bdev": "malloc0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $TCP_PORT}$rdma_listener]}]}
EOF
  fi
  # the state directory handed to the unit's user, as systemd's StateDirectory= does
  [ ${#run_as[@]} -gt 0 ] && chown -R "$user:$user" "$STATE"
  cp "$STATE/config.json" "$RES/config.json"
  echo "E2E: ExecStart: $exec_start (state $STATE, /etc/default/nvmf4j: $(cat /etc/default/nvmf4j))"
  # as systemd starts it: a clean environment plus the EnvironmentFile, LimitMEMLOCK=infinity,
  # LimitNOFILE=65536, UMask=0077
  t=$(now_us)
  # shellcheck disable=SC2086
  (set -a; . /etc/default/nvmf4j; set +a; ulimit -l unlimited; ulimit -n 65536; umask 0077
   exec "${run_as[@]}" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
     NVMF4J_JAVA_OPTS="$NVMF4J_JAVA_OPTS" $exec_start) > "$SVC_LOG" 2>&1 < /dev/null &
  local PID=$! up=0 want hp_total
  hp_total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
  for tr in ${E2E_TRANSPORTS//,/ }; do
    case $tr in rdma) want="nvme connect -t rdma -a $RXE_ADDR -s $RDMA_PORT" ;; *) want="nvme connect -t tcp -a 127.0.0.1 -s $TCP_PORT" ;; esac
  done
  for _ in $(seq 1 1200); do
    grep -q "$want" "$SVC_LOG" && { up=1; break; }
    alive $PID || break
    sleep 0.25
  done
  timing service-start "$(since "$t")" "ExecStart to the listeners announced (JVM start, config, listeners)"
  if [ $up = 1 ]; then pass service/start "pid $PID from the unit's ExecStart '$exec_start' (as $(stat -c %U "/proc/$PID"), CapEff $(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$PID/status")): '$want' announced after $(since "$t")s"
  else fail service/start "not up after $(since "$t")s: $(grep -v '^$' "$SVC_LOG" | tail -n 4 | tr '\n' ' ')"; kill -KILL $PID 2>/dev/null; return; fi
  if [ "$ENGINE" = spdk ]; then
    out=$(grep -m1 'spdk engine up' "$SVC_LOG")
    [[ "$out" == *"MiB hugepages"* ]] && pass spdk/engine "${out#*SpdkEngine - }; $(awk '/^HugePages_(Total|Free)/ {printf "%s %s ", $1, $2}' /proc/meminfo)" \
      || fail spdk/engine "no 'spdk engine up (... MiB hugepages' in the service log: $(grep -m3 -iE 'spdk|engine' "$SVC_LOG" | tr '\n' ' ')"
  fi

  # ---- the Linux host: connect, fio write+verify, disconnect, per transport
  ns_dev() { # [nsid] : the block device of namespace nsid (1) of $NQN: under its nvme-subsystem (native multipath), else its controller
    local s n
    for s in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
      [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
      for n in "$s"/nvme*n"${1:-1}"; do [ -e "$n" ] && [ -e "/sys/block/$(basename "$n")" ] && { echo "/dev/$(basename "$n")"; return 0; }; done
    done
    return 1
  }
  # nvmfctl against the profile's API: TLS with setup's certificate, the token from the state directory
  local ctl=(env NVMF4J_JAVA_OPTS="$E2E_JVM_OPTS" nvmfctl --url https://127.0.0.1:8420 --cacert /etc/nvmf4j/tls/api.crt
    --state-dir "$STATE")
  live_add() { # transport : nvmfctl adds a 16 MiB malloc namespace 2 while the host is connected; it appears, fio verifies it
    local t d="" rc
    t=$(now_us)
    { "${ctl[@]}" bdev create malloc live2 --size 16M && "${ctl[@]}" ns add -n "$NQN" -b live2 --nsid 2; } \
      > "$RES/nvmfctl-live.txt" 2>&1; rc=$?
    if [ $rc = 0 ]; then
      for _ in $(seq 1 600); do d=$(ns_dev 2) && [ -b "$d" ] && break; d=""; sleep 0.2; done
    fi
    timing "live-namespace-$1" "$(since "$t")" "nvmfctl bdev create + ns add (two JVM starts) to the host's block device"
    if [ $rc != 0 ] || [ -z "$d" ]; then
      fail "$1/live-namespace" "nvmfctl rc=$rc, block device ${d:-none} within 120 s: $(tail -n 3 "$RES/nvmfctl-live.txt" | tr '\n' ' ')"; return
    fi
    timeout 600 fio --name="live-$1" --filename="$d" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k --iodepth=16 \
      --size=4m --verify=crc32c --verify_fatal=1 --do_verify=1 --output-format=json --output="$RES/fio-live-$1.json" \
      > "$RES/fio-live-$1.txt" 2>&1; rc=$?
    if [ $rc = 0 ] && grep -q '"error" : 0' "$RES/fio-live-$1.json" && [ "$(blockdev --getsize64 "$d")" = $((16 << 20)) ]; then
      pass "$1/live-namespace" "nvmfctl bdev create + ns add over the API's TLS: $d (16 MiB) appeared $(since "$t")s after the first call, without a reconnect; fio wrote and verified 4 MiB on it"
    else fail "$1/live-namespace" "$d: fio rc=$rc, $(blockdev --getsize64 "$d") bytes: $(tail -n 3 "$RES/fio-live-$1.txt" | tr '\n' ' ')"; fi
  }
  local addr port dev c live_done=0
  for tr in ${E2E_TRANSPORTS//,/ }; do
    if [ "$tr" = rdma ]; then addr=$RXE_ADDR port=$RDMA_PORT; else addr=127.0.0.1 port=$TCP_PORT; fi
    t=$(now_us)
    # keep-alive 30 s, not the kernel's 5: under TCG on a loaded machine the host took longer than 5 s
    # between the admin queue's connect and its first keep-alive (it sends none before its I/O queues are
    # up), and the target rightly tore the controller down
    out=$(timeout 180 nvme connect -t "$tr" -a "$addr" -s "$port" -n "$NQN" --keep-alive-tmo=30 2>&1); rc=$?
    dev=""
    for _ in $(seq 1 200); do dev=$(ns_dev) && [ -b "$dev" ] && break; dev=""; sleep 0.1; done
    timing "connect-$tr" "$(since "$t")" "nvme connect -t $tr to the namespace's block device"
    if [ $rc = 0 ] && [ -n "$dev" ]; then pass "$tr/connect" "nvme connect -t $tr -a $addr -s $port: $out; $dev ($(blockdev --getsize64 "$dev") bytes)"
    else fail "$tr/connect" "nvme connect -t $tr: rc=$rc $out; device ${dev:-none}"; continue; fi
    t=$(now_us)
    timeout 600 fio --name="verify-$tr" --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k \
      --iodepth=16 --size="$E2E_FIO_SIZE" --verify=crc32c --verify_fatal=1 --do_verify=1 \
      --output-format=json --output="$RES/fio-$tr.json" > "$RES/fio-$tr.txt" 2>&1; rc=$?
    timing "fio-$tr" "$(since "$t")" "fio randwrite 4k QD16 $E2E_FIO_SIZE + crc32c verify over $tr"
    out=$(grep -oE '"(error|total_ios)" : [0-9]+' "$RES/fio-$tr.json" 2>/dev/null | tr -d '"' | tr '\n' ' ')
    if [ $rc = 0 ] && grep -q '"error" : 0' "$RES/fio-$tr.json"; then
      pass "$tr/fio-verify" "fio wrote and verified $E2E_FIO_SIZE (4k random, QD16, crc32c) on $dev in $(since "$t")s: $out"
    else fail "$tr/fio-verify" "fio rc=$rc $out $(tail -n 3 "$RES/fio-$tr.txt" | tr '\n' ' ')"; fi
    if [ "$ENGINE" = spdk ] && [ $live_done = 0 ]; then live_done=1; live_add "$tr"; fi
    out=$(timeout 60 nvme disconnect -n "$NQN" 2>&1); rc=$?
    [ $rc = 0 ] && grep -q 'disconnected 1 controller' <<< "$out" && pass "$tr/disconnect" "$out" || fail "$tr/disconnect" "rc=$rc $out"
  done

  # ---- --perf: spdk_nvme_perf against this engine (the java engine's turn comes after the SIGTERM)
  local PERF_ROWS="randread randwrite" PERF_SPDK=() PERF_JAVA=()
  perf_rows() { # port subnqn : sets PERF_OUT to "IOPS IOPS" for PERF_ROWS (- where perf failed); CPU 0, the target on CPU 1
    local w iops rc; PERF_OUT=""
    for w in $PERF_ROWS; do
      timeout 120 /tools/spdk_nvme_perf --no-huge -s 256 -c 0x1 -q 32 -o 4096 -w "$w" -t 10 -a 2 \
        -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$1 subnqn:$2 hostnqn:$HOSTNQN" \
        > "$RES/perf-$w-$1.txt" 2>&1; rc=$?
      iops=$(awk '$1 == "Total" && $2 == ":" && $3 > 0 {printf "%.0f", $3}' "$RES/perf-$w-$1.txt")
      [ $rc = 0 ] && [ -n "$iops" ] || iops=-
      PERF_OUT+="${PERF_OUT:+ }$iops"
    done
  }
  if [ "${E2E_PERF:-0}" = 1 ] && alive $PID; then
    perf_rows "$TCP_PORT" "$NQN"; read -r -a PERF_SPDK <<< "$PERF_OUT"
  fi

  # ---- SIGTERM
  if alive $PID; then
    t=$(now_us)
    kill -TERM $PID
    wait $PID; rc=$?
    timing stop "$(since "$t")" "SIGTERM to exit"
    [ $rc = 0 ] && pass service/sigterm "exit status 0 $(since "$t")s after SIGTERM" || fail service/sigterm "exit status $rc after SIGTERM"
    # every 2 MiB page the service held is free again (none left in a hugetlbfs file)
    out="$(awk '/^HugePages_(Total|Free)/ {printf "%s %s ", $1, $2}' /proc/meminfo)files left in /dev/hugepages: $(find /dev/hugepages -type f | wc -l)"
    if [ "$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)" = "$hp_total" ] && [ "$(find /dev/hugepages -type f | wc -l)" = 0 ]; then
      pass service/hugepages-released "$out"
    else fail service/hugepages-released "$out ($(find /dev/hugepages -type f | head -n 3 | tr '\n' ' '))"; fi
  else
    wait $PID; fail service/alive "the service died during the run: exit $?: $(tail -n 4 "$SVC_LOG" | tr '\n' ' ')"
  fi
  # ---- --perf: the java engine on its own state directory, as the profile places it (poll group on CPU 1)
  if [ "${E2E_PERF:-0}" = 1 ]; then
    local JSTATE=/var/lib/nvmf4j-java JPORT=4430 JNQN=nqn.2026-11.io.nvmf4j:arm64-perf
    install -d -m 0700 ${user:+-o "$user" -g "$user"} "$JSTATE"
    cat > "$JSTATE/config.json" <<EOF
{"engine": "java", "cores": 1, "pollGroupCores": "[1]", "idleStrategy": "backoff",
 "api": {"address": "127.0.0.1", "port": 0},
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": 4096, "numBlocks": 16384}],
 "subsystems": [{"nqn": "$JNQN", "allowAnyHost": true, "namespaces": [{"nsid": 1, "bdev": "malloc0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $JPORT}]}]}
EOF
    [ -z "${user:-}" ] || chown -R "$user:$user" "$JSTATE"
    t=$(now_us)
    (set -a; . /etc/default/nvmf4j; set +a; ulimit -l unlimited; ulimit -n 65536; umask 0077
     exec "${run_as[@]}" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
       NVMF4J_JAVA_OPTS="$NVMF4J_JAVA_OPTS" "${LAUNCHER:-/usr/bin/nvmf4j-target}" --state-dir "$JSTATE") > "$RES/nvmf4j-java-perf.log" 2>&1 < /dev/null &
    local JPID=$! jup=0
    for _ in $(seq 1 1200); do
      grep -q "nvme connect -t tcp -a 127.0.0.1 -s $JPORT" "$RES/nvmf4j-java-perf.log" && { jup=1; break; }
      alive $JPID || break
      sleep 0.25
    done
    timing java-perf-start "$(since "$t")" "the java engine's start for --perf"
    if [ $jup = 1 ]; then
      perf_rows "$JPORT" "$JNQN"; read -r -a PERF_JAVA <<< "$PERF_OUT"
      kill -TERM $JPID; wait $JPID || fail perf/java-sigterm "the java engine's service exited $? after SIGTERM"
    else fail perf/java-start "the java engine did not start: $(tail -n 3 "$RES/nvmf4j-java-perf.log" | tr '\n' ' ')"; kill -KILL $JPID 2>/dev/null; fi
    local i=0 w s j
    for w in $PERF_ROWS; do
      s=${PERF_SPDK[$i]:--} j=${PERF_JAVA[$i]:--}; i=$((i + 1))
      if [ "$s" != - ] && [ "$j" != - ]; then
        pass "perf/4k-$w-qd32" "spdk_nvme_perf (aarch64, CPU 0, 10 s after 2 s): spdk engine $s IOPS, java engine $j IOPS, java/spdk $(awk -v a="$j" -v b="$s" 'BEGIN {printf "%.2f", a / b}') (TCG: a sign only)"
      else fail "perf/4k-$w-qd32" "spdk_nvme_perf failed: spdk engine $s, java engine $j (perf-$w-*.txt)"; fi
    done
  fi
  return 0
}
dmesg_copy() { dmesg > "$RES/dmesg.txt" 2>&1; }

rc=99
if [ -f "$RES/.e2e-results" ] && [ -f "$RES/params.env" ]; then
  main 2>&1 | tee "$RES/guest.log"
  rc=${PIPESTATUS[0]}
  dmesg_copy
  awk -F'\t' '$2 == "FAIL" {f = 1} END {exit f}' "$RES/results.tsv" || [ $rc != 0 ] || rc=1
  echo "$rc" > "$RES/guest.rc"
else
  echo "E2E: results share or params.env missing in $RES"
fi
echo "E2E: finished rc=$rc, uptime $(uptime_s)s; powering off"
sync
echo o > /proc/sysrq-trigger
sleep 10

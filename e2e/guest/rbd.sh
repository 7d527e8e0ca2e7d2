# The rbd part (sourced by suite.sh; run.sh --only rbd): two nvmf4j gateways on one Ceph RBD image, inside the
# guest. A one-node Ceph cluster starts in the guest (e2e/ceph/cluster.sh with the host's ceph-mon and ceph-osd
# over 9p; the OSD keeps its objects in memory, memstore: BlueStore opens its file with O_DIRECT, which the
# guest's tmpfs does not have under kernel 6.1). Gateways A and B (java engine, own state directories, NVMe/TCP
# and API ports, cntlid ranges) serve the same image as one namespace (same NQN, NGUID and UUID) with
# "exclusiveLock": A's listener optimized, B's non-optimized; the Linux host's native multipath joins them.
#   1. two paths, one optimized; the image's exclusive lock is A's Ceph client's (rbd lock ls, rbd status)
#   2. reservations: this host registers and acquires Write Exclusive through path A (its controller's char
#      device: the command goes down that path only), Reservation Report through path B shows it; a second host
#      (its own host NQN and host ID) connected to B is refused writes (Reservation Conflict) and allowed reads;
#      this host preempts it through A and the second host finds the Registration Preempted page in log page
#      80h of its controller on B; the release through B is seen through A
#   2a. faults (rbd/fault/preempt-abort-*): under Write Exclusive - Registrants Only the second host writes a
#      pattern through B in a loop; B's connections to the OSD are delayed 1.5 s (tc netem on lo), or B's process is
#      stopped (SIGSTOP); this host's Preempt and Abort through A returns only once B drained or B's Ceph client is
#      blocklisted (required when B is stopped); the survivor's pattern written through A after it is the only
#      data on those blocks once B resumed, netem's queue is empty and the writer ended; the preempted host's next
#      write is refused
#   3. fio verify while A gets SIGKILL; B is made optimized through its REST API (as a cluster manager does: it
#      breaks the dead A's lock once Ceph's watch timeout has passed) and the host fails over; 0 verify errors;
#      the lock is B's client's; the failover time (SIGKILL to the first write completing through B) is printed
#   4. A restarts with the same config (optimized) and state directory while B holds the lock: A does not take
#      it (a restart never steals) and serves non-optimized; B steps down (gives the lock up), A made optimized
#      through its API takes the lock and is the host's optimized path again; writes go through A
#   5. B is made optimized while A, alive, keeps the lock: refused (409), the lock stays A's and nothing is
#      blocklisted; 8 blocks acknowledged through A just before (rbd/fault/acked-writes-*) are all read back
#      through B after a Flush there; then A's client is blocklisted at Ceph (ceph osd blocklist add, as a fencing agent does) and B,
#      made optimized, takes the fenced owner's lock; A (not restarted) notices at its next write, is inaccessible
#      to the host while it reconnects as a new Ceph client, then serves as non-optimized (its /metrics count the
#      blocklist and the reconnect); B steps down and A, made optimized through its API, takes the lock without
#      breaking it; writes go through A again
#   6. ten namespaces, each on its own image, added to both gateways through their APIs (and removed after), are
#      re-registered by this host through A all at once while B is stopped (SIGSTOP: B's watch on each header lingers until Ceph's watch timeout and never
#      acknowledges); each Register waits for B once (A's announce bound, then B's client of that image is
#      blocklisted) and all in parallel, so every one completes inside the host's I/O timeout (nvme_core io_timeout);
#      the times are printed (rbd/fault/ten-namespaces-dead-watch)
# The cluster is stopped at the end. Uses suite.sh's gateway helpers (ana_use, ana_put, ... with GW=rbd).
RBD_NQN=nqn.2026-12.io.nvmf4j:e2e-rbd RBD_A_PORT=4450 RBD_B_PORT=4451 RBD_A_API=8450 RBD_B_API=8451
RBD_IMAGE=e2e RBD_MIB=256 RBD_CLUSTER=$WORK/ceph
# the fault checks' image: no exclusive lock, both gateways optimized (a host may write through either), one
# namespace in its own subsystem (a controller's char device takes I/O commands only with one namespace)
RBD_SHARED_NQN=nqn.2026-12.io.nvmf4j:e2e-rbd-shared RBD_SHARED_IMAGE=e2e-shared RBD_SHARED_MIB=64
RBD_CONNECT=(--reconnect-delay=1 --ctrl-loss-tmo=600 --keep-alive-tmo=5)
RBD_FIO_BYTES=$((128 << 20))          # fio verify over the first 128 MiB (through Ceph under TCG)
# the dead-watch check's ten namespaces: one subsystem, each namespace on its own small image, both gateways
RBD_TEN_NQN=nqn.2026-12.io.nvmf4j:e2e-rbd-ten RBD_TEN=10 RBD_TEN_MIB=16

rbd_admin() { timeout 300 rbd -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" "$@"; }
ceph_admin() { timeout 300 ceph -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" "$@"; }
rbd_config() { # instance nvme-port api-port min-cntlid state-of-group-1 : writes $WORK/rbd-<instance>.json
  cat > "$WORK/rbd-$1.json" <<JSON
{"engine": "java", "cores": 1, "idleStrategy": "${E2E_IDLE:-backoff}", "api": {"port": $3},
 "storage": {"cephDirectories": ["$(dirname "$CEPH_CONF")"]},
 "bdevs": [{"name": "ceph0", "type": "rbd", "blockSize": 4096, "pool": "$CEPH_POOL", "image": "$RBD_IMAGE",
   "cephConf": "$CEPH_CONF", "clientName": "$CEPH_CLIENT", "keyring": "$CEPH_KEYRING", "timeoutSeconds": 120,
   "osdOpTimeoutSeconds": 60, "exclusiveLock": true},
  {"name": "ceph1", "type": "rbd", "blockSize": 4096, "pool": "$CEPH_POOL", "image": "$RBD_SHARED_IMAGE",
   "cephConf": "$CEPH_CONF", "clientName": "$CEPH_CLIENT", "keyring": "$CEPH_KEYRING", "timeoutSeconds": 120,
   "osdOpTimeoutSeconds": 60}], "commandQuiesceTimeMs": 65535,
 "subsystems": [{"nqn": "$RBD_NQN", "serial": "NVMF4JRBD0001", "model": "nvmf4j-e2e-rbd", "allowAnyHost": true,
   "maxNamespaces": 8, "minCntlid": $4, "maxCntlid": $(($4 + 99)),
   "namespaces": [{"nsid": 1, "bdev": "ceph0", "anaGroup": 1, "nguid": "6e766d66346a0016e000000000000001",
                   "uuid": "6e766d66-346a-4016-e000-000000000001"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $2, "anaStates": {"1": "$5"}}]},
  {"nqn": "$RBD_SHARED_NQN", "serial": "NVMF4JRBD0002", "model": "nvmf4j-e2e-rbd", "allowAnyHost": true,
   "maxNamespaces": 8, "minCntlid": $4, "maxCntlid": $(($4 + 99)),
   "namespaces": [{"nsid": 1, "bdev": "ceph1", "anaGroup": 1, "nguid": "6e766d66346a0016e000000000000002",
                   "uuid": "6e766d66-346a-4016-e000-000000000002"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $2, "anaStates": {"1": "optimized"}}]}]}
JSON
  cp "$WORK/rbd-$1.json" "$RES/rbd-config-$1.json"
}
rbd_api() { # instance method path [body] : the instance's REST API, printing only the HTTP status (the answer's
  # body in $WORK/rbd-api-body.txt)
  local data=()
  [ $# -lt 4 ] || data=(-d "$4")
  curl -sS -m 300 -o "$WORK/rbd-api-body.txt" -w '%{http_code}' -X "$2" \
    -H "Authorization: Bearer $(cat "$WORK/$GWT-state-$1/api-token")" -H 'Content-Type: application/json' \
    "${data[@]}" "http://127.0.0.1:$(gw "${1}_API")/api/v1$3"
}
ana_put_code() { # instance state : ana_put's PUT, printing only the HTTP status (the body in $WORK/ana-put-body.txt)
  local nqn rc; nqn=$(gw NQN)
  rbd_api "$1" PUT "/subsystems/${nqn//:/%3A}/listeners/tcp/127.0.0.1/$(gw "${1}_PORT")/ana/1" "{\"state\": \"$2\"}"; rc=$?
  cp "$WORK/rbd-api-body.txt" "$WORK/ana-put-body.txt" 2> /dev/null
  return $rc
}
rbd_clients() { # the Ceph client ids watching the image (rbd status), one a line
  rbd_admin status "$CEPH_POOL/$RBD_IMAGE" --format json 2> /dev/null | jq -r '[.watchers[].client] | unique[]'
}
rbd_locker() { # the Ceph client holding the image's exclusive lock (client.N), or "none"
  rbd_admin lock ls "$CEPH_POOL/$RBD_IMAGE" --format json 2> /dev/null | jq -r '[.[]?.locker] | first // "none"'
}
rbd_lock_check() { # check-name expected-locker(client.N|none) what : rbd lock ls (and rbd status) show it
  local got
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  { rbd_admin lock ls "$CEPH_POOL/$RBD_IMAGE"; rbd_admin status "$CEPH_POOL/$RBD_IMAGE"; } > "$OUTF" 2>&1
  got=$(rbd_locker)
  expect "exclusive lock owner" "$got" "$2"
  verdict 0 "rbd lock ls: $got ($3); rbd status: $(grep -c 'watcher=' "$OUTF") watch(es) by $(rbd_clients | sed 's/^/client./' | tr '\n' ' ')"
}
rbd_new_client() { # clients-before : the one client id that is not in the list given
  rbd_clients | grep -vxF -f <(tr ' ' '\n' <<< "$1" | grep .) | head -n 1
}
host_b_ctrl() { ctrl_of_host "${1:-$RBD_NQN}" "$RESV_B_NQN"; } # [nqn] : the second host's controller (default RBD_NQN)
rbd_metric() { # instance name : the value of that unlabelled counter in the instance's /metrics
  curl -s -m 20 -H "Authorization: Bearer $(cat "$WORK/$GW-state-$1/api-token" 2> /dev/null)" \
    "http://127.0.0.1:$(gw "${1}_API")/metrics" 2> /dev/null | awk -v m="$2" '$1 == m {printf "%.0f", $2}'
}
rbd_notice_check() { # check-name ctrl type : the oldest page of the controller's log page 80h is that type for nsid 1
  local rc b
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  timeout 60 nvme get-log "/dev/$2" --log-id=0x80 --log-len=64 --raw-binary > "$WORK/rbd-log80.bin" 2> "$OUTF"; rc=$?
  read -r -a b <<< "$(od -An -tu1 -v "$WORK/rbd-log80.bin" | tr -s ' \n' ' ')"
  echo "log page 80h: ${b[*]}" >> "$OUTF"
  expect "log page count" "${b[0]:-}" 1
  expect "reservation notification log page type" "${b[8]:-}" "$3"
  expect "available log pages after it" "${b[9]:-}" 0
  expect "nsid" "$(( ${b[12]:-0} | ${b[13]:-0} << 8 | ${b[14]:-0} << 16 | ${b[15]:-0} << 24 ))" 1
  verdict $rc "nvme get-log --log-id=0x80 on $2: count ${b[0]:-?}, type ${b[8]:-?} (1: registration preempted), nsid ${b[12]:-?}, ${b[9]:-?} more"
}
passthru_args() { # ctrl read|write : nvme io-passthru of one 4 KiB block at LBA 8 of nsid 1 through that controller
  # only (its char device); into the array PT (cli runs a program, not a function)
  PT=(nvme io-passthru "/dev/$1" --namespace-id=1 --data-len=4096 --cdw10=8 --cdw12=0)
  if [ "$2" = write ]; then PT+=(--opcode=0x01 --write --input-file="$WORK/rbd-block"); else PT+=(--opcode=0x02 --read); fi
}

rbd_reservations() { # A and B connected: Write Exclusive through A seen through B, a second host fenced
  local p=rbd/resv ca=/dev/$RBD_CTRL_A cb=/dev/$RBD_CTRL_B ida hb rc
  local hostb=(--hostnqn="$RESV_B_NQN" --hostid="$RESV_B_ID")
  hdr "rbd: reservations through one gateway seen through the other, a second host fenced"
  head -c 4096 /dev/urandom > "$WORK/rbd-block"
  ida=$(tr -d '-' < "/sys/class/nvme/$RBD_CTRL_A/hostid")
  # a controller's char device with one namespace takes I/O commands for it (the kernel's deprecated
  # NVME_IOCTL_IO_CMD there): each command goes down that path, not the multipath head's choice
  resv_cmd $p/register-via-A ok nvme resv-register "$ca" --namespace-id=1 --nrkey=0xa1 --rrega=0
  resv_cmd $p/acquire-write-exclusive-via-A ok nvme resv-acquire "$ca" --namespace-id=1 --crkey=0xa1 --rtype=1 --racqa=0
  resv_report $p/report-via-B "$cb" 1 1 "$ida"
  resv_report $p/report-via-A "$ca" 1 1 "$ida"

  # one host at a time on gateway B's port, as in the main suite's reservation checks: nvme-cli 2.3 refuses
  # a second connection to one address, port and subsystem ("already connected") whatever the host NQN, so
  # this host's path through B goes while the second host uses B; path A and the reservation stay
  cli $p/disconnect-path-B nvme disconnect -d "$RBD_CTRL_B"; rc=$?
  wait_for 10 eval '[ ! -e "/sys/class/nvme/$RBD_CTRL_B" ]' || BAD="controller $RBD_CTRL_B still present"
  verdict $rc "this host's path through gateway B ($RBD_CTRL_B) disconnected; path A holds the reservation"
  C=$p/connect-host-b OUTF=$RES/cli/rbd-connect-host-b.txt BAD=""
  timeout 60 nvme connect -t tcp -a 127.0.0.1 -s $RBD_B_PORT -n "$RBD_NQN" "${hostb[@]}" \
    "${RBD_CONNECT[@]}" > "$OUTF" 2>&1; rc=$?
  wait_for 20 host_b_ctrl || BAD="no controller with host NQN $RESV_B_NQN"
  hb=$(host_b_ctrl)
  verdict $rc "second host ($RESV_B_NQN, host ID $RESV_B_ID) connected to gateway B: ${hb:-none}"
  [ -n "$hb" ] || return 1
  resv_report $p/report-via-B-host-b "/dev/$hb" 1 1 "$ida"
  resv_cmd $p/host-b-register-via-B ok nvme resv-register "/dev/$hb" --namespace-id=1 --nrkey=0xb2 --rrega=0
  resv_report $p/report-two-registrants-via-A "$ca" 1 2 "$ida"
  resv_cmd $p/host-b-acquire-refused conflict nvme resv-acquire "/dev/$hb" --namespace-id=1 --crkey=0xb2 --rtype=1 --racqa=0
  passthru_args "$hb" write; resv_cmd $p/host-b-write-fenced conflict "${PT[@]}"
  passthru_args "$hb" read; resv_cmd $p/host-b-read-allowed ok "${PT[@]}"
  # this host preempts the second host through gateway A; B posts the notice to the second host's controller
  resv_cmd $p/preempt-host-b-via-A ok nvme resv-acquire "$ca" --namespace-id=1 --crkey=0xa1 --prkey=0xb2 --rtype=1 --racqa=1
  rbd_notice_check $p/host-b-registration-preempted-via-B "$hb" 1
  resv_report $p/report-one-registrant-via-A "$ca" 1 1 "$ida"
  C=$p/disconnect-host-b OUTF=$RES/cli/rbd-disconnect-host-b.txt BAD=""
  nvme disconnect -d "$hb" > "$OUTF" 2>&1; rc=$?
  wait_for 10 eval '! host_b_ctrl > /dev/null' || BAD="controller $hb still present"
  verdict $rc "$(head -n 1 "$OUTF")"
  # this host's path through B again; the holder releases through it, A's controller sees no reservation
  PORT=$RBD_B_PORT; connect $p/reconnect-path-B "${RBD_CONNECT[@]}" || return 1; RBD_CTRL_B=$CTRL
  cb=/dev/$RBD_CTRL_B
  wait_for 10 ana_path_is "$RBD_CTRL_B" non-optimized
  resv_cmd $p/release-via-B ok nvme resv-release "$cb" --namespace-id=1 --crkey=0xa1 --rtype=1 --rrela=0
  resv_report $p/report-released-via-A "$ca" 0 1 -
  resv_cmd $p/unregister-via-A ok nvme resv-register "$ca" --namespace-id=1 --crkey=0xa1 --rrega=1
  resv_report $p/report-empty-via-B "$cb" 0 0 -
}

osd_port() { # the OSD's msgr2 port, where a Ceph client's I/O goes
  ceph_admin osd dump --format json 2> /dev/null |
    jq -r '[.osds[0].public_addrs.addrvec[]? | select(.type == "v2") | .addr] | first // "" | sub(".*:"; "")'
}
osd_delay() { # pid ms : packets from that process's sockets to the OSD held that long (tc netem on lo), or off
  local pid=$1 ms=$2 port lp n=0
  tc qdisc del dev lo root 2> /dev/null
  [ "$ms" = off ] && return 0
  port=$(osd_port); [ -n "$port" ] || { echo "no OSD port in ceph osd dump"; return 1; }
  modprobe sch_netem 2> /dev/null; modprobe sch_prio 2> /dev/null; modprobe cls_u32 2> /dev/null
  tc qdisc add dev lo root handle 1: prio && tc qdisc add dev lo parent 1:3 handle 30: netem delay "${ms}ms" || return 1
  for lp in $(ss -Htnp state established "( dport = :$port )" | grep "pid=$pid," | awk '{print $3}' | sed 's/.*://'); do
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$lp" 0xffff match ip dport "$port" 0xffff \
      flowid 1:3 && n=$((n + 1))
  done
  echo "delay ${ms} ms on $n connection(s) of pid $pid to the OSD at :$port"
  [ $n -gt 0 ]
}
netem_backlog() { # packets still held by the netem qdisc on lo
  tc -s qdisc show dev lo 2> /dev/null |
    awk '/qdisc netem/ {f = 1} f && /backlog/ {for (i = 1; i < NF; i++) if ($i == "backlog") {print $(i + 2); exit}}' | tr -d p
}
pattern_blocks() { # ctrl file first count : nvme io-passthru writes of the 4 KiB file at LBAs first.. through ctrl
  local l rc=0
  for ((l = $3; l < $3 + $4; l++)); do
    timeout 60 nvme io-passthru "/dev/$1" --namespace-id=1 --opcode=0x01 --write --data-len=4096 --cdw10="$l" \
      --cdw12=0 --input-file="$2" > /dev/null 2>&1 || rc=1
  done
  return $rc
}
blocks_equal() { # ctrl file first count : every 4 KiB block at LBAs first.. read through ctrl equals the file
  local l bad=0
  for ((l = $3; l < $3 + $4; l++)); do
    timeout 60 nvme io-passthru "/dev/$1" --namespace-id=1 --opcode=0x02 --read --data-len=4096 --cdw10="$l" \
      --cdw12=0 --raw-binary > "$WORK/rbd-readback" 2> /dev/null && cmp -s "$WORK/rbd-readback" "$2" || bad=$((bad + 1))
  done
  echo "$bad"
  [ $bad = 0 ]
}

# Preempt and Abort while the preempted host writes through gateway B, B's link to the OSD delayed (delay) or B's
# process stopped (stop), on the shared image (no exclusive lock: both gateways write): the Acquire through A
# completes only once B drained or was blocklisted, and no write of the preempted host lands after the survivor's
# pattern (NVMe 2.0 8.19.7; the kernel's nvmet_pr_do_abort).
shared_watcher_other_than() { # client-id : the other client watching the shared image, and its address
  rbd_admin status "$CEPH_POOL/$RBD_SHARED_IMAGE" --format json 2> /dev/null |
    jq -r --arg a "$1" '[.watchers[] | select((.client | tostring) != $a)] | first // {} | "\(.client // "") \(.address // "")"'
}
rbd_fault_preempt() { # delay|stop
  local mode=$1 p=rbd/fault/preempt-abort ca hb rc wpid t bjpid bclient baddr waited outf n0 fenced=0
  local hostb=(--hostnqn="$RESV_B_NQN" --hostid="$RESV_B_ID") first=32 count=8
  [ "$mode" = delay ] && p+=-delayed-gateway || p+=-stalled-gateway
  outf=$RES/cli/${p//\//_}
  hdr "rbd: Preempt and Abort through A while the preempted host writes through B ($mode)"
  head -c 4096 /dev/zero | tr '\0' 'A' > "$WORK/rbd-pat-A"; head -c 4096 /dev/zero | tr '\0' 'B' > "$WORK/rbd-pat-B"
  ana_use B; bjpid=$JPID
  T=nvmf4j TR=tcp ADDR=127.0.0.1 NQN=$RBD_SHARED_NQN NS_IDS=1 PORT=$RBD_A_PORT
  connect $p/connect-A "${RBD_CONNECT[@]}" || return 1; ca=$CTRL
  NQN=$RBD_NQN
  read -r bclient baddr <<< "$(shared_watcher_other_than "$RBD_SHARED_A")"
  C=$p/connect-host-b OUTF=$outf-connect-host-b.txt BAD=""
  timeout 60 nvme connect -t tcp -a 127.0.0.1 -s $RBD_B_PORT -n "$RBD_SHARED_NQN" "${hostb[@]}" \
    "${RBD_CONNECT[@]}" > "$OUTF" 2>&1; rc=$?
  wait_for 20 host_b_ctrl "$RBD_SHARED_NQN" || BAD="no controller with host NQN $RESV_B_NQN"
  hb=$(host_b_ctrl "$RBD_SHARED_NQN")
  verdict $rc "second host connected to gateway B: ${hb:-none}; this host through A: $ca; B's Ceph client of the image: client.${bclient:-?} at ${baddr:-?}"
  [ -n "$hb" ] || return 1
  # Write Exclusive - Registrants Only: the second host, registered, may write until it is preempted
  resv_cmd $p/register-via-A ok nvme resv-register "/dev/$ca" --namespace-id=1 --nrkey=0xa1 --rrega=0
  resv_cmd $p/acquire-registrants-only-via-A ok nvme resv-acquire "/dev/$ca" --namespace-id=1 --crkey=0xa1 --rtype=3 --racqa=0
  resv_cmd $p/host-b-register-via-B ok nvme resv-register "/dev/$hb" --namespace-id=1 --nrkey=0xb2 --rrega=0
  C=$p/host-b-writes OUTF=$outf-host-b-writes.txt BAD=""
  rm -f "$WORK/rbd-writer-stop" "$WORK/rbd-writer-ok"
  ( while [ ! -e "$WORK/rbd-writer-stop" ]; do
      pattern_blocks "$hb" "$WORK/rbd-pat-B" $first $count && echo ok >> "$WORK/rbd-writer-ok"
    done ) & wpid=$!
  wait_for 120 test -s "$WORK/rbd-writer-ok" || BAD="no pass of the second host's writes through B succeeded"
  blocks_equal "$ca" "$WORK/rbd-pat-B" $first $count > "$OUTF" || BAD+="${BAD:+; }the second host's pattern is not on the image"
  verdict 0 "the second host writes LBAs $first..$((first + count - 1)) through B in a loop; its pattern read through A"
  C=$p/fault OUTF=$outf-fault.txt BAD=""
  n0=$(grep -c "again as a new client" "$RES/rbd-service-B.log")
  if [ "$mode" = delay ]; then
    osd_delay "$bjpid" 1500 > "$OUTF" 2>&1; rc=$?
  else
    kill -STOP "$bjpid"; rc=$?; echo "gateway B (pid $bjpid) stopped with SIGSTOP" > "$OUTF"
  fi
  verdict $rc "$(head -n 1 "$OUTF")"
  t=$(now_us)
  resv_cmd $p/preempt-abort-via-A ok nvme resv-acquire "/dev/$ca" --namespace-id=1 --crkey=0xa1 --prkey=0xb2 --rtype=3 --racqa=2
  waited=$(secs_since "$t")
  metric "${p//\//_}_acquire_s" "$waited" s
  C=$p/b-drained-or-fenced OUTF=$outf-fenced.txt BAD=""
  ceph_admin osd blocklist ls > "$OUTF" 2>&1
  if [ "$mode" = stop ]; then
    [ -n "$baddr" ] && grep -qF "$baddr" "$OUTF" ||
      BAD="B's client (${baddr:-address unknown}) is not blocklisted although B could not acknowledge"
  fi
  [ -n "$baddr" ] && grep -qF "$baddr" "$OUTF" && fenced=1
  verdict 0 "Acquire (Preempt and Abort) through A returned after ${waited}s; B's client ${baddr:-?}: $( [ $fenced = 1 ] && echo blocklisted || echo 'not blocklisted (it acknowledged after draining)')"
  # the survivor writes its pattern; then every write the preempted host had sent may arrive: B resumed, the
  # delayed packets delivered (netem's queue empty), the writer ended
  C=$p/survivor-pattern OUTF=$outf-survivor.txt BAD=""
  pattern_blocks "$ca" "$WORK/rbd-pat-A" $first $count; rc=$?
  if [ "$mode" = stop ]; then kill -CONT "$bjpid"; else wait_for 60 eval '[ "$(netem_backlog)" = 0 ]' || BAD="netem still holds $(netem_backlog) packet(s)"; fi
  touch "$WORK/rbd-writer-stop"
  wait_for 300 gone "$wpid" || BAD+="${BAD:+; }the second host's writer did not end"
  wait "$wpid" 2> /dev/null
  [ "$mode" = delay ] && osd_delay "$bjpid" off
  # a fenced B serves again once it reconnected as a new Ceph client (its namespaces are inaccessible meanwhile)
  if [ $fenced = 1 ]; then
    wait_for 180 eval '[ "$(grep -c "again as a new client" "$RES/rbd-service-B.log")" -gt "$n0" ]' ||
      BAD+="${BAD:+; }B did not reconnect as a new Ceph client after its blocklisting"
  fi
  verdict $rc "the survivor wrote LBAs $first..$((first + count - 1)) through A; B $( [ "$mode" = stop ] && echo resumed || echo "undelayed, netem queue empty"); writer ended ($(wc -l < "$WORK/rbd-writer-ok") passes of the second host's writes had succeeded)"
  C=$p/no-write-after-preempt OUTF=$outf-readback.txt BAD=""
  { echo "blocks differing from the survivor's pattern, read through A: $(blocks_equal "$ca" "$WORK/rbd-pat-A" $first $count)"
    echo "the same read through B (the second host's controller): $(blocks_equal "$hb" "$WORK/rbd-pat-A" $first $count)"; } > "$OUTF" 2>&1
  grep -q 'through A: 0$' "$OUTF" || BAD="$(head -n 1 "$OUTF")"
  grep -q 'through B.*: 0$' "$OUTF" || BAD+="${BAD:+; }$(tail -n 1 "$OUTF")"
  verdict 0 "no block of the preempted host's pattern after the Acquire: $(tr '\n' ';' < "$OUTF")"
  PT=(nvme io-passthru "/dev/$hb" --namespace-id=1 --data-len=4096 --cdw10=$first --cdw12=0 --opcode=0x01 --write
      --input-file="$WORK/rbd-pat-B")
  resv_cmd $p/host-b-write-refused-after conflict "${PT[@]}"
  resv_report $p/report-via-B "/dev/$hb" 3 1 "$(tr -d '-' < "/sys/class/nvme/$ca/hostid")"
  resv_cmd $p/release-via-A ok nvme resv-release "/dev/$ca" --namespace-id=1 --crkey=0xa1 --rtype=3 --rrela=0
  resv_cmd $p/unregister-via-A ok nvme resv-register "/dev/$ca" --namespace-id=1 --crkey=0xa1 --rrega=1
  C=$p/report-empty-via-B OUTF=$outf-report-empty.txt BAD=""
  # B takes the change in when A's notification reaches it (A does not wait for that on a release)
  wait_for 30 eval 'nvme resv-report "/dev/$hb" --namespace-id=1 --eds -o json 2> /dev/null | jq -e ".regctl == 0" > /dev/null' ||
    BAD="B still reports: $(nvme resv-report "/dev/$hb" --namespace-id=1 --eds -o json 2>&1 | tr -s ' \n' ' ' | head -c 300)"
  verdict 0 "B reports no registrant after A's release and unregister"
  C=$p/disconnect OUTF=$outf-disconnect.txt BAD=""
  { nvme disconnect -d "$hb"; nvme disconnect -d "$ca"; } > "$OUTF" 2>&1; rc=$?
  wait_for 10 eval '[ ! -e "/sys/class/nvme/$hb" ] && [ ! -e "/sys/class/nvme/$ca" ]' || BAD="a controller is still present"
  verdict $rc "$(tr '\n' ' ' < "$OUTF")"
  # B's Ceph client of the main image, new if it was fenced too; this host's path B live again after a stop
  RBD_CLIENT_B=$(rbd_admin status "$CEPH_POOL/$RBD_IMAGE" --format json 2> /dev/null |
    jq -r --arg a "$RBD_CLIENT_A" '[.watchers[].client | tostring | select(. != $a)] | first // ""')
  wait_for 120 eval '[ "$(ctrl_state_of "$RBD_CTRL_B")" = live ]'
}

# Round-robin across both gateways on the shared image (both optimized, no exclusive lock), B's link to the OSD
# delayed: fio writes with verify_backlog (each block read back soon after it was written, through whichever path the
# host's iopolicy picks next) ends with 0 verify errors; both gateways carried writes.
rbd_fault_round_robin() {
  local p=rbd/fault/round-robin-verify-backlog ca cb dev s rc wa wb v bjpid
  hdr "rbd: round-robin across both gateways with fio verify_backlog, B's OSD link delayed"
  ana_use B; bjpid=$JPID
  T=nvmf4j TR=tcp ADDR=127.0.0.1 NQN=$RBD_SHARED_NQN NS_IDS=1 PORT=$RBD_A_PORT
  connect $p/connect-A "${RBD_CONNECT[@]}" || { NQN=$RBD_NQN; return 1; }
  ca=$CTRL
  PORT=$RBD_B_PORT; connect $p/connect-B "${RBD_CONNECT[@]}" || { NQN=$RBD_NQN; return 1; }
  cb=$CTRL dev=${DEV[1]}
  NQN=$RBD_NQN
  C=$p/iopolicy OUTF=$RES/cli/${p//\//_}-iopolicy.txt BAD=""
  for s in /sys/class/nvme-subsystem/*; do [ -e "$s/$ca" ] && break; done
  echo round-robin > "$s/iopolicy" 2> "$OUTF"; rc=$?
  expect "iopolicy of ${s##*/}" "$(cat "$s/iopolicy" 2> /dev/null)" round-robin
  wait_for 30 ana_path_is "$cb" optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$cb")"
  verdict $rc "${s##*/} ($dev over $ca and $cb, both optimized): iopolicy $(cat "$s/iopolicy" 2> /dev/null)"
  C=$p/delay OUTF=$RES/cli/${p//\//_}-delay.txt BAD=""
  osd_delay "$bjpid" 20 > "$OUTF" 2>&1; rc=$?
  verdict $rc "$(head -n 1 "$OUTF")"
  wa=$(ana_written A) wb=$(ana_written B)
  fio_json "${p//\//_}" 600 --name=rr --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite \
    --bssplit=4k/50:16k/25:64k/25 --blockalign=4k --iodepth=16 --size=$((24 << 20)) --verify=crc32c \
    --verify_backlog=32 --verify_fatal=1 --verify_state_save=0; rc=$?
  osd_delay "$bjpid" off
  mapfile -t v < <(jq -r '([.jobs[].error] | add), ([.jobs[].write.io_bytes] | add), ([.jobs[].read.io_bytes] | add)' \
    "$RES/fio-${p//\//_}.json" 2> /dev/null)
  C=$p OUTF=$RES/fio-${p//\//_}.json BAD="" ERRF=$RES/fio-${p//\//_}.stderr
  expect errors "${v[0]:-}" 0
  expect_true "writes through A" "none" [ "$(ana_written A)" -gt "${wa:-0}" ]
  expect_true "writes through B" "none" [ "$(ana_written B)" -gt "${wb:-0}" ]
  verdict $rc "fio randwrite 4k-64k QD16 with verify_backlog=32 over 24 MiB of $dev: $(( ${v[1]:-0} >> 20 )) MiB written, $(( ${v[2]:-0} >> 20 )) MiB verified, 0 errors; through A $(( ($(ana_written A) - ${wa:-0}) >> 20 )) MiB, through B $(( ($(ana_written B) - ${wb:-0}) >> 20 )) MiB"
  C=$p/disconnect OUTF=$RES/cli/${p//\//_}-disconnect.txt BAD=""
  nvme disconnect -n "$RBD_SHARED_NQN" > "$OUTF" 2>&1; rc=$?
  wait_for 10 eval '[ ! -e "/sys/class/nvme/$ca" ] && [ ! -e "/sys/class/nvme/$cb" ]' || BAD="a controller is still present"
  verdict $rc "$(head -n 1 "$OUTF")"
}

rbd_blocklist() { # A optimized with the lock, B non-optimized: A's live lock is not broken; fenced, it moves
  local t rc before breaks_a client jpid addr l bad code logs=$RES/rbd-service
  hdr "rbd: B made optimized while A keeps the lock: refused; A's client blocklisted at Ceph, B takes over, A reconnects"
  before=$(rbd_clients | tr '\n' ' ') breaks_a=$(grep -c 'breaking its lock' "$logs-A.log") jpid=$RBD_A_JPID
  C=rbd/fault/live-lock-not-broken OUTF=$RES/cli/rbd-live-lock-not-broken.txt BAD=""
  code=$(ana_put_code B optimized 2> "$OUTF"); rc=$?
  cat "$WORK/ana-put-body.txt" >> "$OUTF" 2> /dev/null
  expect "HTTP status of PUT .../ana/1 optimized on B" "$code" 409
  expect "exclusive lock owner" "$(rbd_locker)" "client.$RBD_CLIENT_A"
  expect "A's nvmf_rbd_blocklisted_total" "$(rbd_metric A nvmf_rbd_blocklisted_total)" 0
  ana_path_is "$RBD_CTRL_A" optimized || BAD+="${BAD:+; }path A is $(ana_path_state "$RBD_CTRL_A")"
  verdict 0 "B refused the lock A holds and answers for (curl rc $rc): HTTP $code"
  # writes acknowledged through A just before its lock is broken must all be there through B (no client-side
  # write-back window: librbd's cache is off on a shared image)
  head -c $((8 * 4096)) /dev/urandom > "$WORK/rbd-acked"
  C=rbd/fault/acked-writes-before-lock-break OUTF=$RES/cli/rbd-acked-writes.txt BAD=""
  for ((l = 0; l < 8; l++)); do dd if="$WORK/rbd-acked" of="$WORK/rbd-acked-$l" bs=4096 skip=$l count=1 status=none; done
  for ((l = 0; l < 8; l++)); do pattern_blocks "$RBD_CTRL_A" "$WORK/rbd-acked-$l" $((64 + l)) 1 || BAD+="${BAD:+; }write at LBA $((64 + l)) through A failed"; done
  verdict 0 "8 blocks of random data written through A (LBAs 64..71), each acknowledged, just before A is fenced"
  C=rbd/B-takes-fenced-lock OUTF=$RES/cli/rbd-b-breaks-a.txt BAD=""
  addr=$(rbd_admin lock ls "$CEPH_POOL/$RBD_IMAGE" --format json 2> /dev/null | jq -r '[.[]?.address] | first // ""')
  { echo "blocklisting A's client at $addr"; ceph_admin osd blocklist add "$addr"; } > "$OUTF" 2>&1
  t=$(now_us)
  wait_for 120 ana_put B optimized >> "$OUTF" 2>&1; rc=$?
  wait_for 30 ana_path_is "$RBD_CTRL_B" optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$RBD_CTRL_B")"
  verdict $rc "A's client blocklisted at Ceph; PUT .../ana/1 optimized on B: B holds the lock ($(secs_since "$t")s)"
  rbd_lock_check rbd/lock-broken-to-B "client.$RBD_CLIENT_B" "B's; A's client blocklisted"
  C=rbd/fault/acked-writes-after-lock-break OUTF=$RES/cli/rbd-acked-after.txt BAD=""
  timeout 60 nvme flush "/dev/$RBD_CTRL_B" --namespace-id=1 > "$OUTF" 2>&1; rc=$?
  bad=0
  for ((l = 0; l < 8; l++)); do blocks_equal "$RBD_CTRL_B" "$WORK/rbd-acked-$l" $((64 + l)) 1 > /dev/null || bad=$((bad + 1)); done
  expect "acknowledged blocks missing or different through B" "$bad" 0
  verdict $rc "Flush through B, then the 8 blocks read through B: $((8 - bad)) of 8 as A acknowledged them"
  # a write down path A only (its controller's char device): refused with a path status, and A notices
  passthru_args "$RBD_CTRL_A" write
  C=rbd/A-write-refused OUTF=$RES/cli/rbd-a-write-refused.txt BAD=""
  timeout 60 "${PT[@]}" > "$OUTF" 2>&1; rc=$?
  expect_true "write through A" "succeeded; a path error was expected" [ $rc != 0 ]
  verdict 0 "refused: $(head -n 1 "$OUTF")"
  C=rbd/A-reconnects OUTF=$RES/cli/rbd-a-reconnects.txt BAD=""
  wait_for 120 eval 'grep -q "again as a new client" "$logs-A.log"' || BAD="A's log shows no reconnect"
  wait_for 30 ana_path_is "$RBD_CTRL_A" non-optimized || BAD+="${BAD:+; }path A is $(ana_path_state "$RBD_CTRL_A")"
  grep -E 'blocklisted|again as a new client|ANA group 1 is' "$logs-A.log" | tail -n 4 > "$OUTF"
  ana_path_is "$RBD_CTRL_B" optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$RBD_CTRL_B")"
  expect "A's java process" "$(kill -0 "$jpid" 2> /dev/null && echo "$jpid")" "$jpid"
  expect "A's nvmf_rbd_blocklisted_total" "$(rbd_metric A nvmf_rbd_blocklisted_total)" 1
  expect "A's nvmf_rbd_reconnected_total" "$(rbd_metric A nvmf_rbd_reconnected_total)" 1
  client=$(rbd_new_client "$before")
  [ -n "$client" ] || BAD+="${BAD:+; }no new Ceph client watches the image"
  metric rbd_a_reconnected_s "$(secs_since "$t")" s
  verdict 0 "A (pid $jpid, not restarted) reconnected as client.${client:-?} $(secs_since "$t")s after the break; path A $(ana_path_state "$RBD_CTRL_A"), B $(ana_path_state "$RBD_CTRL_B"); A's /metrics: blocklisted 1, reconnected 1"
  C=rbd/A-optimized-again OUTF=$RES/cli/rbd-a-optimized-again.txt BAD=""
  { ana_put B non-optimized && ana_put A optimized; } > "$OUTF" 2>&1; rc=$?
  wait_for 30 ana_path_is "$RBD_CTRL_A" optimized || BAD="path A is $(ana_path_state "$RBD_CTRL_A")"
  wait_for 30 ana_path_is "$RBD_CTRL_B" non-optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$RBD_CTRL_B")"
  expect "breaks logged by A" "$(grep -c 'breaking its lock' "$logs-A.log")" "$breaks_a"
  verdict $rc "B stepped down, A made optimized through its API: A optimized again, nothing broken"
  rbd_lock_check rbd/lock-back-on-reconnected-A "client.${client:-?}" "A's new client, taken without breaking"
  ana_write_moves rbd/io-on-reconnected-A A B
}

# Ten namespaces, each on its own image and served by both gateways, re-registered by this host through A all at once
# while B is stopped (SIGSTOP): B's watch on each image's header stays until Ceph's watch timeout (30 s) and never
# acknowledges A's notify. Each Register waits for B once (A's announce bound, then B's client of that image is
# blocklisted), the ten in parallel, so each completes inside the host's I/O timeout; one reservation thread with a
# wait per namespace would have taken about ten times the announce bound for the last of them.
rbd_ten_add() { # instance first-cntlid : the ten images' bdevs and their subsystem (one namespace each) on it
  local i code ns="" bad=""
  for ((i = 1; i <= RBD_TEN; i++)); do
    code=$(rbd_api "$1" POST /bdevs "{\"name\": \"ten$i\", \"type\": \"rbd\", \"blockSize\": 4096, \"pool\": \"$CEPH_POOL\",
      \"image\": \"$RBD_IMAGE-ten-$i\", \"cephConf\": \"$CEPH_CONF\", \"clientName\": \"$CEPH_CLIENT\",
      \"keyring\": \"$CEPH_KEYRING\", \"timeoutSeconds\": 120, \"osdOpTimeoutSeconds\": 60}")
    [ "$code" = 201 ] || bad+="${bad:+; }bdev ten$i: HTTP $code $(head -c 200 "$WORK/rbd-api-body.txt")"
    ns+="${ns:+, }{\"nsid\": $i, \"bdev\": \"ten$i\", \"nguid\": \"6e766d66346a0016e0000000000010$(printf %02x "$i")\"}"
  done
  code=$(rbd_api "$1" POST /subsystems "{\"nqn\": \"$RBD_TEN_NQN\", \"serial\": \"NVMF4JRBD0003\", \"model\": \"nvmf4j-e2e-rbd\",
    \"allowAnyHost\": true, \"maxNamespaces\": 16, \"minCntlid\": $2, \"maxCntlid\": $(($2 + 99)), \"namespaces\": [$ns],
    \"listeners\": [{\"transport\": \"tcp\", \"address\": \"127.0.0.1\", \"port\": $(gw "${1}_PORT")}]}")
  [ "$code" = 201 ] || bad+="${bad:+; }subsystem: HTTP $code $(head -c 200 "$WORK/rbd-api-body.txt")"
  echo "${bad:-added}"
  [ -z "$bad" ]
}
rbd_ten_remove() { # instance : the subsystem and the ten bdevs off it again
  local i code bad=""
  code=$(rbd_api "$1" DELETE "/subsystems/${RBD_TEN_NQN//:/%3A}")
  [ "$code" = 204 ] || bad+="subsystem: HTTP $code $(head -c 200 "$WORK/rbd-api-body.txt")"
  for ((i = 1; i <= RBD_TEN; i++)); do
    code=$(rbd_api "$1" DELETE "/bdevs/ten$i")
    [ "$code" = 204 ] || bad+="${bad:+; }bdev ten$i: HTTP $code"
  done
  echo "${bad:-removed}"
  [ -z "$bad" ]
}
rbd_fault_ten_namespaces() {
  local p=rbd/fault/ten-namespaces-dead-watch outf bjpid n0 f0 tmo t i rc slow=0 times="" line end last=0 fenced pids=()
  outf=$RES/cli/${p//\//_}
  hdr "rbd: ten namespaces re-registered through A at once while gateway B's watch is dead (SIGSTOP)"
  C=$p/setup OUTF=$outf-setup.txt BAD="" rc=0
  for ((i = 1; i <= RBD_TEN; i++)); do
    rbd_admin create "$CEPH_POOL/$RBD_IMAGE-ten-$i" --size "${RBD_TEN_MIB}M" >> "$OUTF" 2>&1 || { rc=$?; break; }
  done
  [ $rc = 0 ] && { echo "A: $(rbd_ten_add A 1)"; echo "B: $(rbd_ten_add B 101)"; } >> "$OUTF" 2>&1
  grep -q '^A: added$' "$OUTF" || BAD="A: $(grep '^A: ' "$OUTF")"
  grep -q '^B: added$' "$OUTF" || BAD+="${BAD:+; }B: $(grep '^B: ' "$OUTF")"
  verdict $rc "$RBD_TEN images of $RBD_TEN_MIB MiB ($CEPH_POOL/$RBD_IMAGE-ten-N), each a namespace of $RBD_TEN_NQN on A and on B (added through their APIs)"
  [ $rc = 0 ] && [ -z "$BAD" ] || return 1
  T=nvmf4j TR=tcp ADDR=127.0.0.1 NQN=$RBD_TEN_NQN NS_IDS=$(seq -s ' ' 1 "$RBD_TEN") PORT=$RBD_A_PORT
  # a keep-alive timeout of 30 s, not the other checks' 5: nothing here is about keep-alive (the host connects to A
  # only), and a loaded machine's guest stalled more than 5 s between two keep-alives, so A rightly ended the
  # controller and the disconnect at the end waited out the host's admin timeout
  connect $p/connect-A "${RBD_CONNECT[@]/--keep-alive-tmo=5/--keep-alive-tmo=30}" || return 1
  tmo=$(cat /sys/module/nvme_core/parameters/io_timeout 2> /dev/null || echo 30)
  ana_use B; bjpid=$JPID
  n0=$(grep -c "again as a new client" "$RES/rbd-service-B.log")
  f0=$(grep -c "did not acknowledge the reservation change" "$RES/rbd-service-A.log")
  C=$p/stop-B OUTF=$outf-stop-B.txt BAD=""
  kill -STOP "$bjpid"; rc=$?
  echo "gateway B (pid $bjpid) stopped with SIGSTOP; its watches on the ten images' headers stay until Ceph's watch timeout" > "$OUTF"
  verdict $rc "$(cat "$OUTF")"
  C=$p/registers OUTF=$outf-registers.txt BAD=""
  rm -f "$WORK"/rbd-ten-reg-*
  t=$(now_us)
  for ((i = 1; i <= RBD_TEN; i++)); do
    ( s=$(now_us); timeout 120 nvme resv-register "${DEV[$i]}" --namespace-id="$i" --nrkey=$((0xc0 + i)) --rrega=0 \
        > "$WORK/rbd-ten-reg-$i.out" 2>&1
      echo "$? $(secs_since "$s") $(now_us)" > "$WORK/rbd-ten-reg-$i" ) & pids+=($!)
  done
  wait "${pids[@]}"
  kill -CONT "$bjpid"
  for ((i = 1; i <= RBD_TEN; i++)); do
    read -r rc line end < "$WORK/rbd-ten-reg-$i" 2> /dev/null || { rc=none line=none end=0; }
    [ "${end:-0}" -le "$last" ] || last=$end
    echo "nsid $i (${DEV[$i]}): rc $rc after ${line}s: $(head -c 200 "$WORK/rbd-ten-reg-$i.out" | tr '\n' ' ')" >> "$OUTF"
    times+="${times:+ }$line"
    [ "$rc" = 0 ] || BAD+="${BAD:+; }nsid $i: rc $rc ($(head -n 1 "$WORK/rbd-ten-reg-$i.out"))"
    [ "$line" != none ] && [ "${line%%.*}" -lt "$tmo" ] || slow=$((slow + 1))
    metric "${p//\//_}_nsid${i}_s" "$line" s
  done
  expect "Registers not completed inside the host's I/O timeout (${tmo} s)" "$slow" 0
  # the check means something only if B's watch was there, dead, when A announced: A fenced at least one of B's
  # clients for not acknowledging
  expect_true "A's log" "shows no watcher that did not acknowledge: B's watch was gone before the Registers" \
    [ "$(grep -c "did not acknowledge the reservation change" "$RES/rbd-service-A.log")" -gt "$f0" ]
  fenced=$(( $(grep -c "did not acknowledge the reservation change" "$RES/rbd-service-A.log") - f0 ))
  verdict 0 "the ten Registers through A completed after (s) $times, all $((RBD_TEN - slow)) of $RBD_TEN inside the host's I/O timeout of ${tmo} s (the last answer $(( (last - t) / 1000 )) ms after the first of the ten nvme-cli processes was started); A fenced $fenced of B's clients that did not acknowledge"
  C=$p/b-serves-again OUTF=$outf-b-serves-again.txt BAD=""
  # B, resumed, finds each fenced client blocklisted when its watch breaks and serves again as a new client
  wait_for 300 eval '[ "$(( $(grep -c "again as a new client" "$RES/rbd-service-B.log") - n0 ))" -ge "$fenced" ]' ||
    BAD="B reconnected $(( $(grep -c "again as a new client" "$RES/rbd-service-B.log") - n0 )) of its $fenced fenced clients"
  gone "$bjpid" && BAD+="${BAD:+; }B's process is gone"
  grep -E 'blocklisted|again as a new client' "$RES/rbd-service-B.log" | tail -n 3 > "$OUTF"
  verdict 0 "B resumed and reconnected ($(( $(grep -c "again as a new client" "$RES/rbd-service-B.log") - n0 )) new client(s))"
  C=$p/unregister OUTF=$outf-unregister.txt BAD=""
  for ((i = 1; i <= RBD_TEN; i++)); do
    timeout 60 nvme resv-register "${DEV[$i]}" --namespace-id="$i" --crkey=$((0xc0 + i)) --rrega=1 >> "$OUTF" 2>&1 ||
      BAD+="${BAD:+; }nsid $i: unregister failed"
  done
  verdict 0 "the ten registrations removed through A"
  disconnect $p/disconnect
  C=$p/teardown OUTF=$outf-teardown.txt BAD=""
  { echo "A: $(rbd_ten_remove A)"; echo "B: $(rbd_ten_remove B)"; } > "$OUTF" 2>&1
  grep -q '^A: removed$' "$OUTF" && grep -q '^B: removed$' "$OUTF" || BAD="$(tr '\n' ' ' < "$OUTF")"
  verdict 0 "the subsystem and the ten bdevs removed from both gateways"
  ana_use A
}

rbd_scenarios() { # both gateways running
  local t fio_pid rc base base_b tk
  T=nvmf4j TR=tcp ADDR=127.0.0.1 NQN=$RBD_NQN NS_IDS=1
  PORT=$RBD_A_PORT; connect rbd/connect-A "${RBD_CONNECT[@]}" || return 1; RBD_CTRL_A=$CTRL
  PORT=$RBD_B_PORT; connect rbd/connect-B "${RBD_CONNECT[@]}" || return 1; RBD_CTRL_B=$CTRL
  RBD_DEV=${DEV[1]}
  C=rbd/two-paths OUTF=$RES/cli/rbd-list-subsys.txt BAD=""
  wait_for 10 ana_path_is "$RBD_CTRL_B" non-optimized
  nvme list-subsys "$RBD_DEV" > "$OUTF" 2>&1; rc=$?
  cat "$OUTF"
  expect "namespace heads" "$(nvme_ns_devs "$RBD_NQN" | wc -l)" 1
  expect "path A ($RBD_CTRL_A)" "$(ana_path_state "$RBD_CTRL_A")" optimized
  expect "path B ($RBD_CTRL_B)" "$(ana_path_state "$RBD_CTRL_B")" non-optimized
  grep -q "trsvcid=$RBD_A_PORT.* optimized" "$OUTF" || BAD+="${BAD:+; }list-subsys shows no optimized path A"
  grep -q "trsvcid=$RBD_B_PORT.* non-optimized" "$OUTF" || BAD+="${BAD:+; }list-subsys shows no non-optimized path B"
  verdict $rc "$RBD_DEV ($(($(blockdev --getsize64 "$RBD_DEV") >> 20)) MiB, RBD $CEPH_POOL/$RBD_IMAGE): one head over $RBD_CTRL_A (optimized) and $RBD_CTRL_B (non-optimized)"
  ana_write_moves rbd/io-on-optimized A B

  rbd_reservations || skip rbd/resv/remaining "not run: the second host did not connect"
  rbd_fault_preempt delay || skip rbd/fault/preempt-abort-delayed-gateway/remaining "not run: the second host did not connect"
  rbd_fault_preempt stop || skip rbd/fault/preempt-abort-stalled-gateway/remaining "not run: the second host did not connect"
  rbd_fault_round_robin || skip rbd/fault/round-robin-verify-backlog/remaining "not run: a path did not connect"

  hdr "rbd: fio verify while the optimized gateway A is killed (SIGKILL); B made optimized through its API"
  t=$(now_us)
  base=$(ana_written A)
  ( fio_verify rbd/failover-fio-verify "$RBD_DEV" "$RBD_FIO_BYTES" ) & fio_pid=$!
  until [ "$(ana_written A)" -gt $((${base:-0} + (8 << 20))) ] || ! kill -0 $fio_pid 2> /dev/null; do sleep 0.2; done
  C=rbd/kill-A OUTF=$RES/cli/rbd-kill.txt BAD=""
  kill -0 $fio_pid 2> /dev/null || BAD="fio ended before the kill"
  base_b=$(ana_written B) tk=$(now_us)
  ana_use A; kill -KILL "$JPID"; wait_for 10 gone "$JPID"; wait "$SVC_PID" 2> /dev/null; SVC_PID="" JPID=""; ana_keep A
  metric rbd_kill_after_fio_start_s "$(secs_since "$t")" s
  verdict 0 "gateway A killed (SIGKILL) $(secs_since "$t")s into fio verify; path B: $(ana_path_state "$RBD_CTRL_B")"
  C=rbd/B-optimized OUTF=$RES/cli/rbd-b-optimized.txt BAD=""
  local t1; t1=$(now_us)
  ana_put B optimized > "$OUTF" 2>&1; rc=$?
  metric rbd_b_takeover_s "$(secs_since "$t1")" s
  wait_for 30 ana_path_is "$RBD_CTRL_B" optimized || BAD="the host still sees B as $(ana_path_state "$RBD_CTRL_B")"
  verdict $rc "PUT .../ana/1 optimized on B answered in $(secs_since "$t1")s (B holds the lock); the host saw the change on $RBD_CTRL_B"
  rbd_lock_check rbd/lock-moved-to-B "client.$RBD_CLIENT_B" "gateway B's client; A's broken"
  C=rbd/fault/failover-time OUTF=$RES/cli/rbd-failover-time.txt BAD=""
  wait_for 300 eval '[ "$(ana_written B)" -gt "${base_b:-0}" ]' || BAD="no write completed through B"
  metric rbd_failover_io_s "$(secs_since "$tk")" s
  echo "SIGKILL of A to the first write completing through B: $(secs_since "$tk")s; B's lock takeover (PUT) $(cat "$RES/metrics.tsv" | awk '$1 == "rbd_b_takeover_s" {v = $2} END {print v}')s" > "$OUTF"
  verdict 0 "$(cat "$OUTF"); bounded by Ceph's watch timeout (the dead owner's lock is broken once its watch expired, 30 s), the host's keep-alive (5 s) and reconnect delay (1 s)"
  wait $fio_pid; rc=$?
  grep 'rbd/failover-fio-verify' "$RES/results.tsv" | tail -n 1 | grep -q PASS || rc=1
  C=rbd/failover OUTF=$RES/cli/rbd-failover.txt BAD=""
  { ctrl_state_of "$RBD_CTRL_A"; dmesg | tail -n 20; } > "$OUTF" 2>&1
  expect "fio verify rc" "$rc" 0
  expect_true "$RBD_CTRL_A state" "$(ctrl_state_of "$RBD_CTRL_A"), not reconnecting" \
    grep -qE '^(connecting|resetting)$' <<< "$(ctrl_state_of "$RBD_CTRL_A")"
  verdict 0 "fio verify finished with 0 errors through gateway B after A died ($(secs_since "$t")s)"
  ana_write_moves rbd/io-on-B B A

  hdr "rbd: A restarts (its document says optimized) while B holds the lock: the lock stays B's; B steps down, A takes over"
  local before; before=$(rbd_clients | tr '\n' ' ')
  ana_use A; svc_start rbd/restart-A || return 1; ana_keep A
  t=$(now_us)
  RBD_CLIENT_A=$(rbd_new_client "$before")
  C=rbd/fault/restart-does-not-steal OUTF=$RES/cli/rbd-restart-does-not-steal.txt BAD=""
  wait_for 300 eval '[ "$(ctrl_state_of "$RBD_CTRL_A")" = live ]' || BAD="$RBD_CTRL_A is $(ctrl_state_of "$RBD_CTRL_A")"
  expect "exclusive lock owner" "$(rbd_locker)" "client.$RBD_CLIENT_B"
  wait_for 30 ana_path_is "$RBD_CTRL_A" non-optimized || BAD+="${BAD:+; }path A is $(ana_path_state "$RBD_CTRL_A")"
  ana_path_is "$RBD_CTRL_B" optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$RBD_CTRL_B")"
  svc_log_now > "$OUTF" 2>&1
  grep -q 'breaking its lock' "$OUTF" && BAD+="${BAD:+; }A broke a lock on its return"
  grep -q "another gateway holds the exclusive lock" "$OUTF" || BAD+="${BAD:+; }A's log does not say the lock is B's"
  verdict 0 "A restarted (same config and state directory) $(secs_since "$t")s ago: lock $(rbd_locker), path A $(ana_path_state "$RBD_CTRL_A"), B $(ana_path_state "$RBD_CTRL_B")"
  ana_write_moves rbd/io-on-B-after-A-restart B A
  C=rbd/B-steps-down OUTF=$RES/cli/rbd-b-down.txt BAD=""
  ana_put B non-optimized > "$OUTF" 2>&1; rc=$?
  expect "exclusive lock owner" "$(rbd_locker)" none
  verdict $rc "PUT .../ana/1 non-optimized on B: B released the lock"
  C=rbd/A-back OUTF=$RES/cli/rbd-a-back.txt BAD=""
  t=$(now_us)
  ana_put A optimized > "$OUTF" 2>&1; rc=$?
  wait_for 30 ana_path_is "$RBD_CTRL_A" optimized || BAD+="${BAD:+; }path A is $(ana_path_state "$RBD_CTRL_A")"
  ana_path_is "$RBD_CTRL_B" non-optimized || BAD+="${BAD:+; }path B is $(ana_path_state "$RBD_CTRL_B")"
  svc_log_now | grep -q 'breaking its lock' && BAD+="${BAD:+; }A broke a lock"
  verdict $rc "$RBD_CTRL_A optimized again $(secs_since "$t")s after PUT .../ana/1 optimized on A; B non-optimized"
  rbd_lock_check rbd/lock-back-on-A "client.${RBD_CLIENT_A:-?}" "the restarted gateway A's new client, taken without breaking"
  ana_write_moves rbd/io-back-on-A A B
  rbd_blocklist
  rbd_fault_ten_namespaces || skip rbd/fault/ten-namespaces-dead-watch/remaining "not run: the host did not connect"
  NQN=$RBD_NQN NS_IDS=1
  cli rbd/disconnect nvme disconnect -n "$RBD_NQN"; rc=$?
  wait_for 10 eval '[ -z "$(nvme_ns_devs "$RBD_NQN")" ]' || BAD="namespace head still present"
  verdict $rc "$(head -n 1 "$OUTF")"
}

rbd_part() {
  local saved=("$SVC_LOG" "${SVC_STATE:-}" "${SVC_CONFIG:-}" "${SVC_PORT:-}" "$SVC_START_TIMEOUT") t rc before
  GW=rbd GWT=rbd
  hdr "rbd: a Ceph cluster in the guest, two nvmf4j gateways on one RBD image, native multipath"
  C=rbd/ceph-start OUTF=$RES/rbd-ceph-start.log BAD=""
  t=$(now_us)
  rm -rf "$RBD_CLUSTER"
  CEPH_OBJECTSTORE=memstore CEPH_MEMSTORE_BYTES=$((768 << 20)) CEPH_TIMEOUT=300 timeout 900 \
    "$REPO/e2e/ceph/cluster.sh" start "$RBD_CLUSTER" > "$WORK/rbd-ceph.env" 2> "$OUTF"; rc=$?
  # shellcheck disable=SC1091 # KEY=VALUE lines of cluster.sh
  [ $rc != 0 ] || . "$WORK/rbd-ceph.env"
  metric rbd_ceph_start_s "$(secs_since "$t")" s
  ERRF=$OUTF verdict $rc "one monitor (${CEPH_MON:-?}) and one OSD (memstore) on 127.0.0.1 in the guest, pool ${CEPH_POOL:-?}, in $(secs_since "$t")s"
  if [ $rc = 0 ]; then
    cli rbd/image rbd -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" create "$CEPH_POOL/$RBD_IMAGE" \
      --size "${RBD_MIB}M"; rc=$?
    rbd_admin info "$CEPH_POOL/$RBD_IMAGE" > "$OUTF" 2>&1
    grep -q '^[[:space:]]*features:.*exclusive-lock' "$OUTF" || BAD="no exclusive-lock feature: $(grep features "$OUTF")"
    verdict $rc "$CEPH_POOL/$RBD_IMAGE: $RBD_MIB MiB, features $(sed -n 's/^[[:space:]]*features: //p' "$OUTF")"
  fi
  if [ $rc = 0 ]; then
    cli rbd/image-shared rbd -c "$CEPH_CONF" -n client.admin -k "$CEPH_ADMIN_KEYRING" create \
      "$CEPH_POOL/$RBD_SHARED_IMAGE" --size "${RBD_SHARED_MIB}M"; rc=$?
    verdict $rc "$CEPH_POOL/$RBD_SHARED_IMAGE: $RBD_SHARED_MIB MiB, for the fault checks (no exclusive lock in the gateways' bdev)"
  fi
  if [ $rc = 0 ]; then
    SVC_START_TIMEOUT=$((SVC_START_TIMEOUT * 2))   # two JVMs and Ceph on the guest's 2 vCPUs under TCG
    rbd_config A $RBD_A_PORT $RBD_A_API 1 optimized
    rbd_config B $RBD_B_PORT $RBD_B_API 101 non-optimized
    rm -rf "$WORK/rbd-state-A" "$WORK/rbd-state-B"
    ana_use A; : > "$SVC_LOG"
    if svc_start rbd/start-A; then
      ana_keep A
      RBD_CLIENT_A=$(rbd_clients | head -n 1)
      RBD_SHARED_A=$(rbd_admin status "$CEPH_POOL/$RBD_SHARED_IMAGE" --format json 2> /dev/null | jq -r '.watchers[0].client // ""')
      rbd_lock_check rbd/lock-on-A "client.${RBD_CLIENT_A:-?}" "gateway A's client: it started optimized"
      before=$(rbd_clients | tr '\n' ' ')
      ana_use B; : > "$SVC_LOG"
      if svc_start rbd/start-B; then
        ana_keep B
        RBD_CLIENT_B=$(rbd_new_client "$before")
        rbd_scenarios || skip rbd/remaining "not run: an earlier rbd check failed (see above)"
        timeout 60 nvme disconnect -n "$RBD_NQN" > /dev/null 2>&1
        timeout 60 nvme disconnect -n "$RBD_SHARED_NQN" > /dev/null 2>&1
        timeout 60 nvme disconnect -n "$RBD_TEN_NQN" > /dev/null 2>&1
        ana_use B; [ -z "$SVC_PID" ] || svc_stop rbd/stop-B
      fi
      ana_use A; [ -z "$SVC_PID" ] || svc_stop rbd/stop-A
    fi
  fi
  C=rbd/ceph-stop OUTF=$RES/rbd-ceph-stop.log BAD=""
  timeout 300 "$REPO/e2e/ceph/cluster.sh" stop "$RBD_CLUSTER" > "$OUTF" 2>&1; rc=$?
  [ ! -e "$RBD_CLUSTER" ] || BAD="$RBD_CLUSTER still there"
  pgrep -f "$RBD_CLUSTER/ceph.conf" > /dev/null && BAD+="${BAD:+; }Ceph daemons still running: $(pgrep -af "$RBD_CLUSTER/ceph.conf" | tr '\n' ' ')"
  verdict $rc "cluster stopped and removed"
  GW=ana GWT=ana SVC_LOG=${saved[0]} SVC_START_TIMEOUT=${saved[4]}
  if [ -n "${saved[1]}" ]; then SVC_STATE=${saved[1]}; else unset SVC_STATE; fi
  if [ -n "${saved[2]}" ]; then SVC_CONFIG=${saved[2]}; else unset SVC_CONFIG; fi
  if [ -n "${saved[3]}" ]; then SVC_PORT=${saved[3]}; else unset SVC_PORT; fi
}

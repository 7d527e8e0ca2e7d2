# NVMe/TCP with TLS 1.3 and a PSK (run.sh --only tls; needs the 6.12 guest, run.sh --suite trixie), sourced by
# suite.sh. The control: the kernel's nvmet with a port that requires TLS (configfs addr_tsas tls1.3, addr_treq
# required), the TLS handshakes of both sides done by one tlshd (ktls-utils) in the guest, the PSK in the
# kernel's .nvme keyring where host and target look it up by the identity "NVMe0R01 <hostnqn> <subsysnqn>"
# (nvme gen-tls-key, then nvme check-tls-key --insert). Then nvmf4j: the same host (kernel, tlshd, PSKs in
# .nvme) against the service, whose listener has "secureChannel": "required" and whose subsystem names the
# configured PSKs (the NVMeTLSkey-1 lines gen-tls-key printed) in hostKeys[].tlsKey, files of mode 0600.
#   nvmet/tls/connect         nvme connect --tls: controller live, sysfs tls_key names the PSK's key
#   nvmet/tls/fio-verify      fio verify over the TLS connection
#   nvmet/tls/plain-refused   a connect without --tls to the listener that requires TLS fails
#   nvmf4j/tls/connect        the same against the service (SHA-256 PSK: TLS_AES_128_GCM_SHA256, the identity
#                             the host offered in the service's log)
#   nvmf4j/tls/fio-verify     fio verify over it
#   nvmf4j/tls/plain-refused  a plain connect is refused, the service logs why and lives on
#   nvmf4j/tls/psk-host-plain-listener-refused  the subsystem also has a plain listener (secureChannel none): a
#                             plain connect there as the PSK host is refused at Connect (Connect Invalid Host), the
#                             service logs that the host has a TLS PSK and the queue is not over TLS
#   nvmf4j/tls/sha384-*       a second host with a SHA-384 PSK (gen-tls-key --hmac=2): TLS_AES_256_GCM_SHA384,
#                             or TLS_CHACHA20_POLY1305_SHA256 with trixie's GnuTLS 3.8.9 (SHA-256 binder, see below)
#   nvmf4j/tls/discover       nvme discover --tls on that listener: the identity names the discovery NQN and the
#                             service has that host's PSK in discovery.hostKeys; the entries say sectype tls13
#   nvmf4j/tls/discover-plain-refused  nvme discover without --tls there fails
#   nvmf4j/tls/tlshd-alive    tlshd is still running after all the handshakes (nothing waits for it to start)
TLS_HOSTID=6e766d66-346a-4a75-8000-0000000000b1
TLS_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$TLS_HOSTID
TLS_NVMET_PORT=4423 TLS_NVMF4J_PORT=4435 TLS_NVMF4J_PLAIN_PORT=4436 TLS_PID=""
TLS_HOSTID2=6e766d66-346a-4a75-8000-0000000000b2
TLS_HOSTNQN2=nqn.2014-08.org.nvmexpress:uuid:$TLS_HOSTID2

tls_insert_key() { # check-name hostnqn subnqn hmac keyfile : gen-tls-key, the configured PSK into keyfile (0600),
  # its TLS PSK into .nvme for (hostnqn, subnqn) with check-tls-key --insert; PASS when /proc/keys shows it
  local key rc
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  key=$(nvme gen-tls-key --hostnqn="$2" --subsysnqn="$3" --hmac="$4" 2> "$OUTF" | grep -m1 '^NVMeTLSkey-1:')
  [ -n "$key" ] || BAD="nvme gen-tls-key printed no NVMeTLSkey-1 key"
  if [ -z "$BAD" ]; then
    (umask 077; printf '%s\n' "$key" > "$5")
    { echo "+ nvme check-tls-key --insert --hostnqn=$2 --subsysnqn=$3 --keydata=NVMeTLSkey-1:0$4:..."
      timeout 30 nvme check-tls-key --insert --hostnqn="$2" --subsysnqn="$3" --keydata="$key"; } >> "$OUTF" 2>&1; rc=$?
    [ $rc = 0 ] || BAD="check-tls-key --insert failed (rc $rc): $(tail -n 1 "$OUTF")"
    grep -q "NVMe0R0$4 $2 $3" /proc/keys || BAD+="${BAD:+; }no 'NVMe0R0$4 $2 $3' psk in /proc/keys"
  fi
  verdict 0 "PSK ${key:0:16}... (in $(basename "$5"), mode $(stat -c %a "$5" 2> /dev/null)) for $2 -> $3 in .nvme"
}

nvmf4j_tls_config() { # file keyfile keyfile384 discoverykey : one RAM namespace for two hosts, each with its PSK
  # file, on a listener that requires TLS and on a plain one; the first host's PSK for the discovery subsystem
  cat > "$1" <<EOF
{"cores": 2, "idleStrategy": "${E2E_IDLE:-backoff}",
 "discovery": {"hostKeys": [{"host": "$TLS_HOSTNQN", "tlsKey": "$4"}]},
 "tcp": {"connectTimeoutMs": 60000},
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": ${NS_BS[1]}, "numBlocks": ${NS_BLOCKS[1]}}],
 "subsystems": [{"nqn": "$NQN", "serial": "NVMF4JTLS00001", "model": "nvmf4j-e2e-tls",
   "allowAnyHost": false, "hosts": ["$TLS_HOSTNQN", "$TLS_HOSTNQN2"],
   "hostKeys": [{"host": "$TLS_HOSTNQN", "tlsKey": "$2"}, {"host": "$TLS_HOSTNQN2", "tlsKey": "$3"}],
   "namespaces": [{"nsid": 1, "bdev": "malloc0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT, "secureChannel": "required"},
                 {"transport": "tcp", "address": "127.0.0.1", "port": $TLS_NVMF4J_PLAIN_PORT}]}]}
EOF
  cp "$1" "$RES/tls-config.json"
}

tls_nvmf4j() { # the service with a listener that requires TLS, the same host, tlshd and keyring as the control
  hdr "nvmf4j: NVMe/TCP TLS 1.3 with a PSK (listener secureChannel required, hostKeys tlsKey)"
  T=nvmf4j TR=tcp ADDR=127.0.0.1 PORT=$TLS_NVMF4J_PORT NQN=nqn.2026-11.io.nvmf4j:e2e-tls NS_IDS=1
  NS_BLOCKS[1]=131072 NS_BS[1]=512
  local keys=$WORK/tls-keys rc svc_log=$SVC_LOG
  mkdir -p -m 0700 "$keys"
  tls_insert_key nvmf4j/tls/psk "$TLS_HOSTNQN" "$NQN" 1 "$keys/host.psk"
  tls_insert_key nvmf4j/tls/psk-sha384 "$TLS_HOSTNQN2" "$NQN" 2 "$keys/host384.psk"
  tls_insert_key nvmf4j/tls/psk-discovery "$TLS_HOSTNQN" "$DISC_NQN" 1 "$keys/discovery.psk"
  SVC_LOG=$RES/tls-service.log SVC_STATE=$WORK/tls-state SVC_CONFIG=$WORK/tls-config.json SVC_PORT=$PORT
  nvmf4j_tls_config "$SVC_CONFIG" "$keys/host.psk" "$keys/host384.psk" "$keys/discovery.psk"
  : > "$SVC_LOG"
  if ! svc_start nvmf4j/tls/start; then
    skip nvmf4j/tls/all "not run: the service did not start with the TLS config (see nvmf4j/tls/start, tls-service.log)"
    SVC_LOG=$svc_log; unset SVC_STATE SVC_CONFIG SVC_PORT; return 0
  fi
  trace_on
  if connect nvmf4j/tls/connect --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID" "${CONNECT_OPTS[@]}" --tls; then
    trace_off nvmf4j-tls
    C=nvmf4j/tls/connect-secured OUTF=$RES/cli/nvmf4j-tls-sysfs.txt BAD=""
    grep -H . /sys/class/nvme/"$CTRL"/{tls_key,tls_configured_key,tls_keyring,address} > "$OUTF" 2>&1
    expect_true tls_key "sysfs tls_key of $CTRL is empty: no TLS on this controller" [ -s "/sys/class/nvme/$CTRL/tls_key" ]
    expect_true service-log "the service logged no TLS handshake for $TLS_HOSTNQN" \
      grep -q "TLS 1.3 from .*NVMe0R01 $TLS_HOSTNQN $NQN.*TLS_AES_128_GCM_SHA256" "$SVC_LOG"
    verdict 0 "$CTRL over TLS: tls_key $(cat "/sys/class/nvme/$CTRL/tls_key" 2> /dev/null); service: $(grep -m1 -o "PSK identity 'NVMe0R01 [^ ]*" "$SVC_LOG")..., $(grep -m1 -o 'TLS_AES_[0-9]*_GCM_SHA[0-9]*' "$SVC_LOG")"
    fio_verify nvmf4j/tls/fio-verify "${DEV[1]}" $((32 << 20))
    disconnect nvmf4j/tls/disconnect
  else
    trace_off nvmf4j-tls
    tail -n 20 "$SVC_LOG" > "$RES/cli/nvmf4j-tls-connect-service-tail.txt"
  fi
  # no --tls: the listener requires TLS, the plain connect must fail and the service must say why
  C=nvmf4j/tls/plain-refused
  cli "$C" nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID" "${CONNECT_OPTS[@]}"; rc=$?
  # nvme connect returns when the kernel has made the controller or given up on it (the write to
  # /dev/nvme-fabrics is synchronous), so the sysfs check needs no wait; the service's log line may follow the
  # closed connection, so that one is polled for
  if find_ctrl > /dev/null; then BAD="a plain connect got controller $(find_ctrl)"; timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1; fi
  [ $rc != 0 ] || [ -n "$BAD" ] || BAD="nvme connect without --tls exited 0"
  wait_for 30 grep -q "plain NVMe/TCP .* on a listener that requires TLS" "$SVC_LOG" || BAD+="${BAD:+; }the service logged no refusal"
  verdict 0 "plain connect refused: rc=$rc, service: $(grep -m1 -o 'plain NVMe/TCP.*requires TLS' "$SVC_LOG")"
  tls_psk_host_plain_listener
  tls_discover
  # the second host's SHA-384 PSK: identity 'NVMe0R02 ...', a 48-byte TLS PSK. tlshd on GnuTLS before 3.8.11
  # (trixie: 3.8.9) computes its binder with SHA-256 and then takes only a SHA-256 suite: of the two it offers for
  # a 48-byte key (TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256) the service picks ChaCha20 and says why;
  # with a GnuTLS that binds with SHA-384 it is TLS_AES_256_GCM_SHA384
  if connect nvmf4j/tls/sha384-connect --hostnqn="$TLS_HOSTNQN2" --hostid="$TLS_HOSTID2" "${CONNECT_OPTS[@]}" --tls; then
    C=nvmf4j/tls/sha384-suite OUTF=$SVC_LOG BAD=""
    expect_true suite "no TLS_AES_256_GCM_SHA384 or (SHA-256 binder) TLS_CHACHA20_POLY1305_SHA256 handshake for $TLS_HOSTNQN2 in the service log" \
      grep -Eq "TLS 1.3 from .*NVMe0R02 $TLS_HOSTNQN2 $NQN.*(TLS_AES_256_GCM_SHA384|TLS_CHACHA20_POLY1305_SHA256 \(a SHA-384 PSK with a SHA-256 binder)" "$SVC_LOG"
    verdict 0 "$CTRL: $(grep -m1 -o "PSK identity 'NVMe0R02 [^ ]*" "$SVC_LOG")..., $(grep "NVMe0R02 $TLS_HOSTNQN2" "$SVC_LOG" | grep -m1 -o 'TLS_[A-Z0-9_]*_SHA[0-9]*.*')"
    fio_verify nvmf4j/tls/sha384-fio-verify "${DEV[1]}" $((16 << 20))
    disconnect nvmf4j/tls/sha384-disconnect
  fi
  svc_alive nvmf4j/tls/service-alive
  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
  [ -z "$SVC_PID" ] || svc_stop nvmf4j/tls/stop
  SVC_LOG=$svc_log; unset SVC_STATE SVC_CONFIG SVC_PORT
}

DISC_NQN=nqn.2014-08.org.nvmexpress.discovery

tls_psk_host_plain_listener() { # a plain nvme connect as the PSK host through the subsystem's plain listener: the
  # listener takes plain NVMe/TCP, the Connect naming a host with a TLS PSK is refused (Connect Invalid Host)
  local rc ctrl
  C=nvmf4j/tls/psk-host-plain-listener-refused
  cli "$C" nvme connect -t tcp -a "$ADDR" -s "$TLS_NVMF4J_PLAIN_PORT" -n "$NQN" --hostnqn="$TLS_HOSTNQN" \
    --hostid="$TLS_HOSTID" "${CONNECT_OPTS[@]}"; rc=$?
  ctrl=$(nvme_ctrl "$TR" "$ADDR" "$TLS_NVMF4J_PLAIN_PORT" "$NQN")
  if [ -n "$ctrl" ]; then BAD="a plain connect as the PSK host got controller $ctrl"; timeout 60 nvme disconnect -d "$ctrl" > /dev/null 2>&1; fi
  [ $rc != 0 ] || [ -n "$BAD" ] || BAD="nvme connect without --tls through the plain listener exited 0"
  wait_for 30 grep -q "connect refused: host $TLS_HOSTNQN .* the host has a TLS PSK (hostKeys tlsKey) and this queue is not over TLS" "$SVC_LOG" ||
    BAD+="${BAD:+; }the service logged no Connect refused for the PSK host"
  verdict 0 "refused: rc=$rc, $(grep -v '^$' "$OUTF" | tail -n 1); service: $(grep -m1 -o 'the host has a TLS PSK.*not over TLS' "$SVC_LOG")"
}

tls_discover() { # nvme discover --tls against the service's listener that requires TLS, then without --tls
  local rc
  C=nvmf4j/tls/discover
  cli "$C" nvme discover -t tcp -a "$ADDR" -s "$PORT" --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID" --tls; rc=$?
  [ $rc = 0 ] || BAD="nvme discover --tls exited $rc: $(tail -n 1 "$OUTF")"
  expect_true entry "no discovery log entry for $NQN" grep -Eq "subnqn: +$NQN\$" "$OUTF"
  expect_true sectype "no entry says sectype tls13" grep -Eq "sectype: +tls13" "$OUTF"
  expect_true service-log "the service logged no TLS handshake with the discovery identity of $TLS_HOSTNQN" \
    grep -q "PSK identity 'NVMe0R01 $TLS_HOSTNQN $DISC_NQN'" "$SVC_LOG"
  verdict 0 "$(grep -c '^=====Discovery Log Entry' "$OUTF") entries, $(grep -Em1 -o 'treq: .*' "$OUTF"), $(grep -Em1 -o 'sectype: +tls13' "$OUTF"), service: $(grep -m1 -o "PSK identity 'NVMe0R01 [^ ]* $DISC_NQN'" "$SVC_LOG")"
  C=nvmf4j/tls/discover-plain-refused
  cli "$C" nvme discover -t tcp -a "$ADDR" -s "$PORT" --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID"; rc=$?
  [ $rc != 0 ] || BAD="nvme discover without --tls exited 0 on a listener that requires TLS"
  verdict 0 "refused: rc=$rc, $(grep -v '^$' "$OUTF" | tail -n 1)"
}

tls_part() {
  hdr "NVMe/TCP TLS 1.3 with a PSK: kernel nvmet (the control)"
  local why="" kc="$E2E_KROOT/boot/config-$(uname -r)" key rc
  grep -qs '^CONFIG_NVME_TCP_TLS=y' "$kc" || why="kernel $(uname -r) has no CONFIG_NVME_TCP_TLS"
  grep -qs '^CONFIG_NVME_TARGET_TCP_TLS=y' "$kc" || why+="${why:+, }no CONFIG_NVME_TARGET_TCP_TLS"
  nvme_supports connect '--tls ' || why+="${why:+, }$(nvme version | head -n 1) has no --tls"
  command -v tlshd > /dev/null || why+="${why:+, }no tlshd (ktls-utils)"
  if [ -n "$why" ]; then
    skip tls "$why (run.sh --suite trixie boots Debian 13's kernel 6.12 with trixie's nvme-cli and tlshd)"; return 0
  fi
  T=nvmet TR=tcp ADDR=127.0.0.1 PORT=$TLS_NVMET_PORT NQN=nqn.2026-11.io.nvmf4j:nvmet-tls NS_IDS=1
  NS_BLOCKS[1]=131072 NS_BS[1]=512
  modprobe tls; modprobe nvme-keyring 2> /dev/null
  # the kernel gives tlshd 10 s for a handshake: under TCG on a loaded machine tlshd finished after the host had
  # given up ("TLS handshake failed, error -110" although tlshd logged success); 60 s where the module lets us
  local f tmo=""
  for f in /sys/module/nvme_tcp/parameters/tls_handshake_timeout /sys/module/nvmet_tcp/parameters/tls_handshake_timeout; do
    [ -w "$f" ] && echo 60 > "$f" && tmo+="${f#/sys/module/} 60 s; "
  done

  # tlshd does the TLS handshakes of the kernel's host and target (netlink handshake upcalls)
  C=nvmet/tls/tlshd OUTF=$RES/tlshd.log BAD=""
  printf '[debug]\nloglevel=1\ntls=0\nnl=0\n[authenticate]\nkeyrings=.nvme\n' > "$WORK/tlshd.conf"
  tlshd -s -c "$WORK/tlshd.conf" > "$OUTF" 2>&1 < /dev/null &
  TLS_PID=$!
  # tlshd gives no sign that it is ready, so no wait here: the handshakes below show that it serves, and
  # nvmf4j/tls/tlshd-alive at the end that it stayed up through all of them
  gone "$TLS_PID" && BAD="tlshd exited: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  verdict 0 "tlshd (ktls-utils $(tlshd -v 2>&1 | head -n 1)) pid $TLS_PID, keyrings .nvme; handshake timeout: ${tmo:-the kernel default}"

  # the PSK: interchange format from gen-tls-key, its retained key inserted into .nvme for (host, subsystem)
  C=nvmet/tls/psk OUTF=$RES/cli/tls-psk.txt BAD=""
  key=$(nvme gen-tls-key --hostnqn="$TLS_HOSTNQN" --subsysnqn="$NQN" --hmac=1 2> "$OUTF" | grep -m1 '^NVMeTLSkey-1:')
  [ -n "$key" ] || BAD="nvme gen-tls-key printed no NVMeTLSkey-1 key"
  if [ -z "$BAD" ]; then
    { echo "+ nvme check-tls-key --insert --hostnqn=$TLS_HOSTNQN --subsysnqn=$NQN --keydata=NVMeTLSkey-1:01:..."
      timeout 30 nvme check-tls-key --insert --hostnqn="$TLS_HOSTNQN" --subsysnqn="$NQN" --keydata="$key"; } >> "$OUTF" 2>&1; rc=$?
    [ $rc = 0 ] || BAD="check-tls-key --insert failed (rc $rc): $(tail -n 1 "$OUTF")"
    grep -E 'psk|nvme' /proc/keys >> "$OUTF" 2>&1
    grep -q "NVMe0R01 $TLS_HOSTNQN $NQN" /proc/keys || BAD+="${BAD:+; }no 'NVMe0R01 $TLS_HOSTNQN $NQN' psk in /proc/keys"
  fi
  verdict 0 "PSK ${key:0:16}... for $TLS_HOSTNQN -> $NQN in .nvme: $(grep -m1 -o "psk.*NVMe0R01.*" /proc/keys | cut -c1-60)..."

  # nvmet_single (guest/auth.sh): the subsystem for TLS_HOSTNQN on a port that requires TLS 1.3
  if nvmet_single "$NQN" "$WORK/nvmet-tls.img" "$TLS_HOSTNQN" 21 "$PORT" addr_tsas=tls1.3 addr_treq=required \
      > "$RES/cli/nvmet-tls-setup.txt" 2>&1; then
    pass nvmet/tls/setup "$NQN on tcp 127.0.0.1:$PORT: $(grep -E 'addr_(tsas|treq)' "$RES/cli/nvmet-tls-setup.txt" | sed 's|.*/||' | tr '\n' ' ')"
    trace_on
    if connect nvmet/tls/connect --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID" "${CONNECT_OPTS[@]}" --tls; then
      trace_off nvmet-tls
      C=nvmet/tls/connect-secured OUTF=$RES/cli/tls-sysfs.txt BAD=""
      grep -H . /sys/class/nvme/"$CTRL"/{tls_key,tls_configured_key,tls_keyring,address} > "$OUTF" 2>&1
      expect_true tls_key "sysfs tls_key of $CTRL is empty: no TLS on this controller" [ -s "/sys/class/nvme/$CTRL/tls_key" ]
      grep -qi 'handshake.*success\|tlshd.*complete\|Handshake with' "$RES/tlshd.log" >> /dev/null ||
        tail -n 5 "$RES/tlshd.log" >> "$OUTF"
      verdict 0 "$CTRL over TLS: tls_key $(cat "/sys/class/nvme/$CTRL/tls_key" 2> /dev/null) (psk $(grep -m1 -o "psk.*NVMe0R01" /proc/keys | cut -c1-30))"
      fio_verify nvmet/tls/fio-verify "${DEV[1]}" $((32 << 20))
      disconnect nvmet/tls/disconnect
    else
      trace_off nvmet-tls
    fi
    # no --tls: the target's port requires TLS, the plain connect must fail
    C=nvmet/tls/plain-refused
    cli "$C" nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" --hostnqn="$TLS_HOSTNQN" --hostid="$TLS_HOSTID" "${CONNECT_OPTS[@]}"; rc=$?
    if find_ctrl > /dev/null; then BAD="a plain connect got controller $(find_ctrl)"; timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1; fi
    [ $rc != 0 ] || [ -n "$BAD" ] || BAD="nvme connect without --tls exited 0"
    verdict 0 "plain connect refused: rc=$rc, $(grep -v '^$' "$OUTF" | tail -n 1)"
  else
    fail nvmet/tls/setup "configfs: $(tail -n 2 "$RES/cli/nvmet-tls-setup.txt" | tr '\n' ' ')"
  fi
  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
  nvmet_single_remove "$NQN" "$TLS_HOSTNQN" 21
  tls_nvmf4j
  C=nvmf4j/tls/tlshd-alive OUTF=$RES/tlshd.log BAD=""
  gone "$TLS_PID" && BAD="tlshd exited during the TLS checks: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  verdict 0 "tlshd pid $TLS_PID still running after every handshake, $(grep -ci 'handshake' "$OUTF") lines about handshakes in its log"
  [ -z "$TLS_PID" ] || { kill "$TLS_PID" 2> /dev/null; wait "$TLS_PID" 2> /dev/null; TLS_PID=""; }
}

# DH-HMAC-CHAP in-band authentication (run.sh --only auth; needs the 6.12 guest, run.sh --suite trixie), sourced
# by suite.sh. The same scenarios run against two targets, each exporting one RAM namespace to one host NQN
# that must authenticate:
#   nvmet/auth/...   the kernel's nvmet (configfs hosts/<hostnqn>/dhchap_*): the control, proving the guest's
#                    kernel host, nvme-cli and the scenarios themselves
#   nvmf4j/auth/...  the service, the subsystem's "hostKeys": [{"host", "dhchapKey", "dhchapCtrlKey"}] naming
#                    key files of mode 0600
#   spdk/auth/...    the service with the spdk engine and the same config: the key files in SPDK's keyring,
#                    SPDK's target authenticating
# Scenarios (auth_scenarios): unidirectional connect (the host's AUTH_Send/AUTH_Receive commands counted in the
# kernel trace), a connect without a secret and one with a wrong secret refused, bidirectional connect with the
# controller key and fio verify over it, a wrong controller secret refused by the host, the key rotated on the
# target while the host is connected (the host re-authenticates its connection with the new secret), the old
# secret refused afterwards and the new one accepted. Every connect is bounded by NVME_T (lib.sh).
AUTH_HOSTID=6e766d66-346a-4a75-8000-0000000000a1
AUTH_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$AUTH_HOSTID
AUTH_NVMET_PORT=4422 AUTH_NVMF4J_PORT=4434 AUTH_SPDK_PORT=4436
AUTH_KEYS=$WORK/auth-keys                    # the guest's copies of the secrets, and the service's key files

auth_profile() { # nvmet|nvmf4j|spdk : the target under test (globals of lib.sh), one namespace of 64 MiB RAM
  T=$1 TR=tcp ADDR=127.0.0.1 NS_IDS=1
  NS_BLOCKS[1]=131072 NS_BS[1]=512
  case $T in
    nvmet) PORT=$AUTH_NVMET_PORT NQN=nqn.2026-11.io.nvmf4j:nvmet-auth ;;
    spdk) PORT=$AUTH_SPDK_PORT NQN=nqn.2026-11.io.nvmf4j:e2e-auth-spdk ;;
    *) PORT=$AUTH_NVMF4J_PORT NQN=nqn.2026-11.io.nvmf4j:e2e-auth ;;
  esac
}
gen_key() { # nqn hmac(0-3) : a DH-HMAC-CHAP secret (DHHC-1:0h:<base64>:) from nvme-cli
  nvme gen-dhchap-key --nqn="$1" --hmac="$2" 2> /dev/null | grep -m1 '^DHHC-1:'
}
nvme_supports() { # subcommand option : this nvme-cli knows the option (2.3 does not know --dhchap-secret, --tls)
  nvme "$1" --help 2>&1 | grep -q -- "$2"
}
auth_cmds() { # trace-file : the AUTH_Send and AUTH_Receive commands the host sent, "N send, M receive"
  echo "$(grep nvme_setup_cmd "$1" | grep -ci 'auth_send') send, $(grep nvme_setup_cmd "$1" | grep -ci 'auth_receive') receive"
}
auth_trace_count() { grep nvme_setup_cmd "$1" 2> /dev/null | grep -ciE 'auth_(send|receive)'; }
auth_live_trace_at_least() { [ "$(auth_trace_count "$TRACE/trace")" -ge "$1" ]; } # n : AUTH commands traced so far

auth_connect() { # check-name trace-name secret-options... : connect as AUTH_HOSTNQN with those options; must work
  local name=$1 tn=$2 n; shift 2
  trace_on
  connect "$name" --hostnqn="$AUTH_HOSTNQN" --hostid="$AUTH_HOSTID" "${CONNECT_OPTS[@]}" "$@"; local rc=$?
  trace_off "$tn"
  [ $rc = 0 ] || return 1
  # the host authenticated (it only does when the controller's Connect response asks for it): its AUTH_Send
  # and AUTH_Receive commands on the admin queue and every I/O queue are in the trace
  n=$(auth_trace_count "$RES/nvme-trace-$tn.txt")
  C=$name-authenticated OUTF=$RES/nvme-trace-$tn.txt BAD=""
  expect_true "AUTH_Send/AUTH_Receive" "none in the host's command trace: the target did not ask the host to authenticate" [ "${n:-0}" -ge 2 ]
  verdict 0 "$CTRL authenticated: $(auth_cmds "$OUTF") commands in nvme-trace-$tn.txt; sysfs dhchap_secret set: $([ -s "/sys/class/nvme/$CTRL/dhchap_secret" ] && echo yes || echo no)$([[ " $* " == *" --dhchap-ctrl-secret="* ]] && echo "; bidirectional: the host checked the controller's reply")"
  [ -z "$BAD" ]
}
# The kernel's nvmet, refusing a host's response, completes the AUTH_Receive that carries its failure1 and at once
# declares the controller fatal (nvmet_ctrl_fatal_error), which tears the queue down; when the teardown wins, the
# failure1 never reaches the host and its connect fails only when its admin command times out (nvme_core's
# admin_timeout, 60 s): once in a CI run. Against nvmet (the control) a refusal may therefore take up to
# AUTH_NVMET_REFUSE_T, and the verdict says how long it took; against nvmf4j and SPDK the bound stays NVME_T.
AUTH_NVMET_REFUSE_T=100
auth_refused() { # check-name why secret-options... : the connect must fail and leave no controller of NQN
  local name=$1 why=$2 rc t0 took bound=$NVME_T slow=""; shift 2
  [ "$T" != nvmet ] || bound=$AUTH_NVMET_REFUSE_T
  t0=$(date +%s)
  NVME_T=$bound cli "$name" nvme connect -t "$TR" -a "$ADDR" -s "$PORT" -n "$NQN" --hostnqn="$AUTH_HOSTNQN" \
    --hostid="$AUTH_HOSTID" "${CONNECT_OPTS[@]}" "$@"; rc=$?
  took=$(($(date +%s) - t0))
  [ "$took" -lt 30 ] || slow=" after ${took} s (the host's admin command timed out: nvmet tore the queue down before its failure1 was sent)"
  # a controller the refused connect set up may take a moment to go (longer under TCG); one still there after 10 s
  # stayed connected
  if ! wait_for 10 eval '! find_ctrl > /dev/null'; then
    BAD="connected ($(find_ctrl)) although $why"
    timeout "$NVME_T" nvme disconnect -n "$NQN" > /dev/null 2>&1
  fi
  [ $rc != 0 ] || [ -n "$BAD" ] || BAD="nvme connect exited 0 although $why"
  [ $rc != 124 ] || BAD="nvme connect still running after ${bound}s (killed)"
  verdict 0 "refused ($why)$slow: rc=$rc, $(grep -v '^$' "$OUTF" | tail -n 1); kernel: $(dmesg | grep -iE 'auth|dhchap|keyrej|key rej' | tail -n 1 | cut -c1-160)"
}
auth_io() { # check-name : a read of the namespace through the connected controller
  C=$1 OUTF=$RES/cli/${1//\//_}.txt BAD=""
  timeout 60 dd if="${DEV[1]}" of=/dev/null bs=1M count=4 iflag=direct > "$OUTF" 2>&1; local rc=$?
  expect "$CTRL state" "$(ctrl_state)" live
  verdict $rc "4 MiB read through $CTRL (${DEV[1]}), controller live"
}

# auth_scenarios SET_KEY SET_CTRL_KEY : the scenarios against the running target of the current profile; SET_KEY
# and SET_CTRL_KEY are functions taking a secret that put it into the target's place for AUTH_HOSTNQN
auth_scenarios() {
  local set_key=$1 set_ctrl_key=$2 p="$T/auth" k1 k2 kc kbad kcbad
  k1=$(cat "$AUTH_KEYS/host.key") kc=$(cat "$AUTH_KEYS/ctrl.key")
  kbad=$(gen_key "$AUTH_HOSTNQN" 1) kcbad=$(gen_key "$NQN" 1) k2=$(gen_key "$AUTH_HOSTNQN" 1)

  hdr "$T: DH-HMAC-CHAP unidirectional"
  if auth_connect "$p/connect-unidirectional" "$T-auth-uni" --dhchap-secret="$k1"; then
    auth_io "$p/io-unidirectional"
    disconnect "$p/disconnect-unidirectional"
  fi
  auth_refused "$p/missing-key-refused" "the host gave no secret"
  auth_refused "$p/wrong-key-refused" "the host's secret is not the target's" --dhchap-secret="$kbad"

  hdr "$T: DH-HMAC-CHAP bidirectional"
  if auth_connect "$p/connect-bidirectional" "$T-auth-bi" --dhchap-secret="$k1" --dhchap-ctrl-secret="$kc"; then
    fio_verify "$p/fio-verify" "${DEV[1]}" $((32 << 20))
    hdr "$T: the host's key rotated on the target while the host is connected"
    # the target gets the new key; the connected host is told the new secret (sysfs dhchap_secret), which makes
    # it authenticate all its queues again: with the target's new key
    C=$p/rotate-reauthenticate OUTF=$RES/cli/${p//\//_}_rotate.txt BAD=""
    { "$set_key" "$k2" && echo "target: new key in place"; } > "$OUTF" 2>&1 || BAD="the target did not take the new key: $(tail -n 1 "$OUTF")"
    local t0; t0=$(date +%s)
    if [ -z "$BAD" ]; then
      trace_on
      printf '%s' "$k2" > "/sys/class/nvme/$CTRL/dhchap_secret" 2>> "$OUTF" || BAD="writing the new secret to sysfs failed: $(tail -n 1 "$OUTF")"
      # re-authentication runs in the background: await one whole bidirectional exchange in the trace
      # (Negotiate, Challenge, Reply, Success1, Success2), then the controller must be live, I/O must work
      wait_for 120 auth_live_trace_at_least 5; wait_for 30 ctrl_live
      trace_off "$T-auth-reauth" >> "$OUTF"
      dmesg | tail -n 8 >> "$OUTF"
      expect "$CTRL state" "$(ctrl_state)" live
      # the re-authentication happened: AUTH_Send/AUTH_Receive again after the secret changed
      local n; n=$(auth_trace_count "$RES/nvme-trace-$T-auth-reauth.txt")
      expect_true re-authentication "no AUTH_Send/AUTH_Receive after the new secret" [ "${n:-0}" -ge 2 ]
      timeout 60 dd if="${DEV[1]}" of=/dev/null bs=1M count=4 iflag=direct >> "$OUTF" 2>&1 || BAD+="${BAD:+; }a read after re-authentication failed"
      grep -qiE "$CTRL.*(auth|dhchap).*(fail|error|reject)" "$OUTF" && BAD+="${BAD:+; }$(grep -iE "$CTRL.*(auth|dhchap).*(fail|error|reject)" "$OUTF" | tail -n 1)"
    fi
    verdict 0 "new key on the target, the connected host re-authenticated with it ($(auth_cmds "$RES/nvme-trace-$T-auth-reauth.txt") commands): $CTRL $(ctrl_state), a read works ($(($(date +%s) - t0)) s)"
    disconnect "$p/disconnect-bidirectional"
  else
    "$set_key" "$k2" > /dev/null 2>&1
  fi
  auth_refused "$p/old-key-refused-after-rotation" "the target's key was rotated" --dhchap-secret="$k1"
  if auth_connect "$p/connect-after-rotation" "$T-auth-rotated" --dhchap-secret="$k2" --dhchap-ctrl-secret="$kc"; then
    auth_io "$p/io-after-rotation"
    disconnect "$p/disconnect-after-rotation"
  fi
  # the host checks the controller's answer: a controller secret that is not the target's fails the connect
  auth_refused "$p/wrong-ctrl-key-refused" "the controller's key is not the host's --dhchap-ctrl-secret" \
    --dhchap-secret="$k2" --dhchap-ctrl-secret="$kcbad"
}

# ---------------------------------------------------------------- the kernel's nvmet (control)
nvmet_auth_key() { printf '%s' "$1" > "$CFG/hosts/$AUTH_HOSTNQN/dhchap_key"; }
nvmet_auth_ctrl_key() { printf '%s' "$1" > "$CFG/hosts/$AUTH_HOSTNQN/dhchap_ctrl_key"; }
nvmet_single() { # nqn image hostnqn port-index port [port-attribute=value...] : a subsystem with one file namespace
  # (NS_BLOCKS[1] x NS_BS[1]) that admits only hostnqn (hosts/<hostnqn> made when missing), on tcp 127.0.0.1:port
  # (ports/<port-index>) with those attributes; nvmet_single_remove undoes it
  local nqn=$1 s=$CFG/subsystems/$1 img=$2 h=$CFG/hosts/$3 pt=$CFG/ports/$4 port=$5 a; shift 5
  truncate -s $((NS_BLOCKS[1] * NS_BS[1])) "$img" &&
  mkdir "$s" && echo 0 > "$s/attr_allow_any_host" && mkdir "$s/namespaces/1" &&
    echo -n "$img" > "$s/namespaces/1/device_path" && echo 1 > "$s/namespaces/1/enable" &&
  { [ -d "$h" ] || mkdir "$h"; } && ln -s "$h" "$s/allowed_hosts/${h##*/}" &&
  mkdir "$pt" && echo tcp > "$pt/addr_trtype" && echo ipv4 > "$pt/addr_adrfam" && echo -n 127.0.0.1 > "$pt/addr_traddr" &&
    echo -n "$port" > "$pt/addr_trsvcid" || return 1
  for a in "$@"; do echo -n "${a#*=}" > "$pt/${a%%=*}" || { echo "cannot write '${a#*=}' to $pt/${a%%=*}"; return 1; }; done
  ln -s "$s" "$pt/subsystems/$nqn" && grep -H . "$pt"/addr_*
}
nvmet_single_remove() { # nqn hostnqn port-index
  local s=$CFG/subsystems/$1
  rm -f "$CFG/ports/$3"/subsystems/* 2> /dev/null; rmdir "$CFG/ports/$3" 2> /dev/null
  rm -f "$s"/allowed_hosts/* 2> /dev/null
  [ ! -d "$s/namespaces/1" ] || { echo 0 > "$s/namespaces/1/enable"; rmdir "$s/namespaces/1"; }
  rmdir "$s" "$CFG/hosts/$2" 2> /dev/null
}
nvmet_auth_setup() { # AUTH_HOSTNQN with both keys, hmac(sha256) and ffdhe2048; NQN on tcp 127.0.0.1:PORT for it only
  local h=$CFG/hosts/$AUTH_HOSTNQN
  mkdir "$h" && nvmet_auth_key "$(cat "$AUTH_KEYS/host.key")" && nvmet_auth_ctrl_key "$(cat "$AUTH_KEYS/ctrl.key")" &&
    echo -n 'hmac(sha256)' > "$h/dhchap_hash" && echo -n ffdhe2048 > "$h/dhchap_dhgroup" &&
  nvmet_single "$NQN" "$WORK/nvmet-auth.img" "$AUTH_HOSTNQN" 20 "$PORT"
}

# ---------------------------------------------------------------- nvmf4j
nvmf4j_auth_key() { printf '%s\n' "$1" > "$AUTH_KEYS/nvmf4j-host.key"; }     # the same file, rewritten
nvmf4j_auth_ctrl_key() { printf '%s\n' "$1" > "$AUTH_KEYS/nvmf4j-ctrl.key"; }
nvmf4j_auth_config() { # file [engine-fields] : one malloc namespace, only AUTH_HOSTNQN admitted, its keys in files
  # of mode 0600; engine-fields (the spdk engine's "engine" and "spdk") go first into the document
  (umask 077; nvmf4j_auth_key "$(cat "$AUTH_KEYS/host.key")"; nvmf4j_auth_ctrl_key "$(cat "$AUTH_KEYS/ctrl.key")")
  cat > "$1" <<EOF
{${2:-}"cores": 2, "idleStrategy": "${E2E_IDLE:-backoff}",
 "bdevs": [{"name": "malloc0", "type": "malloc", "blockSize": ${NS_BS[1]}, "numBlocks": ${NS_BLOCKS[1]}}],
 "subsystems": [{"nqn": "$NQN", "serial": "NVMF4JAUTH0001", "model": "nvmf4j-e2e-auth",
   "allowAnyHost": false, "hosts": ["$AUTH_HOSTNQN"],
   "hostKeys": [{"host": "$AUTH_HOSTNQN", "dhchapKey": "$AUTH_KEYS/nvmf4j-host.key", "dhchapCtrlKey": "$AUTH_KEYS/nvmf4j-ctrl.key"}],
   "namespaces": [{"nsid": 1, "bdev": "malloc0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $PORT}]}]}
EOF
  cp "$1" "$RES/$(basename "$1")"
}

auth_nvmf4j() { # nvmf4j|spdk : the service with that engine, the scenarios against it
  local engine_fields="" huge=true svc_log=$SVC_LOG
  # SPDK picks the strongest DH group the host offers (ffdhe8192) and computes it on its one reactor, and its
  # keep-alive timer runs from the admin queue's Connect, through the negotiation: under TCG the negotiation
  # outlasted the suite's 5 s KATO, and with the host's other core busy it outlasted 30 s (SPDK disconnected
  # the host "due to keep alive timeout" mid-negotiation, its next AUTH_Send unanswered). The spdk scenarios
  # connect with one I/O queue and a 120 s KATO, a bound for a failure only (what they check does not depend
  # on either)
  local -a CONNECT_OPTS=("${CONNECT_OPTS[@]}")
  [ "$1" != spdk ] || CONNECT_OPTS=(--reconnect-delay=1 --ctrl-loss-tmo=600 --keep-alive-tmo=120 --nr-io-queues=1)
  auth_profile "$1"
  SVC_LOG=$RES/auth-$1-service.log SVC_STATE=$WORK/auth-$1-state SVC_CONFIG=$WORK/auth-$1-config.json SVC_PORT=$PORT
  if [ "$1" = spdk ]; then
    spdk_hugepages spdk/auth/hugepages-reserve || huge=false
    engine_fields="\"engine\": \"spdk\", \"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $SPDK_MEM_MB, \"hugepages\": $huge}, "
  fi
  nvmf4j_auth_config "$SVC_CONFIG" "$engine_fields"
  : > "$SVC_LOG"
  if svc_start "$T/auth/start"; then
    [ "$1" != spdk ] || spdk_engine_check spdk/auth/engine $huge
    auth_scenarios nvmf4j_auth_key nvmf4j_auth_ctrl_key
    svc_alive "$T/auth/service-alive"
    timeout "$NVME_T" nvme disconnect -n "$NQN" > /dev/null 2>&1
    [ -z "$SVC_PID" ] || svc_stop "$T/auth/stop"
  else
    skip "$T/auth/all" "not run: the service did not start with the hostKeys config (see $T/auth/start, $(basename "$SVC_LOG"))"
  fi
  SVC_LOG=$svc_log; unset SVC_STATE SVC_CONFIG SVC_PORT
}

auth_part() {
  hdr "DH-HMAC-CHAP in-band authentication"
  local why="" rc
  [ -e /sys/module/nvme_auth ] || modprobe nvme-auth 2> /dev/null
  grep -qs '^CONFIG_NVME_HOST_AUTH=y' "$E2E_KROOT/boot/config-$(uname -r)" || why="kernel $(uname -r) has no CONFIG_NVME_HOST_AUTH"
  grep -qs '^CONFIG_NVME_TARGET_AUTH=y' "$E2E_KROOT/boot/config-$(uname -r)" || why+="${why:+, }no CONFIG_NVME_TARGET_AUTH"
  nvme_supports connect --dhchap-secret || why+="${why:+, }$(nvme version | head -n 1) has no --dhchap-secret"
  if [ -n "$why" ]; then
    skip auth "$why (run.sh --suite trixie boots Debian 13's kernel 6.12 with trixie's nvme-cli)"; return 0
  fi
  mkdir -p -m 0700 "$AUTH_KEYS"
  (umask 077; gen_key "$AUTH_HOSTNQN" 1 > "$AUTH_KEYS/host.key"; gen_key nqn.2026-11.io.nvmf4j:e2e-auth 1 > "$AUTH_KEYS/ctrl.key")
  C=auth/keys OUTF=$AUTH_KEYS/host.key BAD=""
  expect_true "host key" "not a DHHC-1 secret: $(cut -c1-10 "$AUTH_KEYS/host.key")" grep -qE '^DHHC-1:01:[A-Za-z0-9+/]{48}=*:$' "$AUTH_KEYS/host.key"
  expect_true "controller key" "not a DHHC-1 secret" grep -qE '^DHHC-1:01:[A-Za-z0-9+/]{48}=*:$' "$AUTH_KEYS/ctrl.key"
  verdict 0 "nvme gen-dhchap-key --hmac=1: host and controller secrets (DHHC-1:01:..., 32 bytes + CRC), host $AUTH_HOSTNQN"

  auth_profile nvmet
  if nvmet_auth_setup > "$RES/cli/nvmet-auth-setup.txt" 2>&1; then
    pass nvmet/auth/setup "$NQN on tcp 127.0.0.1:$PORT, only $AUTH_HOSTNQN: dhchap_key, dhchap_ctrl_key, hmac(sha256), ffdhe2048"
    auth_scenarios nvmet_auth_key nvmet_auth_ctrl_key
  else
    fail nvmet/auth/setup "configfs: $(tail -n 2 "$RES/cli/nvmet-auth-setup.txt" | tr '\n' ' ')"
  fi
  timeout "$NVME_T" nvme disconnect -n "$NQN" > /dev/null 2>&1
  nvmet_single_remove "$NQN" "$AUTH_HOSTNQN" 20

  hdr "nvmf4j: DH-HMAC-CHAP (subsystem hostKeys)"
  auth_nvmf4j nvmf4j
  hdr "nvmf4j, spdk engine: DH-HMAC-CHAP (the same hostKeys in SPDK's keyring, SPDK's target authenticating)"
  auth_nvmf4j spdk
}

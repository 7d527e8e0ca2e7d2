# The RDMA fuzzers (issue 15; run.sh --only fuzzrdma, --fuzz-seconds N), sourced by suite.sh. The service (java
# engine) listens on rxe with two subsystems: A is fuzzed, B is where the Linux host (nvme-rdma) verifies I/O all
# along, fio rounds of crc32c-tagged random writes read back and compared, which must see no error.
#   fuzzrdma/nvme-fuzz...   SPDK's nvme_fuzz (trtype:RDMA) against A for FZ_SECONDS: random admin and I/O commands
#   fuzzrdma/live-fuzz...   the live RDMA fuzzer (guest/RdmaHost.java fuzz) against A for FZ_SECONDS: mutated CM
#                           private data, mutated capsules, bad SGLs and keys, oversized capsules, floods of Keep
#                           Alive and AER, extra queues, queue pairs destroyed mid-transfer without a disconnect
# Before and after each fuzzer: the service's heap after a full GC (jcmd GC.run, then /metrics), direct memory,
# threads and fds (/proc), controllers and open RDMA connections (/metrics); after must come back within the
# soak's tolerances (heap 32 MiB, direct 16 MiB, 2 threads, 4 fds, no controller, no connection) in 90 s.
FZ_PORT=4436 FZ_RDMA_PORT=4437
FZ_A=nqn.2026-11.io.nvmf4j:e2e-fuzz-a FZ_B=nqn.2026-11.io.nvmf4j:e2e-fuzz-b
FZ_SECONDS=${E2E_FUZZ_SECONDS:-20}

fz_config() { # file : the service's config, both subsystems on TCP (the readiness probe) and RDMA (rxe)
  local l="[{\"transport\": \"tcp\", \"address\": \"127.0.0.1\", \"port\": $FZ_PORT}, {\"transport\": \"rdma\", \"address\": \"$RXE_ADDR\", \"port\": $FZ_RDMA_PORT}]"
  cat > "$1" <<EOF
{"cores": 2, "idleStrategy": "${E2E_IDLE:-backoff}",
 "rdma": {"inCapsuleDataSize": 4096, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072,
          "srqDepth": 256, "dataBuffers": 128, "cqSize": 4096, "maxReadDepth": 16, "hugepages": false},
 "bdevs": [{"name": "fuzz0", "type": "malloc", "blockSize": 512, "numBlocks": 131072},
           {"name": "verify0", "type": "malloc", "blockSize": 512, "numBlocks": 131072}],
 "subsystems": [
   {"nqn": "$FZ_A", "serial": "NVMF4JFUZZA0001", "model": "nvmf4j-e2e-fuzz", "allowAnyHost": true,
    "namespaces": [{"nsid": 1, "bdev": "fuzz0"}], "listeners": $l},
   {"nqn": "$FZ_B", "serial": "NVMF4JFUZZB0001", "model": "nvmf4j-e2e-verify", "allowAnyHost": true,
    "namespaces": [{"nsid": 1, "bdev": "verify0"}], "listeners": $l}]}
EOF
  cp "$1" "$RES/fuzzrdma-config.json"
}

fz_figures() { # heap-after-gc direct threads fds controllers rdma-connections of the service ($JPID)
  local thr fds
  timeout 60 jcmd "$JPID" GC.run > /dev/null 2>&1
  thr=$(awk '/^Threads:/ {print $2}' "/proc/$JPID/status" 2> /dev/null)
  fds=$(ls "/proc/$JPID/fd" 2> /dev/null | wc -l)
  curl -s -m 20 -H "Authorization: Bearer $(cat "$SVC_STATE/api-token" 2> /dev/null)" http://127.0.0.1:8420/metrics 2> /dev/null |
    awk -v t="${thr:-0}" -v f="$fds" '
      /^jvm_memory_used_bytes\{area="heap"/ {h += $NF}
      /^jvm_buffer_memory_used_bytes\{id="direct"\}/ {d = $NF}
      /^nvmf_subsystem_controllers\{/ {c += $NF}
      /^nvmf_transport_connections\{/ && /transport="rdma"/ {r += $NF}
      END {printf "%.0f %.0f %d %d %.0f %.0f\n", h, d, t, f, c, r}'
}
fz_text() { # figures : readable
  local h d t f c r; read -r h d t f c r <<< "$1"
  echo "heap after GC $((h >> 20)) MiB, direct $((d >> 20)) MiB, threads $t, fds $f, controllers $c, RDMA connections $r"
}
fz_leaks() { # before after : what grew beyond the tolerances (empty: none)
  local b a n names=(heap direct threads fds controllers rdma-connections) tol=($((32 << 20)) $((16 << 20)) 2 4 0 0) out=""
  read -ra b <<< "$1"; read -ra a <<< "$2"
  for n in 0 1 2 3 4 5; do
    [ $(( ${a[n]:-0} - ${b[n]:-0} )) -le "${tol[n]}" ] || out+="${out:+; }${names[n]} ${b[n]:-?} -> ${a[n]:-?} (tolerance ${tol[n]})"
  done
  echo "$out"
}
fz_resources() { # check-name before : after (polled for 90 s while controllers of vanished hosts time out) vs before
  local after leaks end=$(( $(now_us) + 90 * 1000000 ))
  while after=$(fz_figures); leaks=$(fz_leaks "$1" "$after"); [ -n "$leaks" ] && [ "$(now_us)" -lt "$end" ]; do sleep 3; done
  C=$2 OUTF=$RES/cli/fuzzrdma-resources.txt BAD=$leaks
  echo "$2: before $1 / after $after" >> "$OUTF"
  echo "before: $(fz_text "$1")"; echo "after:  $(fz_text "$after")"
  verdict 0 "before: $(fz_text "$1"); after: $(fz_text "$after")"
}

fz_verify_start() { # label dev seconds : fio rounds in the background until the time is up; rows in $RES/fuzzrdma-verify-<label>.tsv
  local label=$1 dev=$2 end=$(( $(now_us) + $3 * 1000000 )) tsv=$RES/fuzzrdma-verify-$1.tsv
  : > "$tsv"
  (
    i=0
    while [ "$(now_us)" -lt "$end" ]; do
      i=$((i + 1)) j=$RES/fuzzrdma-verify-$label-$i.json
      # 16 MiB of random writes (4-64 KiB, QD 16) in one of four regions, then read back and compared (crc32c)
      timeout 300 fio --output-format=json --output="$j" --name=verify --filename="$dev" --ioengine=libaio --direct=1 \
        --rw=randwrite --bsrange=4k-64k --iodepth=16 --offset=$(( (i % 4) * 16 ))M --size=16M --verify=crc32c \
        --verify_fatal=1 --randrepeat=0 > /dev/null 2>&1
      rc=$?
      sed -n '/^{/,$p' "$j" > "$j.tmp"
      printf '%s\t%s\t%s\n' "$i" "$rc" "$(jq -r '[([.jobs[].error] | add), ([.jobs[].write.total_ios] | add), ([.jobs[].read.total_ios] | add), ([.jobs[].read.io_bytes] | add)] | @tsv' "$j.tmp" 2> /dev/null)" >> "$tsv"
      if [ "$rc" = 0 ]; then rm -f "$j" "$j.tmp"; else mv "$j.tmp" "$j.json"; fi
    done
  ) &
  FZ_VPID=$!
}
fz_verify_check() { # check-name label : waits for the rounds; PASS when every round ended 0 with no error
  local tsv=$RES/fuzzrdma-verify-$2.tsv v n bad w r b
  wait "$FZ_VPID"
  v=$(awk -F'\t' '{n++; if ($2 != 0 || $3 != 0) bad++; w += $4; r += $5; b += $6} END {printf "%d %d %d %d %d", n, bad, w, r, b}' "$tsv")
  read -r n bad w r b <<< "$v"
  C=$1 OUTF=$tsv BAD=""
  [ "${n:-0}" -gt 0 ] || BAD="no fio round ran"
  [ "${bad:-0}" = 0 ] || BAD+="${BAD:+; }$bad of $n rounds failed: $(awk -F'\t' '$2 != 0 || $3 != 0' "$tsv" | head -n 3 | tr '\t\n' ' ;')"
  echo "verifying host: $n fio rounds, $w writes, $r reads ($((b >> 20)) MiB) read back and compared, $bad failed rounds"
  verdict 0 "Linux host over nvme-rdma on $FZ_B: $n fio rounds, $w writes, $r verified reads ($((b >> 20)) MiB), 0 errors"
}

fuzzrdma_part() {
  local SVC_LOG=$RES/fuzzrdma-service.log SVC_STATE=$WORK/fz-state SVC_CONFIG=$WORK/fz-config.json SVC_PORT=$FZ_PORT
  local SVC_PID="" JPID="" before rc seed out spdk vdev
  hdr "RDMA fuzzers against the service on rxe $RXE_ADDR:$FZ_RDMA_PORT, ${FZ_SECONDS}s each"
  if [ $RXE_OK != 1 ]; then skip fuzzrdma "rxe0 not active"; return; fi
  fz_config "$SVC_CONFIG"
  svc_start fuzzrdma/start || return
  T=nvmf4j TR=rdma ADDR=$RXE_ADDR PORT=$FZ_RDMA_PORT NQN=$FZ_B NS_IDS=1
  if ! connect fuzzrdma/verify-host/connect "${CONNECT_OPTS[@]}"; then
    svc_stop fuzzrdma/stop; return
  fi
  vdev=${DEV[1]}
  fz_figures > /dev/null   # the first scrape starts the API's workers: not part of the baseline

  # 1. SPDK's nvme_fuzz over RDMA
  spdk=$(cat "$REPO/spdk-jni/target/spdk-dir" 2> /dev/null)/test/app/fuzz/nvme_fuzz/nvme_fuzz
  if [ ! -x "$spdk" ]; then
    skip fuzzrdma/nvme-fuzz "no SPDK build (spdk-jni/target/spdk-dir names none with nvme_fuzz)"
  else
    before=$(fz_figures)
    seed=$((RANDOM * 32768 + RANDOM))
    out=$RES/cli/fuzzrdma-nvme-fuzz.txt
    fz_verify_start nvme-fuzz "$vdev" "$FZ_SECONDS"
    echo "+ nvme_fuzz -t $FZ_SECONDS -S $seed trtype:RDMA $RXE_ADDR:$FZ_RDMA_PORT $FZ_A"
    # it dumps every command that succeeded as JSON and prints every failed one (gigabytes in 10 minutes): kept
    # are its other lines
    timeout $((FZ_SECONDS + 180)) "$spdk" -m 0x1 --no-huge -s 512 --no-rpc-server --disable-cpumask-locks -U \
      -t "$FZ_SECONDS" -S "$seed" -N -a \
      -F "trtype:RDMA adrfam:IPv4 traddr:$RXE_ADDR trsvcid:$FZ_RDMA_PORT subnqn:$FZ_A" 2>&1 |
      grep -a -v -E '^[[:space:]]*([]{}"]|$)|completed successfully$|spdk_nvme_qpair_print_(command|completion)' > "$out"
    rc=${PIPESTATUS[0]}
    grep -E 'Total commands completed|timed out' "$out" | head -n 8
    C=fuzzrdma/nvme-fuzz OUTF=$out BAD=""
    grep -q 'Fuzzing completed' "$out" || BAD="no 'Fuzzing completed' from nvme_fuzz"
    local ncmd nok
    # "NS: 0x... I/O qp, Total commands completed: N, total successful commands: M, random_seed: S"
    ncmd=$(grep -o 'Total commands completed: [0-9]*' "$out" | awk '{s += $NF} END {print s + 0}')
    nok=$(grep -o 'successful commands: [0-9]*' "$out" | awk '{s += $NF} END {print s + 0}')
    [ "$ncmd" -gt 0 ] || BAD+="${BAD:+; }nvme_fuzz completed no command"
    svc_alive fuzzrdma/nvme-fuzz/service-alive || { fz_verify_check fuzzrdma/nvme-fuzz/verify-host nvme-fuzz; return; }
    verdict $rc "${FZ_SECONDS}s, seed $seed: $ncmd commands completed, $nok successful"
    fz_verify_check fuzzrdma/nvme-fuzz/verify-host nvme-fuzz
    fz_resources "$before" fuzzrdma/nvme-fuzz/resources
  fi

  # 2. the live RDMA fuzzer
  before=$(fz_figures)
  seed=$((RANDOM * 32768 + RANDOM))
  out=$RES/cli/fuzzrdma-live-fuzz.txt
  fz_verify_start live-fuzz "$vdev" "$FZ_SECONDS"
  echo "+ RdmaHost.java fuzz $RXE_ADDR $FZ_RDMA_PORT $FZ_A $FZ_SECONDS $seed 2"
  timeout $((FZ_SECONDS + 300)) "${RDMA_HOST[@]}" fuzz "$RXE_ADDR" "$FZ_RDMA_PORT" "$FZ_A" "$FZ_SECONDS" "$seed" 2 > "$out" 2>&1
  rc=$?
  grep '^rdma-fuzz: ' "$out" | grep -v ' s: ' | head -n 30
  C=fuzzrdma/live-fuzz OUTF=$out BAD=""
  grep -q '^rdma-fuzz: clean' "$out" || BAD="$(grep -m 3 'PROBLEM' "$out" | tr '\n' ' ')"
  svc_alive fuzzrdma/live-fuzz/service-alive || { fz_verify_check fuzzrdma/live-fuzz/verify-host live-fuzz; return; }
  verdict $rc "$(grep -m1 ' cases in ' "$out" | sed 's/^rdma-fuzz: //'); $(grep -m1 ' CM connects, ' "$out" | sed 's/^rdma-fuzz: //')"
  fz_verify_check fuzzrdma/live-fuzz/verify-host live-fuzz
  fz_resources "$before" fuzzrdma/live-fuzz/resources

  disconnect fuzzrdma/verify-host/disconnect
  svc_stop fuzzrdma/stop
}

# The benchmark kit's rows in the guest (run.sh --only bench; fio-jobs/bench.sh --guest), sourced by
# suite.sh. The Linux host (kernel nvme-tcp / nvme-rdma, fio) runs fio-jobs/jobs/latency.fio (4 KiB random
# reads at QD 1, then QD 32: IOPS, p50, p99) and iops.fio (4 KiB random reads, then random writes, 4 jobs x
# QD 32) against nsid 1 (128 MiB of RAM in 512-byte blocks: brd behind nvmet, a malloc bdev behind nvmf4j) of
#   nvmet    the kernel's target, the peer,
#   java     the service with the java engine,
#   spdk     the service with the spdk engine (SPDK's target in the JVM, its memory in hugepages),
# each over TCP (127.0.0.1) and over RDMA (rxe on the dummy netdev), one after the other, and writes the
# ratios target/nvmet per transport into bench-guest.tsv (transport, target, metric, target's value,
# nvmet's, ratio). The guest's vCPUs are emulated (TCG by default): the ratios compare the targets on the
# same emulated machine, the absolute numbers say nothing about real hardware. A check passes when fio ran
# without errors on every job; no number makes one fail.
BENCH_TARGETS="nvmet java spdk"

bench_fio() { # check-name label : latency and iops on nsid 1 (${DEV[1]}); rows into $RES/bench-<label>.tsv
  local name=$1 label=$2 dev=${DEV[1]} job rc=0 rows w=${E2E_BENCH_WARMUP:-15}
  : > "$RES/bench-$label.tsv"
  if [ "$w" -gt 0 ]; then
    # not measured, every target alike: a JVM target starts interpreted and compiles its hot paths in its
    # first seconds (longer under TCG), and the first measured job is QD 1
    hdr "bench: $label, warm-up: ${w} s of 4 KiB random reads and writes at QD 32"
    fio_json "bench-$label-warmup" $((w + 120)) --name=warmup --filename="$dev" --ioengine=libaio --direct=1 \
      --bs=4k --rw=randrw --iodepth=32 --time_based --runtime="$w" > /dev/null || true
  fi
  for job in latency iops; do
    hdr "bench: $label, fio $job"
    DEV=$dev RUNTIME=$E2E_FIO_RUNTIME fio_json "bench-$label-$job" $((4 * E2E_FIO_RUNTIME + 300)) \
      "$FIO_JOBS/jobs/$job.fio" || rc=1
    # fio-jobs/lib/fio.sh: job op iops p50 p99 mean errors; the job file's name in front of fio's job name
    fio_summary "$RES/fio-bench-$label-$job.json" 2> /dev/null | sed "s/^/$job-/" >> "$RES/bench-$label.tsv"
  done
  rows=$(wc -l < "$RES/bench-$label.tsv")
  C=$name OUTF=$RES/bench-$label.tsv BAD="" ERRF=$RES/fio-bench-$label-iops.stderr
  # latency: qd1 and qd32 reads; iops: randread reads and randwrite writes
  expect "fio result rows" "$rows" 4
  expect errors "$(awk -F'\t' '{e += $7} END {print e + 0}' "$RES/bench-$label.tsv")" 0
  verdict $rc "$(awk -F'\t' '{printf "%s %.0f IOPS p99 %.1f us; ", $1, $3, $5}' "$RES/bench-$label.tsv")${E2E_FIO_RUNTIME}s each"
}

bench_transports() { # target : connect over TCP, then RDMA, run the jobs, disconnect (profile's T is set)
  local tr
  for tr in tcp rdma; do
    if [ "$tr" = rdma ] && [ "$RXE_OK" != 1 ]; then skip "bench/$1/rdma" "rxe0 not active"; continue; fi
    profile "$T" "$tr"
    connect "bench/$1/$tr/connect" "${CONNECT_OPTS[@]}" || continue
    bench_fio "bench/$1/$tr/fio" "$1-$tr"
    disconnect "bench/$1/$tr/disconnect"
  done
}

bench_service() { # target engine-members : starts the service of that engine, runs bench_transports, stops it
  local t=$1
  SVC_LOG=$RES/bench-$t-service.log SVC_STATE=$WORK/bench-state-$t SVC_CONFIG=$WORK/bench-config-$t.json
  SVC_PORT=$PORT FILE_IMG=$WORK/bench-file0-$t.img
  truncate -s $((NS_BLOCKS[2] * NS_BS[2])) "$FILE_IMG"
  write_config "$SVC_CONFIG" "bench-config-$t.json" "$PORT" "$([ "$T" = spdk ] && echo $SPDK_RDMA_PORT || echo $NVMF4J_RDMA_PORT)" \
    "$FILE_IMG" "$2"
  : > "$SVC_LOG"
  if svc_start "bench/$t/start"; then
    bench_transports "$t"
    svc_stop "bench/$t/stop"
  else
    skip "bench/$t/all" "not run: the service did not start"
  fi
}

bench_ratios() { # bench-guest.tsv and one check per target and transport with its key ratios
  local tr t out=$RES/bench-guest.tsv r
  printf 'transport\ttarget\tmetric\ttarget_value\tnvmet_value\tratio_target_over_nvmet\n' > "$out"
  for tr in tcp rdma; do
    for t in java spdk; do
      if [ ! -s "$RES/bench-$t-$tr.tsv" ] || [ ! -s "$RES/bench-nvmet-$tr.tsv" ]; then
        skip "bench/$t/$tr/ratio" "no $t and nvmet pair of fio results over $tr"; continue
      fi
      fio_ratio "$RES/bench-$t-$tr.tsv" "$RES/bench-nvmet-$tr.tsv" | tail -n +2 |
        awk -v OFS='\t' -v tr="$tr" -v t="$t" '{print tr, t, $0}' >> "$out"
      r=$(awk -F'\t' -v tr="$tr" -v t="$t" '$1 == tr && $2 == t && ($3 ~ /-IOPS$/ || $3 ~ /^latency-.*-p99_us$/) {
            m = $3; sub(/-read-|-write-/, " ", m); printf "%s %s, ", m, $6}' "$out")
      pass "bench/$t/$tr/ratio" "$t/nvmet: ${r%, } (numbers in bench-guest.tsv)"
    done
  done
}

bench_part() {
  local t
  hdr "benchmark rows: the Linux host's fio latency and iops jobs against nvmet, the java engine, the spdk engine"
  for t in $BENCH_TARGETS; do
    case $t in
      nvmet)
        [ "$NVMET_OK" = 1 ] || { skip bench/nvmet "nvmet setup failed"; continue; }
        T=nvmet; bench_transports nvmet ;;
      java)
        profile nvmf4j tcp
        # the RDMA poll groups' registered regions in 2 MiB pages, as in the rdma part
        [ "$(cat /proc/sys/vm/nr_hugepages)" -ge 48 ] || echo 48 > /proc/sys/vm/nr_hugepages
        # one busy-polling poll group on vCPU 0, as the spdk engine's one reactor (coreMask 0x1) and the host
        # rows have: two, or backoff's wake-ups, share the two vCPUs with fio (QD 1 over TCP: 0.17 of nvmet,
        # 0.27-0.42 unpinned, 0.53 pinned); pinned only with the default count (--cores names another)
        local pin=""
        [ -n "${E2E_CORES:-}" ] || pin='"pollGroupCores": "0x1", '
        E2E_CORES=${E2E_CORES:-1} E2E_IDLE=${E2E_IDLE:-busy} bench_service java "$pin" ;;
      spdk)
        profile spdk tcp
        local huge=true
        spdk_hugepages bench/spdk/hugepages-reserve || huge=false
        SVC_EXIT_OK=0 bench_service spdk \
          "\"engine\": \"spdk\", \"spdk\": {\"coreMask\": \"0x1\", \"memSizeMb\": $SPDK_MEM_MB, \"hugepages\": $huge}, " ;;
    esac
  done
  hdr "benchmark rows: target / nvmet"
  bench_ratios
  column -t -s $'\t' "$RES/bench-guest.tsv" 2> /dev/null || cat "$RES/bench-guest.tsv"
}

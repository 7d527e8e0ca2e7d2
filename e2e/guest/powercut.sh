#!/bin/bash
# The power-cut scenario, run by init.sh in two boots of a guest with one virtio disk (run.sh,
# --only powercut). The disk holds an ext4 with the file bdev's image, nvmf4j's config and state dir.
#   E2E_PC_MODE=write   formats the disk, starts nvmf4j exporting the image over TCP, the Linux host in
#                       the same guest connects and writes 4 KiB records (tag + sequence number):
#                       1. PC_DSYNC records with dd oflag=direct,dsync (FUA write + Flush from Linux)
#                       2. fio, 4 KiB sequential writes with fsync=1, end_fsync=1 and crc32c headers
#                          (Write + Flush)
#                       3. records with `nvme write --force-unit-access` (a FUA Write, no Flush) until
#                          run.sh kills the VM with SIGKILL (no shutdown: what the guest's page cache
#                          held is gone, as in a power cut)
#                       After each acknowledged record its "seq how" line goes to $RES/acked.txt, on the
#                       results share (9p, cache=none: on the host at once).
#   E2E_PC_MODE=verify  a fresh boot on the same disk: mounts it (journal replay), starts nvmf4j with
#                       the config on the disk, connects, reads back every acknowledged record (the
#                       acked.txt of the first boot, copied here by run.sh), checks fio's region with
#                       verify_only, then stops everything and fsck's the disk.
# Writes $E2E_RES/results.tsv like suite.sh; exit status: the number of failed checks.
set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/lib.sh"
REPO=${E2E_REPO:?} MODE=${E2E_PC_MODE:?} TAG=${E2E_PC_TAG:?}
WORK=/tmp/nvmf4j-e2e NVMF4J_PORT=4430
LAUNCHER=${E2E_LAUNCHER:-$REPO/bin/nvmf4j-target}
SVC_LOG=$RES/nvmf4j-service.log SVC_START_TIMEOUT=480
DISK=/dev/vda PC=/pc                       # the virtio disk (cache=directsync on the host) and its mount
SVC_STATE=$PC/state SVC_CONFIG=$PC/config.json
PC_DSYNC=100                               # records of phase 1
FIO_REGION=(--offset=32M --size=1M)        # phase 2: 256 writes of 4 KiB, each followed by fsync
mkdir -p "$WORK" "$PC"
mountpoint -q "$WORK" || mount -t tmpfs -o mode=0755 tmpfs "$WORK"
: > "$SVC_LOG"
declare -a NS_BLOCKS NS_BS NS_NGUID NS_UUID
declare -A DEV
T=nvmf4j TR=tcp ADDR=127.0.0.1 PORT=$NVMF4J_PORT NQN=nqn.2026-11.io.nvmf4j:powercut NS_IDS=1
NS_BLOCKS[1]=16384 NS_BS[1]=4096
NS_NGUID[1]=6e766d66346a0001b0000000000000c1 NS_UUID[1]=6e766d66-346a-4001-b000-0000000000c1

hdr "power cut, $MODE boot (tag $TAG)"
for m in virtio_blk ext4 nvme-tcp configfs nvmet nvmet-tcp; do modprobe $m || echo "modprobe $m failed"; done
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config   # for --fake-target
[ -s /etc/nvme/hostnqn ] || { mkdir -p /etc/nvme; nvme gen-hostnqn > /etc/nvme/hostnqn; }
wait_for 20 test -b "$DISK" || { fail "powercut/$MODE-disk" "no $DISK (virtio disk) in the guest"; exit 1; }
echo "$DISK: $(($(blockdev --getsize64 $DISK) >> 20)) MiB, write cache $(cat /sys/block/vda/queue/write_cache)"

# one 4 KiB record: tag, sequence number, how it was written; padded with spaces, newline at the end
record() { printf '%-4095s\n' "nvmf4j-powercut tag=$TAG seq=$1 how=$2"; }
# fsync=1 flushes after each write before the next one; end_fsync=1 after the last (without it the last
# write is acknowledged with nothing to make it durable, and a target that is right may lose it)
pc_fio() { # result-name dev [fio-args...] : the fio job of phase 2 (and, with --verify_only, its check)
  local name=$1 dev=$2; shift 2
  fio_json "$name" 300 --name=powercut-fsync --filename="$dev" --ioengine=psync --direct=1 --rw=write --bs=4k \
    "${FIO_REGION[@]}" --fsync=1 --end_fsync=1 --verify=crc32c --verify_state_save=0 "$@"
}

write_boot() {
  local dev seq rc
  C=powercut/write-mkfs OUTF=$RES/cli/mkfs.txt BAD=""
  { mkfs.ext4 -F "$DISK" && mount -t ext4 "$DISK" "$PC" && mkdir -p "$SVC_STATE"; } > "$OUTF" 2>&1; rc=$?
  cat > "$SVC_CONFIG" <<EOF
{"cores": 2, "idleStrategy": "${E2E_IDLE:-backoff}", "storage": {"fileDirectories": ["$PC"]},
 "tcp": {"inCapsuleDataSize": 8192, "maxQueueDepth": 128, "maxIoQueues": 8, "mdtsBytes": 131072,
         "maxH2cData": 131072, "c2hSuccess": true},
 "bdevs": [{"name": "pc0", "type": "file", "blockSize": ${NS_BS[1]}, "numBlocks": ${NS_BLOCKS[1]}, "path": "$PC/file0.img"}],
 "subsystems": [{"nqn": "$NQN", "serial": "NVMF4JPC0001", "model": "nvmf4j-powercut", "allowAnyHost": true,
   "maxNamespaces": 4,
   "namespaces": [{"nsid": 1, "bdev": "pc0", "nguid": "${NS_NGUID[1]}", "uuid": "${NS_UUID[1]}"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": $NVMF4J_PORT}]}]}
EOF
  cp "$SVC_CONFIG" "$RES/nvmf4j-config.json"
  sync
  verdict $rc "ext4 on $DISK mounted on $PC: config $SVC_CONFIG, state dir $SVC_STATE, image $PC/file0.img"
  [ $rc = 0 ] || return 1
  # the guest's page cache is written back after 30 s by default: the loss of what the target kept only
  # there would depend on how long the writes took under TCG. 10 minutes: all of it stays at risk
  # until a Flush or FUA makes the target write it (no effect on a target that does)
  echo 60000 > /proc/sys/vm/dirty_expire_centisecs
  svc_start powercut/write-start || return 1
  connect powercut/write-connect || return 1
  dev=${DEV[1]}
  echo "$dev: write cache $(cat "/sys/block/${dev#/dev/}/queue/write_cache"), fua $(cat "/sys/block/${dev#/dev/}/queue/fua" 2> /dev/null)"
  : > "$RES/acked.txt"

  hdr "phase 1: $PC_DSYNC records with dd oflag=direct,dsync"
  C=powercut/write-dsync OUTF=$RES/cli/write-dsync.txt BAD=""
  : > "$OUTF"
  for ((seq = 0; seq < PC_DSYNC; seq++)); do
    record $seq dsync > "$WORK/record"
    timeout 60 dd if="$WORK/record" of="$dev" bs=4096 seek=$seq count=1 oflag=direct,dsync conv=notrunc status=none >> "$OUTF" 2>&1 ||
      { BAD="record $seq not written: $(tail -n 1 "$OUTF")"; break; }
    echo "$seq dsync" >> "$RES/acked.txt"
  done
  verdict 0 "$seq records acknowledged"
  [ -z "$BAD" ] || return 1

  hdr "phase 2: fio, 4 KiB writes with fsync=1"
  pc_fio powercut-fsync "$dev"; rc=$?
  C=powercut/write-fio-fsync OUTF=$RES/fio-powercut-fsync.json BAD="" ERRF=$RES/fio-powercut-fsync.stderr
  expect errors "$(jq -r '.jobs[0].error' "$OUTF" 2> /dev/null)" 0
  [ $rc != 0 ] || [ -n "$BAD" ] || echo "fio done" > "$RES/fio-done"
  verdict $rc "$(jq -r '.jobs[0].write | "\(.total_ios) writes of 4 KiB, each followed by fsync"' "$OUTF" 2> /dev/null)"

  hdr "phase 3: records with nvme write --force-unit-access until the power cut"
  echo "fua phase started" > "$RES/fua-started"
  for ((seq = PC_DSYNC; seq < NS_BLOCKS[1] / 2; seq++)); do
    record $seq fua > "$WORK/record"
    timeout 60 nvme write "$dev" --start-block=$seq --block-count=0 --data-size=4096 --data="$WORK/record" \
      --force-unit-access > "$RES/cli/write-fua.txt" 2>&1 || { fail powercut/write-fua "record $seq: $(tail -n 1 "$RES/cli/write-fua.txt")"; return 1; }
    echo "$seq fua" >> "$RES/acked.txt"
  done
  fail powercut/write-fua "all $seq records written and no power cut came"
}

verify_boot() {
  local dev rc n found=0 lost=0 lostlist="" nd=0 nf=0 ld=0 lf=0 zero=0
  C=powercut/verify-mount OUTF=$RES/cli/mount.txt BAD=""
  timeout 120 mount -t ext4 "$DISK" "$PC" > "$OUTF" 2>&1; rc=$?
  dmesg | grep -E 'EXT4-fs \(vda\)' | tail -n 4 | tee -a "$OUTF"
  verdict $rc "$DISK mounted on $PC after the cut: $(dmesg | grep -E 'EXT4-fs \(vda\)' | tail -n 1 | sed 's/^\[[^]]*\] //')"
  [ $rc = 0 ] || return 1
  echo "image: $(alloc_text "$PC/file0.img")"
  svc_start powercut/verify-start || return 1
  connect powercut/verify-connect || return 1
  dev=${DEV[1]}

  hdr "every acknowledged record read back"
  C=powercut/acked-found OUTF=$RES/cli/acked-found.txt BAD=""
  grep -E '^[0-9]+ (dsync|fua)$' "$RES/acked.txt" > "$WORK/acked.txt"   # whole lines only
  n=$(wc -l < "$WORK/acked.txt")
  timeout 120 dd if="$dev" of="$WORK/records.bin" bs=4096 count=$((NS_BLOCKS[1] / 2)) iflag=direct status=none > "$OUTF" 2>&1; rc=$?
  # one line per 4 KiB block (NULs and newlines made spaces, trailing spaces dropped): line seq + 1
  # holds record seq; one awk for all of them (a few processes per record take minutes under TCG)
  tr '\0\n' '  ' < "$WORK/records.bin" | dd cbs=4096 conv=unblock status=none > "$WORK/records.txt"
  read -r nd nf found ld lf zero lostlist < <(awk -v tag="$TAG" '
    NR == FNR { blk[NR - 1] = $0; next }
    { want = "nvmf4j-powercut tag=" tag " seq=" $1 " how=" $2; got = blk[$1]
      if ($2 == "dsync") nd++; else nf++
      if (got == want) { found++; next }
      if ($2 == "dsync") ld++; else lf++
      if (got == "") zero++
      print "lost: seq " $1 " (" $2 "): found [" (got == "" ? "zeros" : substr(got, 1, 80)) "]" > "/dev/stderr"
      if (++lost <= 8) list = list " " $1 }
    END { printf "%d %d %d %d %d %d%s\n", nd, nf, found, ld, lf, zero, list }' "$WORK/records.txt" "$WORK/acked.txt" 2>> "$OUTF")
  lost=$((n - found))
  echo "acknowledged $n, found $found, lost $lost" | tee -a "$OUTF"
  metric powercut_acknowledged "$n"; metric powercut_found "$found"; metric powercut_lost "$lost"
  local detail="acknowledged $n, found $found, lost $lost (dsync: $nd acked, $ld lost; fua: $nf acked, $lf lost; $zero of the lost read as zeros)${lostlist:+; first lost: $lostlist}"
  [ "$lost" = 0 ] || BAD=$detail
  expect_true acknowledged "only $n records acknowledged before the cut (want >= 100)" [ "$n" -ge 100 ]
  verdict $rc "$detail"

  hdr "fio's fsync=1 region, verify_only"
  C=powercut/fio-fsync-verify
  if [ -f "$RES/fio-done" ]; then
    pc_fio powercut-verify "$dev" --verify_only; rc=$?
    OUTF=$RES/fio-powercut-verify.json BAD="" ERRF=$RES/fio-powercut-verify.stderr
    expect errors "$(jq -r '.jobs[0].error' "$OUTF" 2> /dev/null)" 0
    verdict $rc "$(jq -r '.jobs[0].read.io_bytes' "$OUTF" 2> /dev/null) bytes written before the cut with fsync=1 read back, crc32c verified"
  else
    fail "$C" "fio of the first boot did not finish before the cut"
  fi

  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
  svc_stop powercut/verify-stop
  C=powercut/disk-fsck OUTF=$RES/cli/fsck.txt BAD=""
  timeout 60 umount "$PC" > "$OUTF" 2>&1 || BAD="umount failed"
  timeout 300 fsck.ext4 -fn "$DISK" >> "$OUTF" 2>&1; rc=$?
  verdict $rc "ext4 holding the image clean after the cut and the replay: $(tail -n 1 "$OUTF")"
}

case $MODE in
  write) write_boot ;;
  verify) verify_boot ;;
  *) fail "powercut/$MODE" "unknown E2E_PC_MODE" ;;
esac
# the write boot gets here only when something failed before the cut (see results.tsv)
dmesg > "$RES/dmesg.txt"
echo; echo "===== $FAILS failed check(s)"
exit $FAILS

# Volumes under the Linux host (run.sh --only tcp,volumes; part of the default suite), sourced by suite.sh and
# run inside the nvmf4j TCP scenarios: the service (java engine) is running and host A (the guest's default host
# NQN) is connected to $NQN. A reflink-dir pool on an XFS (reflink=1) file system made on a loop device in the
# guest's tmpfs, then:
#   nvmf4j/volumes/pool             a pool on the XFS directory (REST API, as every call here: curl)
#   nvmf4j/volumes/export           a thin 256 MiB volume exported as nsid 10; host A sees it
#   nvmf4j/volumes/ext4             ext4 on it, files written and synced before the snapshot (their sha256 kept)
#   nvmf4j/volumes/snapshot-under-load  a snapshot while fio writes into the file system (the writes held for
#                                   the pause the service reports; fio finishes without an error)
#   nvmf4j/volumes/clone-export     the snapshot cloned and exported as nsid 11 masked to host B alone: host A
#                                   does not see it; the clone allocates (almost) nothing
#   nvmf4j/volumes/clone-second-host  host B (a second host NQN, through a second listener of the subsystem)
#                                   connects and mounts the clone (ext4 replays its
#                                   journal: the snapshot is crash-consistent), the files written before the
#                                   snapshot are there with their sha256, the one written after is not, and
#                                   fsck.ext4 -fn is clean after the unmount
#   nvmf4j/volumes/group-snapshot   two raw volumes, a writer that writes sequence number i to the first and
#                                   then to the second (O_DIRECT, O_DSYNC, each acknowledged before the next);
#                                   a group snapshot of both while it runs; their clones read back a and b with
#                                   b <= a <= b + 1 (one instant for both; two separate snapshots could hold b > a)
#   nvmf4j/volumes/live-grow        the mounted volume grown to 384 MiB through the API: the host sees the new
#                                   NSZE (nvme id-ns) and block device size without reconnecting; resize2fs
#                                   grows the mounted ext4
#   nvmf4j/volumes/cleanup          namespaces removed, clones, snapshots, volumes and the pool deleted in order
VOL_HOSTID=6e766d66-346a-4a75-8000-0000000000c1
VOL_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$VOL_HOSTID
VOL_POOL=e2epool VOL_PORT_B=""

vol_api() { # METHOD PATH [JSON] : the service's REST API with curl (a JVM start of nvmfctl takes half a minute under
  # TCG, and these are two dozen calls); the answer and its status go to stdout, true on a 2xx
  local out
  out=$(curl -sS -m 300 -X "$1" -H "Authorization: Bearer $(cat "${SVC_STATE:-$WORK/state}/api-token")" \
    ${3:+-H 'Content-Type: application/json' -d "$3"} -w '\nHTTP %{http_code}' \
    "http://127.0.0.1:$(svc_api_port "${SVC_CONFIG:-$WORK/config.json}")/api/v1$2" 2>&1)
  printf '%s %s\n%s\n' "$1" "$2" "$out"
  [[ $out == *$'\n'"HTTP 2"?? ]]
}
NQN_PATH() { echo "${NQN//:/%3A}"; }
vol_dev() { # nsid : the block device of that nsid of $NQN, or nothing
  local n d
  while read -r n d; do [ "$n" = "$1" ] && { echo "$d"; return 0; }; done < <(nvme_ns_devs "$NQN")
  return 1
}
vol_ctrl_b() { ctrl_of_host "$NQN" "$VOL_HOSTNQN"; } # host B's controller of $NQN (nvmeX), or nothing
vol_a_nsids() { # the nsids host A's controller ($CTRL) has a path or block device for, space-separated (the
  # names' nY is the kernel's namespace head number, not the nsid: each one's nsid attribute says)
  local f
  for f in /sys/class/nvme/"$CTRL"/nvme*n*; do [ -r "$f/nsid" ] && printf '%s ' "$(cat "$f/nsid")"; done
}
vol_bytes() { local d; d=$(vol_dev "$1") || return 1; echo $(( $(cat "/sys/block/${d#/dev/}/size") * 512 )); }
vol_size_is() { [ "$(vol_bytes "$1" 2> /dev/null)" = "$2" ]; }
vol_seq() { # dev : the sequence number in the first 4 KiB block of a raw volume (O_DIRECT read)
  dd if="$1" bs=4096 count=1 iflag=direct 2> /dev/null | tr -d '\0' | awk 'NR == 1 {print $1 + 0; exit}'
}
vol_writer() { # devA devB countfile : writes i to devA, then to devB, each acknowledged, until killed
  local i=0 blk
  while :; do
    i=$((i + 1))
    blk=$(printf '%-4095s\n' "$i")
    printf '%s' "$blk" | dd of="$1" bs=4096 count=1 oflag=direct,dsync conv=notrunc status=none || return 1
    printf '%s' "$blk" | dd of="$2" bs=4096 count=1 oflag=direct,dsync conv=notrunc status=none || return 1
    echo "$i" > "$3.new" && mv -f "$3.new" "$3"
  done
}
vol_count() { local c; c=$(cat "$WORK/vol-writer.count" 2> /dev/null); echo "${c:-0}"; }
vol_count_above() { [ "$(vol_count)" -gt "$1" ]; }

volume_checks() {
  hdr "nvmf4j volumes: a reflink pool on XFS; ext4, a snapshot under load, its clone on a second host, a group snapshot, a live grow"
  local img=$WORK/vol-xfs.img xfs=$WORK/volxfs mnt=$WORK/mnt-vol cmnt=$WORK/mnt-clone loopdev="" held rc fpid wpid
  local sums="" n0 n1 a b dev t
  C=nvmf4j/volumes/pool OUTF=$RES/cli/volumes-pool.txt BAD=""
  { modprobe loop; modprobe xfs; } > "$OUTF" 2>&1
  truncate -s 1G "$img" && loopdev=$(losetup --find --show "$img") && mkfs.xfs -q -m reflink=1 "$loopdev" >> "$OUTF" 2>&1 &&
    mkdir -p "$xfs" && mount "$loopdev" "$xfs" && mkdir -p "$xfs/p1" || BAD="XFS (reflink=1) on a loop device: failed"
  if [ -z "$BAD" ]; then
    vol_api POST /pools "{\"name\": \"$VOL_POOL\", \"kind\": \"reflink-dir\", \"path\": \"$xfs/p1\"}" >> "$OUTF" ||
      BAD="POST /pools failed"
    vol_api GET "/pools/$VOL_POOL" > "$RES/cli/volumes-pool.json" || BAD+="${BAD:+; }GET /pools/$VOL_POOL failed"
  fi
  verdict 0 "pool $VOL_POOL on XFS reflink=1 ($loopdev, 1 GiB): $(sed '1d;$d' "$RES/cli/volumes-pool.json" | jq -c '{kind, size, used, free}' 2> /dev/null)"
  if [ -n "$BAD" ]; then vol_cleanup "$loopdev" "$xfs"; return 0; fi

  C=nvmf4j/volumes/export OUTF=$RES/cli/volumes-export.txt BAD=""
  { vol_api POST "/pools/$VOL_POOL/volumes" "{\"name\": \"v1\", \"size\": $((256 << 20))}" &&
    vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 10, \"bdev\": \"$VOL_POOL/v1\"}"; } > "$OUTF" ||
    BAD="POST volume / namespace failed"
  [ -n "$BAD" ] || wait_for 60 vol_size_is 10 $((256 << 20)) || BAD="host A has no 256 MiB block device for nsid 10 within 60 s"
  dev=$(vol_dev 10)
  verdict 0 "thin volume v1 (256 MiB) as nsid 10: ${dev:-none} on host A"
  [ -z "$BAD" ] || { vol_cleanup "$loopdev" "$xfs"; return 0; }

  C=nvmf4j/volumes/ext4 OUTF=$RES/cli/volumes-ext4.txt BAD=""
  mkdir -p "$mnt" "$cmnt"
  if mkfs.ext4 -q -F "$dev" > "$OUTF" 2>&1 && mount "$dev" "$mnt" >> "$OUTF" 2>&1; then
    for n0 in 1 2 3 4; do head -c $((2 << 20)) /dev/urandom > "$mnt/before$n0.bin"; done
    sync -f "$mnt"
    sums=$(cd "$mnt" && sha256sum before*.bin)
    echo "$sums" >> "$OUTF"
  else
    BAD="mkfs.ext4 or mount of $dev failed"
  fi
  verdict 0 "ext4 on $dev mounted; 4 files of 2 MiB written and synced before the snapshot"
  [ -z "$BAD" ] || { vol_cleanup "$loopdev" "$xfs" "$mnt"; return 0; }

  C=nvmf4j/volumes/snapshot-under-load OUTF=$RES/cli/volumes-snapshot.txt BAD=""
  # fio writes until it is stopped (SIGINT: it ends its I/O and writes its report), so the snapshot falls inside
  # its run however slow the guest is; its report must show writes and no error
  fio --name=vol-load --filename="$mnt/load.bin" --size=32M --rw=randwrite --bs=4k --iodepth=16 \
    --ioengine=libaio --direct=1 --time_based --runtime=3600 --output-format=json --output="$RES/fio-volumes-load.json" \
    > "$RES/cli/volumes-fio.txt" 2>&1 &
  fpid=$!
  # the snapshot is taken once fio's writes flow (its file exists and grows), not after a fixed wait
  wait_for 120 test -s "$mnt/load.bin" || BAD="fio made no file within 120 s"
  t=$(now_us)
  vol_api POST "/pools/$VOL_POOL/volumes/v1/snapshots" '{"name": "s1"}' > "$OUTF" || BAD+="${BAD:+; }POST snapshot failed"
  held=$(grep -o '"pauseNanos" *: *[0-9]*' "$OUTF" | grep -o '[0-9]*$')
  held=${held:+writes held for $((held / 1000)) us}
  gone "$fpid" && BAD+="${BAD:+; }fio had ended before the snapshot was taken: not under load"
  head -c $((1 << 20)) /dev/urandom > "$mnt/after.bin"; sync -f "$mnt"
  kill -INT "$fpid" 2> /dev/null
  wait "$fpid"
  # the report follows fio's "terminating on signal 2" line
  sed -i -n '/^{/,$p' "$RES/fio-volumes-load.json"
  n0=$(jq -r '.jobs[0].write.io_bytes // 0' "$RES/fio-volumes-load.json" 2> /dev/null)
  n1=$(jq -r '.jobs[0].error // "none"' "$RES/fio-volumes-load.json" 2> /dev/null)
  [ "${n0:-0}" -gt 0 ] || BAD+="${BAD:+; }fio's report shows no writes"
  [ "$n1" = 0 ] || BAD+="${BAD:+; }fio's report: error $n1"
  [ -n "$held" ] || BAD+="${BAD:+; }the service reported no pause"
  verdict 0 "snapshot v1@s1 in $(secs_since "$t") s while fio wrote ($((${n0:-0} >> 20)) MiB written by fio, $(jq -r '.jobs[0].write.iops | floor' "$RES/fio-volumes-load.json" 2> /dev/null) IOPS, error $n1); $held"

  C=nvmf4j/volumes/clone-export OUTF=$RES/cli/volumes-clone.txt BAD=""
  { vol_api POST "/pools/$VOL_POOL/volumes/v1/snapshots/s1/clone" '{"name": "v1c"}' &&
    vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 11, \"bdev\": \"$VOL_POOL/v1c\", \"hosts\": [\"$VOL_HOSTNQN\"]}"; } \
    > "$OUTF" || BAD="POST clone / namespace with hosts failed"
  vol_api GET "/pools/$VOL_POOL/volumes/v1c" > "$RES/cli/volumes-clone.json"
  # (that host A does not see it is checked below, once A has taken a later change in: see group-snapshot)
  verdict 0 "clone v1c of v1@s1 as nsid 11 masked to host B: $(sed '1d;$d' "$RES/cli/volumes-clone.json" | jq -c '{origin, allocatedBytes}' 2> /dev/null) (allocated counts the blocks it shares with v1@s1)"

  C=nvmf4j/volumes/clone-second-host OUTF=$RES/cli/volumes-clone-host-b.txt BAD=""
  # host B comes through a second listener of the subsystem: nvme-cli takes a second controller from this machine
  # to the port A uses for a duplicate ("already connected"), whatever host NQN it names
  VOL_PORT_B=$((PORT + 17))
  if ! vol_api POST "/subsystems/$(NQN_PATH)/listeners" \
      "{\"transport\": \"tcp\", \"address\": \"127.0.0.1\", \"port\": $VOL_PORT_B}" > "$OUTF"; then
    BAD="a second listener (tcp 127.0.0.1:$VOL_PORT_B) could not be added"
  elif nvme connect -t tcp -a "$ADDR" -s "$VOL_PORT_B" -n "$NQN" --hostnqn="$VOL_HOSTNQN" --hostid="$VOL_HOSTID" \
      "${CONNECT_OPTS[@]}" >> "$OUTF" 2>&1 && wait_for 60 vol_size_is 11 $((256 << 20)); then
    dev=$(vol_dev 11)
    if mount "$dev" "$cmnt" >> "$OUTF" 2>&1; then
      [ "$(cd "$cmnt" && sha256sum before*.bin)" = "$sums" ] || BAD="the clone's files differ from those written before the snapshot"
      [ ! -e "$cmnt/after.bin" ] || BAD+="${BAD:+; }the clone holds after.bin, written after the snapshot"
      umount "$cmnt"
      fsck.ext4 -fn "$dev" >> "$OUTF" 2>&1 || BAD+="${BAD:+; }fsck.ext4 -fn of the clone: exit $?"
    else
      BAD="host B could not mount the clone $dev"
    fi
  else
    BAD="host B ($VOL_HOSTNQN) found no 256 MiB nsid 11 within 60 s: $(tail -n 1 "$OUTF")"
  fi
  verdict 0 "host B mounted the clone ${dev:-?}: 4 files as of the snapshot, after.bin absent, fsck -fn clean ($(grep -m1 -o '[0-9]*/[0-9]* files' "$OUTF"))"

  C=nvmf4j/volumes/group-snapshot OUTF=$RES/cli/volumes-group.txt BAD=""
  { vol_api POST "/pools/$VOL_POOL/volumes" "{\"name\": \"ga\", \"size\": $((16 << 20))}" &&
    vol_api POST "/pools/$VOL_POOL/volumes" "{\"name\": \"gb\", \"size\": $((16 << 20))}" &&
    vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 12, \"bdev\": \"$VOL_POOL/ga\"}" &&
    vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 13, \"bdev\": \"$VOL_POOL/gb\"}"; } > "$OUTF" ||
    BAD="POST volumes / namespaces failed"
  if [ -z "$BAD" ] && wait_for 60 vol_size_is 12 $((16 << 20)) && wait_for 60 vol_size_is 13 $((16 << 20)); then
    # host A has rescanned after nsid 11 was added (12 and 13 came later): 11, masked to host B, is not in its view
    wait_for 60 eval '[[ " $(vol_a_nsids)" == *" 13 "* ]]' || BAD="host A's controller $CTRL has no path for nsid 13"
    [[ " $(vol_a_nsids)" == *" 11 "* ]] && BAD+="${BAD:+; }host A sees nsid 11, masked to $VOL_HOSTNQN"
    vol_writer "$(vol_dev 12)" "$(vol_dev 13)" "$WORK/vol-writer.count" &
    wpid=$!
    wait_for 60 vol_count_above 0 || BAD="the writer wrote nothing within 60 s"
    n0=$(vol_count)
    vol_api POST "/pools/$VOL_POOL/group-snapshots" '{"name": "g1", "volumes": ["ga", "gb"]}' >> "$OUTF" ||
      BAD+="${BAD:+; }POST group snapshot failed"
    n1=$(vol_count)
    # the writer goes on after the snapshot: it was running through it
    wait_for 60 vol_count_above "$n1" || BAD+="${BAD:+; }the writer stopped"
    kill "$wpid" 2> /dev/null; wait "$wpid" 2> /dev/null
    { vol_api POST "/pools/$VOL_POOL/volumes/ga/snapshots/g1/clone" '{"name": "gac"}' &&
      vol_api POST "/pools/$VOL_POOL/volumes/gb/snapshots/g1/clone" '{"name": "gbc"}' &&
      vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 14, \"bdev\": \"$VOL_POOL/gac\"}" &&
      vol_api POST "/subsystems/$(NQN_PATH)/namespaces" "{\"nsid\": 15, \"bdev\": \"$VOL_POOL/gbc\"}"; } >> "$OUTF" ||
      BAD+="${BAD:+; }clones of the group snapshot failed"
    if wait_for 60 vol_size_is 14 $((16 << 20)) && wait_for 60 vol_size_is 15 $((16 << 20)); then
      a=$(vol_seq "$(vol_dev 14)") b=$(vol_seq "$(vol_dev 15)")
      [ "${a:-0}" -gt 0 ] || BAD+="${BAD:+; }the first volume's clone holds no sequence number"
      [ "${b:-0}" -le "${a:-0}" ] && [ "${a:-0}" -le $(( ${b:-0} + 1 )) ] ||
        BAD+="${BAD:+; }not one instant: the first volume's snapshot holds $a, the second's $b (want b <= a <= b + 1)"
    else
      BAD+="${BAD:+; }the clones gac, gbc did not appear as nsid 14, 15 within 60 s"
    fi
  else
    BAD+="${BAD:+; }ga, gb did not appear as nsid 12, 13 within 60 s"
  fi
  verdict 0 "host A's view: nsids $(vol_a_nsids)(not 11); group snapshot g1 of ga, gb while the writer was at $n0..$n1: clones hold a=$a, b=$b; pause $(grep -m1 -o '"pauseNanos" *: *[0-9]*' "$OUTF" | grep -o '[0-9]*$') ns"

  C=nvmf4j/volumes/live-grow OUTF=$RES/cli/volumes-grow.txt BAD=""
  t=$(now_us)
  vol_api PATCH "/pools/$VOL_POOL/volumes/v1" "{\"size\": $((384 << 20))}" > "$OUTF" || BAD="PATCH volume size failed"
  wait_for 60 vol_size_is 10 $((384 << 20)) || BAD+="${BAD:+; }host A's block device of nsid 10 is $(vol_bytes 10) bytes 60 s after the grow"
  dev=$(vol_dev 10)
  nvme id-ns "$dev" -o json >> "$OUTF" 2>&1
  expect NSZE "$(jq -r '.nsze' < <(nvme id-ns "$dev" -o json 2> /dev/null))" $(((384 << 20) / 512))
  resize2fs "$dev" >> "$OUTF" 2>&1 || BAD+="${BAD:+; }resize2fs of the mounted ext4 failed"
  verdict 0 "v1 grown to 384 MiB live: $dev $(vol_bytes 10) bytes, NSZE $(jq -r '.nsze' < <(nvme id-ns "$dev" -o json 2> /dev/null)) after $(secs_since "$t") s; ext4 $(df -B1M --output=size "$mnt" | tail -n 1 | tr -d ' ') MiB"

  vol_cleanup "$loopdev" "$xfs" "$mnt" full
}

vol_cleanup() { # loopdev xfs-mount [ext4-mount] [full] : what volume_checks made, in the order the pool allows
  local ns v s
  C=nvmf4j/volumes/cleanup OUTF=$RES/cli/volumes-cleanup.txt BAD=""
  [ -z "${3:-}" ] || ! mountpoint -q "$3" || umount "$3" || BAD="umount $3 failed"
  local b; b=$(vol_ctrl_b) && { timeout 60 nvme disconnect -d "$b" >> "$OUTF" 2>&1 || BAD="nvme disconnect -d $b failed"; }
  for ns in 15 14 13 12 11 10; do vol_api DELETE "/subsystems/$(NQN_PATH)/namespaces/$ns" >> "$OUTF"; done
  for v in gbc gac v1c; do vol_api DELETE "/pools/$VOL_POOL/volumes/$v" >> "$OUTF"; done
  for s in ga/snapshots/g1 gb/snapshots/g1 v1/snapshots/s1 ga gb v1; do vol_api DELETE "/pools/$VOL_POOL/volumes/$s" >> "$OUTF"; done
  vol_api DELETE "/pools/$VOL_POOL" >> "$OUTF"
  [ -z "${VOL_PORT_B:-}" ] || vol_api DELETE "/subsystems/$(NQN_PATH)/listeners/tcp/127.0.0.1/$VOL_PORT_B" >> "$OUTF" ||
    BAD+="${BAD:+; }the second listener could not be removed"
  if [ "${4:-}" = full ]; then
    vol_api GET "/pools/$VOL_POOL" >> "$OUTF" && BAD+="${BAD:+; }pool $VOL_POOL still there"
  fi
  ! mountpoint -q "$2" || umount "$2" || BAD+="${BAD:+; }umount $2 failed"
  [ -z "$1" ] || losetup -d "$1" || BAD+="${BAD:+; }losetup -d $1 failed"
  rm -f "$WORK/vol-xfs.img"
  verdict 0 "namespaces 10-15 removed, clones, snapshots, volumes and pool $VOL_POOL deleted, XFS unmounted"
}

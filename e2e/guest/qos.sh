# QoS limits under the Linux host (run.sh --only tcp,spdk,qos; part of the default suite), sourced by suite.sh and
# run in the nvmf4j TCP scenarios (java engine) and the spdk engine's TCP scenario: the service is running and the
# host is connected to $NQN. One namespace is held (reads only: fio randread, so no data changes); every limit is
# set and removed through the REST API with curl (vol_api of guest/volumes.sh: a JVM start of nvmfctl takes half a
# minute under TCG). Every fio job is pinned to the guest's last vCPU, so it goes down the host's one I/O queue
# of that CPU: one NVMe/TCP connection, and so one poll group of the java engine (the spdk engine has one reactor).
#   <T>/tcp/qos/unlimited   no limit on the namespace (GET .../qos answers {}); 4 KiB randread QD 32 and 64 KiB
#                           randread QD 16, QOS_PROBE s each: the rates the host reaches without a limit. A limit
#                           the host cannot exceed by 1.5x shows nothing: its case is skipped with the figure
#   <T>/tcp/qos/iops        PUT {"iops": L}: 4 KiB randread QD 32 for QOS_RUNTIME s after QOS_RAMP s not
#                           counted; the IOPS fio measures are within 1 +- QOS_TOL of L
#   <T>/tcp/qos/read-mbps   PUT {"readMBps": M} (it replaces the IOPS limit): 64 KiB randread QD 16, the MB/s
#                           (2^20 bytes) fio measures within 1 +- QOS_TOL of M
#   <T>/tcp/qos/neighbour   with that MB/s limit, the same 64 KiB job on the held namespace and on an unlimited one
#                           of the same subsystem at once (one host queue, one poll group): the held one within
#                           1 +- QOS_TOL of M, the neighbour at least QOS_NEIGHBOUR x M. (That it keeps exactly its
#                           rate alone is what fio-jobs/qos.sh checks on this machine; under TCG one run's spread is
#                           too wide.) A MB/s limit, not the IOPS one: the guest's vCPU, not the target, bounded
#                           the spdk engine's least IOPS limit (1000) beside a neighbour
#   <T>/tcp/qos/host        java engine: this host's limit on the subsystem (PUT .../qos/hosts/<hostnqn>,
#                           {"readMBps": M}), one budget over all its namespaces: the same 64 KiB job on the
#                           held namespace and the neighbour at once, the two together within 1 +- QOS_TOL of M;
#                           the limit deleted after
#   <T>/tcp/qos/group       java engine: a QoS group (a tenant, POST /qos-groups) of the held namespace and the
#                           neighbour with {"readMBps": M}: the same two jobs, together within 1 +- QOS_TOL of M;
#                           the group deleted after (the spdk engine has no per-host or group QoS: SPDK's bdev QoS
#                           is per bdev, and the API refuses both with 400, Maven's QosApiTest)
#   <T>/tcp/qos/removed     DELETE .../qos: GET answers {} again, and the job of the last limit set runs at least
#                           QOS_FREE x that limit for QOS_PROBE s
# Limits: the java engine takes any value (iops 200); the spdk engine's bdev QoS IOPS in multiples of 1000, so
# 1000, its least; both 4 MB/s. The host does a few thousand 4 KiB IOPS under TCG: these are checks, not benchmarks.
QOS_TOL=0.05 QOS_RUNTIME=10 QOS_RAMP=2 QOS_PROBE=5 QOS_NEIGHBOUR=2 QOS_FREE=1.2 QOS_MBPS=4
QOS_CPU=$(($(nproc) - 1))
QOS_NS="" QOS_IOPS="" QOS_LAST=""   # QOS_LAST: the unit (iops|mbps) of the last limit set, empty when none

qos_path() { echo "/subsystems/$(NQN_PATH)/namespaces/$QOS_NS/qos"; }
qos_api() { # METHOD [JSON] : the held namespace's QoS through the REST API, the answer into $OUTF; true on a 2xx
  vol_api "$1" "$(qos_path)" "${2:-}" >> "$OUTF"
}
qos_now() { # the held namespace's QoS as GET answers it, compact JSON; the answer into $OUTF too
  local out
  out=$(vol_api GET "$(qos_path)")
  echo "$out" >> "$OUTF"
  sed '1d;$d' <<< "$out" | jq -c . 2> /dev/null
}
qos_job() { # name bs qd seconds ramp dev [neighbour-dev] : fio randread, job "held" on dev and job "free" on the
  # neighbour at once, both pinned to vCPU $QOS_CPU; its JSON in $RES/fio-<name>.json; BAD names a failed run
  local name=$1 rc
  local args=(--ioengine=libaio --direct=1 --rw=randread --bs="$2" --iodepth="$3" --norandommap --time_based
    --runtime="$4" --ramp_time="$5" --cpus_allowed="$QOS_CPU" --name=held --filename="$6")
  [ -z "${7:-}" ] || args+=(--name=free --filename="$7")
  fio_json "$name" $(($4 + $5 + 180)) "${args[@]}"; rc=$?
  [ $rc = 0 ] || BAD+="${BAD:+; }fio $name: rc=$rc $(tail -n 2 "$RES/fio-$name.stderr" | tr '\n' ' ')"
  return $rc
}
qos_rate() { # name job iops|mbps : that job's read rate in fio's JSON (MB/s of 2^20 bytes), 2 decimals; 0 when none
  local r
  r=$(jq -r --arg j "$2" --arg u "$3" 'first(.jobs[] | select(.jobname == $j) | .read
      | if $u == "iops" then .iops else .bw_bytes / 1048576 end) // 0' "$RES/fio-$1.json" 2> /dev/null)
  awk -v r="${r:-0}" 'BEGIN {printf "%.2f", r + 0}'
}
qos_ratio() { awk -v m="$1" -v l="$2" 'BEGIN {printf "%.3f", (l > 0 ? m / l : 0)}'; }   # measured limit
qos_within() { awk -v r="$1" -v t="$QOS_TOL" 'BEGIN {exit !(r >= 1 - t && r <= 1 + t)}'; }   # ratio
qos_ge() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a + 0 >= b + 0)}'; }   # a b : a >= b
qos_times() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a * b}'; }
qos_unit() { if [ "$1" = iops ]; then echo IOPS; else echo MB/s; fi; }

qos_held() { # check-name iops|mbps limit body bs qd : the limit set, then fio on the held namespace; PASS when the
  # rate measured is within 1 +- QOS_TOL of the limit
  local c=$1 u=$2 lim=$3 body=$4 bs=$5 qd=$6 f m r
  f=qos-$T-$TR-$u
  C=$c OUTF=$RES/cli/${c//\//_}.txt BAD=""
  : > "$OUTF"
  if qos_api PUT "$body"; then
    QOS_LAST=$u
    qos_job "$f" "$bs" "$qd" "$QOS_RUNTIME" "$QOS_RAMP" "${DEV[$QOS_NS]}"
  else
    BAD="PUT $(qos_path) $body failed: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  fi
  m=$(qos_rate "$f" held "$u") r=$(qos_ratio "$m" "$lim")
  metric "${c//[\/-]/_}_measured" "$m" "$(qos_unit "$u")"
  metric "${c//[\/-]/_}_ratio" "$r" ratio
  [ -n "$BAD" ] || qos_within "$r" || BAD="limit $lim, measured $m, ratio $r: outside 1 +- $QOS_TOL"
  verdict 0 "$body, $bs randread QD $qd, ${QOS_RUNTIME} s: limit $lim, measured $m, ratio $r (1 +- $QOS_TOL wanted)"
}

qos_neighbour() { # check-name neighbour-nsid : the read MB/s limit on the held namespace; fio on it and on the
  # unlimited neighbour at once, on one host queue; PASS when the held one holds the limit and the neighbour does
  # QOS_NEIGHBOUR x it. A MB/s limit of 64 KiB reads (64 I/Os a second at 4 MB/s) leaves the host's one vCPU to the
  # neighbour: with the spdk engine's least IOPS limit (1000 4 KiB reads) beside a neighbour, the guest's vCPU was
  # the bound (held 868 IOPS, neighbour 1473: 2341 together where one job alone did 4372), not the target
  local c=$1 nb=$2 f=qos-$T-$TR-neighbour m r fr k
  C=$c OUTF=$RES/cli/${c//\//_}.txt BAD=""
  : > "$OUTF"
  if qos_api PUT "{\"readMBps\": $QOS_MBPS}"; then
    QOS_LAST=mbps
    qos_job "$f" 64k 16 "$QOS_RUNTIME" "$QOS_RAMP" "${DEV[$QOS_NS]}" "${DEV[$nb]}"
  else
    BAD="PUT $(qos_path) failed: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  fi
  m=$(qos_rate "$f" held mbps) fr=$(qos_rate "$f" free mbps)
  r=$(qos_ratio "$m" "$QOS_MBPS") k=$(qos_ratio "$fr" "$QOS_MBPS")
  metric "${c//[\/-]/_}_held_ratio" "$r" ratio
  metric "${c//[\/-]/_}_free_mbps" "$fr" MB/s
  if [ -z "$BAD" ]; then
    qos_within "$r" || BAD="held nsid $QOS_NS: limit $QOS_MBPS MB/s, measured $m, ratio $r: outside 1 +- $QOS_TOL"
    qos_ge "$k" "$QOS_NEIGHBOUR" ||
      BAD+="${BAD:+; }unlimited nsid $nb: $fr MB/s, $k x the limit (at least $QOS_NEIGHBOUR x wanted)"
  fi
  verdict 0 "both at once on one host queue, 64k randread QD 16, ${QOS_RUNTIME} s: held nsid $QOS_NS limit $QOS_MBPS MB/s, measured $m, ratio $r; unlimited nsid $nb $fr MB/s = $k x the limit (at least $QOS_NEIGHBOUR x wanted)"
}

qos_shared() { # check-name neighbour-nsid host|group : one read MB/s budget over the held namespace and the
  # neighbour (this host's on the subsystem, or a group of the two), both read at once on one host queue; PASS when
  # the two together are within 1 +- QOS_TOL of the limit; the limit (or group) removed after
  local c=$1 nb=$2 what=$3 f=qos-$T-$TR-$3 h m1 m2 m r set del
  C=$c OUTF=$RES/cli/${c//\//_}.txt BAD=""
  : > "$OUTF"
  h=$(cat "/sys/class/nvme/$CTRL/hostnqn" 2> /dev/null)
  if [ "$what" = host ]; then
    set=(PUT "/subsystems/$(NQN_PATH)/qos/hosts/${h//:/%3A}" "{\"readMBps\": $QOS_MBPS}")
    del=(DELETE "/subsystems/$(NQN_PATH)/qos/hosts/${h//:/%3A}")
  else
    set=(POST /qos-groups "{\"name\": \"e2e-tenant\", \"namespaces\": [{\"nqn\": \"$NQN\", \"nsid\": $QOS_NS}, {\"nqn\": \"$NQN\", \"nsid\": $nb}], \"limits\": {\"readMBps\": $QOS_MBPS}}")
    del=(DELETE /qos-groups/e2e-tenant)
  fi
  if [ -z "$h" ]; then
    BAD="no host NQN for controller ${CTRL:-?}"
  elif vol_api "${set[@]}" >> "$OUTF"; then
    qos_job "$f" 64k 16 "$QOS_RUNTIME" "$QOS_RAMP" "${DEV[$QOS_NS]}" "${DEV[$nb]}"
    vol_api "${del[@]}" >> "$OUTF" || BAD+="${BAD:+; }${del[*]} failed: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  else
    BAD="${set[0]} ${set[1]} ${set[2]} failed: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  fi
  m1=$(qos_rate "$f" held mbps) m2=$(qos_rate "$f" free mbps)
  m=$(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%.2f", a + b}') r=$(qos_ratio "$m" "$QOS_MBPS")
  metric "${c//[\/-]/_}_measured" "$m" MB/s
  metric "${c//[\/-]/_}_ratio" "$r" ratio
  [ -n "$BAD" ] || qos_within "$r" || BAD="limit $QOS_MBPS MB/s over nsid $QOS_NS and $nb, measured $m1 + $m2 = $m, ratio $r: outside 1 +- $QOS_TOL"
  verdict 0 "${set[0]} ${set[1]} ${set[2]}: 64k randread QD 16 on nsid $QOS_NS and $nb at once, ${QOS_RUNTIME} s: limit $QOS_MBPS MB/s, measured $m1 + $m2 = $m, ratio $r (1 +- $QOS_TOL wanted); removed after"
}

qos_removed() { # check-name : DELETE; GET answers {}; the job of the last limit set (QOS_LAST; none: skipped) runs
  # at least QOS_FREE x that limit
  local c=$1 u=$QOS_LAST f=qos-$T-$TR-removed lim bs qd m k
  C=$c OUTF=$RES/cli/${c//\//_}.txt BAD=""
  : > "$OUTF"
  # whatever ran before, the namespace is left without limits: the later checks read and write it in full (with
  # nothing set, DELETE answers 404)
  qos_api DELETE || [ -z "$u" ] || BAD="DELETE $(qos_path) failed: $(tail -n 2 "$OUTF" | tr '\n' ' ')"
  expect "GET $(qos_path) after DELETE" "$(qos_now)" "{}"
  if [ -z "$u" ]; then
    [ -z "$BAD" ] || { verdict 0 ""; return; }
    skip "$c" "no limit was set (see above)"; return
  fi
  if [ "$u" = iops ]; then lim=$QOS_IOPS bs=4k qd=32; else lim=$QOS_MBPS bs=64k qd=16; fi
  [ -n "$BAD" ] || qos_job "$f" "$bs" "$qd" "$QOS_PROBE" 1 "${DEV[$QOS_NS]}"
  m=$(qos_rate "$f" held "$u") k=$(qos_ratio "$m" "$lim")
  metric "${c//[\/-]/_}_measured" "$m" "$(qos_unit "$u")"
  [ -n "$BAD" ] || qos_ge "$k" "$QOS_FREE" ||
    BAD="measured $m $(qos_unit "$u"), $k x the removed limit $lim (at least $QOS_FREE x wanted)"
  verdict 0 "DELETE: GET answers {}; $bs randread QD $qd, ${QOS_PROBE} s: $m $(qos_unit "$u"), $k x the removed limit $lim (at least $QOS_FREE x wanted)"
}

qos_iops_cases() { # check-prefix nsid unlimited-4k-iops : qos/iops
  local p=$1 n=$2 b4=$3
  if ! qos_ge "$b4" "$(qos_times "$QOS_IOPS" 1.5)"; then
    skip "$p/iops" "unlimited, nsid $n did $b4 IOPS (4k QD 32): less than 1.5 x the limit $QOS_IOPS, which this host cannot show"
    return
  fi
  qos_held "$p/iops" iops "$QOS_IOPS" "{\"iops\": $QOS_IOPS}" 4k 32
}
qos_neighbour_case() { # check-prefix nsid neighbour-nsid(or "") unlimited-64k-mbps : qos/neighbour
  local p=$1 n=$2 nb=$3 b64=$4
  if [ -z "$nb" ]; then
    skip "$p/neighbour" "no second namespace of $NQN has a block device"
  elif ! qos_ge "$b64" $(((1 + QOS_NEIGHBOUR) * QOS_MBPS)); then
    skip "$p/neighbour" "nsid $n alone read $b64 MB/s without a limit: less than $((1 + QOS_NEIGHBOUR)) x the limit $QOS_MBPS (the limit for it, $QOS_NEIGHBOUR x it for the neighbour)"
  else
    qos_neighbour "$p/neighbour" "$nb"
  fi
}

qos_checks() { # nsid neighbour-nsid... : the checks <T>/<TR>/qos/... above on namespace nsid; the neighbour is
  # the first of the other nsids with a block device
  local n=$1 nb="" d p=$T/$TR/qos t b4 b64 f=qos-$T-$TR-unlimited probed
  shift
  map_namespaces   # DEV[] as the host has it now (earlier parts added and removed namespaces)
  for d; do [ "$d" != "$n" ] && [ -n "${DEV[$d]:-}" ] && { nb=$d; break; }; done
  QOS_NS=$n QOS_LAST=""
  # SPDK's bdev QoS takes IOPS in multiples of 1000 (docs/configuration.md, QoS): its least
  if [ "$T" = spdk ]; then QOS_IOPS=1000; else QOS_IOPS=200; fi
  hdr "$T over $TR: QoS limits on nsid $n (${DEV[$n]:-none}) against fio, an unlimited neighbour (nsid ${nb:-none})"
  if [ -z "${DEV[$n]:-}" ]; then skip "$p/all" "no block device for nsid $n"; return 0; fi
  t=$(now_us)

  C=$p/unlimited OUTF=$RES/cli/${p//\//_}-unlimited.txt BAD=""
  : > "$OUTF"
  expect "GET $(qos_path)" "$(qos_now)" "{}"
  qos_job "$f-4k" 4k 32 "$QOS_PROBE" 1 "${DEV[$n]}"
  qos_job "$f-64k" 64k 16 "$QOS_PROBE" 1 "${DEV[$n]}"
  b4=$(qos_rate "$f-4k" held iops) b64=$(qos_rate "$f-64k" held mbps)
  metric "${p//[\/-]/_}_unlimited_4k_iops" "$b4" IOPS
  metric "${p//[\/-]/_}_unlimited_64k_mbps" "$b64" MB/s
  probed=$([ -z "$BAD" ] && echo yes)
  verdict 0 "nsid $n without a limit, fio on vCPU $QOS_CPU, ${QOS_PROBE} s each: 4k randread QD 32 $b4 IOPS, 64k QD 16 $b64 MB/s"

  if [ -z "$probed" ]; then
    for d in iops neighbour read-mbps $([ "$T" = spdk ] || echo host group); do skip "$p/$d" "not run: $p/unlimited failed"; done
  else
    qos_iops_cases "$p" "$n" "$b4"
    if qos_ge "$b64" "$(qos_times "$QOS_MBPS" 1.5)"; then
      qos_held "$p/read-mbps" mbps "$QOS_MBPS" "{\"readMBps\": $QOS_MBPS}" 64k 16
    else
      skip "$p/read-mbps" "unlimited, nsid $n read $b64 MB/s (64k QD 16): less than 1.5 x the limit $QOS_MBPS, which this host cannot show"
    fi
    qos_neighbour_case "$p" "$n" "$nb" "$b64"
    if [ "$T" != spdk ]; then
      for d in host group; do
        if [ -z "$nb" ]; then skip "$p/$d" "no second namespace of $NQN has a block device"
        elif ! qos_ge "$b64" "$(qos_times "$QOS_MBPS" 1.5)"; then skip "$p/$d" "nsid $n alone read $b64 MB/s: less than 1.5 x the limit $QOS_MBPS"
        else qos_shared "$p/$d" "$nb" "$d"; fi
      done
    fi
  fi
  qos_removed "$p/removed"
  metric "${p//[\/-]/_}_s" "$(secs_since "$t")" s
}

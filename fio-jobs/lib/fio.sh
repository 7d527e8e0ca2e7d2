# Shared by fio-jobs/run.sh and the e2e suite (sourced): finding what the Linux
# host made of a connection in sysfs, and turning fio's JSON into comparable rows.

# nvme_ctrl TR ADDR PORT NQN : prints nvmeX, the controller of NQN over TR ADDR:PORT
nvme_ctrl() {
  local s c
  for s in /sys/class/nvme-subsystem/nvme-subsys*; do
    [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$4" ] || continue
    for c in "$s"/nvme*; do
      [[ ${c##*/} =~ ^nvme[0-9]+$ ]] || continue
      [ "$(cat "$c/transport" 2>/dev/null)" = "$1" ] || continue
      case $(cat "$c/address" 2>/dev/null) in
        *traddr=$2,trsvcid=$3*) echo "${c##*/}"; return 0 ;;
      esac
    done
  done
  return 1
}

# nvme_ns_devs NQN : prints "nsid /dev/nvmeXnY" for each namespace block device of the subsystem
# (the multipath head when the host runs native multipath, which Debian's kernel does)
nvme_ns_devs() {
  local s b
  for s in /sys/class/nvme-subsystem/nvme-subsys*; do
    [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    for b in "$s"/nvme*n*; do
      [[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -b "/dev/${b##*/}" ] || continue
      echo "$(cat "$b/nsid") /dev/${b##*/}"
    done
  done
}

# fio_summary JSON : one row per job and direction that did I/O:
#   job op iops p50_us p99_us mean_us errors
# (latency is fio's total latency, submission to completion; percentiles need lat_percentiles=1,
# otherwise completion latency)
fio_summary() {
  jq -r '.jobs[] | . as $j | ("read", "write") as $op | $j[$op] | select(.total_ios > 0) |
    (if .lat_ns.percentile then .lat_ns else .clat_ns end) as $l |
    [$j.jobname, $op, .iops, ($l.percentile["50.000000"] // 0) / 1000, ($l.percentile["99.000000"] // 0) / 1000,
     .lat_ns.mean / 1000, $j.error] | @tsv' "$1"
}

# fio_ratio A.tsv B.tsv [prefix] : for rows of fio_summary present in both, prints
#   metric a b ratio_a_over_b
# with metric = prefix + job-op-{IOPS,p50_us,p99_us,mean_us}; IOPS above 1 and latency below 1 favour A
fio_ratio() {
  printf 'metric\t%s\t%s\tratio_%s_over_%s\n' "${4:-a}" "${5:-b}" "${4:-a}" "${5:-b}"
  awk -F'\t' -v OFS='\t' -v pre="${3:-}" '
    FNR == NR { a[$1 "-" $2] = $0; next }
    ($1 "-" $2) in a {
      split(a[$1 "-" $2], x, "\t")
      n = split("IOPS p50_us p99_us mean_us", m, " ")
      for (i = 1; i <= n; i++) {
        print pre $1 "-" $2 "-" m[i], sprintf("%.1f", x[i + 2]), sprintf("%.1f", $(i + 2)),
              ($(i + 2) == 0 ? "" : sprintf("%.3f", x[i + 2] / $(i + 2)))
      }
    }' "$1" "$2"
}

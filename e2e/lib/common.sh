# Shared by the e2e drivers (e2e/run.sh, e2e/arm64/run.sh); sourced, not run. Expects QUIET (1: the
# console only into its file) and, for log, E2E_LOG_TAG.

log() { printf '[%s %(%H:%M:%S)T] %s\n' "${E2E_LOG_TAG:-e2e}" -1 "$*"; }
now_us() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000000 + 10#${t#*.} )); }
fmt_s() { printf '%d.%03d' $(($1/1000000)) $((($1%1000000)/1000)); }

results_dir() { # DIR : creates or empties a results folder; refuses a non-empty folder that is not one
  mkdir -p "$1"
  if [ -n "$(ls -A "$1")" ] && [ ! -f "$1/.e2e-results" ]; then
    echo "refusing to wipe $1: not empty and not a previous e2e results folder" >&2; exit 2
  fi
  find "$1" -mindepth 1 -delete
  touch "$1/.e2e-results"
}

apt_missing() { # LOGFILE PACKAGE... : apt-get installs those of the packages that are not installed
  local logf=$1 missing; shift
  missing=$(for p in "$@"; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"; done)
  [ -n "$missing" ] || return 0
  log "installing: $(echo $missing)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing > "$logf" 2>&1 || { tail -30 "$logf"; exit 1; }
}

fetch_kernel() { # KROOT [apt-get options...] : apt-get download + dpkg -x of the kernel package named by
  # KROOT's last component into KROOT (cached: done once), with the modules.dep its postinst would make
  local kroot=$1 kpkg deb kv; shift
  kpkg=$(basename "$kroot")
  [ ! -f "$kroot/.complete" ] || return 0
  log "fetching and extracting $kpkg (not installed on this machine)"
  rm -rf "$kroot" "$kroot.tmp" "$kroot.dl"; mkdir -p "$kroot.dl"
  (cd "$kroot.dl" && apt-get "$@" download "$kpkg" 2>&1 | grep -v 'unsandboxed' || true)
  deb=$(ls "$kroot.dl/${kpkg}"_*.deb)
  dpkg -x "$deb" "$kroot.tmp"
  kv=$(ls "$kroot.tmp/lib/modules")
  depmod -b "$kroot.tmp" "$kv"          # the .deb ships no modules.dep (postinst makes it)
  dpkg-deb -f "$deb" Version > "$kroot.tmp/.pkgversion"
  rm -rf "$kroot.dl"
  mv "$kroot.tmp" "$kroot"; touch "$kroot/.complete"
}

stamp() { # T0_US : prefix each console line with seconds since T0 (no fork per line)
  local l t0=$1 t us
  while IFS= read -r l; do
    t=$EPOCHREALTIME; us=$(( ${t%.*} * 1000000 + 10#${t#*.} - t0 ))
    printf '%d.%03d %s\n' $((us / 1000000)) $(((us % 1000000) / 1000)) "${l%$'\r'}"
  done
}
console() { if [ "$QUIET" = 1 ]; then cat > "$1"; else tee "$1"; fi; }
run_qemu() { # CONSOLE-FILE TIMEOUT : runs $QEMU (an array) to its end; sets QRC (124: timeout)
  local t0
  t0=$(now_us)
  set +e
  timeout -k 10 "$2" "${QEMU[@]}" < /dev/null 2>&1 | stamp "$t0" | console "$1"
  QRC=${PIPESTATUS[0]}
  set -e
}

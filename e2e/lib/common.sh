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
  # trixie's kernel ships its modules in /usr/lib/modules (merged /usr); here they are in lib/modules, where
  # modprobe -d, depmod -b and guest/init.sh look
  if [ ! -d "$kroot.tmp/lib/modules" ] && [ -d "$kroot.tmp/usr/lib/modules" ]; then
    mkdir -p "$kroot.tmp/lib" && mv "$kroot.tmp/usr/lib/modules" "$kroot.tmp/lib/modules"
  fi
  kv=$(ls "$kroot.tmp/lib/modules")
  depmod -b "$kroot.tmp" "$kv"          # the .deb ships no modules.dep (postinst makes it)
  dpkg-deb -f "$deb" Version > "$kroot.tmp/.pkgversion"
  rm -rf "$kroot.dl"
  mv "$kroot.tmp" "$kroot"; touch "$kroot/.complete"
}

private_apt() { # DIR SUITE [ARCH] : sets APT_PRIV, apt-get/apt-cache options for a private apt state in DIR that
  # reads Debian SUITE (main, and SUITE-security) for ARCH (default amd64): its own sources list, lists and an
  # empty dpkg status; this machine's /etc/apt, package lists and dpkg database are neither read nor touched. The
  # lists are fetched on first use and refreshed when older than a day (a package the mirror dropped is gone).
  local d=$1 suite=$2 arch=${3:-amd64} keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -n "$d" ] && [ -n "$suite" ] || { echo "private_apt: DIR and SUITE needed" >&2; exit 2; }
  mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/cache"
  d=$(cd "$d" && pwd)   # apt takes relative Dir:: paths as relative to its own directories
  [ -f "$d/status" ] || : > "$d/status"
  printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" "$suite" \
    "$keyring" "${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}" "$suite-security" > "$d/sources.list.new"
  if cmp -s "$d/sources.list.new" "$d/sources.list"; then rm "$d/sources.list.new"
  else mv "$d/sources.list.new" "$d/sources.list"; rm -f "$d/updated"; fi
  APT_PRIV=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o "Dir::Etc::SourceList=$d/sources.list"
    -o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
    -o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status" -o "Dir::Cache=$d/cache"
    -o "Dir::Cache::archives=$d/archives" -o Debug::NoLocking=1)
  if [ -z "$(find "$d" -maxdepth 1 -name updated -mtime -1 2>/dev/null)" ]; then
    log "apt-get update ($suite lists, private configuration under $d)"
    apt-get "${APT_PRIV[@]}" update -qq 2>&1 | grep -v unsandboxed || true
    compgen -G "$d/lists/*_Packages*" > /dev/null || { echo "apt-get update of $suite failed" >&2; exit 1; }
    touch "$d/updated"
  fi
}

lib_closure() { # PACKAGE... : the packages and, transitively, the libraries (lib*, zlib1g, gcc-N-base) they depend on,
  # with APT_PRIV; programs and services they depend on (nvme-cli's uuid-runtime -> systemd, ...) are left out
  local todo=("$@") seen=" " next p
  while [ ${#todo[@]} -gt 0 ]; do
    for p in "${todo[@]}"; do [[ $seen == *" $p "* ]] || { seen+="$p "; echo "$p"; }; done
    mapfile -t next < <(apt-cache "${APT_PRIV[@]}" depends --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances "${todo[@]}" 2>/dev/null \
      | awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 !~ /^</ {print $2}' | grep -E '^(lib|zlib1g|gcc-[0-9]+-base)' | sort -u)
    todo=()
    for p in "${next[@]}"; do [[ $seen == *" $p "* ]] || todo+=("$p"); done
  done
}

fetch_userland() { # DIR PACKAGE... : the packages and their library closure (lib_closure, APT_PRIV) fetched with
  # apt-get download and unpacked with dpkg -x into DIR/root (cached: done once); for each program of theirs
  # in usr/sbin or usr/bin named in USERLAND_PROGRAMS, a wrapper DIR/bin/<program> that runs it with the
  # unpacked C library's loader and libraries only. Nothing is installed on this machine.
  local d=$1 tmp=$1.tmp deb ld prog p f libs bad; shift
  [ ! -f "$d/.complete" ] || return 0
  log "fetching and unpacking $* with their libraries into $d (not installed on this machine)"
  rm -rf "$d" "$tmp"; mkdir -p "$tmp/dl" "$tmp/bin" "$tmp/root"
  mapfile -t p < <(lib_closure "$@")
  (cd "$tmp/dl" && apt-get "${APT_PRIV[@]}" download "${p[@]}" 2>&1 | grep -v unsandboxed || true)
  for deb in "$tmp"/dl/*.deb; do
    dpkg -x "$deb" "$tmp/root"
    dpkg-deb -f "$deb" Package Version | sed 's/^[A-Za-z]*: //' | paste -sd' ' >> "$tmp/packages.txt"
  done
  [ "$(wc -l < "$tmp/packages.txt")" = "${#p[@]}" ] || { echo "apt-get download got $(wc -l < "$tmp/packages.txt") of ${#p[@]} packages: ${p[*]}" >&2; exit 1; }
  rm -rf "$tmp/dl"
  ld=$(cd "$tmp/root" && find . -name 'ld-linux-x86-64.so.2' -type f | head -n 1)
  [ -n "$ld" ] || { echo "no ld-linux-x86-64.so.2 among ${p[*]}" >&2; exit 1; }
  libs=$d/root/usr/lib/x86_64-linux-gnu:$d/root/lib/x86_64-linux-gnu
  for prog in ${USERLAND_PROGRAMS:?}; do
    p=""
    for f in usr/sbin usr/bin sbin bin; do [ ! -f "$tmp/root/$f/$prog" ] || { p=$f/$prog; break; }; done
    [ -n "$p" ] || { echo "no program $prog among the unpacked packages" >&2; exit 1; }
    printf '#!/bin/sh\n# %s of the packages in %s, run with their own C library (e2e/lib/common.sh fetch_userland)\nexec %q --library-path %q --argv0 %q %q "$@"\n' \
      "$prog" "$d/packages.txt" "$d/root/${ld#./}" "$libs" "$prog" "$d/root/$p" > "$tmp/bin/$prog"
    chmod 0755 "$tmp/bin/$prog"
    # every library it needs must come from the unpacked tree, none from this machine
    bad=$("$tmp/root/${ld#./}" --library-path "${libs//$d/$tmp}" --list "$tmp/root/$p" 2>&1 | grep -v -e "$tmp/root" -e 'linux-vdso' || true)
    [ -z "$bad" ] || { echo "$prog: libraries not among the unpacked packages: $bad" >&2; exit 1; }
  done
  mv "$tmp" "$d"; touch "$d/.complete"
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
write_cds() { # LAUNCHER ARCHIVE JVM-OPTS : one start of the service on loopback (TCP listener on a port the
  # system picks, the API on a free one), a few API requests, SIGTERM; its JVM writes a class-data archive
  # (AppCDS) of every class it loaded when it exits. 0 when the archive is in place.
  local launcher=$1 archive=$2 opts=$3 d pid rc api t0
  d=$(mktemp -d) || return 1
  mkdir -p "$(dirname "$archive")"; rm -f "$archive" "$archive.tmp"
  api=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../../fio-jobs/lib/free_port.py") || { rm -rf "$d"; return 1; }
  cat > "$d/config.json" << JSON
{"cores": 1, "storage": {"fileDirectories": ["$d"]}, "api": {"port": $api},
 "bdevs": [{"name": "m0", "type": "malloc", "blockSize": 512, "numBlocks": 2048},
           {"name": "f0", "type": "file", "blockSize": 4096, "numBlocks": 256, "path": "$d/f0.img"}],
 "subsystems": [{"nqn": "nqn.2026-11.io.nvmf4j:cds", "allowAnyHost": true,
   "namespaces": [{"nsid": 1, "bdev": "m0"}, {"nsid": 2, "bdev": "f0"}],
   "listeners": [{"transport": "tcp", "address": "127.0.0.1", "port": 0}]}]}
JSON
  NVMF4J_JAVA_OPTS="$opts -XX:ArchiveClassesAtExit=$archive.tmp -Xlog:cds*=error" \
    "$launcher" --state-dir "$d/state" --config "$d/config.json" > "$d/log" 2>&1 < /dev/null &
  pid=$! t0=$(now_us)
  # bounded only for a failure: a start here takes a few seconds
  until grep -q 'management API on' "$d/log"; do
    if ! kill -0 "$pid" 2> /dev/null || [ $(($(now_us) - t0)) -gt 120000000 ]; then break; fi
    sleep 0.2
  done
  if grep -q 'management API on' "$d/log"; then
    for path in subsystems bdevs metrics; do
      curl -sf -o /dev/null -H "Authorization: Bearer $(cat "$d/state/api-token" 2> /dev/null)" \
        "http://127.0.0.1:$api/$([ "$path" = metrics ] || echo api/v1/)$path" || true
    done
  fi
  kill -TERM "$pid" 2> /dev/null; wait "$pid"; rc=$?
  if { [ "$rc" = 0 ] || [ "$rc" = 143 ]; } && [ -s "$archive.tmp" ]; then
    mv "$archive.tmp" "$archive"; rm -rf "$d"; return 0
  fi
  log "no class-data archive (the service's exit status $rc): $(tail -n 3 "$d/log" | tr '\n' ' ')"
  rm -rf "$d" "$archive.tmp"; return 1
}

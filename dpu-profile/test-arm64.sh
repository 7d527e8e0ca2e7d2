#!/bin/bash
# The arm64 packages' test on this x86-64 machine: builds dist/nvmf4j_<version>_arm64.deb and
# dist/nvmf4j-<version>-linux-aarch64.tar.gz (package.sh --arch arm64; the Maven build first when nothing is
# staged) and checks what can be checked without an Arm CPU: the archives' layout and architecture, that the
# JNI libraries in the jars are AArch64 ELF objects (readelf, independently of the build's own check) that
# register every native the Java side declares (NativeLibraryCheck, and that it fails on a library with a
# missing one), that the spdk engine's library is the aarch64 one linked against SPDK cross-built for aarch64
# (and no x86-64 one beside it), that every undefined symbol of each aarch64 library is defined, at its
# version, by the arm64 libraries it names as NEEDED (from Debian 12's arm64 packages in the sysroot), that
# Netty's aarch64 epoll and io_uring libraries are packaged, and that the .deb's Depends name Debian 12 arm64
# packages: they match the libraries' NEEDED entries and apt resolves the .deb itself against Debian's arm64
# archive (apt-get -s in native/aarch64.sh's private arm64 state). Running it on Arm is the aarch64 QEMU
# guest's part (e2e). Needs the cross compiler, the arm64 sysroot and SPDK cross-built for aarch64 (./dev.sh
# setup), readelf (binutils), unzip.
#
#   dpu-profile/test-arm64.sh [--no-build]    --no-build: package what dpu-profile/target/dist holds
set -uo pipefail
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
START=$(date +%s)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
N=0 FAILS=0
ok() { N=$((N + 1)); echo "PASS  $*"; }
bad() { N=$((N + 1)); FAILS=$((FAILS + 1)); echo "FAIL  $*"; }
summary() { echo "arm64 package test: $N checks, $FAILS failed ($(( $(date +%s) - START )) s)"; [ $FAILS = 0 ]; exit $?; }
for tool in readelf unzip dpkg-deb java; do
  command -v "$tool" >/dev/null || { bad "$tool missing (./dev.sh setup)"; summary; }
done

# 1. the packages
if [ "${1:-}" != --no-build ] || [ ! -d "$HERE/target/dist/lib" ]; then
  (cd "$TOP" && mvn -B -ntp -q ${MAVEN_ARGS:-} -DskipTests package -pl dpu-profile -am) > "$TMP/mvn.log" 2>&1 \
    || { tail -n 30 "$TMP/mvn.log"; bad "mvn package"; summary; }
fi
if out=$("$HERE/package.sh" --arch arm64 2>&1); then ok "package.sh --arch arm64 built both packages"; else bad "package.sh --arch arm64: $out"; summary; fi
echo "$out" | sed 's/^/      /'
version=$(sed -n 's/^package.sh: wrote .*nvmf4j_\(.*\)_arm64\.deb .*/\1/p' <<< "$out")
DEB=$TOP/dist/nvmf4j_${version}_arm64.deb
TGZ=$TOP/dist/nvmf4j-${version}-linux-aarch64.tar.gz
[ -n "$version" ] && [ -s "$DEB" ] && [ -s "$TGZ" ] && ok "wrote $(basename "$DEB") and $(basename "$TGZ")" \
  || { bad "no arm64 .deb/tarball named in: $out"; summary; }

# 2. layout
tar -tzf "$TGZ" > "$TMP/tgz.list"
missing=
for f in bin/nvmf4j-target bin/nvmfctl lib/mgmt-api- conf/nvmf4j.json systemd/nvmf4j.service man/man1/nvmfctl.1 \
  completion/nvmfctl; do
  grep -q "^nvmf4j-[^/]*/$f" "$TMP/tgz.list" || missing="$missing $f"
done
[ -z "$missing" ] && ok "tarball has bin/, lib/, conf/, systemd/nvmf4j.service, man/, completion/" || bad "tarball lacks:$missing"
[ "$(dpkg-deb -f "$DEB" Architecture)" = arm64 ] && [ "$(dpkg-deb -f "$DEB" Package)" = nvmf4j ] \
  && ok ".deb: Package nvmf4j, Architecture arm64, Version $(dpkg-deb -f "$DEB" Version)" \
  || bad ".deb control: $(dpkg-deb -f "$DEB" Package Architecture)"
dpkg-deb -c "$DEB" | awk '{print $6}' > "$TMP/deb.list"
missing=
for f in ./usr/bin/nvmf4j-target ./usr/bin/nvmfctl ./usr/share/nvmf4j/bin/nvmf4j-target ./usr/share/nvmf4j/lib/mgmt-api- \
  ./lib/systemd/system/nvmf4j.service ./usr/share/doc/nvmf4j/examples/nvmf4j.json ./usr/share/man/man1/nvmfctl.1.gz; do
  grep -q "^$f" "$TMP/deb.list" || missing="$missing $f"
done
[ -z "$missing" ] && ok ".deb has the launchers, lib/, the unit, the example config and the man pages" || bad ".deb lacks:$missing"

# 3. the jars: the same in both archives; their aarch64 libraries
mkdir -p "$TMP/deb" "$TMP/tgz" "$TMP/so"
dpkg-deb -x "$DEB" "$TMP/deb" && tar -C "$TMP/tgz" -xzf "$TGZ"
LIB=$TMP/deb/usr/share/nvmf4j/lib
(cd "$LIB" && sha256sum -- *.jar) > "$TMP/deb.sums"
(cd "$TMP"/tgz/nvmf4j-*/lib && sha256sum -- *.jar) > "$TMP/tgz.sums"
cmp -s "$TMP/deb.sums" "$TMP/tgz.sums" && ok "the .deb and the tarball carry the same $(wc -l < "$TMP/deb.sums") jars" \
  || bad "the .deb's and the tarball's jars differ"
for j in "$LIB"/*.jar; do (cd "$TMP/so" && unzip -qo "$j" 'META-INF/native/*' 2>/dev/null); done
machine() { readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'; }
bad_elf= n=0
for name in nvmf4j_rdma nvmf4j_bdev nvmf4j_rbd; do
  so=$TMP/so/META-INF/native/lib${name}_aarch64.so
  m=$(machine "$so")
  [ "$m" = AArch64 ] && [ "$(readelf -h "$so" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')" = DYN ] && n=$((n + 1)) \
    || bad_elf="$bad_elf lib${name}_aarch64.so=${m:-missing}"
  [ "$(machine "$TMP/so/META-INF/native/lib${name}_x86_64.so")" = "Advanced Micro Devices X86-64" ] \
    || bad_elf="$bad_elf lib${name}_x86_64.so"
done
[ -z "$bad_elf" ] && ok "readelf: libnvmf4j_rdma/bdev/rbd_aarch64.so are AArch64 shared objects, beside their x86-64 twins" \
  || bad "ELF machines:$bad_elf"
readelf -d "$TMP/so/META-INF/native/libnvmf4j_rdma_aarch64.so" | grep -q 'Library soname: \[libnvmf4j_rdma_aarch64.so\]' \
  && readelf --dyn-syms -W "$TMP/so/META-INF/native/libnvmf4j_rdma_aarch64.so" | grep -q ' FUNC *GLOBAL .* JNI_OnLoad$' \
  && ok "libnvmf4j_rdma_aarch64.so: its own soname, exports JNI_OnLoad" || bad "libnvmf4j_rdma_aarch64.so: soname/JNI_OnLoad"
epoll=$(ls "$LIB"/netty-transport-native-epoll-*-linux-aarch_64.jar 2>/dev/null | head -n 1)
if [ -n "$epoll" ] && (cd "$TMP/so" && unzip -qo "$epoll" 'META-INF/native/*.so') \
  && [ "$(machine "$(ls "$TMP"/so/META-INF/native/libnetty_transport_native_epoll_aarch_64.so)")" = AArch64 ]; then
  ok "Netty's aarch64 epoll library is packaged ($(basename "$epoll"); the RDMA poll groups need epoll)"
else
  bad "no AArch64 Netty epoll library in lib/"
fi
uring=$(ls "$LIB"/netty-transport-native-io_uring-*-linux-aarch_64.jar 2>/dev/null | head -n 1)
if [ -n "$uring" ] && (cd "$TMP/so" && unzip -qo "$uring" 'META-INF/native/*.so') \
  && [ "$(machine "$(ls "$TMP"/so/META-INF/native/libnetty_transport_native_io_uring*_aarch_64.so)")" = AArch64 ]; then
  ok "Netty's aarch64 io_uring library is packaged ($(basename "$uring"); socketIo io_uring)"
else
  bad "no AArch64 Netty io_uring library in lib/"
fi

# 4. the symbol check: every Java native registered, on the packaged jars; and it catches a missing one
CP="$HERE/target/classes:$LIB/*"
if out=$(java -cp "$CP" io.nvmf4j.dist.NativeLibraryCheck --require aarch64 2>&1); then
  ok "NativeLibraryCheck --require aarch64 on the .deb's jars: $(grep -c 'natives of' <<< "$out") libraries register every Java native"
else
  bad "NativeLibraryCheck aarch64: $out"
fi
echo "$out" | sed 's/^/      /'
mkdir -p "$TMP/broken/META-INF/native"
cp "$TMP/so/META-INF/native/libnvmf4j_rdma_aarch64.so" "$TMP/broken/META-INF/native/libnvmf4j_bdev_aarch64.so"
out=$(java -cp "$TMP/broken:$CP" io.nvmf4j.dist.NativeLibraryCheck --require aarch64 2>&1) \
  && bad "the check passed a bdev library that registers none of FileNative's natives" \
  || { grep -q 'PROBLEM: libnvmf4j_bdev_aarch64.so: io.nvmf4j.os.FileNative declares native pread(IJIJ)I, which it does not register' <<< "$out" \
       && ok "the check fails on an aarch64 library missing a registered native (names FileNative.pread(IJIJ)I)" \
       || bad "the check failed without naming the missing native: $out"; }

# 5. the spdk engine on arm64: libnvmf4j_spdk for aarch64, SPDK and DPDK linked in, and no x86-64 one
spdk=$TMP/so/META-INF/native/libnvmf4j_spdk_aarch64.so
if [ "$(machine "$spdk")" = AArch64 ] && [ ! -e "$TMP/so/META-INF/native/nvmf4j_spdk_aarch64.unavailable" ] \
  && readelf -d "$spdk" | grep 'Library soname: \[libnvmf4j_spdk_aarch64.so\]' >/dev/null \
  && readelf --dyn-syms -W "$spdk" | grep ' FUNC *GLOBAL .* JNI_OnLoad$' >/dev/null \
  && spdk_version=$(readelf -p .rodata "$spdk" 2>/dev/null | grep -o 'SPDK v[0-9.]*$') && [ -n "$spdk_version" ]; then
  ok "spdk engine: libnvmf4j_spdk_aarch64.so is an AArch64 shared object with $spdk_version linked in ($(du -h "$spdk" | cut -f1))"
else
  bad "spdk engine: no AArch64 libnvmf4j_spdk_aarch64.so with SPDK in it ($(machine "$spdk"); $(cat "$TMP/so/META-INF/native/nvmf4j_spdk_aarch64.unavailable" 2>/dev/null))"
fi
others=$(cd "$TMP/so/META-INF/native" && ls libnvmf4j_spdk_x86_64.so nvmf4j_spdk_x86_64.unavailable 2>/dev/null | tr '\n' ' ')
[ -z "$others" ] && ok "spdk engine: the arm64 package carries no x86-64 SPDK library" \
  || bad "spdk engine: the arm64 package carries $others"

sysroot=$("$TOP/native/aarch64.sh" path) || { bad "no arm64 sysroot"; summary; }
# the defined dynamic symbols of a library in the sysroot, as name@version (a default version's @@ as @)
defined() {
  local f
  for f in "$sysroot/lib/aarch64-linux-gnu/$1" "$sysroot/usr/lib/aarch64-linux-gnu/$1"; do
    [ -e "$f" ] || continue
    readelf --dyn-syms -W "$f" | awk '$7 != "UND" && $8 != "" {sub(/@@/, "@", $8); print $8; sub(/@.*/, "", $8); print $8}'
    return
  done
}
# unresolved LIB [SONAME]: the library's strong undefined symbols (weak ones may stay unresolved at run time)
# that none of its NEEDED libraries defines, leaving SONAME out of them (the check's own check)
unresolved() {
  local soname
  : > "$TMP/defined"
  for soname in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ "$soname" = "${2:-}" ] || defined "$soname" >> "$TMP/defined"
  done
  readelf --dyn-syms -W "$1" | awk '$7 == "UND" && $5 == "GLOBAL" && $8 != "" {print $8}' \
    | sort -u | grep -vxF -f <(sort -u "$TMP/defined") | tr '\n' ' '
}
unresolved_all=
for so in "$TMP"/so/META-INF/native/libnvmf4j_*_aarch64.so; do
  u=$(unresolved "$so")
  [ -n "$u" ] && unresolved_all="$unresolved_all $(basename "$so"): $u"
done
[ -z "$unresolved_all" ] \
  && ok "every undefined symbol of the $(ls "$TMP"/so/META-INF/native/libnvmf4j_*_aarch64.so | wc -l) aarch64 libraries is defined, at its version, by their NEEDED arm64 libraries (Debian 12's)" \
  || bad "undefined symbols no NEEDED arm64 library defines:$unresolved_all"
u=$(unresolved "$spdk" libssl.so.3)
grep -q 'SSL_CTX_new@OPENSSL_3.0.0' <<< "$u" \
  && ok "the symbol check names what is missing without libssl.so.3 ($(wc -w <<< "$u") symbols, SSL_CTX_new@OPENSSL_3.0.0 among them)" \
  || bad "the symbol check missed libssl.so.3's symbols: ${u:0:200}"

# 6. Depends: arm64 packages, matching what the libraries need, resolvable in Debian 12 arm64
depends=$(dpkg-deb -f "$DEB" Depends)
echo "      Depends: $depends"
needed_pkgs=
for so in "$TMP"/so/META-INF/native/libnvmf4j_*_aarch64.so; do
  for soname in $(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    # the package whose symbols file covers the soname (Debian's arm64 package, from the sysroot)
    pkg=$(awk -v s="$soname" '$1 == s && !/^[ \t|*]/ {print $2; exit}' "$sysroot/DEBIAN/symbols")
    # packages without a symbols file (librados2) are named by their shlibs entry: "librados 2 librados2 (>= ...)"
    [ -n "$pkg" ] || pkg=$(awk -v s="$soname" '{split(s, a, ".so.")} $1 == a[1] && $2 == a[2] {print $3; exit}' \
      "$sysroot/DEBIAN/shlibs" 2>/dev/null)
    [ -n "$pkg" ] || pkg="?$soname"
    needed_pkgs="$needed_pkgs $pkg"
  done
done
needed_pkgs=$(tr ' ' '\n' <<< "$needed_pkgs" | sed '/^$/d' | sort -u | tr '\n' ' ')
missing=
for p in $needed_pkgs; do grep -qE "(^|, )$p( |,|$)" <<< "$depends" || missing="$missing $p"; done
[ -z "$missing" ] && [ -n "$needed_pkgs" ] && ok "Depends names the package of every NEEDED library: $needed_pkgs" \
  || bad "Depends lacks$missing (NEEDED: $needed_pkgs)"
grep -qE -- '-cross|amd64' <<< "$depends" \
  && bad "Depends names a cross-toolchain or amd64 package: $depends" \
  || ok "Depends names no cross-toolchain or amd64 package"
if out=$("$TOP/native/aarch64.sh" apt -s install "$DEB" 2>&1) && grep -q '^Inst nvmf4j .*\[arm64\]' <<< "$out"; then
  ok "apt-get -s install ./$(basename "$DEB") resolves in Debian 12 arm64 ($(grep -c '^Inst ' <<< "$out") packages, $(grep -oE '^Inst (openjdk-17-jre-headless|libibverbs1|librdmacm1) ' <<< "$out" | awk '{print $2}' | tr '\n' ' '))"
else
  echo "$out" | tail -n 15 | sed 's/^/      /'
  bad "apt cannot install the arm64 .deb in Debian 12 arm64"
fi
summary

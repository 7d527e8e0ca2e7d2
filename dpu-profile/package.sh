#!/usr/bin/env bash
# Builds dist/nvmf4j_<version>_amd64.deb and dist/nvmf4j-<version>-linux-x86_64.tar.gz (or, with
# --arch arm64, dist/nvmf4j_<version>_arm64.deb and dist/nvmf4j-<version>-linux-aarch64.tar.gz) from what the
# Maven build of dpu-profile staged in dpu-profile/target/dist (every runtime jar, the man pages as AsciiDoc,
# the bash completion): ./dev.sh package [--arch arm64] runs the build, then this. Needs asciidoctor (man
# pages to troff), dpkg-dev (dpkg-shlibdeps computes the native libraries' Depends) and fakeroot-free dpkg-deb
# (--root-owner-group). Prints what it wrote.
#
#   package.sh [--arch amd64|arm64]     default: this machine's architecture
#
# The jars carry lib<name>_x86_64.so and lib<name>_aarch64.so side by side (the aarch64 ones cross-built:
# native/aarch64.sh), the same jars in both architectures' packages but one: libnvmf4j_spdk (SPDK and DPDK
# linked in, about 14 MB) goes only into its own architecture's package, whose copy of the spdk-jni jar
# leaves the other architecture's library (or .unavailable) out. Each package checks its architecture's libraries
# first (io.nvmf4j.dist.NativeLibraryCheck: the right ELF machine, every Java native registered) and computes
# Depends from them; for arm64, dpkg-shlibdeps reads Debian's arm64 libraries and their symbols files from
# the sysroot native/aarch64.sh prepared.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/.." && pwd)"
staged="$here/target/dist"
out="${DIST_DIR:-$top/dist}"

die() { echo "package.sh: $*" >&2; exit 1; }

arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || die "--arch needs amd64 or arm64"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    *) die "unknown argument $1 (usage: package.sh [--arch amd64|arm64])" ;;
  esac
done
# Debian's architecture name and the libraries' (NativeLibraryLoader's, uname -m's)
case "$arch" in
  amd64) libarch=x86_64 ;;
  arm64) libarch=aarch64 ;;
  *) die "no package for architecture $arch (amd64 or arm64)" ;;
esac
[ -d "$staged/lib" ] && [ -d "$staged/man-adoc" ] && [ -d "$staged/completion" ] \
  || die "nothing staged in $staged: build first (./dev.sh package, or mvn package)"
for tool in asciidoctor dpkg-deb dpkg-shlibdeps zip; do
  command -v "$tool" >/dev/null || die "$tool missing (./dev.sh setup installs it)"
done

# the Maven version (from the service jar's name): 0.1.0-SNAPSHOT becomes 0.1.0~SNAPSHOT, which Debian
# sorts before the release 0.1.0
jar="$(cd "$staged/lib" && ls mgmt-api-*.jar)"
mvn_version="${jar#mgmt-api-}"; mvn_version="${mvn_version%.jar}"
version="${mvn_version/-/\~}"
# reproducible timestamps: the last commit's
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# the jars of this package: the staged ones, the spdk-jni jar without the other architecture's SPDK library
lib="$work/lib"
cp -a "$staged/lib" "$lib"
for j in "$lib"/spdk-jni-*.jar; do
  for other in x86_64 aarch64; do
    [ "$other" = "$libarch" ] && continue
    zip -q -d "$j" "META-INF/native/libnvmf4j_spdk_$other.so" "META-INF/native/nvmf4j_spdk_$other.unavailable" \
      >/dev/null 2>&1 || true
  done
done

# man pages: picocli's AsciiDoc through asciidoctor's manpage backend
mkdir -p "$work/man1"
asciidoctor -b manpage -a reproducible -D "$work/man1" "$staged"/man-adoc/*.adoc
pages=("$work"/man1/*.1)

# this architecture's native libraries in the jars: each there, for the right machine, registering every
# native the Java side declares (a problem here would be an UnsatisfiedLinkError on the target machine)
java -cp "$here/target/classes:$lib/*" io.nvmf4j.dist.NativeLibraryCheck --require "$libarch" \
  | sed 's/^/package.sh: /' || die "the $libarch native libraries failed the check (above)"

# their dynamic dependencies as Debian package names (of this architecture)
mkdir -p "$work/shlibs/debian" "$work/shlibs/so"
(cd "$work/shlibs/so" && for j in "$lib"/*.jar; do unzip -qo "$j" "META-INF/native/*_$libarch.so" 2>/dev/null || true; done)
printf 'Source: nvmf4j\n\nPackage: nvmf4j\nArchitecture: any\n' >"$work/shlibs/debian/control"
mapfile -t sos < <(find "$work/shlibs/so" -name "*_$libarch.so" | sort)
[ "${#sos[@]}" -gt 0 ] || die "no $libarch native libraries found in the jars"
shlibdeps=(dpkg-shlibdeps)
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
  # another architecture's libraries: Debian's, and their symbols files, from the unpacked sysroot (-S),
  # searched in that architecture's multiarch directories (DEB_HOST_ARCH)
  sysroot=$("$top/native/aarch64.sh" path) || die "no $arch sysroot for dpkg-shlibdeps (./dev.sh setup prepares it)"
  shlibdeps=(env DEB_HOST_ARCH="$arch" dpkg-shlibdeps -S"$sysroot")
fi
shlibs="$(cd "$work/shlibs" && "${shlibdeps[@]}" -O "${sos[@]}" 2>"$work/shlibdeps.err")" \
  || { cat "$work/shlibdeps.err" >&2; die "dpkg-shlibdeps failed"; }
shlibs="${shlibs#shlibs:Depends=}"
depends="openjdk-17-jre-headless | java17-runtime-headless, adduser, $shlibs"

# no project address exists yet: NVMF4J_MAINTAINER names the real one (lintian flags the placeholder)
maintainer="${NVMF4J_MAINTAINER:-nvmf4j developers <nvmf4j@localhost>}"

gz() { gzip -9n <"$1" >"$2"; }

# ---- the tarball: nvmf4j-<version>/{bin,lib,conf,systemd,man/man1,completion}
tname="nvmf4j-$version"
t="$work/tar/$tname"
install -d "$t/bin" "$t/lib" "$t/conf" "$t/systemd" "$t/man/man1" "$t/completion"
install -m 0755 "$top/bin/nvmf4j-target" "$top/bin/nvmfctl" "$t/bin/"
install -m 0644 "$lib"/*.jar "$t/lib/"
install -m 0644 "$here/src/conf/nvmf4j.json" "$t/conf/"
install -m 0644 "$here/src/systemd/nvmf4j.service" "$t/systemd/"
install -m 0644 "${pages[@]}" "$t/man/man1/"
install -m 0644 "$staged"/completion/* "$t/completion/"
# ---- the .deb
d="$work/deb"
install -d "$d/DEBIAN" "$d/usr/bin" "$d/usr/share/nvmf4j/bin" "$d/usr/share/nvmf4j/lib" \
  "$d/lib/systemd/system" "$d/usr/share/man/man1" "$d/usr/share/bash-completion/completions" \
  "$d/usr/share/zsh/vendor-completions" "$d/usr/share/doc/nvmf4j/examples"
install -m 0755 "$top/bin/nvmf4j-target" "$top/bin/nvmfctl" "$d/usr/share/nvmf4j/bin/"
install -m 0644 "$lib"/*.jar "$d/usr/share/nvmf4j/lib/"
for cmd in nvmf4j-target nvmfctl; do
  ln -s "../share/nvmf4j/bin/$cmd" "$d/usr/bin/$cmd"
  # (bash-completion sources these: no #! line)
  sed '1{/^#!/d}' "$staged/completion/$cmd" >"$d/usr/share/bash-completion/completions/$cmd"
  chmod 0644 "$d/usr/share/bash-completion/completions/$cmd"
  fn="$(sed -n 's/^complete -F \([^ ]*\) .*/\1/p' "$staged/completion/$cmd")"
  [ -n "$fn" ] || die "no 'complete -F' line in the $cmd completion"
  # zsh: picocli's bash completion through bashcompinit (sourcing it registers it for later words;
  # _bash_complete answers the word that loaded this file)
  cat >"$d/usr/share/zsh/vendor-completions/_$cmd" <<ZSH
#compdef $cmd
# picocli's bash completion for $cmd, run by zsh through bashcompinit
autoload -U +X bashcompinit && bashcompinit
source /usr/share/bash-completion/completions/$cmd
_bash_complete -o default -F $fn
ZSH
  chmod 0644 "$d/usr/share/zsh/vendor-completions/_$cmd"
done
install -m 0644 "$here/src/systemd/nvmf4j.service" "$d/lib/systemd/system/"
for p in "${pages[@]}"; do gz "$p" "$d/usr/share/man/man1/$(basename "$p").gz"; done
install -m 0644 "$here/src/conf/nvmf4j.json" "$d/usr/share/doc/nvmf4j/examples/"
install -m 0644 "$here/debian/copyright" "$d/usr/share/doc/nvmf4j/copyright"
# jackson-core is a multi-release jar with Java 22 classes, which a Java 17 runtime never loads
install -d "$d/usr/share/lintian/overrides"
install -m 0644 "$here/debian/lintian-overrides" "$d/usr/share/lintian/overrides/nvmf4j"
changelog_date="$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
printf 'nvmf4j (%s) unstable; urgency=medium\n\n  * Built from the nvmf4j source tree (%s).\n\n -- %s  %s\n' \
  "$version" "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$maintainer" "$changelog_date" \
  >"$work/changelog"
gz "$work/changelog" "$d/usr/share/doc/nvmf4j/changelog.gz"
install -m 0755 "$here/debian/postinst" "$here/debian/postrm" "$d/DEBIAN/"
installed_kb="$(du -sk --exclude=DEBIAN "$d" | cut -f1)"
cat >"$d/DEBIAN/control" <<CONTROL
Package: nvmf4j
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_kb
Depends: $depends
Suggests: rdma-core, nvme-cli
Section: net
Priority: optional
Homepage: https://github.com/nvmf4j/nvmf4j
Description: NVMe-over-Fabrics target on the JVM (NVMe/TCP, NVMe/RDMA)
 nvmf4j exports block volumes (RAM, files, block devices) to unmodified NVMe-oF
 hosts over NVMe/TCP and NVMe/RDMA, with a discovery service, a REST management
 API, the nvmfctl command-line client and Prometheus metrics. An optional engine
 runs SPDK's NVMe-oF target inside the service.
 .
 The nvmf4j.service unit is installed but neither enabled nor started: write
 /var/lib/nvmf4j/config.json first (an example is in
 /usr/share/doc/nvmf4j/examples), then systemctl enable --now nvmf4j.
CONTROL
find "$d" -type d -exec chmod 0755 {} +

mkdir -p "$out"
deb="$out/nvmf4j_${version}_${arch}.deb"
tgz="$out/nvmf4j-${version}-linux-${libarch}.tar.gz"
dpkg-deb --root-owner-group -Zxz --build "$d" "$deb" >/dev/null
tar -C "$work/tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$tname" \
  | gzip -9n >"$tgz"
echo "package.sh: Depends: $depends"
echo "package.sh: ${#pages[@]} man pages, completion for nvmfctl and nvmf4j-target"
ls -l "$deb" "$tgz" | awk '{print "package.sh: wrote " $NF " (" $5 " bytes)"}'

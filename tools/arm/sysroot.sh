#!/usr/bin/env bash
# Prepares the arm64 libraries and headers that the AArch64 cross build links against, in a
# folder of the build tree, without installing anything arm64 into the system.
#
#   tools/arm/sysroot.sh [SYSROOT]      # default: build-arm/sysroot
#
# Why this way: Debian's multiarch would install the :arm64 -dev packages beside their amd64
# twins, but not all of them can be (libonnx-dev:arm64 pulls libonnxifi:arm64, whose
# /usr/lib/libonnxifi.so clashes with the amd64 one; libpthreadpool-dev is Multi-Arch: no, so it
# exists for one architecture at a time), and doing it would change the machine for every other
# build on it. Instead apt runs with a private state folder set to arm64 (nothing is added to
# dpkg's architectures), `apt-get download` fetches the .debs and `dpkg-deb -x` unpacks them
# here. The cross toolchain (g++-aarch64-linux-gnu) brings libc and libstdc++; protoc runs from
# the host. libcpuinfo is not needed on AArch64 (kernels/CMakeLists.txt).
#
# Idempotent: a stamp records the package list and versions; a second run with the same list
# does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

SYSROOT="$(realpath -m "${1:-$ROOT/build-arm/sysroot}")"
APT_DIR="$(dirname "$SYSROOT")/apt-arm64"

# Runtime + development packages the link needs, and the header-only ones taken from the same
# archive so that the whole cross build reads one tree.
PACKAGES=(
  libprotobuf-dev libprotobuf32 libprotobuf-lite32
  libonnx-dev libonnx1 libonnxifi
  libfmt-dev libfmt9
  libgtest-dev libgmock-dev
  libpthreadpool-dev libpthreadpool0
  zlib1g-dev zlib1g
  libcli11-dev nlohmann-json3-dev libstb-dev
)

say() { echo "[arm sysroot] $*"; }
die() { echo "[arm sysroot] error: $*" >&2; exit 1; }

for tool in apt-get apt-cache dpkg-deb; do
  command -v "$tool" >/dev/null || die "$tool not found: this script needs Debian's apt and dpkg"
done

mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/debs"
touch "$APT_DIR/status"
APT_OPTS=(
  -o "Dir::State::Lists=$APT_DIR/lists"
  -o "Dir::State::status=$APT_DIR/status"
  -o "Dir::Cache=$APT_DIR/cache"
  -o "APT::Architecture=arm64"
  -o "APT::Architectures::=arm64"
  # The downloads land in this build tree, which apt's unprivileged _apt user may not reach.
  -o "APT::Sandbox::User=root"
)

if [[ -z "$(find "$APT_DIR/lists" -maxdepth 1 -name '*arm64_Packages*' -mmin -1440 -print -quit)" ]]; then
  say "refreshing the arm64 package lists (private apt state in $APT_DIR)"
  apt-get -qq "${APT_OPTS[@]}" update || die "apt-get update for arm64 failed (network or /etc/apt sources?)"
fi

# The exact versions we would fetch (one apt-cache call: each call reads the lists anew); the
# stamp compares them with what is unpacked.
declare -A CANDIDATE=()
while read -r p v; do CANDIDATE[$p]="$v"; done < <(
  apt-cache "${APT_OPTS[@]}" policy "${PACKAGES[@]/%/:arm64}" 2>/dev/null |
    awk '/^[^ ].*:$/ {sub(/:arm64:$/, ""); sub(/:$/, ""); p = $0} /^  Candidate:/ {print p, $2}')
WANTED=""
for p in "${PACKAGES[@]}"; do
  v="${CANDIDATE[$p]:-}"
  [[ -n "$v" && "$v" != "(none)" ]] || die "package $p has no arm64 version in the configured sources"
  WANTED+="$p=$v"$'\n'
done
STAMP="$SYSROOT/.octet-sysroot-packages"
if [[ -f "$STAMP" && "$(cat "$STAMP")"$'\n' == "$WANTED" ]]; then
  say "up to date ($SYSROOT, ${#PACKAGES[@]} packages)"
  exit 0
fi

rm -rf "$SYSROOT"
mkdir -p "$SYSROOT"
cd "$APT_DIR/debs"
while IFS= read -r spec; do
  [[ -n "$spec" ]] || continue
  p="${spec%%=*}"
  v="${spec#*=}"
  deb="$(ls "${p}_"*"_"{arm64,all}.deb 2>/dev/null | head -n 1 || true)"
  if [[ -z "$deb" ]] || [[ "$(dpkg-deb -f "$deb" Version)" != "$v" ]]; then
    say "downloading $p $v"
    rm -f "${p}_"*.deb
    apt-get -qq "${APT_OPTS[@]}" download "$p:arm64=$v" </dev/null || die "could not download $p:arm64=$v"
    deb="$(ls "${p}_"*"_"{arm64,all}.deb 2>/dev/null | head -n 1 || true)"
    [[ -n "$deb" ]] || die "apt-get download of $p left no .deb in $APT_DIR/debs"
  fi
  say "unpacking $deb"
  dpkg-deb -x "$deb" "$SYSROOT"
done <<<"$WANTED"

# Debian's symlinks may be absolute (/usr/lib/aarch64-linux-gnu/libz.so -> /lib/...); point them
# inside the sysroot so the cross linker does not follow them to the host's files.
while IFS= read -r link; do
  target="$(readlink "$link")"
  [[ "$target" == /* ]] || continue
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$SYSROOT$target")" "$link"
done < <(find "$SYSROOT" -type l)

# The CMake config files unpacked here (ONNX, GTest, fmt, CLI11, nlohmann_json) find their
# prefix from their own location, so they need no editing: their only absolute paths are
# Debian's "/usr move" guards, which fire only when loaded from /usr itself.

for must in usr/lib/aarch64-linux-gnu/libprotobuf.so usr/lib/aarch64-linux-gnu/libonnx.so \
            usr/lib/aarch64-linux-gnu/libpthreadpool.so usr/lib/aarch64-linux-gnu/libz.so \
            usr/include/google/protobuf/message.h usr/include/gtest/gtest.h; do
  [[ -e "$SYSROOT/$must" ]] || die "$must is missing from the sysroot after unpacking"
done
printf '%s' "$WANTED" >"$STAMP"
say "ready: $SYSROOT (${#PACKAGES[@]} packages)"

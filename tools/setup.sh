#!/usr/bin/env bash
# Installs what octet needs to build and test on Debian 12 (bookworm), then ONNX Runtime's Node
# binding (the reference oracle) into third_party/onnxruntime-node/node_modules.
# Idempotent: a second run installs nothing and says so.
#
#   tools/setup.sh           # apt packages + onnxruntime-node
#   tools/setup.sh --no-ort  # apt packages only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORT_DIR="$ROOT/third_party/onnxruntime-node"

# chromium: headless, for the browser tests of the explain page (tests/explain) and of
# `octet serve` (tests/serve); fonts-dejavu-core so its screenshots have text to draw (chromium
# only recommends a font). libcpp-httplib-dev: `octet serve`'s HTTP server. pybind11-dev,
# python3-dev, python3-numpy and python3-pytest: the Python module (python/) and its tests;
# python3-venv: the venv of ONNX Runtime's quantization tool (third_party/ort-quantization).
# python3-torch, python3-torchvision, python3-onnx: tools/zoo/export.py, whose small variants
# CI exports and checks (the zoo stage of tools/test.sh).
# ccache: the Release tree of tools/test.sh and the pip wheel its Install.PipWheel test builds
# share their compiles through it; dpkg-dev: dpkg-shlibdeps, which computes the Debian
# package's Depends (cmake/packaging.cmake, tests/install).
# nodejs and npm are handled apart: they are installed only if the commands are missing, so a
# newer Node (e.g. NodeSource's, whose npm is not a Debian package) is never replaced.
APT_PACKAGES=(
  build-essential cmake ninja-build git pkg-config ccache dpkg-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libxsimd-dev libcpuinfo-dev libpthreadpool-dev
  libbenchmark-dev libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libstb-dev zlib1g-dev
  dataset-fashion-mnist
  clang-14 libclang-rt-14-dev
  g++-aarch64-linux-gnu qemu-user
  chromium fonts-dejavu-core
  libcpp-httplib-dev
  pybind11-dev python3-dev python3-numpy python3-pytest
  python3-venv
  python3-torch python3-torchvision python3-onnx
)

with_ort=1
for arg in "$@"; do
  case "$arg" in
    --no-ort) with_ort=0 ;;
    -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "setup: $*"; }

# --- Debian packages -------------------------------------------------------------------------
installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == ii* ]]
}

missing=()
for p in "${APT_PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then
  # Debian's npm would sit on top of a Node that did not come with it; only add it to Debian's own.
  if command -v node >/dev/null 2>&1 && ! installed nodejs; then
    echo "setup.sh: 'node' is installed outside apt but 'npm' is missing; install npm with that Node" >&2
    exit 1
  fi
  missing+=(npm)
fi

if ((${#missing[@]} == 0)); then
  say "all apt packages are present (node $(node --version), npm $(npm --version 2>/dev/null))"
else
  if ((EUID == 0)); then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  say "installing apt packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# --- ONNX Runtime (Node binding) -------------------------------------------------------------
if ((with_ort == 0)); then
  say "--no-ort: not installing onnxruntime-node"
  exit 0
fi

# npm ci is redone only when the lock file changed since the last successful install.
stamp="$ORT_DIR/node_modules/.octet-lock.sha256"
want="$(sha256sum "$ORT_DIR/package-lock.json" | cut -d' ' -f1)"
if [[ -d "$ORT_DIR/node_modules/onnxruntime-node" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  say "onnxruntime-node is up to date in third_party/onnxruntime-node/node_modules"
else
  # --ignore-scripts: the package's postinstall downloads CUDA/TensorRT providers from NuGet and
  # fails offline; the CPU binaries we use ship inside the npm tarball.
  say "installing onnxruntime-node: (cd third_party/onnxruntime-node && npm ci --ignore-scripts)"
  (cd "$ORT_DIR" && npm ci --ignore-scripts --no-audit --no-fund)
  echo "$want" > "$stamp"
fi

say "checking the runner: $(node "$ROOT/tools/ort/ort_run.mjs" --version)"

# --- PyPI tools, each in a venv of its own under third_party/<name>/venv ----------------------
# pip runs again only when the folder's requirements.txt changed since the last successful install.
# install_venv NAME WHAT [venv options]
install_venv() {
  local dir="$ROOT/third_party/$1" what="$2"
  shift 2
  local stamp="$dir/venv/.octet-requirements.sha256"
  local want
  want="$(sha256sum "$dir/requirements.txt" | cut -d' ' -f1)"
  if [[ -x "$dir/venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    say "$what is up to date in third_party/$(basename "$dir")/venv"
  else
    say "installing $what: a venv in third_party/$(basename "$dir")/venv, pip install -r requirements.txt"
    rm -rf "$dir/venv"
    /usr/bin/python3 -m venv "$@" "$dir/venv"
    "$dir/venv/bin/pip" install --no-input --disable-pip-version-check -q -r "$dir/requirements.txt"
    echo "$want" > "$stamp"
  fi
}

# ONNX Runtime's quantization tool: the parity tests run files that onnxruntime.quantization
# writes (tools/ort/ort_quantize.py). Over Debian's site packages (torch for the zoo).
install_venv ort-quantization onnxruntime.quantization --system-site-packages
say "checking the quantization tool: onnxruntime $("$ROOT/third_party/ort-quantization/venv/bin/python" -c \
  'import onnxruntime.quantization, onnxruntime; print(onnxruntime.__version__)')"

# Triton's HTTP client: tests/serve/test_serve_kserve.cc points tritonclient.http at `octet serve`
# (tests/serve/kserve_client.py). Its own venv: tritonclient pins ml_dtypes below the version the
# quantization venv needs.
install_venv tritonclient "tritonclient[http]"
say "checking tritonclient: $("$ROOT/third_party/tritonclient/venv/bin/python" -c \
  'import tritonclient.http, importlib.metadata as m; print(m.version("tritonclient"))')"

# Ray Data: octet.ray spreads `octet eval` and benchmarks over a Ray cluster, and
# tests/python/test_ray.py runs it on a local instance. Over Debian's site packages (the octet
# module's NumPy); about 150 MB of wheels, 530 MB installed.
install_venv ray "ray[data,client]" --system-site-packages
say "checking ray: $("$ROOT/third_party/ray/venv/bin/python" -c 'import ray.data; print(ray.__version__)')"

# timm: tools/zoo/export.py builds the zoo's timm_* CNNs with it (tools/zoo/timm_models.py). Over
# Debian's site packages, whose torch and torchvision it uses; about 10 MB of wheels, 20 s to install.
install_venv timm timm --system-site-packages
say "checking timm: $("$ROOT/third_party/timm/venv/bin/python" -c 'import timm, torch; print(timm.__version__, "on torch", torch.__version__)')"

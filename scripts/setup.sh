#!/usr/bin/env bash
# Installs what klab needs to build and test, and does nothing when all of it is there.
# Debian packages by name; a current CMake and matplotlib from PyPI when missing.
set -euo pipefail
source "$(dirname "$0")/path.sh"

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake ninja-build ccache g++ libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev \
           libopenblas-dev libhwy-dev libomp-dev python3-pip clang-format; do
  have_pkg "$pkg" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# CMake >= 3.28 (older releases do not know nvcc 13's C++20 dialect flag).
cmake_ok() {
  local v
  v=$(cmake --version 2>/dev/null | head -1 | awk '{print $3}') || return 1
  [ -n "$v" ] && [ "$(printf '%s\n3.28\n' "$v" | sort -V | head -1)" = "3.28" ]
}
py=python3
if ! cmake_ok; then
  echo "setup: installing a current CMake from PyPI"
  $py -m pip install -q --disable-pip-version-check "cmake>=3.28" 2>/dev/null ||
    $py -m pip install -q --disable-pip-version-check --break-system-packages "cmake>=3.28"
  hash -r
fi
cmake_ok || { echo "setup: CMake >= 3.28 is still missing" >&2; exit 1; }

# matplotlib draws the report plots (klab report --plot).
if ! $py -c "import matplotlib" 2>/dev/null; then
  echo "setup: installing matplotlib from PyPI"
  $py -m pip install -q --disable-pip-version-check matplotlib 2>/dev/null ||
    $py -m pip install -q --disable-pip-version-check --break-system-packages matplotlib
fi

# cuobjdump and nvdisasm (`klab sass`, also on machines without a GPU: `klab sass --kernel NAME`)
# where the CUDA toolkit lacks them: NVIDIA's wheels on PyPI, linked onto PATH.
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
  echo "setup: installing cuobjdump and nvdisasm from PyPI"
  $py -m pip install -q --disable-pip-version-check "nvidia-cuda-cuobjdump>=13,<14" "nvidia-cuda-nvdisasm>=13,<14" \
    2>/dev/null ||
    $py -m pip install -q --disable-pip-version-check --break-system-packages \
      "nvidia-cuda-cuobjdump>=13,<14" "nvidia-cuda-nvdisasm>=13,<14" || true
  bindir=$($py -c "import nvidia, os; print(next((os.path.join(p, 'cu13', 'bin') for p in nvidia.__path__
    if os.path.exists(os.path.join(p, 'cu13', 'bin', 'cuobjdump'))), ''))" 2>/dev/null || true)
  dest=/usr/local/bin
  [ -w "$dest" ] || { dest=$HOME/.local/bin; mkdir -p "$dest"; }
  for tool in cuobjdump nvdisasm; do
    [ -x "$bindir/$tool" ] && ln -sf "$bindir/$tool" "$dest/$tool"
  done
  command -v cuobjdump >/dev/null || echo "setup: cuobjdump is still missing: klab sass will say so" >&2
fi

# The cuDNN frontend's headers (attention.baseline_cudnn): header-only C++, taken from PyPI's
# nvidia-cudnn-frontend wheel into .deps/cudnn-frontend (git-ignored), where
# kernels/attention/sources.cmake looks for them. --no-deps: only the headers are used, not its
# Python dependencies (CUTLASS DSL, TVM FFI); --only-binary: never build its Python module. Pinned:
# a newer frontend may drop the calls the baseline makes. Without them (or without libcudnn) the
# build leaves the baseline out with a warning.
root=$(cd "$(dirname "$0")/.." && pwd)
fe_version=1.32.0
fe_dir=$root/.deps/cudnn-frontend
if { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; } &&
   [ ! -d "$fe_dir/nvidia_cudnn_frontend-$fe_version.dist-info" ]; then
  echo "setup: installing the cuDNN frontend's headers $fe_version from PyPI into .deps/cudnn-frontend"
  rm -rf "$fe_dir"
  fe_args=(-q --disable-pip-version-check --no-deps --only-binary=:all: --target "$fe_dir"
           "nvidia-cudnn-frontend==$fe_version")
  $py -m pip install "${fe_args[@]}" 2>/dev/null ||
    $py -m pip install --break-system-packages "${fe_args[@]}" ||
    echo "setup: the cuDNN frontend is missing: attention.baseline_cudnn will not be built" >&2
fi

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  echo "setup: no CUDA toolkit found: use the cpu-only preset (cmake --preset cpu-only)" >&2
exit 0

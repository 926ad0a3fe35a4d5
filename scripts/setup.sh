#!/usr/bin/env bash
# Create .venv and install Curator with its dev tools. Safe to run again: it skips
# the install when pyproject.toml has not changed since the last one.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: Curator needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if ! command -v git >/dev/null; then
    echo "error: git is not installed" >&2
    exit 1
fi

# clang compiles C/C++ to LLVM IR (`curator mine ir --build`) and OpenCL kernels to IR
# for their instruction count. Installed from Debian's packages when missing.
if ! command -v clang >/dev/null; then
    echo "setup: installing clang"
    sudo_cmd=""
    if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
    if command -v apt-get >/dev/null; then
        $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null 2>&1 \
            || { $sudo_cmd apt-get update -qq && $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null; }
    fi
    if ! command -v clang >/dev/null; then
        echo "error: clang is not installed and could not be installed with apt-get;" \
             "install clang (14 or newer) and run this again" >&2
        exit 1
    fi
fi

# PoCL's CPU device runs OpenCL kernels (`curator mine kernels`, `curator check kernels`).
# The PoCL wheel that pyopencl[pocl] brings cannot compile on CPUs its LLVM 14 does not
# know (it asks for target CPU "generic"), so Debian's build is installed as well; the
# kernel engine uses whichever device builds a probe kernel.
if [ ! -e /etc/OpenCL/vendors/pocl.icd ] && command -v apt-get >/dev/null; then
    echo "setup: installing pocl-opencl-icd"
    sudo_cmd=""
    if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pocl-opencl-icd >/dev/null 2>&1 \
        || { $sudo_cmd apt-get update -qq && $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pocl-opencl-icd >/dev/null; } \
        || echo "setup: warning: pocl-opencl-icd could not be installed; kernel checks may find no usable OpenCL device" >&2
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi

stamp=.venv/.curator-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c 'import curator' 2>/dev/null; then
    echo "setup: .venv is up to date"
    exit 0
fi

.venv/bin/python -m pip install --quiet --upgrade pip
# torch must come first: 2.13.0 resolves to the CPU wheel that lies on this machine;
# letting another package pull torch would download several GB of CUDA libraries.
if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    echo "setup: installing torch==2.13.0 (CPU)"
    .venv/bin/python -m pip install --quiet torch==2.13.0
fi
echo "setup: installing curator, its dev tools and the OpenVINO runtime"
.venv/bin/python -m pip install --quiet -e '.[dev,openvino]'
echo "$want" > "$stamp"
echo "setup: done"

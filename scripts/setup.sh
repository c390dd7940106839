#!/usr/bin/env bash
# Installs benchfp's Debian packages, then configures and builds into build/.
# Idempotent and non-interactive: safe to run again on a machine that has everything.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  libxbyak-dev libpfm4-dev libcli11-dev libgtest-dev libbenchmark-dev libdw-dev nlohmann-json3-dev
  libdnnl-dev  # oneDNN: the peer of --vs=onednn
  ocl-icd-opencl-dev  # libdnnl-dev's CMake config calls find_package(OpenCL); only a Recommends of it
  libprotobuf-dev protobuf-compiler zlib1g-dev  # pprof export of allocation profiles
  libcapstone-dev  # decodes emitted kernels: the frame verifier, the single-step checks, audit's culprits
  linux-perf  # scripts/perf_crosscheck.sh: the real perf as an independent oracle
  python3  # scripts/perf_crosscheck.sh reads perf script output with it; the report page test checks its screenshot
  python3-jsonschema  # scripts/validate_json.py: every JSON output against results/schemas (a ctest)
  golang-go  # `go tool pprof`: the ctest that reads every exported allocation profile as its readers do
  chromium fonts-dejavu-core  # headless: the HTML report page test (tests/browser) and the README screenshot
  luajit  # a JIT that is neither benchfp's nor oneDNN's, for the audit tests
  clang libclang-rt-14-dev  # scripts/fuzz.sh: the libFuzzer targets, with ASan and UBSan
  valgrind  # instruction counts of the allocator hook (scripts/alloc_hook_instructions.sh)
  git  # the commit every build stamps into `benchfp --version` (cmake/git_commit_stamp.cmake)
  libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev  # the allocator gate's peers (bench/alloc_gate.cpp)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE="${BENCHFP_BUILD_TYPE:-Release}"
cmake --build build -j "$(nproc)"

#!/usr/bin/env bash
# Builds the benchmarks optimised and runs each one; JSON lines go to stdout
# and to BUILD_DIR/bench/results.jsonl. Usage: scripts/bench.sh BUILD_DIR JOBS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-build}"
jobs="${2:-2}"
[[ "$build" = /* ]] || build="$root/$build"

cmake -S "$root" -B "$build/bench-release" -DCMAKE_BUILD_TYPE=Release -DCAROM_BUILD_BENCH=ON \
    -DCAROM_BUILD_TESTS=OFF -DCAROM_DATA_DIR="$build/data" >/dev/null
cmake --build "$build/bench-release" -j "$jobs"
mkdir -p "$build/bench"
out="$build/bench/results.jsonl"
: >"$out"
export CAROM_BENCH_OUT="$out"
# Every benchmark program: bench_* (bench_gjk, ...) and carom_bench_* (carom_bench_mid).
for exe in $(find "$build/bench-release/bench" -maxdepth 1 -type f -perm -u+x \
        \( -name 'bench_*' -o -name 'carom_bench_*' \) | sort); do
    echo "== $(basename "$exe")" >&2
    "$exe"
done
echo "results: $out" >&2

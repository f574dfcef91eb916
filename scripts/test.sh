#!/usr/bin/env bash
# Builds and runs every test twice:
#  1. gcc with AddressSanitizer + UndefinedBehaviorSanitizer, under ctest;
#  2. clang without sanitizers, each test under valgrind --leak-check=full.
# Both builds treat warnings as errors. Usage: scripts/test.sh BUILD_DIR JOBS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-build}"
jobs="${2:-2}"
[[ "$build" = /* ]] || build="$root/$build"
data="$build/data"

echo "== gcc, ASan + UBSan"
cmake -S "$root" -B "$build/test-gcc" -DCMAKE_BUILD_TYPE=Debug -DCAROM_SANITIZE=ON \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DCAROM_DATA_DIR="$data" >/dev/null
cmake --build "$build/test-gcc" -j "$jobs" -- --no-print-directory
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$build/test-gcc" && ctest --output-on-failure)

echo "== clang, valgrind"
# Debian 12's valgrind 3.19 cannot read clang 14's default DWARF 5.
cmake -S "$root" -B "$build/test-clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCAROM_DATA_DIR="$data" \
    -DCMAKE_C_FLAGS=-gdwarf-4 -DCMAKE_CXX_FLAGS=-gdwarf-4 >/dev/null
cmake --build "$build/test-clang" -j "$jobs" -- --no-print-directory
passed=0
failed=0
for exe in $(find "$build/test-clang/tests" -type f -perm -u+x \( -name 'test_*' -o -name 'selftest_*' \) | sort); do
    name=$(basename "$exe")
    if CAROM_TEST_LIGHT=1 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
        "$exe" >"$build/test-clang/$name.valgrind.log" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "valgrind: $name failed:"
        tail -n 40 "$build/test-clang/$name.valgrind.log"
    fi
done
echo "valgrind: $passed passed, $failed failed"
[[ $failed -eq 0 ]]

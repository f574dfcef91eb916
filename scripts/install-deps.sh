#!/usr/bin/env bash
# Installs the Debian packages carom needs for one purpose, and only those
# missing. Quiet when everything is present; a clear message when it cannot.
#   scripts/install-deps.sh build   compiler, CMake, cglm, stb, cmocka, qhull, assimp
#   scripts/install-deps.sh test    build + clang and valgrind (gcc brings ASan/UBSan)
#   scripts/install-deps.sh bench   build + the peers: libccd, FCL, Bullet
set -euo pipefail

build=(build-essential cmake pkg-config libcglm-dev libstb-dev libcmocka-dev libqhull-dev libassimp-dev)
test=(clang valgrind)
bench=(g++ libccd-dev libfcl-dev libbullet-dev)

want=("${build[@]}")
for purpose in "$@"; do
    case "$purpose" in
        build) ;;
        test) want+=("${test[@]}") ;;
        bench) want+=("${bench[@]}") ;;
        *) echo "install-deps: unknown purpose '$purpose' (build, test, bench)" >&2; exit 2 ;;
    esac
done

missing=()
for pkg in "${want[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    # -n: fail at once rather than wait for a password nobody will type.
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
        echo "install-deps: missing packages (${missing[*]}); run as root or install them with apt-get" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine are empty or stale: refresh once.
if ! "${sudo[@]}" apt-get update -qq; then
    echo "install-deps: apt-get update failed; is a Debian mirror reachable?" >&2
    exit 1
fi
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    echo "install-deps: apt-get install ${missing[*]} failed" >&2
    exit 1
fi

#!/usr/bin/env bash
# Fetches third-party meshes into build/data without installing anything
# system-wide: the .deb files are downloaded and unpacked, never installed.
#   build/data/meshes/*.off   CGAL's sample meshes (bunny00, armadillo, geosphere, ...)
#   build/data/assimp/...     assimp's test models (house, terrain, rock)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data="${1:-$root/build/data}"
stamp="$data/.fetched"
[[ -f "$stamp" ]] && exit 0

mkdir -p "$data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt-get download drops privileges to _apt, which must be able to write here.
chmod 777 "$work"
cd "$work"
echo "fetch-data: downloading libcgal-demo and assimp-testmodels"
if ! apt-get download -qq libcgal-demo assimp-testmodels >/dev/null 2>&1; then
    # Stale or empty package lists on a fresh machine: refresh and try once more.
    sudo=(); [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1 && sudo=(sudo -n)
    "${sudo[@]}" apt-get update -qq || true
    if ! apt-get download -qq libcgal-demo assimp-testmodels >/dev/null 2>&1; then
        echo "fetch-data: apt-get download failed; is a Debian mirror reachable?" >&2
        exit 1
    fi
fi
mkdir -p x
for deb in ./*.deb; do dpkg-deb -x "$deb" x; done

mkdir -p "$data/meshes" "$data/assimp"
tar -xzf x/usr/share/doc/libcgal-dev/data.tar.gz -C x
meshes=$(find x -path '*data/meshes' -type d | head -n 1)
[[ -n "$meshes" ]] || { echo "fetch-data: no data/meshes in libcgal-demo" >&2; exit 1; }
cp -r "$meshes"/. "$data/meshes/"
cp -r x/usr/share/assimp/models/. "$data/assimp/"
touch "$stamp"
echo "fetch-data: meshes in $data"

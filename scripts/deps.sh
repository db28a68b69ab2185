#!/usr/bin/env bash
# deps.sh: installs the Debian packages the build, the tests and the benches
# need, only those missing. Run by `make` (as root, through apt-get); a
# no-op when everything is there. Usage: scripts/deps.sh [--bench]
set -euo pipefail

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    echo "usage: scripts/deps.sh [--bench]"
    echo "Installs the missing Debian packages the build and tests need (--bench: also"
    echo "those of the benchmarks' peers). Needs root for apt-get; a no-op when all are there."
    exit 0
fi

# python3-jinja2: the generator's templates, for Debian's python3, the one
# scripts/python.sh picks first.
pkgs=(gcc make re2c check libjsmn-dev pkg-config libsubunit-dev python3 python3-jinja2 clang
      libclang-rt-14-dev libdeflate-dev libnghttp2-dev python3-grpcio haproxy)
if [ "${1:-}" = "--bench" ]; then
    pkgs+=(g++ libsimdjson-dev libcjson-dev jq gnuplot-nox)
fi

# One dpkg-query for all of them (make runs this script in every make it
# starts, so it must cost next to nothing when all are there): it prints
# the status of each package it knows, and nothing for one it has never
# heard of.
missing=()
status=$(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null || true)
for p in "${pkgs[@]}"; do
    [[ $'\n'$status$'\n' == *$'\n'"$p install ok installed"$'\n'* ]] && continue
    # without root, Jinja2 from elsewhere (pip, a virtualenv) serves as well:
    # scripts/python.sh finds whichever python3 has it
    [ "$p" = python3-jinja2 ] && [ "$(id -u)" -ne 0 ] &&
        "$(dirname "$0")/python.sh" -c 'import jinja2' >/dev/null 2>&1 && continue
    missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "deps.sh: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: need root to install: apt-get install ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

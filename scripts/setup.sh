#!/usr/bin/env bash
# Installs the Debian packages traceconv needs, and only those that are missing.
#   scripts/setup.sh build   compiler, cmake, protobuf-c, cJSON, zlib, libarchive, libmicrohttpd, xxhash
#   scripts/setup.sh test    build + the oracles the tests run (protoc, go, flamegraph.pl, Graphviz,
#                            xmllint, chromium; the schemas and checkers they use are in the repository)
#                            and GNU parallel (test_batch_shards: batch shards run by a real scheduler)
#                            and GNU time (test_bench_smoke runs bench/run.sh, which times with it)
#                            and clang (test_clang_warnings: make fuzz builds with it, its warnings differ)
#   scripts/setup.sh fuzz    test + clang and its fuzzer/sanitizer runtime
#   scripts/setup.sh demo    build + chromium (the demo's screenshots)
# test also needs node and npm (Debian's nodejs and npm when no node is on PATH) and runs
# npm ci in tests/browser (puppeteer-core, pinned by its package-lock.json) when its
# node_modules is missing: the browser tests drive Debian's chromium with it.
set -euo pipefail
mode=${1:-build}
pkgs=(cmake make gcc pkg-config python3 libprotobuf-c-dev protobuf-c-compiler libcjson-dev zlib1g-dev libarchive-dev
      libmicrohttpd-dev libxxhash-dev)
case "$mode" in
  build) ;;
  demo) pkgs+=(chromium) ;;
  bench) pkgs+=(time) ;;
  test) pkgs+=(protobuf-compiler golang-go libdevel-nytprof-perl zstd xz-utils libxml2-utils chromium parallel time clang)
        command -v node >/dev/null || pkgs+=(nodejs)
        command -v npm >/dev/null || pkgs+=(npm) ;;
  fuzz) pkgs+=(protobuf-compiler golang-go libdevel-nytprof-perl clang libclang-rt-14-dev) ;;
  *) echo "usage: $0 build|test|fuzz" >&2; exit 2 ;;
esac
# test_dot.py: Graphviz's dot reads every dot output (the oracle of the dot writer)
[ "$mode" = test ] && pkgs+=(graphviz)
# tests/browser/test_speedscope_browser.py runs speedscope's own importer (the npm package, pinned by
# tests/browser/speedscope/package-lock.json) in Debian's chromium: npm ci there, once, at the end
# of this script whichever way it ends (after apt-get, or when nothing was missing).
speedscope_oracle() {
  local status=$? dir
  dir=$(cd "$(dirname "$0")/.." && pwd)/tests/browser/speedscope
  [ "$status" -eq 0 ] && [ ! -f "$dir/node_modules/speedscope/dist/release/index.html" ] || return 0
  echo "setup: npm ci in tests/browser/speedscope"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || exit 1
}
if [ "$mode" = test ]; then
  pkgs+=(chromium)
  command -v node >/dev/null || pkgs+=(nodejs)
  command -v npm >/dev/null || pkgs+=(npm)
  trap speedscope_oracle EXIT
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "$mode" = test ] && [ ! -d "$(dirname "$0")/../tests/browser/node_modules/puppeteer-core" ]; then
  echo "setup: npm ci in tests/browser"
  (cd "$(dirname "$0")/../tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0

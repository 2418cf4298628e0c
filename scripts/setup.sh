#!/usr/bin/env bash
# Installs what traceconv needs, and only what is missing, with the platform's package manager:
# apt-get, dnf, pacman, apk or brew, the first found (brew alone on macOS). The packages of
# each platform are in scripts/packages.txt (the table CMake reads too, cmake/deps.cmake).
#   scripts/setup.sh build   compiler, make, cmake, pkg-config, python3, protobuf-c, cJSON, zlib,
#                            libarchive, libmicrohttpd, xxhash (what `make` needs; make build
#                            itself installs nothing, it names what is missing)
#   scripts/setup.sh test    build + the oracles the tests run (protoc, go, flamegraph.pl, Graphviz,
#                            xmllint, chromium; the schemas and checkers they use are in the repository)
#                            and GNU parallel (test_batch_shards: batch shards run by a real scheduler)
#                            and GNU time (test_bench_smoke runs bench/run.sh, which times with it)
#                            and clang (test_clang_warnings: make fuzz builds with it, its warnings differ)
#   scripts/setup.sh fuzz    build + clang and its fuzzer/sanitizer runtime, protoc, go, flamegraph.pl
#   scripts/setup.sh demo    build + chromium (the demo's screenshots)
#   scripts/setup.sh bench   build + GNU time
#   scripts/setup.sh --dry-run MODE   says what it would install and the commands, runs none
# test also needs node and npm (the platform's when no node is on PATH) and runs npm ci in
# tests/browser (puppeteer-core, pinned by its package-lock.json) when its node_modules is
# missing: the browser tests drive the system's chromium with it.
# On Debian and Ubuntu a package is missing when dpkg says it is not installed; elsewhere when
# the table's probe does not find it (pkg-config, PATH): another distribution's package names
# for the same thing vary (zlib-devel is zlib-ng-compat-devel on Fedora 40).
# With no package manager found: the list of what to install, and exit status 1.
set -euo pipefail
dry=0
if [ "${1:-}" = --dry-run ]; then
  dry=1
  shift
fi
mode=${1:-build}
case "$mode" in
  build|test|fuzz|demo|bench) ;;
  *) echo "usage: $0 [--dry-run] build|test|fuzz|demo|bench" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
table=$root/scripts/packages.txt

# The package manager, and its column of the table.
managers="apt-get dnf pacman apk brew"
[ "$(uname -s)" = Darwin ] && managers=brew
mgr=""
for m in $managers; do
  if command -v "$m" >/dev/null 2>&1; then mgr=$m; break; fi
done
case "$mgr" in
  apt-get) col=4 ;; dnf) col=5 ;; pacman) col=6 ;; apk) col=7 ;; brew) col=8 ;; *) col=0 ;;
esac

# tests/browser/test_speedscope_browser.py runs speedscope's own importer (the npm package, pinned by
# tests/browser/speedscope/package-lock.json) in the system's chromium: npm ci there, once, at the end
# of this script whichever way it ends (after the package manager, or when nothing was missing).
speedscope_oracle() {
  local status=$? dir
  dir=$root/tests/browser/speedscope
  [ "$status" -eq 0 ] && [ ! -f "$dir/node_modules/speedscope/dist/release/index.html" ] || return 0
  echo "setup: npm ci in tests/browser/speedscope"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || exit 1
}
[ "$mode" = test ] && [ "$dry" = 0 ] && trap speedscope_oracle EXIT

# Whether the thing a row needs is there, by its probe (pc:, cmd:, file:); 2: no probe.
probe() {
  local p=${1#+}
  case "$p" in
    pc:*) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "${p#pc:}" ;;
    cmd:*) command -v "${p#cmd:}" >/dev/null 2>&1 ;;
    file:*) [ -e "${p#file:}" ] ;;
    *) return 2 ;;
  esac
}

# Whether the package manager has the package installed (rows without a probe, and Debian).
installed() {
  case "$mgr" in
    apt-get) dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" ;;
    dnf) command -v rpm >/dev/null 2>&1 && rpm -q --whatprovides "$1" >/dev/null 2>&1 ;;
    pacman) pacman -Q "$1" >/dev/null 2>&1 ;;
    apk) apk info -e "$1" >/dev/null 2>&1 ;;
    brew) brew list --versions "$1" >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

missing=() unknown=() names=()
while read -r name modes probe_spec pkgs; do
  case ",$modes," in *",build,"*|*",$mode,"*) ;; *) continue ;; esac
  if [ "$col" = 0 ]; then # no package manager: what the probe does not find
    probe "$probe_spec" || names+=("$name")
    continue
  fi
  forced=0
  [ "${probe_spec#+}" = "$probe_spec" ] || forced=1
  if [ "$forced" = 1 ] || { [ "$mgr" != apt-get ] && [ "$probe_spec" != - ]; }; then
    probe "$probe_spec" && continue
  fi
  case "$pkgs" in
    -) continue ;;
    "?") unknown+=("$name"); continue ;;
  esac
  for p in ${pkgs//,/ }; do
    # Debian: dpkg's word, as always; elsewhere the probe said it is missing, or there is none
    if [ "$mgr" = apt-get ] || [ "$probe_spec" = - ] || [ "$forced" = 1 ]; then
      installed "$p" && continue
    fi
    case " ${missing[*]} " in *" $p "*) ;; *) missing+=("$p") ;; esac
  done
done < <(awk -v c="$col" '!/^#/ && NF >= 8 { print $1, $2, $3, (c ? $c : "-") }' "$table")

if [ "$col" = 0 ]; then
  if [ ${#names[@]} -gt 0 ]; then
    echo "setup: no package manager found (apt-get, dnf, pacman, apk or brew): install these with yours:" \
         "${names[*]} (the libraries with their development files)" >&2
    exit 1
  fi
  exit 0
fi
[ ${#unknown[@]} -eq 0 ] || echo "setup: no $mgr package known for: ${unknown[*]} (install them yourself)" >&2

sudo=""
[ "$mgr" = brew ] || [ "$(id -u)" -eq 0 ] || sudo="sudo"
run() {
  if [ "$dry" = 1 ]; then
    echo "setup: would run: $*"
  else
    "$@"
  fi
}
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} packages ($mgr): ${missing[*]}"
  case "$mgr" in
    apt-get)
      export DEBIAN_FRONTEND=noninteractive
      run $sudo apt-get update -qq
      if [ "$dry" = 1 ]; then
        run $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
      else
        $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
      fi ;;
    dnf) run $sudo dnf install -y -q "${missing[@]}" ;;
    pacman) run $sudo pacman -S --needed --noconfirm "${missing[@]}" ;;
    apk) run $sudo apk add -q "${missing[@]}" ;;
    brew) run brew install "${missing[@]}" ;;
  esac
fi
[ "$dry" = 0 ] || exit 0
if [ "$mode" = test ] && [ ! -d "$root/tests/browser/node_modules/puppeteer-core" ]; then
  echo "setup: npm ci in tests/browser"
  (cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0

#!/usr/bin/env bash
# dev.sh -- set up, build, demo and test fuseplan on a Debian machine.
#
#   ./dev.sh demo    install what is missing, build, run fuseplan on a bundled graph
#   ./dev.sh test    install what is missing, build, run the whole test suite
#                    (ruff on tools/, normal build with -Werror, ASan+UBSan
#                    build, distcheck)
#   ./dev.sh build   install what is missing and build only
#
# Builds go to build/ (normal) and build-asan/ (sanitizers); the source tree
# stays clean.  Needs root (or sudo) only when packages are missing.
set -euo pipefail

cd "$(dirname "$0")"
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

packages="build-essential autoconf automake libtool pkg-config libglpk-dev libcjson-dev check zlib1g-dev glpk-utils mandoc librsvg2-bin nettle-dev python3-venv openmpi-bin libopenmpi-dev"

install_deps() {
  missing=""
  for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "== installing:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

bootstrap() {
  [ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] && return 0
  echo "== autoreconf"
  autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
}

# configure_in DIR ARGS...: configure a build directory once (or again when
# configure changed).
configure_in() {
  dir=$1
  shift
  mkdir -p "$dir"
  if [ ! -f "$dir/config.status" ] || [ configure -nt "$dir/config.status" ]; then
    echo "== configure $dir $*"
    (cd "$dir" && "$top/configure" "$@" >/dev/null)
  fi
}

build() {
  install_deps
  bootstrap
  configure_in build --enable-werror
  echo "== make"
  make -s -C build -j"$jobs" >/dev/null
}

demo() {
  build
  fp=build/fuseplan
  g=data/graphs/volo_d1_224.bwd.json.gz
  ind=data/graphs/volo_d1_224.bwd.inductor.plan.json.gz
  echo
  echo "== fuseplan info $g   (PyTorch Inductor's pre-fusion graph, batch 64)"
  $fp info "$g"
  for m in greedy greedy-lowmem greedy-peak; do
    echo
    echo "== fuseplan solve $g --method $m -o build/demo.$m.plan.json"
    $fp solve "$g" --method "$m" -o "build/demo.$m.plan.json"
  done
  echo
  echo "== fuseplan solve $g --time-limit 20 -o build/demo.auto.plan.json   (auto: window ILPs + a lower bound)"
  $fp solve "$g" --time-limit 20 -o build/demo.auto.plan.json
  echo
  echo "== fuseplan compare $g <Inductor's own plan> build/demo.{greedy,greedy-lowmem,greedy-peak,auto}.plan.json"
  $fp compare "$g" "$ind" build/demo.greedy.plan.json \
    build/demo.greedy-lowmem.plan.json build/demo.greedy-peak.plan.json \
    build/demo.auto.plan.json
  echo
  echo "== fuseplan gen --family convnet --size 120 -o build/demo.small.json; solve; run   (execute the plan on the CPU)"
  $fp gen --family convnet --size 120 --seed 1 -o build/demo.small.json
  $fp solve build/demo.small.json -o build/demo.small.plan.json
  $fp run build/demo.small.json build/demo.small.plan.json
}

# torch_venv: the venv the PyTorch tests (tests/tools/test_exporter.sh,
# test_inductor.sh) run in, made once per machine and torch version in
# ${FUSEPLAN_CACHE:-~/.cache/fuseplan}/venv-torch-<version> with the pinned
# torch and timm from PyPI (a full torch: ~66 s, 5.3 GB), then reused; the
# package in tools/ is installed into it every time (seconds).  Exports
# FUSEPLAN_PYTHON.
torch_version=2.15.0
timm_version=1.0.31
torch_venv() {
  venv=${FUSEPLAN_CACHE:-$HOME/.cache/fuseplan}/venv-torch-$torch_version
  if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version as v
sys.exit(v('torch').split('+')[0] != '$torch_version' or v('timm') != '$timm_version')" \
    >/dev/null 2>&1; then
    echo "== venv $venv: torch $torch_version, timm $timm_version from PyPI"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "torch==$torch_version" "timm==$timm_version"
  fi
  pkg=$(mktemp -d)
  cp -r tools/pyproject.toml tools/README.md tools/fuseplan_inductor "$pkg/"
  # built with the venv's own setuptools and wheel: no download per run
  "$venv/bin/python" -c 'import setuptools, wheel' >/dev/null 2>&1 ||
    "$venv/bin/pip" install -q --disable-pip-version-check setuptools wheel
  "$venv/bin/pip" install -q --no-deps --no-build-isolation --disable-pip-version-check "$pkg"
  rm -rf "$pkg"
  export FUSEPLAN_PYTHON=$venv/bin/python
}

# python_lint: ruff, pinned, on tools/ (the package, its tests,
# export_inductor.py) with the rules of tools/pyproject.toml; installed
# from PyPI once per machine into a small venv,
# ${FUSEPLAN_CACHE:-~/.cache/fuseplan}/venv-ruff-<version>.
ruff_version=0.17.6
python_lint() {
  venv=${FUSEPLAN_CACHE:-$HOME/.cache/fuseplan}/venv-ruff-$ruff_version
  if ! "$venv/bin/ruff" --version 2>/dev/null | grep -qx "ruff $ruff_version"; then
    echo "== venv $venv: ruff $ruff_version from PyPI"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "ruff==$ruff_version"
  fi
  echo "== ruff check tools/"
  "$venv/bin/ruff" check --no-cache tools
}

test_all() {
  build
  python_lint
  torch_venv
  echo "== make check (build/)"
  make -s -C build -j"$jobs" check || { cat build/test-suite.log; exit 1; }
  # the PyTorch tests run once, above, not again under the sanitizers
  unset FUSEPLAN_PYTHON
  echo "== make check under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
  configure_in build-asan --enable-werror --enable-sanitizers --without-cuda CFLAGS="-O1 -g"
  # Sanitized code runs several times slower: scale Check's timeouts (and
  # the wall-clock slack the solver tests allow) accordingly.
  CK_TIMEOUT_MULTIPLIER=3 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    make -s -C build-asan -j"$jobs" check || { cat build-asan/test-suite.log; exit 1; }
  echo "== make distcheck"
  make -s -C build -j"$jobs" distcheck >/dev/null 2>build/distcheck.err ||
    { cat build/distcheck.err; exit 1; }
  echo "== format check"
  if command -v clang-format >/dev/null 2>&1; then
    make -s -C build format-check
  else
    echo "(clang-format not installed: skipped)"
  fi
  echo "== all tests passed"
}

case "${1:-}" in
  demo) demo ;;
  test) test_all ;;
  build) build ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac

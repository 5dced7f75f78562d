#!/usr/bin/env bash
# bench/gpu-validate.sh -- validate plans on a CUDA GPU (needs no network).
#
#   bench/gpu-validate.sh [OUT.md]      (from the source tree's root)
#
# 1. builds fuseplan --with-cuda into build-gpu/, -j$(nproc) (the kernels
#    are NVRTC-compiled at run time for --arch sm_90; NVCCFLAGS is passed
#    but nothing reads it);
# 2. runs the CUDA tests (NVRTC compile of every kernel of several plans;
#    the GPU run test, which must PASS here, not SKIP);
# 3. for several generated graphs and the corpus (data/graphs/*.json*,
#    when present), makes the eager, greedy, greedy-lowmem and ILP plans,
#    runs each with `fuseplan run --backend cuda --repeat 3 --json`, and
#    writes one Markdown table: predicted vs measured peak (and the pool's
#    high-water mark), traffic, measured time, and the time ratio to eager
#    beside the traffic ratio.
# Budget: under 8 minutes on one H200.  Every step has a timeout, and no
# new solve or run starts after FP_GPU_BUDGET_S seconds (default 300); the
# last one started may take a solve (ILP limit + 30 s) and a run (90 s)
# more, so the table is written within 300 + 135 s.
# Exit status: 0 when every run passed its check, 1 otherwise, 77 when no
# GPU is usable (nothing to validate).
# FP_GPU_BACKEND=cpu runs step 3 on the CPU backend instead and goes on
# without a GPU: a dry run of the script on a machine without one.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
out=${1:-$top/build-gpu/gpu-validate.md}
budget=${FP_GPU_BUDGET_S:-300}
ilp_limit=${FP_GPU_ILP_S:-15}
jobs=$(nproc 2>/dev/null || echo 4)
start=$(date +%s)
bd=$top/build-gpu
fp=$bd/fuseplan
work=$bd/gpu-validate
status=0
backend=${FP_GPU_BACKEND:-cuda}

say() { printf '== %s (%ds)\n' "$*" $(($(date +%s) - start)) >&2; }

# ---- 1. build ---------------------------------------------------------
say "build --with-cuda into build-gpu/"
# What the build needs, checked first: this machine may lack the network
# to install anything (dev.sh lists the Debian packages).
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing a C compiler"
[ -x configure ] || command -v autoreconf >/dev/null 2>&1 || missing="$missing autoconf/automake"
command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcjson check ||
  missing="$missing pkg-config+libcjson-dev+check"
[ -f /usr/include/glpk.h ] || missing="$missing libglpk-dev"
[ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1 || missing="$missing the CUDA toolkit"
if [ -n "$missing" ]; then
  echo "gpu-validate: missing:$missing" >&2
  exit 1
fi
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
  autoreconf -fi >/dev/null 2>&1 || exit 1
fi
mkdir -p "$bd" "$work"
if [ ! -f "$bd/config.status" ] || [ configure -nt "$bd/config.status" ]; then
  (cd "$bd" && "$top/configure" --with-cuda NVCCFLAGS="-O2 -arch=sm_90" \
    CFLAGS="-O2 -g" >/dev/null) || { echo "configure failed" >&2; exit 1; }
fi
timeout 240 make -s -C "$bd" -j"$jobs" >/dev/null || { echo "build failed" >&2; exit 1; }

# ---- 2. the CUDA tests -----------------------------------------------
say "CUDA tests"
timeout 240 make -s -C "$bd" -j"$jobs" check \
  TESTS="tests/cuda_exec/test_exec_cuda tests/cuda_exec/test_exec_gpu" >/dev/null 2>&1
cuda_rc=$?
for t in test_exec_cuda test_exec_gpu; do
  res=$(sed -n 's/^:test-result: //p' "$bd/tests/cuda_exec/$t.trs" 2>/dev/null)
  echo "$t: ${res:-NOT RUN}" >&2
  # A dry run (FP_GPU_BACKEND=cpu) expects the GPU test to skip.
  [ "$res" = PASS ] || { [ "$backend" = cpu ] && [ "$res" = SKIP ]; } || status=1
done
[ $cuda_rc -eq 0 ] || status=1
if [ "$backend" = cuda ] && grep -q '^SKIP' "$bd/tests/cuda_exec/test_exec_gpu.log" 2>/dev/null; then
  echo "no usable GPU: $(grep -m1 SKIP "$bd/tests/cuda_exec/test_exec_gpu.log")" >&2
  exit 77
fi

# ---- 3. plans on the GPU ----------------------------------------------
# jnum OBJ KEY FILE: a number inside the nested object "OBJ": {...}
# (integer or decimal), or KEY at the top level when OBJ is "-".
jnum() {
  awk -v o="\"$1\": {" -v k="\"$2\":" '{
    s = $0
    if (o != "\"-\": {") { i = index(s, o); if (!i) next; s = substr(s, i + length(o)); s = substr(s, 1, index(s, "}")) }
    j = index(s, k); if (!j) next
    s = substr(s, j + length(k)); sub(/^ */, "", s)
    if (match(s, /^-?[0-9.eE+-]+/)) { print substr(s, 1, RLENGTH); exit }
  }' "$3"
}
jstr() { sed -n "s/.*\"$1\": \"\\([a-z]*\\)\".*/\\1/p" "$2" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

graphs=()
# Generated: one of each family, sizes that keep the CPU reference run
# (the check) to seconds.
for spec in transformer:100:2 convnet:200:2 mlp:100:2 random:200:3; do
  IFS=: read -r fam size seed <<<"$spec"
  g=$work/gen-$fam-$size-s$seed.json
  "$fp" gen --family "$fam" --size "$size" --seed "$seed" -o "$g" && graphs+=("$g")
done
for g in "$top"/data/graphs/*.json "$top"/data/graphs/*.json.gz; do
  [ -f "$g" ] && graphs+=("$g")
done

{
  echo "### Plans run on $backend ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1))"
  echo
  echo "\`bench/gpu-validate.sh\`, $(date -u +%Y-%m-%d).  \`fuseplan run --backend $backend --repeat 3\`:"
  echo "time is the fastest of 3 runs (CUDA events around each group's launches),"
  echo "peak the tracking allocator's (declared bytes; pool = the stream-ordered"
  echo "pool's used high-water mark, with its rounding), traffic the bytes the"
  echo "generated kernels load and store; ratios are to the eager plan of the"
  echo "same graph.  check: outputs within tolerance of the CPU eager run and"
  echo "measured peak and traffic equal to the prediction."
  echo
  echo "| graph | plan | kernels | launches | peak predicted | peak measured | pool high | traffic | time ms | traffic / eager | time / eager | max abs err | check |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
} >"$out.tmp"

for g in "${graphs[@]}"; do
  if [ $(($(date +%s) - start)) -gt "$budget" ]; then
    say "time budget spent: skipping $(basename "$g") and the rest"
    echo "| $(basename "$g") | (skipped: time budget) | | | | | | | | | | | | |" >>"$out.tmp"
    continue
  fi
  name=$(basename "$g")
  say "$name"
  eager_t=""
  eager_time=""
  for m in eager greedy greedy-lowmem ilp; do
    if [ $(($(date +%s) - start)) -gt "$budget" ]; then
      echo "| $name | $m (skipped: time budget) | | | | | | | | | | | |" >>"$out.tmp"
      continue
    fi
    p=$work/$name.$m.plan.json
    extra=()
    [ "$m" = ilp ] && extra=(--time-limit "$ilp_limit")
    if ! timeout $((ilp_limit + 30)) "$fp" solve "$g" --method "$m" "${extra[@]}" -o "$p" >/dev/null 2>"$p.err"; then
      echo "| $name | $m | (solve failed: $(head -c 80 "$p.err" | tr '\n|' '  ')) | | | | | | | | | | |" >>"$out.tmp"
      status=1
      continue
    fi
    r=$work/$name.$m.run.json
    timeout 90 "$fp" run "$g" "$p" --backend "$backend" --repeat 3 \
      --memory-limit "${FP_GPU_MEMORY:-96GiB}" --json >"$r" 2>"$r.err"
    rc=$?
    if [ ! -s "$r" ]; then
      echo "| $name | $m | (run failed, exit $rc: $(head -c 80 "$r.err" | tr '\n|' '  ')) | | | | | | | | | | |" >>"$out.tmp"
      status=1
      continue
    fi
    [ $rc -eq 0 ] || status=1
    traffic=$(jnum measured traffic_bytes "$r")
    time_s=$(jnum measured time_s "$r")
    if [ "$m" = eager ]; then
      eager_t=$traffic
      eager_time=$time_s
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
      "$name" "$m" "$(jnum measured kernels "$r")" "$(jnum measured launches "$r")" \
      "$(jnum predicted peak_bytes "$r")" "$(jnum measured peak_bytes "$r")" \
      "$(jnum measured pool_used_high "$r")" "$traffic" \
      "$(awk -v t="$time_s" 'BEGIN { printf "%.3f", 1000 * t }')" \
      "$(ratio "$traffic" "${eager_t:-0}")" "$(ratio "$time_s" "${eager_time:-0}")" \
      "$(jnum - max_abs_err "$r")" "$(jstr check "$r")" >>"$out.tmp"
  done
done
{
  echo
  echo "Total $(($(date +%s) - start)) s; $([ $status -eq 0 ] && echo "every test and run passed" || echo "FAILURES: see the rows above and the script's log")."
} >>"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
say "table written to $out"
exit $status

#!/bin/sh
# make_plots.sh -- remakes the plots shown in docs/plots.md (docs/img/*.png):
# `make plots` runs it with FUSEPLAN and top_srcdir set.
#
#   pareto-resnet50.bwd.png   fuseplan pareto on ResNet-50's backward graph,
#                             Inductor's own plan given with --start
#   pareto-random12.png       the same on a 12-node generated graph, whose
#                             front has a real trade-off
#   timeline-resnet50.bwd.png fuseplan compare --timeline: live memory of
#                             eager, Inductor's plan and fuseplan's auto plan
#
# The SVGs fuseplan writes are rendered with rsvg-convert (librsvg2-bin).
# The solves run under time limits, so the figures can differ a little
# from run to run.
set -eu
: "${top_srcdir:=.}"
: "${FUSEPLAN:=$top_srcdir/build/fuseplan}"
command -v rsvg-convert >/dev/null 2>&1 || {
  echo "make_plots.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2
  exit 1
}
out=$top_srcdir/docs/img
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuseplan-plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

g=$top_srcdir/data/graphs/resnet50.bwd.json.gz
ind=$top_srcdir/data/graphs/resnet50.bwd.inductor.plan.json.gz
set -x
"$FUSEPLAN" pareto "$g" --points 5 --time-limit 30 --start "$ind" \
  --svg "$tmp/pareto-resnet50.bwd.svg" >/dev/null
"$FUSEPLAN" solve "$g" --time-limit 20 -q -o "$tmp/auto.plan.json"
"$FUSEPLAN" solve "$g" --method eager -q -o "$tmp/eager.plan.json"
"$FUSEPLAN" compare "$g" "$tmp/eager.plan.json" "$ind" "$tmp/auto.plan.json" \
  --timeline "$tmp/timeline-resnet50.bwd.svg" >/dev/null
"$FUSEPLAN" gen --family random --size 12 --seed 5 -o "$tmp/random12.json"
"$FUSEPLAN" pareto "$tmp/random12.json" --points 6 --time-limit 20 \
  --svg "$tmp/pareto-random12.svg" >/dev/null
set +x
for f in pareto-resnet50.bwd timeline-resnet50.bwd pareto-random12; do
  rsvg-convert "$tmp/$f.svg" -o "$out/$f.png"
  echo "wrote $out/$f.png"
done

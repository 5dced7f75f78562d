#!/bin/sh
# test_plots.sh -- the SVG plots render in a real SVG renderer
# (rsvg-convert, from librsvg2-bin) to a PNG that is not blank, and hold
# what a reader needs: axis ticks in binary units, axis titles with units,
# a legend, the eager point, a plan given with --start labelled by its
# solver.method, every plan's peak, and tooltips naming kernels.  Skipped
# (77) without rsvg-convert.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

command -v rsvg-convert >/dev/null 2>&1 || {
  echo 'SKIP: rsvg-convert not installed (apt-get install librsvg2-bin)'
  exit 77
}

# render SVG: renders to SVG.png; the PNG must be much larger than a blank
# canvas of the same size rendered the same way (a white PNG compresses to
# almost nothing; text and lines do not).
render() {
  t_run rsvg-convert "$1" -o "$1.png"
  t_exit 0 || return 1
  w=$(sed -n "s/^<svg [^>]*width='\([0-9]*\)'.*/\1/p" "$1" | head -n 1)
  h=$(sed -n "s/^<svg [^>]*height='\([0-9]*\)'.*/\1/p" "$1" | head -n 1)
  printf "<svg xmlns='http://www.w3.org/2000/svg' width='%s' height='%s'><rect width='100%%' height='100%%' fill='white'/></svg>\n" \
    "$w" "$h" >"$T_TMP/blank.svg"
  rsvg-convert "$T_TMP/blank.svg" -o "$T_TMP/blank.png" || return 1
  got=$(wc -c <"$1.png")
  blank=$(wc -c <"$T_TMP/blank.png")
  t_true "$1.png ($got bytes) is no larger than a blank canvas ($blank bytes)" \
    test "$got" -gt $((blank * 5))
}

g=$T_TMP/g.json
"$FUSEPLAN" gen --family transformer --size 60 --seed 3 -o "$g" || exit 1
"$FUSEPLAN" solve "$g" --method greedy -o "$T_TMP/greedy.plan.json" -q || exit 1
# A plan from "another compiler": greedy's grouping, its own method name.
sed 's/"method": "greedy"/"method": "othercc"/' "$T_TMP/greedy.plan.json" \
  >"$T_TMP/other.plan.json"
"$FUSEPLAN" solve "$g" --method eager -o "$T_TMP/eager.plan.json" -q || exit 1

t_case 'pareto --svg with --start'
t_run "$FUSEPLAN" pareto "$g" --points 3 --time-limit 3 \
  --start "$T_TMP/other.plan.json" --svg "$T_TMP/front.svg"
t_exit 0
svg=$(cat "$T_TMP/front.svg")
for want in 'KiB\|MiB' 'peak live memory (' 'memory traffic, bytes read + written (' \
  '>eager<' '>othercc<' '>greedy<' 'given plan (--start)' '<title>othercc: traffic'; do
  t_true "front.svg lacks $want" sh -c "printf '%s' \"\$1\" | grep -q \"\$2\"" - "$svg" "$want"
done
render "$T_TMP/front.svg"

t_case 'eval --timeline F.svg'
t_run "$FUSEPLAN" eval "$g" "$T_TMP/greedy.plan.json" --timeline "$T_TMP/one.svg"
t_exit 0
t_true 'one.svg has a peak label' grep -q '>peak [0-9.]* [KMG]\?i\?B<' "$T_TMP/one.svg"
t_true 'one.svg names the kernel of step 0' grep -q '<title>greedy, step 0: kernel ' "$T_TMP/one.svg"
render "$T_TMP/one.svg"

t_case 'compare --timeline F.svg overlays the plans'
t_run "$FUSEPLAN" compare "$g" "$T_TMP/greedy.plan.json" "$T_TMP/eager.plan.json" \
  --timeline "$T_TMP/cmp.svg"
t_exit 0
t_eq 'curves' "$(grep -c '^<polyline' "$T_TMP/cmp.svg")" 2
t_true 'the peak of each' sh -c "grep -q '>greedy: peak ' '$T_TMP/cmp.svg' && grep -q '>eager: peak ' '$T_TMP/cmp.svg'"
render "$T_TMP/cmp.svg"

t_case 'compare --timeline needs .svg'
t_run "$FUSEPLAN" compare "$g" "$T_TMP/greedy.plan.json" --timeline "$T_TMP/x.csv"
t_exit 2

t_finish

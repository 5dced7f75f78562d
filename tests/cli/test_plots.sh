#!/bin/sh
# test_plots.sh -- the SVG plots render in a real SVG renderer
# (rsvg-convert, from librsvg2-bin) to a PNG that is not blank, and hold
# what a reader needs: axis ticks in binary units, axis titles with units,
# a legend, the eager point, a plan given with --start labelled by its
# solver.method, every plan's peak, and tooltips naming kernels.  Every
# SVG the command writes (eval and compare --timeline, pareto --svg,
# batch report --svg) is well-formed XML with only the elements drawn,
# under hostile names: markup, quotes, ESC, BEL, a C1 control, U+FFFE,
# tab and newline in graph, node and method names, invalid UTF-8 in a
# plan's file name and in a method name cut mid-character, a 300-byte
# name (checked with python3's expat).  Skipped (77) without
# rsvg-convert.

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

# ---- hostile names ----------------------------------------------------------

# well_formed SVG [TEXT]: SVG parses as XML (expat), holds no element but
# those the plots draw (no <script>), and, given TEXT, holds it verbatim
# in some text or tooltip (escaped on the way in, not dropped).
well_formed() {
  t_true "$1 is not well-formed XML with the expected elements and text" \
    python3 - "$1" "${2-}" <<'EOF_PY'
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
drawn = {'svg', 'rect', 'text', 'line', 'polyline', 'polygon', 'circle', 'g',
         'title'}
names = {e.tagName for e in doc.getElementsByTagName('*')}
if names - drawn:
    sys.exit('unexpected elements: %s' % sorted(names - drawn))
texts = [n.data for e in doc.getElementsByTagName('*') for n in e.childNodes
         if n.nodeType == n.TEXT_NODE]
if sys.argv[2] and not any(sys.argv[2] in t for t in texts):
    sys.exit('%r not in any text' % sys.argv[2])
EOF_PY
}

if ! command -v python3 >/dev/null 2>&1; then
  echo 'note: no python3: the XML checks of hostile names are skipped' >&2
  t_finish
fi

evil='<script>alert("x")</script>&'"'"'q'
h=$T_TMP/hostile
mkdir -p "$h"
# A graph and its first node named with markup, quotes, ESC, BEL, a C1
# control, U+FFFE, tab and newline (JSON allows them all); the graph's
# name 300 bytes longer.  Plans with such a solver.method.
"$FUSEPLAN" gen --family random --size 10 --seed 3 -o "$h/src.json" || exit 1
python3 - "$h" "$evil" <<'EOF_PY' || exit 1
import json, sys
h, evil = sys.argv[1:]
bad = evil + ' \x1b[2J\x07\x85\ufffe\t\n end'
g = json.load(open(h + '/src.json'))
old = g['nodes'][0]['name']
g = json.loads(json.dumps(g).replace(json.dumps(old), json.dumps('node' + bad)))
g['name'] = bad + ' ' + 'L' * 300
json.dump(g, open(h + '/g.json', 'w'))
EOF_PY
"$FUSEPLAN" solve "$h/g.json" --method greedy -o "$h/greedy.plan.json" -q || exit 1
"$FUSEPLAN" solve "$h/g.json" --method eager -o "$h/eager.plan.json" -q || exit 1
for m in greedy eager; do
  python3 - "$h/$m.plan.json" "$evil" "$m" <<'EOF_PY' || exit 1
import json, sys
path, evil, m = sys.argv[1:]
p = json.load(open(path))
p['solver']['method'] = evil + ' \x1b]0;' + m + '\x07'
json.dump(p, open(path, 'w'))
EOF_PY
done
# A plan file whose name holds markup and bytes that are not UTF-8.
bad_file=$h/$(printf 'p<&\377\303x.plan.json')
cp "$h/greedy.plan.json" "$bad_file"

t_case 'eval --timeline: hostile graph, node and file names'
t_run "$FUSEPLAN" eval "$h/g.json" "$bad_file" --timeline "$h/one.svg"
t_exit 0 && well_formed "$h/one.svg" "$evil"
t_true 'the node is named in a tooltip' grep -q 'kernel node&lt;script&gt;' "$h/one.svg"

t_case 'compare --timeline: hostile plan names'
t_run "$FUSEPLAN" compare "$h/g.json" "$h/greedy.plan.json" \
  "$h/eager.plan.json" --timeline "$h/cmp.svg"
t_exit 0 && well_formed "$h/cmp.svg" "$evil"

t_case 'pareto --svg: hostile graph and --start names'
t_run "$FUSEPLAN" pareto "$h/g.json" --points 2 --time-limit 2 \
  --start "$h/greedy.plan.json" --svg "$h/front.svg"
t_exit 0 && well_formed "$h/front.svg" "$evil"

t_case 'batch report --svg: hostile method names'
# index.jsonl by hand: gold items with methods named with markup, with
# ESC and BEL, and one whose name the record's 31 bytes cut inside a
# character (invalid UTF-8 left).
mkdir -p "$h/ds"
python3 - "$h/ds/index.jsonl" "$evil" <<'EOF_PY' || exit 1
import json, sys
path, evil = sys.argv[1:]
methods = [evil, 'esc\x1b[2J\x07bel', 'a' * 30 + '\u00e9', 'greedy']
with open(path, 'w') as f:
    for i in range(6):
        r = {'id': '%064x' % i, 'graph': 'g\x1b%d' % i, 'status': 'optimal',
             'gold': True, 'traffic_bytes': 1000, 'peak_bytes': 1000,
             'compare': methods}
        for k, m in enumerate(methods):
            key = m.replace('-', '_')
            r[key + '_traffic_bytes'] = 1000 + i * k * 7
            r[key + '_peak_bytes'] = 1000 - i * k
        f.write(json.dumps(r) + '\n')
EOF_PY
t_run "$FUSEPLAN" batch report "$h/ds" --svg "$h/report.svg"
t_exit 0 && well_formed "$h/report.svg" "$evil"
t_true 'the peak beside the traffic' grep -q 'excess peak over gold' "$h/report.svg"

for f in one cmp front report; do
  [ -s "$h/$f.svg" ] && render "$h/$f.svg"
done

t_finish

#!/bin/sh
# data/exported/regenerate.sh -- re-exports the graphs beyond the corpus
# with tools/export_inductor.py and prints the table of README.md.
#
# Usage: PYTHON=/path/to/venv/bin/python data/exported/regenerate.sh
# (a python with the torch and timm of tools/requirements.txt).  Nothing is
# compiled or executed: about 26 minutes on 2 shared cores with the oracle
# (80 to 490 s per model, printed on stderr).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
# one export, timed (wall seconds on stderr; the oracle on, 500 groups)
ex() {
  t0=$(date +%s)
  nice "$py" "$top/tools/export_inductor.py" --out "$here" "$@"
  echo "regenerate: $*: $(($(date +%s) - t0)) s" >&2
}

if [ "${1:-}" != --table-only ]; then
  for m in resmlp_12_224 poolformer_s12 efficientnet_b0 \
    swin_tiny_patch4_window7_224 levit_128 mobilevit_s; do
    ex "$m" --batch 64
  done
fi
PYTHON=$py sh "$top/data/graphs/regenerate.sh" --table-only "$here"

#!/bin/sh
# test_links.sh -- every relative link of README.md, docs/*.md and the
# data READMEs points at a file of the tree, and every #anchor at a
# heading of its page (GitHub's slugs), so moving a section cannot leave
# a link behind.  The checker is also run on a page with one broken file
# link and one broken anchor, and must report both: a test of the test.

# shellcheck source=tests/cli/lib.sh
. "${top_srcdir:-.}/tests/cli/lib.sh"
t_init

# check_links ROOT FILE...: one line per broken link, "FILE:LINE: ...".
check_links() {
  python3 - "$@" <<'PY'
import os, re, sys
root, pages = sys.argv[1], sys.argv[2:]
def slug(h):
    h = re.sub(r'^#+\s*', '', h).strip().lower()
    return re.sub(r'[^\w\- ]', '', h).replace(' ', '-')
def headings(p):
    out, fence = set(), False
    for l in open(p, encoding='utf-8'):
        fence ^= l.startswith('```')
        if not fence and re.match(r'^#+ ', l):
            out.add(slug(l))
    return out
for p in pages:
    fence = False
    for n, l in enumerate(open(p, encoding='utf-8'), 1):
        fence ^= l.startswith('```')
        if fence:
            continue
        for m in re.finditer(r'\]\(([^)\s]+)\)', l):
            t = m.group(1)
            if re.match(r'^(https?:|mailto:)', t):
                continue
            f, _, a = t.partition('#')
            fp = os.path.normpath(os.path.join(os.path.dirname(p), f)) if f else p
            name = os.path.relpath(p, root)
            if not os.path.exists(fp):
                print(f'{name}:{n}: no file {t}')
            elif a and fp.endswith('.md') and a not in headings(fp):
                print(f'{name}:{n}: no heading for {t}')
PY
}

t_case 'links of README.md, docs/ and data/ resolve'
check_links "$top_srcdir" "$top_srcdir/README.md" "$top_srcdir"/docs/*.md \
  "$top_srcdir"/data/*/README.md >"$T_TMP/broken"
t_true "broken links: $(cat "$T_TMP/broken")" test ! -s "$T_TMP/broken"

t_case 'the checker reports a missing file and a missing heading'
mkdir -p "$T_TMP/tree"
printf '# Page\n\n[a](gone.md) [b](#page) [c](#nowhere)\n' >"$T_TMP/tree/p.md"
check_links "$T_TMP/tree" "$T_TMP/tree/p.md" >"$T_TMP/found"
t_eq 'findings' "$(cat "$T_TMP/found")" "p.md:3: no file gone.md
p.md:3: no heading for #nowhere"

t_finish

"""Self-check for p12 output: python3 check.py SEED [SEED...] (run gen.py first)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
from common import STATIC  # noqa: E402

W = 12


def exempt(window):
    return any(window in s for s in STATIC)


def check(seed):
    od = os.path.join(HERE, 'out_%s' % seed)
    manifest = json.load(open(os.path.join(od, 'manifest.json'), encoding='utf-8'))
    secrets = json.load(open(os.path.join(od, 'secrets.json'), encoding='utf-8'))
    files, man2, sec2, raw = gen.build(seed)
    errs = []
    if man2 != manifest or sec2 != secrets:
        errs.append('rebuild differs from written output (not deterministic?)')
    pos = [m for m in manifest if m['kind'] == 'pos']
    neg = [m for m in manifest if m['kind'] == 'neg']
    if len(pos) != 160 or len(neg) != 130:
        errs.append('counts %d/%d' % (len(pos), len(neg)))
    for m in pos:
        s = secrets.get(m['file'])
        if not s:
            errs.append('no secrets entry: ' + m['file'])
            continue
        lines = open(os.path.join(od, m['file']), encoding='utf-8', newline='').read().split('\n')
        if lines[s['line'] - 1] != s['text']:
            errs.append('line mismatch: ' + m['file'])
        if raw[m['file']] not in s['text']:
            errs.append('secret not on line: ' + m['file'])
    windows = {}
    for f, sv in raw.items():
        for i in range(len(sv) - W + 1):
            w = sv[i:i + W]
            if not exempt(w):
                windows.setdefault(w, f)
    for m in neg:
        text = open(os.path.join(od, m['file']), encoding='utf-8').read()
        for i in range(len(text) - W + 1):
            w = text[i:i + W]
            if w in windows:
                errs.append('neg %s shares %r with %s' % (m['file'], w, windows[w]))
                break
    fams = sorted({m['family'] for m in pos})
    print('seed %s: %d pos (%d families), %d neg, %d problems' % (seed, len(pos), len(fams), len(neg), len(errs)))
    for e in errs[:30]:
        print('  ' + e)
    return not errs


if __name__ == '__main__':
    ok = all([check(s) for s in sys.argv[1:]])
    sys.exit(0 if ok else 1)

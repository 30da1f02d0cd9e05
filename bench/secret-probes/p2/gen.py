#!/usr/bin/env python3
"""Usage: gen.py SEED [NPOS] [NNEG]  -> /tmp/blind2/out_SEED/{pos,neg}/NNN/<home path>, manifest.json"""
import sys, os, json, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vals
from vals import R

def main():
    seed = int(sys.argv[1])
    npos = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    nneg = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    vals.seed(seed)
    from pos import POS
    from neg import NEG
    base = '/tmp/blind2/out_%d' % seed
    shutil.rmtree(base, ignore_errors=True)

    def plan(templates, n):
        order = list(templates)
        R.shuffle(order)
        while len(order) < n:
            order.append(R.choice(templates))
        return order[:n] if n >= len(templates) else order[:n]

    manifest = []
    for i, f in enumerate(plan(POS, npos)):
        path, content, secret = f()
        lines = content.split('\n')
        ln = next((k + 1 for k, l in enumerate(lines) if secret in l), None)
        assert ln, (f.__name__, secret, content)
        rel = 'pos/%03d/%s' % (i, path)
        full = os.path.join(base, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as fh:
            fh.write(content)
        manifest.append({'kind': 'pos', 'template': f.__name__, 'path': rel, 'secret': secret, 'line': ln,
                         'line_text': lines[ln - 1].strip()[:300]})
    for i, f in enumerate(plan(NEG, nneg)):
        path, content = f()
        rel = 'neg/%03d/%s' % (i, path)
        full = os.path.join(base, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as fh:
            fh.write(content)
        manifest.append({'kind': 'neg', 'template': f.__name__, 'path': rel})
    with open(os.path.join(base, 'manifest.json'), 'w') as fh:
        json.dump({'seed': seed, 'entries': manifest}, fh, indent=1)
    print('%s: %d pos, %d neg (templates: %d pos, %d neg)' % (base, npos, nneg, len(POS), len(NEG)))

if __name__ == '__main__':
    main()

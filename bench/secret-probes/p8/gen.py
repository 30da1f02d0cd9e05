#!/usr/bin/env python3
"""p8 outsider probe corpus generator: python3 gen.py SEED -> out_SEED/{pos,neg}, manifest.json, secrets.json"""
import sys, os, re, json, random, shutil
import vals
from cases_pos import P
from cases_neg import N

HERE = os.path.dirname(os.path.abspath(__file__))
PH = re.compile(r'@@(!?)([a-z0-9_]+)(?::([a-z0-9]+))?@@')

class G:
    def __init__(self, seed):
        self.r = random.Random('p8-%s' % seed)
        self.ctx = {}
    def s(self, n, alpha=vals.AN):
        return ''.join(self.r.choice(alpha) for _ in range(n))
    def hx(self, n):
        return self.s(n, vals.HEX)
    def pick(self, seq):
        return self.r.choice(seq)

def fill(text, g, cache, secrets):
    def rep(m):
        bang, name, key = m.groups()
        if key and (name, key) in cache:
            return cache[(name, key)]
        val = vals.VAL[name](g)
        if key:
            cache[(name, key)] = val
        if bang:
            secrets.append(val)
        return val
    return PH.sub(rep, text)

def locate(content, secret):
    lines = [l.strip() for l in secret.strip().split('\n')]
    cands = [l for l in lines if len(l) >= 10] or lines
    pref = [l for l in cands if '"d"' in l or 'PRIVATE KEY-----' in l]
    first = (pref or cands)[0][:40]
    for i, line in enumerate(content.split('\n'), 1):
        if first and first in line:
            return i, line
    return 0, '(not located)'

def main():
    seed = sys.argv[1]
    g = G(seed)
    out = os.path.join(HERE, 'out_%s' % seed)
    if os.path.exists(out):
        shutil.rmtree(out)
    manifest, secmap = [], {}
    for kind, cases in (('pos', P), ('neg', N)):
        for idx, (family, path, tmpls, note) in enumerate(cases, 1):
            g.ctx = {}
            cache, secrets = {}, []
            tmpl = g.pick(tmpls)
            rel = fill(path, g, cache, [])
            content = fill(tmpl, g, cache, secrets)
            f = '%s/h%03d/%s' % (kind, idx, rel)
            full = os.path.join(out, f)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as fh:
                fh.write(content)
            if kind == 'pos':
                assert len(secrets) == 1, (f, secrets)
                ln, line = locate(content, secrets[0])
                secmap[f] = {'line': ln, 'text': line}
            else:
                assert not secrets, f
            manifest.append({'file': f, 'kind': kind, 'family': family, 'note': note})
    with open(os.path.join(out, 'manifest.json'), 'w') as fh:
        json.dump(manifest, fh, indent=1)
    with open(os.path.join(out, 'secrets.json'), 'w') as fh:
        json.dump(secmap, fh, indent=1)
    npos = sum(1 for m in manifest if m['kind'] == 'pos')
    print('seed %s: wrote %d positives, %d negatives to %s' % (seed, npos, len(manifest) - npos, out))

if __name__ == '__main__':
    main()

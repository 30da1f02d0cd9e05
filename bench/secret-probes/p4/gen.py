#!/usr/bin/env python3
"""p4 outsider probe: provider-token breadth corpus.  usage: python3 gen.py SEED
Writes out_SEED/pos/caseNNN/<home-relative path>, out_SEED/neg/caseNNN/<...>, out_SEED/manifest.json."""
import json, os, random, shutil, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import b64
from providers import PROVIDERS
from negatives import NEGS
import contexts

NO_CRLF = ('.ipynb', '.json', '.pem', '.key', '.p8', '.ppk')


def secret_line(text, spec):
    needles = [spec.needle] if spec.needle else []
    v = spec.value
    needles += [v, v.split('\n')[0], b64(v), v[:40]]
    for n in needles:
        if not n:
            continue
        for line in text.split('\n'):
            if n in line:
                return line.rstrip('\r')[:300]
    return '?'


def main():
    seed = int(sys.argv[1])
    rng = random.Random(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, f'out_{seed}')
    if os.path.exists(out):
        shutil.rmtree(out)
    manifest = []

    def write(rel, text, crlf=False):
        p = os.path.join(out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if crlf and '\r\n' not in text:
            text = text.replace('\n', '\r\n')
        with open(p, 'w', newline='') as f:
            f.write(text)

    # ---------------- positives: one credential per file, one file per case
    order = list(PROVIDERS)
    rng.shuffle(order)
    for i, (_, fn) in enumerate(order, 1):
        spec = fn(rng)
        if spec.natives and (not spec.generic or rng.random() < .45):
            path, text, ctx = rng.choice(spec.natives)
        else:
            path, text, ctx = contexts.pick_generic(rng)(rng, spec)
        crlf = not path.endswith(NO_CRLF) and '\r\n' not in text and rng.random() < .15
        rel = f'pos/case{i:03d}/{path}'
        write(rel, text, crlf)
        manifest.append({'file': rel, 'kind': 'pos', 'provider': spec.provider, 'context': ctx + ('+crlf' if crlf else ''),
                         'secret': spec.value if '\n' not in spec.value else spec.value.split('\n')[0] + '...',
                         'line': secret_line(text, spec)})

    # ---------------- negatives: look-alikes, one file per case
    j = 0
    for name, fn in NEGS:
        for path, text, ctx in fn(rng):
            j += 1
            crlf = not path.endswith(NO_CRLF) and '\r\n' not in text and rng.random() < .1
            rel = f'neg/case{j:03d}/{path}'
            write(rel, text, crlf)
            manifest.append({'file': rel, 'kind': 'neg', 'provider': name, 'context': ctx + ('+crlf' if crlf else '')})

    with open(os.path.join(out, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    npos = sum(m['kind'] == 'pos' for m in manifest)
    print(f'seed {seed}: wrote {npos} positives ({len({m["provider"] for m in manifest if m["kind"] == "pos"})} formats), '
          f'{len(manifest) - npos} negatives -> {out}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""p7 outsider probe: what people type and write down. Usage: python3 gen.py SEED"""
import sys, os, json, random, shutil
import vals as V
import hist, notes

MIN_POS, MIN_NEG = 140, 120

def main():
    seed = int(sys.argv[1])
    rng = random.Random(seed)
    V.R = rng
    base = os.path.join(os.path.dirname(os.path.abspath(__file__)), f'out_{seed}')
    if os.path.exists(base):
        shutil.rmtree(base)
    cases = []  # (kind, relpath, content, family, note, needle)

    def add_shell_pos(f):
        cmd, secret, note = f()
        path, content = hist.shell_history(cmd)
        fam = 'hist-' + f.__name__[3:]
        cases.append(('pos', path, content, fam, f'{note} [{path.split("/")[-1]}]', secret))

    def add_app_pos(f):
        path, content, secret, note = f()
        cases.append(('pos', path, content, 'apphist-' + f.__name__[3:], note, secret))

    def add_note_pos(f):
        path, content, needle, fam, note = f()
        cases.append(('pos', path, content, fam, note, needle))

    def add_shell_neg(f):
        cmd, note = f()
        path, content = hist.shell_history(cmd)
        cases.append(('neg', path, content, 'neghist-' + f.__name__[3:], f'{note}: {cmd[:60]}', None))

    def add_app_neg(f):
        (path, content), note = f()
        cases.append(('neg', path, content, 'negapphist-' + f.__name__[3:], note, None))

    def add_note_neg(f):
        path, content, fam, note = f()
        cases.append(('neg', path, content, fam, note, None))

    pos_all = [(add_shell_pos, f) for f in hist.SHELL_POS] + [(add_app_pos, f) for f in hist.APP_POS] + [(add_note_pos, f) for f in notes.NOTE_POS]
    neg_all = [(add_shell_neg, f) for f in hist.SHELL_NEG] + [(add_app_neg, f) for f in hist.APP_NEG] + [(add_note_neg, f) for f in notes.NOTE_NEG]
    for a, f in pos_all:
        a(f)
    while sum(1 for c in cases if c[0] == 'pos') < MIN_POS:
        a, f = rng.choice(pos_all); a(f)
    for a, f in neg_all:
        a(f)
    while sum(1 for c in cases if c[0] == 'neg') < MIN_NEG:
        a, f = rng.choice(neg_all); a(f)

    manifest = []
    counters = {'pos': 0, 'neg': 0}
    for kind, path, content, fam, note, needle in cases:
        counters[kind] += 1
        rel = f'{kind}/case{counters[kind]:03d}/{path}'
        line = None
        if needle is not None:
            for i, l in enumerate(content.split('\n'), 1):
                if needle in l:
                    line = i; break
            assert line, (fam, needle)
        ext = path.rsplit('.', 1)[-1] if '.' in path.split('/')[-1] else ''
        if kind == 'pos' or kind == 'neg':
            if ext in ('md', 'txt', 'org', 'eml', 'csv', 'log') and rng.random() < 0.25:
                content = content.replace('\n', '\r\n')
            elif 'PSReadLine' in path:
                content = content.replace('\n', '\r\n')
        full = os.path.join(base, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w', encoding='utf-8', newline='') as fh:
            fh.write(content)
        m = {'file': rel, 'kind': kind, 'family': fam, 'note': note}
        if line:
            m['line'] = line
        manifest.append(m)
    with open(os.path.join(base, 'manifest.json'), 'w') as fh:
        json.dump(manifest, fh, indent=1)
    print(f'seed {seed}: {counters["pos"]} positives, {counters["neg"]} negatives -> {base}')

if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""score.py SEED -> counts, missed positives, false alarms (uses out_SEED.manifest.json + found_SEED.txt)"""
import json, re, sys, os
seed = sys.argv[1]; root = '/tmp/blind'
man = json.load(open(f'{root}/out_{seed}.manifest.json'))
finds = {}
rx = re.compile(r'^(.*?):(\d+):(\d+): ([^:]+): (.*)$')
for l in open(f'{root}/found_{seed}.txt'):
    m = rx.match(l.rstrip('\n'))
    if m: finds.setdefault(os.path.realpath(m.group(1)), []).append((int(m.group(2)), m.group(4), m.group(5)))
pos = [e for e in man if e['kind'] == 'pos']; neg = [e for e in man if e['kind'] == 'neg']
found = [e for e in pos if os.path.realpath(e['path']) in finds]
missed = [e for e in pos if os.path.realpath(e['path']) not in finds]
fa = [e for e in neg if os.path.realpath(e['path']) in finds]
wrongline = [e for e in found if e['line_no'] not in [f[0] for f in finds[os.path.realpath(e['path'])]]]
print(f"seed {seed}: positives {len(pos)}, found {len(found)}, missed {len(missed)}; look-alikes {len(neg)}, false alarms {len(fa)}; found-but-not-on-secret-line {len(wrongline)}")
rel = lambda p: p.split(f'out_{seed}/')[1]
for e in missed: print(f"  MISS {rel(e['path'])} [{e['gen']}] L{e['line_no']}: {e['line'][:150]}")
for e in fa:
    lines = open(e['path']).read().splitlines()
    for (ln, rule, ex) in finds[os.path.realpath(e['path'])]:
        print(f"  FA   {rel(e['path'])} [{e['gen']}] L{ln} {rule}: {lines[ln-1][:150]}")
for e in wrongline:
    print(f"  OFFLINE {rel(e['path'])} [{e['gen']}] secret L{e['line_no']}, findings {[(f[0], f[1]) for f in finds[os.path.realpath(e['path'])]]}")

#!/usr/bin/env python3
"""Usage: score.py SEED [findings_file]
Scans (or reads saved findings of) /tmp/blind2/out_SEED and scores against manifest.json.
Positive found = any finding names its file. Negative false alarm = any finding in its file."""
import sys, os, json, re, subprocess
from collections import defaultdict

import os
HAVEN = os.environ.get('HAVEN_BIN', '/work/main/build/haven')
LINE_RE = re.compile(r'^(.*?):(\d+):(\d+): ([^:]+): (.*)$')

def main():
    seed = int(sys.argv[1])
    base = '/tmp/blind2/out_%d' % seed
    ffile = sys.argv[2] if len(sys.argv) > 2 else os.path.join('/tmp/blind2', 'findings_%d.txt' % seed)
    if not os.path.exists(ffile):
        p = subprocess.run([HAVEN, 'scan', 'pos', 'neg'], cwd=base, capture_output=True, text=True)
        with open(ffile, 'w') as fh:
            fh.write(p.stdout)
        with open(ffile + '.stderr', 'w') as fh:
            fh.write(p.stderr)
    man = json.load(open(os.path.join(base, 'manifest.json')))['entries']
    byfile = defaultdict(list)
    unparsed = []
    for l in open(ffile):
        l = l.rstrip('\n')
        if not l:
            continue
        m = LINE_RE.match(l)
        if not m:
            unparsed.append(l); continue
        path = os.path.normpath(m.group(1))
        if os.path.isabs(path):
            path = os.path.relpath(path, base)
        byfile[path].append((int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
    known = {e['path'] for e in man}
    pos = [e for e in man if e['kind'] == 'pos']
    negs = [e for e in man if e['kind'] == 'neg']
    found = [e for e in pos if byfile.get(e['path'])]
    missed = [e for e in pos if not byfile.get(e['path'])]
    fa = [e for e in negs if byfile.get(e['path'])]
    offline = [e for e in found if e['line'] not in [f[0] for f in byfile[e['path']]]]
    print('seed %d: positives %d/%d found (%d missed); look-alikes %d/%d false alarms' % (
        seed, len(found), len(pos), len(missed), len(fa), len(negs)))
    if unparsed:
        print('  unparsed output lines: %d' % len(unparsed))
    stray = [p for p in byfile if p not in known]
    if stray:
        print('  findings in files outside manifest: %s' % stray[:5])
    for e in missed:
        print('MISS %s [%s] L%d: %s' % (e['path'], e['template'], e['line'], e['line_text']))
    for e in fa:
        for (ln, col, rule, ex) in byfile[e['path']]:
            print('FA   %s [%s] L%d:%d %s: %s' % (e['path'], e['template'], ln, col, rule, ex[:120]))
    for e in offline:
        print('OFFLINE %s [%s] secret L%d, findings at %s' % (e['path'], e['template'], e['line'],
                                                          [(f[0], f[2]) for f in byfile[e['path']]]))

if __name__ == '__main__':
    main()

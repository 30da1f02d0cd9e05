#!/usr/bin/env python3
"""usage: HAVEN_BIN=/path/to/bin python3 score.py SEED   (run gen.py SEED first, or it is run for you)"""
import json, os, re, subprocess, sys
from collections import defaultdict

FIND = re.compile(r'^(.*?):(\d+):(\d+): (\S+): (.*)$')


def main():
    seed = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)
    out = f'out_{seed}'
    if not os.path.exists(os.path.join(out, 'manifest.json')):
        subprocess.run([sys.executable, 'gen.py', seed], check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(out, 'manifest.json')))
    binp = os.environ.get('HAVEN_BIN', '/tmp/haven_probe_bin')
    p = subprocess.run([binp, 'scan', f'{out}/pos', f'{out}/neg'], capture_output=True, text=True)
    findings = defaultdict(list)
    unparsed = []
    for line in p.stdout.splitlines():
        m = FIND.match(line)
        if not m:
            if line.strip():
                unparsed.append(line)
            continue
        path = os.path.normpath(m.group(1))
        k = path.find(out + os.sep)
        rel = path[k + len(out) + 1:] if k >= 0 else path
        findings[rel].append(line)
    pos = [m for m in manifest if m['kind'] == 'pos']
    neg = [m for m in manifest if m['kind'] == 'neg']
    found = [m for m in pos if findings.get(m['file'])]
    missed = [m for m in pos if not findings.get(m['file'])]
    fas = [m for m in neg if findings.get(m['file'])]
    print(f'seed {seed}: found {len(found)} of {len(pos)}, false alarms {len(fas)} files')
    print(f'(scanner exit {p.returncode}; {len(neg)} negative files; stderr: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""})')
    known = {m['file'] for m in manifest}
    stray = [f for f in findings if f not in known]
    if stray or unparsed:
        print(f'!! {len(stray)} findings on unknown paths, {len(unparsed)} unparsed stdout lines')
        for f in stray[:5]:
            print('   ', findings[f][0][:200])
        for u in unparsed[:5]:
            print('   ', u[:200])
    print(f'\nMISSED POSITIVES ({len(missed)}):')
    for m in missed:
        print(f"  {m['file']}  [{m['provider']} / {m['context']}]\n      {m['line'][:160]}")
    print(f'\nFALSE ALARMS ({len(fas)}):')
    for m in fas:
        print(f"  {m['file']}  [{m['provider']} / {m['context']}]")
        for l in findings[m['file']]:
            print('      ' + l[len(out) + 1:][:200] if l.startswith(out) else '      ' + l[:200])


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Score the scanner on out_SEED. Usage: HAVEN_BIN=/path/to/bin python3 score.py SEED"""
import sys, os, re, json, subprocess

def main():
    seed = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)
    out = f'out_{seed}'
    if not os.path.exists(os.path.join(out, 'manifest.json')):
        subprocess.run([sys.executable, 'gen.py', seed], check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(out, 'manifest.json')))
    binp = os.environ.get('HAVEN_BIN', '/tmp/haven_probe_bin2')
    p = subprocess.run([binp, 'scan', f'{out}/pos', f'{out}/neg'], capture_output=True, text=True, errors='replace')
    rx = re.compile(r'^(.*?):(\d+):(\d+): (\S+): ?(.*)$')
    findings = {}  # rel file -> list of lines
    unparsed = []
    marker = out + '/'
    for line in p.stdout.splitlines():
        m = rx.match(line)
        if not m:
            if line.strip(): unparsed.append(line)
            continue
        path = m.group(1)
        i = path.find(marker)
        rel = path[i + len(marker):] if i >= 0 else path
        rel = rel.lstrip('./') if not rel.startswith(('pos/', 'neg/')) else rel
        findings.setdefault(rel, []).append(line)
    pos = [e for e in manifest if e['kind'] == 'pos']
    neg = [e for e in manifest if e['kind'] == 'neg']
    found = [e for e in pos if e['file'] in findings]
    missed = [e for e in pos if e['file'] not in findings]
    fa = [e for e in neg if e['file'] in findings]
    print(f'seed {seed}: found {len(found)} of {len(pos)}, false alarms {len(fa)} files')
    print(f'(scanner exit {p.returncode}; stderr: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""})')
    known = {e['file'] for e in manifest}
    stray = [f for f in findings if f not in known]
    if stray or unparsed:
        print(f'WARNING: {len(stray)} finding paths not in manifest, {len(unparsed)} unparsed lines')
        for s in (stray + unparsed)[:5]: print('   ', s)
    print(f'\nMISSED POSITIVES ({len(missed)}):')
    for e in missed:
        try:
            sl = open(os.path.join(out, e['file']), encoding='utf-8', newline='').read().split('\n')[e['line'] - 1].rstrip('\r')
        except Exception as ex:
            sl = f'<{ex}>'
        if len(sl) > 170: sl = sl[:167] + '...'
        print(f"  {e['file']}  [{e['family']}; {e['note']}]\n      L{e.get('line')}: {sl}")
    print(f'\nFALSE ALARMS ({len(fa)}):')
    for e in fa:
        print(f"  {e['file']}  [{e['family']}; {e['note']}]")
        for l in findings[e['file']]:
            l = l.split(marker, 1)[-1]
            print('      ' + (l if len(l) <= 170 else l[:167] + '...'))

if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Score the scanner on out_SEED: HAVEN_BIN=/tmp/haven_v11 python3 score.py SEED"""
import sys, os, re, json, subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r'^(.*?):(\d+):(\d+): (\S+): (.*)$')
REL = re.compile(r'((?:pos|neg)/h\d{3}/.*)$')

def main():
    seed = sys.argv[1]
    binp = os.environ.get('HAVEN_BIN', '/tmp/haven_v11')
    od = 'out_%s' % seed
    manifest = json.load(open(os.path.join(HERE, od, 'manifest.json')))
    secrets = json.load(open(os.path.join(HERE, od, 'secrets.json')))
    p = subprocess.run([binp, 'scan', od + '/pos', od + '/neg'], cwd=HERE, capture_output=True, text=True)
    findings = {}
    unparsed = []
    for ln in p.stdout.splitlines():
        m = LINE.match(ln)
        r = REL.search(m.group(1)) if m else None
        if not r:
            if ln.strip():
                unparsed.append(ln)
            continue
        findings.setdefault(r.group(1), []).append(ln)
    pos = [m for m in manifest if m['kind'] == 'pos']
    neg = [m for m in manifest if m['kind'] == 'neg']
    found = [m for m in pos if m['file'] in findings]
    fa = [m for m in neg if m['file'] in findings]
    print('seed %s: found %d of %d, false alarms %d files' % (seed, len(found), len(pos), len(fa)))
    if p.returncode not in (0, 4):
        print('WARNING: scanner exit code %d; stderr: %s' % (p.returncode, p.stderr.strip()[:500]))
    else:
        print('scanner exit %d; stderr: %s' % (p.returncode, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''))
    for u in unparsed[:10]:
        print('UNPARSED:', u)
    missed = [m for m in pos if m['file'] not in findings]
    print('-- missed positives (%d)' % len(missed))
    for m in missed:
        s = secrets.get(m['file'], {})
        t = s.get('text', '')
        if len(t) > 150:
            t = t[:150] + '...'
        print('MISS %s [%s: %s] L%s: %s' % (m['file'], m['family'], m['note'], s.get('line'), t))
    other = []
    for m in found:
        sl = secrets.get(m['file'], {}).get('line')
        lines = {int(LINE.match(l).group(2)) for l in findings[m['file']]}
        if sl and sl not in lines:
            other.append((m, sorted(lines)))
    print('-- found, but no finding on the secret line (%d)' % len(other))
    for m, ls in other:
        print('OFFLINE %s [%s: %s] secret L%s, findings %s: %s' % (m['file'], m['family'], m['note'], secrets[m['file']]['line'], ls, findings[m['file']][0][-90:]))
    print('-- false alarms (%d)' % len(fa))
    for m in fa:
        print('FA %s [%s: %s]' % (m['file'], m['family'], m['note']))
        for ln in findings[m['file']]:
            print('    ' + (ln if len(ln) < 200 else ln[:200] + '...'))

if __name__ == '__main__':
    main()

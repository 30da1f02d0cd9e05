#!/usr/bin/env python3
"""sanity checks for out_SEED: python3 check.py SEED"""
import sys, os, json, re, collections
seed = sys.argv[1]
od = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out_%s' % seed)
man = json.load(open(os.path.join(od, 'manifest.json')))
sec = json.load(open(os.path.join(od, 'secrets.json')))
bad = 0
files = set()
for root, _, fs in os.walk(od):
    for f in fs:
        rel = os.path.relpath(os.path.join(root, f), od)
        if rel not in ('manifest.json', 'secrets.json'):
            files.add(rel)
mf = {m['file'] for m in man}
if mf != files:
    print('manifest/file mismatch', len(mf ^ files)); bad += 1
for m in man:
    if m['kind'] != 'pos':
        continue
    s = sec.get(m['file'])
    if not s:
        print('no secret entry', m['file']); bad += 1; continue
    b = open(os.path.join(od, m['file']), 'rb').read()
    if b.startswith(b'\xef\xbb\xbf'):
        b = b[3:]
    lines = b.decode('utf-8').split('\n')
    l = lines[s['line'] - 1].rstrip('\r')
    if l != s['text']:
        print('line mismatch', m['file'], s['line']); bad += 1
# negatives must not contain generator-format live tokens
PAT = re.compile(r'ghp_[A-Za-z0-9]{36}|gho_[A-Za-z0-9]{36}|github_pat_\w{82}|glpat-[\w-]{20}|npm_[A-Za-z0-9]{36}|xox[bp]-\d|hooks\.slack\.com/services/T|'
                 r'discord\.com/api/webhooks/\d|live_\d{9}_|AIza[\w-]{35}|sk_live_[A-Za-z0-9]{20}|SG\.[\w-]{22}\.|hf_[A-Za-z]{34}|'
                 r'sk-proj-|sk-ant-|dapi[0-9a-f]{32}|pypi-AgEI|hvs\.|sntryu_|dop_v1_|glsa_|atlasv1|dckr_pat_|nfp_|PRIVATE KEY-----|'
                 r'OpenVPN Static key|xprv|PrivateKey = [A-Za-z0-9+/]{43}=')
for m in man:
    if m['kind'] != 'neg':
        continue
    t = open(os.path.join(od, m['file']), 'rb').read().decode('utf-8', 'replace')
    for x in [x for x in PAT.findall(t) if 'XXXX' not in x and not x.startswith('xoxb-0')]:
        print('NEG HIT', m['file'], x[:40]); bad += 1
c = collections.Counter(m['kind'] for m in man)
fam = collections.Counter((m['kind'], m['family']) for m in man)
print('seed %s: %d pos, %d neg, %d pos families, %d neg families, %d problems' % (
    seed, c['pos'], c['neg'], len({f for k, f in fam if k == 'pos'}), len({f for k, f in fam if k == 'neg'}), bad))

import json, sys, os, collections
seed = sys.argv[1]
od = 'out_%s' % seed
m = json.load(open(od + '/manifest.json'))
s = json.load(open(od + '/secrets.json'))
cnt = collections.Counter(x['kind'] for x in m)
print(dict(cnt), 'pos families', len({x['family'] for x in m if x['kind']=='pos'}), 'neg families', len({x['family'] for x in m if x['kind']=='neg'}))
bad = 0
files = set()
for x in m:
    p = os.path.join(od, x['file'])
    assert os.path.isfile(p), p
    files.add(x['file'])
    if x['kind'] == 'pos':
        raw = open(p, 'rb').read().decode('utf-8-sig')
        lines = raw.splitlines()
        e = s[x['file']]
        if lines[e['line'] - 1] != e['text']:
            bad += 1; print('MISMATCH', x['file'])
# every file on disk is in manifest
disk = set()
for kind in ('pos', 'neg'):
    for root, ds, fs in os.walk(os.path.join(od, kind)):
        for f in fs:
            disk.add(os.path.relpath(os.path.join(root, f), od))
print('disk files', len(disk), 'manifest', len(files), 'extra', disk - files)
print('secret line mismatches', bad)
homes = collections.Counter(x['file'].split('/')[1] + x['kind'] for x in m)
print('max files per home', max(homes.values()))
import statistics
lens = [len(open(os.path.join(od, x['file']),'rb').read().splitlines()) for x in m if x['kind']=='neg']
print('neg lines: median', statistics.median(lens), '>=200:', sum(l>=200 for l in lens))

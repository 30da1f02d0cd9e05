#!/usr/bin/env python3
"""Independent check of out_SEED (python3 check.py SEED...): numbering, manifest/secrets agreement,
each positive's recorded line re-read from the file in its encoding, and no random-looking token
(any 20-char piece of a token run holding >= 2 upper, 2 lower, 2 digits) of any positive's secret line inside any look-alike."""
import os, re, sys, json

HERE = os.path.dirname(os.path.abspath(__file__))
TOK = re.compile(r'[A-Za-z0-9+/=_.~-]{20,}')


def decode(data, enc):
    if enc in ('utf-16le', 'utf-16be'):
        return data.decode('utf-16')
    if enc in ('binary', 'zsh'):
        return data.decode('latin-1')
    return data.decode(enc)


# fixed byte patterns of key/certificate encodings (DER algorithm ids, SSH key types, base64 of '-----BEGIN')
FIXED = ('BgkqhkiG9w0B', 'AAAAC3NzaC1lZDI1NTE5', 'AAAAB3NzaC1yc2E', 'b3BlbnNzaC1rZXktdjE', 'BgcqhkjOPQ', 'CCqGSM49',
         'LS0tLS1CRUdJTi', 'AAAAB3NzaC1', 'MIIBIjANBg', 'MIIEvQIBADANBg', 'MIIEvgIBADANBg', 'AQAAANCMnd8BFdERjHoAwE')


def randomish(w):
    if any(f in w or w in f for f in FIXED) or any(w[i:i + 10] in ''.join(FIXED) for i in range(0, 11, 5)):
        return False
    return (sum(c.isupper() for c in w) >= 2 and sum(c.islower() for c in w) >= 2
            and sum(c.isdigit() for c in w) >= 2)


def check(seed):
    od = os.path.join(HERE, 'out_%s' % seed)
    m = json.load(open(os.path.join(od, 'manifest.json')))
    s = json.load(open(os.path.join(od, 'secrets.json')))
    pos = [x for x in m if x['kind'] == 'pos']
    neg = [x for x in m if x['kind'] == 'neg']
    assert len(pos) == 150 and len(neg) == 130, (len(pos), len(neg))
    for kind, xs in (('pos', pos), ('neg', neg)):
        ids = sorted(x['file'].split('/')[1] for x in xs)
        assert ids == ['h%03d' % i for i in range(1, len(xs) + 1)], kind
        for x in xs:
            assert x['file'].startswith(kind + '/') and os.path.isfile(os.path.join(od, x['file'])), x['file']
    assert set(s) == {x['file'] for x in pos}
    toks = {}
    for x in pos:
        enc = x['enc'].split('+')[0]
        lines = decode(open(os.path.join(od, x['file']), 'rb').read(), enc).split('\n')
        e = s[x['file']]
        got = lines[e['line'] - 1]
        if x['enc'].endswith('+crlf'):
            got = got.rstrip('\r')
        assert got == e['text'], (x['file'], e['line'])
        for t in TOK.findall(e['text']):
            for i in range(len(t) - 19):
                w = t[i:i + 20]
                if randomish(w):
                    toks[w] = x['file']
    fams = {x['family'] for x in m}
    for x in neg:
        data = open(os.path.join(od, x['file']), 'rb').read()
        texts = {decode(data, x['enc'].split('+')[0]), data.decode('latin-1')}
        for t in texts:
            for tok in TOK.findall(t):
                for i in range(len(tok) - 19):
                    w = tok[i:i + 20]
                    assert w not in toks, (x['file'], 'holds', w, 'from', toks[w])
    print('seed %s ok: %d pos, %d neg, %d families, %d 20-char pieces of secret-line tokens checked against look-alikes' % (
        seed, len(pos), len(neg), len(fams), len(toks)))


if __name__ == '__main__':
    for a in sys.argv[1:] or ['1', '2', '3']:
        check(a)

"""p13: home-directory credentials stored the way real Linux, macOS and Windows-synced homes store bytes:
UTF-16LE/BE and UTF-8 BOMs, CRLF and CR-only endings, cp1252/MacRoman, 50-200 KB lines, 1-3 MB files, SQLite, LevelDB, bplists,
and escapes (JSON \\u0022 and \\/, \\n-escaped PEM, XML entities, %-encoding, quoted-printable, base64 fields, YAML/TOML blocks, .reg, .properties)."""
import os, sys, json, random, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import MARK, POS, NEG  # noqa: E402
import cases_pos  # noqa: E402,F401  (registers templates)
import cases_neg  # noqa: E402,F401

N_POS, N_NEG = 150, 130
WIN = 12  # no look-alike may hold any 12-char piece of a positive's secret


def metafy(b):
    """zsh history metafication: NUL and 0x83..0xa2 become Meta (0x83) followed by byte ^ 0x20."""
    out = bytearray()
    for c in b:
        if c == 0 or 0x83 <= c <= 0xA2:
            out += bytes([0x83, c ^ 0x20])
        else:
            out.append(c)
    return bytes(out)


def encode(text, enc):
    if enc == 'utf-16le':
        return b'\xff\xfe' + text.encode('utf-16-le')
    if enc == 'utf-16be':
        return b'\xfe\xff' + text.encode('utf-16-be')
    if enc == 'zsh':
        return metafy(text.encode('utf-8'))
    return text.encode(enc)


def decode(data, enc):
    if enc in ('utf-16le', 'utf-16be'):
        return data.decode('utf-16')
    if enc in ('binary', 'zsh'):
        return data.decode('latin-1')
    return data.decode(enc)


def render(c, kind):
    """Return (bytes, secret line number or None)."""
    if c['data'] is not None:
        data = c['data']
        # binary pages hold 0x01 bytes of their own, so no marker here: the secret must occur exactly once
        if kind == 'pos':
            t = data.decode('latin-1')
            assert t.count(c['secret']) == 1, (c['path'], 'secret must occur once in the binary')
            return data, t[:t.index(c['secret'])].count('\n') + 1
        return data, None
    text = c['text']
    if kind == 'pos' and MARK not in text:
        hits = [i for i, l in enumerate(text.split('\n')) if c['secret'] in l]
        assert len(hits) == 1, (c['path'], 'secret on %d lines' % len(hits))
        ls = text.split('\n')
        ls[hits[0]] = MARK + ls[hits[0]]
        text = '\n'.join(ls)
    marked = [l for l in text.split('\n') if MARK in l]
    if kind == 'pos':
        assert len(marked) == 1 and text.count(MARK) == 1, (c['path'], 'need exactly one marked line')
        assert c['secret'] in marked[0], (c['path'], 'secret not on the marked line')
    else:
        assert not marked, (c['path'], 'negative has a marked line')
    if c['eol'] != '\n':
        text = text.replace('\n', c['eol'])
    line = None
    if kind == 'pos':
        line = text[:text.index(MARK)].count('\n') + 1
    return encode(text.replace(MARK, ''), c['enc']), line


def main():
    seed = sys.argv[1]
    r = random.Random(int(seed))
    od = os.path.join(HERE, 'out_%s' % seed)
    if os.path.exists(od):
        shutil.rmtree(od)
    manifest, secrets, checks = [], {}, []
    for kind, templates, n in (('pos', POS, N_POS), ('neg', NEG, N_NEG)):
        chosen, pool = [], []
        while len(chosen) < n:
            if not pool:
                pool = list(templates)
                r.shuffle(pool)
            chosen.append(pool.pop())
        for i, (family, fn) in enumerate(chosen, 1):
            c = fn(r)
            data, line = render(c, kind)
            rel = '%s/h%03d/%s' % (kind, i, c['path'])
            p = os.path.join(od, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'wb') as f:
                f.write(data)
            manifest.append({'file': rel, 'kind': kind, 'family': family, 'note': c['note'], 'enc': c['enc']
                             + ('' if c['eol'] in (None, '\n') else {'\r\n': '+crlf', '\r': '+cr'}[c['eol']])})
            if kind == 'pos':
                t = decode(data, c['enc']).split('\n')[line - 1]
                if c['eol'] == '\r\n':
                    t = t.rstrip('\r')
                secrets[rel] = {'line': line, 'text': t}
            checks.append((rel, kind, c))
    with open(os.path.join(od, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(od, 'secrets.json'), 'w') as f:
        json.dump(secrets, f, indent=1)
    verify(od, checks, secrets)


def verify(od, checks, secrets):
    """Re-read every written file: the secret is on its line (and only there); no look-alike holds
    any WIN-char piece of any positive's secret."""
    wins = set()
    for rel, kind, c in checks:
        if kind != 'pos':
            continue
        data = open(os.path.join(od, rel), 'rb').read()
        lines = decode(data, c['enc']).split('\n')
        ln = secrets[rel]['line']
        assert c['secret'] in lines[ln - 1], (rel, 'secret not on line %d' % ln)
        assert sum(c['secret'] in l for l in lines) == 1, (rel, 'secret on more than one line')
        for u in c['uniq']:
            assert len(u) >= WIN, (rel, 'uniq part too short', u)
            for i in range(len(u) - WIN + 1):
                wins.add(u[i:i + WIN])
    for rel, kind, c in checks:
        if kind != 'neg':
            continue
        data = open(os.path.join(od, rel), 'rb').read()
        texts = {decode(data, c['enc']), data.decode('latin-1')}
        for t in texts:
            for i in range(len(t) - WIN + 1):
                if t[i:i + WIN] in wins:
                    raise AssertionError((rel, 'look-alike holds a piece of a secret', t[i:i + WIN]))


if __name__ == '__main__':
    main()

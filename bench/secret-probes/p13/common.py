"""p13 shared plumbing: the case record, the secret-line marker, text escapes."""
import json

MARK = '\x01'
POS, NEG = [], []


def pos(family):
    def deco(fn):
        POS.append((family, fn))
        return fn
    return deco


def neg(family):
    def deco(fn):
        NEG.append((family, fn))
        return fn
    return deco


def S(line):
    """Mark the secret line (the marker is stripped before the file is written)."""
    return MARK + line


def C(path, lines, secret=None, note='', enc='utf-8', eol='\n', uniq=None, nl=True):
    """A text case. lines: list of lines or one string with '\\n' line ends.
    secret: the credential exactly as it appears in the decoded file (pos only).
    uniq: random parts that no look-alike may contain (default [secret])."""
    text = lines if isinstance(lines, str) else '\n'.join(lines) + ('\n' if nl else '')
    return {'path': path, 'text': text, 'data': None, 'enc': enc, 'eol': eol, 'secret': secret,
            'uniq': uniq if uniq is not None else ([secret] if secret else []), 'note': note}


def B(path, data, secret=None, note='', uniq=None, enc='binary'):
    """A binary case; secret is the credential as it appears in data decoded as Latin-1."""
    return {'path': path, 'text': None, 'data': data, 'enc': enc, 'eol': None, 'secret': secret,
            'uniq': uniq if uniq is not None else ([secret] if secret else []), 'note': note}


def reg_esc(s):
    return s.replace('\\', '\\\\').replace('"', '\\"')


def xml_esc(s, quot=True):
    s = s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')
    return s.replace('"', '&quot;') if quot else s


def jdump(obj, indent=None):
    if indent is None:
        return json.dumps(obj, separators=(',', ':'), ensure_ascii=False)
    return json.dumps(obj, indent=indent, ensure_ascii=False)


def pct(s, safe=''):
    from urllib.parse import quote
    return quote(s, safe=safe)


def props_esc(s):
    """Java .properties value escaping (backslash, =, :, #, !, non-Latin-1 as \\uXXXX)."""
    out = []
    for ch in s:
        if ch in '\\=:#!':
            out.append('\\' + ch)
        elif ord(ch) > 0x7e:
            out.append('\\u%04x' % ord(ch))
        else:
            out.append(ch)
    return ''.join(out)


def qp_line(s):
    """Quoted-printable encoding of one short line (no soft breaks)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '=' or o > 126 or (o < 32 and ch != '\t'):
            out.append(''.join('=%02X' % b for b in ch.encode('utf-8')))
        else:
            out.append(ch)
    return ''.join(out)


def ps_sq(s):
    return "'" + s.replace("'", "''") + "'"

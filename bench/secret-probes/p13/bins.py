"""p13 binary containers a home directory really holds: SQLite databases (made with the
standard sqlite3 module), Chromium/Electron LevelDB write-ahead logs, binary plists and a
.DS_Store-like buddy file."""
import os, plistlib, shutil, sqlite3, struct, tempfile

from vals import rbytes, guid, rhex


def sqlite_db(statements, encoding=None, page_size=4096):
    """Run (sql, params) statements in a fresh database file and return its bytes."""
    d = tempfile.mkdtemp(prefix='p13db')
    try:
        p = os.path.join(d, 'x.db')
        con = sqlite3.connect(p)
        if encoding:
            con.execute("PRAGMA encoding = '%s'" % encoding)
        con.execute('PRAGMA page_size = %d' % page_size)
        con.execute('PRAGMA journal_mode = DELETE')
        for sql, params in statements:
            con.execute(sql, params)
        con.commit()
        con.close()
        with open(p, 'rb') as f:
            return f.read()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- LevelDB log (write-ahead log of a Chromium "Local Storage/leveldb" or extension store)
def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _mask(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def leveldb_log(batches, seq=1):
    """batches: list of lists of (key bytes, value bytes or None for delete)."""
    out = bytearray()
    block = 32768
    for batch in batches:
        body = bytearray(struct.pack('<QI', seq, len(batch)))
        for k, v in batch:
            if v is None:
                body += b'\x00' + _varint(len(k)) + k
            else:
                body += b'\x01' + _varint(len(k)) + k + _varint(len(v)) + v
        seq += len(batch)
        data = bytes(body)
        first = True
        while True:
            left = block - (len(out) % block)
            if left < 7:
                out += b'\0' * left
                left = block
            n = min(len(data), left - 7)
            frag, data = data[:n], data[n:]
            if first and not data:
                t = 1
            elif first:
                t = 2
            elif data:
                t = 3
            else:
                t = 4
            crc = _mask(crc32c(bytes([t]) + frag))
            out += struct.pack('<IHB', crc, len(frag), t) + frag
            first = False
            if not data:
                break
    return bytes(out)


def ls_key(origin, name):
    """Chromium Local Storage key: '_' origin NUL 0x01 name (Latin-1 form)."""
    return b'_' + origin.encode() + b'\x00\x01' + name.encode('latin-1')


def ls_val(s):
    """Chromium Local Storage value: 0x01 + Latin-1 when it fits, else 0x00 + UTF-16LE."""
    try:
        return b'\x01' + s.encode('latin-1')
    except UnicodeEncodeError:
        return b'\x00' + s.encode('utf-16-le')


def ls_meta(r, origin):
    # META:origin -> protobuf {1: last-modified varint, 2: size varint}
    return (b'META:' + origin.encode(),
            b'\x08' + _varint(13300000000000000 + r.randrange(10 ** 14)) + b'\x10' + _varint(r.randrange(100, 90000)))


def bplist(obj):
    return plistlib.dumps(obj, fmt=plistlib.FMT_BINARY, sort_keys=False)


def ds_store(r, names):
    """A .DS_Store-shaped file: Bud1 header, a record block with UTF-16BE names, an embedded bplist."""
    recs = bytearray()
    for n in names:
        u = n.encode('utf-16-be')
        code = r.choice([b'Iloc', b'lg1S', b'modD', b'ph1S', b'vSrn'])
        recs += struct.pack('>I', len(n)) + u + code
        if code == b'Iloc':
            recs += b'blob' + struct.pack('>I', 16) + struct.pack('>IIII', r.randrange(40, 900), r.randrange(40, 600), 0xFFFFFFFF, 0xFFFF0000)
        elif code == b'vSrn':
            recs += b'long' + struct.pack('>I', 1)
        else:
            recs += b'comp' + struct.pack('>Q', r.randrange(1, 10 ** 10))
    bw = bplist({'ContainerShowSidebar': True, 'ShowPathbar': False, 'ShowSidebar': True, 'ShowStatusBar': False,
                 'ShowTabView': False, 'ShowToolbar': True,
                 'WindowBounds': '{{%d, %d}, {%d, %d}}' % (r.randrange(900), r.randrange(600), r.randrange(600, 1600), r.randrange(400, 1000))})
    recs += struct.pack('>I', 1) + '.'.encode('utf-16-be') + b'bwspblob' + struct.pack('>I', len(bw)) + bw
    head = b'\x00\x00\x00\x01Bud1' + struct.pack('>III', 0x1000, 0x800, 0x1000) + rbytes(r, 16)
    body = head + b'\x00' * (0x1000 - len(head)) + struct.pack('>II', 0, len(names)) + bytes(recs)
    body += b'\x00' * ((-len(body)) % 0x1000)
    tail = b'\x00\x00\x00\x03' + b'\x00' * 4 + struct.pack('>III', 0x100B, 0x45, 0x1000) + b'\x00\x00\x00\x01\x04DSDB'
    return body + tail + b'\x00' * (0x800 - len(tail))

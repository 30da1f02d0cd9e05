"""Deterministic key material helpers for the p8 generator (pure python + cryptography)."""
import base64, hashlib, hmac, struct, datetime
from cryptography.hazmat.primitives import serialization as ser, hashes
from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519, x25519
from cryptography import x509
from cryptography.x509.oid import NameOID

SMALL_PRIMES = []
def _sieve(n=2000):
    s = bytearray([1]) * n; s[0] = s[1] = 0
    for i in range(2, int(n ** .5) + 1):
        if s[i]:
            s[i*i::i] = bytearray(len(s[i*i::i]))
    return [i for i in range(n) if s[i]]
SMALL_PRIMES = _sieve()

def _is_probable_prime(n, rng, rounds=24):
    for p in SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2; r += 1
    for _ in range(rounds):
        a = rng.randrange(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True

def _prime(bits, rng, e=65537):
    while True:
        c = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if (c - 1) % e == 0:
            continue
        if _is_probable_prime(c, rng):
            return c

def rsa_key(rng, bits=2048):
    e = 65537
    while True:
        p = _prime(bits // 2, rng); q = _prime(bits // 2, rng)
        if p != q:
            break
    if p < q:
        p, q = q, p
    phi = (p - 1) * (q - 1)
    d = pow(e, -1, phi)
    pub = rsa.RSAPublicNumbers(e, p * q)
    priv = rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q),
                                 rsa.rsa_crt_iqmp(p, q), pub)
    return priv.private_key()

_ORDERS = {
    'p256': (ec.SECP256R1, 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551),
    'p384': (ec.SECP384R1, 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973),
}
def ec_key(rng, curve='p256'):
    cls, n = _ORDERS[curve]
    return ec.derive_private_key(rng.randrange(1, n - 1), cls())

def ed_key(rng):
    return ed25519.Ed25519PrivateKey.from_private_bytes(rng.getrandbits(256).to_bytes(32, 'big'))

def pem_pkcs8(k):
    return k.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()).decode()

def pem_trad(k):
    return k.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.TraditionalOpenSSL, ser.NoEncryption()).decode()

def pem_pub(k):
    return k.public_key().public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo).decode()

def ssh_pub(k, comment=''):
    s = k.public_key().public_bytes(ser.Encoding.OpenSSH, ser.PublicFormat.OpenSSH).decode()
    return s + (' ' + comment if comment else '')

def _rd_str(b, off):
    n = struct.unpack('>I', b[off:off + 4])[0]
    return b[off + 4:off + 4 + n], off + 4 + n

def openssh_priv(k, rng, comment=''):
    """OpenSSH private key with deterministic check-ints and a real comment."""
    txt = k.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.OpenSSH, ser.NoEncryption()).decode()
    body = ''.join(l for l in txt.strip().splitlines() if not l.startswith('-----'))
    raw = base64.b64decode(body)
    magic = b'openssh-key-v1\x00'
    off = len(magic)
    for _ in range(3):
        _, off = _rd_str(raw, off)
    off += 4
    _, off = _rd_str(raw, off)
    priv, _ = _rd_str(raw, off)
    head = raw[:off]
    # private block: check1 check2 keytype ... comment padding
    chk = rng.getrandbits(32).to_bytes(4, 'big')
    inner = priv[8:]
    # strip padding + empty comment: find comment by parsing fields per key type
    kt, p = _rd_str(inner, 0)
    nfields = {b'ssh-ed25519': 2, b'ssh-rsa': 6}.get(kt, 2 if kt.startswith(b'ecdsa') else 2)
    if kt.startswith(b'ecdsa'):
        _, p = _rd_str(inner, p); _, p = _rd_str(inner, p); _, p = _rd_str(inner, p)
    else:
        for _ in range(nfields):
            _, p = _rd_str(inner, p)
    c = comment.encode()
    blk = chk + chk + inner[:p] + struct.pack('>I', len(c)) + c
    i = 1
    while len(blk) % 8:
        blk += bytes([i]); i += 1
    out = head + struct.pack('>I', len(blk)) + blk
    b64 = base64.b64encode(out).decode()
    lines = [b64[i:i + 70] for i in range(0, len(b64), 70)]
    return '-----BEGIN OPENSSH PRIVATE KEY-----\n' + '\n'.join(lines) + '\n-----END OPENSSH PRIVATE KEY-----\n'

def _sshstr(b):
    return struct.pack('>I', len(b)) + b

def ppk_ed25519(k, comment):
    pub = k.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    prv = k.private_bytes(ser.Encoding.Raw, ser.PrivateFormat.Raw, ser.NoEncryption())
    pubblob = _sshstr(b'ssh-ed25519') + _sshstr(pub)
    privblob = _sshstr(prv)
    mac_data = (_sshstr(b'ssh-ed25519') + _sshstr(b'none') + _sshstr(comment.encode())
                + _sshstr(pubblob) + _sshstr(privblob))
    mac = hmac.new(b'', mac_data, hashlib.sha256).hexdigest()
    def lines(b):
        s = base64.b64encode(b).decode()
        return [s[i:i + 64] for i in range(0, len(s), 64)]
    pl, vl = lines(pubblob), lines(privblob)
    return ('PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: %s\nPublic-Lines: %d\n%s\n'
            'Private-Lines: %d\n%s\nPrivate-MAC: %s\n') % (comment, len(pl), '\n'.join(pl), len(vl), '\n'.join(vl), mac)

# ---------------- OpenPGP (v4, EdDSA legacy) ----------------
def _crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF

def _mpi(b):
    n = int.from_bytes(b, 'big')
    return struct.pack('>H', n.bit_length()) + n.to_bytes((n.bit_length() + 7) // 8, 'big')

def _pkt(tag, body):
    n = len(body)
    if n < 192:
        ln = bytes([n])
    elif n < 8384:
        n2 = n - 192; ln = bytes([(n2 >> 8) + 192, n2 & 0xFF])
    else:
        ln = b'\xff' + struct.pack('>I', n)
    return bytes([0xC0 | tag]) + ln + body

def _armor(kind, data, comment=None):
    b = base64.b64encode(data).decode()
    lines = [b[i:i + 64] for i in range(0, len(b), 64)]
    crc = base64.b64encode(_crc24(data).to_bytes(3, 'big')).decode()
    hdr = '-----BEGIN PGP %s-----\n' % kind
    if comment:
        hdr += 'Comment: %s\n' % comment
    return hdr + '\n' + '\n'.join(lines) + '\n=' + crc + '\n-----END PGP %s-----\n' % kind

ED_OID = bytes.fromhex('2B06010401DA470F01')
def pgp_keys(k, uid, created):
    pub = k.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    prv = k.private_bytes(ser.Encoding.Raw, ser.PrivateFormat.Raw, ser.NoEncryption())
    pubbody = b'\x04' + struct.pack('>I', created) + bytes([22, len(ED_OID)]) + ED_OID + _mpi(b'\x40' + pub)
    sec = _mpi(prv)
    secbody = pubbody + b'\x00' + sec + struct.pack('>H', sum(sec) & 0xFFFF)
    uidp = _pkt(13, uid.encode())
    fpr = hashlib.sha1(b'\x99' + struct.pack('>H', len(pubbody)) + pubbody).hexdigest().upper()
    return (_armor('PRIVATE KEY BLOCK', _pkt(5, secbody) + uidp),
            _armor('PUBLIC KEY BLOCK', _pkt(6, pubbody) + uidp), fpr)

def pgp_message(rng, n=300):
    # shape of an encrypted message: PKESK (tag 1) + SEIPD (tag 18) with random content
    pkesk = b'\x03' + rng.getrandbits(64).to_bytes(8, 'big') + bytes([18]) + bytes(rng.getrandbits(8) for _ in range(90))
    seipd = b'\x01' + bytes(rng.getrandbits(8) for _ in range(n))
    return _armor('MESSAGE', _pkt(1, pkesk) + _pkt(18, seipd))

# ---------------- X.509 ----------------
def cert(k_subject, cn, issuer_key=None, issuer_cn=None, serial=1, ca=False, sans=()):
    issuer_key = issuer_key or k_subject
    issuer_cn = issuer_cn or cn
    b = (x509.CertificateBuilder()
         .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
         .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_cn)]))
         .public_key(k_subject.public_key())
         .serial_number(serial)
         .not_valid_before(datetime.datetime(2024, 3, 1))
         .not_valid_after(datetime.datetime(2027, 3, 1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(s) for s in sans]), critical=False)
    algo = None if isinstance(issuer_key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    if isinstance(issuer_key, ec.EllipticCurvePrivateKey):
        c = b.sign(issuer_key, algo, ecdsa_deterministic=True)
    else:
        c = b.sign(issuer_key, algo)
    return c.public_bytes(ser.Encoding.PEM).decode()

# ---------------- misc encodings ----------------
BECH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
def _polymod(values):
    GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i in range(5):
            chk ^= GEN[i] if ((b >> i) & 1) else 0
    return chk

def bech32(hrp, data8):
    acc, bits, out = 0, 0, []
    for v in data8:
        acc = (acc << 8) | v; bits += 8
        while bits >= 5:
            bits -= 5; out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    hv = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(hv + out + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + '1' + ''.join(BECH[d] for d in out + chk)

def age_pair(rng):
    sk = rng.getrandbits(256).to_bytes(32, 'big')
    pk = x25519.X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    return bech32('age-secret-key-', sk).upper(), bech32('age', pk)

def wg_pair(rng):
    sk = bytearray(rng.getrandbits(256).to_bytes(32, 'big'))
    sk[0] &= 248; sk[31] &= 127; sk[31] |= 64
    sk = bytes(sk)
    pk = x25519.X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    return base64.b64encode(sk).decode(), base64.b64encode(pk).decode()

def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b'=').decode()

def jwt_hs256(header, payload, key):
    import json
    h = b64u(json.dumps(header, separators=(',', ':')).encode())
    p = b64u(json.dumps(payload, separators=(',', ':')).encode())
    sig = hmac.new(key, (h + '.' + p).encode(), hashlib.sha256).digest()
    return h + '.' + p + '.' + b64u(sig)

def jwk_ec_private(k):
    n = k.private_numbers()
    f = lambda v: b64u(v.to_bytes(32, 'big'))
    return {'kty': 'EC', 'crv': 'P-256', 'x': f(n.public_numbers.x), 'y': f(n.public_numbers.y), 'd': f(n.private_value)}

def jwk_rsa_public(k):
    n = k.public_key().public_numbers()
    return {'kty': 'RSA', 'n': b64u(n.n.to_bytes((n.n.bit_length() + 7) // 8, 'big')), 'e': 'AQAB'}

"""Shared helpers for the p4 blind corpus generator (deterministic given an rng)."""
import base64, hashlib, hmac, json, math, string, struct, zlib
from dataclasses import dataclass, field

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = DIG + UP + LO
LOALNUM = LO + DIG
UPALNUM = UP + DIG
HEX = '0123456789abcdef'
HEXU = HEX.upper()
B64 = UP + LO + DIG + '+/'
B64U = UP + LO + DIG + '-_'
B32 = UP + '234567'
B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

USERS = ['alice', 'bob', 'carol', 'dmitri', 'emma', 'farid', 'gwen', 'hiro', 'ines', 'jonas', 'kofi', 'lena']
ORGS = ['acme', 'globex', 'initech', 'umbrella-labs', 'hooli', 'vandelay', 'stark-ind', 'wayne-ent', 'tyrell', 'soylent']
PROJECTS = ['billing-api', 'webshop', 'data-pipeline', 'infra', 'blog', 'chatbot', 'mobile-backend', 'scraper',
            'analytics', 'deploy-tools', 'notifier', 'ml-experiments', 'crm-sync', 'status-page', 'invoice-worker']


def rs(rng, n, alpha=ALNUM):
    return ''.join(rng.choice(alpha) for _ in range(n))


def rbytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def ruuid(rng, upper=False):
    h = rs(rng, 32, HEX)
    h = h[:12] + '4' + h[13:16] + rng.choice('89ab') + h[17:]
    u = f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'
    return u.upper() if upper else u


def b64(b):
    return base64.b64encode(b if isinstance(b, bytes) else b.encode()).decode()


def b64u(b, pad=False):
    s = base64.urlsafe_b64encode(b if isinstance(b, bytes) else b.encode()).decode()
    return s if pad else s.rstrip('=')


def b62(n, width=6):
    s = ''
    while n:
        n, r = divmod(n, 62)
        s = B62[r] + s
    return s.rjust(width, '0')


def crc_token(rng, prefix, n=30):
    """GitHub/npm style: prefix + n base62 chars + 6-char base62 CRC32 of the random part."""
    body = rs(rng, n, ALNUM)
    return prefix + body + b62(zlib.crc32(body.encode()) & 0xffffffff)


def ts(rng):
    return rng.randint(1_700_000_000, 1_760_000_000)


def user(rng):
    return rng.choice(USERS)


def org(rng):
    return rng.choice(ORGS)


def proj(rng):
    return rng.choice(PROJECTS)


def email(rng):
    return f'{user(rng)}@{org(rng).replace("-", "")}.com'


def password(rng, n=None, url_safe=False):
    n = n or rng.randint(14, 22)
    alpha = ALNUM + ('' if url_safe else '!*-_+.~%^')
    while True:
        p = rs(rng, n, alpha)
        if any(c in DIG for c in p) and any(c in UP for c in p) and any(c in LO for c in p):
            return p


def jwt(rng, payload, alg='HS256', kid=None, sig_len=None):
    hdr = {'alg': alg, 'typ': 'JWT'}
    if kid:
        hdr['kid'] = kid
    h = b64u(json.dumps(hdr, separators=(',', ':')))
    p = b64u(json.dumps(payload, separators=(',', ':')))
    if alg == 'HS256':
        sig = hmac.new(rbytes(rng, 32), f'{h}.{p}'.encode(), hashlib.sha256).digest()
    elif alg == 'ES256':
        sig = rbytes(rng, 64)
    else:
        sig = rbytes(rng, sig_len or 256)
    return f'{h}.{p}.{b64u(sig)}'


# ---------------- bech32 (for age keys) ----------------
BECH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'


def _polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = ((chk & 0x1ffffff) << 5) ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def _convertbits(data, frm, to):
    acc = bits = 0
    ret = []
    maxv = (1 << to) - 1
    for v in data:
        acc = (acc << frm) | v
        bits += frm
        while bits >= to:
            bits -= to
            ret.append((acc >> bits) & maxv)
    if bits:
        ret.append((acc << (to - bits)) & maxv)
    return ret


def bech32(hrp, data):
    d = _convertbits(data, 8, 5)
    values = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp] + d
    pm = _polymod(values + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + '1' + ''.join(BECH[x] for x in d + chk)


# ---------------- deterministic key material ----------------
_SMALL = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** .5) + 1))]


def _is_prime(n, rng):
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(24):
        a = rng.randrange(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(rng, bits):
    while True:
        c = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if any(c % p == 0 for p in _SMALL):
            continue
        if _is_prime(c, rng):
            return c


def rsa_key(rng, bits=2048):
    from cryptography.hazmat.primitives.asymmetric import rsa
    e = 65537
    while True:
        p, q = _prime(rng, bits // 2), _prime(rng, bits // 2)
        if p == q:
            continue
        phi = (p - 1) * (q - 1)
        if math.gcd(e, phi) != 1:
            continue
        if p < q:
            p, q = q, p
        d = pow(e, -1, phi)
        pub = rsa.RSAPublicNumbers(e, p * q)
        return rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), pub).private_key()


def ec_key(rng):
    from cryptography.hazmat.primitives.asymmetric import ec
    n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    return ec.derive_private_key(rng.randrange(1, n), ec.SECP256R1())


def ed_key(rng):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    return Ed25519PrivateKey.from_private_bytes(rbytes(rng, 32))


def pem_pkcs8(key):
    from cryptography.hazmat.primitives import serialization as s
    return key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode()


def pem_trad(key):
    from cryptography.hazmat.primitives import serialization as s
    return key.private_bytes(s.Encoding.PEM, s.PrivateFormat.TraditionalOpenSSL, s.NoEncryption()).decode()


def _sstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack('>I', len(b)) + b


def _mpint(n):
    b = n.to_bytes((n.bit_length() + 8) // 8, 'big') if n else b''
    return _sstr(b)


def ssh_pub_blob(key):
    from cryptography.hazmat.primitives import serialization as s
    from cryptography.hazmat.primitives.asymmetric import rsa
    if isinstance(key, rsa.RSAPrivateKey):
        pn = key.public_key().public_numbers()
        return _sstr('ssh-rsa') + _mpint(pn.e) + _mpint(pn.n), 'ssh-rsa'
    pub = key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
    return _sstr('ssh-ed25519') + _sstr(pub), 'ssh-ed25519'


def ssh_pub_line(key, comment):
    blob, kt = ssh_pub_blob(key)
    return f'{kt} {b64(blob)} {comment}'


def openssh_private(key, comment, rng):
    """Unencrypted openssh-key-v1, deterministic (checkint from rng)."""
    from cryptography.hazmat.primitives import serialization as s
    from cryptography.hazmat.primitives.asymmetric import rsa
    blob, kt = ssh_pub_blob(key)
    chk = rng.getrandbits(32)
    priv = struct.pack('>II', chk, chk)
    if isinstance(key, rsa.RSAPrivateKey):
        n = key.private_numbers()
        priv += _sstr('ssh-rsa') + _mpint(n.public_numbers.n) + _mpint(n.public_numbers.e) + _mpint(n.d) + \
            _mpint(n.iqmp) + _mpint(n.p) + _mpint(n.q)
    else:
        seed = key.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())
        pub = key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
        priv += _sstr('ssh-ed25519') + _sstr(pub) + _sstr(seed + pub)
    priv += _sstr(comment)
    i = 1
    while len(priv) % 8:
        priv += bytes([i])
        i += 1
    body = b'openssh-key-v1\x00' + _sstr('none') + _sstr('none') + _sstr(b'') + struct.pack('>I', 1) + \
        _sstr(blob) + _sstr(priv)
    enc = b64(body)
    lines = [enc[i:i + 70] for i in range(0, len(enc), 70)]
    return '-----BEGIN OPENSSH PRIVATE KEY-----\n' + '\n'.join(lines) + '\n-----END OPENSSH PRIVATE KEY-----\n'


def ppk_v3_ed25519(key, comment):
    from cryptography.hazmat.primitives import serialization as s
    blob, kt = ssh_pub_blob(key)
    seed = key.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())
    privblob = _sstr(seed)
    mac = hmac.new(b'', _sstr(kt) + _sstr('none') + _sstr(comment) + _sstr(blob) + _sstr(privblob),
                   hashlib.sha256).hexdigest()
    pb, vb = b64(blob), b64(privblob)
    pl = [pb[i:i + 64] for i in range(0, len(pb), 64)]
    vl = [vb[i:i + 64] for i in range(0, len(vb), 64)]
    return (f'PuTTY-User-Key-File-3: {kt}\nEncryption: none\nComment: {comment}\nPublic-Lines: {len(pl)}\n' +
            '\n'.join(pl) + f'\nPrivate-Lines: {len(vl)}\n' + '\n'.join(vl) + f'\nPrivate-MAC: {mac}\n')


def self_signed_cert(rng, cn):
    """Ed25519 self-signed certificate (deterministic signature) -> PEM (public material)."""
    import datetime
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    from cryptography.hazmat.primitives import serialization as s
    k = ed_key(rng)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
            .serial_number(rng.getrandbits(64)).not_valid_before(datetime.datetime(2024, 1, 1))
            .not_valid_after(datetime.datetime(2034, 1, 1)).sign(k, None))
    return cert.public_bytes(s.Encoding.PEM).decode()


@dataclass
class Spec:
    provider: str
    value: str
    env: str = 'API_KEY'
    extras: list = field(default_factory=list)     # non-secret companions [(ENV, value)] or secret halves
    curl: str = None                                # a shell command line that uses the secret
    natives: list = field(default_factory=list)    # [(relpath, text, ctxname)] tool-native placements
    generic: bool = True                            # may go into generic contexts (.env, yaml, code...)
    needle: str = None                              # text to locate the secret line (default: value)

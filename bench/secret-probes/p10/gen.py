#!/usr/bin/env python3
"""p10 blind corpus generator: false-alarm focused.

usage: python3 gen.py SEED  -> writes out_SEED/{pos,neg}/hNNN/..., manifest.json, secrets.json
Everything random derives from random.Random(SEED).
"""
import sys, os, json, base64, hashlib, hmac, struct, zlib, uuid, shutil, datetime, binascii

import random

from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519, x25519, padding
from cryptography.hazmat.primitives import serialization, hashes
from cryptography import x509
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))

LOWER = 'abcdefghijklmnopqrstuvwxyz'
UPPER = LOWER.upper()
DIG = '0123456789'
B62 = DIG + UPPER + LOWER
HEX = '0123456789abcdef'
B64URL = UPPER + LOWER + DIG + '-_'
B32 = UPPER + '234567'
CRYPT64 = './' + DIG + UPPER + LOWER
BCRYPT64 = './' + UPPER + LOWER + DIG

FIRST = ['alice', 'bob', 'carol', 'dmitri', 'eva', 'farah', 'gustavo', 'hana', 'ivan', 'jun', 'kemal', 'lena',
         'mateo', 'nadia', 'oskar', 'priya', 'quentin', 'rosa', 'sven', 'tariq', 'uma', 'viktor', 'wen', 'yusuf', 'zoe']
LAST = ['andersen', 'baker', 'chen', 'diaz', 'eriksen', 'fischer', 'garcia', 'haddad', 'ito', 'jansen', 'kowalski',
        'lindqvist', 'moreau', 'nakamura', 'okafor', 'petrov', 'quinn', 'rossi', 'silva', 'tanaka', 'novak', 'weber']
ORGS = ['acme', 'northwind', 'globex', 'initech', 'umbrella-labs', 'hooli', 'vandelay', 'stark-ind', 'wayne-ent',
        'tyrell', 'cyberdyne', 'soylent', 'massive-dyn', 'pied-piper', 'aperture', 'blueharbor', 'kestrel-io']
PROJ = ['billing-api', 'checkout', 'ledger', 'auth-service', 'inventory', 'notifier', 'report-gen', 'search-indexer',
        'web-frontend', 'mobile-backend', 'data-pipeline', 'infra', 'platform', 'customer-portal', 'payments',
        'shipping', 'analytics', 'admin-console', 'gateway', 'scheduler', 'media-proxy', 'feature-store']
WORDS = ['harbor', 'maple', 'falcon', 'copper', 'river', 'lantern', 'orbit', 'velvet', 'tundra', 'cobalt', 'meadow',
         'summit', 'ember', 'glacier', 'willow', 'quartz', 'prairie', 'nimbus', 'saffron', 'basalt', 'juniper', 'pepper']
TLDS = ['com', 'io', 'net', 'dev', 'co']


class Ctx:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self._rsa = []

    # ---- random primitives
    def s(self, alpha, n):
        return ''.join(self.r.choice(alpha) for _ in range(n))

    def hexs(self, n):
        return self.s(HEX, n)

    def b62(self, n):
        return self.s(B62, n)

    def rb(self, n):
        return bytes(self.r.getrandbits(8) for _ in range(n))

    def b64(self, n, url=False, pad=True):
        v = base64.urlsafe_b64encode(self.rb(n)) if url else base64.b64encode(self.rb(n))
        v = v.decode()
        return v if pad else v.rstrip('=')

    def uuid4(self):
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def ri(self, a, b):
        return self.r.randint(a, b)

    def user(self):
        return self.pick(FIRST)

    def fullname(self):
        return '%s %s' % (self.pick(FIRST).title(), self.pick(LAST).title())

    def org(self):
        return self.pick(ORGS)

    def proj(self):
        return self.pick(PROJ)

    def domain(self):
        return '%s.%s' % (self.org().replace('-', ''), self.pick(TLDS))

    def email(self):
        return '%s.%s@%s' % (self.pick(FIRST), self.pick(LAST), self.domain())

    def ip(self, private=True):
        if private:
            return self.pick(['10.%d.%d.%d' % (self.ri(0, 40), self.ri(0, 255), self.ri(2, 254)),
                              '192.168.%d.%d' % (self.ri(0, 10), self.ri(2, 254)),
                              '172.%d.%d.%d' % (self.ri(16, 31), self.ri(0, 255), self.ri(2, 254))])
        return '%d.%d.%d.%d' % (self.pick([34, 52, 81, 93, 104, 142, 185, 203]), self.ri(0, 255), self.ri(0, 255), self.ri(1, 254))

    def dt(self, year=None):
        y = year or self.ri(2021, 2025)
        return datetime.datetime(y, self.ri(1, 12), self.ri(1, 28), self.ri(0, 23), self.ri(0, 59), self.ri(0, 59))

    def ver(self):
        return '%d.%d.%d' % (self.ri(0, 9), self.ri(0, 30), self.ri(0, 40))

    def home_proj(self):
        """realistic project dir inside a home folder"""
        p = self.proj()
        o = self.org()
        return self.pick(['code/%s' % p, 'src/%s/%s' % (o, p), 'work/%s-%s' % (o, p), 'projects/%s' % p,
                          'git/%s' % p, 'dev/%s/%s' % (o, p)])

    def human_password(self):
        w = self.pick(WORDS)
        w2 = self.pick(WORDS)
        pat = self.ri(0, 5)
        if pat == 0:
            return '%s%s%d%s' % (w.title(), w2.title(), self.ri(10, 2025), self.pick('!#$%&*?@'))
        if pat == 1:
            return '%s-%s-%s-%d' % (w, w2, self.pick(WORDS), self.ri(1, 99))
        if pat == 2:
            leet = w.replace('a', '@').replace('o', '0').replace('e', '3').replace('i', '1')
            return '%s%s%d' % (leet.title(), self.pick('!$#'), self.ri(100, 9999))
        if pat == 3:
            return '%s_%s%d%s' % (self.pick(['Spring', 'Summer', 'Autumn', 'Winter']), w.title(), self.ri(2019, 2025), self.pick('!.#'))
        return self.gen_password(self.ri(14, 24))

    def gen_password(self, n=20):
        alpha = B62 + '!#%*+-=?@^_~'
        while True:
            p = self.s(alpha, n)
            if any(c in DIG for c in p) and any(c in UPPER for c in p) and any(c in LOWER for c in p):
                return p

    # ---- deterministic keys
    def _prime(self, bits):
        small = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
        while True:
            c = self.r.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
            if any(c % p == 0 for p in small):
                continue
            if c % 65537 == 1:
                continue
            if self._mr(c):
                return c

    def _mr(self, n, k=24):
        d, s = n - 1, 0
        while d % 2 == 0:
            d //= 2
            s += 1
        for _ in range(k):
            a = self.r.randrange(2, n - 2)
            x = pow(a, d, n)
            if x in (1, n - 1):
                continue
            for _ in range(s - 1):
                x = pow(x, 2, n)
                if x == n - 1:
                    break
            else:
                return False
        return True

    def rsa_key(self, bits=2048):
        e = 65537
        while True:
            p = self._prime(bits // 2)
            q = self._prime(bits // 2)
            if p == q:
                continue
            if p < q:
                p, q = q, p
            n = p * q
            if n.bit_length() != bits:
                continue
            phi = (p - 1) * (q - 1)
            d = pow(e, -1, phi)
            nums = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), rsa.RSAPublicNumbers(e, n))
            return nums.private_key()

    def ec_key(self, curve=None):
        curve = curve or ec.SECP256R1()
        order = {'secp256r1': 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
                 'secp384r1': 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973}[curve.name]
        return ec.derive_private_key(self.r.randrange(1, order), curve)

    def ed_key(self):
        return ed25519.Ed25519PrivateKey.from_private_bytes(self.rb(32))

    def x_key(self):
        return x25519.X25519PrivateKey.from_private_bytes(self.rb(32))


# ---------------- encodings / formats ----------------

def raw_pub(k):
    return k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def raw_priv(k):
    return k.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())


def sshstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack('>I', len(b)) + b


def ssh_pub_line(k, comment=''):
    if isinstance(k, ed25519.Ed25519PrivateKey):
        blob = sshstr('ssh-ed25519') + sshstr(raw_pub(k))
        s = 'ssh-ed25519 ' + base64.b64encode(blob).decode()
    else:
        s = k.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return (s + ' ' + comment).rstrip()


def ssh_fingerprint(k):
    blob = base64.b64decode(ssh_pub_line(k).split()[1])
    return 'SHA256:' + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip('=')


def openssh_private_ed25519(ctx, k, comment):
    pub = raw_pub(k)
    priv = raw_priv(k)
    pubblob = sshstr('ssh-ed25519') + sshstr(pub)
    check = ctx.r.getrandbits(32)
    sec = struct.pack('>II', check, check) + sshstr('ssh-ed25519') + sshstr(pub) + sshstr(priv + pub) + sshstr(comment)
    i = 1
    while len(sec) % 8:
        sec += bytes([i])
        i += 1
    body = b'openssh-key-v1\x00' + sshstr('none') + sshstr('none') + sshstr(b'') + struct.pack('>I', 1) + sshstr(pubblob) + sshstr(sec)
    b = base64.b64encode(body).decode()
    lines = ['-----BEGIN OPENSSH PRIVATE KEY-----'] + [b[i:i + 70] for i in range(0, len(b), 70)] + ['-----END OPENSSH PRIVATE KEY-----']
    return lines


def pem_lines(s):
    return s.decode().strip('\n').split('\n') if isinstance(s, bytes) else s.strip('\n').split('\n')


def priv_pem(k, fmt='pkcs8'):
    f = {'pkcs8': serialization.PrivateFormat.PKCS8, 'trad': serialization.PrivateFormat.TraditionalOpenSSL}[fmt]
    return k.private_bytes(serialization.Encoding.PEM, f, serialization.NoEncryption())


def pub_pem(k):
    return k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def make_cert(ctx, key, cn, issuer_key=None, issuer_cn=None, ca=False, days=365):
    start = datetime.datetime(ctx.ri(2022, 2025), ctx.ri(1, 12), ctx.ri(1, 28), ctx.ri(0, 23), ctx.ri(0, 59))
    subj = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, ctx.pick(['US', 'DE', 'NL', 'SE', 'JP', 'GB'])),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, ctx.org().title()),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    iss = subj if issuer_key is None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_cn)])
    sk = issuer_key or key
    b = (x509.CertificateBuilder().subject_name(subj).issuer_name(iss).public_key(key.public_key())
         .serial_number(ctx.r.getrandbits(120) | 1).not_valid_before(start)
         .not_valid_after(start + datetime.timedelta(days=days))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(cn)]), critical=False)
    alg = None if isinstance(sk, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    if isinstance(sk, ec.EllipticCurvePrivateKey):
        raise ValueError('ECDSA signing is randomized; use RSA or Ed25519 issuer')
    cert = b.sign(sk, alg)
    return cert.public_bytes(serialization.Encoding.PEM)


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip('=')


# bech32 (BIP-173) for age
_BECH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'


def _polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def bech32(hrp, data8):
    acc, bits, out = 0, 0, []
    for b in data8:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    hv = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(hv + out + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + '1' + ''.join(_BECH[d] for d in out + chk)


# OpenPGP helpers
def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_packet(tag, body):
    n = len(body)
    if n < 192:
        ln = bytes([n])
    elif n < 8384:
        n2 = n - 192
        ln = bytes([(n2 >> 8) + 192, n2 & 0xFF])
    else:
        ln = b'\xff' + struct.pack('>I', n)
    return bytes([0xC0 | tag]) + ln + body


def mpi(b):
    i = int.from_bytes(b, 'big')
    return struct.pack('>H', i.bit_length()) + b.lstrip(b'\x00')


def pgp_armor(kind, data, headers=()):
    b = base64.b64encode(data).decode()
    out = ['-----BEGIN PGP %s-----' % kind] + list(headers) + ['']
    out += [b[i:i + 64] for i in range(0, len(b), 64)]
    out.append('=' + base64.b64encode(crc24(data).to_bytes(3, 'big')).decode())
    out.append('-----END PGP %s-----' % kind)
    return out


ED_OID = bytes.fromhex('2B06010401DA470F01')
CV_OID = bytes.fromhex('2B060104019755010501')


def pgp_key_block(ctx, name, email, secret=False):
    k = ctx.ed_key()
    ck = ctx.x_key()
    t = struct.pack('>I', int(ctx.dt().timestamp()))
    pubbody = b'\x04' + t + bytes([22]) + bytes([len(ED_OID)]) + ED_OID + mpi(b'\x40' + raw_pub(k))
    subbody = b'\x04' + t + bytes([18]) + bytes([len(CV_OID)]) + CV_OID + mpi(b'\x40' + raw_pub(ck)) + bytes([3, 1, 8, 7])
    fpr = hashlib.sha1(b'\x99' + struct.pack('>H', len(pubbody)) + pubbody).digest()
    uid = ('%s <%s>' % (name, email)).encode()

    def sig(sigtype, signer_data):
        hashed = b'\x05\x02' + t + b'\x02\x1b\x03' + b'\x16\x21\x04' + fpr
        unhashed = b'\x09\x10' + fpr[-8:]
        msg = signer_data + b'\x04' + bytes([sigtype, 22, 8]) + struct.pack('>H', len(hashed)) + hashed
        h = hashlib.sha256(msg + b'\x04\xff' + struct.pack('>I', len(hashed) + 6)).digest()
        s = k.sign(h)
        return (b'\x04' + bytes([sigtype, 22, 8]) + struct.pack('>H', len(hashed)) + hashed +
                struct.pack('>H', len(unhashed)) + unhashed + h[:2] + mpi(s[:32]) + mpi(s[32:]))

    pre = b'\x99' + struct.pack('>H', len(pubbody)) + pubbody
    if secret:
        sk = raw_priv(k)
        secmpi = mpi(sk)
        csum = struct.pack('>H', sum(secmpi) & 0xFFFF)
        keypkt = pgp_packet(5, pubbody + b'\x00' + secmpi + csum)
        cs = raw_priv(ck)[::-1]
        cmpi = mpi(cs)
        subpkt = pgp_packet(7, subbody + b'\x00' + cmpi + struct.pack('>H', sum(cmpi) & 0xFFFF))
    else:
        keypkt = pgp_packet(6, pubbody)
        subpkt = pgp_packet(14, subbody)
    data = (keypkt + pgp_packet(13, uid) + pgp_packet(2, sig(0x13, pre + b'\xb4' + struct.pack('>I', len(uid)) + uid)) +
            subpkt + pgp_packet(2, sig(0x18, pre)))
    kind = 'PRIVATE KEY BLOCK' if secret else 'PUBLIC KEY BLOCK'
    return pgp_armor(kind, data), fpr.hex().upper()


def pgp_message(ctx, size):
    pkesk = b'\x03' + ctx.rb(8) + bytes([18]) + mpi(b'\x40' + ctx.rb(32)) + bytes([48]) + ctx.rb(48)
    seipd = b'\x01' + ctx.rb(size)
    return pgp_armor('MESSAGE', pgp_packet(1, pkesk) + pgp_packet(18, seipd))


def github_token(ctx, prefix):
    body = ctx.b62(30)
    c = zlib.crc32(body.encode()) & 0xFFFFFFFF
    cs = ''
    while c:
        c, m = divmod(c, 62)
        cs = B62[m] + cs
    return prefix + body + cs.rjust(6, '0')


def jwt(ctx, payload, key=None):
    hdr = b64u(json.dumps({'alg': 'HS256', 'typ': 'JWT'}, separators=(',', ':')).encode())
    pl = b64u(json.dumps(payload, separators=(',', ':')).encode())
    sig = b64u(hmac.new(key or ctx.rb(32), (hdr + '.' + pl).encode(), hashlib.sha256).digest())
    return hdr + '.' + pl + '.' + sig


def sha512_crypt_like(ctx):
    return '$6$%s$%s' % (ctx.s(CRYPT64, 16), ctx.s(CRYPT64, 86))


def yescrypt_like(ctx):
    return '$y$j9T$%s$%s' % (ctx.s(CRYPT64, 22), ctx.s(CRYPT64, 43))


def bcrypt_like(ctx, v='2b', cost=12):
    return '$%s$%02d$%s' % (v, cost, ctx.s(BCRYPT64, 53))


def md5_crypt_like(ctx, magic='1'):
    return '$%s$%s$%s' % (magic, ctx.s(CRYPT64, 8), ctx.s(CRYPT64, 22))


def django_pbkdf2(ctx, pw=None):
    salt = ctx.b62(22)
    pw = pw or ctx.rb(12).hex()
    it = ctx.pick([600000, 720000, 870000])
    dk = hashlib.pbkdf2_hmac('sha256', pw.encode(), salt.encode(), 1000)  # cheap stand-in digest, format is what matters
    return 'pbkdf2_sha256$%d$%s$%s' % (it, salt, base64.b64encode(dk).decode())


def pg_scram(ctx):
    salt = ctx.rb(16)
    return 'SCRAM-SHA-256$4096:%s$%s:%s' % (base64.b64encode(salt).decode(), base64.b64encode(ctx.rb(32)).decode(),
                                             base64.b64encode(ctx.rb(32)).decode())


def pg_md5(ctx, user):
    return 'md5' + hashlib.md5(ctx.rb(16).hex().encode() + user.encode()).hexdigest()


def argon2_like(ctx):
    return '$argon2id$v=19$m=65536,t=3,p=4$%s$%s' % (ctx.b64(16, pad=False), ctx.b64(32, pad=False))


def sri(ctx, alg='sha512'):
    n = {'sha512': 64, 'sha384': 48, 'sha256': 32, 'sha1': 20}[alg]
    return '%s-%s' % (alg, ctx.b64(n))


# ======================================================================
# generator registry
# ======================================================================
import textwrap

NEG = []
POS = []


def neg(f):
    NEG.append(f)
    return f


def pos(f):
    POS.append(f)
    return f


def L(s):
    s = textwrap.dedent(s)
    if s.startswith('\n'):
        s = s[1:]
    return s.rstrip('\n').split('\n')


def R(family, path, lines, note, **kw):
    d = dict(family=family, path=path, lines=lines, note=note)
    d.update(kw)
    return d


def py_filler(c, n):
    """plausible python helper functions (no secrets)"""
    out = []
    for i in range(n):
        fn = c.pick(['normalize', 'parse', 'render', 'validate', 'load', 'merge', 'chunk', 'retry']) + '_' + c.pick(WORDS)
        out += ['', '', 'def %s(items, limit=%d):' % (fn, c.ri(5, 500)),
                '    """%s the %s records."""' % (fn.split('_')[0].title(), c.pick(WORDS)),
                '    out = []',
                '    for i, item in enumerate(items):',
                '        if i >= limit:',
                '            break',
                '        out.append(%s(item))' % c.pick(['str', 'dict', 'len', 'repr', 'sorted']),
                '    return out']
    return out


def go_filler(c, n):
    out = []
    for i in range(n):
        fn = c.pick(['parse', 'render', 'load', 'merge', 'split', 'collect']).title() + c.pick(WORDS).title()
        out += ['', '// %s is used by the %s handler.' % (fn, c.pick(WORDS)),
                'func %s(in []string) ([]string, error) {' % fn,
                '\tout := make([]string, 0, len(in))',
                '\tfor _, s := range in {',
                '\t\tif s == "" {',
                '\t\t\tcontinue',
                '\t\t}',
                '\t\tout = append(out, strings.TrimSpace(s))',
                '\t}',
                '\treturn out, nil',
                '}']
    return out


# ======================================================================
# NEGATIVES: source code that handles secrets without containing them
# ======================================================================

@neg
def n_py_hashing(c):
    lib = c.pick(['argon2', 'bcrypt', 'passlib'])
    if lib == 'argon2':
        body = L('''
            """Password hashing helpers (argon2id)."""
            from argon2 import PasswordHasher
            from argon2.exceptions import VerifyMismatchError, InvalidHashError

            _ph = PasswordHasher(time_cost=3, memory_cost=64 * 1024, parallelism=4)


            def hash_password(password: str) -> str:
                if len(password) < 12:
                    raise ValueError("password must be at least 12 characters")
                return _ph.hash(password)


            def verify_password(stored_hash: str, password: str) -> bool:
                try:
                    return _ph.verify(stored_hash, password)
                except (VerifyMismatchError, InvalidHashError):
                    return False


            def needs_rehash(stored_hash: str) -> bool:
                return _ph.check_needs_rehash(stored_hash)
            ''')
    elif lib == 'bcrypt':
        body = L('''
            import bcrypt
            import hmac

            ROUNDS = %d


            def hash_password(plain: str) -> bytes:
                return bcrypt.hashpw(plain.encode("utf-8"), bcrypt.gensalt(rounds=ROUNDS))


            def check_password(plain: str, hashed: bytes) -> bool:
                # bcrypt.checkpw is constant time
                return bcrypt.checkpw(plain.encode("utf-8"), hashed)


            def safe_compare(a: str, b: str) -> bool:
                return hmac.compare_digest(a.encode(), b.encode())
            ''' % c.ri(10, 14))
    else:
        body = L('''
            from passlib.context import CryptContext

            pwd_context = CryptContext(
                schemes=["argon2", "bcrypt", "pbkdf2_sha256"],
                deprecated="auto",
            )


            def get_password_hash(password):
                return pwd_context.hash(password)


            def verify_password(plain_password, hashed_password):
                return pwd_context.verify(plain_password, hashed_password)
            ''')
    body += py_filler(c, c.ri(0, 6))
    return R('code-hashing', '%s/%s/security/passwords.py' % (c.home_proj(), c.pick(['app', 'core', 'src/api'])), body,
             'python password hashing module (%s)' % lib)


@neg
def n_py_flask_auth(c):
    var = c.pick(['JWT_SECRET', 'JWT_SIGNING_KEY', 'AUTH_SECRET_KEY', 'SESSION_SECRET'])
    body = L('''
        import os
        import functools
        import jwt
        from flask import request, g, abort, current_app

        ALGORITHMS = ["HS256"]


        def _secret():
            secret = os.environ.get("%s")
            if not secret:
                raise RuntimeError("%s is not set; refusing to start")
            return secret


        def login_required(view):
            @functools.wraps(view)
            def wrapped(*args, **kwargs):
                header = request.headers.get("Authorization", "")
                if not header.startswith("Bearer "):
                    abort(401)
                token = header[len("Bearer "):]
                try:
                    claims = jwt.decode(token, _secret(), algorithms=ALGORITHMS, audience="%s")
                except jwt.PyJWTError as exc:
                    current_app.logger.info("rejected token: %%s", type(exc).__name__)
                    abort(401)
                g.user_id = claims["sub"]
                return view(*args, **kwargs)
            return wrapped


        def issue_token(user_id, ttl=3600):
            import time
            now = int(time.time())
            payload = {"sub": str(user_id), "iat": now, "exp": now + ttl, "aud": "%s"}
            return jwt.encode(payload, _secret(), algorithm="HS256")
        ''' % (var, var, c.proj(), c.proj()))
    body += py_filler(c, c.ri(0, 10))
    return R('code-auth', '%s/app/auth.py' % c.home_proj(), body, 'flask JWT middleware reading secret from env')


@neg
def n_go_oauth(c):
    prov = c.pick(['github', 'google', 'gitlab'])
    ep = {'github': 'github.Endpoint', 'google': 'google.Endpoint', 'gitlab': 'gitlab.Endpoint'}[prov]
    body = L('''
        package auth

        import (
        \t"context"
        \t"crypto/rand"
        \t"encoding/base64"
        \t"errors"
        \t"net/http"
        \t"os"
        \t"strings"

        \t"golang.org/x/oauth2"
        \t"golang.org/x/oauth2/%s"
        )

        // Config builds the OAuth2 client config from the environment.
        // Client secrets are injected by the platform; never commit them.
        func Config() (*oauth2.Config, error) {
        \tid := os.Getenv("%s_CLIENT_ID")
        \tsecret := os.Getenv("%s_CLIENT_SECRET")
        \tif id == "" || secret == "" {
        \t\treturn nil, errors.New("oauth: %s_CLIENT_ID / %s_CLIENT_SECRET must be set")
        \t}
        \treturn &oauth2.Config{
        \t\tClientID:     id,
        \t\tClientSecret: secret,
        \t\tEndpoint:     %s,
        \t\tRedirectURL:  os.Getenv("OAUTH_REDIRECT_URL"),
        \t\tScopes:       []string{"read:user", "user:email"},
        \t}, nil
        }

        // NewState returns a random state parameter for CSRF protection.
        func NewState() (string, error) {
        \tb := make([]byte, 32)
        \tif _, err := rand.Read(b); err != nil {
        \t\treturn "", err
        \t}
        \treturn base64.RawURLEncoding.EncodeToString(b), nil
        }

        func Exchange(ctx context.Context, cfg *oauth2.Config, r *http.Request) (*oauth2.Token, error) {
        \tcode := r.URL.Query().Get("code")
        \tif code == "" {
        \t\treturn nil, errors.New("missing code")
        \t}
        \treturn cfg.Exchange(ctx, code)
        }
        ''' % (prov, prov.upper(), prov.upper(), prov.upper(), prov.upper(), ep))
    body += go_filler(c, c.ri(0, 8))
    return R('code-oauth', '%s/internal/auth/oauth.go' % c.home_proj(), body, 'go oauth2 client reading creds from env', bom=False)


@neg
def n_js_jwt_mw(c):
    body = L('''
        'use strict';

        const jwt = require('jsonwebtoken');
        const createError = require('http-errors');

        const SECRET = process.env.JWT_SECRET;
        const ISSUER = process.env.JWT_ISSUER || 'https://auth.%s';

        if (!SECRET) {
          throw new Error('JWT_SECRET must be provided via environment');
        }

        /**
         * Express middleware: verifies the bearer token and attaches req.user.
         */
        module.exports = function requireAuth(options = {}) {
          const { optional = false } = options;
          return (req, res, next) => {
            const header = req.get('authorization') || '';
            const [scheme, token] = header.split(' ');
            if (scheme !== 'Bearer' || !token) {
              return optional ? next() : next(createError(401, 'missing bearer token'));
            }
            jwt.verify(token, SECRET, { issuer: ISSUER, algorithms: ['HS256'] }, (err, claims) => {
              if (err) {
                req.log && req.log.warn({ reason: err.name }, 'token rejected');
                return next(createError(401, 'invalid token'));
              }
              req.user = { id: claims.sub, roles: claims.roles || [] };
              next();
            });
          };
        };
        ''' % c.domain())
    return R('code-auth', '%s/src/middleware/requireAuth.js' % c.home_proj(), body, 'express JWT middleware, secret from process.env')


@neg
def n_java_spring(c):
    pkg = 'com.%s.%s' % (c.org().replace('-', ''), c.proj().replace('-', ''))
    body = L('''
        package %s.config;

        import org.springframework.beans.factory.annotation.Value;
        import org.springframework.context.annotation.Bean;
        import org.springframework.context.annotation.Configuration;
        import org.springframework.security.config.annotation.web.builders.HttpSecurity;
        import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
        import org.springframework.security.crypto.password.PasswordEncoder;
        import org.springframework.security.web.SecurityFilterChain;

        @Configuration
        public class SecurityConfig {

            @Value("${app.security.jwt-secret}")
            private String jwtSecret;

            @Value("${app.security.bcrypt-strength:12}")
            private int strength;

            @Bean
            public PasswordEncoder passwordEncoder() {
                return new BCryptPasswordEncoder(strength);
            }

            @Bean
            public SecurityFilterChain filterChain(HttpSecurity http) throws Exception {
                http.csrf(csrf -> csrf.disable())
                    .authorizeHttpRequests(auth -> auth
                        .requestMatchers("/actuator/health", "/api/public/**").permitAll()
                        .anyRequest().authenticated())
                    .addFilterBefore(new JwtFilter(jwtSecret), UsernamePasswordAuthenticationFilter.class);
                return http.build();
            }
        }
        ''' % pkg)
    return R('code-auth', '%s/src/main/java/%s/config/SecurityConfig.java' % (c.home_proj(), pkg.replace('.', '/')), body,
             'spring security config, secret injected via ${}')


@neg
def n_rust_clap(c):
    body = L('''
        use clap::Parser;
        use std::path::PathBuf;

        /// Database migration tool
        #[derive(Parser, Debug)]
        #[command(version, about)]
        pub struct Args {
            /// Database host
            #[arg(long, default_value = "localhost", env = "PGHOST")]
            pub host: String,

            /// Database user
            #[arg(short, long, env = "PGUSER")]
            pub user: String,

            /// Database password. Prefer --password-file or PGPASSWORD over passing it inline.
            #[arg(long, env = "PGPASSWORD", hide_env_values = true)]
            pub password: Option<String>,

            /// Read the password from this file (first line)
            #[arg(long, conflicts_with = "password")]
            pub password_file: Option<PathBuf>,

            /// Directory containing *.sql migrations
            #[arg(long, default_value = "migrations")]
            pub dir: PathBuf,
        }

        impl Args {
            pub fn resolve_password(&self) -> std::io::Result<Option<String>> {
                if let Some(p) = &self.password {
                    return Ok(Some(p.clone()));
                }
                match &self.password_file {
                    Some(path) => {
                        let s = std::fs::read_to_string(path)?;
                        Ok(s.lines().next().map(|l| l.trim_end().to_string()))
                    }
                    None => Ok(rpassword::prompt_password("Password: ").ok()),
                }
            }
        }
        ''')
    return R('code-cli', '%s/src/cli.rs' % c.home_proj(), body, 'rust clap CLI with --password flag', bom=False)


@neg
def n_ruby_creds(c):
    body = L('''
        # frozen_string_literal: true

        Aws.config.update(
          region: ENV.fetch("AWS_REGION", "eu-west-1"),
          credentials: Aws::Credentials.new(
            Rails.application.credentials.dig(:aws, :access_key_id),
            Rails.application.credentials.dig(:aws, :secret_access_key)
          )
        )

        Stripe.api_key = Rails.application.credentials.stripe[:secret_key]
        Stripe.api_version = "2024-06-20"

        Rails.application.config.action_mailer.smtp_settings = {
          address: "smtp.sendgrid.net",
          port: 587,
          user_name: "apikey",
          password: Rails.application.credentials.dig(:sendgrid, :api_key),
          authentication: :plain,
          enable_starttls_auto: true
        }
        ''')
    return R('code-config', '%s/config/initializers/services.rb' % c.home_proj(), body, 'rails initializer reading credentials store')


@neg
def n_csharp_appsettings(c):
    db = c.proj().replace('-', '')
    style = c.ri(0, 1)
    cs = ('Server=sql-%s.internal;Database=%s;Integrated Security=True;TrustServerCertificate=True' % (c.pick(WORDS), db) if style == 0
          else 'Host=pg.internal;Database=%s;Username=%s_app;Password=#{DbPassword}#' % (db, db))
    body = L('''
        {
          "Logging": {
            "LogLevel": {
              "Default": "Information",
              "Microsoft.AspNetCore": "Warning"
            }
          },
          "AllowedHosts": "*",
          "ConnectionStrings": {
            "Default": "%s"
          },
          "Jwt": {
            "Issuer": "https://login.%s",
            "Audience": "%s",
            "SigningKey": ""
          },
          "KeyVault": {
            "VaultUri": "https://kv-%s-prod.vault.azure.net/"
          }
        }
        ''' % (cs, c.domain(), db, db[:10]))
    note = 'appsettings with Integrated Security' if style == 0 else 'appsettings with #{DbPassword}# release-pipeline token'
    return R('config-template', '%s/src/Api/appsettings.json' % c.home_proj(), body, note)


@neg
def n_php_wpconfig(c):
    body = L('''
        <?php
        /**
         * WordPress base configuration. Values come from the container environment.
         */
        define( 'DB_NAME', getenv( 'WORDPRESS_DB_NAME' ) ?: 'wordpress' );
        define( 'DB_USER', getenv( 'WORDPRESS_DB_USER' ) ?: 'wordpress' );
        define( 'DB_PASSWORD', getenv( 'WORDPRESS_DB_PASSWORD' ) );
        define( 'DB_HOST', getenv( 'WORDPRESS_DB_HOST' ) ?: 'mysql' );
        define( 'DB_CHARSET', 'utf8mb4' );
        define( 'DB_COLLATE', '' );

        /* Authentication unique keys and salts: injected at deploy time. */
        define( 'AUTH_KEY',         getenv( 'WORDPRESS_AUTH_KEY' ) );
        define( 'SECURE_AUTH_KEY',  getenv( 'WORDPRESS_SECURE_AUTH_KEY' ) );
        define( 'LOGGED_IN_KEY',    getenv( 'WORDPRESS_LOGGED_IN_KEY' ) );
        define( 'NONCE_KEY',        getenv( 'WORDPRESS_NONCE_KEY' ) );
        define( 'AUTH_SALT',        getenv( 'WORDPRESS_AUTH_SALT' ) );
        define( 'SECURE_AUTH_SALT', getenv( 'WORDPRESS_SECURE_AUTH_SALT' ) );
        define( 'LOGGED_IN_SALT',   getenv( 'WORDPRESS_LOGGED_IN_SALT' ) );
        define( 'NONCE_SALT',       getenv( 'WORDPRESS_NONCE_SALT' ) );

        $table_prefix = 'wp_';
        define( 'WP_DEBUG', false );

        if ( ! defined( 'ABSPATH' ) ) {
        	define( 'ABSPATH', __DIR__ . '/' );
        }
        require_once ABSPATH . 'wp-settings.php';
        ''')
    return R('code-config', 'sites/%s/wp-config.php' % c.domain(), body, 'wp-config using getenv for DB password and salts')


@neg
def n_py_test_pw(c):
    body = L('''
        import pytest

        from accounts.validators import PasswordPolicy, PasswordTooWeak

        policy = PasswordPolicy(min_length=12, require_symbol=True, deny_common=True)


        @pytest.mark.parametrize("candidate", [
            "password",
            "password123",
            "hunter2",
            "qwerty",
            "letmein",
            "12345678",
            "correct horse battery staple",
        ])
        def test_common_or_short_passwords_are_rejected(candidate):
            with pytest.raises(PasswordTooWeak):
                policy.check(candidate)


        def test_error_message_does_not_echo_password():
            with pytest.raises(PasswordTooWeak) as exc:
                policy.check("hunter2")
            assert "hunter2" not in str(exc.value)


        def test_length_boundary():
            assert policy.too_short("a" * 11)
            assert not policy.too_short("a" * 12)


        def test_hash_is_not_plaintext(user_factory):
            user = user_factory(password="not-a-real-password-%d")
            assert user.password.startswith("argon2$")
            assert "not-a-real-password" not in user.password
        ''' % c.ri(1, 99))
    return R('code-test', '%s/tests/test_password_policy.py' % c.home_proj(), body,
             'pytest for password policy with canonical weak passwords (hunter2, password123)')


@neg
def n_sql_migration(c):
    role = c.proj().replace('-', '_')
    style = c.ri(0, 2)
    if style == 0:
        body = L('''
            -- %s_create_roles.sql
            -- Run with: psql -v app_password="$APP_DB_PASSWORD" -f this_file.sql
            \\set ON_ERROR_STOP on

            CREATE ROLE %s_app LOGIN PASSWORD :'app_password';
            CREATE ROLE %s_readonly NOLOGIN;
            GRANT CONNECT ON DATABASE %s TO %s_app;
            GRANT USAGE ON SCHEMA public TO %s_readonly;
            GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s_readonly;
            ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO %s_readonly;
            ''' % (c.dt().strftime('%Y%m%d%H%M'), role, role, role, role, role, role, role))
    elif style == 1:
        body = L('''
            -- Flyway V%d__service_user.sql
            -- Password is set out-of-band by the secrets operator (see runbook RB-%d).
            CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED WITH caching_sha2_password;
            ALTER USER '%s'@'%%' ACCOUNT LOCK;
            GRANT SELECT, INSERT, UPDATE, DELETE ON `%s`.* TO '%s'@'%%';
            ''' % (c.ri(2, 90), c.ri(100, 999), role, role, role, role))
    else:
        body = L('''
            CREATE TABLE users (
                id            BIGSERIAL PRIMARY KEY,
                email         CITEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                password_changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                failed_logins INTEGER NOT NULL DEFAULT 0,
                mfa_secret_encrypted BYTEA,
                created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
            );

            COMMENT ON COLUMN users.password_hash IS 'argon2id PHC string, never plaintext';
            COMMENT ON COLUMN users.mfa_secret_encrypted IS 'TOTP seed, encrypted with KMS data key';

            CREATE TABLE api_tokens (
                id          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
                user_id     BIGINT NOT NULL REFERENCES users(id),
                token_hash  CHAR(64) NOT NULL UNIQUE,  -- sha256 of the token; token shown once
                prefix      VARCHAR(12) NOT NULL,
                last_used_at TIMESTAMPTZ,
                revoked_at  TIMESTAMPTZ
            );
            ''')
    return R('code-sql', '%s/db/migrations/%03d_%s.sql' % (c.home_proj(), c.ri(1, 120), c.pick(['roles', 'users', 'auth'])), body,
             'SQL migration with password placeholder / hash columns')


@neg
def n_sql_seed_hashes(c):
    rows = []
    for i in range(c.ri(8, 40)):
        rows.append("  (%d, '%s', '%s', '%s')," % (i + 1, c.email(), bcrypt_like(c, c.pick(['2a', '2b', '2y']), c.pick([10, 12])),
                                                   c.dt().strftime('%Y-%m-%d %H:%M:%S')))
    rows[-1] = rows[-1].rstrip(',') + ';'
    body = ['-- dev seed data: bcrypt hashes only (accounts are disabled in prod)',
            'INSERT INTO users (id, email, password_hash, created_at) VALUES'] + rows
    return R('hash', '%s/db/seeds/users.sql' % c.home_proj(), body, 'SQL seed with bcrypt password hashes')


@neg
def n_c_getpass(c):
    body = L('''
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        #include <termios.h>

        /* Read a passphrase from the terminal without echo. Caller must free(). */
        static char *read_passphrase(const char *prompt)
        {
            struct termios old, noecho;
            char *buf = calloc(1, 256);
            if (!buf)
                return NULL;
            fputs(prompt, stderr);
            tcgetattr(STDIN_FILENO, &old);
            noecho = old;
            noecho.c_lflag &= ~ECHO;
            tcsetattr(STDIN_FILENO, TCSANOW, &noecho);
            if (!fgets(buf, 256, stdin))
                buf[0] = '\\0';
            tcsetattr(STDIN_FILENO, TCSANOW, &old);
            fputc('\\n', stderr);
            buf[strcspn(buf, "\\r\\n")] = '\\0';
            return buf;
        }

        static void wipe(char *p)
        {
            if (p) {
                explicit_bzero(p, strlen(p));
                free(p);
            }
        }

        int main(int argc, char **argv)
        {
            char *pass = getenv("KEYTOOL_PASSPHRASE") ? strdup(getenv("KEYTOOL_PASSPHRASE"))
                                                    : read_passphrase("Passphrase: ");
            int rc = unlock_keystore(argc > 1 ? argv[1] : "keystore.db", pass);
            wipe(pass);
            return rc;
        }
        ''')
    return R('code-cli', '%s/src/keytool.c' % c.home_proj(), body, 'C tool reading passphrase without echo', bom=False)


@neg
def n_swift_keychain(c):
    svc = 'com.%s.%s' % (c.org().replace('-', ''), c.proj().replace('-', ''))
    body = L('''
        import Foundation
        import Security

        enum KeychainError: Error { case notFound, unexpected(OSStatus) }

        struct TokenStore {
            let service = "%s"

            func save(token: String, account: String) throws {
                let data = Data(token.utf8)
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: account,
                    kSecValueData as String: data,
                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                ]
                SecItemDelete(query as CFDictionary)
                let status = SecItemAdd(query as CFDictionary, nil)
                guard status == errSecSuccess else { throw KeychainError.unexpected(status) }
            }

            func load(account: String) throws -> String {
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: account,
                    kSecReturnData as String: true,
                    kSecMatchLimit as String: kSecMatchLimitOne
                ]
                var item: CFTypeRef?
                let status = SecItemCopyMatching(query as CFDictionary, &item)
                guard status != errSecItemNotFound else { throw KeychainError.notFound }
                guard status == errSecSuccess, let data = item as? Data else { throw KeychainError.unexpected(status) }
                return String(decoding: data, as: UTF8.self)
            }
        }
        ''' % svc)
    return R('code-mobile', '%s/ios/App/Auth/TokenStore.swift' % c.home_proj(), body, 'swift keychain wrapper')


@neg
def n_py_click(c):
    body = L('''
        import click
        import psycopg


        @click.command()
        @click.option("--host", default="localhost", show_default=True)
        @click.option("--user", "-U", required=True)
        @click.option("--password", prompt=True, hide_input=True, envvar="PGPASSWORD",
                      help="Database password (prompted if not given).")
        @click.option("--dbname", default="%s")
        def dump_stats(host, user, password, dbname):
            """Print table sizes for a database."""
            with psycopg.connect(host=host, user=user, password=password, dbname=dbname) as conn:
                for name, size in conn.execute(
                    "SELECT relname, pg_total_relation_size(relid) FROM pg_stat_user_tables ORDER BY 2 DESC"
                ):
                    click.echo(f"{name:40} {size:>12}")


        if __name__ == "__main__":
            dump_stats()
        ''' % c.proj().replace('-', '_'))
    return R('code-cli', '%s/tools/dump_stats.py' % c.home_proj(), body, 'click CLI prompting for password')


@neg
def n_ts_pkce(c):
    body = L('''
        import { randomBytes, createHash } from 'crypto';

        export interface PkcePair {
          verifier: string;
          challenge: string;
        }

        const base64url = (buf: Buffer): string =>
          buf.toString('base64').replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');

        export function createPkcePair(): PkcePair {
          const verifier = base64url(randomBytes(32));
          const challenge = base64url(createHash('sha256').update(verifier).digest());
          return { verifier, challenge };
        }

        export function authorizeUrl(clientId: string, redirectUri: string, pkce: PkcePair, state: string): string {
          const params = new URLSearchParams({
            response_type: 'code',
            client_id: clientId,
            redirect_uri: redirectUri,
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
            scope: 'openid profile email offline_access',
            state,
          });
          return `https://auth.%s/oauth2/authorize?${params.toString()}`;
        }

        // RFC 7636 appendix B test vector (public, from the spec)
        export const RFC7636_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
        export const RFC7636_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
        ''' % c.domain())
    return R('code-oauth', '%s/web/src/auth/pkce.ts' % c.home_proj(), body, 'PKCE helper with RFC 7636 public test vector')


@neg
def n_go_webhook(c):
    body = L('''
        package webhooks

        import (
        \t"crypto/hmac"
        \t"crypto/sha256"
        \t"encoding/hex"
        \t"io"
        \t"net/http"
        \t"os"
        \t"strings"
        )

        var secret = []byte(os.Getenv("GITHUB_WEBHOOK_SECRET"))

        // Verify checks the X-Hub-Signature-256 header against the payload.
        func Verify(r *http.Request) ([]byte, bool) {
        \tbody, err := io.ReadAll(io.LimitReader(r.Body, 5<<20))
        \tif err != nil {
        \t\treturn nil, false
        \t}
        \tsig := strings.TrimPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256=")
        \tmac := hmac.New(sha256.New, secret)
        \tmac.Write(body)
        \texpected := hex.EncodeToString(mac.Sum(nil))
        \treturn body, hmac.Equal([]byte(sig), []byte(expected))
        }
        ''')
    body += go_filler(c, c.ri(0, 5))
    return R('code-auth', '%s/internal/webhooks/verify.go' % c.home_proj(), body, 'go webhook HMAC verification, secret from env', bom=False)


@neg
def n_bash_read_s(c):
    body = L('''
        #!/usr/bin/env bash
        # Rotate the replication user's password on all replicas.
        set -euo pipefail

        : "${PGHOST:?set PGHOST}"
        REPL_USER="${REPL_USER:-replicator}"

        read -r -s -p "New password for ${REPL_USER}: " NEWPW; echo
        read -r -s -p "Repeat: " NEWPW2; echo
        if [[ "$NEWPW" != "$NEWPW2" ]]; then
          echo "passwords do not match" >&2
          exit 1
        fi
        if (( ${#NEWPW} < 16 )); then
          echo "password too short (min 16)" >&2
          exit 1
        fi

        # hand the password to psql on stdin so it never hits argv or history
        printf "ALTER ROLE %%s PASSWORD '%%s';\\n" "$REPL_USER" "$NEWPW" | psql -v ON_ERROR_STOP=1 -q

        for host in $(cat /etc/%s/replicas.txt); do
          ssh "$host" "sudo -u postgres /usr/local/bin/update-pgpass --user $REPL_USER --stdin" <<<"$NEWPW"
        done
        unset NEWPW NEWPW2
        echo "done"
        ''' % c.proj())
    return R('shell-script', '%s/scripts/rotate-repl-password.sh' % c.home_proj(), body, 'bash script with read -s prompt', bom=False, eol='lf')


@neg
def n_powershell(c):
    body = L('''
        #Requires -Modules Az.Accounts, Az.KeyVault
        param(
            [Parameter(Mandatory)] [string] $VaultName,
            [Parameter(Mandatory)] [string] $SecretName
        )

        $cred = Get-Credential -Message "Service account for %s"
        $secure = Read-Host -AsSecureString -Prompt "New value for $SecretName"

        Connect-AzAccount -Credential $cred | Out-Null
        Set-AzKeyVaultSecret -VaultName $VaultName -Name $SecretName -SecretValue $secure | Out-Null

        $current = Get-AzKeyVaultSecret -VaultName $VaultName -Name $SecretName
        Write-Host ("Updated {0} version {1}" -f $SecretName, $current.Version)
        ''' % c.proj())
    return R('shell-script', '%s/ops/Set-VaultSecret.ps1' % c.home_proj(), body, 'powershell prompting with Read-Host -AsSecureString', eol='crlf')


# ======================================================================
# NEGATIVES: config templates / references
# ======================================================================

@neg
def n_env_example(c):
    p = c.proj()
    style = c.ri(0, 2)
    ph = {0: lambda k: '', 1: lambda k: '<%s>' % k.lower().replace('_', '-'), 2: lambda k: 'changeme'}[style]
    lines = ['# Copy to .env and fill in. Never commit the real .env!', '', 'APP_ENV=development', 'APP_PORT=%d' % c.ri(3000, 9000),
             'LOG_LEVEL=debug', '', '# Postgres', 'DATABASE_HOST=localhost', 'DATABASE_PORT=5432', 'DATABASE_NAME=%s' % p.replace('-', '_'),
             'DATABASE_USER=%s' % p.replace('-', '_'), 'DATABASE_PASSWORD=%s' % ph('DATABASE_PASSWORD'), '',
             '# Third-party', 'STRIPE_SECRET_KEY=%s' % ('sk_test_...' if style == 2 else ph('STRIPE_SECRET_KEY')),
             'SENDGRID_API_KEY=%s' % ph('SENDGRID_API_KEY'), 'AWS_ACCESS_KEY_ID=%s' % ph('AWS_ACCESS_KEY_ID'),
             'AWS_SECRET_ACCESS_KEY=%s' % ph('AWS_SECRET_ACCESS_KEY'), 'AWS_REGION=eu-central-1', '',
             'JWT_SECRET=%s' % ('# generate with: openssl rand -hex 32' if style == 0 else ph('JWT_SECRET')),
             'REDIS_URL=redis://localhost:6379/0', 'FEATURE_NEW_CHECKOUT=false']
    return R('env-template', '%s/%s' % (c.home_proj(), c.pick(['.env.example', '.env.sample', '.env.template', 'env.dist'])), lines,
             '.env template with %s values' % ['empty', '<placeholder>', 'changeme'][style])


@neg
def n_helm_values(c):
    p = c.proj()
    lines = L('''
        # Default values for %s.
        replicaCount: %d

        image:
          repository: ghcr.io/%s/%s
          pullPolicy: IfNotPresent
          tag: "%s"

        imagePullSecrets:
          - name: ghcr-pull

        serviceAccount:
          create: true
          annotations:
            eks.amazonaws.com/role-arn: arn:aws:iam::%d:role/%s-irsa

        postgresql:
          enabled: false
          auth:
            username: %s
            # -- leave empty and set existingSecret instead
            password: ""
            existingSecret: %s-db
            secretKeys:
              userPasswordKey: password

        redis:
          auth:
            enabled: true
            existingSecret: %s-redis
            existingSecretPasswordKey: redis-password

        env:
          - name: SMTP_PASSWORD
            valueFrom:
              secretKeyRef:
                name: %s-smtp
                key: password

        resources:
          limits:
            cpu: 500m
            memory: 512Mi
        ''' % (p, c.ri(1, 5), c.org(), p, c.ver(), c.ri(10 ** 11, 10 ** 12 - 1), p, p.replace('-', '_'), p, p, p))
    return R('k8s-config', '%s/deploy/helm/%s/values.yaml' % (c.home_proj(), p), lines, 'helm values with existingSecret and empty password', bom=False)


@neg
def n_compose_secrets(c):
    lines = L('''
        services:
          db:
            image: postgres:16.%d@sha256:%s
            environment:
              POSTGRES_USER: app
              POSTGRES_DB: app
              POSTGRES_PASSWORD_FILE: /run/secrets/db_password
            secrets:
              - db_password
            volumes:
              - pgdata:/var/lib/postgresql/data

          api:
            build: .
            environment:
              DATABASE_URL: postgres://app@db:5432/app
              DATABASE_PASSWORD_FILE: /run/secrets/db_password
              STRIPE_API_KEY: ${STRIPE_API_KEY:?set in your shell}
              SESSION_SECRET: ${SESSION_SECRET}
            secrets:
              - db_password
            depends_on: [db]

        secrets:
          db_password:
            file: ./secrets/db_password.txt

        volumes:
          pgdata: {}
        ''' % (c.ri(1, 4), c.hexs(64)))
    return R('compose', '%s/docker-compose.yml' % c.home_proj(), lines, 'compose with secrets: file refs and ${VAR}', bom=False)


@neg
def n_ansible_vars(c):
    lines = L('''
        ---
        # group_vars/%s/vars.yml -- plain vars referencing vaulted ones in vault.yml
        app_user: %s
        app_db_host: db.%s
        app_db_password: "{{ vault_app_db_password }}"
        app_secret_key: "{{ vault_app_secret_key }}"
        smtp_password: "{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/%s/smtp:password') }}"
        cloudflare_token: "{{ lookup('env', 'CLOUDFLARE_API_TOKEN') }}"
        deploy_key: "{{ lookup('file', '~/.ssh/deploy_%s') }}"
        admin_password_hash: "{{ vault_admin_password | password_hash('sha512', 65534 | random(seed=inventory_hostname) | string) }}"
        ''' % (c.pick(['production', 'staging', 'all']), c.proj().replace('-', '_'), c.domain(), c.proj(), c.proj().replace('-', '_')))
    return R('ansible', '%s/ansible/group_vars/%s/vars.yml' % (c.home_proj(), c.pick(['production', 'staging'])), lines,
             'ansible vars referencing vault_* and lookups', bom=False)


@neg
def n_terraform_vars(c):
    p = c.proj()
    lines = L('''
        variable "db_password" {
          description = "Master password for the RDS instance. Supplied via TF_VAR_db_password."
          type        = string
          sensitive   = true
        }

        resource "random_password" "app" {
          length           = 32
          special          = true
          override_special = "!#$%%&*()-_=+[]{}<>:?"
        }

        resource "aws_db_instance" "main" {
          identifier          = "%s-prod"
          engine              = "postgres"
          engine_version      = "16.%d"
          instance_class      = "db.t4g.medium"
          username            = "%s_admin"
          password            = var.db_password
          skip_final_snapshot = false
        }

        resource "aws_secretsmanager_secret_version" "app" {
          secret_id     = aws_secretsmanager_secret.app.id
          secret_string = random_password.app.result
        }

        data "aws_secretsmanager_secret_version" "stripe" {
          secret_id = "%s/stripe"
        }

        output "db_endpoint" {
          value = aws_db_instance.main.endpoint
        }
        ''' % (p, c.ri(1, 4), p.replace('-', '_'), p))
    return R('terraform', '%s/terraform/%s.tf' % (c.home_proj(), c.pick(['rds', 'main', 'database'])), lines,
             'terraform with sensitive variable and random_password', bom=False)


@neg
def n_gha(c):
    lines = L('''
        name: release

        on:
          push:
            tags: ['v*']

        permissions:
          contents: read
          id-token: write

        jobs:
          publish:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@%s # v4.%d.%d
              - uses: actions/setup-node@%s
                with:
                  node-version: 20
                  registry-url: https://registry.npmjs.org
              - run: npm ci
              - run: npm publish --provenance --access public
                env:
                  NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
              - name: Configure AWS
                uses: aws-actions/configure-aws-credentials@v4
                with:
                  role-to-assume: arn:aws:iam::%d:role/gha-release
                  aws-region: us-east-1
              - name: Notify
                run: |
                  curl -sf -X POST -H 'Content-type: application/json' \\
                    --data "{\\"text\\":\\"released ${GITHUB_REF_NAME}\\"}" "$SLACK_WEBHOOK_URL"
                env:
                  SLACK_WEBHOOK_URL: ${{ secrets.SLACK_WEBHOOK_URL }}
              - name: Docker login
                run: echo "${{ secrets.GITHUB_TOKEN }}" | docker login ghcr.io -u ${{ github.actor }} --password-stdin
        ''' % (c.hexs(40), c.ri(0, 2), c.ri(0, 9), c.hexs(40), c.ri(10 ** 11, 10 ** 12 - 1)))
    return R('ci-config', '%s/.github/workflows/release.yml' % c.home_proj(), lines, 'GitHub Actions using ${{ secrets.X }}', bom=False)


@neg
def n_k8s_deploy(c):
    p = c.proj()
    lines = L('''
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: %s
          labels:
            app.kubernetes.io/name: %s
            pod-template-hash: %s
        spec:
          replicas: 3
          selector:
            matchLabels:
              app.kubernetes.io/name: %s
          template:
            metadata:
              annotations:
                checksum/config: %s
            spec:
              containers:
                - name: app
                  image: registry.%s/%s@sha256:%s
                  env:
                    - name: DB_PASSWORD
                      valueFrom:
                        secretKeyRef:
                          name: %s-db
                          key: password
                    - name: API_TOKEN
                      valueFrom:
                        secretKeyRef:
                          name: %s-api
                          key: token
                  envFrom:
                    - secretRef:
                        name: %s-env
                  volumeMounts:
                    - name: tls
                      mountPath: /etc/tls
                      readOnly: true
              volumes:
                - name: tls
                  secret:
                    secretName: %s-tls
        ''' % (p, p, c.s('bcdfghjklmnpqrstvwxz2456789', 10), p, c.hexs(64), c.domain(), p, c.hexs(64), p, p, p, p))
    return R('k8s-config', '%s/k8s/deployment.yaml' % c.home_proj(), lines, 'deployment using secretKeyRef and image digest', bom=False)


@neg
def n_external_secret(c):
    p = c.proj()
    lines = L('''
        apiVersion: external-secrets.io/v1beta1
        kind: ExternalSecret
        metadata:
          name: %s-db
        spec:
          refreshInterval: 1h
          secretStoreRef:
            name: aws-secrets-manager
            kind: ClusterSecretStore
          target:
            name: %s-db
            creationPolicy: Owner
          data:
            - secretKey: password
              remoteRef:
                key: prod/%s/db
                property: password
            - secretKey: username
              remoteRef:
                key: prod/%s/db
                property: username
        ''' % (p, p, p, p))
    return R('k8s-config', '%s/k8s/externalsecret-db.yaml' % c.home_proj(), lines, 'ExternalSecret referencing AWS SM', bom=False)


@neg
def n_spring_props(c):
    p = c.proj().replace('-', '_')
    lines = L('''
        spring.application.name=%s
        server.port=8080
        spring.datasource.url=jdbc:postgresql://${DB_HOST:localhost}:5432/%s
        spring.datasource.username=${DB_USER:%s}
        spring.datasource.password=${DB_PASSWORD}
        spring.jpa.hibernate.ddl-auto=validate
        spring.flyway.enabled=true
        spring.mail.host=smtp.%s
        spring.mail.username=${SMTP_USER}
        spring.mail.password=${SMTP_PASSWORD:}
        app.security.jwt-secret=${JWT_SECRET}
        app.security.jwt-ttl=PT15M
        management.endpoints.web.exposure.include=health,info,prometheus
        logging.level.org.hibernate.SQL=warn
        ''' % (p, p, p, c.domain()))
    return R('app-config', '%s/src/main/resources/application.properties' % c.home_proj(), lines, 'spring properties with ${DB_PASSWORD}')


@neg
def n_npmrc(c):
    lines = ['registry=https://registry.npmjs.org/', '@%s:registry=https://npm.pkg.github.com' % c.org(),
             '//npm.pkg.github.com/:_authToken=${GITHUB_PACKAGES_TOKEN}', '//registry.npmjs.org/:_authToken=${NPM_TOKEN}',
             'save-exact=true', 'engine-strict=true', 'fund=false']
    return R('pkg-config', '%s/.npmrc' % c.home_proj(), lines, '.npmrc with ${NPM_TOKEN} env refs', bom=False)


@neg
def n_maven_settings(c):
    lines = L('''
        <?xml version="1.0" encoding="UTF-8"?>
        <settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">
          <servers>
            <server>
              <id>%s-releases</id>
              <username>${env.MAVEN_USERNAME}</username>
              <password>${env.MAVEN_PASSWORD}</password>
            </server>
            <server>
              <id>ossrh</id>
              <username>${env.OSSRH_USERNAME}</username>
              <password>${env.OSSRH_PASSWORD}</password>
            </server>
          </servers>
          <mirrors>
            <mirror>
              <id>nexus</id>
              <mirrorOf>*</mirrorOf>
              <url>https://nexus.%s/repository/maven-public/</url>
            </mirror>
          </mirrors>
        </settings>
        ''' % (c.org(), c.domain()))
    return R('pkg-config', '.m2/settings.xml', lines, 'maven settings with ${env.*} passwords')


@neg
def n_aws_config(c):
    acct = c.ri(10 ** 11, 10 ** 12 - 1)
    lines = L('''
        [default]
        region = eu-west-1
        output = json

        [profile %s-dev]
        sso_session = %s
        sso_account_id = %d
        sso_role_name = DeveloperAccess
        region = eu-west-1

        [profile %s-prod-readonly]
        role_arn = arn:aws:iam::%d:role/ReadOnly
        source_profile = %s-dev
        mfa_serial = arn:aws:iam::%d:mfa/%s

        [sso-session %s]
        sso_start_url = https://%s.awsapps.com/start
        sso_region = eu-west-1
        sso_registration_scopes = sso:account:access

        [profile ci]
        credential_process = /usr/local/bin/aws-vault exec ci --json
        ''' % (c.org(), c.org(), acct, c.org(), c.ri(10 ** 11, 10 ** 12 - 1), c.org(), acct, c.user(), c.org(), c.org().replace('-', '')))
    return R('cloud-config', '.aws/config', lines, 'aws config with SSO / role / credential_process only', bom=False)


@neg
def n_kubeconfig(c):
    ca = c.ed_key()
    cert = make_cert(c, ca, 'kubernetes-ca', ca=True, days=3650)
    cad = base64.b64encode(cert).decode()
    name = 'arn:aws:eks:eu-west-1:%d:cluster/%s' % (c.ri(10 ** 11, 10 ** 12 - 1), c.proj())
    lines = L('''
        apiVersion: v1
        clusters:
        - cluster:
            certificate-authority-data: %s
            server: https://%s.gr7.eu-west-1.eks.amazonaws.com
          name: %s
        contexts:
        - context:
            cluster: %s
            user: %s
          name: %s
        current-context: %s
        kind: Config
        preferences: {}
        users:
        - name: %s
          user:
            exec:
              apiVersion: client.authentication.k8s.io/v1beta1
              command: aws
              args:
              - --region
              - eu-west-1
              - eks
              - get-token
              - --cluster-name
              - %s
              env:
              - name: AWS_PROFILE
                value: %s-dev
        ''' % (cad, c.hexs(32).upper(), name, name, name, name, name, name, c.proj(), c.org()))
    return R('kubeconfig', '.kube/config', lines, 'kubeconfig with public CA data and exec auth plugin', bom=False)


@neg
def n_docker_config(c):
    lines = L('''
        {
        	"auths": {
        		"ghcr.io": {},
        		"https://index.docker.io/v1/": {},
        		"%d.dkr.ecr.eu-west-1.amazonaws.com": {}
        	},
        	"credsStore": "%s",
        	"credHelpers": {
        		"%d.dkr.ecr.eu-west-1.amazonaws.com": "ecr-login"
        	},
        	"currentContext": "desktop-linux"
        }
        ''' % (c.ri(10 ** 11, 10 ** 12 - 1), c.pick(['desktop', 'osxkeychain', 'pass', 'secretservice']), c.ri(10 ** 11, 10 ** 12 - 1)))
    return R('docker-config', '.docker/config.json', lines, 'docker config using credsStore, empty auths', bom=False)


@neg
def n_gitconfig(c):
    u = c.fullname()
    style = c.ri(0, 1)
    if style == 0:
        k = c.ed_key()
        sign = ['[gpg]', '\tformat = ssh', '[user]', '\tname = %s' % u, '\temail = %s' % c.email(),
                '\tsigningkey = %s' % ssh_pub_line(k)]
    else:
        sign = ['[user]', '\tname = %s' % u, '\temail = %s' % c.email(), '\tsigningkey = %s' % c.hexs(16).upper()]
    lines = sign + ['[commit]', '\tgpgsign = true', '[credential]', '\thelper = %s' % c.pick(['osxkeychain', 'manager', 'libsecret', 'cache --timeout=3600']),
                    '[credential "https://github.com"]', '\thelper = !/usr/bin/gh auth git-credential',
                    '[url "git@github.com:"]', '\tinsteadOf = https://github.com/', '[pull]', '\trebase = true',
                    '[init]', '\tdefaultBranch = main', '[alias]', '\tlg = log --graph --oneline --decorate', '\tst = status -sb']
    return R('git-config', '.gitconfig', lines, 'gitconfig with signing key id/public key and credential helper', bom=False)


@neg
def n_nginx_tls(c):
    d = c.domain()
    lines = L('''
        server {
            listen 443 ssl http2;
            server_name %s www.%s;

            ssl_certificate     /etc/letsencrypt/live/%s/fullchain.pem;
            ssl_certificate_key /etc/letsencrypt/live/%s/privkey.pem;
            ssl_session_tickets off;
            ssl_stapling on;
            add_header Strict-Transport-Security "max-age=63072000" always;

            auth_basic           "staging";
            auth_basic_user_file /etc/nginx/.htpasswd;

            location / {
                proxy_pass http://127.0.0.1:%d;
                proxy_set_header Host $host;
                proxy_set_header X-Request-Id $request_id;
                proxy_set_header Authorization $http_authorization;
            }
        }
        ''' % (d, d, d, d, c.ri(3000, 9000)))
    return R('server-config', 'etc/nginx/sites-available/%s.conf' % d, lines, 'nginx TLS config with key paths only', bom=False)


@neg
def n_wifi(c):
    ssid = c.pick(['CorpNet', 'HomeBase-5G', c.org().upper(), 'eduroam', 'Guest'])
    style = c.ri(0, 1)
    if style == 0:
        lines = L('''
            [connection]
            id=%s
            uuid=%s
            type=wifi
            interface-name=wlp2s0

            [wifi]
            mode=infrastructure
            ssid=%s

            [wifi-security]
            key-mgmt=wpa-psk
            psk-flags=1

            [ipv4]
            method=auto

            [ipv6]
            addr-gen-mode=stable-privacy
            method=auto
            ''' % (ssid, c.uuid4(), ssid))
        path = 'etc/NetworkManager/system-connections/%s.nmconnection' % ssid
        note = 'NetworkManager wifi with psk-flags=1 (agent-owned, not stored)'
    else:
        lines = L('''
            ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev
            update_config=1
            country=DE

            network={
                ssid="%s"
                key_mgmt=WPA-EAP
                eap=TLS
                identity="%s@%s"
                ca_cert="/etc/ssl/certs/%s-root-ca.pem"
                client_cert="/etc/wpa_supplicant/certs/client.pem"
                private_key="/etc/wpa_supplicant/certs/client.key"
                private_key_passwd=""
            }
            ''' % (ssid, c.user(), c.domain(), c.org()))
        path = 'etc/wpa_supplicant/wpa_supplicant.conf'
        note = 'wpa_supplicant EAP-TLS with cert paths, empty key passwd'
    return R('wifi-config', path, lines, note, bom=False)


@neg
def n_cisco(c):
    host = '%s-%s-%02d' % (c.pick(['core', 'edge', 'acc', 'dist']), c.pick(['ams', 'fra', 'nyc', 'sgp']), c.ri(1, 20))
    lines = ['!', 'version 17.%d' % c.ri(3, 12), 'service timestamps debug datetime msec', 'service password-encryption',
             '!', 'hostname %s' % host, '!', 'enable secret 9 $9$%s$%s' % (c.s(CRYPT64, 14), c.s(CRYPT64, 43)), '!',
             'aaa new-model', 'aaa authentication login default group tacacs+ local', '!']
    for u in range(c.ri(2, 5)):
        t = c.pick([5, 8, 9])
        if t == 5:
            h = md5_crypt_like(c)
        elif t == 8:
            h = '$8$%s$%s' % (c.s(CRYPT64, 14), c.s(CRYPT64, 43))
        else:
            h = '$9$%s$%s' % (c.s(CRYPT64, 14), c.s(CRYPT64, 43))
        lines.append('username %s privilege %d secret %d %s' % (c.user(), c.pick([1, 15]), t, h))
    lines += ['!', 'ip ssh version 2', 'ip ssh pubkey-chain', ' username netops', '  key-hash ssh-rsa %s' % c.hexs(32).upper(), '!']
    for i in range(c.ri(8, 48)):
        lines += ['interface GigabitEthernet1/0/%d' % (i + 1), ' description %s' % c.pick(['uplink', 'ap', 'printer', 'user', 'server']),
                  ' switchport access vlan %d' % c.pick([10, 20, 30, 99]), ' switchport mode access', ' spanning-tree portfast', '!']
    lines += ['tacacs server TAC1', ' address ipv4 %s' % c.ip(), ' key <removed>',
              '!', 'line vty 0 15', ' transport input ssh', '!', 'end']
    return R('network-config', 'netops/configs/%s.cfg' % host, lines, 'cisco config with type 5/8/9 hashed secrets only; tacacs key redacted')


@neg
def n_junos(c):
    lines = ['system {', '    host-name %s-fw%d;' % (c.pick(['ams', 'fra', 'lon']), c.ri(1, 4)), '    root-authentication {',
             '        encrypted-password "%s"; ## SECRET-DATA' % sha512_crypt_like(c), '    }', '    login {']
    for u in range(c.ri(1, 4)):
        k = c.ed_key()
        lines += ['        user %s {' % c.user(), '            class super-user;', '            authentication {',
                  '                ssh-ed25519 "%s";' % ssh_pub_line(k, c.email()), '            }', '        }']
    lines += ['    }', '    services {', '        ssh {', '            root-login deny;', '        }', '    }',
              '    syslog {', '        host %s {' % c.ip(), '            any notice;', '        }', '    }', '}']
    return R('network-config', 'netops/junos/%s.conf' % c.pick(['fw1', 'fw2', 'edge']), lines, 'junos with $6$ encrypted-password and ssh public keys')


@neg
def n_redis_conf(c):
    lines = L('''
        # Redis configuration file example.
        bind 127.0.0.1 -::1
        protected-mode yes
        port 6379
        tcp-backlog 511
        timeout 0
        tcp-keepalive 300

        ################################## SECURITY ###################################

        # Warning: since Redis is pretty fast, an outside user can try up to
        # 1 million passwords per second against a modern box. This means that you
        # should use very strong passwords, otherwise they will be very easy to break.
        # Note that because the password is really a shared secret between the client
        # and the server, and should not be memorized by any human, the password
        # can be easily a long string from /dev/urandom or whatever, so by using a
        # long and unguessable password no brute force attack will be possible.
        #
        # requirepass foobared
        #
        # ACL file, see the "ACL" section above.
        aclfile /etc/redis/users.acl

        # masterauth <master-password>
        # masteruser <username>

        maxmemory 2gb
        maxmemory-policy allkeys-lru
        appendonly yes
        ''')
    return R('server-config', 'etc/redis/redis.conf', lines, 'redis.conf with stock commented "requirepass foobared"', bom=False)


@neg
def n_redis_acl(c):
    lines = []
    for u in ['default', 'app', 'worker', 'metrics', c.user()]:
        if u == 'default':
            lines.append('user default off nopass ~* &* -@all')
        else:
            lines.append('user %s on #%s ~%s:* &* +@read +@write -@dangerous' % (u, c.hexs(64), c.pick(['cache', 'jobs', 'sess', 'rl'])))
    return R('hash', 'etc/redis/users.acl', lines, 'redis ACL file with #sha256 password hashes', bom=False)


@neg
def n_pgbouncer_userlist(c):
    lines = []
    for i in range(c.ri(3, 9)):
        u = c.pick(FIRST) + '_' + c.pick(['app', 'ro', 'etl', 'svc'])
        lines.append('"%s" "%s"' % (u, pg_scram(c) if c.chance(0.7) else pg_md5(c, u)))
    return R('hash', 'etc/pgbouncer/userlist.txt', lines, 'pgbouncer userlist with SCRAM / md5 hashes', bom=False)


@neg
def n_htpasswd(c):
    lines = []
    for i in range(c.ri(2, 12)):
        t = c.pick(['bcrypt', 'apr1', 'sha'])
        h = bcrypt_like(c, '2y', c.pick([5, 10])) if t == 'bcrypt' else (md5_crypt_like(c, 'apr1') if t == 'apr1' else '{SHA}' + c.b64(20))
        lines.append('%s:%s' % (c.user() + str(c.ri(1, 99)), h))
    return R('hash', 'etc/nginx/.htpasswd', lines, 'htpasswd with bcrypt/apr1/{SHA} hashes', bom=False)


@neg
def n_shadow(c):
    lines = ['root:%s:19%03d:0:99999:7:::' % (c.pick([sha512_crypt_like(c), '*', '!']), c.ri(100, 999))]
    for s in ['daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'www-data', 'backup', 'nobody',
              'systemd-network', 'sshd', 'postgres']:
        lines.append('%s:%s:19%03d:0:99999:7:::' % (s, c.pick(['*', '!*', '!']), c.ri(100, 999)))
    for i in range(c.ri(1, 4)):
        lines.append('%s:%s:%d:0:99999:7:::' % (c.user(), c.pick([sha512_crypt_like(c), yescrypt_like(c)]), c.ri(19000, 20100)))
    return R('hash', 'backup/etc/shadow', lines, '/etc/shadow backup with $6$/$y$ hashes', bom=False, eol='lf')


@neg
def n_django_fixture(c):
    objs = []
    for i in range(c.ri(3, 12)):
        objs.append({'model': 'auth.user', 'pk': i + 1, 'fields': {
            'password': django_pbkdf2(c) if c.chance(0.8) else argon2_like(c).replace('$argon2id', 'argon2$argon2id'),
            'last_login': c.dt().isoformat() + 'Z', 'is_superuser': i == 0, 'username': c.user() + str(i),
            'email': c.email(), 'is_staff': i < 2, 'is_active': True, 'date_joined': c.dt().isoformat() + 'Z'}})
    lines = json.dumps(objs, indent=c.pick([2, 4])).split('\n')
    return R('hash', '%s/fixtures/users.json' % c.home_proj(), lines, 'django fixture with pbkdf2/argon2 password hashes')


@neg
def n_mosquitto_passwd(c):
    lines = ['%s:$7$101$%s$%s' % (c.pick(['sensor', 'gateway', 'hass', 'node-red', c.user()]) + str(i), c.b64(12), c.b64(64))
             for i in range(c.ri(2, 6))]
    return R('hash', 'etc/mosquitto/passwd', lines, 'mosquitto passwd file with $7$ PBKDF2 hashes', bom=False)


@neg
def n_rails_enc(c):
    data = c.b64(c.ri(300, 900))
    lines = ['%s--%s--%s' % (data, c.b64(12), c.b64(16))]
    return R('encrypted', '%s/config/credentials/production.yml.enc' % c.home_proj(), lines, 'rails encrypted credentials (AES-GCM)', bom=False)


# ======================================================================
# NEGATIVES: documentation / prose
# ======================================================================

@neg
def n_readme_setup(c):
    p = c.proj()
    tool = c.pick(['openai', 'github', 'stripe', 'anthropic', 'slack'])
    var = {'openai': 'OPENAI_API_KEY', 'github': 'GITHUB_TOKEN', 'stripe': 'STRIPE_SECRET_KEY', 'anthropic': 'ANTHROPIC_API_KEY', 'slack': 'SLACK_BOT_TOKEN'}[tool]
    ex = {'openai': 'sk-...', 'github': 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'stripe': 'sk_test_xxxxxxxxxxxxxxxxxxxxxxxx',
          'anthropic': 'sk-ant-...', 'slack': 'xoxb-your-bot-token'}[tool]
    lines = L('''
        # %s

        A small service that talks to the %s API.

        ## Getting started

        1. Create a token in the %s dashboard (read-only scope is enough).
        2. Export it in your shell — **do not** put it in the repo:

        ```bash
        export %s=<your token>
        # or, with a password manager:
        export %s="$(op read 'op://Private/%s/credential')"
        ```

        The value looks like `%s`. If you see `401 Unauthorized`, your token expired.

        3. Run it:

        ```bash
        make dev
        ```

        ## Configuration

        | Variable | Required | Description |
        |----------|----------|-------------|
        | `%s` | yes | API token, see above |
        | `DATABASE_URL` | yes | e.g. `postgres://user:password@localhost:5432/%s` |
        | `LOG_LEVEL` | no | `debug`, `info` (default), `warn` |

        ## Security

        Report vulnerabilities to security@%s. Tokens are never logged; request
        logs show `Authorization: Bearer ***`.
        ''' % (p, tool.title(), tool.title(), var, var, tool.title(), ex, var, p.replace('-', '_'), c.domain()))
    return R('docs', '%s/README.md' % c.home_proj(), lines, 'README with export %s=<your token> and x-ed example' % var)


@neg
def n_aws_doc_example(c):
    lines = L('''
        # Configuring the AWS CLI for local development

        Run `aws configure` and paste the values from the IAM console:

        ```
        $ aws configure
        AWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE
        AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
        Default region name [None]: us-west-2
        Default output format [None]: json
        ```

        (Those are the example values from the AWS documentation — use your own.)

        Prefer SSO instead of long-lived keys:

        ```
        aws configure sso
        aws sso login --profile dev
        ```

        Keys created before the migration must be deactivated; see the
        [rotation runbook](../runbooks/iam-key-rotation.md).
        ''')
    return R('docs', '%s/docs/aws-setup.md' % c.home_proj(), lines, 'docs using AWS documented example keys AKIAIOSFODNN7EXAMPLE')


@neg
def n_manpage(c):
    tool = c.pick(['pgsync', 'vaultctl', 'dbshell', 'backupctl', 'mqtool'])
    lines = L('''
        %s(1)                      User Commands                      %s(1)

        NAME
               %s - synchronise data between two database servers

        SYNOPSIS
               %s [-h host] [-U user] [-W | --password-file FILE] [--token-env VAR] SOURCE DEST

        DESCRIPTION
               %s copies tables from SOURCE to DEST. Credentials are never accepted
               on the command line because they would be visible in ps(1) output.

        OPTIONS
               -W, --password
                      Force a password prompt.

               --password-file FILE
                      Read the password from the first line of FILE. The file must
                      be mode 0600 or %s refuses to read it.

               --token-env VAR
                      Read the API token from environment variable VAR
                      (default: %s_TOKEN).

        ENVIRONMENT
               PGPASSWORD
                      Used if set; see also ~/.pgpass.

        FILES
               ~/.config/%s/credentials
                      Per-host credentials, mode 0600.

        SEE ALSO
               psql(1), pg_dump(1), pgpass(5)

        %s %s                          %s                      %s(1)
        ''' % (tool.upper(), tool.upper(), tool, tool, tool, tool, tool.upper(), tool, tool, c.ver(), c.dt().strftime('%B %Y'), tool.upper()))
    return R('docs', '%s/man/%s.1.txt' % (c.home_proj(), tool), lines, 'man page for CLI with --password-file')


@neg
def n_changelog(c):
    lines = ['# Changelog', '', 'All notable changes to this project will be documented in this file.', '']
    for i in range(c.ri(8, 30)):
        lines += ['## [%s] - %s' % (c.ver(), c.dt().strftime('%Y-%m-%d')), '']
        for j in range(c.ri(1, 5)):
            sha = c.hexs(40)
            lines.append('- %s %s ([%s](https://github.com/%s/%s/commit/%s))' % (
                c.pick(['Fix', 'Add', 'Remove', 'Bump', 'Refactor']), c.pick(['token refresh race', 'password reset email', 'secret rotation job',
                                                                               'API key scopes', 'session cookie SameSite', 'retry budget', 'CSV export']),
                sha[:7], c.org(), c.proj(), sha))
        lines.append('')
    return R('docs', '%s/CHANGELOG.md' % c.home_proj(), lines, 'changelog with commit SHAs')


@neg
def n_runbook_prose(c):
    lines = L('''
        # Ops notes — week %d

        - [ ] rotate the prod db password on Monday (Sara owns it, ticket OPS-%d)
        - [x] the password for the staging bastion is in 1Password under "staging bastion"
        - [ ] api token for the status page expired — ask %s to mint a new one, do NOT paste it in Slack
        - remember: the Stripe webhook secret lives in AWS SM at prod/payments/stripe-webhook
        - new hires: never email passwords; use a one-time secret link
        - the "admin/admin" default on the old Grafana was disabled on %s
        - Vault root token was revoked after unseal; recovery keys are with 3 of 5 keyholders

        ## Incident follow-ups
        * leaked key in PR #%d was revoked within 4 minutes, GitHub push protection caught the second one
        * add gitleaks to pre-commit (done)
        * passwords must be >= 16 chars, checked against HIBP k-anonymity API
        ''' % (c.ri(1, 52), c.ri(1000, 9999), c.pick(FIRST).title(), c.dt().strftime('%Y-%m-%d'), c.ri(100, 4000)))
    return R('notes', 'notes/%s.md' % c.pick(['ops-todo', 'weekly', 'oncall-handover']), lines, 'prose notes about passwords, no values')


@neg
def n_api_docs(c):
    lines = L('''
        ## Authentication

        All requests must include an API key in the `Authorization` header:

        ```http
        GET /v2/orders HTTP/1.1
        Host: api.%s
        Authorization: Bearer YOUR_API_KEY
        Idempotency-Key: %s
        ```

        ```bash
        curl https://api.%s/v2/orders \\
          -H "Authorization: Bearer $API_KEY" \\
          -H "Content-Type: application/json"
        ```

        ```python
        import os, requests
        resp = requests.get("https://api.%s/v2/orders",
                            headers={"Authorization": f"Bearer {os.environ['API_KEY']}"})
        ```

        Keys look like `live_` followed by 32 characters; test keys start with `test_`.
        A `401` with `{"error": "invalid_api_key"}` means the key was revoked.

        ### Webhook signatures

        Each webhook carries `X-Signature: t=<timestamp>,v1=<hex hmac>`; compute
        `HMAC_SHA256(signing_secret, "<timestamp>." + body)` and compare in constant time.
        ''' % (c.domain(), c.uuid4(), c.domain(), c.domain()))
    return R('docs', '%s/docs/api/authentication.md' % c.home_proj(), lines, 'API docs with YOUR_API_KEY placeholders')


# ======================================================================
# NEGATIVES: logs
# ======================================================================

def _ts(c, base, i):
    return base + datetime.timedelta(seconds=i * c.ri(1, 40))


@neg
def n_auth_log(c):
    base = c.dt()
    host = c.pick(['bastion', 'web1', 'db2', 'ci-runner'])
    lines = []
    for i in range(c.ri(120, 320)):
        t = _ts(c, base, i).strftime('%b %d %H:%M:%S').replace(' 0', '  ', 1)
        pid = c.ri(1000, 99999)
        k = c.ri(0, 7)
        if k == 0:
            lines.append('%s %s sshd[%d]: Accepted publickey for %s from %s port %d ssh2: ED25519 SHA256:%s' % (
                t, host, pid, c.user(), c.ip(), c.ri(30000, 65000), c.b64(32).rstrip('=')))
        elif k == 1:
            lines.append('%s %s sshd[%d]: Failed password for invalid user %s from %s port %d ssh2' % (
                t, host, pid, c.pick(['admin', 'oracle', 'test', 'ubuntu', 'pi', 'git']), c.ip(False), c.ri(30000, 65000)))
        elif k == 2:
            lines.append('%s %s sudo: %8s : TTY=pts/%d ; PWD=/home/%s ; USER=root ; COMMAND=/usr/bin/systemctl restart %s' % (
                t, host, c.user(), c.ri(0, 4), c.user(), c.proj()))
        elif k == 3:
            lines.append('%s %s sshd[%d]: pam_unix(sshd:session): session opened for user %s(uid=%d) by (uid=0)' % (t, host, pid, c.user(), c.ri(1000, 1100)))
        elif k == 4:
            lines.append('%s %s sshd[%d]: Received disconnect from %s port %d:11: disconnected by user' % (t, host, pid, c.ip(), c.ri(30000, 65000)))
        elif k == 5:
            lines.append('%s %s sshd[%d]: Connection closed by authenticating user root %s port %d [preauth]' % (t, host, pid, c.ip(False), c.ri(30000, 65000)))
        elif k == 6:
            lines.append('%s %s systemd-logind[%d]: New session %d of user %s.' % (t, host, c.ri(400, 900), c.ri(100, 9000), c.user()))
        else:
            lines.append('%s %s sudo: pam_unix(sudo:auth): authentication failure; logname=%s uid=%d euid=0 tty=/dev/pts/1 ruser=%s rhost=  user=%s' % (
                t, host, c.user(), c.ri(1000, 1100), c.user(), c.user()))
    return R('log', 'logs/%s/auth.log' % host, lines, 'sshd/sudo auth log with key fingerprints', bom=False, eol='lf')


@neg
def n_app_json_log(c):
    base = c.dt()
    svc = c.proj()
    lines = []
    for i in range(c.ri(150, 350)):
        ev = {'ts': _ts(c, base, i).isoformat() + '.%03dZ' % c.ri(0, 999), 'level': c.pick(['info', 'info', 'info', 'debug', 'warn']),
              'service': svc, 'trace_id': c.hexs(32), 'span_id': c.hexs(16), 'request_id': c.uuid4()}
        k = c.ri(0, 4)
        if k == 0:
            ev.update(msg='login ok', user_id=c.ri(1, 99999), session='sess_****' + c.s(LOWER + DIG, 4), mfa=c.pick(['totp', 'webauthn', 'none']))
        elif k == 1:
            ev.update(msg='http request', method=c.pick(['GET', 'POST']), path=c.pick(['/api/orders', '/api/me', '/healthz', '/api/cart']),
                      status=c.pick([200, 200, 201, 304, 401, 404]), duration_ms=c.ri(1, 900), authorization='[REDACTED]')
        elif k == 2:
            ev.update(msg='cache miss', cache_key='%s:v%d:%s' % (c.pick(['user', 'cart', 'price']), c.ri(1, 5), c.hexs(16)))
        elif k == 3:
            ev.update(msg='token refreshed', token_fingerprint=c.hexs(12), expires_in=3600, api_key='sk_live_****' + c.b62(4))
        else:
            ev.update(msg='payment captured', payment_id='pi_' + c.b62(24), idempotency_key=c.uuid4(), amount=c.ri(100, 99999), currency='eur')
        lines.append(json.dumps(ev, separators=(',', ':')))
    return R('log', 'logs/%s/%s-%s.jsonl' % (svc, svc, base.strftime('%Y%m%d')), lines,
             'json app log with trace ids, sess_**** and sk_live_**** masked values', bom=False, eol='lf')


@neg
def n_nginx_access(c):
    base = c.dt()
    lines = []
    for i in range(c.ri(200, 400)):
        t = _ts(c, base, i).strftime('%d/%b/%Y:%H:%M:%S +0000')
        path = c.pick(['/', '/static/js/main.%s.js' % c.hexs(8), '/api/v1/orders?page=%d' % c.ri(1, 40), '/login', '/favicon.ico',
                       '/api/v1/session', '/reset-password?token=[FILTERED]', '/assets/logo.%s.svg' % c.hexs(20)])
        lines.append('%s - - [%s] "%s %s HTTP/1.1" %d %d "-" "%s" rid=%s rt=%.3f' % (
            c.ip(False), t, c.pick(['GET', 'GET', 'POST']), path, c.pick([200, 200, 200, 302, 304, 404]), c.ri(200, 90000),
            c.pick(['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'curl/8.5.0',
                    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36']),
            c.hexs(32), c.ri(1, 2000) / 1000))
    return R('log', 'logs/nginx/access.log', lines, 'nginx access log with request ids, reset token filtered', bom=False, eol='lf')


@neg
def n_webhook_log(c):
    lines = []
    base = c.dt()
    for i in range(c.ri(40, 120)):
        body = json.dumps({'id': 'evt_' + c.b62(24), 'type': c.pick(['invoice.paid', 'charge.refunded', 'customer.created'])}).encode()
        sig = hmac.new(c.rb(32), body, hashlib.sha256).hexdigest()
        lines.append('%s INFO webhook received delivery=%s event=%s signature=sha256=%s verified=%s' % (
            _ts(c, base, i).isoformat(), c.uuid4(), json.loads(body)['type'], sig, c.pick(['true', 'true', 'false'])))
    return R('log', 'logs/webhooks/receiver.log', lines, 'webhook log with HMAC signature outputs', bom=False, eol='lf')


@neg
def n_ci_log(c):
    lines = ['##[group]Run actions/checkout@v4', 'with:', '  repository: %s/%s' % (c.org(), c.proj()), '  token: ***',
             '  ssh-strict: true', '##[endgroup]', 'Syncing repository: %s/%s' % (c.org(), c.proj()),
             '[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin +%s:refs/remotes/origin/main' % c.hexs(40),
             'HEAD is now at %s %s' % (c.hexs(7), c.pick(['bump deps', 'fix flaky test', 'release prep'])), '##[group]Run npm publish',
             'env:', '  NODE_AUTH_TOKEN: ***', '  NPM_CONFIG_USERCONFIG: /home/runner/work/_temp/.npmrc', '##[endgroup]']
    for i in range(c.ri(30, 150)):
        lines.append('npm notice %s' % c.pick(['📦  %s@%s' % (c.proj(), c.ver()), '=== Tarball Details ===',
                                               'shasum:        %s' % c.hexs(40), 'integrity:     %s[...]%s' % (sri(c)[:20], c.b64(6)[:8]),
                                               'total files:   %d' % c.ri(5, 300), 'package size:  %d.%d kB' % (c.ri(1, 900), c.ri(0, 9))]))
    lines += ['Login Succeeded', 'Warning: the secret value was masked: ***', 'Post job cleanup.', 'Cleaning up orphan processes']
    return R('log', 'ci/logs/%d_publish.txt' % c.ri(1000, 99999), lines, 'CI log with *** masked secrets and shasums', bom=False)


# ======================================================================
# NEGATIVES: data files
# ======================================================================

@neg
def n_users_csv(c):
    lines = ['id,uuid,email,display_name,created_at,last_login_ip,plan,password_last_changed,mfa_enabled']
    for i in range(c.ri(100, 400)):
        lines.append('%d,%s,%s,%s,%s,%s,%s,%s,%s' % (i + 1, c.uuid4(), c.email(), c.fullname(), c.dt().isoformat(), c.ip(False),
                                                     c.pick(['free', 'pro', 'team']), c.dt().date().isoformat(), c.pick(['true', 'false'])))
    return R('data', 'exports/users_%s.csv' % c.dt().strftime('%Y%m%d'), lines, 'CSV user export without passwords', eol=c.pick(['lf', 'crlf']))


@neg
def n_json_fixture(c):
    items = []
    for i in range(c.ri(20, 80)):
        items.append({'id': c.uuid4(), 'sku': 'SKU-%s' % c.s(UPPER + DIG, 8), 'etag': 'W/"%s"' % c.hexs(32),
                      'image_sha256': c.hexs(64), 'created_by': c.uuid4(), 'revision': c.hexs(40),
                      'color': '#%s' % c.hexs(6), 'tags': [c.pick(WORDS) for _ in range(c.ri(0, 3))]})
    lines = json.dumps({'version': 3, 'items': items}, indent=2).split('\n')
    return R('data', '%s/test/fixtures/products.json' % c.home_proj(), lines, 'JSON fixture with uuids, etags, sha256 and git shas')


@neg
def n_sha256sums(c):
    v = c.ver()
    lines = []
    for osn in ['darwin_amd64', 'darwin_arm64', 'linux_386', 'linux_amd64', 'linux_arm64', 'linux_armv6', 'windows_amd64', 'windows_arm64', 'freebsd_amd64']:
        lines.append('%s  %s_%s_%s.%s' % (c.hexs(64), c.proj(), v, osn, 'zip' if 'windows' in osn else 'tar.gz'))
    return R('data', 'Downloads/%s_%s_checksums.txt' % (c.proj(), v), lines, 'release SHA256SUMS', bom=False)


@neg
def n_git_log(c):
    lines = []
    for i in range(c.ri(20, 80)):
        lines += ['commit %s' % c.hexs(40), 'Author: %s <%s>' % (c.fullname(), c.email()),
                  'Date:   %s' % c.dt().strftime('%a %b %d %H:%M:%S %Y +0000'), '',
                  '    %s' % c.pick(['Remove hardcoded test password from fixtures', 'Rotate signing key (public part only)', 'Add secret scanning to CI',
                                     'Fix token refresh', 'Bump lodash', 'Move API key to env var', 'Redact Authorization header in logs']), '']
        if c.chance(0.3):
            lines[-1:-1] = ['    Signed-off-by: %s <%s>' % (c.fullname(), c.email())]
    return R('data', '%s/gitlog.txt' % c.home_proj(), lines, 'git log output with commit SHAs and secret-ish commit messages')


@neg
def n_docker_images(c):
    lines = ['REPOSITORY                                   TAG       DIGEST                                                                    IMAGE ID       CREATED        SIZE']
    for i in range(c.ri(8, 30)):
        lines.append('%-44s %-9s sha256:%s   %s   %d days ago    %dMB' % (
            c.pick(['postgres', 'redis', 'nginx', 'ghcr.io/%s/%s' % (c.org(), c.proj()), 'python', 'node', 'alpine']),
            c.pick(['latest', '16', '7.2', 'alpine', c.ver()]), c.hexs(64), c.hexs(12), c.ri(1, 400), c.ri(5, 900)))
    return R('data', 'tmp/docker-images.txt', lines, 'docker images --digests output', bom=False)


@neg
def n_package_lock(c):
    pk = {}
    for i in range(c.ri(40, 120)):
        name = c.pick(['lodash', 'express', 'debug', 'ms', 'react', 'chalk', 'semver', 'yargs', 'uuid', 'axios', 'zod', 'jsonwebtoken',
                       'bcryptjs', 'dotenv', 'ws', 'qs', 'mime', 'cookie', 'tslib', 'acorn']) + c.pick(['', '', '-' + c.pick(WORDS)])
        v = c.ver()
        pk['node_modules/' + name] = {'version': v, 'resolved': 'https://registry.npmjs.org/%s/-/%s-%s.tgz' % (name, name, v),
                                       'integrity': sri(c), 'license': c.pick(['MIT', 'ISC', 'Apache-2.0'])}
    doc = {'name': c.proj(), 'version': c.ver(), 'lockfileVersion': 3, 'requires': True, 'packages': pk}
    lines = json.dumps(doc, indent=2).split('\n')
    return R('lockfile', '%s/package-lock.json' % c.home_proj(), lines, 'package-lock with sha512 integrity', bom=False)


@neg
def n_yarn_lock(c):
    lines = ['# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.', '# yarn lockfile v1', '']
    for i in range(c.ri(40, 100)):
        name = c.pick(['@babel/core', '@types/node', 'js-tokens', 'loose-envify', 'scheduler', 'object-assign', 'safe-buffer', 'inherits', 'kind-of'])
        v = c.ver()
        lines += ['"%s@^%s":' % (name, v), '  version "%s"' % v,
                  '  resolved "https://registry.yarnpkg.com/%s/-/%s-%s.tgz#%s"' % (name, name.split('/')[-1], v, c.hexs(40)),
                  '  integrity %s' % sri(c), '']
    return R('lockfile', '%s/yarn.lock' % c.home_proj(), lines, 'yarn.lock with sha1 + sha512 integrity', bom=False)


@neg
def n_cargo_lock(c):
    lines = ['# This file is automatically @generated by Cargo.', '# It is not intended for manual editing.', 'version = 3', '']
    for i in range(c.ri(40, 120)):
        lines += ['[[package]]', 'name = "%s"' % c.pick(['serde', 'tokio', 'rand', 'ring', 'hyper', 'bytes', 'libc', 'syn', 'quote', 'anyhow']) + c.pick(['', '_derive', '-macros', '']),
                  'version = "%s"' % c.ver(), 'source = "registry+https://github.com/rust-lang/crates.io-index"',
                  'checksum = "%s"' % c.hexs(64), '']
    return R('lockfile', '%s/Cargo.lock' % c.home_proj(), lines, 'Cargo.lock with checksums', bom=False)


@neg
def n_go_sum(c):
    lines = []
    for i in range(c.ri(40, 160)):
        m = c.pick(['github.com/%s/%s' % (c.pick(['spf13', 'stretchr', 'google', 'golang', 'hashicorp', 'aws']), c.pick(['cobra', 'testify', 'uuid', 'protobuf', 'vault', 'aws-sdk-go-v2'])),
                    'golang.org/x/%s' % c.pick(['crypto', 'oauth2', 'net', 'sys', 'text']), 'gopkg.in/yaml.v3'])
        v = 'v' + c.ver()
        lines.append('%s %s h1:%s' % (m, v, c.b64(32)))
        lines.append('%s %s/go.mod h1:%s' % (m, v, c.b64(32)))
    return R('lockfile', '%s/go.sum' % c.home_proj(), lines, 'go.sum with h1: hashes', bom=False, eol='lf')


@neg
def n_requirements_hashes(c):
    lines = ['#', '# This file is autogenerated by pip-compile with Python 3.12', '#    pip-compile --generate-hashes requirements.in', '#']
    for i in range(c.ri(15, 50)):
        lines.append('%s==%s \\' % (c.pick(['requests', 'urllib3', 'certifi', 'idna', 'cryptography', 'cffi', 'pyjwt', 'django', 'boto3', 'botocore']), c.ver()))
        n = c.ri(1, 4)
        for j in range(n):
            lines.append('    --hash=sha256:%s%s' % (c.hexs(64), ' \\' if j < n - 1 else ''))
    return R('lockfile', '%s/requirements.txt' % c.home_proj(), lines, 'pip-compile requirements with --hash', bom=False)


@neg
def n_pnpm_lock(c):
    lines = ["lockfileVersion: '9.0'", '', 'packages:', '']
    for i in range(c.ri(30, 80)):
        name = c.pick(['vite', 'esbuild', 'rollup', 'postcss', 'nanoid', 'picocolors', 'source-map-js'])
        lines += ['  %s@%s:' % (name, c.ver()), '    resolution: {integrity: %s}' % sri(c), "    engines: {node: '>=18'}", '']
    return R('lockfile', '%s/pnpm-lock.yaml' % c.home_proj(), lines, 'pnpm lock with integrity', bom=False)


@neg
def n_tf_lock(c):
    lines = ['# This file is maintained automatically by "terraform init".', '# Manual edits may be lost in future updates.', '']
    for prov in ['aws', 'random', 'tls', 'kubernetes']:
        lines += ['provider "registry.terraform.io/hashicorp/%s" {' % prov, '  version     = "%s"' % c.ver(), '  constraints = "~> %d.0"' % c.ri(2, 5), '  hashes = [']
        lines.append('    "h1:%s",' % c.b64(32))
        for j in range(c.ri(4, 12)):
            lines.append('    "zh:%s",' % c.hexs(64))
        lines += ['  ]', '}', '']
    return R('lockfile', '%s/terraform/.terraform.lock.hcl' % c.home_proj(), lines, 'terraform lock file hashes', bom=False)


@neg
def n_flake_lock(c):
    nodes = {}
    for n in ['nixpkgs', 'flake-utils', 'home-manager']:
        nodes[n] = {'locked': {'lastModified': c.ri(1700000000, 1750000000), 'narHash': 'sha256-' + c.b64(32), 'owner': 'NixOS' if n == 'nixpkgs' else 'nix-community',
                               'repo': n, 'rev': c.hexs(40), 'type': 'github'}, 'original': {'owner': 'NixOS', 'repo': n, 'type': 'github'}}
    lines = json.dumps({'nodes': nodes, 'root': 'root', 'version': 7}, indent=2).split('\n')
    return R('lockfile', 'dotfiles/flake.lock', lines, 'nix flake.lock with narHash', bom=False)


# ======================================================================
# NEGATIVES: public crypto material
# ======================================================================

@neg
def n_authorized_keys(c):
    lines = []
    for i in range(c.ri(2, 8)):
        k = c.pick(['ed', 'ed', 'ec', 'rsa']) if i else 'ed'
        key = c.ed_key() if k == 'ed' else (c.ec_key() if k == 'ec' else c.rsa_pub_only())
        opt = c.pick(['', '', 'no-port-forwarding,no-agent-forwarding ', 'from="10.0.0.0/8" ', 'command="/usr/local/bin/backup-only",restrict '])
        lines.append(opt + ssh_pub_line(key, '%s@%s' % (c.user(), c.pick(['laptop', 'workstation', 'ci', 'MacBook-Pro.local']))))
    return R('pubkey', '.ssh/authorized_keys', lines, 'authorized_keys with ed25519/ecdsa/rsa public keys', bom=False, eol='lf')


@neg
def n_pubkey_file(c):
    k = c.ed_key() if c.chance(0.6) else c.rsa_pub_only()
    name = 'id_ed25519.pub' if isinstance(k, ed25519.Ed25519PrivateKey) else 'id_rsa.pub'
    return R('pubkey', '.ssh/%s' % name, [ssh_pub_line(k, '%s@%s' % (c.user(), c.pick(['thinkpad', 'mbp', 'desktop'])))],
             'ssh public key file', bom=False, eol='lf')


@neg
def n_known_hosts(c):
    lines = []
    for i in range(c.ri(5, 25)):
        k = c.ed_key() if c.chance(0.6) else c.ec_key()
        if c.chance(0.5):
            host = '|1|%s|%s' % (c.b64(20), c.b64(20))
        else:
            host = c.pick(['github.com', 'gitlab.com', 'bitbucket.org', c.ip(), 'bastion.' + c.domain(), '[%s]:2222' % c.ip()])
        lines.append('%s %s' % (host, ssh_pub_line(k)))
    return R('pubkey', '.ssh/known_hosts', lines, 'known_hosts (hashed and plain)', bom=False, eol='lf')


@neg
def n_pgp_pub(c):
    name = c.fullname()
    blk, fpr = pgp_key_block(c, name, c.email(), secret=False)
    lines = ['# Release signing key for %s' % c.proj(), '# Fingerprint: %s' % ' '.join(fpr[i:i + 4] for i in range(0, 40, 4)), ''] + blk
    return R('pubkey', '%s/KEYS.asc' % c.home_proj(), lines, 'PGP public key block')


@neg
def n_x509(c):
    ca = c.rsa_pub_only() if False else c.ed_key()
    lines = []
    ca_pem = make_cert(c, ca, '%s Root CA' % c.org().title(), ca=True, days=3650)
    leaf = c.ed_key()
    d = c.domain()
    lines += pem_lines(make_cert(c, leaf, d, issuer_key=ca, issuer_cn='%s Root CA' % c.org().title()))
    lines += pem_lines(ca_pem)
    return R('cert', 'etc/ssl/certs/%s-fullchain.pem' % d.split('.')[0], lines, 'X.509 certificate chain (public)', bom=False)


@neg
def n_csr(c):
    k = c.ed_key()
    d = c.domain()
    csr = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, d)]))
           .add_extension(x509.SubjectAlternativeName([x509.DNSName(d), x509.DNSName('www.' + d)]), critical=False).sign(k, None))
    return R('cert', 'certs/%s.csr' % d, pem_lines(csr.public_bytes(serialization.Encoding.PEM)), 'certificate signing request', bom=False)


@neg
def n_pubkey_pem(c):
    k = c.ec_key() if c.chance(0.5) else c.rsa_pub_only()
    lines = ['# JWT verification key (public). The private half is in KMS key alias/%s-jwt.' % c.proj()] + pem_lines(pub_pem(k))
    return R('pubkey', '%s/config/jwt_public.pem' % c.home_proj(), lines, 'PEM public key (SubjectPublicKeyInfo)', bom=False)


@neg
def n_jwks(c):
    keys = []
    for i in range(c.ri(1, 3)):
        if c.chance(0.5):
            k = c.rsa_pub_only()
            n = k.public_key().public_numbers().n
            keys.append({'kty': 'RSA', 'use': 'sig', 'alg': 'RS256', 'kid': c.hexs(16),
                         'n': b64u(n.to_bytes((n.bit_length() + 7) // 8, 'big')), 'e': 'AQAB'})
        else:
            k = c.ec_key()
            nums = k.public_key().public_numbers()
            keys.append({'kty': 'EC', 'use': 'sig', 'alg': 'ES256', 'kid': c.uuid4(), 'crv': 'P-256',
                         'x': b64u(nums.x.to_bytes(32, 'big')), 'y': b64u(nums.y.to_bytes(32, 'big'))})
    lines = json.dumps({'keys': keys}, indent=2).split('\n')
    return R('pubkey', '%s/public/.well-known/jwks.json' % c.home_proj(), lines, 'JWKS with public keys only', bom=False)


@neg
def n_age_recipients(c):
    lines = ['# age recipients for the %s secrets repo' % c.proj()]
    for i in range(c.ri(2, 6)):
        lines.append('# %s' % c.fullname())
        lines.append(bech32('age', raw_pub(c.x_key())))
    if c.chance(0.5):
        lines.append(ssh_pub_line(c.ed_key(), 'ci@%s' % c.domain()))
    return R('pubkey', '%s/secrets/.age-recipients' % c.home_proj(), lines, 'age recipients (public keys)', bom=False)


@neg
def n_wg_show(c):
    lines = ['interface: wg0', '  public key: %s' % base64.b64encode(raw_pub(c.x_key())).decode(), '  private key: (hidden)',
             '  listening port: %d' % c.ri(40000, 60000), '']
    for i in range(c.ri(2, 7)):
        lines += ['peer: %s' % base64.b64encode(raw_pub(c.x_key())).decode(), '  preshared key: (hidden)' if c.chance(0.4) else None,
                  '  endpoint: %s:%d' % (c.ip(False), 51820), '  allowed ips: 10.8.0.%d/32' % (i + 2),
                  '  latest handshake: %d seconds ago' % c.ri(2, 200), '  transfer: %.2f MiB received, %.2f MiB sent' % (c.ri(1, 9000) / 10, c.ri(1, 9000) / 10), '']
    lines = [l for l in lines if l is not None]
    return R('pubkey', 'notes/wg-show-%s.txt' % c.pick(['vpn1', 'gw', 'home']), lines, 'wg show output (private key hidden)', bom=False)


@neg
def n_wg_peers_doc(c):
    lines = ['# VPN peers', '', '| name | address | public key |', '|---|---|---|']
    for i in range(c.ri(3, 12)):
        lines.append('| %s-%s | 10.8.0.%d | `%s` |' % (c.user(), c.pick(['laptop', 'phone']), i + 2, base64.b64encode(raw_pub(c.x_key())).decode()))
    lines += ['', 'Generate your own pair with `wg genkey | tee privatekey | wg pubkey > publickey` and send **only** the public key.']
    return R('pubkey', 'infra/vpn/PEERS.md', lines, 'markdown table of WireGuard public keys')


# ======================================================================
# NEGATIVES: encrypted blobs
# ======================================================================

@neg
def n_ansible_vault(c):
    hx = (c.rb(32).hex() + '\n' + c.rb(32).hex() + '\n' + c.rb(c.ri(200, 1200)).hex()).encode().hex()
    lines = ['$ANSIBLE_VAULT;1.1;AES256'] + [hx[i:i + 80] for i in range(0, len(hx), 80)]
    return R('encrypted', '%s/ansible/group_vars/production/vault.yml' % c.home_proj(), lines, 'ansible-vault encrypted file', bom=False, eol='lf')


@neg
def n_ansible_inline_vault(c):
    hx = (c.rb(32).hex() + '\n' + c.rb(32).hex() + '\n' + c.rb(c.ri(40, 90)).hex()).encode().hex()
    lines = ['---', 'db_user: app', 'db_password: !vault |', '  $ANSIBLE_VAULT;1.1;AES256'] + ['  ' + hx[i:i + 80] for i in range(0, len(hx), 80)] + ['db_port: 5432']
    return R('encrypted', '%s/ansible/host_vars/db1.yml' % c.home_proj(), lines, 'inline !vault encrypted value', bom=False, eol='lf')


def _sops_enc(c, n, typ='str'):
    return 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]' % (c.b64(n), c.b64(32), c.b64(16), typ)


def _age_armor(c, n):
    b = c.b64(n)
    return ['-----BEGIN AGE ENCRYPTED FILE-----'] + [b[i:i + 64] for i in range(0, len(b), 64)] + ['-----END AGE ENCRYPTED FILE-----']


@neg
def n_sops(c):
    rec = bech32('age', raw_pub(c.x_key()))
    lines = ['database:', '    user: %s' % _sops_enc(c, 6), '    password: %s' % _sops_enc(c, 24), 'stripe:',
             '    secret_key: %s' % _sops_enc(c, 80), 'sops:', '    kms: []', '    age:', '        - recipient: %s' % rec, '          enc: |']
    lines += ['            ' + l for l in _age_armor(c, 180)]
    lines += ['    lastmodified: "%sZ"' % c.dt().isoformat(), '    mac: %s' % _sops_enc(c, 64), '    unencrypted_suffix: _unencrypted', '    version: 3.%d.%d' % (c.ri(7, 9), c.ri(0, 3))]
    return R('encrypted', '%s/secrets/prod.enc.yaml' % c.home_proj(), lines, 'SOPS-encrypted yaml with age recipient', bom=False)


@neg
def n_age_file(c):
    return R('encrypted', '%s/secrets/%s.age' % (c.home_proj(), c.pick(['db', 'backup-key', 'env'])), _age_armor(c, c.ri(200, 2000)),
             'age armored ciphertext', bom=False)


@neg
def n_gpg_msg(c):
    lines = pgp_message(c, c.ri(100, 1500))
    return R('encrypted', 'Documents/%s.txt.asc' % c.pick(['recovery-codes', 'handover', 'passwords-backup']), lines,
             'GPG armored encrypted message', bom=False)


@neg
def n_sealed_secret(c):
    p = c.proj()
    lines = ['apiVersion: bitnami.com/v1alpha1', 'kind: SealedSecret', 'metadata:', '  name: %s-db' % p, '  namespace: %s' % p,
             'spec:', '  encryptedData:']
    for k in ['password', 'username', 'url']:
        lines.append('    %s: AgB%s' % (k, c.b64(c.ri(300, 500)).rstrip('=')))
    lines += ['  template:', '    metadata:', '      name: %s-db' % p, '    type: Opaque']
    return R('encrypted', '%s/k8s/sealedsecret-db.yaml' % c.home_proj(), lines, 'bitnami SealedSecret ciphertext', bom=False)


# ======================================================================
# NEGATIVES: base64 assets / minified / css
# ======================================================================

@neg
def n_html_datauri(c):
    img = c.b64(c.ri(300, 3000))
    lines = L('''
        <!DOCTYPE html>
        <html lang="en">
        <head>
          <meta charset="utf-8">
          <title>%s</title>
          <link rel="icon" href="data:image/png;base64,%s">
          <link rel="stylesheet" href="/assets/app.%s.css" integrity="%s" crossorigin="anonymous">
        </head>
        <body>
          <img alt="logo" src="data:image/png;base64,%s">
          <form method="post" action="/login">
            <input type="hidden" name="csrfmiddlewaretoken" value="{{ csrf_token }}">
            <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
            <button type="submit">Sign in</button>
          </form>
          <script src="/assets/app.%s.js" integrity="%s"></script>
        </body>
        </html>
        ''' % (c.proj(), c.b64(c.ri(60, 200)), c.hexs(8), sri(c, 'sha384'), img, c.hexs(8), sri(c, 'sha384')))
    return R('asset', '%s/public/index.html' % c.home_proj(), lines, 'html with data: URI images, SRI hashes, password input')


@neg
def n_css_font(c):
    lines = ['@font-face {', "  font-family: 'Inter var';", '  font-display: swap;',
             "  src: url(data:font/woff2;base64,%s) format('woff2');" % c.b64(c.ri(2000, 8000)), '}', '']
    for i in range(c.ri(30, 120)):
        lines += ['.%s_%s__%s {' % (c.pick(['Button', 'Card', 'Nav', 'Modal']), c.pick(['root', 'label', 'icon']), c.s(B62 + '-_', 5)),
                  '  color: #%s;' % c.hexs(6), '  background: rgba(%d, %d, %d, 0.%d);' % (c.ri(0, 255), c.ri(0, 255), c.ri(0, 255), c.ri(1, 9)), '}']
    return R('asset', '%s/dist/assets/index-%s.css' % (c.home_proj(), c.b62(8)), lines, 'CSS with base64 font and css-module class names', bom=False)


@neg
def n_minified_js(c):
    parts = []
    for i in range(c.ri(150, 500)):
        a, b = c.s(LOWER, c.ri(1, 2)), c.s(LOWER + UPPER, c.ri(1, 2))
        parts.append(c.pick([
            'function %s(%s){return %s&&%s.__esModule?%s:{default:%s}}' % (a, b, b, b, b, b),
            'var %s=%s("%s"),%s=%s(%s);' % (a, b, c.hexs(4), b, a, c.ri(0, 999)),
            '%s.prototype.%s=function(){return this._%s};' % (a.upper(), c.pick(WORDS), c.pick(WORDS)),
            'const %s="%s";' % (a, c.pick(['/api/v1/orders', 'application/json', 'X-Request-Id', 'Bearer ', 'Authorization'])),
            'e.exports=JSON.parse(\'{"version":"%s","hash":"%s"}\');' % (c.ver(), c.hexs(20)),
            'if(!%s)throw new Error("Missing API key: set VITE_API_KEY");' % a,
        ]))
    body = ''.join(parts)
    lines = ['/*! %s v%s | MIT */' % (c.proj(), c.ver())] + [body[i:i + 5000] for i in range(0, len(body), 5000)] + ['//# sourceMappingURL=main.%s.js.map' % c.hexs(8)]
    return R('asset', '%s/dist/static/js/main.%s.js' % (c.home_proj(), c.hexs(8)), lines, 'minified JS bundle', bom=False, eol='lf')


@neg
def n_sourcemap(c):
    segs = ';'.join(','.join(c.s(B64URL.replace('-', '+').replace('_', '/'), c.ri(4, 8)) for _ in range(c.ri(1, 12))) for _ in range(c.ri(200, 600)))
    doc = {'version': 3, 'file': 'main.js', 'sources': ['webpack://%s/./src/%s.ts' % (c.proj(), c.pick(WORDS)) for _ in range(5)],
           'names': [c.pick(WORDS) for _ in range(20)], 'mappings': segs}
    return R('asset', '%s/dist/main.%s.js.map' % (c.home_proj(), c.hexs(8)), [json.dumps(doc)], 'source map with VLQ mappings', bom=False)


@neg
def n_svg(c):
    lines = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">',
             '  <defs><linearGradient id="g%s"><stop offset="0" stop-color="#%s"/><stop offset="1" stop-color="#%s"/></linearGradient></defs>' % (c.hexs(6), c.hexs(6), c.hexs(6)),
             '  <path fill="url(#g)" d="%s"/>' % ' '.join('M%d.%d %d.%dL%d.%d %d.%dZ' % tuple(c.ri(0, 24) for _ in range(8)) for _ in range(c.ri(20, 80))),
             '  <image href="data:image/webp;base64,%s" width="8" height="8"/>' % c.b64(c.ri(100, 600)), '</svg>']
    return R('asset', '%s/src/assets/icons/%s.svg' % (c.home_proj(), c.pick(WORDS)), lines, 'SVG with embedded base64 image', bom=False)


# ======================================================================
# NEGATIVES: shell histories / scripts that fetch secrets at runtime
# ======================================================================

SAFE_HIST = [
    'vault kv get -field=password secret/{p}/db',
    'vault login -method=oidc role=dev',
    'export DB_PASSWORD="$(vault kv get -field=password secret/{p}/db)"',
    "op read 'op://Engineering/{p} prod db/password'",
    'export GITHUB_TOKEN=$(gh auth token)',
    'pass show work/{p}/smtp | head -1',
    'aws secretsmanager get-secret-value --secret-id prod/{p}/stripe --query SecretString --output text | jq -r .secret_key',
    'aws ssm get-parameter --name /{p}/prod/db_password --with-decryption',
    'kubectl -n {p} get secret {p}-db -o jsonpath="{{.data.password}}" | base64 -d | pbcopy',
    'kubectl create secret generic {p}-db --from-file=password=./db_password.txt',
    'mysql -u root -p',
    'psql "host=db.internal user={p} dbname={p}"',
    'ssh-keygen -t ed25519 -C "{u}@laptop"',
    'ssh-add --apple-use-keychain ~/.ssh/id_ed25519',
    'gpg --full-generate-key',
    'gpg --armor --export {u}@example.com > pub.asc',
    'docker login ghcr.io -u {u} --password-stdin < ~/.config/ghcr_token',
    'htpasswd -B -c /etc/nginx/.htpasswd {u}',
    'openssl rand -hex 32 | vault kv put secret/{p}/jwt value=-',
    'git log -p -S "password" -- config/',
    'gitleaks detect --source . -v',
    'sops -d secrets/prod.enc.yaml | less',
    'age -d -i ~/.config/age/keys.txt secrets/db.age',
    'export AWS_PROFILE={p}-dev',
    'aws sso login --profile {p}-dev',
    'terraform plan -var-file=prod.tfvars',
    'echo $DATABASE_URL | cut -d@ -f2',
    'history -d $(history 1)',
    'chmod 600 ~/.pgpass',
    'unset HISTFILE',
    'git commit -m "move token to env"',
    'npm login --auth-type=web',
    'gcloud auth application-default login',
    'az login --use-device-code',
    'heroku auth:token >/dev/null && echo ok',
    'cat ~/.ssh/id_ed25519.pub | pbcopy',
    'ls -la ~/.ssh',
    'cd ~/code/{p} && make test',
    'git status', 'git pull --rebase', 'docker compose up -d', 'ls', 'cd ..', 'vim .env.example', 'kubectl get pods -A',
]


@neg
def n_bash_history(c):
    p = c.proj()
    u = c.user()
    lines = [c.pick(SAFE_HIST).format(p=p, u=u) for _ in range(c.ri(80, 300))]
    return R('shell-history', c.pick(['.bash_history', '.local/share/fish/history.txt' if False else '.bash_history']), lines,
             'bash history reading secrets via vault/op/pass/aws sm', bom=False, eol='lf')


@neg
def n_zsh_history(c):
    p = c.proj()
    u = c.user()
    t = int(c.dt().timestamp())
    lines = []
    for i in range(c.ri(80, 300)):
        t += c.ri(2, 600)
        lines.append(': %d:%d;%s' % (t, c.ri(0, 30), c.pick(SAFE_HIST).format(p=p, u=u)))
    return R('shell-history', '.zsh_history', lines, 'zsh extended history with secret fetch commands', bom=False, eol='lf')


@neg
def n_backup_script(c):
    lines = L('''
        #!/bin/sh
        # nightly backup; restic repo password comes from a root-only file
        set -eu
        export RESTIC_REPOSITORY="s3:https://s3.eu-central-1.amazonaws.com/%s-backups"
        export RESTIC_PASSWORD_FILE=/etc/restic/password
        export AWS_SHARED_CREDENTIALS_FILE=/etc/restic/aws-credentials
        export PGPASSFILE=/root/.pgpass

        pg_dump -h db.internal -U backup --format=custom %s > /var/backups/%s.dump
        restic backup /var/backups /etc --tag nightly --exclude-file=/etc/restic/excludes
        restic forget --keep-daily 7 --keep-weekly 5 --keep-monthly 12 --prune
        mysqldump --defaults-extra-file=/etc/mysql/backup.cnf --all-databases | gzip > /var/backups/mysql.sql.gz
        curl -fsS -m 10 --retry 5 "https://hc-ping.com/$(cat /etc/restic/healthcheck-uuid)"
        ''' % (c.org(), c.proj().replace('-', '_'), c.proj()))
    return R('shell-script', 'bin/backup-nightly.sh', lines, 'backup script using --password-file style env', bom=False, eol='lf')


# ======================================================================
# NEGATIVES: public-by-design identifiers
# ======================================================================

def _firebase_apikey(c):
    return 'AIza' + c.s(B62 + '-_', 35)


@neg
def n_firebase(c):
    pid = '%s-%s' % (c.proj(), c.ri(1000, 99999))
    sender = c.ri(10 ** 11, 10 ** 12 - 1)
    lines = L('''
        // Firebase web config. These values are public by design; access is
        // enforced by Firestore security rules and App Check, not by hiding them.
        import { initializeApp } from 'firebase/app';
        import { getAuth } from 'firebase/auth';

        const firebaseConfig = {
          apiKey: "%s",
          authDomain: "%s.firebaseapp.com",
          projectId: "%s",
          storageBucket: "%s.appspot.com",
          messagingSenderId: "%d",
          appId: "1:%d:web:%s",
          measurementId: "G-%s"
        };

        export const app = initializeApp(firebaseConfig);
        export const auth = getAuth(app);
        ''' % (_firebase_apikey(c), pid, pid, pid, sender, sender, c.hexs(22), c.s(UPPER + DIG, 10)))
    return R('public-id', '%s/web/src/firebase.ts' % c.home_proj(), lines, 'Firebase web config (apiKey+authDomain+projectId, public by design)')


@neg
def n_stripe_pk(c):
    pk = 'pk_live_51' + c.b62(c.ri(96, 99))
    lines = L('''
        import { loadStripe } from '@stripe/stripe-js';

        // Publishable key: safe to ship to the browser.
        const STRIPE_PUBLISHABLE_KEY = '%s';

        export const stripePromise = loadStripe(STRIPE_PUBLISHABLE_KEY, { locale: 'auto' });
        ''' % pk)
    return R('public-id', '%s/web/src/lib/stripe.ts' % c.home_proj(), lines, 'Stripe publishable key pk_live_')


@neg
def n_analytics(c):
    lines = L('''
        <!-- Google tag (gtag.js) -->
        <script async src="https://www.googletagmanager.com/gtag/js?id=G-%s"></script>
        <script>
          window.dataLayer = window.dataLayer || [];
          function gtag(){dataLayer.push(arguments);}
          gtag('js', new Date());
          gtag('config', 'G-%s');
          gtag('config', 'UA-%d-%d');
        </script>
        <!-- Google Tag Manager -->
        <script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});
        var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i;
        f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-%s');</script>
        <script defer data-domain="%s" src="https://plausible.io/js/script.js"></script>
        <script src="https://www.google.com/recaptcha/api.js?render=6L%s"></script>
        ''' % (c.s(UPPER + DIG, 10), c.s(UPPER + DIG, 10), c.ri(1000000, 99999999), c.ri(1, 9), c.s(UPPER + DIG, 7), c.domain(), c.s(B62 + '-_', 38)))
    return R('public-id', '%s/templates/partials/analytics.html' % c.home_proj(), lines, 'GA/GTM ids and reCAPTCHA site key (public)')


@neg
def n_sentry_dsn(c):
    dsn = 'https://%s@o%d.ingest.%ssentry.io/%d' % (c.hexs(32), c.ri(100000, 4999999), c.pick(['', 'us.', 'de.']), c.ri(1000000, 4999999))
    lines = L('''
        import * as Sentry from '@sentry/react';

        Sentry.init({
          // DSN is a public client key; it only allows sending events
          dsn: '%s',
          release: '%s@%s',
          environment: import.meta.env.MODE,
          tracesSampleRate: 0.1,
          replaysOnErrorSampleRate: 1.0,
        });
        ''' % (dsn, c.proj(), c.hexs(40)))
    return R('public-id', '%s/web/src/sentry.ts' % c.home_proj(), lines, 'Sentry DSN (public key) in browser code')


@neg
def n_mapbox_pk(c):
    payload = b64u(json.dumps({'u': c.user() + c.pick(WORDS), 'a': 'cl' + c.s(LOWER + DIG, 23)}, separators=(',', ':')).encode())
    tok = 'pk.' + payload + '.' + c.b64(16, url=True, pad=False)
    lines = L('''
        // Public (pk.) token, URL-restricted to *.%s in the Mapbox dashboard.
        export const MAPBOX_TOKEN = '%s';
        export const MAP_STYLE = 'mapbox://styles/%s/cl%s';
        ''' % (c.domain(), tok, c.user(), c.s(LOWER + DIG, 23)))
    return R('public-id', '%s/web/src/map/config.js' % c.home_proj(), lines, 'Mapbox public pk. token')


@neg
def n_algolia_search(c):
    lines = L('''
        import algoliasearch from 'algoliasearch/lite';

        // Search-only API key: restricted to the `search` ACL, safe for the frontend.
        // (The admin key is only available to the indexer via ALGOLIA_ADMIN_KEY.)
        const searchClient = algoliasearch('%s', '%s');
        export const index = searchClient.initIndex('%s_products');
        ''' % (c.s(UPPER + DIG, 10), c.hexs(32), c.pick(['prod', 'staging'])))
    return R('public-id', '%s/web/src/search/client.js' % c.home_proj(), lines, 'Algolia app id + search-only key, labelled')


@neg
def n_frontend_public_keys(c):
    lines = L('''
        # Public, browser-exposed keys only. Anything secret goes in the server .env.
        VITE_POSTHOG_KEY=phc_%s
        VITE_POSTHOG_HOST=https://eu.i.posthog.com
        VITE_DATADOG_CLIENT_TOKEN=pub%s
        VITE_DATADOG_APPLICATION_ID=%s
        VITE_STRIPE_PUBLISHABLE_KEY=pk_live_%s
        VITE_GOOGLE_OAUTH_CLIENT_ID=%d-%s.apps.googleusercontent.com
        VITE_RECAPTCHA_SITE_KEY=6L%s
        VITE_API_BASE_URL=https://api.%s
        ''' % (c.b62(43), c.hexs(32), c.uuid4(), c.b62(24), c.ri(10 ** 11, 10 ** 12 - 1), c.s(LOWER + DIG, 32), c.s(B62 + '-_', 38), c.domain()))
    return R('public-id', '%s/web/.env.production' % c.home_proj(), lines, 'frontend env with public client keys (posthog phc_, datadog pub, pk_live, oauth client id)')


# ======================================================================
# NEGATIVES: misc ids, hashes, flags
# ======================================================================

@neg
def n_build_info(c):
    doc = {'version': c.ver(), 'git': {'commit': c.hexs(40), 'branch': 'main', 'dirty': False, 'tag': 'v' + c.ver()},
           'build': {'id': c.uuid4(), 'number': c.ri(100, 9999), 'timestamp': c.dt().isoformat() + 'Z', 'runner': 'gha-%s' % c.hexs(8),
                     'cacheKey': 'node-modules-%s-%s' % (c.pick(['linux', 'macos']), c.hexs(64))},
           'artifacts': [{'name': '%s-%s.tar.gz' % (c.proj(), c.pick(['amd64', 'arm64'])), 'sha256': c.hexs(64), 'size': c.ri(10 ** 5, 10 ** 8)} for _ in range(3)],
           'image': 'ghcr.io/%s/%s@sha256:%s' % (c.org(), c.proj(), c.hexs(64))}
    return R('data', '%s/dist/build-info.json' % c.home_proj(), json.dumps(doc, indent=2).split('\n'), 'build info with git sha, cache key, digests', bom=False)


@neg
def n_feature_flags(c):
    flags = {}
    for i in range(c.ri(10, 40)):
        flags['%s_%s' % (c.pick(['enable', 'use', 'show', 'beta']), c.pick(WORDS))] = {
            'id': c.hexs(24), 'enabled': c.chance(0.5), 'rollout': c.ri(0, 100), 'salt': c.hexs(8), 'variation_key': c.uuid4(),
            'owner': c.email()}
    return R('data', '%s/config/flags.json' % c.home_proj(), json.dumps({'flags': flags}, indent=2).split('\n'), 'feature flag dump with ids/salts (bucketing)', bom=False)


@neg
def n_redis_keys(c):
    lines = []
    for i in range(c.ri(50, 250)):
        lines.append('%s:%s:%s' % (c.pick(['cache', 'sess', 'ratelimit', 'idem', 'lock']), c.pick(['user', 'cart', 'quote', 'ip']),
                                   c.pick([c.hexs(40), c.uuid4(), str(c.ri(1, 10 ** 6)), c.b64(12, url=True, pad=False)])))
    return R('data', 'tmp/redis-keys-%s.txt' % c.dt().strftime('%Y%m%d'), lines, 'redis KEYS output (cache/idempotency/session ids)', bom=False)


@neg
def n_openapi(c):
    lines = L('''
        openapi: 3.0.3
        info:
          title: %s API
          version: %s
        servers:
          - url: https://api.%s/v1
        components:
          securitySchemes:
            bearerAuth:
              type: http
              scheme: bearer
              bearerFormat: JWT
            apiKey:
              type: apiKey
              in: header
              name: X-API-Key
          schemas:
            Token:
              type: object
              properties:
                access_token:
                  type: string
                  example: eyJhbGciOi...
                refresh_token:
                  type: string
                  example: "<opaque>"
                expires_in:
                  type: integer
                  example: 3600
            LoginRequest:
              type: object
              required: [email, password]
              properties:
                email:
                  type: string
                  format: email
                  example: jane@example.com
                password:
                  type: string
                  format: password
                  writeOnly: true
                  minLength: 12
        security:
          - bearerAuth: []
        ''' % (c.proj().title(), c.ver(), c.domain()))
    return R('docs', '%s/api/openapi.yaml' % c.home_proj(), lines, 'OpenAPI spec with auth schemes and truncated examples', bom=False)


@neg
def n_notebook_hashes(c):
    cells = [{'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [],
              'source': ['import hashlib, os\n', "api_key = os.environ['OPENAI_API_KEY']  # set in the kernel env\n"]},
             {'cell_type': 'code', 'execution_count': 2, 'metadata': {},
              'outputs': [{'name': 'stdout', 'output_type': 'stream', 'text': ['%s  %s\n' % (c.hexs(64), c.pick(['train.parquet', 'eval.parquet']))]}],
              'source': ['!sha256sum data/*.parquet']},
             {'cell_type': 'code', 'execution_count': 3, 'metadata': {},
              'outputs': [{'data': {'image/png': c.b64(c.ri(500, 3000)), 'text/plain': ['<Figure size 640x480 with 1 Axes>']}, 'metadata': {}, 'output_type': 'display_data'}],
              'source': ['df.plot()']}]
    doc = {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return R('notebook', '%s/notebooks/%s.ipynb' % (c.home_proj(), c.pick(['explore', 'eval', 'eda'])), json.dumps(doc, indent=1).split('\n'),
             'jupyter notebook reading key from env, png output', bom=False)


@neg
def n_totp_docs(c):
    lines = L('''
        # Two-factor authentication

        Scan the QR code in your authenticator app. The QR encodes a URI like

            otpauth://totp/%s:<email>?secret=<BASE32SECRET>&issuer=%s&digits=6&period=30

        If you cannot scan it, type the setup key shown below the QR code.
        Recovery codes are shown **once**; store them in your password manager.
        Each code is 10 characters, e.g. `xxxxx-xxxxx`.
        ''' % (c.org().title(), c.org().title()))
    return R('docs', '%s/docs/user/2fa.md' % c.home_proj(), lines, '2FA docs with placeholder otpauth URI')


@neg
def n_k8s_secret_template(c):
    p = c.proj()
    lines = L('''
        # Template only: values are filled by `make secrets` from Vault, this file is never applied as-is.
        apiVersion: v1
        kind: Secret
        metadata:
          name: %s-app
        type: Opaque
        stringData:
          DATABASE_URL: "postgres://%s:${DB_PASSWORD}@db.%s.svc:5432/%s"
          REDIS_PASSWORD: "${REDIS_PASSWORD}"
          JWT_SECRET: "${JWT_SECRET}"
        ''' % (p, p.replace('-', '_'), p, p.replace('-', '_')))
    return R('k8s-config', '%s/k8s/secret.tmpl.yaml' % c.home_proj(), lines, 'k8s Secret template with ${} placeholders', bom=False)


@neg
def n_pgpass_doc(c):
    lines = L('''
        # ~/.pgpass format reference (see pgpass(5))
        # hostname:port:database:username:password
        # Example (replace the last field with your password):
        # db.internal:5432:%s:%s:<password>
        #
        # Wildcards are allowed: *:*:*:replicator:<password>
        ''' % (c.proj().replace('-', '_'), c.user()))
    return R('docs', 'docs/pgpass.example', lines, '.pgpass format docs, placeholders only', bom=False)


@neg
def n_python_settings_env(c):
    lines = L('''
        from pathlib import Path
        import environ

        env = environ.Env(DEBUG=(bool, False))
        BASE_DIR = Path(__file__).resolve().parent.parent
        environ.Env.read_env(BASE_DIR / ".env")

        SECRET_KEY = env("DJANGO_SECRET_KEY")
        DEBUG = env("DEBUG")
        ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost"])

        DATABASES = {"default": env.db("DATABASE_URL", default="postgres://localhost/%s")}
        CACHES = {"default": env.cache("REDIS_URL", default="redis://localhost:6379/1")}

        EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
        AWS_SECRET_ACCESS_KEY = env("AWS_SECRET_ACCESS_KEY", default=None)

        PASSWORD_HASHERS = [
            "django.contrib.auth.hashers.Argon2PasswordHasher",
            "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        ]
        AUTH_PASSWORD_VALIDATORS = [
            {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
            {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
        ]
        ''' % c.proj().replace('-', '_'))
    lines += py_filler(c, c.ri(0, 3))
    return R('app-config', '%s/%s/settings.py' % (c.home_proj(), c.proj().replace('-', '_')), lines, 'django settings reading secrets from env')


@neg
def n_vault_policy(c):
    p = c.proj()
    lines = L('''
        # Vault policy for %s
        path "secret/data/%s/*" {
          capabilities = ["read"]
        }
        path "database/creds/%s-ro" {
          capabilities = ["read"]
        }
        path "transit/encrypt/%s" {
          capabilities = ["update"]
        }
        path "auth/token/renew-self" {
          capabilities = ["update"]
        }
        ''' % (p, p, p, p))
    return R('config-template', '%s/vault/policies/%s.hcl' % (c.home_proj(), p), lines, 'vault policy (paths only)', bom=False)


@neg
def n_ssh_config(c):
    lines = []
    for i in range(c.ri(3, 10)):
        h = c.pick(['bastion', 'db', 'web', 'ci', 'nas', 'pi']) + str(i)
        lines += ['Host %s' % h, '    HostName %s' % c.pick([c.ip(), h + '.' + c.domain()]), '    User %s' % c.user(),
                  '    IdentityFile ~/.ssh/id_ed25519%s' % c.pick(['', '_work', '_' + h]), '    IdentitiesOnly yes', '']
    lines += ['Host *', '    AddKeysToAgent yes', '    UseKeychain yes', '    IdentityAgent "~/Library/Group Containers/2BUA8C4S2C.com.1password/t/agent.sock"']
    return R('ssh-config', '.ssh/config', lines, 'ssh config with IdentityFile paths only', bom=False, eol='lf')


@neg
def n_password_policy_yaml(c):
    lines = L('''
        password_policy:
          min_length: 14
          require_uppercase: true
          require_digit: true
          require_symbol: true
          max_age_days: 0
          history: 5
          banned_passwords_file: /etc/%s/banned-passwords.txt
          hibp_check: true
        session:
          cookie_name: __Host-session
          ttl: 12h
          secret_ref: vault:secret/data/%s/session#key
        api_tokens:
          prefix: "%s_"
          length: 40
          hash: sha256
        ''' % (c.proj(), c.proj(), c.s(LOWER, 3)))
    return R('app-config', '%s/config/security.yaml' % c.home_proj(), lines, 'security policy yaml with secret_ref and token format description', bom=False)


# ======================================================================
# NEGATIVES: extra hard cases (templating, hashes in password fields, public examples)
# ======================================================================

@neg
def n_template_syntax(c):
    p = c.proj().replace('-', '_')
    k = c.ri(0, 4)
    if k == 0:
        lines = L('''
            default: &default
              adapter: postgresql
              encoding: unicode
              pool: <%%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %%>
              username: <%%= ENV["DB_USER"] %%>
              password: <%%= ENV["DB_PASSWORD"] %%>

            production:
              <<: *default
              database: %s_production
              password: <%%= Rails.application.credentials.dig(:db, :password) %%>
            ''' % p)
        path, note = 'config/database.yml', 'rails database.yml with ERB ENV lookups'
    elif k == 1:
        lines = L('''
            apiVersion: v1
            kind: Secret
            metadata:
              name: {{ include "%s.fullname" . }}
            type: Opaque
            data:
              db-password: {{ .Values.postgresql.auth.password | default (randAlphaNum 32) | b64enc | quote }}
              api-token: {{ required "apiToken is required" .Values.apiToken | b64enc | quote }}
            ''' % p)
        path, note = 'deploy/helm/%s/templates/secret.yaml' % p, 'helm secret template with {{ .Values }}'
    elif k == 2:
        lines = L('''
            pipeline {
                agent any
                environment {
                    DB_CREDS = credentials('%s-db')
                    NPM_TOKEN = credentials('npm-publish-token')
                }
                stages {
                    stage('Deploy') {
                        steps {
                            withCredentials([string(credentialsId: 'slack-webhook', variable: 'SLACK_URL')]) {
                                sh 'curl -X POST -d "{\\"text\\":\\"deployed\\"}" "$SLACK_URL"'
                            }
                            sh 'PGPASSWORD=$DB_CREDS_PSW psql -h db -U $DB_CREDS_USR -c "select 1"'
                        }
                    }
                }
            }
            ''' % p)
        path, note = 'Jenkinsfile', 'Jenkinsfile with credentials() bindings'
    elif k == 3:
        lines = L('''
            variables:
              - group: %s-prod-secrets
            steps:
              - task: AzureKeyVault@2
                inputs:
                  azureSubscription: 'prod-connection'
                  KeyVaultName: 'kv-%s'
                  SecretsFilter: 'DbPassword,StorageKey'
              - script: |
                  dotnet ef database update --connection "Server=$(SqlServer);Database=%s;User Id=deploy;Password=$(DbPassword);"
                displayName: migrate
                env:
                  STORAGE_KEY: $(StorageKey)
            ''' % (p, p[:12], p))
        path, note = 'azure-pipelines.yml', 'Azure Pipelines with $(DbPassword) macro'
    else:
        lines = L('''
            deploy:
              stage: deploy
              image: alpine:3.20
              script:
                - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin "$CI_REGISTRY"
                - curl --header "JOB-TOKEN: $CI_JOB_TOKEN" --upload-file dist/app.tgz "${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/packages/generic/app/${CI_COMMIT_TAG}/app.tgz"
                - export VAULT_TOKEN="$(vault write -field=token auth/jwt/login role=%s jwt=$CI_JOB_JWT_V2)"
              only:
                - tags
            ''' % p)
        path, note = '.gitlab-ci.yml', 'GitLab CI using $CI_JOB_TOKEN / vault jwt login'
    return R('config-template', '%s/%s' % (c.home_proj(), path), lines, note, bom=False)


@neg
def n_keycloak_realm(c):
    users = []
    for i in range(c.ri(2, 8)):
        users.append({'username': c.user() + str(i), 'email': c.email(), 'enabled': True, 'credentials': [{
            'type': 'password', 'createdDate': c.ri(1600000000000, 1750000000000),
            'secretData': json.dumps({'value': c.b64(64), 'salt': c.b64(16), 'additionalParameters': {}}, separators=(',', ':')),
            'credentialData': json.dumps({'hashIterations': c.pick([27500, 210000]), 'algorithm': 'pbkdf2-sha512', 'additionalParameters': {}}, separators=(',', ':'))}]})
    doc = {'realm': c.org(), 'enabled': True, 'sslRequired': 'external', 'users': users}
    return R('hash', 'keycloak/export/%s-users-0.json' % c.org(), json.dumps(doc, indent=2).split('\n'), 'keycloak user export with pbkdf2 hashed secretData', bom=False)


@neg
def n_gpg_list(c):
    lines = ['/home/%s/.gnupg/pubring.kbx' % c.user(), '-' * 30]
    for i in range(c.ri(1, 3)):
        fpr = c.hexs(40).upper()
        d = c.dt()
        lines += ['sec   ed25519 %s [SC] [expires: %s]' % (d.date().isoformat(), (d + datetime.timedelta(days=730)).date().isoformat()),
                  '      %s' % fpr, 'uid           [ultimate] %s <%s>' % (c.fullname(), c.email()),
                  'ssb   cv25519 %s [E]' % d.date().isoformat(), '']
    return R('pubkey', 'notes/gpg-keys.txt', lines, 'gpg --list-secret-keys output (fingerprints only)', bom=False)


@neg
def n_openssl_text(c):
    k = c.rsa_pub_only()
    pem = make_cert(c, k, c.domain(), ca=False)
    cert = x509.load_pem_x509_certificate(pem)
    n = k.public_key().public_numbers().n
    hx = '00' + '%x' % n
    hx = ':'.join(hx[i:i + 2] for i in range(0, len(hx), 2))
    mod = [hx[i:i + 45] for i in range(0, len(hx), 45)]
    sig = cert.signature.hex()
    sig = ':'.join(sig[i:i + 2] for i in range(0, len(sig), 2))
    lines = ['Certificate:', '    Data:', '        Version: 3 (0x2)', '        Serial Number:', '            %s' % ':'.join('%02x' % b for b in cert.serial_number.to_bytes(16, 'big')),
             '        Signature Algorithm: sha256WithRSAEncryption', '        Issuer: %s' % cert.issuer.rfc4514_string(),
             '        Subject: %s' % cert.subject.rfc4514_string(), '        Subject Public Key Info:', '            Public Key Algorithm: rsaEncryption',
             '                Public-Key: (2048 bit)', '                Modulus:'] + ['                    ' + m for m in mod] + \
            ['                Exponent: 65537 (0x10001)', '    Signature Algorithm: sha256WithRSAEncryption', '    Signature Value:'] + \
            ['        ' + sig[i:i + 54] for i in range(0, len(sig), 54)] + pem_lines(pem)
    return R('cert', 'notes/%s-cert.txt' % c.pick(['api', 'www', 'mail']), lines, 'openssl x509 -text output (modulus, signature, PEM cert)', bom=False)


COMMON_PW = ['123456', 'password', '12345678', 'qwerty', '123456789', '12345', '1234', '111111', '1234567', 'dragon', '123123',
             'baseball', 'abc123', 'football', 'monkey', 'letmein', '696969', 'shadow', 'master', '666666', 'qwertyuiop', '123321',
             'mustang', '1234567890', 'michael', '654321', 'superman', '1qaz2wsx', '7777777', '121212', '000000', 'qazwsx', '123qwe',
             'killer', 'trustno1', 'jordan', 'jennifer', 'zxcvbnm', 'asdfgh', 'hunter', 'buster', 'soccer', 'harley', 'batman', 'andrew',
             'tigger', 'sunshine', 'iloveyou', '2000', 'charlie', 'robert', 'thomas', 'hockey', 'ranger', 'daniel', 'starwars', 'klaster',
             '112233', 'george', 'computer', 'michelle', 'jessica', 'pepper', '1111', 'zxcvbn', '555555', '11111111', '131313', 'freedom',
             '777777', 'pass', 'maggie', '159753', 'aaaaaa', 'ginger', 'princess', 'joshua', 'cheese', 'amanda', 'summer', 'love', 'ashley',
             'nicole', 'chelsea', 'biteme', 'matthew', 'access', 'yankees', '987654321', 'dallas', 'austin', 'thunder', 'taylor', 'matrix',
             'Password1', 'Passw0rd', 'P@ssw0rd', 'Welcome1', 'Welcome123', 'Summer2024', 'Winter2023!', 'admin', 'admin123', 'root', 'toor',
             'changeme', 'letmein123', 'qwerty123', 'iloveyou1', 'Spring2025', 'Company123', 'Test1234']


@neg
def n_banned_passwords(c):
    lst = list(COMMON_PW)
    c.r.shuffle(lst)
    lines = ['# Denylist used by the password validator (derived from public breach corpora).', '# One entry per line, case-insensitive match.'] + lst
    return R('data', '%s/%s/banned-passwords.txt' % (c.home_proj(), c.pick(['config', 'resources', 'data'])), lines,
             'password denylist of common breached passwords', bom=False)


@neg
def n_dotenv_vault(c):
    lines = ['#/-------------------.env.vault---------------------/', '#/         cloud-agnostic vaulting standard         /', '#/   [how it works](https://dotenv.org/env-vault)   /',
             '#/--------------------------------------------------/', '', '# development', 'DOTENV_VAULT_DEVELOPMENT="%s"' % c.b64(c.ri(200, 600)), '',
             '# production', 'DOTENV_VAULT_PRODUCTION="%s"' % c.b64(c.ri(200, 600)), '']
    return R('encrypted', '%s/.env.vault' % c.home_proj(), lines, '.env.vault encrypted payloads (key held elsewhere)', bom=False)


@neg
def n_jwt_example(c):
    lines = L('''
        import jwt
        import pytest

        # The canonical example token from jwt.io, signed with the literal string
        # "your-256-bit-secret". Used only to test decoding/verification paths.
        JWT_IO_EXAMPLE = (
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
            "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        )


        def test_decode_without_verification():
            claims = jwt.decode(JWT_IO_EXAMPLE, options={"verify_signature": False})
            assert claims["name"] == "John Doe"


        def test_wrong_key_rejected():
            with pytest.raises(jwt.InvalidSignatureError):
                jwt.decode(JWT_IO_EXAMPLE, "wrong-key", algorithms=["HS256"])
        ''')
    return R('code-test', '%s/tests/test_jwt_decode.py' % c.home_proj(), lines, 'test using the public jwt.io example token')


@neg
def n_google_services(c):
    pid = '%s-%d' % (c.proj(), c.ri(1000, 99999))
    num = c.ri(10 ** 11, 10 ** 12 - 1)
    doc = {'project_info': {'project_number': str(num), 'project_id': pid, 'storage_bucket': '%s.appspot.com' % pid},
           'client': [{'client_info': {'mobilesdk_app_id': '1:%d:android:%s' % (num, c.hexs(22)),
                                       'android_client_info': {'package_name': 'com.%s.%s' % (c.org().replace('-', ''), c.proj().replace('-', ''))}},
                       'oauth_client': [{'client_id': '%d-%s.apps.googleusercontent.com' % (num, c.s(LOWER + DIG, 32)), 'client_type': 3}],
                       'api_key': [{'current_key': _firebase_apikey(c)}],
                       'services': {'appinvite_service': {'other_platform_oauth_client': []}}}],
           'configuration_version': '1'}
    return R('public-id', '%s/android/app/google-services.json' % c.home_proj(), json.dumps(doc, indent=2).split('\n'),
             'android google-services.json (Firebase client config, public by design)', bom=False)


@neg
def n_git_lfs(c):
    lines = ['version https://git-lfs.github.com/spec/v1', 'oid sha256:%s' % c.hexs(64), 'size %d' % c.ri(10000, 900000000)]
    return R('data', '%s/models/%s.onnx' % (c.home_proj(), c.pick(WORDS)), lines, 'git LFS pointer', bom=False, eol='lf')


@neg
def n_oauth_access_log(c):
    base = c.dt()
    lines = []
    for i in range(c.ri(60, 200)):
        t = _ts(c, base, i).strftime('%d/%b/%Y:%H:%M:%S +0000')
        if c.chance(0.5):
            path = '/oauth2/authorize?response_type=code&client_id=%s&redirect_uri=https%%3A%%2F%%2Fapp.%s%%2Fcallback&scope=openid+email&state=%s&code_challenge=%s&code_challenge_method=S256' % (
                c.s(LOWER + DIG, 20), c.domain(), c.b64(16, url=True, pad=False), c.b64(32, url=True, pad=False))
        else:
            path = '/callback?code=[FILTERED]&state=%s' % c.b64(16, url=True, pad=False)
        lines.append('%s - - [%s] "GET %s HTTP/2.0" %d %d' % (c.ip(False), t, path, c.pick([302, 200]), c.ri(100, 5000)))
    return R('log', 'logs/idp/access.log', lines, 'IdP access log with OAuth state/code_challenge, code filtered', bom=False, eol='lf')


@neg
def n_grafana_ds(c):
    lines = L('''
        apiVersion: 1
        datasources:
          - name: Postgres
            type: postgres
            url: db.internal:5432
            user: grafana_ro
            jsonData:
              database: metrics
              sslmode: require
            secureJsonData:
              password: $GF_PG_PASSWORD
          - name: Loki
            type: loki
            url: https://logs.%s
            basicAuth: true
            basicAuthUser: grafana
            secureJsonData:
              basicAuthPassword: ${LOKI_BASIC_AUTH_PASSWORD}
        ''' % c.domain())
    return R('config-template', 'etc/grafana/provisioning/datasources/datasources.yaml', lines, 'grafana provisioning with $ENV secureJsonData', bom=False)


@neg
def n_csp_nonce(c):
    nonce = c.b64(16)
    lines = ['<!-- saved from https://app.%s/ at %s -->' % (c.domain(), c.dt().isoformat()), '<html><head>',
             '<meta http-equiv="Content-Security-Policy" content="script-src \'nonce-%s\' \'strict-dynamic\'; object-src \'none\'">' % nonce,
             '<script nonce="%s" src="/static/app.%s.js"></script>' % (nonce, c.hexs(10)),
             '<link rel="preload" href="/static/fonts/inter.%s.woff2" as="font" crossorigin>' % c.hexs(8), '</head><body>',
             '<div id="root" data-build="%s" data-release="%s"></div>' % (c.hexs(40), c.ver()), '</body></html>']
    return R('asset', 'Downloads/app-%s.html' % c.pick(WORDS), lines, 'saved HTML with CSP nonce and build hash', bom=False)


@neg
def n_ssh_keygen_out(c):
    k = c.ed_key()
    u = c.user()
    dom = c.domain()
    fp = ssh_fingerprint(k)
    art = ['+--[ED25519 256]--+'] + ['|%s|' % ''.join(c.pick(' .o+=*BOX@%&#/^SE') if c.chance(0.3) else ' ' for _ in range(17)) for _ in range(9)] + ['+----[SHA256]-----+']
    lines = ['$ ssh-keygen -t ed25519 -C "%s@%s"' % (u, dom), 'Generating public/private ed25519 key pair.',
             'Enter file in which to save the key (/home/%s/.ssh/id_ed25519): ' % u, 'Enter passphrase (empty for no passphrase): ',
             'Enter same passphrase again: ', 'Your identification has been saved in /home/%s/.ssh/id_ed25519' % u,
             'Your public key has been saved in /home/%s/.ssh/id_ed25519.pub' % u, 'The key fingerprint is:',
             '%s %s@%s' % (fp, u, dom), "The key's randomart image is:"] + art + ['$ cat ~/.ssh/id_ed25519.pub', ssh_pub_line(k, '%s@%s' % (u, dom))]
    return R('pubkey', 'notes/new-laptop-setup.txt', lines, 'ssh-keygen transcript: fingerprint, randomart, public key', bom=False)


# ======================================================================
# POSITIVES
# ======================================================================

def rsa_pub_only(self):
    if len(self._rsa) < 3:
        self._rsa.append(self.rsa_key(2048))
        return self._rsa[-1]
    return self.pick(self._rsa)


Ctx.rsa_pub_only = rsa_pub_only

TOK_CHARS = B62 + '-_'


def tok(c, kind):
    if kind == 'github':
        return github_token(c, c.pick(['ghp_', 'ghp_', 'gho_', 'ghs_']))
    if kind == 'github_fine':
        return 'github_pat_11' + c.s(UPPER + DIG, 20) + '_' + c.b62(59)
    if kind == 'gitlab':
        return 'glpat-' + c.s(TOK_CHARS, 20)
    if kind == 'slack_bot':
        return 'xoxb-%d-%d-%s' % (c.ri(10 ** 10, 10 ** 12), c.ri(10 ** 11, 10 ** 13), c.b62(24))
    if kind == 'slack_user':
        return 'xoxp-%d-%d-%d-%s' % (c.ri(10 ** 10, 10 ** 12), c.ri(10 ** 10, 10 ** 12), c.ri(10 ** 11, 10 ** 13), c.hexs(32))
    if kind == 'stripe':
        return c.pick(['sk_live_51' + c.b62(97), 'sk_live_' + c.b62(24), 'rk_live_51' + c.b62(97)])
    if kind == 'openai':
        return c.pick(['sk-proj-' + c.s(TOK_CHARS, 74) + 'T3BlbkFJ' + c.s(TOK_CHARS, 74), 'sk-' + c.b62(20) + 'T3BlbkFJ' + c.b62(20)])
    if kind == 'anthropic':
        return 'sk-ant-api03-' + c.s(TOK_CHARS, 93) + 'AA'
    if kind == 'sendgrid':
        return 'SG.' + c.s(TOK_CHARS, 22) + '.' + c.s(TOK_CHARS, 43)
    if kind == 'npm':
        return 'npm_' + c.b62(36)
    if kind == 'hf':
        return 'hf_' + c.s(UPPER + LOWER, 34)
    if kind == 'shopify':
        return c.pick(['shpat_', 'shpss_', 'shpca_']) + c.hexs(32)
    if kind == 'digitalocean':
        return 'dop_v1_' + c.hexs(64)
    if kind == 'aws_id':
        return c.pick(['AKIA', 'AKIA', 'ASIA']) + c.s(UPPER + '234567', 16)
    if kind == 'aws_secret':
        return c.s(B62 + '/+', 40)
    if kind == 'google':
        return 'AIza' + c.s(TOK_CHARS, 35)
    if kind == 'pypi':
        return 'pypi-AgEIcHlwaS5vcmc' + c.s(TOK_CHARS, c.ri(140, 180))
    if kind == 'docker':
        return 'dckr_pat_' + c.s(TOK_CHARS, 27)
    if kind == 'vault':
        return c.pick(['hvs.' + c.b62(24), 'hvs.CAESI' + c.s(TOK_CHARS, 87)])
    if kind == 'tfc':
        return c.b62(14) + '.atlasv1.' + c.b62(67)
    if kind == 'sentry_auth':
        j = json.dumps({'iat': c.ri(1700000000, 1750000000) + 0.5, 'url': 'https://sentry.io', 'region_url': 'https://us.sentry.io', 'org': c.org()}, separators=(',', ':'))
        return 'sntrys_' + base64.b64encode(j.encode()).decode().rstrip('=') + '_' + c.s(B62 + '/+', 43)
    if kind == 'mapbox_secret':
        return 'sk.' + b64u(json.dumps({'u': c.user(), 'a': 'cl' + c.s(LOWER + DIG, 23)}, separators=(',', ':')).encode()) + '.' + c.b64(16, url=True, pad=False)
    if kind == 'posthog_personal':
        return 'phx_' + c.b62(47)
    if kind == 'telegram':
        return '%d:AA%s' % (c.ri(10 ** 9, 8 * 10 ** 9), c.s(TOK_CHARS, 33))
    if kind == 'discord':
        return b64u(str(c.ri(10 ** 17, 2 * 10 ** 18)).encode()) + '.' + c.s(TOK_CHARS, 6) + '.' + c.s(TOK_CHARS, 38)
    if kind == 'linear':
        return 'lin_api_' + c.b62(40)
    if kind == 'grafana':
        return 'glsa_' + c.b62(32) + '_' + c.hexs(8)
    if kind == 'mailgun':
        return 'key-' + c.hexs(32)
    if kind == 'newrelic':
        return 'NRAK-' + c.s(UPPER + DIG, 27)
    if kind == 'databricks':
        return 'dapi' + c.hexs(32)
    if kind == 'doppler':
        return 'dp.st.prd.' + c.b62(43)
    raise KeyError(kind)


PROVIDERS = [
    # (kind, ENV var name)
    ('github', 'GITHUB_TOKEN'), ('github_fine', 'GH_TOKEN'), ('gitlab', 'GITLAB_TOKEN'), ('slack_bot', 'SLACK_BOT_TOKEN'),
    ('slack_user', 'SLACK_USER_TOKEN'), ('stripe', 'STRIPE_SECRET_KEY'), ('openai', 'OPENAI_API_KEY'), ('anthropic', 'ANTHROPIC_API_KEY'),
    ('sendgrid', 'SENDGRID_API_KEY'), ('npm', 'NPM_TOKEN'), ('hf', 'HF_TOKEN'), ('shopify', 'SHOPIFY_ACCESS_TOKEN'),
    ('digitalocean', 'DIGITALOCEAN_TOKEN'), ('pypi', 'PYPI_TOKEN'), ('docker', 'DOCKERHUB_TOKEN'), ('vault', 'VAULT_TOKEN'),
    ('tfc', 'TFE_TOKEN'), ('sentry_auth', 'SENTRY_AUTH_TOKEN'), ('mapbox_secret', 'MAPBOX_SECRET_TOKEN'),
    ('posthog_personal', 'POSTHOG_PERSONAL_API_KEY'), ('telegram', 'TELEGRAM_BOT_TOKEN'), ('discord', 'DISCORD_BOT_TOKEN'),
    ('linear', 'LINEAR_API_KEY'), ('grafana', 'GRAFANA_SA_TOKEN'), ('mailgun', 'MAILGUN_API_KEY'), ('newrelic', 'NEW_RELIC_API_KEY'),
    ('databricks', 'DATABRICKS_TOKEN'), ('google', 'GOOGLE_MAPS_SERVER_KEY'), ('doppler', 'DOPPLER_TOKEN'),
]


def provider(c):
    return c.pick(PROVIDERS)


def conn_url(c, sch=None):
    import urllib.parse
    sch = sch or c.pick(['postgres', 'postgresql', 'mysql', 'mongodb+srv', 'redis', 'amqp', 'rediss'])
    pw = urllib.parse.quote(c.pick([c.human_password(), c.gen_password(c.ri(16, 32)), c.b62(c.ri(20, 32))]), safe='')
    u = c.proj().replace('-', '_')
    if sch.startswith('redis'):
        return '%s://default:%s@%s:6379/0' % (sch, pw, c.pick(['cache.internal', 'redis-%d.c%d.eu-west-1-1.ec2.cloud.redislabs.com' % (c.ri(10000, 19999), c.ri(100, 999))]))
    if sch == 'mongodb+srv':
        return 'mongodb+srv://%s:%s@cluster0.%s.mongodb.net/%s?retryWrites=true&w=majority' % (u, pw, c.s(LOWER + DIG, 5), u)
    if sch == 'amqp':
        return 'amqp://%s:%s@rabbitmq.internal:5672/%s' % (u, pw, c.pick(['%2F', u]))
    port = 5432 if sch.startswith('postgres') else 3306
    return '%s://%s:%s@%s:%d/%s' % (sch, u, pw, c.pick(['db.internal', '%s.c%s.eu-west-1.rds.amazonaws.com' % (c.proj(), c.s(LOWER + DIG, 12)), 'localhost']), port, u)


def idx_of(lines, sub):
    hits = [i for i, l in enumerate(lines) if sub in l]
    assert len(hits) == 1, (sub, hits)
    return hits[0]


def insert_at(lines, idx, line):
    lines = list(lines)
    lines.insert(idx, line)
    return lines, idx


# ---------------- config-file positives ----------------

@pos
def p_env(c):
    kind, var = provider(c)
    t = tok(c, kind)
    p = c.proj()
    pre = ['# local overrides - not committed (hopefully)', 'APP_ENV=%s' % c.pick(['development', 'production', 'staging']),
           'APP_PORT=%d' % c.ri(3000, 9000), 'LOG_LEVEL=info', 'DATABASE_HOST=localhost', 'DATABASE_NAME=%s' % p.replace('-', '_')]
    post = ['REDIS_URL=redis://localhost:6379/0', 'FEATURE_NEW_CHECKOUT=true', 'SENTRY_ENVIRONMENT=local']
    q = c.pick(['', '"', "'"])
    lines = pre + ['%s=%s%s%s' % (var, q, t, q)] + post
    return R('env-token', '%s/.env%s' % (c.home_proj(), c.pick(['', '', '.local', '.production'])), lines, '.env with %s (%s)' % (var, kind), sec=len(pre))


@pos
def p_env_password(c):
    p = c.proj().replace('-', '_')
    pw = c.human_password() if c.chance(0.6) else c.gen_password(c.ri(16, 28))
    q = c.pick(['', '"', "'"])
    pre = ['NODE_ENV=production', 'PORT=8080', 'DB_HOST=%s' % c.pick(['db.internal', 'localhost', c.ip()]), 'DB_PORT=5432', 'DB_NAME=%s' % p, 'DB_USER=%s' % p]
    lines = pre + ['DB_PASSWORD=%s%s%s' % (q, pw.replace('$', '') if q != "'" else pw, q), 'DB_SSLMODE=require', 'CACHE_TTL=300']
    return R('env-password', '%s/.env' % c.home_proj(), lines, '.env with DB_PASSWORD literal', sec=len(pre))


@pos
def p_compose_password(c):
    pw = c.human_password() if c.chance(0.5) else c.gen_password(20)
    pw = pw.replace('$', '$$')
    lines = L('''
        services:
          db:
            image: postgres:16
            restart: unless-stopped
            environment:
              POSTGRES_USER: app
              POSTGRES_DB: app
              POSTGRES_PASSWORD: "%s"
            volumes:
              - pgdata:/var/lib/postgresql/data
          api:
            build: .
            environment:
              DATABASE_HOST: db
              DATABASE_USER: app
            depends_on: [db]
        volumes:
          pgdata: {}
        ''' % pw)
    return R('compose-password', '%s/docker-compose.yml' % c.home_proj(), lines, 'compose with literal POSTGRES_PASSWORD', sec=idx_of(lines, 'POSTGRES_PASSWORD:'), bom=False)


@pos
def p_helm_values(c):
    pw = c.gen_password(c.ri(16, 24)) if c.chance(0.6) else c.human_password()
    p = c.proj()
    lines = L('''
        replicaCount: 2
        image:
          repository: ghcr.io/%s/%s
          tag: "%s"
        postgresql:
          enabled: true
          auth:
            username: %s
            password: "%s"
            database: %s
        redis:
          auth:
            enabled: false
        resources:
          limits:
            cpu: 500m
            memory: 512Mi
        ''' % (c.org(), p, c.ver(), p.replace('-', '_'), pw, p.replace('-', '_')))
    return R('helm-password', '%s/deploy/values-prod.yaml' % c.home_proj(), lines, 'helm values with literal postgres password', sec=idx_of(lines, 'password:'), bom=False)


@pos
def p_spring_props(c):
    pw = c.human_password() if c.chance(0.5) else c.gen_password(18)
    p = c.proj().replace('-', '_')
    pre = ['spring.application.name=%s' % p, 'server.port=8080', 'spring.datasource.url=jdbc:postgresql://db.internal:5432/%s' % p,
           'spring.datasource.username=%s' % p]
    lines = pre + ['spring.datasource.password=%s' % pw, 'spring.jpa.hibernate.ddl-auto=validate', 'management.endpoints.web.exposure.include=health']
    return R('properties-password', '%s/src/main/resources/application-prod.properties' % c.home_proj(), lines, 'spring datasource password literal', sec=len(pre))


@pos
def p_appsettings(c):
    pw = c.gen_password(c.ri(16, 24)).replace(';', '')
    db = c.proj().replace('-', '')
    lines = L('''
        {
          "Logging": { "LogLevel": { "Default": "Information" } },
          "AllowedHosts": "*",
          "ConnectionStrings": {
            "Default": "Server=tcp:%s.database.windows.net,1433;Initial Catalog=%s;User ID=%sadmin;Password=%s;Encrypt=True;"
          }
        }
        ''' % (db, db, db, pw))
    return R('connstr', '%s/src/Api/appsettings.Production.json' % c.home_proj(), lines, 'SQL Server connection string with Password=', sec=4)


@pos
def p_wpconfig(c):
    pw = c.human_password() if c.chance(0.5) else c.gen_password(20)
    lines = ["<?php", "define( 'DB_NAME', 'wordpress' );", "define( 'DB_USER', 'wp_%s' );" % c.s(LOWER, 5),
             "define( 'DB_PASSWORD', '%s' );" % pw.replace("'", ''), "define( 'DB_HOST', 'localhost' );", "define( 'DB_CHARSET', 'utf8mb4' );",
             "$table_prefix = 'wp_';", "define( 'WP_DEBUG', false );", "require_once ABSPATH . 'wp-settings.php';"]
    return R('php-password', 'public_html/%s/wp-config.php' % c.domain(), lines, 'wp-config with literal DB_PASSWORD', sec=3)


@pos
def p_django_secret(c):
    key = c.s(LOWER + DIG + '!@#$%^&*(-_=+)', 50)
    lines = ['from pathlib import Path', '', 'BASE_DIR = Path(__file__).resolve().parent.parent', '',
             "SECRET_KEY = '%s'" % key, '', 'DEBUG = False', "ALLOWED_HOSTS = ['%s']" % c.domain()] + py_filler(c, c.ri(0, 4))
    return R('django-secret', '%s/%s/settings/production.py' % (c.home_proj(), c.proj().replace('-', '_')), lines, 'django SECRET_KEY literal', sec=4)


@pos
def p_k8s_secret(c):
    p = c.proj()
    pw = c.gen_password(c.ri(18, 30))
    if c.chance(0.5):
        lines = ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: %s-db' % p, 'type: Opaque', 'stringData:',
                 '  username: %s' % p.replace('-', '_'), '  password: "%s"' % pw]
        note = 'k8s Secret stringData password'
    else:
        lines = ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: %s-db' % p, 'type: Opaque', 'data:',
                 '  username: %s' % base64.b64encode(p.replace('-', '_').encode()).decode(),
                 '  password: %s' % base64.b64encode(pw.encode()).decode()]
        note = 'k8s Secret data password (base64)'
    return R('k8s-secret', '%s/k8s/secret-db.yaml' % c.home_proj(), lines, note, sec=7, bom=False)


@pos
def p_ansible_plain(c):
    pw = c.human_password()
    lines = ['---', 'app_user: %s' % c.proj().replace('-', '_'), 'app_db_host: db.%s' % c.domain(), 'app_db_password: "%s"' % pw,
             'app_port: 8080', 'app_workers: 4']
    return R('ansible-password', '%s/ansible/group_vars/production/vars.yml' % c.home_proj(), lines, 'ansible vars with plaintext password', sec=3, bom=False)


@pos
def p_tfvars(c):
    pw = c.gen_password(24)
    lines = ['region          = "eu-west-1"', 'environment     = "prod"', 'instance_class  = "db.t4g.medium"', 'db_password     = "%s"' % pw,
             'allowed_cidrs   = ["10.0.0.0/8"]']
    return R('tfvars-password', '%s/terraform/prod.tfvars' % c.home_proj(), lines, 'terraform tfvars with db_password', sec=3, bom=False)


@pos
def p_gha_hardcoded(c):
    kind, var = c.pick([('npm', 'NODE_AUTH_TOKEN'), ('docker', 'DOCKERHUB_TOKEN'), ('pypi', 'TWINE_PASSWORD'), ('slack_bot', 'SLACK_BOT_TOKEN')])
    t = tok(c, kind)
    lines = L('''
        name: publish
        on:
          push:
            tags: ['v*']
        jobs:
          publish:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
              - run: make release
                env:
                  %s: %s
        ''' % (var, t))
    return R('ci-token', '%s/.github/workflows/publish.yml' % c.home_proj(), lines, 'workflow with hardcoded %s' % kind, sec=11, bom=False)


@pos
def p_kubeconfig_clientkey(c):
    k = c.ec_key()
    kd = base64.b64encode(priv_pem(k, 'trad')).decode()
    ca = c.ed_key()
    cad = base64.b64encode(make_cert(c, ca, 'kubernetes', ca=True)).decode()
    lines = ['apiVersion: v1', 'clusters:', '- cluster:', '    certificate-authority-data: %s' % cad, '    server: https://%s:6443' % c.ip(),
             '  name: kind-%s' % c.proj(), 'contexts:', '- context:', '    cluster: kind-%s' % c.proj(), '    user: admin', '  name: default',
             'current-context: default', 'kind: Config', 'users:', '- name: admin', '  user:',
             '    client-certificate-data: %s' % base64.b64encode(make_cert(c, c.ed_key(), 'admin', issuer_key=ca, issuer_cn='kubernetes')).decode(),
             '    client-key-data: %s' % kd]
    return R('kubeconfig-key', '.kube/config', lines, 'kubeconfig with client-key-data (base64 EC private key)', sec=17, bom=False)


@pos
def p_docker_config_auth(c):
    u = c.user()
    secret = c.pick([tok(c, 'docker'), c.human_password(), tok(c, 'github')])
    auth = base64.b64encode(('%s:%s' % (u, secret)).encode()).decode()
    lines = ['{', '\t"auths": {', '\t\t"https://index.docker.io/v1/": {', '\t\t\t"auth": "%s"' % auth, '\t\t}', '\t}', '}']
    return R('docker-auth', '.docker/config.json', lines, 'docker config.json with base64 user:secret auth', sec=3, bom=False)


@pos
def p_npmrc(c):
    t = tok(c, 'npm')
    lines = ['registry=https://registry.npmjs.org/', '//registry.npmjs.org/:_authToken=%s' % t, 'save-exact=true']
    return R('npmrc-token', c.pick(['.npmrc', '%s/.npmrc' % c.home_proj()]), lines, '.npmrc with literal npm_ token', sec=1, bom=False)


@pos
def p_pypirc(c):
    t = tok(c, 'pypi')
    lines = ['[distutils]', 'index-servers =', '    pypi', '', '[pypi]', 'username = __token__', 'password = %s' % t]
    return R('pypirc-token', '.pypirc', lines, '.pypirc with pypi- token', sec=6, bom=False)


@pos
def p_maven(c):
    pw = c.human_password()
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<settings>', '  <servers>', '    <server>', '      <id>%s-nexus</id>' % c.org(),
             '      <username>%s</username>' % c.user(), '      <password>%s</password>' % pw.replace('&', '&amp;').replace('<', ''), '    </server>',
             '  </servers>', '</settings>']
    return R('maven-password', '.m2/settings.xml', lines, 'maven settings with literal password', sec=6)


@pos
def p_netrc(c):
    kind = c.pick(['github', 'password', 'heroku'])
    if kind == 'github':
        lines = ['machine github.com', '  login %s' % c.user(), '  password %s' % tok(c, 'github')]
    elif kind == 'heroku':
        lines = ['machine api.heroku.com', '  login %s' % c.email(), '  password %s' % str(uuid.UUID(int=c.r.getrandbits(128), version=4)),
                 'machine git.heroku.com', '  login %s' % c.email(), '  password %s' % 'see-above']
        lines = lines[:3]
    else:
        lines = ['machine ftp.%s' % c.domain(), '  login %s' % c.user(), '  password %s' % c.human_password()]
    return R('netrc', '.netrc', lines, '.netrc with %s password' % kind, sec=2, bom=False, eol='lf')


@pos
def p_pgpass(c):
    lines = ['# host:port:db:user:password', 'localhost:5432:*:postgres:%s' % c.human_password().replace(':', '')]
    if c.chance(0.5):
        lines = ['# host:port:db:user:password', 'db.internal:5432:%s:%s:%s' % (c.proj().replace('-', '_'), c.user(), c.gen_password(20).replace(':', ''))]
    return R('pgpass', '.pgpass', lines, '.pgpass entry with password', sec=1, bom=False, eol='lf')


@pos
def p_git_credentials(c):
    t = c.pick([tok(c, 'github'), tok(c, 'gitlab'), tok(c, 'github_fine')])
    host = 'gitlab.com' if t.startswith('glpat') else 'github.com'
    lines = ['https://%s:%s@%s' % (c.user(), t, host)]
    return R('git-credentials', '.git-credentials', lines, '.git-credentials with token', sec=0, bom=False, eol='lf')


@pos
def p_pip_conf(c):
    pw = c.gen_password(20).replace('@', '').replace(':', '').replace('/', '').replace('#', '').replace('?', '')
    lines = ['[global]', 'timeout = 60', 'index-url = https://%s:%s@pypi.%s/simple/' % (c.user(), pw, c.domain()), 'trusted-host = pypi.%s' % c.domain()]
    return R('pip-conf', '.config/pip/pip.conf', lines, 'pip.conf index-url with credentials', sec=2, bom=False)


@pos
def p_aws_credentials(c):
    lines = ['[default]', 'aws_access_key_id = %s' % tok(c, 'aws_id'), 'aws_secret_access_key = %s' % tok(c, 'aws_secret'), 'region = eu-west-1']
    return R('aws-key', '.aws/credentials', lines, 'aws credentials file', sec=2, bom=False)


@pos
def p_mysql_cnf(c):
    lines = ['[client]', 'user=%s' % c.pick(['root', 'backup', c.user()]), 'password="%s"' % c.human_password(), 'host=127.0.0.1', '', '[mysqldump]', 'single-transaction']
    return R('mysql-password', c.pick(['.my.cnf', 'etc/mysql/backup.cnf']), lines, 'mysql option file with password', sec=2, bom=False)


@pos
def p_redis_requirepass(c):
    pre = ['bind 0.0.0.0', 'protected-mode yes', 'port 6379', 'timeout 0', '']
    lines = pre + ['requirepass %s' % c.b62(c.ri(24, 40)), 'maxmemory 1gb', 'maxmemory-policy allkeys-lru', 'appendonly yes']
    return R('redis-password', 'etc/redis/redis.conf', lines, 'redis.conf with requirepass', sec=len(pre), bom=False)


@pos
def p_wifi_psk(c):
    ssid = c.pick(['CorpNet', 'HomeBase-5G', c.org().upper(), 'Office-2G'])
    pw = c.human_password()
    if c.chance(0.5):
        lines = ['[connection]', 'id=%s' % ssid, 'uuid=%s' % c.uuid4(), 'type=wifi', '', '[wifi]', 'mode=infrastructure', 'ssid=%s' % ssid, '',
                 '[wifi-security]', 'key-mgmt=wpa-psk', 'psk=%s' % pw, '', '[ipv4]', 'method=auto']
        return R('wifi-psk', 'etc/NetworkManager/system-connections/%s.nmconnection' % ssid, lines, 'NM wifi with psk', sec=11, bom=False)
    lines = ['ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev', 'update_config=1', 'country=DE', '', 'network={',
             '    ssid="%s"' % ssid, '    psk="%s"' % pw, '    key_mgmt=WPA-PSK', '}']
    return R('wifi-psk', 'etc/wpa_supplicant/wpa_supplicant.conf', lines, 'wpa_supplicant with psk passphrase', sec=6, bom=False)


@pos
def p_wireguard(c):
    k = c.x_key()
    lines = ['[Interface]', 'Address = 10.8.0.%d/24' % c.ri(2, 200), 'PrivateKey = %s' % base64.b64encode(raw_priv(k)).decode(), 'DNS = 1.1.1.1', '',
             '[Peer]', 'PublicKey = %s' % base64.b64encode(raw_pub(c.x_key())).decode(), 'AllowedIPs = 0.0.0.0/0', 'Endpoint = vpn.%s:51820' % c.domain(),
             'PersistentKeepalive = 25']
    return R('wireguard-key', 'etc/wireguard/wg0.conf', lines, 'wireguard config with PrivateKey', sec=2, bom=False)


@pos
def p_cisco_plain(c):
    host = 'edge-%s-%02d' % (c.pick(['ams', 'fra']), c.ri(1, 9))
    lines = ['!', 'hostname %s' % host, '!', 'enable secret 9 $9$%s$%s' % (c.s(CRYPT64, 14), c.s(CRYPT64, 43)), '!']
    idx = len(lines)
    lines += ['username %s privilege 15 password 0 %s' % (c.user(), c.human_password().replace(' ', '')), '!', 'ip ssh version 2', '!', 'line vty 0 4',
              ' login local', ' transport input ssh', '!', 'end']
    return R('network-password', 'netops/configs/%s.cfg' % host, lines, 'cisco config with type 0 plaintext password', sec=idx)


@pos
def p_rails_master_key(c):
    return R('rails-master-key', '%s/config/master.key' % c.home_proj(), [c.hexs(32)], 'rails master.key', sec=0, bom=False)


@pos
def p_azure_storage(c):
    acct = c.s(LOWER + DIG, c.ri(8, 16))
    cs = 'DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net' % (acct, c.b64(64))
    lines = ['{', '  "IsEncrypted": false,', '  "Values": {', '    "AzureWebJobsStorage": "%s",' % cs, '    "FUNCTIONS_WORKER_RUNTIME": "dotnet-isolated"', '  }', '}']
    return R('azure-storage', '%s/src/Functions/local.settings.json' % c.home_proj(), lines, 'azure storage connection string with AccountKey', sec=3)


@pos
def p_gcp_sa(c):
    k = c.rsa_key(2048)
    proj = '%s-%d' % (c.proj(), c.ri(100000, 999999))
    doc = {'type': 'service_account', 'project_id': proj, 'private_key_id': c.hexs(40), 'private_key': priv_pem(k).decode(),
           'client_email': '%s@%s.iam.gserviceaccount.com' % (c.pick(['deployer', 'ci', 'terraform']), proj), 'client_id': str(c.ri(10 ** 20, 10 ** 21)),
           'auth_uri': 'https://accounts.google.com/o/oauth2/auth', 'token_uri': 'https://oauth2.googleapis.com/token',
           'auth_provider_x509_cert_url': 'https://www.googleapis.com/oauth2/v1/certs', 'universe_domain': 'googleapis.com'}
    lines = json.dumps(doc, indent=2).split('\n')
    idx = [i for i, l in enumerate(lines) if '"private_key"' in l][0]
    return R('gcp-sa-key', 'Downloads/%s-%s.json' % (proj, c.hexs(12)), lines, 'GCP service account JSON key', sec=idx, bom=False)


# ---------------- private keys ----------------

@pos
def p_rsa_pem(c):
    k = c.rsa_key(2048)
    lines = pem_lines(priv_pem(k, 'trad'))
    return R('private-key', c.pick(['.ssh/id_rsa', 'deploy/keys/deploy_rsa', '%s/certs/legacy.key' % c.home_proj()]), lines,
             'RSA PRIVATE KEY (PKCS#1)', sec=0, bom=False, eol='lf')


@pos
def p_openssh(c):
    k = c.ed_key()
    lines = openssh_private_ed25519(c, k, '%s@%s' % (c.user(), c.pick(['laptop', 'ci', 'build-01'])))
    return R('private-key', c.pick(['.ssh/id_ed25519', '.ssh/deploy_%s' % c.proj().replace('-', '_'), '%s/.ci/deploy_key' % c.home_proj()]), lines,
             'OPENSSH PRIVATE KEY (ed25519)', sec=0, bom=False, eol='lf')


@pos
def p_pkcs8_tls(c):
    k = c.rsa_key(2048) if c.chance(0.4) else c.ec_key(c.pick([ec.SECP256R1(), ec.SECP384R1()]))
    d = c.domain()
    if c.chance(0.5):
        # key in a combined pem after the (public) cert
        ca = c.ed_key()
        cert = pem_lines(make_cert(c, c.ed_key(), d, issuer_key=ca, issuer_cn='%s CA' % c.org()))
        lines = cert + pem_lines(priv_pem(k))
        return R('private-key', 'etc/haproxy/certs/%s.pem' % d, lines, 'cert + PKCS#8 PRIVATE KEY combined pem', sec=len(cert), bom=False)
    return R('private-key', 'etc/ssl/private/%s.key' % d, pem_lines(priv_pem(k)), 'PKCS#8 PRIVATE KEY', sec=0, bom=False)


@pos
def p_ec_sec1(c):
    k = c.ec_key()
    lines = pem_lines(priv_pem(k, 'trad'))
    return R('private-key', '%s/config/jwt_signing.pem' % c.home_proj(), lines, 'EC PRIVATE KEY (SEC1)', sec=0, bom=False)


@pos
def p_pgp_private(c):
    blk, fpr = pgp_key_block(c, c.fullname(), c.email(), secret=True)
    return R('private-key', c.pick(['Documents/backup/secret-key.asc', '%s/ci/signing-key.asc' % c.home_proj()]), blk,
             'PGP PRIVATE KEY BLOCK (unprotected)', sec=0, bom=False)


@pos
def p_putty(c):
    k = c.ed_key()
    pubblob = base64.b64encode(sshstr('ssh-ed25519') + sshstr(raw_pub(k))).decode()
    privblob = base64.b64encode(sshstr(raw_priv(k))).decode()
    lines = ['PuTTY-User-Key-File-3: ssh-ed25519', 'Encryption: none', 'Comment: %s@%s' % (c.user(), c.pick(['win-laptop', 'jumpbox'])),
             'Public-Lines: 2', pubblob[:64], pubblob[64:], 'Private-Lines: 1', privblob, 'Private-MAC: %s' % c.hexs(64)]
    return R('private-key', 'Documents/keys/%s.ppk' % c.user(), lines, 'PuTTY ppk unencrypted', sec=0, eol='crlf', bom=False)


@pos
def p_age_identity(c):
    k = c.x_key()
    lines = ['# created: %s' % c.dt().isoformat() + '+01:00', '# public key: %s' % bech32('age', raw_pub(k)),
             bech32('age-secret-key-', raw_priv(k)).upper()]
    return R('private-key', '.config/sops/age/keys.txt', lines, 'age identity AGE-SECRET-KEY-1', sec=2, bom=False)


# ---------------- secrets inside code / docs / logs / histories ----------------

@pos
def p_py_code(c):
    kind = c.pick(['openai', 'anthropic', 'stripe', 'sendgrid', 'hf', 'slack_bot'])
    t = tok(c, kind)
    imp = {'openai': ('from openai import OpenAI', 'client = OpenAI(api_key="%s")' % t),
           'anthropic': ('import anthropic', 'client = anthropic.Anthropic(api_key="%s")' % t),
           'stripe': ('import stripe', 'stripe.api_key = "%s"' % t),
           'sendgrid': ('from sendgrid import SendGridAPIClient', 'sg = SendGridAPIClient("%s")' % t),
           'hf': ('from huggingface_hub import login', 'login(token="%s")' % t),
           'slack_bot': ('from slack_sdk import WebClient', 'client = WebClient(token="%s")' % t)}[kind]
    lines = ['#!/usr/bin/env python3', '"""quick script, TODO move key to env"""', 'import os', 'import sys', imp[0], '', imp[1], ''] + py_filler(c, c.ri(1, 8)) + \
            ['', '', 'if __name__ == "__main__":', '    sys.exit(0)']
    return R('code-token', '%s/scripts/%s.py' % (c.home_proj(), c.pick(['sync', 'backfill', 'notify', 'summarize'])), lines, 'python script with hardcoded %s key' % kind, sec=6)


@pos
def p_go_code(c):
    kind = c.pick(['github', 'slack_webhook', 'gitlab', 'digitalocean'])
    if kind == 'slack_webhook':
        v = 'https://hooks.slack.com/services/T%s/B%s/%s' % (c.s(UPPER + DIG, 8), c.s(UPPER + DIG, 10), c.b62(24))
        decl = '\tslackWebhook = "%s"' % v
    else:
        decl = '\tapiToken = "%s"' % tok(c, kind)
    lines = ['package notify', '', 'import (', '\t"bytes"', '\t"net/http"', '\t"strings"', ')', '', 'const (', decl, '\ttimeoutSeconds = 10', ')'] + go_filler(c, c.ri(1, 6))
    return R('code-token', '%s/internal/notify/client.go' % c.home_proj(), lines, 'go const with %s' % kind, sec=9, bom=False)


@pos
def p_js_code(c):
    kind = c.pick(['sendgrid', 'stripe', 'mailgun', 'telegram', 'discord', 'linear'])
    t = tok(c, kind)
    lines = ["'use strict';", "const axios = require('axios');", '', "const API_KEY = '%s';" % t, '',
             'module.exports = async function send(payload) {', "  return axios.post(process.env.API_URL, payload, { headers: { Authorization: `Bearer ${API_KEY}` } });", '};']
    return R('code-token', '%s/src/lib/%s.js' % (c.home_proj(), kind), lines, 'JS module with hardcoded %s token' % kind, sec=3)


@pos
def p_test_live_key(c):
    kind = c.pick(['stripe', 'github', 'openai', 'aws'])
    if kind == 'aws':
        line = '    client = boto3.client("s3", aws_access_key_id="%s", aws_secret_access_key="%s")' % (tok(c, 'aws_id'), tok(c, 'aws_secret'))
    else:
        line = '    client = make_client(token="%s")' % tok(c, kind)
    lines = ['import pytest', '', '', '@pytest.mark.integration', 'def test_live_roundtrip():', line, '    resp = client.ping()', '    assert resp.ok']
    return R('code-token', '%s/tests/integration/test_live.py' % c.home_proj(), lines, 'integration test with live %s credential' % kind, sec=5)


@pos
def p_bash_history(c):
    p = c.proj()
    u = c.user()
    hist = [c.pick(SAFE_HIST).format(p=p, u=u) for _ in range(c.ri(60, 250))]
    leak = c.pick([
        lambda: "mysql -u root -p'%s' -h db.internal" % c.human_password().replace("'", ''),
        lambda: 'export GITHUB_TOKEN=%s' % tok(c, 'github'),
        lambda: 'curl -u admin:%s https://jenkins.%s/api/json' % (c.human_password().replace(' ', ''), c.domain()),
        lambda: 'docker login -u %s -p %s' % (u, tok(c, 'docker')),
        lambda: 'psql "%s"' % conn_url(c, 'postgres'),
        lambda: 'export OPENAI_API_KEY=%s' % tok(c, 'openai'),
        lambda: 'vault login %s' % tok(c, 'vault'),
        lambda: 'sshpass -p \'%s\' ssh %s@%s' % (c.human_password().replace("'", ''), u, c.ip()),
    ])()
    idx = c.ri(5, len(hist) - 5)
    hist.insert(idx, leak)
    return R('shell-history', '.bash_history', hist, 'bash history with one leaked credential', sec=idx, bom=False, eol='lf')


@pos
def p_zsh_history(c):
    p = c.proj()
    u = c.user()
    t = int(c.dt().timestamp())
    lines = []
    for i in range(c.ri(60, 200)):
        t += c.ri(2, 600)
        lines.append(': %d:%d;%s' % (t, c.ri(0, 30), c.pick(SAFE_HIST).format(p=p, u=u)))
    kind, var = provider(c)
    idx = c.ri(5, len(lines) - 5)
    lines.insert(idx, ': %d:0;export %s=%s' % (t - c.ri(1000, 90000), var, tok(c, kind)))
    return R('shell-history', '.zsh_history', lines, 'zsh history with export %s' % var, sec=idx, bom=False, eol='lf')


@pos
def p_app_log_leak(c):
    base = c.dt()
    svc = c.proj()
    lines = []
    for i in range(c.ri(100, 250)):
        ev = {'ts': _ts(c, base, i).isoformat() + 'Z', 'level': 'info', 'service': svc, 'trace_id': c.hexs(32), 'request_id': c.uuid4(),
              'msg': c.pick(['http request', 'cache miss', 'job done']), 'status': c.pick([200, 200, 404]), 'authorization': '[REDACTED]'}
        lines.append(json.dumps(ev, separators=(',', ':')))
    kind = c.pick(['bearer', 'dburl', 'stripe'])
    if kind == 'bearer':
        ev = {'ts': base.isoformat() + 'Z', 'level': 'debug', 'service': svc, 'msg': 'outgoing request',
              'headers': {'Authorization': 'Bearer %s' % tok(c, c.pick(['github', 'openai', 'slack_bot', 'gitlab'])), 'Accept': 'application/json'}}
    elif kind == 'dburl':
        ev = {'ts': base.isoformat() + 'Z', 'level': 'error', 'service': svc, 'msg': 'db connect failed', 'dsn': conn_url(c), 'err': 'timeout'}
    else:
        ev = {'ts': base.isoformat() + 'Z', 'level': 'debug', 'service': svc, 'msg': 'stripe client init', 'api_key': tok(c, 'stripe')}
    idx = c.ri(10, len(lines) - 10)
    lines.insert(idx, json.dumps(ev, separators=(',', ':')))
    return R('log-leak', 'logs/%s/%s.jsonl' % (svc, svc), lines, 'json log with one unredacted %s' % kind, sec=idx, bom=False, eol='lf')


@pos
def p_readme_leak(c):
    kind, var = provider(c)
    t = tok(c, kind)
    lines = ['# %s' % c.proj(), '', 'Internal tool.', '', '## Setup', '', '```bash', 'export %s=%s' % (var, t), 'make run', '```', '',
             'Ask #platform if the token stops working.']
    return R('docs-leak', '%s/README.md' % c.home_proj(), lines, 'README with a real %s pasted' % kind, sec=7)


@pos
def p_notes_password(c):
    pw = c.human_password()
    lines = ['# handover %s' % c.dt().strftime('%Y-%m-%d'), '', '- rotate the staging db password next sprint', '- grafana admin moved to SSO',
             '- prod db: %s / %s' % (c.proj().replace('-', '_'), pw), '- bastion: ssh %s@bastion.%s (key in 1Password)' % (c.user(), c.domain())]
    return R('notes-password', 'notes/handover.md', lines, 'notes with a real db password', sec=4)


@pos
def p_notebook(c):
    kind = c.pick(['openai', 'anthropic', 'hf'])
    t = tok(c, kind)
    src_line = 'API_KEY = "%s"\n' % t
    cells = [{'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [], 'source': ['import os\n', src_line, 'client = make_client(API_KEY)']},
             {'cell_type': 'markdown', 'metadata': {}, 'source': ['## Results']}]
    doc = {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}}, 'nbformat': 4, 'nbformat_minor': 5}
    lines = json.dumps(doc, indent=1).split('\n')
    idx = [i for i, l in enumerate(lines) if 'API_KEY = ' in l][0]
    return R('notebook-token', '%s/notebooks/experiment.ipynb' % c.home_proj(), lines, 'notebook with hardcoded %s key' % kind, sec=idx, bom=False)


@pos
def p_minified_leak(c):
    kind = c.pick(['stripe', 'aws_secret', 'sendgrid', 'openai'])
    parts = []
    for i in range(c.ri(80, 200)):
        a, b = c.s(LOWER, 2), c.s(LOWER, 1)
        parts.append('function %s(%s){return %s&&%s.__esModule?%s:{default:%s}}' % (a, b, b, b, b, b))
    head = ''.join(parts)
    if kind == 'aws_secret':
        leak = 'var Kq={accessKeyId:"%s",secretAccessKey:"%s",region:"us-east-1"};' % (tok(c, 'aws_id'), tok(c, 'aws_secret'))
    else:
        leak = 'const Xe="%s";' % tok(c, kind)
    lines = ['/*! app v%s */' % c.ver(), head[:4000], head[4000:] + leak + 'export{Xe as k};']
    return R('bundle-leak', '%s/dist/assets/index-%s.js' % (c.home_proj(), c.b62(8)), lines, 'minified bundle with embedded %s' % kind, sec=2, bom=False, eol='lf')


@pos
def p_curl_jwt(c):
    payload = {'sub': str(c.ri(1, 99999)), 'scope': 'admin', 'iat': c.ri(1700000000, 1750000000), 'exp': c.ri(1760000000, 1900000000),
               'iss': 'https://auth.%s' % c.domain()}
    t = jwt(c, payload)
    lines = ['#!/bin/sh', '# reindex all tenants', 'for t in $(cat tenants.txt); do',
             '  curl -sf -X POST "https://api.%s/admin/tenants/$t/reindex" \\' % c.domain(), '    -H "Authorization: Bearer %s"' % t, 'done']
    return R('script-jwt', '%s/scripts/reindex.sh' % c.home_proj(), lines, 'script with long-lived admin JWT', sec=4, bom=False, eol='lf')


@pos
def p_vault_script(c):
    t = tok(c, 'vault')
    lines = ['#!/usr/bin/env bash', 'set -e', 'export VAULT_ADDR=https://vault.%s:8200' % c.domain(), 'export VAULT_TOKEN=%s' % t,
             'vault kv get -format=json secret/%s/app > /tmp/app.json' % c.proj()]
    return R('script-token', '%s/scripts/pull-secrets.sh' % c.home_proj(), lines, 'script exporting VAULT_TOKEN hvs.', sec=3, bom=False, eol='lf')


@pos
def p_bot_config(c):
    kind = c.pick(['telegram', 'discord'])
    t = tok(c, kind)
    lines = ['[bot]', 'name = %s-bot' % c.proj(), 'token = "%s"' % t, 'prefix = "!"', '', '[logging]', 'level = "info"']
    return R('bot-token', '%s/config.toml' % c.home_proj(), lines, '%s bot token in config.toml' % kind, sec=2, bom=False)


@pos
def p_sentryclirc(c):
    lines = ['[defaults]', 'org = %s' % c.org(), 'project = %s' % c.proj(), '', '[auth]', 'token=%s' % tok(c, 'sentry_auth')]
    return R('sentry-auth', '%s/.sentryclirc' % c.home_proj(), lines, 'sentry-cli auth token sntrys_', sec=5, bom=False)


@pos
def p_datadog_yaml(c):
    lines = ['## datadog-agent config', 'site: datadoghq.eu', 'api_key: %s' % c.hexs(32), 'hostname: %s' % c.pick(['web1', 'db1', 'worker3']),
             'logs_enabled: true', 'apm_config:', '  enabled: true']
    return R('datadog-key', 'etc/datadog-agent/datadog.yaml', lines, 'datadog agent api_key (32 hex)', sec=2, bom=False)


@pos
def p_algolia_admin(c):
    lines = ["const algoliasearch = require('algoliasearch');", '', '// indexer (server side)',
             "const client = algoliasearch('%s', '%s'); // admin API key" % (c.s(UPPER + DIG, 10), c.hexs(32)),
             "const index = client.initIndex('prod_products');"]
    return R('algolia-admin', '%s/indexer/index.js' % c.home_proj(), lines, 'algolia admin key (32 hex) in indexer', sec=3)


@pos
def p_mapbox_secret(c):
    lines = ['# upload tiles', 'export MAPBOX_ACCESS_TOKEN=%s' % tok(c, 'mapbox_secret'), 'tilesets upload-source %s %s data.geojson' % (c.user(), c.pick(WORDS))]
    return R('mapbox-secret', '%s/scripts/upload-tiles.sh' % c.home_proj(), lines, 'mapbox secret sk. token', sec=1, bom=False, eol='lf')


@pos
def p_google_server(c):
    lines = ['import googlemaps', '', '# server-side geocoding', 'gmaps = googlemaps.Client(key="%s")' % tok(c, 'google'), '',
             'def geocode(addr):', '    return gmaps.geocode(addr)']
    return R('google-key', '%s/app/geo.py' % c.home_proj(), lines, 'google maps server key (AIza) in backend code', sec=3)


@pos
def p_conn_string_yaml(c):
    lines = ['app:', '  name: %s' % c.proj(), '  port: 8080', 'database:', '  url: "%s"' % conn_url(c), '  pool: 10', 'cache:', '  ttl: 300']
    return R('connstr', '%s/config/production.yaml' % c.home_proj(), lines, 'yaml with connection URL containing password', sec=4, bom=False)


@pos
def p_sql_create_user(c):
    role = c.proj().replace('-', '_')
    pw = c.gen_password(20).replace("'", '')
    lines = ['-- create app role', "CREATE ROLE %s_app LOGIN PASSWORD '%s';" % (role, pw), 'GRANT CONNECT ON DATABASE %s TO %s_app;' % (role, role)]
    return R('sql-password', '%s/db/migrations/002_roles.sql' % c.home_proj(), lines, 'SQL migration with literal role password', sec=1)


@pos
def p_slack_webhook_ci(c):
    url = 'https://hooks.slack.com/services/T%s/B%s/%s' % (c.s(UPPER + DIG, 8), c.s(UPPER + DIG, 10), c.b62(24))
    lines = ['#!/bin/sh', 'MSG="deploy of $1 finished"', "curl -s -X POST -H 'Content-type: application/json' --data \"{\\\"text\\\":\\\"$MSG\\\"}\" %s" % url]
    return R('webhook-url', '%s/ci/notify.sh' % c.home_proj(), lines, 'slack incoming webhook URL', sec=2, bom=False, eol='lf')


@pos
def p_twilio(c):
    lines = ['TWILIO_ACCOUNT_SID=AC%s' % c.hexs(32), 'TWILIO_AUTH_TOKEN=%s' % c.hexs(32), 'TWILIO_FROM=+1%d' % c.ri(2000000000, 9999999999)]
    return R('twilio', '%s/.env' % c.home_proj(), lines, 'twilio sid + auth token', sec=1)


# ======================================================================
# driver
# ======================================================================

N_NEG = 300
N_POS = 100


def schedule(c, gens, n):
    """each generator used ~equally often, in shuffled order"""
    out = []
    while len(out) < n:
        g = list(gens)
        c.r.shuffle(g)
        out += g
    return out[:n]


def render(c, d):
    eol = d.get('eol')
    if eol is None:
        eol = 'crlf' if c.chance(0.12) else 'lf'
    bom = d.get('bom')
    if bom is None:
        bom = c.chance(0.05)
    indent_tabs = False
    sep = '\r\n' if eol == 'crlf' else '\n'
    lines = d['lines']
    for l in lines:
        assert '\n' not in l and '\r' not in l, (d['path'], l[:80])
    text = sep.join(lines) + (sep if not d.get('no_final_eol') else '')
    data = text.encode('utf-8')
    if bom:
        data = b'\xef\xbb\xbf' + data
    return data


def main():
    seed = int(sys.argv[1])
    c = Ctx(seed)
    od = os.path.join(HERE, 'out_%d' % seed)
    if os.path.exists(od):
        shutil.rmtree(od)
    manifest = []
    secrets = {}
    for kind, gens, n in (('neg', NEG, N_NEG), ('pos', POS, N_POS)):
        for i, g in enumerate(schedule(c, gens, n)):
            d = g(c)
            if kind == 'pos' and c.chance(0.25) and d['family'] not in ('private-key',) and len(d['lines']) < 60 and d.get('pad', True):
                pass
            rel = '%s/h%03d/%s' % (kind, i + 1, d['path'])
            data = render(c, d)
            full = os.path.join(od, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'wb') as f:
                f.write(data)
            manifest.append({'file': rel, 'kind': kind, 'family': d['family'], 'note': d['note']})
            if kind == 'pos':
                secrets[rel] = {'line': d['sec'] + 1, 'text': d['lines'][d['sec']]}
    with open(os.path.join(od, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1, sort_keys=False)
        f.write('\n')
    with open(os.path.join(od, 'secrets.json'), 'w') as f:
        json.dump(secrets, f, indent=1, sort_keys=True)
        f.write('\n')
    print('wrote %s: %d neg, %d pos (%d neg families, %d pos families)' % (od, N_NEG, N_POS, len(NEG), len(POS)))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Blind acceptance-corpus generator for a home-directory secret scanner.

usage: python3 gen.py SEED   -> out_SEED/{pos,neg}/hNNN/..., manifest.json, secrets.json
All randomness comes from random.Random(SEED)."""
import sys, os, json, random, string, base64, hashlib, hmac, struct, zlib, shutil, urllib.parse

from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519
from cryptography.hazmat.primitives import serialization, hashes
from cryptography.hazmat.primitives.asymmetric import padding as apad
from cryptography import x509
from cryptography.x509.oid import NameOID
import datetime

R = random.Random(0)
S = '\x01'          # marker put on the secret line; stripped before writing

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DI = string.digits
AN = UP + LO + DI
HEX = '0123456789abcdef'
B64 = AN + '+/'
B64U = AN + '-_'
B32 = UP + '234567'
B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'


def rs(n, alpha=AN):
    return ''.join(R.choice(alpha) for _ in range(n))


def rb(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def ch(seq):
    return R.choice(seq)


def b64(b):
    return base64.b64encode(b).decode()


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip('=')


def wrap(s, n=64):
    return '\n'.join(s[i:i + n] for i in range(0, len(s), n))


# ---------------------------------------------------------------- word lists (made up here)
FIRST = ['anna', 'bram', 'chloe', 'dmitri', 'elif', 'farid', 'greta', 'hiro', 'ines', 'jonas', 'kasia', 'lukas',
         'mira', 'noor', 'oskar', 'pia', 'quentin', 'rosa', 'sven', 'tomas', 'uma', 'vera', 'wen', 'yusuf', 'zoe']
LAST = ['berg', 'costa', 'dahl', 'eriksen', 'fischer', 'garcia', 'haas', 'ivanova', 'jansen', 'kowalski', 'lindqvist',
        'moreau', 'novak', 'okafor', 'petrov', 'rossi', 'sato', 'tanaka', 'varga', 'weber', 'yilmaz', 'zhang']
ORG = ['acme', 'northwind', 'bluepeak', 'riverstone', 'kelpie', 'orchard', 'lumen', 'quarry', 'fennec', 'tidewater',
       'copperleaf', 'halcyon', 'marlin', 'saffron', 'vantage', 'zephyr']
TLD = ['com', 'io', 'net', 'org', 'de', 'fr', 'co.uk', 'nl', 'dev', 'cloud']
WORDS = ['amber', 'basil', 'cactus', 'dolphin', 'ember', 'falcon', 'garnet', 'harbor', 'iris', 'juniper', 'kettle',
         'lantern', 'meadow', 'nectar', 'otter', 'pepper', 'quartz', 'raven', 'saddle', 'thistle', 'umber', 'velvet',
         'walnut', 'yonder', 'zinnia', 'biscuit', 'copper', 'drizzle', 'fjord', 'glacier', 'hazel', 'igloo', 'jigsaw',
         'kumquat', 'lobster', 'marble', 'noodle', 'orbit', 'pickle', 'rhubarb', 'sprocket', 'tundra', 'wombat']
CAPWORDS = ['Sunflower', 'Marmalade', 'Bluebird', 'Highland', 'Gingerbread', 'Waterfall', 'Porcupine', 'Starlight',
            'Thunder', 'Tangerine', 'Moonbeam', 'Pinecone', 'Riverside', 'Snowdrop', 'Lighthouse', 'Cinnamon']
PETS = ['bella', 'max', 'luna', 'charlie', 'milo', 'rocky', 'nala', 'simba', 'coco', 'teddy', 'pippa', 'ziggy']
# a handful of words that are in the BIP-39 English list (typed from memory, not a copied file)
BIPW = ['abandon', 'ability', 'able', 'about', 'above', 'absent', 'absorb', 'abstract', 'absurd', 'abuse', 'access',
        'accident', 'account', 'accuse', 'achieve', 'acid', 'acoustic', 'acquire', 'across', 'act', 'action', 'actor',
        'actual', 'adapt', 'add', 'addict', 'address', 'adjust', 'admit', 'adult', 'advance', 'advice', 'aerobic',
        'affair', 'afford', 'afraid', 'again', 'agent', 'agree', 'ahead', 'aim', 'air', 'airport', 'aisle', 'alarm',
        'album', 'alcohol', 'alert', 'alien', 'all', 'alley', 'allow', 'almost', 'alone', 'alpha', 'already', 'also',
        'zebra', 'zero', 'zone', 'zoo', 'youth', 'wrist', 'wagon', 'vivid', 'velvet', 'umbrella', 'tunnel', 'tomato',
        'swamp', 'spoon', 'rocket', 'pulse', 'orbit', 'noble', 'museum', 'lizard', 'kitten', 'jungle', 'island']


def user():
    return ch(FIRST) + ch(['', '.', '_', '']) + ch(LAST)


def domain():
    return ch(ORG) + ch(['', '-labs', '-corp', 'hq', '-it']) + '.' + ch(TLD)


def host():
    return ch(['db', 'mail', 'git', 'ci', 'nas', 'vpn', 'api', 'build', 'media', 'files']) + ch(['', '1', '2', '-prod', '-int']) + '.' + domain()


def email():
    return user() + '@' + domain()


# ---------------------------------------------------------------- passwords
def pw_random(n=None, alpha=None):
    n = n or R.randint(12, 32)
    alpha = alpha or ch([AN, AN + '!@#$%^&*-_=+', LO + DI, AN + '._-', UP + DI, AN + '!#%+-=?'])
    while True:
        p = rs(n, alpha)
        if sum(c.isdigit() for c in p) >= 1 and sum(c.isalpha() for c in p) >= 2:
            return p


def pw_human():
    k = R.randint(0, 5)
    if k == 0:
        return ch(CAPWORDS) + str(R.randint(1960, 2024)) + ch('!?#$*.')
    if k == 1:
        return ch(PETS) + ch(['', '_', '.']) + ch(PETS) + str(R.randint(1, 99))
    if k == 2:
        w = ch(CAPWORDS)
        return w.replace('o', '0').replace('e', '3').replace('a', '@') + str(R.randint(10, 99))
    if k == 3:
        return ch(WORDS).capitalize() + ch(['&', '+', '%', '!']) + ch(WORDS) + str(R.randint(1, 999))
    if k == 4:
        return ch(FIRST).capitalize() + ch(LAST).capitalize() + str(R.randint(1970, 2010))
    return ch(CAPWORDS) + ch(PETS).capitalize() + ch('!#@') + str(R.randint(0, 9))


def pw_phrase():
    sep = ch(['-', ' ', '.', '_', ''])
    ws = [ch(WORDS) for _ in range(R.randint(3, 6))]
    if sep == '':
        ws = [w.capitalize() for w in ws]
    p = sep.join(ws)
    if R.random() < 0.5:
        p += sep + str(R.randint(1, 99)) if sep else str(R.randint(1, 99))
    return p


def pw(safe=False):
    k = R.random()
    if k < 0.45:
        p = pw_random()
    elif k < 0.8:
        p = pw_human()
    else:
        p = pw_phrase()
    if safe:
        p = ''.join(c for c in p if c not in ' \'"\\#;$`&!%<>') or p
        if len(p) < 8:
            p += rs(8 - len(p) + 2, AN)
    return p


def pw_nospace():
    p = pw()
    return p.replace(' ', '-')


# ---------------------------------------------------------------- token formats (published shapes)
def b62(n):
    out = ''
    alph = DI + UP + LO
    while n:
        n, r = divmod(n, 62)
        out = alph[r] + out
    return out.rjust(6, '0')


def gh_token(prefix='ghp_'):
    body = rs(30)
    return prefix + body + b62(zlib.crc32(body.encode()) & 0xffffffff)[-6:]


def gh_fine():
    return 'github_pat_' + rs(22) + '_' + rs(59)


def npm_token():
    body = rs(30)
    return 'npm_' + body + b62(zlib.crc32(body.encode()) & 0xffffffff)[-6:]


def aws_pair():
    return 'AKIA' + rs(16, B32), rs(40, AN + '/+')


def glpat():
    return 'glpat-' + rs(20, B64U)


def slack_bot():
    return 'xoxb-%d-%d-%s' % (R.randint(10 ** 10, 10 ** 12), R.randint(10 ** 11, 10 ** 13), rs(24))


def slack_user():
    return 'xoxp-%d-%d-%d-%s' % (R.randint(10 ** 10, 10 ** 12), R.randint(10 ** 10, 10 ** 12), R.randint(10 ** 11, 10 ** 13), rs(32, HEX))


def slack_hook():
    return 'https://hooks.slack.com/services/T%s/B%s/%s' % (rs(R.choice([8, 10]), UP + DI), rs(R.choice([8, 10, 11]), UP + DI), rs(24))


def stripe_sk():
    return ch(['sk_live_', 'rk_live_']) + (rs(24) if R.random() < 0.4 else '51' + rs(97))


def sendgrid():
    return 'SG.' + rs(22, B64U) + '.' + rs(43, B64U)


def google_api():
    return 'AIza' + rs(35, B64U)


def gocspx():
    return 'GOCSPX-' + rs(28, B64U)


def openai_key():
    if R.random() < 0.5:
        return 'sk-' + rs(20) + 'T3BlbkFJ' + rs(20)
    return 'sk-proj-' + rs(74, B64U) + 'T3BlbkFJ' + rs(74, B64U)


def anthropic_key():
    return 'sk-ant-api03-' + rs(93, B64U) + 'AA'


def hf_token():
    return 'hf_' + rs(34, UP + LO)


def telegram():
    return '%d:AA%s' % (R.randint(10 ** 8, 8 * 10 ** 9), rs(33, B64U))


def discord_bot():
    uid = str(R.randint(10 ** 17, 10 ** 18))
    return b64u(uid.encode()) + '.' + rs(6, B64U) + '.' + rs(38, B64U)


def discord_hook():
    return 'https://discord.com/api/webhooks/%d/%s' % (R.randint(10 ** 17, 10 ** 18), rs(68, B64U))


def jwt(payload=None, alg='HS256', siglen=32, kid=None):
    h = {'alg': alg, 'typ': 'JWT'}
    if kid:
        h['kid'] = kid
    now = R.randint(1690000000, 1760000000)
    p = payload or {'sub': user(), 'iat': now, 'exp': now + 86400 * R.randint(1, 365)}
    return b64u(json.dumps(h, separators=(',', ':')).encode()) + '.' + b64u(json.dumps(p, separators=(',', ':')).encode()) + '.' + b64u(rb(siglen))


def k8s_sa_jwt():
    now = R.randint(1690000000, 1760000000)
    ns = ch(['default', 'ci', 'monitoring', 'kube-system'])
    sa = ch(['deployer', 'admin-user', 'gitlab-runner', 'argocd'])
    p = {'iss': 'kubernetes/serviceaccount', 'kubernetes.io/serviceaccount/namespace': ns,
         'kubernetes.io/serviceaccount/secret.name': sa + '-token-' + rs(5, LO + DI),
         'kubernetes.io/serviceaccount/service-account.name': sa, 'sub': 'system:serviceaccount:%s:%s' % (ns, sa), 'iat': now}
    return jwt(p, 'RS256', 256, kid=rs(43, B64U))


def azure_secret():
    return rs(3, AN) + '8Q~' + rs(34, AN + '_.~-')


def azure_storage_key():
    return b64(rb(64))


def vault_token():
    return 'hvs.CAESI' + rs(86, B64U) if R.random() < 0.6 else 'hvs.' + rs(24)


def age_secret():
    return bech32('age-secret-key-', rb(32)).upper()


def age_public():
    return bech32('age', rb(32))


def pypi_token():
    return 'pypi-AgEIcHlwaS5vcmc' + rs(R.randint(60, 170), B64U)


def dop():
    return 'dop_v1_' + rs(64, HEX)


def tfc_token():
    return rs(14) + '.atlasv1.' + rs(67)


def grafana_cloud():
    j = json.dumps({'o': str(R.randint(100000, 999999)), 'n': 'stack-%d-integration-%s' % (R.randint(100000, 999999), ch(WORDS)),
                    'k': rs(24), 'm': {'r': ch(['prod-us-east-0', 'prod-eu-west-2'])}}, separators=(',', ':'))
    return 'glc_' + b64(j.encode()).rstrip('=')


def atlassian():
    return 'ATATT3xFfGF0' + rs(170, B64U) + '=' + rs(8, '0123456789ABCDEF')


def mapbox_sk(u):
    return 'sk.' + b64u(json.dumps({'u': u, 'a': 'cl' + rs(23, LO + DI)}, separators=(',', ':')).encode()) + '.' + rs(22, B64U)


def square():
    return 'EAAA' + rs(60, B64U)


def braintree():
    return 'access_token$production$%s$%s' % (rs(16, LO + DI), rs(32, HEX))


def fcm():
    return 'AAAA' + rs(7, B64U) + ':APA91b' + rs(134, B64U)


def twitter_bearer():
    return 'AAAAAAAAAAAAAAAAAAAAA' + rs(6) + 'AAAAAAA' + rs(10) + '%2B' + rs(20) + '%3D' + rs(50)


def fb_token():
    return 'EAA' + ch(['B', 'G', 'J']) + rs(R.randint(150, 190))


def tailscale():
    return 'tskey-auth-k' + rs(10) + 'CNTRL-' + rs(33)


def syn_token(u):
    body = 'syt_' + b64u(u.encode()) + '_' + rs(20)
    return body + '_' + b62(zlib.crc32(body.encode()))[-6:]


def azure_devops_pat():
    return rs(52, 'abcdefghijklmnopqrstuvwxyz234567')


def ya29():
    return 'ya29.a0' + rs(R.randint(140, 200), B64U)


def google_refresh():
    return '1//0' + rs(1, 'gecf') + rs(99, B64U)


# ---------------------------------------------------------------- bech32 / base58
BECH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'


def _polymod(values):
    G = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = ((chk & 0x1ffffff) << 5) ^ v
        for i in range(5):
            chk ^= G[i] if ((b >> i) & 1) else 0
    return chk


def bech32(hrp, data8):
    acc = bits = 0
    data = []
    for x in data8:
        acc = (acc << 8) | x
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    ex = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(ex + data + [0] * 6) ^ 1
    cs = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + '1' + ''.join(BECH[d] for d in data + cs)


def b58enc(b):
    n = int.from_bytes(b, 'big')
    out = ''
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    pad = len(b) - len(b.lstrip(b'\0'))
    return '1' * pad + out


def b58check(b):
    return b58enc(b + hashlib.sha256(hashlib.sha256(b).digest()).digest()[:4])


def wif():
    return b58check(b'\x80' + rb(32) + b'\x01')


def xprv():
    return b58check(bytes.fromhex('0488ADE4') + b'\0' + b'\0' * 4 + b'\0' * 4 + rb(32) + b'\0' + rb(32))


def xpub():
    return b58check(bytes.fromhex('0488B21E') + b'\0' + b'\0' * 8 + rb(32) + b'\x02' + rb(32))


# ---------------------------------------------------------------- keys (deterministic from R)
SMALLP = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]


def _isprime(n):
    for p in SMALLP:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(24):
        a = R.randrange(2, n - 2)
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


def _prime(bits):
    while True:
        c = R.getrandbits(bits) | (3 << (bits - 2)) | 1
        if c % 65537 != 1 and _isprime(c):
            return c


def rsa_key(bits=2048):
    e = 65537
    while True:
        p, q = _prime(bits // 2), _prime(bits // 2)
        if p == q:
            continue
        if p < q:
            p, q = q, p
        phi = (p - 1) * (q - 1)
        try:
            d = pow(e, -1, phi)
        except ValueError:
            continue
        n = p * q
        if n.bit_length() != bits:
            continue
        nums = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), rsa.RSAPublicNumbers(e, n))
        return nums.private_key()


def ec_key(curve=None):
    curve = curve or ec.SECP256R1()
    order = {'secp256r1': 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
             'secp384r1': int('FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973', 16)}[curve.name]
    return ec.derive_private_key(R.randrange(1, order), curve)


def ed_key():
    return ed25519.Ed25519PrivateKey.from_private_bytes(rb(32))


def pem(key, fmt='pkcs8'):
    f = {'pkcs8': serialization.PrivateFormat.PKCS8, 'trad': serialization.PrivateFormat.TraditionalOpenSSL}[fmt]
    return key.private_bytes(serialization.Encoding.PEM, f, serialization.NoEncryption()).decode()


def sstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack('>I', len(b)) + b


def mpint(n):
    if n == 0:
        return sstr(b'')
    b = n.to_bytes((n.bit_length() + 8) // 8, 'big')
    return sstr(b)


def ed_raw(k):
    seed = k.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return seed, pub


def ssh_pub_blob(k):
    if isinstance(k, ed25519.Ed25519PrivateKey):
        return sstr('ssh-ed25519') + sstr(ed_raw(k)[1])
    pn = k.public_key().public_numbers()
    return sstr('ssh-rsa') + mpint(pn.e) + mpint(pn.n)


def ssh_pub_line(k, comment):
    t = 'ssh-ed25519' if isinstance(k, ed25519.Ed25519PrivateKey) else 'ssh-rsa'
    return '%s %s %s' % (t, b64(ssh_pub_blob(k)), comment)


def openssh_priv(k, comment):
    if isinstance(k, ed25519.Ed25519PrivateKey):
        seed, pub = ed_raw(k)
        sec = sstr('ssh-ed25519') + sstr(pub) + sstr(seed + pub)
    else:
        n = k.private_numbers()
        sec = sstr('ssh-rsa') + mpint(n.public_numbers.n) + mpint(n.public_numbers.e) + mpint(n.d) + mpint(n.iqmp) + mpint(n.p) + mpint(n.q)
    ci = struct.pack('>I', R.getrandbits(32))
    body = ci + ci + sec + sstr(comment)
    i = 1
    while len(body) % 8:
        body += bytes([i])
        i += 1
    blob = b'openssh-key-v1\0' + sstr('none') + sstr('none') + sstr(b'') + struct.pack('>I', 1) + sstr(ssh_pub_blob(k)) + sstr(body)
    return '-----BEGIN OPENSSH PRIVATE KEY-----\n' + wrap(b64(blob), 70) + '\n-----END OPENSSH PRIVATE KEY-----\n'


def ppk(k, comment):
    n = k.private_numbers()
    pub = ssh_pub_blob(k)
    priv = mpint(n.d) + mpint(n.p) + mpint(n.q) + mpint(n.iqmp)
    mackey = hashlib.sha1(b'putty-private-key-file-mac-key').digest()
    data = sstr('ssh-rsa') + sstr('none') + sstr(comment) + sstr(pub) + sstr(priv)
    mac = hmac.new(mackey, data, hashlib.sha1).hexdigest()
    pl, vl = wrap(b64(pub)), wrap(b64(priv))
    return ('PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: %s\nPublic-Lines: %d\n%s\nPrivate-Lines: %d\n%s\nPrivate-MAC: %s\n'
            % (comment, pl.count('\n') + 1, pl, vl.count('\n') + 1, vl, mac))


def jwk_ec(k):
    n = k.private_numbers()
    f = lambda v: b64u(v.to_bytes(32, 'big'))
    return {'kty': 'EC', 'crv': 'P-256', 'x': f(n.public_numbers.x), 'y': f(n.public_numbers.y), 'd': f(n.private_value)}


def crc24(b):
    crc = 0xB704CE
    for x in b:
        crc ^= x << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_armor(kind, data, extra=''):
    c = crc24(data).to_bytes(3, 'big')
    return '-----BEGIN PGP %s-----\n%s\n%s\n=%s\n-----END PGP %s-----\n' % (kind, extra, wrap(b64(data)), b64(c), kind)


def pgp_pkt(tag, body):
    L = len(body)
    if L < 192:
        hdr = bytes([0xC0 | tag, L])
    else:
        L2 = L - 192
        hdr = bytes([0xC0 | tag, (L2 >> 8) + 192, L2 & 0xFF])
    return hdr + body


def pgp_mpi(b):
    n = int.from_bytes(b, 'big')
    return struct.pack('>H', n.bit_length()) + b.lstrip(b'\0')


def pgp_key(secret, uid):
    k = ed_key()
    seed, pub = ed_raw(k)
    t = struct.pack('>I', R.randint(1500000000, 1750000000))
    oid = bytes.fromhex('2B06010401DA470F01')
    pubbody = b'\x04' + t + bytes([22, len(oid)]) + oid + pgp_mpi(b'\x40' + pub)
    out = b''
    if secret:
        m = pgp_mpi(seed)
        out += pgp_pkt(5, pubbody + b'\x00' + m + struct.pack('>H', sum(m) & 0xFFFF))
    else:
        out += pgp_pkt(6, pubbody)
    out += pgp_pkt(13, uid.encode())
    return pgp_armor('PRIVATE KEY BLOCK' if secret else 'PUBLIC KEY BLOCK', out)


def cert_pem(cn):
    k = rsa_key(1024)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, ch(ORG).capitalize())])
    nb = datetime.datetime(2024, 1, 1) + datetime.timedelta(days=R.randint(0, 600))
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
         .serial_number(R.getrandbits(120)).not_valid_before(nb).not_valid_after(nb + datetime.timedelta(days=825))
         .sign(k, hashes.SHA256()))
    return c.public_bytes(serialization.Encoding.PEM).decode()


def uuid4():
    h = rs(32, HEX)
    return '%s-%s-4%s-%s%s-%s' % (h[:8], h[8:12], h[13:16], ch('89ab'), h[17:20], h[20:32])


def sha(n=40):
    return rs(n, HEX)


# ---------------------------------------------------------------- filler
def sh_fill(n=None):
    pool = ['alias ll="ls -alF"', 'alias gs="git status"', 'export EDITOR=nvim', 'export PATH="$HOME/.local/bin:$PATH"',
            'HISTSIZE=10000', 'HISTCONTROL=ignoreboth', 'shopt -s histappend', '[ -f ~/.fzf.bash ] && source ~/.fzf.bash',
            'export LANG=en_US.UTF-8', 'eval "$(direnv hook bash)"', 'alias k=kubectl', 'export GOPATH="$HOME/go"',
            'umask 022', 'export PAGER=less', 'alias dc="docker compose"', '# added by installer',
            'export NVM_DIR="$HOME/.nvm"', 'export PYENV_ROOT="$HOME/.pyenv"', 'set -o vi', 'alias ..="cd .."']
    return R.sample(pool, n or R.randint(3, 7))


def around(lines, secret, pre=None, post=None):
    """put secret (already marked) in the middle of filler lines"""
    pre = R.randint(1, max(1, len(lines) - 1)) if pre is None else pre
    return lines[:pre] + [secret] + lines[pre:]


POS, NEG = [], []


def P(fam):
    def d(f):
        POS.append((fam, f))
        return f
    return d


def N(fam):
    def d(f):
        NEG.append((fam, f))
        return f
    return d


def J(o, **kw):
    return json.dumps(o, indent=kw.get('indent', 2))


# ================================================================ POSITIVES
@P('aws_credentials_file')
def _():
    a, s = aws_pair()
    prof = ch(['default', 'work', 'personal', 'prod-admin'])
    t = '[%s]\naws_access_key_id = %s\n%saws_secret_access_key = %s\n' % (prof, a, S, s)
    if R.random() < 0.5:
        t += 'region = %s\n' % ch(['eu-west-1', 'us-east-1', 'ap-southeast-2'])
    return '.aws/credentials', t, 'access key + secret'


@P('aws_env_bashrc')
def _():
    a, s = aws_pair()
    L = sh_fill()
    L = around(L, 'export AWS_ACCESS_KEY_ID=%s\n%sexport AWS_SECRET_ACCESS_KEY="%s"' % (a, S, s))
    return ch(['.bashrc', '.bash_profile', '.profile']), '\n'.join(L) + '\n', 'export pair'


@P('aws_boto_cfg')
def _():
    a, s = aws_pair()
    return '.boto', '[Credentials]\naws_access_key_id = %s\n%saws_secret_access_key = %s\n\n[Boto]\nhttps_validate_certificates = True\n' % (a, S, s), 'legacy boto'


@P('aws_s3cmd')
def _():
    a, s = aws_pair()
    return '.s3cfg', '[default]\naccess_key = %s\nbucket_location = EU\nhost_base = s3.amazonaws.com\n%ssecret_key = %s\nuse_https = True\n' % (a, S, s), 's3cmd'


@P('git_credentials_ghp')
def _():
    t = gh_token()
    lines = ['https://%s:%s@github.com' % (user(), t)]
    if R.random() < 0.5:
        lines.insert(0, 'https://%s@%s' % (user(), host()))  # no password: user only
    lines[-1] = S + lines[-1]
    return '.git-credentials', '\n'.join(lines) + '\n', 'ghp in store helper'


@P('gh_hosts_yml')
def _():
    u = user()
    return '.config/gh/hosts.yml', 'github.com:\n    user: %s\n%s    oauth_token: %s\n    git_protocol: ssh\n' % (u, S, gh_token('gho_')), 'gho'


@P('github_fine_zshrc')
def _():
    L = sh_fill()
    L = around(L, S + "export GITHUB_TOKEN='%s'" % gh_fine())
    return '.zshrc', '\n'.join(L) + '\n', 'github_pat_'


@P('glab_config')
def _():
    return '.config/glab-cli/config.yml', 'git_protocol: ssh\neditor: vim\nhosts:\n    gitlab.com:\n%s        token: %s\n        api_host: gitlab.com\n        user: %s\n' % (S, glpat(), user()), 'glpat'


@P('gitconfig_insteadof')
def _():
    return '.gitconfig', '[user]\n\tname = %s\n\temail = %s\n%s[url "https://oauth2:%s@gitlab.%s/"]\n\tinsteadOf = https://gitlab.%s/\n[pull]\n\trebase = true\n' % (
        ch(FIRST).capitalize(), email(), S, glpat(), domain(), domain()), 'token in url section'


@P('npmrc_authtoken')
def _():
    return '.npmrc', 'registry=https://registry.npmjs.org/\n%s//registry.npmjs.org/:_authToken=%s\nsave-exact=true\n' % (S, npm_token()), 'npm_'


@P('npmrc_auth_b64')
def _():
    h = host()
    a = b64(('%s:%s' % (user(), pw(True))).encode())
    return '.npmrc', 'registry=https://%s/repository/npm-group/\n%s_auth=%s\nemail=%s\nalways-auth=true\n' % (h, S, a, email()), 'base64 user:pass'


@P('yarnrc_yml')
def _():
    return '.yarnrc.yml', 'nodeLinker: node-modules\nnpmScopes:\n  %s:\n    npmRegistryServer: "https://npm.pkg.github.com"\n%s    npmAuthToken: "%s"\n' % (ch(ORG), S, gh_token()), 'yarn berry'


@P('pypirc_token')
def _():
    return '.pypirc', '[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\n%spassword = %s\n' % (S, pypi_token()), 'pypi-'


@P('pip_conf_url_encoded')
def _():
    p = pw()
    return '.config/pip/pip.conf', '[global]\ntimeout = 60\n%sindex-url = https://%s:%s@%s/simple\n' % (S, user(), urllib.parse.quote(p, safe=''), host()), 'url-encoded password'


@P('docker_config_auth')
def _():
    a = b64(('%s:%s' % (user(), pw())).encode())
    reg = ch(['https://index.docker.io/v1/', 'ghcr.io', 'registry.' + domain()])
    t = '{\n\t"auths": {\n\t\t"%s": {\n%s\t\t\t"auth": "%s"\n\t\t}\n\t},\n\t"currentContext": "default"\n}' % (reg, S, a)
    return '.docker/config.json', t, 'auth base64'


@P('docker_login_script')
def _():
    t = '#!/bin/sh\nset -e\n%secho "dckr_pat_%s" | docker login -u %s --password-stdin\ndocker compose pull\n' % (S, rs(27, B64U), user())
    return 'bin/deploy-pull.sh', t, 'dckr_pat'


@P('maven_settings')
def _():
    return '.m2/settings.xml', '''<settings>
  <servers>
    <server>
      <id>%s-releases</id>
      <username>%s</username>
%s      <password>%s</password>
    </server>
  </servers>
</settings>
''' % (ch(ORG), user(), S, pw(True)), 'server password'


@P('gradle_properties')
def _():
    k = ch(['ossrhPassword', 'signing.password', 'artifactoryPassword', 'mavenCentralPassword'])
    return '.gradle/gradle.properties', 'org.gradle.jvmargs=-Xmx2g\norg.gradle.daemon=true\nossrhUsername=%s\n%s%s=%s\n' % (user(), S, k, pw(True)), k


@P('nuget_config')
def _():
    return '.nuget/NuGet/NuGet.Config', '''<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
    <add key="internal" value="https://%s/nuget/v3/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <internal>
      <add key="Username" value="%s" />
%s      <add key="ClearTextPassword" value="%s" />
    </internal>
  </packageSourceCredentials>
</configuration>
''' % (host(), user(), S, pw(True)), 'ClearTextPassword'


@P('composer_github_oauth')
def _():
    return '.config/composer/auth.json', '{\n    "github-oauth": {\n%s        "github.com": "%s"\n    }\n}\n' % (S, gh_token()), 'github-oauth'


@P('composer_http_basic')
def _():
    return '.composer/auth.json', '{\n    "http-basic": {\n        "repo.%s": {\n            "username": "%s",\n%s            "password": "%s"\n        }\n    }\n}\n' % (domain(), user(), S, pw(True)), 'http-basic'


@P('gem_credentials')
def _():
    return '.gem/credentials', '---\n%s:rubygems_api_key: rubygems_%s\n' % (S, rs(48, HEX)), 'rubygems_'


@P('cargo_credentials')
def _():
    return '.cargo/credentials.toml', '[registry]\n%stoken = "cio%s"\n' % (S, rs(32)), 'cio'


@P('kubeconfig_token')
def _():
    return '.kube/config', '''apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: %s
    server: https://%s:6443
  name: %s
contexts:
- context:
    cluster: %s
    user: deployer
  name: %s
current-context: %s
kind: Config
users:
- name: deployer
  user:
%s    token: %s
''' % (b64(b'-----BEGIN CERTIFICATE-----\nMIIB' + rb(30) + b'\n-----END CERTIFICATE-----\n'), host(), 'k3s', 'k3s', 'k3s', 'k3s', S, k8s_sa_jwt()), 'SA jwt'


@P('kubeconfig_client_key')
def _():
    kk = pem(ec_key(), 'trad')
    return '.kube/config', '''apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://127.0.0.1:%d
  name: kind-dev
users:
- name: kind-dev
  user:
    client-certificate-data: %s
%s    client-key-data: %s
''' % (R.randint(30000, 45000), b64(cert_pem('kind-dev').encode()), S, b64(kk.encode())), 'base64 of EC PEM'


@P('gcp_service_account_json')
def _():
    k = pem(rsa_key(2048), 'pkcs8')
    proj = ch(ORG) + '-' + ch(WORDS) + '-' + str(R.randint(100000, 999999))
    sa = '%s@%s.iam.gserviceaccount.com' % (ch(['terraform', 'ci-deployer', 'backup']), proj)
    lines = ['{', '  "type": "service_account",', '  "project_id": "%s",' % proj, '  "private_key_id": "%s",' % sha(40),
             S + '  "private_key": %s,' % json.dumps(k), '  "client_email": "%s",' % sa, '  "client_id": "%d",' % R.randint(10 ** 20, 10 ** 21),
             '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",', '  "token_uri": "https://oauth2.googleapis.com/token"', '}']
    return ch(['.config/gcloud/', 'keys/', 'Downloads/']) + proj + '-' + sha(12) + '.json', '\n'.join(lines) + '\n', 'PEM with \\n escapes'


@P('gcloud_adc_refresh')
def _():
    t = '{\n  "account": "",\n  "client_id": "%d-%s.apps.googleusercontent.com",\n  "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",\n  "quota_project_id": "%s",\n%s  "refresh_token": "%s",\n  "type": "authorized_user",\n  "universe_domain": "googleapis.com"\n}\n' % (
        R.randint(10 ** 11, 10 ** 12), rs(32, LO + DI), ch(ORG) + '-dev', S, google_refresh())
    return '.config/gcloud/application_default_credentials.json', t, 'refresh token'


@P('azure_sp_json')
def _():
    t = '{\n  "appId": "%s",\n  "displayName": "%s-deployer",\n%s  "password": "%s",\n  "tenant": "%s"\n}\n' % (uuid4(), ch(ORG), S, azure_secret(), uuid4())
    return ch(['.azure/sp-', 'creds/azure-sp-']) + ch(WORDS) + '.json', t, 'az ad sp create-for-rbac output'


@P('azure_storage_connstr')
def _():
    acc = ch(ORG) + rs(6, LO + DI)
    t = '{\n  "IsEncrypted": false,\n  "Values": {\n%s    "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net",\n    "FUNCTIONS_WORKER_RUNTIME": "python"\n  }\n}\n' % (S, acc, azure_storage_key())
    return 'src/%s-func/local.settings.json' % ch(WORDS), t, 'AccountKey'


@P('azure_sas_url')
def _():
    acc = ch(ORG) + rs(4, LO + DI)
    sig = urllib.parse.quote(b64(rb(32)), safe='')
    url = 'https://%s.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2026-12-31T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig=%s' % (acc, sig)
    return 'bin/upload-backup.sh', '#!/bin/bash\nset -euo pipefail\nSRC="$HOME/backups/latest.tar.zst"\n%sSAS_URL="%s"\nazcopy copy "$SRC" "$SAS_URL"\n' % (S, url), 'SAS sig'


@P('ssh_openssh_ed25519')
def _():
    k = ed_key()
    return '.ssh/' + ch(['id_ed25519', 'id_ed25519_work', 'github_ed25519']), S + openssh_priv(k, user() + '@' + ch(WORDS)), 'openssh ed25519'


@P('ssh_openssh_rsa')
def _():
    k = rsa_key(ch([2048, 3072]))
    return '.ssh/id_rsa', S + openssh_priv(k, user() + '@laptop'), 'openssh rsa'


@P('ssh_pkcs1_rsa')
def _():
    return '.ssh/' + ch(['id_rsa', 'deploy_key', 'aws-' + ch(WORDS) + '.pem']), S + pem(rsa_key(2048), 'trad'), 'PKCS#1'


@P('pkcs8_rsa_project')
def _():
    return ch(['projects/', 'code/', 'work/']) + ch(WORDS) + '/certs/server.key', S + pem(rsa_key(2048), 'pkcs8'), 'PKCS#8'


@P('ec_pem')
def _():
    return '.config/' + ch(WORDS) + '/signing-ec.pem', S + pem(ec_key(ch([ec.SECP256R1(), ec.SECP384R1()])), 'trad'), 'EC PRIVATE KEY'


@P('ed25519_pkcs8')
def _():
    return 'keys/' + ch(WORDS) + '_ed25519.pem', S + pem(ed_key(), 'pkcs8'), 'PKCS#8 ed25519'


@P('putty_ppk')
def _():
    k = rsa_key(2048)
    return 'Documents/putty/' + ch(WORDS) + '.ppk', S + ppk(k, 'rsa-key-%d' % R.randint(20200101, 20251231)), 'PPK v2 unencrypted'


@P('jwk_private')
def _():
    j = jwk_ec(ec_key())
    j['kid'] = rs(8, LO + DI)
    j['use'] = 'sig'
    lines = ['{', '  "kty": "EC",', '  "crv": "P-256",', '  "kid": "%s",' % j['kid'], '  "use": "sig",', '  "x": "%s",' % j['x'], '  "y": "%s",' % j['y'], S + '  "d": "%s"' % j['d'], '}']
    return '.config/' + ch(WORDS) + '/jwk.json', '\n'.join(lines) + '\n', 'JWK d'


@P('pem_base64_env')
def _():
    k = pem(ec_key(), 'pkcs8') if R.random() < 0.5 else pem(rsa_key(2048), 'pkcs8')
    return 'projects/%s/.env' % ch(WORDS), 'NODE_ENV=production\nPORT=%d\n%sJWT_PRIVATE_KEY_B64=%s\nLOG_LEVEL=info\n' % (R.randint(3000, 9000), S, b64(k.encode())), 'base64 of PEM'


@P('pem_json_escaped')
def _():
    k = pem(ec_key(), 'pkcs8')
    return '.config/%s/config.json' % ch(WORDS), '{\n  "issuer": "https://%s",\n%s  "signingKey": %s,\n  "ttl": 3600\n}\n' % (host(), S, json.dumps(k)), 'PEM in JSON'


@P('pgp_private_block')
def _():
    return ch(['Documents/', 'backup/', '']) + 'secret-key-backup.asc', S + pgp_key(True, '%s <%s>' % (ch(FIRST).capitalize(), email())), 'PGP secret key'


@P('age_keys_txt')
def _():
    sk = age_secret()
    return '.config/sops/age/keys.txt', '# created: 2024-%02d-%02dT10:%02d:00Z\n# public key: %s\n%s%s\n' % (R.randint(1, 12), R.randint(1, 28), R.randint(0, 59), age_public(), S, sk), 'AGE-SECRET-KEY'


@P('wireguard_conf')
def _():
    return ch(['.config/wireguard/', 'vpn/']) + ch(['wg0', 'home', 'mullvad-se4']) + '.conf', '[Interface]\n%sPrivateKey = %s\nAddress = 10.%d.0.2/32\nDNS = 10.64.0.1\n\n[Peer]\nPublicKey = %s\nAllowedIPs = 0.0.0.0/0\nEndpoint = %s:51820\n' % (
        S, b64(rb(32)), R.randint(0, 200), b64(rb(32)), host()), 'PrivateKey'


@P('openvpn_auth_txt')
def _():
    return 'vpn/' + ch(['auth.txt', 'credentials.txt', 'login.conf']), '%s\n%s%s\n' % (user(), S, pw()), 'two-line auth-user-pass'


@P('openvpn_inline_key')
def _():
    k = pem(rsa_key(2048), 'pkcs8')
    t = 'client\ndev tun\nproto udp\nremote %s 1194\nnobind\npersist-key\n<ca>\n%s</ca>\n<cert>\n%s</cert>\n<key>\n%s%s</key>\n' % (host(), cert_pem('ca'), cert_pem('client'), S, k)
    return 'vpn/' + ch(WORDS) + '.ovpn', t, 'inline key'


@P('nm_connection_psk')
def _():
    ssid = ch(CAPWORDS) + ch(['-5G', '_Guest', '', 'Net'])
    return '.local/share/NetworkManager/%s.nmconnection' % ssid, '[connection]\nid=%s\nuuid=%s\ntype=wifi\n\n[wifi]\nmode=infrastructure\nssid=%s\n\n[wifi-security]\nkey-mgmt=wpa-psk\n%spsk=%s\n\n[ipv4]\nmethod=auto\n' % (
        ssid, uuid4(), ssid, S, pw()), 'psk='


@P('wpa_supplicant')
def _():
    p = '"%s"' % pw(True) if R.random() < 0.6 else rs(64, HEX)
    return 'wpa_supplicant.conf', 'ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\nupdate_config=1\ncountry=DE\n\nnetwork={\n\tssid="%s"\n%s\tpsk=%s\n\tkey_mgmt=WPA-PSK\n}\n' % (ch(CAPWORDS), S, p), 'psk'


@P('android_wifi_xml')
def _():
    p = pw()
    esc = p.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')
    return 'Backups/phone/WifiConfigStore.xml', '''<?xml version='1.0' encoding='utf-8' standalone='yes' ?>
<WifiConfigStoreData>
<int name="Version" value="3" />
<NetworkList>
<Network>
<WifiConfiguration>
<string name="ConfigKey">&quot;%s&quot;WPA_PSK</string>
<string name="SSID">&quot;%s&quot;</string>
%s<string name="PreSharedKey">&quot;%s&quot;</string>
<boolean name="HiddenSSID" value="false" />
</WifiConfiguration>
</Network>
</NetworkList>
</WifiConfigStoreData>
''' % ('Home', 'Home', S, esc), 'xml entity-escaped psk'


@P('ipsec_secrets')
def _():
    return 'vpn/ipsec.secrets', '# /etc/ipsec.secrets copy\n%s%s : PSK "%s"\n' % (S, host(), pw(True)), 'PSK'


@P('netrc')
def _():
    lines = ['machine %s' % host(), '  login %s' % user(), S + '  password %s' % pw(True).replace(' ', '')]
    if R.random() < 0.5:
        lines = [S + 'machine %s login %s password %s' % (host(), user(), pw(True).replace(' ', ''))]
    return '.netrc', '\n'.join(lines) + '\n', 'netrc'


@P('authinfo')
def _():
    return '.authinfo', 'machine imap.%s login %s port 993 password "%s"\n%smachine smtp.%s login %s port 587 password %s\n' % (
        domain(), email(), '', S, domain(), email(), pw(True).replace(' ', '')), 'second line real (first empty)'


@P('pgpass')
def _():
    return '.pgpass', '# hostname:port:database:username:password\n%s%s:5432:%s:%s:%s\n' % (S, host(), ch(WORDS), user(), pw(True).replace(':', '')), 'pgpass'


@P('my_cnf')
def _():
    return '.my.cnf', '[client]\nuser=%s\n%spassword="%s"\nhost=%s\n\n[mysql]\nprompt=\\u@\\h [\\d]>\\_\n' % (user(), S, pw(True), host()), 'my.cnf'


@P('mongorc_js')
def _():
    return '.mongorc.js', 'DBQuery.shellBatchSize = 50;\nvar adm = db.getSiblingDB("admin");\n%sadm.auth("%s", "%s");\nprint("connected");\n' % (S, user(), pw(True)), 'db.auth'


@P('cqlshrc')
def _():
    return '.cassandra/cqlshrc', '[authentication]\nusername = %s\n%spassword = %s\n\n[connection]\nhostname = %s\nport = 9042\n' % (user(), S, pw(True), host()), 'cqlsh'


@P('clickhouse_client_xml')
def _():
    return '.clickhouse-client/config.xml', '<config>\n    <host>%s</host>\n    <user>%s</user>\n%s    <password>%s</password>\n    <secure>true</secure>\n</config>\n' % (host(), user(), S, pw(True)), 'clickhouse'


@P('vscode_sqltools')
def _():
    return '.config/Code/User/settings.json', '''{
    "editor.fontSize": 14,
    "workbench.colorTheme": "Default Dark+",
    "sqltools.connections": [
        {
            "previewLimit": 50,
            "server": "%s",
            "port": 5432,
            "driver": "PostgreSQL",
            "name": "prod-ro",
            "database": "%s",
            "username": "%s",
%s            "password": "%s"
        }
    ]
}
''' % (host(), ch(WORDS), user(), S, pw(True)), 'sqltools'


@P('mongodb_srv_uri')
def _():
    L = sh_fill()
    L = around(L, S + 'export MONGO_URL="mongodb+srv://%s:%s@cluster0.%s.mongodb.net/?retryWrites=true"' % (user(), urllib.parse.quote(pw(), safe=''), rs(5, LO + DI)))
    return '.zshrc', '\n'.join(L) + '\n', 'mongo uri'


@P('redis_url_compose')
def _():
    return 'projects/%s/docker-compose.yml' % ch(WORDS), '''services:
  worker:
    image: ghcr.io/%s/worker:latest
    environment:
%s      - REDIS_URL=redis://:%s@%s:6379/0
      - LOG_LEVEL=debug
''' % (ch(ORG), S, urllib.parse.quote(pw(), safe=''), host()), 'redis url'


@P('postgres_dsn_env')
def _():
    return 'projects/%s/.env' % ch(WORDS), 'APP_NAME=%s\n%sDATABASE_URL=postgres://%s:%s@%s:5432/%s?sslmode=require\nREDIS_HOST=localhost\n' % (
        ch(WORDS), S, user(), urllib.parse.quote(pw(), safe=''), host(), ch(WORDS)), 'postgres dsn'


@P('jdbc_properties')
def _():
    return 'projects/%s/src/main/resources/application-local.properties' % ch(WORDS), 'spring.jpa.hibernate.ddl-auto=validate\n%sspring.datasource.url=jdbc:postgresql://%s:5432/%s?user=%s&password=%s\nserver.port=8080\n' % (
        S, host(), ch(WORDS), user(), urllib.parse.quote(pw(True), safe='')), 'jdbc password param'


@P('spring_yaml_password')
def _():
    return 'projects/%s/src/main/resources/application.yml' % ch(WORDS), 'spring:\n  datasource:\n    url: jdbc:mysql://%s:3306/%s\n    username: %s\n%s    password: %s\n' % (host(), ch(WORDS), user(), S, pw(True)), 'yaml password'


@P('msmtprc')
def _():
    return '.msmtprc', 'defaults\nauth on\ntls on\ntls_trust_file /etc/ssl/certs/ca-certificates.crt\n\naccount personal\nhost smtp.%s\nport 587\nfrom %s\nuser %s\n%spassword %s\n\naccount default : personal\n' % (
        domain(), email(), email(), S, pw(True)), 'msmtp'


@P('muttrc')
def _():
    return ch(['.muttrc', '.config/mutt/muttrc', '.config/neomutt/neomuttrc']), 'set realname = "%s"\nset imap_user = "%s"\n%sset imap_pass = "%s"\nset folder = "imaps://imap.%s:993"\nset spoolfile = "+INBOX"\n' % (
        ch(FIRST).capitalize(), email(), S, pw(True), domain()), 'imap_pass'


@P('mbsyncrc')
def _():
    return '.mbsyncrc', 'IMAPAccount work\nHost imap.%s\nUser %s\n%sPass %s\nSSLType IMAPS\n\nIMAPStore work-remote\nAccount work\n' % (domain(), email(), S, pw(True)), 'Pass'


@P('offlineimaprc')
def _():
    return '.offlineimaprc', '[general]\naccounts = main\n\n[Account main]\nlocalrepository = local\nremoterepository = remote\n\n[Repository remote]\ntype = IMAP\nremotehost = imap.%s\nremoteuser = %s\n%sremotepass = %s\nsslcacertfile = OS-DEFAULT\n' % (
        domain(), email(), S, pw(True)), 'remotepass'


@P('fetchmailrc')
def _():
    return '.fetchmailrc', 'set daemon 300\n%spoll pop.%s protocol pop3 user "%s" password "%s" ssl\n' % (S, domain(), email(), pw(True)), 'fetchmail'


@P('aerc_accounts')
def _():
    return '.config/aerc/accounts.conf', '[Personal]\n%ssource = imaps://%s:%s@imap.%s\noutgoing = smtps://%s@smtp.%s\ndefault = INBOX\nfrom = %s\n' % (
        S, urllib.parse.quote(email(), safe=''), urllib.parse.quote(pw(), safe=''), domain(), urllib.parse.quote(email(), safe=''), domain(), email()), 'url-encoded in imaps url'


@P('irssi_config')
def _():
    return '.irssi/config', 'servers = (\n  {\n    address = "irc.libera.chat";\n    chatnet = "liberachat";\n    port = "6697";\n%s    password = "%s";\n    use_tls = "yes";\n    autoconnect = "yes";\n  }\n);\n' % (S, pw(True)), 'irssi server password'


@P('weechat_sasl')
def _():
    return '.config/weechat/irc.conf', '[server]\nlibera.addresses = "irc.libera.chat/6697"\nlibera.tls = on\nlibera.sasl_mechanism = plain\nlibera.sasl_username = "%s"\n%slibera.sasl_password = "%s"\nlibera.autoconnect = on\n' % (user(), S, pw(True)), 'sasl_password'


@P('hexchat_servlist')
def _():
    return '.config/hexchat/servlist.conf', 'v=2.16.1\n\nN=Libera.Chat\nI=%s\nU=%s\n%sP=%s\nL=6\nE=UTF-8 (Unicode)\nF=19\nD=0\nS=irc.libera.chat\n' % (user(), user(), S, pw(True)), 'P= line'


@P('matrix_bot_token')
def _():
    u = ch(FIRST) + 'bot'
    return 'bots/%s/config.yaml' % u, 'homeserver: https://matrix.%s\nuser_id: "@%s:%s"\n%saccess_token: %s\ndevice_id: %s\n' % (domain(), u, domain(), S, syn_token(u), rs(10, UP)), 'syt_'


@P('slrnrc_nnrpaccess')
def _():
    return '.slrnrc', 'set username "%s"\nset hostname "%s"\n%snnrpaccess "news.%s" "%s" "%s"\nset wrap_flags 7\n' % (user(), domain(), S, domain(), user(), pw(True)), 'nnrpaccess'


@P('bitwarden_export_json')
def _():
    items = []
    target = R.randint(0, 2)
    lines = ['{', '  "encrypted": false,', '  "folders": [],', '  "items": [']
    for i in range(3):
        p = pw(True) if i == target else None
        lines += ['    {', '      "id": "%s",' % uuid4(), '      "type": 1,', '      "name": "%s",' % ch(ORG).capitalize(), '      "login": {',
                  '        "uris": [{"match": null, "uri": "https://%s/"}],' % domain(), '        "username": "%s",' % email(),
                  ('      ' + S if p else '      ') + '  "password": %s,' % (json.dumps(p) if p else 'null'), '        "totp": null', '      }', '    }' + (',' if i < 2 else '')]
    lines += ['  ]', '}']
    return 'Downloads/bitwarden_export_2024%02d%02d.json' % (R.randint(1, 12), R.randint(1, 28)), '\n'.join(lines) + '\n', 'one item with password'


@P('keepass_csv')
def _():
    return 'Documents/keepass-export.csv', '"Group","Title","Username","Password","URL","Notes"\n"Root","Router","admin","","http://192.168.1.1",""\n%s"Root/Work","%s VPN","%s","%s","https://vpn.%s",""\n' % (
        S, ch(ORG).capitalize(), user(), pw(True), domain()), 'csv row'


@P('chrome_passwords_csv')
def _():
    d = domain()
    return 'Downloads/Chrome Passwords.csv', 'name,url,username,password,note\n%s%s,https://%s/login,%s,%s,\n' % (S, d, d, email(), pw(True).replace(',', '')), 'browser export'


@P('firefox_logins_csv')
def _():
    d = domain()
    return 'Desktop/logins.csv', '"url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"\n%s"https://%s","%s","%s",,"https://%s","{%s}","1700000000000","1710000000000","1700000000000"\n' % (
        S, d, user(), pw(True), d, uuid4()), 'firefox export'


@P('cookies_txt_session')
def _():
    d = domain()
    return 'Downloads/cookies.txt', '# Netscape HTTP Cookie File\n.%s\tTRUE\t/\tFALSE\t1767225600\tcookie_consent\tyes\n%s.%s\tTRUE\t/\tTRUE\t1767225600\t__Secure-session\t%s\n' % (d, S, d, rs(64, B64U)), 'session cookie'


@P('crontab_mysqldump')
def _():
    return 'crontab.bak', 'SHELL=/bin/bash\nMAILTO=""\n# m h dom mon dow command\n%s30 2 * * * mysqldump -u %s -p\'%s\' --all-databases | gzip > $HOME/backups/db-$(date +\\%%F).sql.gz\n' % (S, user(), pw(True)), 'mysqldump -p'


@P('crontab_curl_user')
def _():
    return '.config/crontab', '*/15 * * * * /usr/local/bin/check-disk.sh\n%s0 * * * * curl -fsS -u %s:%s https://%s/api/heartbeat >/dev/null\n' % (S, user(), pw(True), host()), 'curl -u'


@P('systemd_env')
def _():
    return '.config/systemd/user/%s.service' % ch(WORDS), '[Unit]\nDescription=sync notes\nAfter=network-online.target\n\n[Service]\nType=simple\n%sEnvironment=API_TOKEN=%s\nExecStart=%%h/.local/bin/notesync --watch\nRestart=on-failure\n\n[Install]\nWantedBy=default.target\n' % (S, ch([gh_token(), glpat(), rs(40)])), 'Environment='


@P('systemd_borg')
def _():
    return '.config/systemd/user/borg-backup.service', '[Unit]\nDescription=Borg backup\n\n[Service]\nType=oneshot\nEnvironment=BORG_REPO=ssh://%s@%s/./repo\n%sEnvironment="BORG_PASSPHRASE=%s"\nExecStart=/usr/bin/borg create --stats ::{hostname}-{now} %%h/Documents\n' % (
        user(), host(), S, pw_phrase()), 'BORG_PASSPHRASE'


@P('launchd_plist')
def _():
    return 'Library/LaunchAgents/com.%s.sync.plist' % ch(ORG), '''<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>com.%s.sync</string>
  <key>EnvironmentVariables</key>
  <dict>
    <key>SYNC_API_KEY</key>
%s    <string>%s</string>
  </dict>
  <key>ProgramArguments</key>
  <array><string>/usr/local/bin/sync</string></array>
</dict>
</plist>
''' % (ch(ORG), S, rs(40, AN)), 'plist env'


@P('python_stripe')
def _():
    return 'projects/%s/billing.py' % ch(WORDS), 'import stripe\n\n%sstripe.api_key = "%s"\n\n\ndef charge(amount):\n    return stripe.PaymentIntent.create(amount=amount, currency="eur")\n' % (S, stripe_sk()), 'sk_live'


@P('ruby_twilio')
def _():
    return 'scripts/sms.rb', "require 'twilio-ruby'\n\naccount_sid = 'AC%s'\n%sauth_token = '%s'\nclient = Twilio::REST::Client.new(account_sid, auth_token)\n" % (rs(32, HEX), S, rs(32, HEX)), 'twilio auth token'


@P('perl_dbi')
def _():
    return 'scripts/report.pl', '#!/usr/bin/perl\nuse strict;\nuse DBI;\n%smy $dbh = DBI->connect("DBI:mysql:database=%s;host=%s", "%s", "%s") or die;\n' % (S, ch(WORDS), host(), user(), pw(True)), 'DBI connect'


@P('powershell_securestring')
def _():
    t = '$User = "%s\\%s"\r\n%s$Pass = ConvertTo-SecureString "%s" -AsPlainText -Force\r\n$Cred = New-Object System.Management.Automation.PSCredential($User, $Pass)\r\nEnter-PSSession -ComputerName %s -Credential $Cred\r\n' % (
        ch(ORG).upper(), user(), S, pw(True), host())
    return 'Documents/WindowsPowerShell/connect-%s.ps1' % ch(WORDS), t, 'CRLF'


@P('go_const')
def _():
    return 'go/src/%s/main.go' % ch(WORDS), 'package main\n\nimport "fmt"\n\nconst (\n\tbaseURL = "https://api.%s"\n%s\tapiKey  = "%s"\n)\n\nfunc main() { fmt.Println(baseURL) }\n' % (domain(), S, sendgrid()), 'SG.'


@P('node_discord_bot')
def _():
    return 'projects/%s-bot/index.js' % ch(WORDS), "const { Client, GatewayIntentBits } = require('discord.js');\nconst client = new Client({ intents: [GatewayIntentBits.Guilds] });\n\n%sclient.login('%s');\n" % (S, discord_bot()), 'discord token'


@P('php_mysqli')
def _():
    return 'public_html/config.php', "<?php\ndefine('DB_HOST', 'localhost');\ndefine('DB_USER', '%s');\n%sdefine('DB_PASSWORD', '%s');\ndefine('DB_NAME', '%s');\n" % (user(), S, pw(True), ch(WORDS)), 'wp-style define'


@P('lua_hammerspoon')
def _():
    return '.hammerspoon/init.lua', 'hs.loadSpoon("ReloadConfiguration")\nlocal hue = {}\nhue.bridge = "192.168.1.%d"\n%shue.username = "%s"\n' % (R.randint(2, 250), S, rs(40, AN)), 'hue bridge api user (secret)'


@P('renviron')
def _():
    return '.Renviron', 'R_LIBS_USER=~/R/library\n%sGITHUB_PAT=%s\n' % (S, gh_token()), 'GITHUB_PAT'


@P('batch_set_password')
def _():
    return 'Desktop/map-drives.bat', '@echo off\r\nset SHARE=\\\\%s\\data\r\n%sset PASS=%s\r\nnet use Z: %%SHARE%% /user:%s %%PASS%%\r\n' % (host(), S, pw(True), user()), 'bat'


@P('elisp_gptel')
def _():
    return '.emacs.d/init.el', "(require 'package)\n(setq inhibit-startup-screen t)\n%s(setq gptel-api-key \"%s\")\n(global-set-key (kbd \"C-c g\") #'gptel)\n" % (S, openai_key()), 'emacs setq'


@P('vimrc_let')
def _():
    return '.vimrc', 'set number\nsyntax on\n%slet g:copilot_chat_token = "%s"\nnnoremap <leader>w :w<CR>\n' % (S, anthropic_key()), 'vim let'


@P('nvim_lua')
def _():
    return '.config/nvim/lua/plugins/ai.lua', 'return {\n  "some/ai.nvim",\n  opts = {\n    provider = "openai",\n%s    api_key = "%s",\n  },\n}\n' % (S, openai_key()), 'lua table'


@P('fish_setgx')
def _():
    return '.config/fish/config.fish', 'set -gx EDITOR nvim\nfish_add_path ~/.local/bin\n%sset -gx HF_TOKEN %s\n' % (S, hf_token()), 'fish set -gx'


@P('nushell_env')
def _():
    return '.config/nushell/env.nu', "$env.EDITOR = 'hx'\n%s$env.OPENAI_API_KEY = '%s'\n" % (S, openai_key()), 'nushell'


@P('tcsh_setenv')
def _():
    return '.tcshrc', 'set prompt = "%%n@%%m:%%~%% "\nsetenv PATH ${HOME}/bin:${PATH}\n%ssetenv DIGITALOCEAN_TOKEN %s\n' % (S, dop()), 'tcsh setenv'


@P('ksh_export')
def _():
    return '.kshrc', 'set -o emacs\nPS1="$ "\n%sexport TF_TOKEN_app_terraform_io=%s\n' % (S, tfc_token()), 'ksh'


@P('note_wifi_en')
def _():
    return 'Documents/notes/home.md', '# Home stuff\n\n- bins go out on Tuesday\n- router admin at 192.168.1.1\n%s- wifi password: %s\n- plumber: %s\n' % (S, pw(), '+44 20 7946 0%03d' % R.randint(0, 999)), 'english note'


I18N = [('de', 'Passwort', 'Notizen.txt', 'Zugang zum NAS'), ('fr', 'mot de passe', 'notes.txt', 'Accès au serveur'),
        ('es', 'contraseña', 'notas.txt', 'Acceso al router'), ('ru', 'пароль', 'заметки.txt', 'Доступ к серверу'),
        ('ja', 'パスワード', 'メモ.txt', 'サーバーへのアクセス'), ('zh', '密码', '笔记.txt', '服务器登录'),
        ('pt', 'senha', 'anotacoes.txt', 'Acesso ao servidor'), ('pl', 'hasło', 'notatki.txt', 'Dostęp do serwera'),
        ('nl', 'wachtwoord', 'notities.txt', 'Toegang tot de server'), ('it', 'password', 'appunti.txt', 'Accesso al server'),
        ('tr', 'şifre', 'notlar.txt', 'Sunucu erişimi'), ('sv', 'lösenord', 'anteckningar.txt', 'Åtkomst till servern')]


@P('note_i18n')
def _():
    lang, word, fn, head = ch(I18N)
    sep = '：' if lang in ('zh', 'ja') else ch([': ', ' : ', ' = ', ' - '])
    return 'Documents/' + fn, '%s\n%s\n\nhost: %s\nuser: %s\n%s%s%s%s\n' % (head, '=' * 10, host(), user(), S, word, sep, pw()), lang


@P('note_bank_pin_style')
def _():
    return 'Documents/accounts.txt', 'Online banking\n  customer no: %d\n%s  login pw %s\n  (changed %d/%d)\n' % (R.randint(10 ** 7, 10 ** 8), S, pw(), R.randint(1, 12), R.randint(2019, 2024)), 'terse note'


@P('todo_md_token')
def _():
    return 'todo.md', '# TODO\n\n- [ ] renew passport\n- [x] migrate blog to new host\n%s- [ ] rotate the CI token, current one is %s\n- [ ] call mum\n' % (S, ch([glpat(), gh_token(), npm_token()])), 'todo'


@P('csv_accounts')
def _():
    return 'Documents/accounts.csv', 'service;login;pass;since\n%s%s;%s;%s;%d\n' % (S, ch(ORG), email(), pw(True).replace(';', ''), R.randint(2015, 2024)), 'semicolon csv'


@P('toml_config')
def _():
    return '.config/%s/config.toml' % ch(WORDS), '[server]\nlisten = "127.0.0.1:8080"\n\n[upstream]\nurl = "https://api.%s"\n%sapi_key = "%s"\ntimeout = 30\n' % (domain(), S, ch([rs(32, HEX), rs(40), 'key_' + rs(32)])), 'toml api_key'


@P('ini_config')
def _():
    return '.config/%s.ini' % ch(WORDS), '[general]\nlog_level = info\n\n[database]\nhost = %s\nuser = %s\n%spasswd = %s\n' % (host(), user(), S, pw(True)), 'ini passwd'


@P('filezilla_b64')
def _():
    return '.config/filezilla/sitemanager.xml', '''<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<FileZilla3 version="3.66.1" platform="*nix">
  <Servers>
    <Server>
      <Host>%s</Host>
      <Port>22</Port>
      <Protocol>1</Protocol>
      <Type>0</Type>
      <User>%s</User>
%s      <Pass encoding="base64">%s</Pass>
      <Logontype>1</Logontype>
      <Name>%s</Name>
    </Server>
  </Servers>
</FileZilla3>
''' % (host(), user(), S, b64(pw().encode()), ch(WORDS)), 'base64 password'


@P('tfvars')
def _():
    return 'infra/terraform.tfvars', 'region       = "eu-central-1"\ninstance_type = "t3.small"\n%scloudflare_api_token = "%s"\n' % (S, rs(40, B64U)), 'tfvars'


@P('terraform_provider')
def _():
    a, s = aws_pair()
    return 'infra/main.tf', 'provider "aws" {\n  region     = "us-east-1"\n  access_key = "%s"\n%s  secret_key = "%s"\n}\n\nresource "aws_s3_bucket" "b" {\n  bucket = "%s-logs"\n}\n' % (a, S, s, ch(ORG)), 'hcl'


@P('tfc_credentials_json')
def _():
    return '.terraform.d/credentials.tfrc.json', '{\n  "credentials": {\n    "app.terraform.io": {\n%s      "token": "%s"\n    }\n  }\n}\n' % (S, tfc_token()), 'atlasv1'


@P('pulumi_credentials')
def _():
    return '.pulumi/credentials.json', '{\n    "current": "https://api.pulumi.com",\n    "accessTokens": {\n%s        "https://api.pulumi.com": "pul-%s"\n    },\n    "accounts": {}\n}\n' % (S, rs(40, HEX)), 'pul-'


@P('gitlab_ci_literal')
def _():
    return 'projects/%s/.gitlab-ci.yml' % ch(WORDS), 'stages: [build, deploy]\n\nvariables:\n  DOCKER_DRIVER: overlay2\n%s  DEPLOY_TOKEN: "%s"\n\ndeploy:\n  stage: deploy\n  script:\n    - ./deploy.sh\n' % (S, glpat()), 'literal var'


@P('gha_env_literal')
def _():
    return 'projects/%s/.github/workflows/release.yml' % ch(WORDS), 'name: release\non: [push]\njobs:\n  publish:\n    runs-on: ubuntu-latest\n    env:\n%s      NPM_TOKEN: %s\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm publish\n' % (S, npm_token()), 'literal in workflow'


@P('circleci_literal')
def _():
    return 'projects/%s/.circleci/config.yml' % ch(WORDS), 'version: 2.1\njobs:\n  build:\n    docker:\n      - image: cimg/python:3.12\n        auth:\n          username: %s\n%s          password: %s\n    steps:\n      - checkout\n' % (user(), S, pw(True)), 'docker auth'


@P('jenkinsfile_literal')
def _():
    return 'projects/%s/Jenkinsfile' % ch(WORDS), "pipeline {\n  agent any\n  environment {\n%s    SONAR_TOKEN = 'squ_%s'\n  }\n  stages { stage('scan') { steps { sh 'sonar-scanner' } } }\n}\n" % (S, rs(40, HEX)), 'squ_'


@P('travis_literal')
def _():
    return 'projects/%s/.travis.yml' % ch(WORDS), 'language: python\npython: "3.11"\nenv:\n  global:\n%s    - CODECOV_TOKEN=%s\nscript: pytest\n' % (S, uuid4() if False else rs(32, HEX)), 'hex token'


@P('drone_literal')
def _():
    return 'projects/%s/.drone.yml' % ch(WORDS), 'kind: pipeline\nname: default\nsteps:\n- name: notify\n  image: plugins/slack\n  settings:\n%s    webhook: %s\n' % (S, slack_hook()), 'slack hook'


@P('solana_id_json')
def _():
    k = ed_key()
    seed, pub = ed_raw(k)
    return '.config/solana/id.json', S + '[' + ','.join(str(x) for x in seed + pub) + ']', 'byte array keypair'


@P('eth_private_env')
def _():
    return 'projects/%s-contracts/.env' % ch(WORDS), 'RPC_URL=https://eth-sepolia.example-rpc.%s/v2\n%sDEPLOYER_PRIVATE_KEY=0x%s\nETHERSCAN_API_KEY=\n' % (ch(TLD), S, rs(64, HEX)), '0x hex key'


@P('btc_wif_note')
def _():
    return 'Documents/crypto/paper-wallet.txt', 'Paper wallet printed %d-%02d\naddress: 1%s\n%sprivate key (WIF): %s\n' % (R.randint(2014, 2020), R.randint(1, 12), rs(33, B58), S, wif()), 'WIF'


@P('electrum_xprv')
def _():
    return '.electrum/wallets/default_wallet', '{\n    "keystore": {\n        "type": "bip32",\n        "xpub": "%s",\n%s        "xprv": "%s"\n    },\n    "wallet_type": "standard",\n    "use_encryption": false\n}\n' % (xpub(), S, xprv()), 'xprv'


@P('seed_phrase_note')
def _():
    ws = ' '.join(ch(BIPW) for _ in range(ch([12, 24])))
    return 'Documents/' + ch(['wallet.txt', 'ledger-backup.txt', 'seed.txt']), 'Ledger Nano backup\n%srecovery phrase: %s\n' % (S, ws), 'bip39-ish mnemonic'


@P('restic_env_script')
def _():
    return 'bin/backup.sh', '#!/bin/bash\nexport RESTIC_REPOSITORY=b2:%s-backup:/laptop\nexport B2_ACCOUNT_ID=%s\n%sexport RESTIC_PASSWORD=\'%s\'\nrestic backup ~/Documents ~/Pictures\n' % (ch(ORG), rs(25, HEX), S, pw_phrase()), 'RESTIC_PASSWORD'


@P('restic_password_file')
def _():
    return '.config/restic/password', S + pw_random(R.randint(24, 40)) + '\n', 'bare password file'


@P('rclone_s3')
def _():
    a, s = aws_pair()
    return '.config/rclone/rclone.conf', '[s3]\ntype = s3\nprovider = AWS\naccess_key_id = %s\n%ssecret_access_key = %s\nregion = eu-west-1\n' % (a, S, s), 'rclone s3'


@P('rclone_drive_token')
def _():
    tok = json.dumps({'access_token': ya29(), 'token_type': 'Bearer', 'refresh_token': google_refresh(), 'expiry': '2024-05-01T10:00:00.1234+02:00'}, separators=(',', ':'))
    return '.config/rclone/rclone.conf', '[gdrive]\ntype = drive\nscope = drive\n%stoken = %s\nteam_drive =\n' % (S, tok), 'oauth token json'


@P('duplicity_cron')
def _():
    return 'bin/duplicity-nightly.sh', '#!/bin/sh\n%sexport PASSPHRASE="%s"\nduplicity --full-if-older-than 1M $HOME/Documents sftp://%s@%s/backup\nunset PASSPHRASE\n' % (S, pw_phrase(), user(), host()), 'PASSPHRASE'


@P('kopia_env')
def _():
    return '.config/kopia/kopia.env', 'KOPIA_CHECK_FOR_UPDATES=false\n%sKOPIA_PASSWORD=%s\n' % (S, pw(True)), 'KOPIA_PASSWORD'


@P('hass_secrets')
def _():
    return 'homeassistant/secrets.yaml', '# Use this file to store secrets like usernames and passwords.\nlatitude: %.4f\nlongitude: %.4f\nmqtt_user: homeassistant\n%smqtt_password: "%s"\n' % (R.uniform(40, 60), R.uniform(-5, 20), S, pw(True)), 'secrets.yaml'


@P('esphome_api_key')
def _():
    return 'esphome/%s.yaml' % ch(WORDS), 'esphome:\n  name: %s\n\nesp32:\n  board: esp32dev\n\napi:\n  encryption:\n%s    key: "%s"\n\nota:\n  - platform: esphome\n' % (ch(WORDS), S, b64(rb(32))), 'api encryption key'


@P('zigbee2mqtt')
def _():
    return 'homeassistant/zigbee2mqtt/configuration.yaml', 'homeassistant: true\nmqtt:\n  base_topic: zigbee2mqtt\n  server: mqtt://localhost\n  user: z2m\n%s  password: %s\nserial:\n  port: /dev/ttyUSB0\n' % (S, pw(True)), 'mqtt password'


@P('minecraft_launcher_accounts')
def _():
    return '.minecraft/launcher_accounts.json', '{\n  "accounts": {\n    "%s": {\n%s      "accessToken": "%s",\n      "minecraftProfile": {"id": "%s", "name": "%s"},\n      "type": "Xbox"\n    }\n  }\n}\n' % (
        rs(32, HEX), S, jwt({'xuid': str(R.randint(10 ** 15, 10 ** 16)), 'agg': 'Adult', 'sub': uuid4(), 'auth': 'XBOX', 'exp': R.randint(1700000000, 1800000000)}), rs(32, HEX), ch(PETS) + str(R.randint(1, 99))), 'accessToken jwt'


@P('minecraft_rcon')
def _():
    return 'games/mc-server/server.properties', '#Minecraft server properties\nenable-rcon=true\nrcon.port=25575\n%srcon.password=%s\nmotd=A Minecraft Server\nmax-players=8\n' % (S, pw(True)), 'rcon'


@P('factorio_settings')
def _():
    return 'games/factorio/server-settings.json', '{\n  "name": "%s",\n  "visibility": {"public": false, "lan": true},\n  "username": "%s",\n  "password": "",\n%s  "token": "%s",\n  "game_password": ""\n}\n' % (ch(WORDS), user(), S, rs(30, HEX)), 'factor.io token'


@P('telegram_bot_config')
def _():
    return 'bots/%s/config.ini' % ch(WORDS), '[telegram]\n%sbot_token = %s\nchat_id = -100%d\n' % (S, telegram(), R.randint(10 ** 9, 10 ** 10)), 'telegram'


@P('slack_webhook_script')
def _():
    return 'bin/notify.py', '#!/usr/bin/env python3\nimport json, sys, urllib.request\n\n%sWEBHOOK = "%s"\n\nreq = urllib.request.Request(WEBHOOK, json.dumps({"text": sys.argv[1]}).encode())\nurllib.request.urlopen(req)\n' % (S, slack_hook()), 'slack webhook'


@P('discord_webhook_sh')
def _():
    return 'bin/discord-notify.sh', '#!/bin/sh\n%sHOOK=%s\ncurl -H "Content-Type: application/json" -d "{\\"content\\":\\"$1\\"}" "$HOOK"\n' % (S, discord_hook()), 'discord webhook'


@P('slack_bot_env')
def _():
    return 'projects/%s/.env' % ch(WORDS), 'SLACK_APP_NAME=%s\n%sSLACK_BOT_TOKEN=%s\n' % (ch(WORDS), S, ch([slack_bot(), slack_user()])), 'xoxb/xoxp'


@P('aider_conf')
def _():
    return '.aider.conf.yml', 'model: claude-3-5-sonnet\nauto-commits: false\n%santhropic-api-key: %s\n' % (S, anthropic_key()), 'sk-ant'


@P('hf_token_file')
def _():
    return '.cache/huggingface/token', S + hf_token(), 'bare token file'


@P('vault_token_file')
def _():
    return '.vault-token', S + vault_token(), 'bare file'


@P('doppler_yaml')
def _():
    return '.doppler/.doppler.yaml', 'scoped:\n    /:\n%s        token: dp.ct.%s\n        api-host: https://api.doppler.com\n' % (S, rs(43)), 'dp.ct'


@P('doctl_config')
def _():
    return '.config/doctl/config.yaml', '%saccess-token: %s\ncontext: default\noutput: text\n' % (S, dop()), 'dop_v1'


@P('shopify_env')
def _():
    return 'projects/%s-shop/.env' % ch(WORDS), 'SHOPIFY_STORE=%s.myshopify.com\n%sSHOPIFY_ADMIN_TOKEN=shpat_%s\n' % (ch(WORDS), S, rs(32, HEX)), 'shpat_'


@P('mailchimp_settings')
def _():
    return 'projects/%s/settings_local.py' % ch(WORDS), 'DEBUG = False\nALLOWED_HOSTS = ["*"]\n%sMAILCHIMP_API_KEY = "%s-us%d"\n' % (S, rs(32, HEX), R.randint(1, 21)), 'mailchimp'


@P('mailgun_settings')
def _():
    return 'projects/%s/config/mail.rb' % ch(WORDS), "Rails.application.configure do\n  config.action_mailer.delivery_method = :mailgun\n  config.action_mailer.mailgun_settings = {\n%s    api_key: 'key-%s',\n    domain: 'mg.%s'\n  }\nend\n" % (S, rs(32, HEX), domain()), 'key-'


@P('datadog_yaml')
def _():
    return '.datadog-agent/datadog.yaml', '%sapi_key: %s\nsite: datadoghq.eu\nlogs_enabled: true\n' % (S, rs(32, HEX)), 'hex api key'


@P('wrangler_toml')
def _():
    return '.wrangler/config/default.toml', '%soauth_token = "%s"\nexpiration_time = "2024-0%d-01T10:00:00.000Z"\nrefresh_token = ""\n' % (S, rs(43, B64U) + '.' + rs(43, B64U), R.randint(1, 9)), 'oauth'


@P('jira_zshenv')
def _():
    return '.zshenv', 'export JIRA_SERVER=https://%s.atlassian.net\n%sexport JIRA_API_TOKEN=%s\n' % (ch(ORG), S, atlassian()), 'ATATT'


@P('bitbucket_app_password')
def _():
    return '.git-credentials', '%shttps://%s:ATBB%s%s@bitbucket.org\n' % (S, user(), rs(28), rs(8, '0123456789ABCDEF')), 'ATBB'


@P('azure_devops_pat')
def _():
    return '.git-credentials', '%shttps://%s:%s@dev.azure.com\n' % (S, user(), azure_devops_pat()), 'ado pat'


@P('braintree_config')
def _():
    return 'projects/%s/config/payments.yml' % ch(WORDS), 'production:\n  gateway: braintree\n%s  access_token: "%s"\n' % (S, braintree()), 'braintree'


@P('square_env')
def _():
    return 'projects/%s/.env.production' % ch(WORDS), 'SQUARE_ENV=production\n%sSQUARE_ACCESS_TOKEN=%s\n' % (S, square()), 'EAAA'


@P('postman_env')
def _():
    return 'Postman/%s.postman_environment.json' % ch(WORDS), '{\n\t"id": "%s",\n\t"name": "prod",\n\t"values": [\n\t\t{"key": "baseUrl", "value": "https://api.%s", "enabled": true},\n%s\t\t{"key": "apiKey", "value": "PMAK-%s-%s", "enabled": true}\n\t]\n}\n' % (
        uuid4(), domain(), S, rs(24, HEX), rs(34, HEX)), 'PMAK'


@P('grafana_sa')
def _():
    return '.config/grafana/provisioning.env', 'GRAFANA_URL=https://grafana.%s\n%sGRAFANA_TOKEN=glsa_%s_%s\n' % (domain(), S, rs(32), rs(8, HEX)), 'glsa'


@P('grafana_cloud')
def _():
    return '.config/alloy/config.alloy', 'prometheus.remote_write "default" {\n  endpoint {\n    url = "https://prometheus-prod-01-eu-west-0.grafana.net/api/prom/push"\n    basic_auth {\n      username = "%d"\n%s      password = "%s"\n    }\n  }\n}\n' % (R.randint(100000, 999999), S, grafana_cloud()), 'glc_ (HCL-ish)'


@P('newrelic_cli')
def _():
    return '.newrelic/newrelic-cli.json', '{\n  "*": {\n    "defaultProfile": "default"\n  },\n  "default": {\n%s    "apiKey": "NRAK-%s",\n    "region": "US",\n    "accountID": %d\n  }\n}\n' % (S, rs(27, UP + DI), R.randint(10 ** 6, 10 ** 7)), 'NRAK'


@P('sentryclirc')
def _():
    return '.sentryclirc', '[defaults]\norg = %s\n\n[auth]\n%stoken = sntryu_%s\n' % (ch(ORG), S, rs(64, HEX)), 'sntryu'


@P('databrickscfg')
def _():
    return '.databrickscfg', '[DEFAULT]\nhost = https://adb-%d.%d.azuredatabricks.net\n%stoken = dapi%s\n' % (R.randint(10 ** 15, 10 ** 16), R.randint(1, 19), S, rs(32, HEX)), 'dapi'


@P('fly_config')
def _():
    return '.fly/config.yml', '%saccess_token: fo1_%s\nmetrics_token: ""\nsend_metrics: true\n' % (S, rs(43, B64U)), 'fo1_'


@P('tailscale_setup')
def _():
    return 'bin/pi-setup.sh', '#!/bin/bash\nsudo apt-get install -y tailscale\n%ssudo tailscale up --authkey=%s --ssh\n' % (S, tailscale()), 'tskey'


@P('okta_yaml')
def _():
    return '.okta/okta.yaml', 'okta:\n  client:\n    orgUrl: https://%s.okta.com\n%s    token: 00%s\n' % (ch(ORG), S, rs(40, B64U)), 'okta 00'


@P('aliyun_config')
def _():
    return '.aliyun/config.json', '{\n\t"current": "default",\n\t"profiles": [\n\t\t{\n\t\t\t"name": "default",\n\t\t\t"mode": "AK",\n\t\t\t"access_key_id": "LTAI%s",\n%s\t\t\t"access_key_secret": "%s",\n\t\t\t"region_id": "cn-hangzhou"\n\t\t}\n\t]\n}\n' % (rs(20), S, rs(30)), 'aliyun AK'


@P('fcm_server_key')
def _():
    return 'projects/%s/push/settings.json' % ch(WORDS), '{\n  "fcm": {\n%s    "serverKey": "%s",\n    "senderId": "%d"\n  }\n}\n' % (S, fcm(), R.randint(10 ** 11, 10 ** 12)), 'AAAA:APA91b'


@P('twitter_bearer')
def _():
    return 'scripts/tweets.py', 'import requests\n\n%sBEARER = "%s"\nr = requests.get("https://api.twitter.com/2/tweets/search/recent?query=foo", headers={"Authorization": f"Bearer {BEARER}"})\n' % (S, twitter_bearer()), 'twitter bearer'


@P('facebook_token')
def _():
    return 'scripts/fb_insights.js', "const fetch = require('node-fetch');\n%sconst PAGE_TOKEN = '%s';\nfetch(`https://graph.facebook.com/v19.0/me?access_token=${PAGE_TOKEN}`);\n" % (S, fb_token()), 'EAA'


@P('mapbox_netrc')
def _():
    return '.netrc', 'machine api.mapbox.com\nlogin mapbox\n%spassword %s\n' % (S, mapbox_sk(user())), 'mapbox sk.'


@P('bash_history_bearer')
def _():
    L = ['ls -la', 'cd projects', 'git pull', 'docker ps', 'vim notes.md', 'htop', 'make test']
    L = around(R.sample(L, 5), S + 'curl -H "Authorization: Bearer %s" https://api.%s/v1/me' % (jwt(), domain()))
    return '.bash_history', '\n'.join(L) + '\n', 'history'


@P('zsh_history_export')
def _():
    t0 = R.randint(1700000000, 1720000000)
    cmds = ['git status', 'cd ~/src', 'ls', 'kubectl get pods', 'brew upgrade']
    L = [': %d:0;%s' % (t0 + i * 37, c) for i, c in enumerate(R.sample(cmds, 4))]
    L = around(L, S + ': %d:0;export OPENAI_API_KEY=%s' % (t0 + 999, openai_key()))
    return '.zsh_history', '\n'.join(L) + '\n', 'zsh extended history'


@P('mysql_history')
def _():
    return '.mysql_history', 'show databases;\nuse %s;\n%sCREATE USER \'%s\'@\'%%\' IDENTIFIED BY \'%s\';\nflush privileges;\n' % (ch(WORDS), S, user(), pw(True)), 'IDENTIFIED BY'


@P('ipynb_env')
def _():
    src = json.dumps('os.environ["OPENAI_API_KEY"] = "%s"\n' % openai_key())
    return 'notebooks/%s.ipynb' % ch(WORDS), '{\n "cells": [\n  {\n   "cell_type": "code",\n   "execution_count": 1,\n   "metadata": {},\n   "outputs": [],\n   "source": [\n    "import os\\n",\n%s    %s,\n    "import openai"\n   ]\n  }\n ],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n' % (S, src), 'notebook source'


@P('bash_aliases_sshpass')
def _():
    return '.bash_aliases', 'alias update="sudo apt update && sudo apt upgrade"\n%salias nas=\'sshpass -p "%s" ssh admin@%s\'\n' % (S, pw(True), host()), 'sshpass'


@P('repo_git_config_token')
def _():
    return 'src/%s/.git/config' % ch(WORDS), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[remote "origin"]\n%s\turl = https://x-access-token:%s@github.com/%s/%s.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' % (
        S, gh_token('ghs_'), ch(ORG), ch(WORDS)), 'remote url'


@P('ansible_inventory')
def _():
    return 'ansible/inventory/hosts.ini', '[web]\n%s ansible_user=deploy\n\n[web:vars]\n%sansible_become_password=%s\n' % (host(), S, pw(True)), 'become pw'


@P('k8s_secret_data_b64')
def _():
    return 'k8s/%s-secret.yaml' % ch(WORDS), 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\ntype: Opaque\ndata:\n  username: %s\n%s  password: %s\n' % (b64(user().encode()), S, b64(pw().encode())), 'base64 data'


@P('helm_values')
def _():
    return 'k8s/values-prod.yaml', 'replicaCount: 2\npostgresql:\n  auth:\n    username: app\n%s    password: "%s"\n    database: app\n' % (S, pw(True)), 'helm'


@P('vscode_restclient')
def _():
    return '.config/Code/User/settings.json', '{\n  "rest-client.environmentVariables": {\n    "prod": {\n      "host": "https://api.%s",\n%s      "token": "%s"\n    }\n  }\n}\n' % (domain(), S, jwt()), 'rest-client'


@P('jetbrains_http_private_env')
def _():
    return 'projects/%s/http-client.private.env.json' % ch(WORDS), '{\n  "dev": {\n%s    "apiKey": "%s"\n  }\n}\n' % (S, 'sk_live_' + rs(24)), 'private env'


@P('smbcredentials')
def _():
    return '.smbcredentials', 'username=%s\n%spassword=%s\ndomain=WORKGROUP\n' % (user(), S, pw(True)), 'cifs'


@P('davfs2_secrets')
def _():
    return '.davfs2/secrets', '# davfs2 secrets\n%shttps://cloud.%s/remote.php/dav/files/%s %s %s\n' % (S, domain(), user(), user(), pw(True).replace(' ', '')), 'davfs'


@P('transmission_rpc')
def _():
    return '.config/transmission-daemon/settings.json', '{\n    "download-dir": "/home/%s/Downloads",\n    "rpc-authentication-required": true,\n%s    "rpc-password": "%s",\n    "rpc-port": 9091,\n    "rpc-username": "%s"\n}\n' % (
        user(), S, pw(True), user()), 'plaintext before hashing'


@P('syncthing_apikey')
def _():
    return '.config/syncthing/config.xml', '<configuration version="37">\n    <gui enabled="true" tls="false">\n        <address>127.0.0.1:8384</address>\n%s        <apikey>%s</apikey>\n        <theme>default</theme>\n    </gui>\n</configuration>\n' % (S, rs(32, AN)), 'gui apikey'


@P('kodi_advancedsettings')
def _():
    return '.kodi/userdata/advancedsettings.xml', '<advancedsettings>\n  <videodatabase>\n    <type>mysql</type>\n    <host>%s</host>\n    <port>3306</port>\n    <user>kodi</user>\n%s    <pass>%s</pass>\n  </videodatabase>\n</advancedsettings>\n' % (host(), S, pw(True)), 'mysql pass'


@P('jenkins_jobs_ini')
def _():
    return '.config/jenkins_jobs/jenkins_jobs.ini', '[jenkins]\nuser=%s\n%spassword=11%s\nurl=https://ci.%s\n' % (user(), S, rs(32, HEX), domain()), 'jenkins api token'


@P('reg_export_utf16')
def _():
    t = 'Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\Sessions\\%s]\r\n"HostName"="%s"\r\n"ProxyUsername"="%s"\r\n%s"ProxyPassword"="%s"\r\n"PortNumber"=dword:00000016\r\n' % (
        ch(WORDS), host(), user(), S, pw(True))
    return 'Documents/putty-sessions.reg', ('utf-16', t), 'UTF-16LE reg export'


@P('openai_shell_rc')
def _():
    L = sh_fill()
    L = around(L, S + 'export ANTHROPIC_API_KEY=%s' % anthropic_key())
    return '.bashrc', '\n'.join(L) + '\n', 'sk-ant export'


@P('google_api_key_js')
def _():
    return 'projects/%s/scripts/geocode.mjs' % ch(WORDS), "const base = 'https://maps.googleapis.com/maps/api/geocode/json';\n%sconst key = '%s';\nconst r = await fetch(`${base}?address=${encodeURIComponent(process.argv[2])}&key=${key}`);\n" % (S, google_api()), 'AIza server-side'


@P('google_oauth_client_secret')
def _():
    return 'Downloads/client_secret_%d-%s.apps.googleusercontent.com.json' % (R.randint(10 ** 11, 10 ** 12), rs(32, LO + DI)), S + '{"installed":{"client_id":"%d-%s.apps.googleusercontent.com","project_id":"%s","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"%s","redirect_uris":["http://localhost"]}}' % (
        R.randint(10 ** 11, 10 ** 12), rs(32, LO + DI), ch(ORG) + '-' + ch(WORDS), gocspx()), 'one-line json'


@P('supabase_env')
def _():
    return 'projects/%s/.env.local' % ch(WORDS), 'NEXT_PUBLIC_SITE_URL=http://localhost:3000\n%sSUPABASE_ACCESS_TOKEN=sbp_%s\n' % (S, rs(40, HEX)), 'sbp_'


@P('airtable_script')
def _():
    return 'scripts/airtable_sync.py', 'import requests\nBASE = "app%s"\n%sTOKEN = "pat%s.%s"\n' % (rs(14), S, rs(14), rs(64, HEX)), 'airtable pat'


@P('linear_raycast')
def _():
    return '.config/raycast/extensions/linear.json', '{\n  "workspace": "%s",\n%s  "apiKey": "lin_api_%s"\n}\n' % (ch(ORG), S, rs(40)), 'lin_api'


@P('notion_token')
def _():
    return '.config/notion-backup/config.yaml', 'space_id: %s\nexport_type: markdown\n%stoken: secret_%s\n' % (uuid4(), S, rs(43)), 'secret_'


@P('dropbox_token')
def _():
    return '.config/%s/dropbox.json' % ch(WORDS), '{"app_key": "%s", %s"access_token": "sl.%s"}\n' % (rs(15, LO + DI), S, rs(136, B64U)), 'sl.'


@P('sasl_json_escaped_pw')
def _():
    p = pw() + '"\\' + rs(3)
    return '.config/%s/accounts.json' % ch(WORDS), '{\n  "accounts": [\n    {\n      "server": "%s",\n      "user": "%s",\n%s      "password": %s\n    }\n  ]\n}\n' % (host(), user(), S, json.dumps(p)), 'json-escaped quote/backslash'


@P('basic_auth_header_b64')
def _():
    a = b64(('%s:%s' % (user(), pw())).encode())
    return 'scripts/poll_status.sh', '#!/bin/bash\nURL=https://%s/api/status\n%scurl -s -H "Authorization: Basic %s" "$URL" | jq .\n' % (host(), S, a), 'basic b64'


@P('proxy_env_url')
def _():
    return '.config/environment.d/proxy.conf', '%shttps_proxy=http://%s:%s@proxy.%s:3128\nno_proxy=localhost,127.0.0.1\n' % (S, user(), urllib.parse.quote(pw(), safe=''), domain()), 'proxy creds'


@P('xml_connection_string')
def _():
    return 'source/repos/%s/App.config' % ch(CAPWORDS), '<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <connectionStrings>\n%s    <add name="Default" connectionString="Server=%s;Database=%s;User Id=%s;Password=%s;" providerName="System.Data.SqlClient" />\n  </connectionStrings>\n</configuration>\n' % (
        S, host(), ch(CAPWORDS), user(), pw(True).replace(';', '')), 'ado.net connstr'


@P('hcl_nomad_vault')
def _():
    return '.config/nomad/client.hcl', 'vault {\n  enabled = true\n  address = "https://vault.%s:8200"\n%s  token   = "%s"\n}\n' % (domain(), S, vault_token()), 'hvs in hcl'


@P('yaml_anchor_generic')
def _():
    return '.config/%s/credentials.yml' % ch(WORDS), 'defaults: &defaults\n  timeout: 10\nproduction:\n  <<: *defaults\n  endpoint: https://%s\n%s  secret: %s\n' % (host(), S, rs(R.randint(24, 48), AN + '_-')), 'generic random secret'


@P('properties_generic')
def _():
    return '.config/%s/app.properties' % ch(WORDS), 'app.name=%s\nmail.smtp.host=smtp.%s\nmail.smtp.user=%s\n%smail.smtp.password=%s\n' % (ch(WORDS), domain(), email(), S, pw(True)), 'properties'


@P('ssh_config_comment_pw')
def _():
    return '.ssh/config', 'Host %s\n    HostName %s\n    User admin\n%s    # password: %s\n    Port 2222\n' % (ch(WORDS), host(), S, pw(True)), 'password in comment'


# ================================================================ NEGATIVES
PLACE = ['<token>', '<YOUR_API_KEY>', '${API_TOKEN}', '{{ api_token }}', 'changeme', 'xxxxxxxxxxxxxxxxxxxx', '********',
         'your_key_here', 'REPLACE_ME', 'TODO', '', '<password>', '${PASSWORD}', '%PASSWORD%', 'CHANGE_ME', '...',
         'your-api-key', 'put-your-token-here', '$SECRET', '{{ .Values.password }}']


def place():
    return ch(PLACE)


@N('aws_credential_process')
def _():
    return '.aws/config', '[default]\nregion = eu-west-1\noutput = json\n\n[profile work]\ncredential_process = aws-vault export --format=json work\n\n[profile sso]\nsso_start_url = https://%s.awsapps.com/start\nsso_region = eu-west-1\nsso_account_id = %d\nsso_role_name = ReadOnly\n' % (ch(ORG), R.randint(10 ** 11, 10 ** 12)), 'no static key'


@N('aws_doc_example')
def _():
    return 'Documents/notes/aws-cli.md', '# aws cli notes\n\nThe docs use these example values:\n\n```\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n```\n\nReal ones live in aws-vault.\n', 'published example'


@N('npmrc_env_ref')
def _():
    return '.npmrc', 'registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n@%s:registry=https://npm.pkg.github.com\n' % ch(ORG), '${NPM_TOKEN}'


@N('docker_credstore')
def _():
    return '.docker/config.json', '{\n\t"auths": {\n\t\t"ghcr.io": {},\n\t\t"https://index.docker.io/v1/": {}\n\t},\n\t"credsStore": "%s"\n}\n' % ch(['desktop', 'osxkeychain', 'pass', 'secretservice']), 'credsStore'


@N('gitconfig_helper')
def _():
    return '.gitconfig', '[user]\n\tname = %s\n\temail = %s\n\tsigningkey = %s\n[credential]\n\thelper = %s\n[commit]\n\tgpgsign = true\n' % (
        ch(FIRST).capitalize(), email(), rs(16, '0123456789ABCDEF'), ch(['osxkeychain', 'libsecret', 'cache --timeout=3600', 'manager'])), 'helper + signing key id'


@N('msmtp_passwordeval')
def _():
    return '.msmtprc', 'account default\nhost smtp.%s\nport 587\nauth on\ntls on\nuser %s\npasswordeval "pass show mail/%s"\n' % (domain(), email(), ch(WORDS)), 'passwordeval'


@N('mbsync_passcmd')
def _():
    return '.mbsyncrc', 'IMAPAccount gmail\nHost imap.gmail.com\nUser %s\nPassCmd "secret-tool lookup service imap user %s"\nSSLType IMAPS\n' % (email(), user()), 'PassCmd'


@N('offlineimap_eval')
def _():
    return '.offlineimaprc', '[general]\npythonfile = ~/.offlineimap.py\n\n[Repository remote]\ntype = IMAP\nremoteuser = %s\nremotepasseval = get_pass("%s")\n' % (email(), ch(WORDS)), 'remotepasseval'


@N('pypirc_placeholder')
def _():
    return '.pypirc', '[pypi]\nusername = __token__\npassword = %s\n' % ch(['<your PyPI token>', 'pypi-<token>', '${PYPI_TOKEN}', '']), 'placeholder'


@N('maven_env_ref')
def _():
    return '.m2/settings.xml', '<settings>\n  <servers>\n    <server>\n      <id>central</id>\n      <username>${env.MAVEN_USERNAME}</username>\n      <password>${env.MAVEN_PASSWORD}</password>\n    </server>\n  </servers>\n</settings>\n', 'env ref'


@N('gradle_placeholders')
def _():
    return '.gradle/gradle.properties', 'org.gradle.jvmargs=-Xmx2048m\norg.gradle.parallel=true\n# signing.keyId=\n# signing.password=\nsigning.secretKeyRingFile=/home/%s/.gnupg/secring.gpg\n' % user(), 'commented empty'


@N('kubeconfig_exec')
def _():
    return '.kube/config', 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://%s\n  name: gke\nusers:\n- name: gke\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: gke-gcloud-auth-plugin\n      provideClusterInfo: true\ncurrent-context: gke\n' % host(), 'exec plugin'


@N('gcloud_properties')
def _():
    return '.config/gcloud/configurations/config_default', '[core]\naccount = %s\nproject = %s-%s\ndisable_usage_reporting = True\n\n[compute]\nzone = europe-west1-b\n' % (email(), ch(ORG), ch(WORDS)), 'no creds'


@N('gh_hosts_keyring')
def _():
    return '.config/gh/hosts.yml', 'github.com:\n    git_protocol: https\n    users:\n        %s:\n    user: %s\n' % (user(), user()), 'token in keyring'


@N('restic_password_command')
def _():
    return 'bin/backup.sh', '#!/bin/bash\nexport RESTIC_REPOSITORY=sftp:%s:/srv/restic\nexport RESTIC_PASSWORD_COMMAND="pass show backup/restic"\nrestic backup --exclude-caches ~\n' % host(), 'password command'


@N('borg_passcommand')
def _():
    return '.config/systemd/user/borg.service', '[Service]\nType=oneshot\nEnvironment=BORG_PASSCOMMAND="cat %%h/.config/borg/passphrase"\nLoadCredential=borgpass:/etc/credstore/borg\nExecStart=/usr/bin/borg create ::{now} %%h\n', 'passcommand'


@N('rclone_env_auth')
def _():
    return '.config/rclone/rclone.conf', '[s3]\ntype = s3\nprovider = AWS\nenv_auth = true\nregion = eu-west-1\n\n[local-crypt]\ntype = alias\nremote = /mnt/backup\n', 'env_auth'


@N('hass_configuration_refs')
def _():
    return 'homeassistant/configuration.yaml', 'homeassistant:\n  name: Home\n  latitude: !secret latitude\n  longitude: !secret longitude\nmqtt:\n  username: !secret mqtt_user\n  password: !secret mqtt_password\nhttp:\n  use_x_forwarded_for: true\n', '!secret refs'


@N('ssh_public_keys')
def _():
    k = ed_key() if R.random() < 0.6 else rsa_key(1024)
    kind = R.randint(0, 2)
    if kind == 0:
        return '.ssh/authorized_keys', ssh_pub_line(k, user() + '@' + ch(WORDS)) + '\n', 'authorized_keys'
    if kind == 1:
        return '.ssh/id_ed25519.pub', ssh_pub_line(k, email()) + '\n', '.pub'
    return '.ssh/known_hosts', '%s %s\n' % (host(), ' '.join(ssh_pub_line(k, '').split()[:2])) + '|1|%s|%s ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB%s=\n' % (b64(rb(20)), b64(rb(20)), rs(87, B64)), 'known_hosts'


@N('x509_certificate')
def _():
    return ch(['.local/share/ca-certificates/', 'certs/', '.config/' + ch(WORDS) + '/']) + ch(WORDS) + '-ca.crt', cert_pem(ch(WORDS) + '.' + domain()), 'public cert'


@N('pgp_public_block')
def _():
    return ch(['Documents/', '', '.gnupg/']) + 'pubkey.asc', pgp_key(False, '%s <%s>' % (ch(FIRST).capitalize(), email())), 'public key'


@N('ansible_vault')
def _():
    raw = (sha(64) + '\n' + sha(64) + '\n' + rs(R.randint(3, 8) * 64, HEX)).encode().hex()
    return 'ansible/group_vars/all/vault.yml', '$ANSIBLE_VAULT;1.1;AES256\n' + '\n'.join(raw[i:i + 80] for i in range(0, len(raw), 80)) + '\n', 'vault encrypted'


@N('sops_yaml')
def _():
    enc = lambda n: 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (b64(rb(n)), b64(rb(32)), b64(rb(16)))
    return 'k8s/secrets.enc.yaml', 'db_password: %s\napi_token: %s\nsops:\n    age:\n        - recipient: %s\n          enc: |\n            -----BEGIN AGE ENCRYPTED FILE-----\n            %s\n            %s\n            -----END AGE ENCRYPTED FILE-----\n    lastmodified: "2024-03-01T10:00:00Z"\n    mac: %s\n    version: 3.8.1\n' % (
        enc(18), enc(40), age_public(), b64(rb(48)), b64(rb(30)), enc(32)), 'sops'


@N('age_encrypted')
def _():
    return 'Documents/' + ch(WORDS) + '.txt.age', '-----BEGIN AGE ENCRYPTED FILE-----\n' + wrap(b64(b'age-encryption.org/v1\n-> X25519 ' + rb(R.randint(200, 600))), 64) + '\n-----END AGE ENCRYPTED FILE-----\n', 'age armor'


@N('gpg_message')
def _():
    return 'Documents/' + ch(WORDS) + '.txt.asc', pgp_armor('MESSAGE', b'\x84\x5e\x03' + rb(R.randint(150, 500))), 'encrypted message'


@N('eth_keystore')
def _():
    return '.ethereum/keystore/UTC--2024-01-0%dT10-00-00.000Z--%s' % (R.randint(1, 9), sha(40)), json.dumps({'address': sha(40), 'crypto': {'cipher': 'aes-128-ctr', 'ciphertext': sha(64), 'cipherparams': {'iv': sha(32)}, 'kdf': 'scrypt',
        'kdfparams': {'dklen': 32, 'n': 262144, 'p': 1, 'r': 8, 'salt': sha(64)}, 'mac': sha(64)}, 'id': uuid4(), 'version': 3}), 'encrypted keystore'


@N('sha256sums')
def _():
    return 'Downloads/SHA256SUMS', ''.join('%s  %s-%d.%d.%d-%s.tar.gz\n' % (sha(64), ch(WORDS), R.randint(0, 9), R.randint(0, 20), R.randint(0, 9), ch(['linux-amd64', 'darwin-arm64', 'windows-amd64'])) for _ in range(R.randint(3, 6))), 'checksums'


@N('package_lock_integrity')
def _():
    deps = []
    for _ in range(R.randint(2, 4)):
        n = ch(WORDS)
        deps.append('    "node_modules/%s": {\n      "version": "%d.%d.%d",\n      "resolved": "https://registry.npmjs.org/%s/-/%s-1.0.0.tgz",\n      "integrity": "sha512-%s"\n    }' % (n, R.randint(0, 9), R.randint(0, 9), R.randint(0, 9), n, n, b64(rb(64))))
    return 'projects/%s/package-lock.json' % ch(WORDS), '{\n  "name": "app",\n  "lockfileVersion": 3,\n  "packages": {\n' + ',\n'.join(deps) + '\n  }\n}\n', 'sri hashes'


@N('go_sum')
def _():
    return 'go/src/%s/go.sum' % ch(WORDS), ''.join('github.com/%s/%s v1.%d.0 h1:%s\ngithub.com/%s/%s v1.%d.0/go.mod h1:%s\n' % ((o := ch(ORG)), (w := ch(WORDS)), (v := R.randint(0, 20)), b64(rb(32)), o, w, v, b64(rb(32))) for _ in range(3)), 'go.sum'


@N('cargo_lock')
def _():
    return 'projects/%s/Cargo.lock' % ch(WORDS), '# This file is automatically @generated by Cargo.\nversion = 3\n\n' + ''.join('[[package]]\nname = "%s"\nversion = "0.%d.%d"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "%s"\n\n' % (ch(WORDS), R.randint(1, 9), R.randint(0, 9), sha(64)) for _ in range(3)), 'checksums'


@N('poetry_lock')
def _():
    return 'projects/%s/poetry.lock' % ch(WORDS), '[[package]]\nname = "%s"\nversion = "2.%d.0"\nfiles = [\n    {file = "%s-2.0.0-py3-none-any.whl", hash = "sha256:%s"},\n    {file = "%s-2.0.0.tar.gz", hash = "sha256:%s"},\n]\n' % ((w := ch(WORDS)), R.randint(0, 9), w, sha(64), w, sha(64)), 'hashes'


@N('git_shas_notes')
def _():
    return 'Documents/notes/release.md', '# release notes\n\n- bisected the regression to %s\n- reverted with `git revert %s`\n- cherry-picked %s onto stable\n- tag v%d.%d.0 points at %s\n' % (sha(40), sha(40)[:12], sha(40), R.randint(1, 5), R.randint(0, 20), sha(40)), 'commit shas'


@N('docker_digests')
def _():
    return 'projects/%s/docker-compose.yml' % ch(WORDS), 'services:\n  db:\n    image: postgres@sha256:%s\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/db_password\n    secrets: [db_password]\n  cache:\n    image: redis:7@sha256:%s\nsecrets:\n  db_password:\n    file: ./secrets/db_password.txt\n' % (sha(64), sha(64)), 'digests + secret file ref'


@N('vscode_storage_ids')
def _():
    return '.config/Code/User/globalStorage/storage.json', '{\n  "telemetry.machineId": "%s",\n  "telemetry.sqmId": "",\n  "telemetry.devDeviceId": "%s",\n  "backupWorkspaces": {"folders": [{"folderUri": "file:///home/%s/src/%s"}]},\n  "theme": "vs-dark"\n}\n' % (sha(64), uuid4(), user(), ch(WORDS)), 'ids'


@N('azure_ids_config')
def _():
    return '.azure/azureProfile.json', json.dumps({'installationId': uuid4(), 'subscriptions': [{'id': uuid4(), 'name': ch(ORG) + ' Production', 'state': 'Enabled', 'user': {'name': email(), 'type': 'user'},
        'isDefault': True, 'tenantId': uuid4(), 'environmentName': 'AzureCloud', 'homeTenantId': uuid4()}]}, indent=2) + '\n', 'tenant/sub ids'


@N('systemd_loadcredential')
def _():
    return '.config/systemd/user/%s.service' % ch(WORDS), '[Service]\nExecStart=%%h/.local/bin/%s\nEnvironmentFile=%%h/.config/%s/env\nLoadCredentialEncrypted=token:%%h/.config/credstore.encrypted/token\nEnvironment=LOG_LEVEL=info\nEnvironment=TOKEN_FILE=%%d/token\n' % (ch(WORDS), ch(WORDS)), 'file refs'


@N('gha_secrets_ref')
def _():
    return 'projects/%s/.github/workflows/deploy.yml' % ch(WORDS), 'name: deploy\non:\n  push:\n    branches: [main]\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      AWS_ACCESS_KEY_ID: ${{ secrets.AWS_ACCESS_KEY_ID }}\n      AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}\n      NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n    steps:\n      - uses: actions/checkout@%s\n      - run: ./deploy.sh\n' % sha(40), 'secrets refs + pinned sha'


@N('gitlab_ci_refs')
def _():
    return 'projects/%s/.gitlab-ci.yml' % ch(WORDS), 'deploy:\n  script:\n    - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin $CI_REGISTRY\n    - curl --header "JOB-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/projects"\n  variables:\n    VAULT_TOKEN: $VAULT_CI_TOKEN\n', 'var refs'


@N('k8s_secretkeyref')
def _():
    return 'k8s/deployment.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        image: ghcr.io/%s/api:1.4.2\n        env:\n        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef:\n              name: db-credentials\n              key: password\n' % ch(ORG), 'secretKeyRef'


@N('symfony_env_refs')
def _():
    return 'projects/%s/config/packages/doctrine.yaml' % ch(WORDS), "doctrine:\n    dbal:\n        url: '%%env(resolve:DATABASE_URL)%%'\n        password: '%%env(DB_PASSWORD)%%'\nparameters:\n    mailer_dsn: '%%env(MAILER_DSN)%%'\n", '%env()%'


@N('op_refs_env')
def _():
    return 'projects/%s/.env.tpl' % ch(WORDS), 'DATABASE_URL=op://Private/%s-db/connection-string\nSTRIPE_KEY=op://Work/Stripe/credential\nGITHUB_TOKEN=op://Private/GitHub/token\n' % ch(WORDS), 'op:// refs'


@N('vault_refs')
def _():
    return '.config/%s/secrets.yaml' % ch(WORDS), 'database:\n  password: vault:secret/data/%s/db#password\napi:\n  key: vault:secret/data/%s/api#key\naws:\n  secret: "{{ lookup(\'hashi_vault\', \'secret=secret/aws:secret_key\') }}"\n' % (ch(WORDS), ch(WORDS)), 'vault refs'


@N('pass_show_script')
def _():
    return 'bin/connect-db.sh', '#!/bin/bash\nPGPASSWORD="$(pass show db/%s)" psql -h %s -U %s %s\nTOKEN=$(secret-tool lookup service github)\nexport GITHUB_TOKEN="$TOKEN"\n' % (ch(WORDS), host(), user(), ch(WORDS)), 'command substitution'


@N('jinja_template')
def _():
    return 'ansible/templates/app.conf.j2', '[database]\nhost = {{ db_host }}\nuser = {{ db_user }}\npassword = {{ db_password }}\n\n[api]\ntoken = {{ vault_api_token | default("") }}\n', 'jinja'


@N('env_example')
def _():
    keys = R.sample(['DATABASE_URL', 'SECRET_KEY', 'STRIPE_SECRET_KEY', 'OPENAI_API_KEY', 'GITHUB_TOKEN', 'SMTP_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'SLACK_BOT_TOKEN', 'JWT_SECRET'], 5)
    return 'projects/%s/.env.example' % ch(WORDS), ''.join('%s=%s\n' % (k, place()) for k in keys), 'placeholders'


@N('readme_placeholders')
def _():
    return 'projects/%s/README.md' % ch(WORDS), '## Setup\n\n```sh\nexport OPENAI_API_KEY="sk-..."\nexport GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nexport AWS_SECRET_ACCESS_KEY=<your secret key>\ncurl -H "Authorization: Bearer $TOKEN" https://api.%s/v1\n```\n\nSet `password: changeme` in `config.yml` for local testing only.\n' % domain(), 'doc placeholders'


@N('masked_output')
def _():
    return 'Documents/notes/incident.md', '# Rotated keys 2024-0%d\n\n| key | status |\n|---|---|\n| AKIA************%s | deleted |\n| ghp_****************************%s | revoked |\n| sk-...%s | revoked |\n\npassword: ******** (rotated)\n' % (R.randint(1, 9), rs(4, UP + DI), rs(4), rs(4)), 'masked'


@N('password_policy_doc')
def _():
    return 'Documents/it-policy.txt', 'Password policy\n===============\npassword_min_length = 12\npassword_max_age_days = 90\nrequire_mfa = true\nThe password must not contain your username.\nNever write your password in a file like this one.\n', 'policy'


@N('token_regex_rules')
def _():
    return '.config/%s/rules.toml' % ch(['gitleaks', 'secretlint', 'detect']), '[[rules]]\nid = "github-pat"\nregex = \'\'\'ghp_[0-9a-zA-Z]{36}\'\'\'\n\n[[rules]]\nid = "aws-access-key"\nregex = \'\'\'(A3T[A-Z0-9]|AKIA|ASIA)[A-Z0-9]{16}\'\'\'\n\n[[rules]]\nid = "slack"\nregex = \'\'\'xox[baprs]-[0-9a-zA-Z-]{10,48}\'\'\'\n\n[[rules]]\nid = "private-key"\nregex = \'\'\'-----BEGIN[ A-Z]*PRIVATE KEY-----\'\'\'\n', 'regex patterns'


@N('jwt_io_example')
def _():
    return 'Documents/notes/jwt.md', '# JWT cheat sheet\n\nThe example from jwt.io:\n\n    eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n\nheader.payload.signature, base64url.\n', 'jwt.io example'


@N('stripe_doc_test_key')
def _():
    return 'projects/%s/docs/payments.md' % ch(WORDS), 'Use the Stripe docs test key while developing:\n\n    stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"\n\nand card 4242 4242 4242 4242.\n', 'published test key'


@N('azurite_wellknown')
def _():
    return 'projects/%s/local.settings.json' % ch(WORDS), '{\n  "IsEncrypted": false,\n  "Values": {\n    "AzureWebJobsStorage": "UseDevelopmentStorage=true",\n    "Emulator": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"\n  }\n}\n', 'azurite well-known key'


@N('stripe_publishable')
def _():
    return 'projects/%s/public/config.js' % ch(WORDS), "window.APP_CONFIG = {\n  stripePublishableKey: 'pk_live_51%s',\n  sentryEnvironment: 'production'\n};\n" % rs(97), 'pk_live is public'


@N('mapbox_public')
def _():
    return 'projects/%s/src/map.js' % ch(WORDS), "mapboxgl.accessToken = '%s';\nconst map = new mapboxgl.Map({ container: 'map', style: 'mapbox://styles/mapbox/streets-v12' });\n" % ('pk.' + b64u(json.dumps({'u': user(), 'a': 'cl' + rs(23, LO + DI)}, separators=(',', ':')).encode()) + '.' + rs(22, B64U)), 'pk. public token'


@N('age_recipients')
def _():
    return '.config/sops/age/recipients.txt', '# team recipients\n' + ''.join('%s  # %s\n' % (age_public(), ch(FIRST)) for _ in range(3)), 'public keys'


@N('wireguard_keyfile_ref')
def _():
    return '.config/wireguard/wg0.conf', '[Interface]\nAddress = 10.8.0.2/24\nPostUp = wg set %%i private-key /etc/wireguard/%%i.key\n\n[Peer]\nPublicKey = %s\nPresharedKey = \nAllowedIPs = 10.8.0.0/24\nEndpoint = %s:51820\n' % (b64(rb(32)), host()), 'key from file'


@N('wpa_open_network')
def _():
    return 'wpa_supplicant.conf', 'ctrl_interface=DIR=/var/run/wpa_supplicant\nnetwork={\n\tssid="%s Guest"\n\tkey_mgmt=NONE\n}\nnetwork={\n\tssid="eduroam"\n\tkey_mgmt=WPA-EAP\n\teap=PEAP\n\tidentity="%s"\n\tca_cert="/etc/ssl/certs/eduroam.pem"\n}\n' % (ch(CAPWORDS), email()), 'open + EAP without password'


@N('nm_agent_owned')
def _():
    ssid = ch(CAPWORDS)
    return '.local/share/NetworkManager/%s.nmconnection' % ssid, '[connection]\nid=%s\nuuid=%s\ntype=wifi\n\n[wifi]\nssid=%s\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk-flags=1\n' % (ssid, uuid4(), ssid), 'agent-owned'


@N('netrc_no_password')
def _():
    return '.netrc', 'machine %s\n  login %s\n  # password kept in keychain\nmachine %s login anonymous password %s\n' % (host(), user(), 'ftp.' + domain(), email()), 'anonymous ftp email'


@N('pgpass_wildcards')
def _():
    return '.pgpass.example', '# hostname:port:database:username:password\n*:*:*:postgres:<password>\nlocalhost:5432:*:%s:${PGPASSWORD}\n' % user(), 'placeholders'


@N('mycnf_login_path')
def _():
    return '.my.cnf', '[client]\nuser=%s\nhost=%s\nssl-mode=REQUIRED\n# password stored with mysql_config_editor (login-path)\n\n[mysql]\nauto-rehash\n' % (user(), host()), 'no pw'


@N('cookies_nonsession')
def _():
    d = domain()
    return 'Downloads/cookies.txt', '# Netscape HTTP Cookie File\n.%s\tTRUE\t/\tFALSE\t1767225600\tcookie_consent\tyes\n.%s\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark\n.%s\tTRUE\t/\tFALSE\t1767225600\tlang\ten-GB\n' % (d, d, d), 'non-auth cookies'


@N('crontab_password_file')
def _():
    return 'crontab.bak', 'MAILTO=""\n0 3 * * * restic backup --password-file %%h/.config/restic/pw ~/Documents\n15 3 * * * mysqldump --defaults-extra-file=$HOME/.my.cnf --all-databases > /dev/null\n', 'file refs'


@N('python_env_read')
def _():
    return 'scripts/%s.py' % ch(WORDS), 'import os\nimport getpass\n\nAPI_KEY = os.environ["API_KEY"]\nDB_PASSWORD = os.getenv("DB_PASSWORD", "")\npassword = getpass.getpass("Password: ")\nTOKEN_URL = "https://%s/oauth/token"\n' % host(), 'reads env'


@N('powershell_prompt')
def _():
    return 'Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1', '$cred = Get-Credential -UserName "%s"\r\n$pw = Read-Host -AsSecureString "Password"\r\n$token = (Get-Secret -Name GitHubToken -AsPlainText)\r\nSet-Alias ll Get-ChildItem\r\n' % user(), 'prompts'


@N('note_i18n_ref')
def _():
    lang, word, fn, head = ch(I18N)
    ref = {'de': 'steht im Passwortmanager', 'fr': 'dans le gestionnaire de mots de passe', 'es': 'está en el gestor de contraseñas', 'ru': 'в менеджере паролей',
           'ja': 'パスワードマネージャーに保存', 'zh': '在密码管理器里', 'pt': 'está no gerenciador de senhas', 'pl': 'w menedżerze haseł', 'nl': 'staat in de wachtwoordmanager',
           'it': 'nel password manager', 'tr': 'şifre yöneticisinde', 'sv': 'finns i lösenordshanteraren'}[lang]
    sep = '：' if lang in ('zh', 'ja') else ': '
    return 'Documents/' + fn, '%s\n\nhost: %s\nuser: %s\n%s%s%s\n' % (head, host(), user(), word, sep, ref), 'reference to manager'


@N('contacts_csv')
def _():
    return 'Documents/contacts.csv', 'name,email,phone,birthday\n' + ''.join('%s %s,%s,+49 30 %07d,19%02d-%02d-%02d\n' % (ch(FIRST).capitalize(), ch(LAST).capitalize(), email(), R.randint(0, 10 ** 7 - 1), R.randint(50, 99), R.randint(1, 12), R.randint(1, 28)) for _ in range(4)), 'contacts'


@N('theme_colors_hex')
def _():
    return '.config/alacritty/colors.toml', '[colors.primary]\nbackground = "#%s"\nforeground = "#%s"\n\n[colors.normal]\nblack = "#%s"\nred = "#%s"\n# theme id: %s\n' % (rs(6, HEX), rs(6, HEX), rs(6, HEX), rs(6, HEX), sha(32)), 'colors + theme hash'


@N('crypto_public_addresses')
def _():
    return 'Documents/crypto/addresses.txt', 'donation addresses\nBTC: bc1q%s\nETH: 0x%s\nSOL: %s\nxpub (watch-only): %s\n' % (rs(38, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'), sha(40), rs(44, B58), xpub()), 'public addresses/xpub'


@N('terraform_var_refs')
def _():
    return 'infra/providers.tf', 'provider "aws" {\n  region = var.region\n}\n\nprovider "cloudflare" {\n  api_token = var.cloudflare_api_token\n}\n\nvariable "cloudflare_api_token" {\n  type      = string\n  sensitive = true\n}\n', 'var refs'


@N('esphome_secret_refs')
def _():
    return 'esphome/%s.yaml' % ch(WORDS), 'wifi:\n  ssid: !secret wifi_ssid\n  password: !secret wifi_password\napi:\n  encryption:\n    key: !secret api_key\nota:\n  - platform: esphome\n    password: !secret ota_password\n', '!secret'


@N('minecraft_rcon_disabled')
def _():
    return 'games/mc-server/server.properties', 'enable-rcon=false\nrcon.password=\nrcon.port=25575\nlevel-seed=%d\nserver-port=25565\n' % R.randint(-10 ** 18, 10 ** 18), 'empty'


@N('transmission_hashed')
def _():
    return '.config/transmission-daemon/settings.json', '{\n    "rpc-authentication-required": true,\n    "rpc-password": "{%s%s",\n    "rpc-username": "%s"\n}\n' % (sha(40), rs(8, LO + DI), user()), 'salted hash (transmission rewrites it)'


@N('shell_history_clean')
def _():
    return '.bash_history', 'read -rs PASSWORD\nexport PASSWORD\nssh-keygen -t ed25519 -C "%s"\ngpg --list-secret-keys\nkubectl create secret generic db --from-file=password=./pw.txt\nunset PASSWORD\n' % email(), 'no literal'


@N('jenkinsfile_credentials')
def _():
    return 'projects/%s/Jenkinsfile' % ch(WORDS), "pipeline {\n  agent any\n  environment {\n    SONAR_TOKEN = credentials('sonar-token')\n  }\n  stages {\n    stage('deploy') {\n      steps {\n        withCredentials([usernamePassword(credentialsId: 'nexus', usernameVariable: 'U', passwordVariable: 'P')]) {\n          sh 'deploy.sh'\n        }\n      }\n    }\n  }\n}\n", 'credentials() refs'


@N('helm_existing_secret')
def _():
    return 'k8s/values.yaml', 'postgresql:\n  auth:\n    existingSecret: pg-credentials\n    secretKeys:\n      adminPasswordKey: postgres-password\n      userPasswordKey: password\n  password: ""\n', 'existingSecret'


@N('slack_doc_token')
def _():
    return 'projects/%s/docs/slack.md' % ch(WORDS), 'Put the bot token in `SLACK_BOT_TOKEN`, e.g.\n\n    SLACK_BOT_TOKEN=xoxb-not-a-real-token-this-will-not-work\n\nThe token starts with `xoxb-`.\n', 'slack docs example'


@N('ssh_fingerprints')
def _():
    return 'Documents/notes/servers.md', '| host | fingerprint |\n|---|---|\n' + ''.join('| %s | SHA256:%s |\n' % (host(), b64(rb(32)).rstrip('=')) for _ in range(3)), 'host key fingerprints'


@N('gpg_conf_fingerprints')
def _():
    return '.gnupg/gpg.conf', 'default-key %s\ntrusted-key %s\nkeyserver hkps://keys.openpgp.org\npersonal-digest-preferences SHA512 SHA384 SHA256\n' % (rs(40, '0123456789ABCDEF'), rs(16, '0123456789ABCDEF')), 'fingerprints'


@N('syncthing_device_ids')
def _():
    did = '-'.join(rs(7, B32) for _ in range(8))
    return '.config/syncthing/config.xml', '<configuration version="37">\n    <device id="%s" name="%s" compression="metadata">\n        <address>dynamic</address>\n    </device>\n    <gui enabled="true">\n        <address>127.0.0.1:8384</address>\n    </gui>\n</configuration>\n' % (did, ch(WORDS)), 'device id (public)'


@N('kopia_no_password')
def _():
    return '.config/kopia/repository.config', json.dumps({'storage': {'type': 'b2', 'config': {'bucket': ch(ORG) + '-kopia', 'keyID': '', 'key': ''}}, 'caching': {'cacheDirectory': '/home/%s/.cache/kopia/%s' % (user(), sha(16))}, 'hostname': ch(WORDS), 'username': user(), 'description': 'Repository in B2', 'enableActions': False}, indent=2) + '\n', 'empty fields'


@N('launchd_plain')
def _():
    return 'Library/LaunchAgents/com.%s.backup.plist' % ch(ORG), '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n  <key>Label</key><string>com.%s.backup</string>\n  <key>ProgramArguments</key>\n  <array><string>/usr/local/bin/restic</string><string>--password-command</string><string>security find-generic-password -s restic -w</string></array>\n  <key>StartInterval</key><integer>3600</integer>\n</dict>\n</plist>\n' % ch(ORG), 'keychain command'


@N('filezilla_ask')
def _():
    return '.config/filezilla/sitemanager.xml', '<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3>\n  <Servers>\n    <Server>\n      <Host>%s</Host>\n      <Port>22</Port>\n      <Protocol>1</Protocol>\n      <User>%s</User>\n      <Logontype>3</Logontype>\n      <Name>%s</Name>\n    </Server>\n  </Servers>\n</FileZilla3>\n' % (host(), user(), ch(WORDS)), 'ask for password'


@N('http_client_env_public')
def _():
    return 'projects/%s/http-client.env.json' % ch(WORDS), '{\n  "dev": {\n    "host": "http://localhost:8080",\n    "token": "{{$auth.token(\\"dev\\")}}"\n  },\n  "prod": {\n    "host": "https://api.%s",\n    "token": "{{token}}"\n  }\n}\n' % domain(), 'templated'


@N('k8s_secret_placeholder')
def _():
    return 'k8s/secret-template.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\nstringData:\n  password: "%s"\n  api-key: "%s"\n' % (ch(['', 'REPLACE_ME', '${APP_PASSWORD}']), ch(['', 'TODO', '<api-key>'])), 'template'


@N('yaml_password_empty')
def _():
    return '.config/%s/config.yml' % ch(WORDS), 'server:\n  host: %s\n  port: 993\n  username: %s\n  password:\n  password_command: ["pass", "show", "mail"]\n  tls: true\n' % (host(), email()), 'empty + command'


@N('ini_password_commented')
def _():
    return '.config/%s.ini' % ch(WORDS), '[database]\nhost = localhost\nuser = %s\n;password = \n; password is read from $DB_PASSWORD\nsocket = /run/mysqld/mysqld.sock\n' % user(), 'commented'


@N('data_uri_bookmark')
def _():
    return '.local/share/bookmarks.html', '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF="https://%s/" ICON="data:image/png;base64,%s">%s</A>\n</DL>\n' % (domain(), b64(b'\x89PNG\r\n\x1a\n' + rb(120)), ch(ORG).capitalize()), 'favicon data uri'


@N('uuid_ids_hass')
def _():
    return 'homeassistant/.storage/core.config_entries', json.dumps({'version': 1, 'data': {'entries': [{'entry_id': sha(32), 'domain': ch(['hue', 'cast', 'sun', 'met']), 'title': ch(WORDS), 'unique_id': uuid4(), 'source': 'user'} for _ in range(3)]}}, indent=2) + '\n', 'entry ids'


@N('gradle_wrapper_sha')
def _():
    return 'projects/%s/gradle/wrapper/gradle-wrapper.properties' % ch(WORDS), 'distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\ndistributionSha256Sum=%s\ndistributionUrl=https\\://services.gradle.org/distributions/gradle-8.%d-bin.zip\n' % (sha(64), R.randint(0, 9)), 'sha256'


@N('password_prompts_code')
def _():
    return 'projects/%s/src/login.js' % ch(WORDS), "const PASSWORD_MIN = 12;\nexport function validate(password) {\n  if (password.length < PASSWORD_MIN) return 'too short';\n  if (password === 'password') return 'too common';\n  return null;\n}\nconst TOKEN_HEADER = 'X-Auth-Token';\n", 'code about passwords'


@N('i18n_strings')
def _():
    return 'projects/%s/locales/de.json' % ch(WORDS), '{\n  "login.password": "Passwort",\n  "login.forgot": "Passwort vergessen?",\n  "settings.api_key": "API-Schlüssel",\n  "settings.token_hint": "Token hier einfügen"\n}\n', 'ui strings'


@N('bitwarden_encrypted_export')
def _():
    return 'Downloads/bitwarden_encrypted_export.json', json.dumps({'encrypted': True, 'passwordProtected': True, 'salt': b64(rb(16)), 'kdfType': 0, 'kdfIterations': 600000,
        'encKeyValidation_DO_NOT_EDIT': '2.%s|%s|%s' % (b64(rb(16)), b64(rb(48)), b64(rb(32))), 'data': '2.%s|%s|%s' % (b64(rb(16)), b64(rb(400)), b64(rb(32)))}, indent=2) + '\n', 'encrypted export'


@N('keepass_csv_empty')
def _():
    return 'Documents/keepass-template.csv', '"Group","Title","Username","Password","URL","Notes"\n"Root","Router","admin","","http://192.168.1.1","password on sticker"\n"Root","Bank","%s","","https://bank.%s","use hardware token"\n' % (user(), domain()), 'empty passwords'


@N('pip_conf_public')
def _():
    return '.config/pip/pip.conf', '[global]\nindex-url = https://pypi.org/simple\nextra-index-url = https://%s/simple\ntrusted-host = %s\n[install]\nrequire-hashes = false\n' % (host(), host()), 'no creds'


@N('cargo_config_noauth')
def _():
    return '.cargo/config.toml', '[registry]\nglobal-credential-providers = ["cargo:token", "cargo:libsecret"]\n\n[net]\ngit-fetch-with-cli = true\n', 'providers'


@N('gem_credentials_empty')
def _():
    return '.gemrc', '---\n:backtrace: false\n:update_sources: true\n:sources:\n- https://rubygems.org/\ngem: --no-document\n', 'gemrc'


@N('openvpn_authfile_ref')
def _():
    return 'vpn/%s.ovpn' % ch(WORDS), 'client\ndev tun\nproto udp\nremote %s 1194\nauth-user-pass auth.txt\nauth-nocache\n<ca>\n%s</ca>\n' % (host(), cert_pem('vpn-ca')), 'cert + auth file ref'


@N('tfstate_ids')
def _():
    return 'infra/terraform.tfstate.backup', json.dumps({'version': 4, 'terraform_version': '1.7.5', 'serial': R.randint(1, 99), 'lineage': uuid4(), 'resources': [{'mode': 'managed', 'type': 'aws_instance', 'name': 'web',
        'instances': [{'attributes': {'id': 'i-' + sha(17), 'ami': 'ami-' + sha(17), 'arn': 'arn:aws:ec2:eu-west-1:%d:instance/i-%s' % (R.randint(10 ** 11, 10 ** 12), sha(17)), 'subnet_id': 'subnet-' + sha(17)}}]}]}, indent=2) + '\n', 'resource ids'


@N('irc_config_nopass')
def _():
    return '.config/weechat/irc.conf', '[server]\nlibera.addresses = "irc.libera.chat/6697"\nlibera.tls = on\nlibera.sasl_mechanism = external\nlibera.tls_cert = "%%h/certs/libera.pem"\nlibera.sasl_password = "${sec.data.libera}"\n', 'sec.data ref'


@N('matrix_config_ref')
def _():
    return 'bots/%s/config.yaml' % ch(WORDS), 'homeserver: https://matrix.%s\nuser_id: "@bot:%s"\naccess_token: ${MATRIX_ACCESS_TOKEN}\ndevice_id: %s\n' % (domain(), domain(), rs(10, UP)), 'env ref'


@N('muttrc_cmd')
def _():
    return '.muttrc', 'set imap_user = "%s"\nset imap_pass = "`pass show mail/imap`"\nsource "gpg -dq ~/.mutt/passwords.gpg |"\nset folder = "imaps://imap.%s/"\n' % (email(), domain()), 'backtick + gpg source'


@N('chrome_preferences')
def _():
    return '.config/google-chrome/Default/Preferences', json.dumps({'profile': {'name': ch(FIRST).capitalize(), 'avatar_index': R.randint(0, 20)}, 'extensions': {'settings': {rs(32, 'abcdefghijklmnop'): {'state': 1}}}, 'browser': {'window_placement': {'top': 10}}}) + '\n', 'extension ids'


@N('steam_loginusers')
def _():
    return '.steam/steam/config/loginusers.vdf', '"users"\n{\n\t"7656119%010d"\n\t{\n\t\t"AccountName"\t\t"%s"\n\t\t"PersonaName"\t\t"%s"\n\t\t"RememberPassword"\t\t"1"\n\t\t"MostRecent"\t\t"1"\n\t\t"Timestamp"\t\t"%d"\n\t}\n}\n' % (R.randint(0, 10 ** 10 - 1), user(), ch(PETS), R.randint(1700000000, 1720000000)), 'steam ids'


@N('gitlab_runner_placeholder')
def _():
    return '.gitlab-runner/config.toml', 'concurrent = 1\n\n[[runners]]\n  name = "%s"\n  url = "https://gitlab.com/"\n  token = "%s"\n  executor = "docker"\n' % (ch(WORDS), ch(['glrt-REPLACE_ME', '<runner-token>', '${RUNNER_TOKEN}'])), 'placeholder'


@N('wallet_watchonly')
def _():
    return '.electrum/wallets/watch_only', '{\n    "keystore": {\n        "type": "bip32",\n        "xpub": "%s",\n        "xprv": null\n    },\n    "wallet_type": "standard"\n}\n' % xpub(), 'xpub only'


@N('hass_secrets_template')
def _():
    return 'homeassistant/secrets.yaml.example', '# copy to secrets.yaml\nwifi_ssid: "MyNetwork"\nwifi_password: "changeme"\nmqtt_password: "<mqtt-password>"\napi_key: "YOUR_API_KEY"\n', 'example'


@N('ssh_config_plain')
def _():
    return '.ssh/config', 'Host *\n    AddKeysToAgent yes\n    IdentitiesOnly yes\n\nHost %s\n    HostName %s\n    User %s\n    IdentityFile ~/.ssh/id_ed25519\n    ProxyJump bastion\n' % (ch(WORDS), host(), user()), 'no secrets'


@N('dotenv_secret_refs_sops')
def _():
    return 'projects/%s/.env.enc' % ch(WORDS), 'DB_PASSWORD=ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]\nsops_age__list_0__map_recipient=%s\nsops_version=3.8.1\n' % (b64(rb(14)), b64(rb(32)), b64(rb(16)), age_public()), 'dotenv sops'


@N('lorem_uuid_todo')
def _():
    return 'todo.md', '# TODO\n\n- [ ] ticket %s: fix login redirect\n- [ ] ask IT to reset my password (locked out again)\n- [x] rotate GitHub token (done, new one in 1Password)\n- [ ] order id %d\n' % (uuid4(), R.randint(10 ** 8, 10 ** 9)), 'todo without secrets'


# ================================================================ main
def main():
    global R
    seed = sys.argv[1]
    R = random.Random(int(seed))
    here = os.path.dirname(os.path.abspath(__file__))
    od = os.path.join(here, 'out_%s' % seed)
    if os.path.exists(od):
        shutil.rmtree(od)
    NPOS, NNEG = 160, 130

    def pick(templates, n):
        if len(templates) >= n:
            return R.sample(templates, n)
        out = list(templates)
        R.shuffle(out)
        return out + [R.choice(templates) for _ in range(n - len(templates))]

    manifest, secrets = [], {}
    for kind, templates, n in (('pos', POS, NPOS), ('neg', NEG, NNEG)):
        for i, (fam, fn) in enumerate(pick(templates, n), 1):
            rel, content, note = fn()
            enc = 'utf-8'
            if isinstance(content, tuple):
                enc, content = content
            f = '%s/h%03d/%s' % (kind, i, rel)
            lines = content.split('\n')
            marked = [j for j, l in enumerate(lines) if S in l]
            if kind == 'pos':
                assert len(marked) == 1, (fam, marked)
                j = marked[0]
                secrets[f] = {'line': j + 1, 'text': lines[j].replace(S, '').rstrip('\r')}
            else:
                assert not marked, fam
            content = content.replace(S, '')
            p = os.path.join(od, f)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            data = content.encode('utf-16') if enc == 'utf-16' else content.encode('utf-8')
            with open(p, 'wb') as fh:
                fh.write(data)
            manifest.append({'file': f, 'kind': kind, 'family': fam, 'note': note})
    with open(os.path.join(od, 'manifest.json'), 'w') as fh:
        json.dump(manifest, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(od, 'secrets.json'), 'w') as fh:
        json.dump(secrets, fh, indent=1, ensure_ascii=False)
    print('out_%s: %d positives (%d templates), %d negatives (%d templates)' % (seed, NPOS, len(POS), NNEG, len(NEG)))


if __name__ == '__main__':
    main()

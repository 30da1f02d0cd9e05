"""Helpers for the p5 outsider corpus: random values in real formats, and
real key encodings built deterministically from a seeded random.Random."""
import base64, hashlib, hmac, string, struct, uuid, zlib, datetime, os, warnings
from urllib.parse import quote

warnings.filterwarnings("ignore", category=DeprecationWarning)
import crypt  # noqa: E402  (py3.11: still available, used for real password hashes)

from cryptography.hazmat.primitives import serialization, hashes
from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519, x25519, dsa, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography import x509
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
BIP39 = open(os.path.join(HERE, "data/bip39_english.txt")).read().split()
MONERO = open(os.path.join(HERE, "data/monero_english.txt")).read().split()
assert len(BIP39) == 2048 and len(MONERO) == 1626

LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
ALNUM = LOW + UP + DIG
B62 = DIG + UP + LOW
HEX = "0123456789abcdef"
SYM = "!@#$%^&*()-_=+[]{};:,.<>?/~"

WORDS = """apple river tiger falcon sunset garden winter summer autumn spring dragon
monkey shadow silver golden purple orange banana cherry coffee pepper cookie rocket
planet guitar piano violin forest meadow ocean island harbor castle bridge mountain
thunder lightning rainbow crystal diamond emerald phoenix wizard pirate ninja panda
koala zebra falcon eagle raven wolf bear lion mango lemon kiwi butter donkey turtle
sparrow comet nebula galaxy saturn jupiter marble pebble canyon desert glacier
velvet copper bronze cobalt scarlet indigo maple willow cedar birch lotus orchid
tulip daisy poppy jasmine hunter ranger sailor captain doctor
""".split()
FIRST = """anna ben carla david elena felix greta hugo iris jonas katrin lukas maria
nils olga paul rosa sven tina ulrich vera walter xenia yusuf zoe ahmed bianca chen
diego emma farah gabriel hana ivan julia kenji leila marco nadia oscar priya quentin
raj sofia tomas uma viktor wei yara""".split()
LAST = """mueller schmidt garcia rossi novak kowalski jensen silva tanaka kim nguyen
okafor dubois martin weber fischer meyer wagner becker hoffmann smith jones brown
taylor wilson moreau bernard costa santos petrov ivanova larsen berg holm""".split()
TLDS = ["com", "org", "net", "io", "de", "fr", "nl", "dev", "eu", "co.uk", "ch", "se"]
MAILDOMS = ["gmail.com", "fastmail.com", "posteo.de", "proton.me", "outlook.com",
            "mailbox.org", "gmx.de", "web.de", "yahoo.com", "icloud.com", "riseup.net"]


def pick(r, s, n):
    return "".join(r.choice(s) for _ in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def b64url(b, pad=False):
    s = base64.urlsafe_b64encode(b).decode()
    return s if pad else s.rstrip("=")


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


def rand_uuid(r):
    return str(uuid.UUID(bytes=r.randbytes(16), version=4))


def first(r):
    return r.choice(FIRST)


def username(r):
    f, l = r.choice(FIRST), r.choice(LAST)
    return r.choice([f, f + "." + l, f[0] + l, f + str(r.randint(1, 99)), f + "_" + l, l + f[0]])


def domain(r):
    w = r.choice(WORDS)
    sfx = r.choice(["", "-labs", "-systems", "tech", "net", "-group", "hq", "works", ""])
    return w + sfx + "." + r.choice(TLDS)


def email(r, dom=None):
    return username(r) + "@" + (dom or r.choice(MAILDOMS + [domain(r)]))


def host(r, dom=None):
    return r.choice(["mail", "imap", "git", "nas", "vpn", "db", "srv", "build", "home", "cloud",
                     "files", "ci", "backup", "pg"]) + r.choice(["", "01", "2", "-eu"]) + "." + (dom or domain(r))


def ip(r, private=True):
    if private:
        return r.choice(["192.168.%d.%d" % (r.randint(0, 9), r.randint(2, 250)),
                         "10.%d.%d.%d" % (r.randint(0, 255), r.randint(0, 255), r.randint(2, 250))])
    return "%d.%d.%d.%d" % (r.randint(11, 223), r.randint(0, 255), r.randint(0, 255), r.randint(1, 254))


def ts(r, y0=2019, y1=2025):
    d = datetime.datetime(y0, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        seconds=r.randint(0, (y1 - y0) * 365 * 86400))
    return d


def pw(r, avoid="", kind=None, minlen=8, maxlen=40):
    """A random password of a realistic shape."""
    for _ in range(200):
        k = kind or r.choice(["human", "human", "human2", "alnum", "alnum", "symbols", "symbols", "hex",
                              "pronounce", "diceware", "apple", "b64", "lower"])
        if k == "human":
            w = r.choice(WORDS)
            w = w.capitalize() if r.random() < .7 else w
            if r.random() < .3:
                w = w.replace("o", "0").replace("e", "3").replace("a", "@")
            s = w + str(r.choice([r.randint(1, 99), r.randint(1960, 2024), r.randint(100, 9999)])) + \
                r.choice(["", "", "!", "?", "#", "$", "*", "."])
        elif k == "human2":
            s = r.choice(WORDS).capitalize() + r.choice(["", "_", "-", "."]) + r.choice(WORDS) + \
                str(r.randint(0, 999)) + r.choice(["", "!", "&"])
        elif k == "alnum":
            s = pick(r, ALNUM, r.randint(10, 32))
            if not any(c.isdigit() for c in s):
                continue
        elif k == "symbols":
            s = pick(r, ALNUM + SYM, r.randint(12, 40))
        elif k == "hex":
            s = pick(r, HEX, r.choice([16, 20, 24, 32, 40]))
        elif k == "pronounce":
            cons, vow = "bcdfghjkmnprstvwxz", "aeiou"
            s = "".join(r.choice(cons) + r.choice(vow) + (r.choice(vow) if r.random() < .3 else "") for _ in range(4))
            i = r.randrange(len(s))
            s = s[:i] + s[i].upper() + s[i + 1:] + str(r.randint(0, 9))
            s = s[:r.randint(8, 12)] if len(s) > 12 else s
            if not any(c.isdigit() for c in s):
                s = s[:-1] + str(r.randint(0, 9))
        elif k == "diceware":
            sep = r.choice(["-", ".", "_", ""])
            ws = [r.choice(WORDS) for _ in range(r.randint(3, 5))]
            if sep == "":
                ws = [w.capitalize() for w in ws]
            s = sep.join(ws)
        elif k == "apple":
            g = [pick(r, LOW + DIG, 6) for _ in range(3)]
            g[0] = g[0][:2] + g[0][2].upper() + g[0][3:]
            s = "-".join(g)
        elif k == "b64":
            s = b64(r.randbytes(r.choice([12, 15, 18, 24]))).rstrip("=")
        else:
            s = pick(r, LOW, r.randint(8, 14)) + str(r.randint(10, 99))
        if minlen <= len(s) <= maxlen and not any(c in avoid for c in s):
            return s
    raise RuntimeError("pw")


# ---------------------------------------------------------------- token formats
def b62enc(n, width):
    s = ""
    while n:
        n, m = divmod(n, 62)
        s = B62[m] + s
    return s.rjust(width, "0")


def gh_token(r, prefix="ghp_"):
    body = pick(r, ALNUM, 30)
    return prefix + body + b62enc(zlib.crc32(body.encode()), 6)


def gh_pat_fine(r):
    return "github_pat_" + pick(r, ALNUM, 22) + "_" + pick(r, ALNUM, 59)


def npm_token(r):
    body = pick(r, ALNUM, 30)
    return "npm_" + body + b62enc(zlib.crc32(body.encode()), 6)


def glpat(r):
    return "glpat-" + pick(r, ALNUM + "_-", 20)


def aws_keyid(r, prefix="AKIA"):
    return prefix + pick(r, UP + "234567", 16)


def aws_secret(r):
    return pick(r, ALNUM + "/+", 40)


def google_refresh(r):
    return "1//0" + r.choice("cdegh") + pick(r, ALNUM + "_-", 99)


def google_access(r):
    return "ya29.a0" + pick(r, ALNUM + "_-", 200)


def jwt(r, claims=None, alg="RS256", siglen=256):
    import json
    hdr = {"alg": alg, "typ": "JWT"}
    if alg.startswith("RS"):
        hdr["kid"] = pick(r, ALNUM + "_-", 27)
    now = int(ts(r, 2023, 2025).timestamp())
    c = {"iss": "https://" + host(r), "sub": rand_uuid(r), "iat": now, "exp": now + 3600}
    c.update(claims or {})
    return b64url(json.dumps(hdr, separators=(",", ":")).encode()) + "." + \
        b64url(json.dumps(c, separators=(",", ":")).encode()) + "." + b64url(r.randbytes(siglen))


def slack_token(r, kind="xoxp"):
    if kind == "xoxb":
        return "xoxb-%d-%d-%s" % (r.randint(10**10, 10**13), r.randint(10**12, 10**13), pick(r, ALNUM, 24))
    if kind == "xoxc":
        return "xoxc-%d-%d-%d-%s" % (r.randint(10**10, 10**13), r.randint(10**10, 10**13),
                                     r.randint(10**12, 10**13), pick(r, HEX, 64))
    return "xoxp-%d-%d-%d-%s" % (r.randint(10**10, 10**13), r.randint(10**10, 10**13),
                                 r.randint(10**12, 10**13), pick(r, HEX, 32))


def discord_token(r):
    uid = str(r.randint(10**17, 13 * 10**17))
    return b64url(uid.encode()) + "." + pick(r, ALNUM + "_-", 6) + "." + pick(r, ALNUM + "_-", 38)


def matrix_token(r, user):
    rnd = pick(r, ALNUM, 20)
    return "syt_" + b64url(user.encode()) + "_" + rnd + "_" + pick(r, ALNUM, 6)


def pypi_token(r):
    ident = rand_uuid(r).encode()
    cav = b'{"version": 1, "permissions": "user"}'
    mac = b"\x02\x01\x08pypi.org\x02" + bytes([len(ident)]) + ident + b"\x00\x02" + bytes([len(cav)]) + cav + \
        b"\x00\x00\x06\x20" + r.randbytes(32)
    return "pypi-" + b64url(mac)


def tfc_token(r):
    return pick(r, ALNUM, 14) + ".atlasv1." + pick(r, ALNUM, 67)


def vault_token(r):
    return r.choice(["hvs.", "s."]) + pick(r, ALNUM, 24)


# ---------------------------------------------------------------- primes / RSA / DSA
_SMALL = [p for p in range(3, 3000) if all(p % q for q in range(2, int(p ** .5) + 1))]


def is_prime(n, r):
    for p in _SMALL:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(16):
        a = r.randrange(2, n - 2)
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


def gen_prime(bits, r):
    while True:
        n = r.getrandbits(bits) | (3 << (bits - 2)) | 1
        if is_prime(n, r):
            return n


def rsa_key(r, bits=2048):
    e = 65537
    while True:
        p, q = gen_prime(bits // 2, r), gen_prime(bits // 2, r)
        if p == q:
            continue
        phi = (p - 1) * (q - 1)
        try:
            d = pow(e, -1, phi)
        except ValueError:
            continue
        if p < q:
            p, q = q, p
        nums = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), rsa.RSAPublicNumbers(e, p * q))
        return nums.private_key()


def dsa_key(r):
    q = gen_prime(160, r)
    while True:
        k = r.getrandbits(1024 - 160) | (1 << (1024 - 161))
        p = k * q + 1
        if p.bit_length() == 1024 and is_prime(p, r):
            break
    while True:
        h = r.randrange(2, p - 2)
        g = pow(h, (p - 1) // q, p)
        if g > 1:
            break
    x = r.randrange(1, q)
    y = pow(g, x, p)
    return dsa.DSAPrivateNumbers(x, dsa.DSAPublicNumbers(y, dsa.DSAParameterNumbers(p, q, g))).private_key()


P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def ec_key(r, curve="P-256"):
    if curve == "P-256":
        return ec.derive_private_key(r.randrange(1, P256_N), ec.SECP256R1())
    if curve == "P-384":
        return ec.derive_private_key(r.getrandbits(383) | 1, ec.SECP384R1())
    if curve == "P-521":
        return ec.derive_private_key(r.getrandbits(519) | 1, ec.SECP521R1())
    return ec.derive_private_key(r.randrange(1, K1_N), ec.SECP256K1())


def ed_key(r):
    return ed25519.Ed25519PrivateKey.from_private_bytes(r.randbytes(32))


def ed_raw(k):
    priv = k.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return priv, pub


def pem_trad(k):
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                           serialization.NoEncryption()).decode()


def pem_pkcs8(k):
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption()).decode()


def pem_pub(k):
    return k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


# ---------------------------------------------------------------- SSH wire format
def sstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def mpint(n):
    if n == 0:
        return sstr(b"")
    b = n.to_bytes((n.bit_length() + 8) // 8, "big")
    return sstr(b)


CURVE_SSH = {"secp256r1": "nistp256", "secp384r1": "nistp384", "secp521r1": "nistp521"}


def ssh_pub_blob(k):
    if isinstance(k, ed25519.Ed25519PrivateKey):
        return sstr("ssh-ed25519") + sstr(ed_raw(k)[1])
    if isinstance(k, rsa.RSAPrivateKey):
        pn = k.public_key().public_numbers()
        return sstr("ssh-rsa") + mpint(pn.e) + mpint(pn.n)
    if isinstance(k, ec.EllipticCurvePrivateKey):
        cn = CURVE_SSH[k.curve.name]
        q = k.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return sstr("ecdsa-sha2-" + cn) + sstr(cn) + sstr(q)
    if isinstance(k, dsa.DSAPrivateKey):
        pn = k.public_key().public_numbers()
        pp = pn.parameter_numbers
        return sstr("ssh-dss") + mpint(pp.p) + mpint(pp.q) + mpint(pp.g) + mpint(pn.y)
    raise TypeError


def ssh_keytype(k):
    blob = ssh_pub_blob(k)
    return blob[4:4 + struct.unpack(">I", blob[:4])[0]].decode()


def ssh_pub_line(k, comment):
    return "%s %s %s" % (ssh_keytype(k), b64(ssh_pub_blob(k)), comment)


def ssh_fingerprint(k):
    return "SHA256:" + b64(hashlib.sha256(ssh_pub_blob(k)).digest()).rstrip("=")


def openssh_private(k, comment, r):
    kt = ssh_keytype(k)
    if isinstance(k, ed25519.Ed25519PrivateKey):
        priv, pub = ed_raw(k)
        fields = sstr(pub) + sstr(priv + pub)
    elif isinstance(k, rsa.RSAPrivateKey):
        n = k.private_numbers()
        fields = mpint(n.public_numbers.n) + mpint(n.public_numbers.e) + mpint(n.d) + mpint(n.iqmp) + mpint(n.p) + mpint(n.q)
    elif isinstance(k, ec.EllipticCurvePrivateKey):
        cn = CURVE_SSH[k.curve.name]
        q = k.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        fields = sstr(cn) + sstr(q) + mpint(k.private_numbers().private_value)
    else:
        pn = k.private_numbers()
        pp = pn.public_numbers.parameter_numbers
        fields = mpint(pp.p) + mpint(pp.q) + mpint(pp.g) + mpint(pn.public_numbers.y) + mpint(pn.x)
    chk = r.randbytes(4)
    sec = chk + chk + sstr(kt) + fields + sstr(comment)
    i = 1
    while len(sec) % 8:
        sec += bytes([i])
        i += 1
    blob = b"openssh-key-v1\x00" + sstr("none") + sstr("none") + sstr(b"") + struct.pack(">I", 1) + \
        sstr(ssh_pub_blob(k)) + sstr(sec)
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + wrap(b64(blob), 70) + "\n-----END OPENSSH PRIVATE KEY-----\n"


def ppk(k, comment, version=2):
    kt = ssh_keytype(k)
    pub = ssh_pub_blob(k)
    if isinstance(k, ed25519.Ed25519PrivateKey):
        priv = sstr(ed_raw(k)[0])
    elif isinstance(k, rsa.RSAPrivateKey):
        n = k.private_numbers()
        priv = mpint(n.d) + mpint(n.p) + mpint(n.q) + mpint(n.iqmp)
    else:
        priv = mpint(k.private_numbers().private_value)
    macdata = sstr(kt) + sstr("none") + sstr(comment) + sstr(pub) + sstr(priv)
    if version == 2:
        mac = hmac.new(hashlib.sha1(b"putty-private-key-file-mac-key").digest(), macdata, hashlib.sha1).hexdigest()
    else:
        mac = hmac.new(b"", macdata, hashlib.sha256).hexdigest()
    pl, sl = wrap(b64(pub)), wrap(b64(priv))
    return ("PuTTY-User-Key-File-%d: %s\nEncryption: none\nComment: %s\nPublic-Lines: %d\n%s\nPrivate-Lines: %d\n%s\n"
            "Private-MAC: %s\n") % (version, kt, comment, pl.count("\n") + 1, pl, sl.count("\n") + 1, sl, mac)


# ---------------------------------------------------------------- OpenPGP
def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_armor(kind, data, headers=()):
    out = "-----BEGIN PGP %s-----\n" % kind
    for h in headers:
        out += h + "\n"
    out += "\n" + wrap(b64(data), 64) + "\n=" + b64(crc24(data).to_bytes(3, "big")) + "\n-----END PGP %s-----\n" % kind
    return out


def pgp_mpi(b):
    if isinstance(b, int):
        b = b.to_bytes((b.bit_length() + 7) // 8 or 1, "big")
    b = b.lstrip(b"\x00") or b"\x00"
    return struct.pack(">H", (len(b) - 1) * 8 + b[0].bit_length()) + b


def pgp_packet(tag, body):
    n = len(body)
    if n < 192:
        ln = bytes([n])
    elif n < 8384:
        n2 = n - 192
        ln = bytes([(n2 >> 8) + 192, n2 & 0xFF])
    else:
        ln = b"\xff" + struct.pack(">I", n)
    return bytes([0xC0 | tag]) + ln + body


ED_OID = bytes.fromhex("2B06010401DA470F01")


def pgp_key(r, uid, secret=True):
    """v4 EdDSA key + user id + self-certification; returns (armored, fingerprint hex)."""
    k = ed_key(r)
    priv, pub = ed_raw(k)
    ctime = int(ts(r).timestamp())
    pubbody = b"\x04" + struct.pack(">I", ctime) + bytes([22, len(ED_OID)]) + ED_OID + pgp_mpi(b"\x40" + pub)
    fpr = hashlib.sha1(b"\x99" + struct.pack(">H", len(pubbody)) + pubbody).digest()
    uidb = uid.encode()

    def sub(t, d):
        return bytes([len(d) + 1, t]) + d
    hashed = sub(2, struct.pack(">I", ctime)) + sub(33, b"\x04" + fpr) + sub(27, b"\x03") + sub(11, b"\x09\x08\x07\x02")
    sigpre = bytes([4, 0x13, 22, 8]) + struct.pack(">H", len(hashed)) + hashed
    h = hashlib.sha256(b"\x99" + struct.pack(">H", len(pubbody)) + pubbody + b"\xb4" + struct.pack(">I", len(uidb)) +
                       uidb + sigpre + b"\x04\xff" + struct.pack(">I", len(sigpre))).digest()
    sig = k.sign(h)
    unhashed = sub(16, fpr[-8:])
    sigbody = sigpre + struct.pack(">H", len(unhashed)) + unhashed + h[:2] + pgp_mpi(sig[:32]) + pgp_mpi(sig[32:])
    if secret:
        sm = pgp_mpi(priv)
        body = pubbody + b"\x00" + sm + struct.pack(">H", sum(sm) & 0xFFFF)
        data = pgp_packet(5, body)
    else:
        data = pgp_packet(6, pubbody)
    data += pgp_packet(13, uidb) + pgp_packet(2, sigbody)
    return pgp_armor("PRIVATE KEY BLOCK" if secret else "PUBLIC KEY BLOCK", data), fpr.hex().upper()


def pgp_message(r):
    pk = b"\x03" + r.randbytes(8) + bytes([18]) + pgp_mpi(b"\x40" + r.randbytes(32)) + bytes([48]) + r.randbytes(48)
    data = pgp_packet(1, pk) + pgp_packet(18, b"\x01" + r.randbytes(r.randint(80, 900)))
    return pgp_armor("MESSAGE", data)


# ---------------------------------------------------------------- bech32 / base58
_B32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def bech32(hrp, data, const=1):
    acc, bits, out = 0, 0, []
    for b in data:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    hv = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(hv + out + [0] * 6) ^ const
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_B32[d] for d in out + chk)


def segwit_addr(r):
    # bech32 with witness version 0 prefix (5-bit 0 then program)
    prog = r.randbytes(20)
    acc, bits, out = 0, 0, [0]
    for b in prog:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append((acc >> bits) & 31)
    if bits:
        out.append((acc << (5 - bits)) & 31)
    hrp = "bc"
    hv = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(hv + out + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_B32[d] for d in out + chk)


def age_identity(r):
    sk = r.randbytes(32)
    pub = x25519.X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return bech32("age-secret-key-", sk).upper(), bech32("age", pub)


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58(b):
    n = int.from_bytes(b, "big")
    s = ""
    while n:
        n, m = divmod(n, 58)
        s = B58[m] + s
    return "1" * (len(b) - len(b.lstrip(b"\x00"))) + s


def b58check(b):
    return b58(b + hashlib.sha256(hashlib.sha256(b).digest()).digest()[:4])


def btc_wif(r):
    return b58check(b"\x80" + r.randrange(1, K1_N).to_bytes(32, "big") + b"\x01")


def btc_p2pkh(r):
    return b58check(b"\x00" + r.randbytes(20))


def eth_addr(r):
    return "0x" + r.randbytes(20).hex()


def xkey(r, priv=True, version=None):
    k = ec_key(r, "k1")
    cc = r.randbytes(32)
    if priv:
        ver = version or bytes.fromhex("0488ADE4")
        kd = b"\x00" + k.private_numbers().private_value.to_bytes(32, "big")
    else:
        ver = version or bytes.fromhex("0488B21E")
        kd = k.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)
    return b58check(ver + b"\x00" + b"\x00" * 4 + b"\x00" * 4 + cc + kd)


def bip39_phrase(r, n=12):
    ent_bits = n * 11 * 32 // 33
    ent = r.randbytes(ent_bits // 8)
    h = hashlib.sha256(ent).digest()
    bits = int.from_bytes(ent, "big") << (n * 11 - ent_bits) | (h[0] >> (8 - (n * 11 - ent_bits)))
    return " ".join(BIP39[(bits >> (11 * (n - 1 - i))) & 2047] for i in range(n))


def electrum_seed(r, prefix="100"):
    while True:
        s = " ".join(r.choice(BIP39) for _ in range(12))
        if hmac.new(b"Seed version", s.encode(), hashlib.sha512).hexdigest().startswith(prefix):
            return s


L_ED = 2 ** 252 + 27742317777372353535851937790883648493


def monero_seed(r):
    key = (int.from_bytes(r.randbytes(32), "little") % L_ED).to_bytes(32, "little")
    n = 1626
    out = []
    for i in range(8):
        x = int.from_bytes(key[4 * i:4 * i + 4], "little")
        w1 = x % n
        w2 = (x // n + w1) % n
        w3 = (x // n // n + w2) % n
        out += [MONERO[w1], MONERO[w2], MONERO[w3]]
    z = zlib.crc32("".join(w[:3] for w in out).encode()) % 24
    out.append(out[z])
    return " ".join(out)


# ---------------------------------------------------------------- X.509
class CA:
    def __init__(self, r, cn="Home Lab Root CA"):
        self.r = r
        self.key = rsa_key(r, 2048)
        nb = ts(r, 2020, 2023).replace(microsecond=0)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        self.name = name
        self.cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                     .public_key(self.key.public_key()).serial_number(r.getrandbits(120))
                     .not_valid_before(nb).not_valid_after(nb + datetime.timedelta(days=3650))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))

    def pem(self):
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()

    def leaf(self, cn, key=None):
        r = self.r
        key = key or ec_key(r)
        nb = ts(r, 2023, 2025).replace(microsecond=0)
        c = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
             .issuer_name(self.name).public_key(key.public_key()).serial_number(r.getrandbits(120))
             .not_valid_before(nb).not_valid_after(nb + datetime.timedelta(days=r.choice([90, 365, 825])))
             .sign(self.key, hashes.SHA256()))
        return c.public_bytes(serialization.Encoding.PEM).decode(), key

    def csr(self, cn, key):
        # RSA PKCS1v15 or Ed25519 signatures are deterministic
        c = (x509.CertificateSigningRequestBuilder().subject_name(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])).sign(key, None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()))
        return c.public_bytes(serialization.Encoding.PEM).decode()


# ---------------------------------------------------------------- app-specific obfuscations
RCLONE_KEY = bytes([0x9c, 0x93, 0x5b, 0x48, 0x73, 0x0a, 0x55, 0x4d, 0x6b, 0xfd, 0x7c, 0x63, 0xc8, 0x86, 0xa9, 0x2b,
                    0xd3, 0x90, 0x19, 0x8e, 0xb8, 0x12, 0x8a, 0xfb, 0xf4, 0xde, 0x16, 0x2b, 0x8b, 0x95, 0xf6, 0x38])


def rclone_obscure(r, plain):
    iv = r.randbytes(16)
    e = Cipher(algorithms.AES(RCLONE_KEY), modes.CTR(iv)).encryptor()
    return b64url(iv + e.update(plain.encode()) + e.finalize())


DBEAVER_KEY = bytes.fromhex("babb4a9f774ab853c96c2d653dfe544a")


def dbeaver_encrypt(r, plain):
    iv = r.randbytes(16)
    data = plain.encode()
    padn = 16 - len(data) % 16
    data += bytes([padn]) * padn
    e = Cipher(algorithms.AES(DBEAVER_KEY), modes.CBC(iv)).encryptor()
    return iv + e.update(data) + e.finalize()


def mremoteng_encrypt(r, plain, master="mR3m"):
    salt = r.randbytes(16)
    nonce = r.randbytes(16)
    key = hashlib.pbkdf2_hmac("sha1", master.encode(), salt, 1000, 32)
    ct = AESGCM(key).encrypt(nonce, plain.encode(), salt)
    return b64(salt + nonce + ct)


def sha512crypt(r, p):
    return crypt.crypt(p, "$6$" + pick(r, ALNUM + "./", 16) + "$")


def yescrypt(r, p):
    return crypt.crypt(p, "$y$j9T$" + pick(r, ALNUM + "./", 22) + "$")


def bcrypt_hash(r, p, cost=None):
    return crypt.crypt(p, "$2b$%02d$" % (cost or r.choice([10, 11, 12])) + pick(r, ALNUM + "./", 22))


def argon2_shaped(r):
    return "$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s" % (r.choice([19456, 65536, 47104]), r.choice([2, 3]), r.choice([1, 4]),
                                                   b64(r.randbytes(16)).rstrip("="), b64(r.randbytes(32)).rstrip("="))

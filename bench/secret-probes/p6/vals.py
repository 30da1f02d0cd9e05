"""Value generators for the p6 outsider probe. All randomness comes from a
random.Random passed in, so output is deterministic per seed."""
import base64, hashlib, hmac, string, zlib, json, datetime, urllib.parse

B62 = string.ascii_letters + string.digits
UP = string.ascii_uppercase
LOW = string.ascii_lowercase
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"

WORDS = ["sunflower", "harbor", "falcon", "granite", "meadow", "copper", "lantern",
         "orchid", "thunder", "velvet", "walnut", "glacier", "pepper", "rocket",
         "saffron", "tundra", "violet", "willow", "zephyr", "basil", "cobalt",
         "dolphin", "ember", "fjord", "gopher", "hazel", "island", "jasper",
         "kettle", "lemon", "mango", "nebula", "oyster", "panda", "quartz",
         "raven", "salmon", "tiger", "umber", "vortex", "wombat", "yellow",
         "anchor", "biscuit", "canyon", "dragon", "eclipse", "forest", "guitar",
         "horizon", "igloo", "jungle", "koala", "lagoon", "marble", "nutmeg",
         "olive", "puzzle", "river", "summit", "teapot", "uranus", "valley"]
FIRST = ["alice", "bob", "carol", "dmitri", "erin", "farah", "gustavo", "hana",
         "ivan", "julia", "kenji", "lena", "marco", "nadia", "oscar", "priya"]
APPS = ["shop", "billing", "inventory", "payments", "orders", "crm", "portal",
        "analytics", "reports", "ledger", "catalog", "checkout", "auth", "search"]
SYM = "!@%^*-_=+.?~"


def rs(r, alphabet, n):
    return "".join(r.choice(alphabet) for _ in range(n))


def human_pw(r):
    """Password a human would pick: words, digits, symbols."""
    w = r.choice(WORDS)
    k = r.randrange(6)
    if k == 0:
        return w.capitalize() + str(r.randrange(10, 9999)) + r.choice("!@#%*?")
    if k == 1:
        return "-".join(r.choice(WORDS) for _ in range(3)) + str(r.randrange(10))
    if k == 2:
        leet = w.replace("a", "@").replace("o", "0").replace("e", "3").replace("i", "1")
        return leet.capitalize() + str(r.randrange(1970, 2026)) + r.choice("!.*")
    if k == 3:
        return r.choice(FIRST).capitalize() + r.choice(["_", ".", ""]) + w + str(r.randrange(100, 999)) + r.choice("!$%")
    if k == 4:
        return r.choice(WORDS).capitalize() + r.choice(WORDS).capitalize() + str(r.randrange(1, 99)) + r.choice("!?")
    return w.upper()[:3] + r.choice(WORDS) + "#" + str(r.randrange(1000, 99999))


def gen_pw(r, n=None, alpha=None):
    """Password manager / generator output."""
    if n is None:
        n = r.randrange(8, 41)
    if alpha is None:
        alpha = r.choice(["alnum", "alnumsym", "hex", "b64url", "lowernum"])
    a = {"alnum": B62, "alnumsym": B62 + SYM, "hex": HEX, "b64url": B64URL,
         "lowernum": LOW + string.digits}[alpha]
    while True:
        s = rs(r, a, n)
        # generator output always mixes classes; reject degenerate draws
        if alpha == "hex" or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
            if alpha != "alnumsym" or any(c in SYM for c in s):
                return s


def password(r, safe=False):
    """Either human or generated. safe=True: only URL-unreserved chars."""
    if safe:
        if r.random() < 0.5:
            return gen_pw(r, alpha=r.choice(["alnum", "hex", "lowernum"]))
        p = human_pw(r)
        return "".join(c if (c.isalnum() or c in "-._~") else "_" for c in p)
    return human_pw(r) if r.random() < 0.5 else gen_pw(r, n=r.randrange(10, 33))


def user(r):
    return r.choice(["admin", "app", "deploy", "svc_" + r.choice(APPS), r.choice(FIRST),
                     r.choice(APPS) + "_user", "root", "postgres", "etl", "backup"])


def host(r):
    return r.choice([
        "db.internal", "10.0.%d.%d" % (r.randrange(256), r.randrange(1, 255)),
        "%s-db.%s.svc.cluster.local" % (r.choice(APPS), r.choice(["prod", "staging", "default"])),
        "%s.c%s.eu-west-1.rds.amazonaws.com" % (r.choice(APPS), rs(r, LOW + string.digits, 12)),
        "pg-%s.example.net" % rs(r, LOW, 5), "mysql01.corp.lan", "localhost"])


# ---------------- provider tokens ----------------
def _b62(n):
    s = ""
    while n:
        n, d = divmod(n, 62)
        s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[d] + s
    return s or "0"


def gh_token(r, prefix="ghp_"):
    body = rs(r, B62, 30)
    chk = _b62(zlib.crc32(body.encode()) & 0xffffffff).rjust(6, "0")
    return prefix + body + chk


def gh_fine(r):
    return "github_pat_" + rs(r, B62, 22) + "_" + rs(r, B62, 59)


def npm_token(r):
    return gh_token(r, "npm_")


def glpat(r):
    return "glpat-" + rs(r, B62 + "-_", 20)


def slack_bot(r):
    return "xoxb-%s-%s-%s" % (r.randrange(10**10, 10**13), r.randrange(10**10, 10**13), rs(r, B62, 24))


def slack_user(r):
    return "xoxp-%d-%d-%d-%s" % (r.randrange(10**10, 10**12), r.randrange(10**10, 10**12),
                                 r.randrange(10**10, 10**13), rs(r, HEX, 32))


def slack_webhook(r):
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(r, UP + string.digits, 8),
                                                         rs(r, UP + string.digits, 10), rs(r, B62, 24))


def stripe(r):
    return r.choice(["sk_live_", "rk_live_"]) + rs(r, B62, r.choice([24, 99]))


def aws_pair(r):
    return "AKIA" + rs(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), rs(r, B62 + "+/", 40)


def google_key(r):
    return "AIza" + rs(r, B62 + "-_", 35)


def sendgrid(r):
    return "SG." + rs(r, B62 + "-_", 22) + "." + rs(r, B62 + "-_", 43)


def twilio_token(r):
    return rs(r, HEX, 32)


def pypi(r):
    raw = b"\x02\x01\x08pypi.org\x02\x24" + uuid4(r).encode() + b"\x00\x02\x2a" + \
        b'[1,["' + rs(r, LOW, 8).encode() + b'"]]' + b"\x00\x06\x20" + bytes(r.randrange(256) for _ in range(32))
    return "pypi-" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def openai(r):
    if r.random() < 0.5:
        return "sk-" + rs(r, B62, 20) + "T3BlbkFJ" + rs(r, B62, 20)
    return "sk-proj-" + rs(r, B62 + "-_", 74) + "T3BlbkFJ" + rs(r, B62 + "-_", 74)


def anthropic(r):
    return "sk-ant-api03-" + rs(r, B62 + "-_", 93) + "AA"


def datadog_api(r):
    return rs(r, HEX, 32)


def mailgun(r):
    return "key-" + rs(r, HEX, 32)


def shopify(r):
    return "shpat_" + rs(r, HEX, 32)


def digitalocean(r):
    return "dop_v1_" + rs(r, HEX, 64)


def vault_token(r):
    return "hvs." + rs(r, B62, 24)


def tfc_token(r):
    return rs(r, B62, 14) + ".atlasv1." + rs(r, B62, 67)


def telegram(r):
    return "%d:AA%s" % (r.randrange(10**8, 10**10), rs(r, B62 + "-_", 33))


def dockerhub(r):
    return "dckr_pat_" + rs(r, B62 + "-_", 27)


def grafana_sa(r):
    return "glsa_" + rs(r, B62, 32) + "_" + rs(r, HEX, 8)


def newrelic(r):
    return "NRAK-" + rs(r, UP + string.digits, 27)


def linear(r):
    return "lin_api_" + rs(r, B62, 40)


def postman(r):
    return "PMAK-" + rs(r, HEX, 24) + "-" + rs(r, HEX, 34)


def azure_storage_cs(r):
    acct = r.choice(APPS) + rs(r, LOW + string.digits, 6)
    key = base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode()
    return "DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net" % (acct, key)


def b64url(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt_hs(r, claims=None):
    h = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    if claims is None:
        claims = {"iss": "supabase", "ref": rs(r, LOW, 20), "role": "service_role",
                  "iat": 1690000000 + r.randrange(10**7), "exp": 2000000000 + r.randrange(10**7)}
    p = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(hmac.new(bytes(r.randrange(256) for _ in range(32)), (h + "." + p).encode(), hashlib.sha256).digest())
    return h + "." + p + "." + sig


def any_token(r):
    f = r.choice([gh_token, gh_fine, npm_token, glpat, slack_bot, stripe, google_key, sendgrid,
                  openai, anthropic, shopify, digitalocean, vault_token, telegram, dockerhub,
                  grafana_sa, newrelic, linear, postman, mailgun])
    return f(r), f.__name__


def secret_hex(r, n=64):
    return rs(r, HEX, n)


def secret_b64(r, nbytes=32):
    return base64.b64encode(bytes(r.randrange(256) for _ in range(nbytes))).decode()


def rand_bytes(r, n):
    return bytes(r.randrange(256) for _ in range(n))


def uuid4(r):
    h = rs(r, HEX, 32)
    h = h[:12] + "4" + h[13:16] + r.choice("89ab") + h[17:]
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# ---------------- hashes (negatives) ----------------
BCRYPT_ALPHA = "./" + string.ascii_uppercase + string.ascii_lowercase + string.digits


def bcrypt_hash(r):
    return "$2%s$%02d$%s" % (r.choice("ayb"), r.choice([10, 11, 12]), rs(r, BCRYPT_ALPHA, 53))


def apr1_hash(r):
    return "$apr1$%s$%s" % (rs(r, BCRYPT_ALPHA, 8), rs(r, BCRYPT_ALPHA, 22))


def sha512crypt(r):
    return "$6$%s$%s" % (rs(r, BCRYPT_ALPHA, 16), rs(r, BCRYPT_ALPHA, 86))


def sha_htpasswd(r):
    return "{SHA}" + base64.b64encode(hashlib.sha1(human_pw(r).encode()).digest()).decode()


def scram(r, pw=None):
    pw = pw or human_pw(r)
    salt = rand_bytes(r, 16)
    it = 4096
    salted = hashlib.pbkdf2_hmac("sha256", pw.encode(), salt, it)
    ck = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    sk = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    stored = hashlib.sha256(ck).digest()
    e = lambda b: base64.b64encode(b).decode()
    return "SCRAM-SHA-256$%d:%s$%s:%s" % (it, e(salt), e(stored), e(sk))


def md5_pg(r, u):
    return "md5" + hashlib.md5((human_pw(r) + u).encode()).hexdigest()


def sha256_hex(r):
    return hashlib.sha256(rand_bytes(r, 40)).hexdigest()


def pct(s):
    return urllib.parse.quote(s, safe="")


# ---------------- keys ----------------
_SMALL_PRIMES = []


def _small_primes():
    if not _SMALL_PRIMES:
        sieve = [True] * 2000
        for i in range(2, 2000):
            if sieve[i]:
                _SMALL_PRIMES.append(i)
                for j in range(i * i, 2000, i):
                    sieve[j] = False
    return _SMALL_PRIMES


def _is_probable_prime(n, r):
    for p in _small_primes():
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(12):
        a = r.randrange(2, n - 2)
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


def _prime(r, bits):
    while True:
        c = r.getrandbits(bits) | (3 << (bits - 2)) | 1
        if (c - 1) % 65537 and _is_probable_prime(c, r):
            return c


def rsa_key(r, bits=2048):
    from cryptography.hazmat.primitives.asymmetric import rsa
    e = 65537
    while True:
        p, q = _prime(r, bits // 2), _prime(r, bits // 2)
        if p != q:
            break
    if p < q:
        p, q = q, p
    phi = (p - 1) * (q - 1)
    d = pow(e, -1, phi)
    pub = rsa.RSAPublicNumbers(e, p * q)
    priv = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), pub)
    return priv.private_key()


def ec_key(r):
    from cryptography.hazmat.primitives.asymmetric import ec
    curve = r.choice([ec.SECP256R1(), ec.SECP384R1()])
    order = {"secp256r1": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
             "secp384r1": int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", 16)}[curve.name]
    return ec.derive_private_key(r.randrange(1, order), curve)


def ed_key(r):
    from cryptography.hazmat.primitives.asymmetric import ed25519
    return ed25519.Ed25519PrivateKey.from_private_bytes(rand_bytes(r, 32))


def _sshstr(b):
    return len(b).to_bytes(4, "big") + b


def openssh_ed25519(r, k=None, comment=None):
    from cryptography.hazmat.primitives import serialization as S
    k = k or ed_key(r)
    seed = k.private_bytes(S.Encoding.Raw, S.PrivateFormat.Raw, S.NoEncryption())
    pub = k.public_key().public_bytes(S.Encoding.Raw, S.PublicFormat.Raw)
    comment = comment or ("%s@%s" % (r.choice(FIRST), r.choice(["laptop", "build01", "ci-runner", "desktop"])))
    pubblob = _sshstr(b"ssh-ed25519") + _sshstr(pub)
    chk = rand_bytes(r, 4)
    priv = chk + chk + _sshstr(b"ssh-ed25519") + _sshstr(pub) + _sshstr(seed + pub) + _sshstr(comment.encode())
    pad = 1
    while len(priv) % 8:
        priv += bytes([pad]); pad += 1
    blob = b"openssh-key-v1\x00" + _sshstr(b"none") + _sshstr(b"none") + _sshstr(b"") + \
        (1).to_bytes(4, "big") + _sshstr(pubblob) + _sshstr(priv)
    b = base64.b64encode(blob).decode()
    lines = [b[i:i + 70] for i in range(0, len(b), 70)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"


_RSA_CACHE = {}


def pem_private(r, kind=None):
    """Returns (pem_text, description)."""
    from cryptography.hazmat.primitives import serialization as S
    kind = kind or r.choice(["rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8", "ed-openssh", "ed-pkcs8"])
    if kind.startswith("rsa"):
        k = rsa_key(r, r.choice([2048, 2048, 3072]) if False else 2048)
        fmt = S.PrivateFormat.TraditionalOpenSSL if kind == "rsa-pkcs1" else S.PrivateFormat.PKCS8
        return k.private_bytes(S.Encoding.PEM, fmt, S.NoEncryption()).decode(), kind
    if kind.startswith("ec"):
        k = ec_key(r)
        fmt = S.PrivateFormat.TraditionalOpenSSL if kind == "ec-sec1" else S.PrivateFormat.PKCS8
        return k.private_bytes(S.Encoding.PEM, fmt, S.NoEncryption()).decode(), kind
    if kind == "ed-openssh":
        return openssh_ed25519(r), kind
    k = ed_key(r)
    return k.private_bytes(S.Encoding.PEM, S.PrivateFormat.PKCS8, S.NoEncryption()).decode(), kind


def cert_pem(r, cn=None, key=None):
    """Self-signed cert, deterministic (Ed25519 signatures are deterministic)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    from cryptography.hazmat.primitives import serialization as S
    key = key or ed_key(r)
    cn = cn or "%s.example.com" % r.choice(APPS)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Corp")])
    nb = datetime.datetime(2024, 1, 1) + datetime.timedelta(days=r.randrange(400))
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
         .public_key(key.public_key()).serial_number(r.getrandbits(64) | 1)
         .not_valid_before(nb).not_valid_after(nb + datetime.timedelta(days=825))
         .add_extension(x509.SubjectAlternativeName([x509.DNSName(cn)]), critical=False)
         .sign(key, None))
    return c.public_bytes(S.Encoding.PEM).decode()


def public_pem(r):
    from cryptography.hazmat.primitives import serialization as S
    k = r.choice([ec_key, ed_key])(r)
    return k.public_key().public_bytes(S.Encoding.PEM, S.PublicFormat.SubjectPublicKeyInfo).decode()


def ssh_pub(r):
    from cryptography.hazmat.primitives import serialization as S
    k = r.choice([ec_key, ed_key])(r)
    return k.public_key().public_bytes(S.Encoding.OpenSSH, S.PublicFormat.OpenSSH).decode() + \
        " %s@%s" % (r.choice(FIRST), r.choice(["laptop", "workstation", "mbp"]))

"""Random secret/look-alike value generators (real formats, random content)."""
import random, string, base64, zlib, json, hashlib, uuid, time

R = random.Random(0)

def seed(s):
    R.seed(s)

ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
HEX = '0123456789abcdef'
B64 = ALNUM + '+/'
B64URL = ALNUM + '-_'
B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

def rs(n, alpha=ALNUM):
    return ''.join(R.choice(alpha) for _ in range(n))

def rb(n):
    return bytes(R.getrandbits(8) for _ in range(n))

def b64(n):  # base64 of n random bytes
    return base64.b64encode(rb(n)).decode()

def b64u(n, pad=False):
    s = base64.urlsafe_b64encode(rb(n)).decode()
    return s if pad else s.rstrip('=')

def hexs(n):
    return rs(n, HEX)

def uid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))

def b62enc(n, width):
    s = ''
    while n:
        n, r = divmod(n, 62)
        s = B62[r] + s
    return s.rjust(width, '0')

def crc_token(prefix):
    body = rs(30)
    return prefix + body + b62enc(zlib.crc32(body.encode()) & 0xffffffff, 6)

# ---------------- service tokens ----------------
def gh_classic():   return crc_token('ghp_')
def gh_oauth():     return crc_token('gho_')
def gh_server():    return crc_token('ghs_')
def gh_user2srv():  return crc_token('ghu_')
def gh_finegrained(): return 'github_pat_' + rs(22) + '_' + rs(59)
def npm_token():    return crc_token('npm_')
def gitlab_pat():   return 'glpat-' + rs(20, B64URL)
def gitlab_runner(): return 'glrt-' + rs(20, B64URL)
def gitlab_deploy(): return 'gldt-' + rs(20, B64URL)
def aws_akid():     return 'AKIA' + rs(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')
def aws_secret():   return rs(40, ALNUM + '+/')
def slack_bot():    return 'xoxb-%d-%d-%s' % (R.randint(10**10, 10**12), R.randint(10**11, 10**13), rs(24))
def slack_user():   return 'xoxp-%d-%d-%d-%s' % (R.randint(10**10, 10**12), R.randint(10**10, 10**12), R.randint(10**11, 10**13), hexs(32))
def slack_webhook(): return 'https://hooks.slack.com/services/T%s/B%s/%s' % (rs(8, UPNUM), rs(10, UPNUM), rs(24))
def stripe_live():  return R.choice(['sk_live_', 'rk_live_']) + rs(R.choice([24, 99]))
def stripe_pub():   return 'pk_live_' + rs(99)
def openai_key():
    if R.random() < 0.5:
        return 'sk-' + rs(20) + 'T3BlbkFJ' + rs(20)
    return 'sk-proj-' + rs(74, B64URL) + 'T3BlbkFJ' + rs(74, B64URL)
def anthropic_key(): return 'sk-ant-api03-' + rs(93, B64URL) + 'AA'
def google_api():   return 'AIza' + rs(35, B64URL)
def google_oauth_secret(): return 'GOCSPX-' + rs(28, B64URL)
def google_refresh(): return '1//0' + rs(R.randint(98, 104), B64URL)
def google_client_id(): return '%d-%s.apps.googleusercontent.com' % (R.randint(10**11, 10**12), rs(32, LOWNUM))
def sendgrid():     return 'SG.' + rs(22, B64URL) + '.' + rs(43, B64URL)
def twilio_sk():    return 'SK' + hexs(32)
def mailgun():      return 'key-' + hexs(32)
def docker_pat():   return 'dckr_pat_' + rs(27, B64URL)
def do_token():     return 'dop_v1_' + hexs(64)
def vault_token():  return 'hvs.' + rs(24)
def tfc_token():    return rs(14) + '.atlasv1.' + rs(67, ALNUM)
def shopify():      return 'shpat_' + hexs(32)
def pypi_token():   return 'pypi-AgEIcHlwaS5vcmc' + rs(R.randint(60, 140), B64URL)
def hf_token():     return 'hf_' + rs(34, string.ascii_letters)
def databricks():   return 'dapi' + hexs(32)
def postman_key():  return 'PMAK-' + hexs(24) + '-' + hexs(34)
def linear_key():   return 'lin_api_' + rs(40)
def newrelic():     return 'NRAK-' + rs(27, UPNUM)
def sonar():        return 'squ_' + hexs(40)
def cratesio():     return 'cio' + rs(32)
def azure_conn():
    return ('DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net'
            % (rs(R.randint(6, 14), string.ascii_lowercase), b64(64)))
def sentry_dsn_secret():
    return 'https://%s:%s@o%d.ingest.sentry.io/%d' % (hexs(32), hexs(32), R.randint(100000, 999999), R.randint(1000000, 9999999))
def sentry_dsn_public():
    return 'https://%s@o%d.ingest.sentry.io/%d' % (hexs(32), R.randint(100000, 999999), R.randint(1000000, 9999999))
def mapbox_public(): return 'pk.eyJ1Ijoi' + rs(R.randint(20, 30), B64URL) + '.' + rs(22, B64URL)
def wg_key():       return b64(32)
def rails_master(): return hexs(32)
def rails_skb():    return hexs(128)
def laravel_key():  return 'base64:' + b64(32)
def django_key():
    k = rs(50, string.ascii_lowercase + string.digits + '!@#$%^&*(-_=+)')
    return ('django-insecure-' + k) if R.random() < 0.4 else k
def hex_secret(n=32): return hexs(n)

def jwt(payload=None, alg='HS256'):
    h = {'alg': alg, 'typ': 'JWT'}
    if alg == 'RS256':
        h = {'alg': 'RS256', 'kid': rs(43, B64URL)}
    p = payload or {'sub': str(R.randint(10**6, 10**9)), 'name': R.choice(['deploy', 'ci-bot', 'admin', 'svc']),
                    'iat': R.randint(1600000000, 1700000000)}
    enc = lambda o: base64.urlsafe_b64encode(json.dumps(o, separators=(',', ':')).encode()).decode().rstrip('=')
    sig = b64u(32 if alg == 'HS256' else 256)
    return enc(h) + '.' + enc(p) + '.' + sig

def k8s_sa_jwt():
    return jwt({'iss': 'kubernetes/serviceaccount', 'kubernetes.io/serviceaccount/namespace': 'default',
                'kubernetes.io/serviceaccount/secret.name': 'deployer-token-' + rs(5, LOWNUM),
                'sub': 'system:serviceaccount:default:deployer'}, alg='RS256')

# ---------------- passwords ----------------
WORDS = ['sunshine', 'dragon', 'monkey', 'coffee', 'purple', 'tiger', 'winter', 'summer', 'autumn', 'falcon',
         'maple', 'harbor', 'rocket', 'violet', 'copper', 'mustang', 'phoenix', 'orchid', 'pepper', 'thunder',
         'bluebird', 'granite', 'lantern', 'meadow', 'nebula', 'pickle', 'saturn', 'walrus']
SYM = ',;:%&#!@^*-_+=.?~'

def human_pw():
    w = lambda: R.choice(WORDS)
    c = R.randrange(5)
    if c == 0: return w().capitalize() + str(R.randint(1990, 2025)) + R.choice('!@#$%&*?')
    if c == 1: return w() + w() + str(R.randint(1, 999))
    if c == 2: return w().capitalize() + R.choice(['_', '-', '.', '']) + w().capitalize() + str(R.randint(10, 99))
    if c == 3: return w().capitalize() + '#' + str(R.randint(1000, 9999))
    return w().capitalize() + R.choice(['&', '%', ';', ',', ':']) + w() + str(R.randint(1, 99)) + '!'

def rand_pw(n=None, alpha=None, safe=False):
    """Random password. safe=True -> no chars that need escaping in XML/URL/shell."""
    n = n or R.randint(8, 40)
    if alpha is None:
        alpha = ALNUM + ('-_.~' if safe else SYM)
    while True:
        s = R.choice(ALNUM) + rs(n - 1, alpha)
        if any(ch.isdigit() for ch in s) and any(ch.isalpha() for ch in s):
            if alpha == ALNUM or safe or any(ch in SYM for ch in s):
                return s

def any_pw(safe=False):
    c = R.randrange(5)
    if c == 0: return human_pw() if not safe else (R.choice(WORDS).capitalize() + str(R.randint(1990, 2025)) + R.choice('!*'))
    if c == 1: return rand_pw(R.randint(8, 16), safe=safe)
    if c == 2: return rand_pw(R.randint(16, 40), safe=safe)
    if c == 3: return rand_pw(R.randint(20, 64), alpha=ALNUM)
    return b64(R.choice([12, 18, 24, 33])).rstrip('=') if not safe else hexs(R.choice([16, 24, 32, 48]))

def api_token_any():
    f = R.choice([gh_classic, gh_finegrained, gitlab_pat, slack_bot, stripe_live, openai_key, anthropic_key,
                  sendgrid, docker_pat, do_token, hf_token, npm_token, shopify, databricks, linear_key, newrelic])
    return f()

# ---------------- keys ----------------
from cryptography.hazmat.primitives.asymmetric import ed25519, ec, rsa
from cryptography.hazmat.primitives import serialization, hashes
from cryptography import x509
from cryptography.x509.oid import NameOID
import datetime

_rsa_cache = []
def _rsa():
    # RSA generation is slow-ish on 2 cores; generate a few per run and reuse across files.
    if len(_rsa_cache) < 3:
        _rsa_cache.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        return _rsa_cache[-1]
    return R.choice(_rsa_cache)

def privkey_pem(kind=None):
    kind = kind or R.choice(['ed25519-openssh', 'rsa-pkcs1', 'rsa-pkcs8', 'ec', 'rsa-openssh'])
    if kind == 'ed25519-openssh':
        k = ed25519.Ed25519PrivateKey.generate()
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()).decode()
    if kind == 'rsa-openssh':
        return _rsa().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()).decode()
    if kind == 'rsa-pkcs1':
        return _rsa().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
    if kind == 'rsa-pkcs8':
        return _rsa().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    k = ec.generate_private_key(ec.SECP256R1())
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()

def ssh_pubkey():
    k = ed25519.Ed25519PrivateKey.generate().public_key()
    return k.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()

def rsa_pubkey_pem():
    return _rsa().public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()

def cert_pem(cn=None):
    k = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn or ('%s.example.internal' % rs(6, string.ascii_lowercase)))])
    now = datetime.datetime(2024, 1, 1)
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
         .serial_number(R.getrandbits(64)).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
         .sign(k, hashes.SHA256()))
    return c.public_bytes(serialization.Encoding.PEM).decode()

def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF

def pgp_armor(kind, first_byte, n):
    data = bytes([first_byte]) + rb(n)
    body = base64.b64encode(data).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    ck = base64.b64encode(crc24(data).to_bytes(3, 'big')).decode()
    return ('-----BEGIN PGP %s-----\n\n' % kind) + '\n'.join(lines) + '\n=' + ck + '\n-----END PGP %s-----\n' % kind

def pgp_secret():  return pgp_armor('PRIVATE KEY BLOCK', 0x95, R.randint(900, 1400))
def pgp_public():  return pgp_armor('PUBLIC KEY BLOCK', 0x99, R.randint(600, 1100))
def pgp_message(): return pgp_armor('MESSAGE', 0x85, R.randint(300, 700))

# ---------------- look-alike values ----------------
def sha256():  return hashlib.sha256(rb(32)).hexdigest()
def sha1():    return hashlib.sha1(rb(20)).hexdigest()
def md5():     return hashlib.md5(rb(16)).hexdigest()
def integrity(): return 'sha512-' + base64.b64encode(hashlib.sha512(rb(64)).digest()).decode()
def image_digest(): return 'sha256:' + sha256()
def etag(): return '"%s"' % md5()

def winscp_obfuscate(pw, user, host):
    MAGIC, FLAG, MAXLEN = 0xA3, 0xFF, 50
    enc = lambda ch: '%02X' % (((~ch) ^ MAGIC) & 0xFF)
    p = (user + host + pw).encode()
    shift = R.randrange(MAXLEN - len(p)) if len(p) < MAXLEN else 0
    out = enc(FLAG) + enc(0) + enc(len(p)) + enc(shift)
    out += ''.join(enc(R.getrandbits(8)) for _ in range(shift))
    out += ''.join(enc(b) for b in p)
    while len(out) < MAXLEN * 2:
        out += enc(R.getrandbits(8))
    return out

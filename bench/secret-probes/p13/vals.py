"""p13 value makers: random credentials in their public formats, names, noise, keys.

Every function takes the seeded random.Random; nothing here reads the OS random source,
so a seed always gives the same bytes (keys included: primes and seeds come from r)."""
import base64, hashlib, hmac, json, struct, string, uuid, zlib, datetime

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
B62 = DG + UP + LO
B64 = UP + LO + DG + '+/'
B64U = UP + LO + DG + '-_'
HEX = '0123456789abcdef'
B32 = UP + '234567'


def rs(r, alpha, n):
    return ''.join(r.choice(alpha) for _ in range(n))


def rhex(r, n):
    return '%0*x' % (n, r.getrandbits(4 * n)) if n else ''


def rbytes(r, n):
    return r.getrandbits(8 * n).to_bytes(n, 'little') if n else b''


def b64(b):
    return base64.b64encode(b).decode()


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b'=').decode()


def guid(r, upper=False):
    g = str(uuid.UUID(int=r.getrandbits(128), version=4))
    return g.upper() if upper else g


def b62num(n):
    s = ''
    while n:
        n, d = divmod(n, 62)
        s = B62[d] + s
    return s or '0'


# ---------------------------------------------------------------- words and names
WORDS = ('maple harbor falcon river copper silver orchid tundra velvet cobalt ember lantern '
         'meadow quartz saffron thistle willow zephyr canyon glacier juniper marble nimbus '
         'pepper raven sierra timber violet walnut yonder amber birch cedar delta fjord '
         'granite hazel indigo jasper kestrel lotus mosaic nectar onyx prairie quill').split()
FIRST = ('james maria chen aisha lukas sofia mateo yuki olga ravi emma noah fatima igor '
         'lena omar priya tom anna diego hana jonas nora pavel sara wei zoe').split()
LAST = ('smith garcia wang khan mueller rossi tanaka novak patel johansson silva kowalski '
        'dubois nguyen okafor schmidt ivanova lindqvist moreau haddad').split()
ORGS = ('acme globex initech umbrella hooli vandelay stark wayne tyrell cyberdyne soylent '
        'wonka gringotts pied-piper northwind contoso fabrikam tailspin').split()
TLDS = ('com', 'io', 'net', 'dev', 'co.uk', 'de', 'app')


def person(r):
    return r.choice(FIRST), r.choice(LAST)


def username(r):
    f, l = person(r)
    return r.choice([f[0] + l, f + '.' + l, f + l[0], f + str(r.randrange(10, 99)), l + f[0]])


def org(r):
    return r.choice(ORGS)


def domain(r):
    return org(r).replace('-', '') + '.' + r.choice(TLDS)


def email(r):
    return username(r) + '@' + domain(r)


def host(r, kind=None):
    kind = kind or r.choice(['db', 'pg', 'mysql', 'redis', 'mq', 'api', 'srv', 'nas', 'fs', 'git'])
    return '%s%02d.%s' % (kind, r.randrange(1, 30), r.choice(['internal', 'corp.local', 'lan', domain(r)]))


def winuser(r):
    f, l = person(r)
    return (f[0] + l).lower()


def ts(r, year=None):
    y = year or r.randrange(2021, 2025)
    return datetime.datetime(y, r.randrange(1, 13), r.randrange(1, 28), r.randrange(24),
                             r.randrange(60), r.randrange(60))


def sentence(r, n=None):
    n = n or r.randrange(5, 12)
    return ' '.join(r.choice(WORDS) for _ in range(n))


# ---------------------------------------------------------------- passwords
SAFE_SYM = '!#*-_+.?'


def password(r, sym=SAFE_SYM, n=None):
    """A strong-looking password (12-22 chars) using only the symbols in sym."""
    style = r.randrange(3)
    if style == 0 or not sym:
        n = n or r.randrange(14, 23)
        alpha = UP + LO + DG + sym
        while True:
            p = rs(r, alpha, n)
            if (any(c in UP for c in p) and any(c in LO for c in p) and any(c in DG for c in p)
                    and (not sym or any(c in sym for c in p))):
                return p
    if style == 1:
        a, b = r.sample(WORDS, 2)
        return (a.capitalize() + str(r.randrange(10, 99)) + r.choice(sym) + b.capitalize()
                + r.choice(sym) + str(r.randrange(100, 9999)))
    p = rs(r, UP + LO + DG, r.randrange(12, 18))
    i = r.randrange(1, len(p))
    return p[:i] + r.choice(sym) + p[i:] + rs(r, DG, 2)


# ---------------------------------------------------------------- provider tokens
def aws_akid(r, prefix='AKIA'):
    return prefix + rs(r, B32, 16)


def aws_secret(r):
    return rs(r, UP + LO + DG + '/+', 40)


def gh(r, prefix='ghp'):
    body = rs(r, B62, 30)
    return prefix + '_' + body + b62num(zlib.crc32(body.encode())).rjust(6, '0')


def gh_fine(r):
    return 'github_pat_11' + rs(r, UP + DG, 20) + '_' + rs(r, B62, 59)


def glpat(r):
    return 'glpat-' + rs(r, B62 + '-_', 20)


def slack_bot(r):
    return 'xoxb-%d-%d-%s' % (r.randrange(10 ** 10, 10 ** 12), r.randrange(10 ** 12, 10 ** 13), rs(r, B62, 24))


def slack_user(r):
    return 'xoxp-%d-%d-%d-%s' % (r.randrange(10 ** 10, 10 ** 12), r.randrange(10 ** 10, 10 ** 12),
                                 r.randrange(10 ** 12, 10 ** 13), rhex(r, 32))


def slack_webhook(r):
    return 'https://hooks.slack.com/services/T%s/B%s/%s' % (rs(r, UP + DG, 8), rs(r, UP + DG, 10), rs(r, B62, 24))


def stripe(r, kind='sk'):
    if r.random() < 0.5:
        return kind + '_live_' + rs(r, B62, 24)
    return kind + '_live_51' + rs(r, B62, 97)


def openai(r):
    if r.random() < 0.4:
        return 'sk-' + rs(r, B62, 20) + 'T3BlbkFJ' + rs(r, B62, 20)
    return 'sk-proj-' + rs(r, B64U, 74) + 'T3BlbkFJ' + rs(r, B64U, 74)


def anthropic(r):
    return 'sk-ant-api03-' + rs(r, B64U, 93) + 'AA'


def google_key(r):
    return 'AIza' + rs(r, B64U, 35)


def gcp_oauth_secret(r):
    return 'GOCSPX-' + rs(r, B64U, 28)


def sendgrid(r):
    return 'SG.' + rs(r, B64U, 22) + '.' + rs(r, B64U, 43)


def mailgun(r):
    return 'key-' + rhex(r, 32)


def npm(r):
    return 'npm_' + rs(r, B62, 36)


def pypi(r):
    return 'pypi-AgEIcHlwaS5vcmcCJ' + rs(r, B64U, 156)


def docker_pat(r):
    return 'dckr_pat_' + rs(r, B64U, 27)


def hf(r):
    return 'hf_' + rs(r, UP + LO, 34)


def dop(r):
    return 'dop_v1_' + rhex(r, 64)


def shopify(r):
    return 'shpat_' + rhex(r, 32)


def azure_storage_key(r):
    return b64(rbytes(r, 64))


def azure_client_secret(r):
    return rs(r, B62, 3) + r.choice(DG) + 'Q~' + rs(r, B62 + '_~.-', 34)


def ado_pat(r):
    return rs(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)


def discord(r):
    uid = str(r.randrange(10 ** 17, 10 ** 19))
    return b64u(uid.encode()) + '.' + rs(r, B64U, 6) + '.' + rs(r, B64U, 38)


def telegram(r):
    return '%d:AA%s' % (r.randrange(10 ** 8, 10 ** 10), rs(r, B64U, 33))


def tfc(r):
    return rs(r, B62, 14) + '.atlasv1.' + rs(r, B62, 67)


def vault(r):
    return 'hvs.CAESI' + rs(r, B64U, 86)


def crates(r):
    return 'cio' + rs(r, B62, 32)


def databricks(r):
    return 'dapi' + rhex(r, 32)


def atlassian(r):
    return 'ATATT3xFfGF0' + rs(r, B64U, 170) + '=' + rs(r, UP + DG, 8)


def linear(r):
    return 'lin_api_' + rs(r, B62, 40)


def notion(r):
    return 'ntn_' + rs(r, DG, 11) + rs(r, B62, 35)


def postman(r):
    return 'PMAK-' + rhex(r, 24) + '-' + rhex(r, 34)


def sentry(r):
    return 'sntryu_' + rhex(r, 64)


def grafana(r):
    return 'glsa_' + rs(r, B62, 32) + '_' + rhex(r, 8)


def newrelic(r):
    return 'NRAK-' + rs(r, UP + DG, 27)


def twilio_token(r):
    return rhex(r, 32)


def twilio_sid(r):
    return 'AC' + rhex(r, 32)


def cloudflare(r):
    return rs(r, B62 + '-_', 40)


def okta(r):
    return '00' + rs(r, B62 + '-_', 40)


def mapbox(r):
    return 'sk.eyJ1IjoiJ' + rs(r, B64U, 48) + '.' + rs(r, B64U, 22)


def jwt(r, alg=None, iss=None):
    alg = alg or r.choice(['HS256', 'RS256', 'ES256'])
    hdr = {'alg': alg, 'typ': 'JWT'}
    if alg != 'HS256':
        hdr['kid'] = rs(r, B64U, 27)
    t = int(ts(r).timestamp())
    body = {'sub': guid(r), 'iss': iss or 'https://auth.%s/' % domain(r), 'aud': r.choice(['api', 'web', 'cli']),
            'iat': t, 'exp': t + r.choice([3600, 86400, 2592000]),
            'scope': r.choice(['read write', 'openid profile email offline_access', 'admin'])}
    sig = rbytes(r, {'HS256': 32, 'RS256': 256, 'ES256': 64}[alg])
    return '.'.join([b64u(json.dumps(hdr, separators=(',', ':')).encode()),
                     b64u(json.dumps(body, separators=(',', ':')).encode()), b64u(sig)])


# (env var name, maker, description); values recognisable by their format
TOKENS = [
    ('GITHUB_TOKEN', gh, 'GitHub classic PAT'),
    ('GH_TOKEN', gh_fine, 'GitHub fine-grained PAT'),
    ('GITLAB_TOKEN', glpat, 'GitLab PAT'),
    ('SLACK_BOT_TOKEN', slack_bot, 'Slack bot token'),
    ('SLACK_USER_TOKEN', slack_user, 'Slack user token'),
    ('STRIPE_SECRET_KEY', stripe, 'Stripe live secret key'),
    ('OPENAI_API_KEY', openai, 'OpenAI key'),
    ('ANTHROPIC_API_KEY', anthropic, 'Anthropic key'),
    ('GOOGLE_API_KEY', google_key, 'Google API key'),
    ('SENDGRID_API_KEY', sendgrid, 'SendGrid key'),
    ('MAILGUN_API_KEY', mailgun, 'Mailgun key'),
    ('NPM_TOKEN', npm, 'npm token'),
    ('PYPI_TOKEN', pypi, 'PyPI token'),
    ('DOCKERHUB_TOKEN', docker_pat, 'Docker Hub PAT'),
    ('HF_TOKEN', hf, 'Hugging Face token'),
    ('DIGITALOCEAN_TOKEN', dop, 'DigitalOcean token'),
    ('SHOPIFY_ACCESS_TOKEN', shopify, 'Shopify admin token'),
    ('AZURE_CLIENT_SECRET', azure_client_secret, 'Azure AD client secret'),
    ('DISCORD_BOT_TOKEN', discord, 'Discord bot token'),
    ('TELEGRAM_BOT_TOKEN', telegram, 'Telegram bot token'),
    ('TF_TOKEN_app_terraform_io', tfc, 'Terraform Cloud token'),
    ('VAULT_TOKEN', vault, 'Vault token'),
    ('CARGO_REGISTRY_TOKEN', crates, 'crates.io token'),
    ('DATABRICKS_TOKEN', databricks, 'Databricks token'),
    ('JIRA_API_TOKEN', atlassian, 'Atlassian API token'),
    ('LINEAR_API_KEY', linear, 'Linear key'),
    ('NOTION_TOKEN', notion, 'Notion token'),
    ('POSTMAN_API_KEY', postman, 'Postman key'),
    ('SENTRY_AUTH_TOKEN', sentry, 'Sentry user token'),
    ('GRAFANA_SERVICE_ACCOUNT_TOKEN', grafana, 'Grafana SA token'),
    ('NEW_RELIC_API_KEY', newrelic, 'New Relic user key'),
    ('AWS_SECRET_ACCESS_KEY', aws_secret, 'AWS secret access key'),
    ('MAPBOX_SECRET_TOKEN', mapbox, 'Mapbox secret token'),
]


def token(r, exclude=()):
    while True:
        t = r.choice(TOKENS)
        if t[0] not in exclude:
            name, fn, desc = t
            return name, fn(r), desc


def camel(name):
    parts = name.lower().split('_')
    return parts[0] + ''.join(p.capitalize() for p in parts[1:])


def db_url(r, pw=None, scheme=None):
    scheme = scheme or r.choice(['postgresql', 'postgres', 'mysql', 'mongodb+srv', 'redis', 'amqp', 'mariadb'])
    pw = pw or password(r, sym='-_.!*')
    user = r.choice(['app', 'admin', 'svc_orders', 'reporting', 'root', 'postgres', username(r)])
    if scheme == 'mongodb+srv':
        return '%s://%s:%s@cluster0.%s.mongodb.net/%s?retryWrites=true&w=majority' % (
            scheme, user, pw, rs(r, LO + DG, 5), r.choice(['prod', 'app', 'analytics'])), pw
    if scheme == 'redis':
        return 'redis://default:%s@%s:6379/%d' % (pw, host(r, 'redis'), r.randrange(4)), pw
    if scheme == 'amqp':
        return 'amqp://%s:%s@%s:5672/%s' % (user, pw, host(r, 'mq'), r.choice(['%2F', 'prod', 'jobs'])), pw
    port = {'postgresql': 5432, 'postgres': 5432, 'mysql': 3306, 'mariadb': 3306}[scheme]
    return '%s://%s:%s@%s:%d/%s' % (scheme, user, pw, host(r, 'db'), port,
                                   r.choice(['orders', 'app', 'crm', 'billing', 'wiki'])), pw


# ---------------------------------------------------------------- noise helpers
def dpapi_hex(r, n=None):
    n = n or r.randrange(120, 260)
    return ('01000000d08c9ddf0115d1118c7a00c04fc297eb01000000' + rhex(r, 32) + '0000000002000000000003660000c000000010000000'
            + rhex(r, 2 * n))


def dpapi_b64(r, n=None):
    return b64(bytes.fromhex(dpapi_hex(r, n)))


def sha256hex(r):
    return hashlib.sha256(rbytes(r, 16)).hexdigest()


def bcrypt_hash(r):
    return '$2y$%02d$%s' % (r.choice([10, 12]), rs(r, './' + UP + LO + DG, 53))


def placeholder(r, name='API_KEY'):
    return r.choice(['<your-%s>' % name.lower().replace('_', '-'), 'YOUR_%s_HERE' % name, '${%s}' % name,
                     'REPLACE_ME', '********', '', '{{ %s }}' % name.lower(), 'xxxxxxxxxxxxxxxxxxxx',
                     'CHANGE_ME', '<redacted>'])


# ---------------------------------------------------------------- keys (deterministic)
_SMALL = [p for p in range(3, 3000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]


_SMALLPROD = 1
for _p in _SMALL:
    _SMALLPROD *= _p


def _probable_prime(n, r):
    import math
    if math.gcd(n, _SMALLPROD) != 1:
        return n in _SMALL
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(8):
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


def _prime(r, bits):
    while True:
        c = r.getrandbits(bits) | (3 << (bits - 2)) | 1
        if _probable_prime(c, r):
            return c


def rsa_key(r, bits=2048):
    from cryptography.hazmat.primitives.asymmetric import rsa
    e = 65537
    while True:
        p, q = _prime(r, bits // 2), _prime(r, bits // 2)
        if p == q:
            continue
        phi = (p - 1) * (q - 1)
        try:
            d = pow(e, -1, phi)
        except ValueError:
            continue
        n = p * q
        if n.bit_length() != bits:
            continue
        if p < q:
            p, q = q, p
        return rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p),
                                     rsa.RSAPublicNumbers(e, n)).private_key()


def ec_key(r):
    from cryptography.hazmat.primitives.asymmetric import ec
    n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    return ec.derive_private_key(r.randrange(1, n), ec.SECP256R1())


def _pem_lines(key, fmt):
    from cryptography.hazmat.primitives import serialization as s
    f = {'pkcs1': s.PrivateFormat.TraditionalOpenSSL, 'pkcs8': s.PrivateFormat.PKCS8}[fmt]
    return key.private_bytes(s.Encoding.PEM, f, s.NoEncryption()).decode().strip('\n').split('\n')


def pem_rsa(r, fmt='pkcs1'):
    """PEM lines of a new RSA private key ('pkcs1' -> BEGIN RSA PRIVATE KEY, 'pkcs8' -> BEGIN PRIVATE KEY)."""
    return _pem_lines(rsa_key(r), fmt)


def pem_ec(r, fmt='pkcs1'):
    return _pem_lines(ec_key(r), fmt)


def _sshstr(b):
    return struct.pack('>I', len(b)) + b


def _mpint(n):
    b = n.to_bytes((n.bit_length() + 8) // 8, 'big') if n else b''
    return _sshstr(b)


def _openssh_wrap(pubblob, privpart, r):
    check = rbytes(r, 4)
    priv = check + check + privpart
    pad = 1
    while len(priv) % 8:
        priv += bytes([pad])
        pad += 1
    blob = (b'openssh-key-v1\0' + _sshstr(b'none') + _sshstr(b'none') + _sshstr(b'') + struct.pack('>I', 1)
            + _sshstr(pubblob) + _sshstr(priv))
    s = b64(blob)
    return (['-----BEGIN OPENSSH PRIVATE KEY-----'] + [s[i:i + 70] for i in range(0, len(s), 70)]
            + ['-----END OPENSSH PRIVATE KEY-----'])


def openssh_ed25519(r, comment):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization as s
    seed = rbytes(r, 32)
    pub = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
    pubblob = _sshstr(b'ssh-ed25519') + _sshstr(pub)
    part = _sshstr(b'ssh-ed25519') + _sshstr(pub) + _sshstr(seed + pub) + _sshstr(comment.encode())
    return _openssh_wrap(pubblob, part, r), 'ssh-ed25519 %s %s' % (b64(pubblob), comment)


def openssh_rsa(r, comment):
    k = rsa_key(r)
    pn = k.private_numbers()
    n, e = pn.public_numbers.n, pn.public_numbers.e
    pubblob = _sshstr(b'ssh-rsa') + _mpint(e) + _mpint(n)
    part = (_sshstr(b'ssh-rsa') + _mpint(n) + _mpint(e) + _mpint(pn.d) + _mpint(pn.iqmp) + _mpint(pn.p)
            + _mpint(pn.q) + _sshstr(comment.encode()))
    return _openssh_wrap(pubblob, part, r), 'ssh-rsa %s %s' % (b64(pubblob), comment)


def ssh_pub_ed25519(r, comment):
    return openssh_ed25519(r, comment)[1]


def ppk(r, comment, passphrase=None):
    """PuTTY-User-Key-File-2 (RSA). Unencrypted unless passphrase is given (then aes256-cbc)."""
    k = rsa_key(r)
    pn = k.private_numbers()
    pub = _sshstr(b'ssh-rsa') + _mpint(pn.public_numbers.e) + _mpint(pn.public_numbers.n)
    priv = _mpint(pn.d) + _mpint(pn.p) + _mpint(pn.q) + _mpint(pn.iqmp)
    enc = 'none'
    pp = (passphrase or '').encode()
    if passphrase:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        enc = 'aes256-cbc'
        padn = (-len(priv)) % 16 or 16
        priv += hashlib.sha1(priv).digest()[:padn]
        key = (hashlib.sha1(b'\0\0\0\0' + pp).digest() + hashlib.sha1(b'\0\0\0\1' + pp).digest())[:32]
        plain = priv
        c = Cipher(algorithms.AES(key), modes.CBC(b'\0' * 16)).encryptor()
        privout = c.update(plain) + c.finalize()
    else:
        plain = privout = priv
    mackey = hashlib.sha1(b'putty-private-key-file-mac-key' + pp).digest()
    macdata = (_sshstr(b'ssh-rsa') + _sshstr(enc.encode()) + _sshstr(comment.encode()) + _sshstr(pub)
               + _sshstr(plain))
    mac = hmac.new(mackey, macdata, hashlib.sha1).hexdigest()
    pubs, privs = b64(pub), b64(privout)
    pl = [pubs[i:i + 64] for i in range(0, len(pubs), 64)]
    vl = [privs[i:i + 64] for i in range(0, len(privs), 64)]
    return (['PuTTY-User-Key-File-2: ssh-rsa', 'Encryption: ' + enc, 'Comment: ' + comment,
             'Public-Lines: %d' % len(pl)] + pl + ['Private-Lines: %d' % len(vl)] + vl + ['Private-MAC: ' + mac])


def pubkey_pem(r):
    from cryptography.hazmat.primitives import serialization as s
    k = ec_key(r) if r.random() < 0.4 else rsa_key(r)
    return k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode().strip().split('\n')


def cert_pem(r, cn=None):
    """A self-signed RSA certificate (PKCS#1 v1.5 signature, so deterministic)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    from cryptography.hazmat.primitives import hashes, serialization as s
    k = rsa_key(r)
    cn = cn or domain(r)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, org(r).capitalize())])
    t0 = ts(r)
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
         .serial_number(r.getrandbits(120) + 1).not_valid_before(t0)
         .not_valid_after(t0 + datetime.timedelta(days=r.choice([365, 825, 3650])))
         .sign(k, hashes.SHA256()))
    return c.public_bytes(s.Encoding.PEM).decode().strip().split('\n')

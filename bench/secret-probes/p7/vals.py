"""Random value generators for the p7 corpus (all driven by a shared random.Random)."""
import string, zlib, base64, json, hashlib, struct
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa, ec
from cryptography.hazmat.primitives import serialization

R = None  # set by gen.py

LOW = string.ascii_lowercase; UP = string.ascii_uppercase; DIG = string.digits
ALNUM = LOW + UP + DIG
B62 = DIG + UP + LOW
HEXL = '0123456789abcdef'
B32 = UP + '234567'
B64U = UP + LOW + DIG + '-_'

def rs(a, n): return ''.join(R.choice(a) for _ in range(n))
def pick(xs): return R.choice(xs)

WORDS = ['maple', 'otter', 'river', 'copper', 'falcon', 'violet', 'harbor', 'pepper', 'lantern', 'quartz',
         'meadow', 'cobalt', 'thunder', 'saffron', 'walnut', 'glacier', 'ember', 'juniper', 'marble', 'orchid',
         'tundra', 'willow', 'zephyr', 'nimbus', 'pixel', 'rocket', 'biscuit', 'mango', 'tango', 'sierra',
         'puffin', 'cactus', 'hazel', 'indigo', 'kettle', 'lagoon', 'mosaic', 'nutmeg', 'pebble', 'raven']
PW_SYMS = '!@#$%^&*-_+=?'

def _leet(w):
    return w.replace('a', '4').replace('e', '3').replace('o', '0').replace('i', '1')

def password(urlsafe=False):
    k = R.randrange(7)
    if k == 0:
        pw = pick(WORDS).capitalize() + pick(WORDS) + str(R.randrange(10, 999)) + pick('!#$%&*?')
    elif k == 1:
        n = R.randrange(12, 21)
        chars = [pick(UP), pick(LOW), pick(DIG), pick(PW_SYMS)] + [pick(ALNUM + PW_SYMS) for _ in range(n - 4)]
        R.shuffle(chars); pw = ''.join(chars)
    elif k == 2:
        pw = '-'.join(pick(WORDS).capitalize() for _ in range(3)) + str(R.randrange(1, 99))
    elif k == 3:
        pw = _leet(pick(WORDS)).capitalize() + pick('!#$%&') + _leet(pick(WORDS)).capitalize() + str(R.randrange(10, 99))
    elif k == 4:
        pw = rs(ALNUM, R.randrange(16, 25))
    elif k == 5:
        pw = pick(WORDS).capitalize() + pick('._#!') + str(R.randrange(1970, 2030)) + pick(WORDS)
    else:
        pw = rs(LOW, 4) + pick(DIG) + rs(UP, 3) + pick('!%&*') + rs(ALNUM, 5)
    if urlsafe:
        pw = ''.join(c if (c in ALNUM or c in '-_.~') else pick(DIG) for c in pw)
    return pw

SAFE_SHELL = set(ALNUM + '-_.,+=@%/:')
def sq(s):
    return s if all(c in SAFE_SHELL for c in s) else "'" + s + "'"

USERS = ['admin', 'root', 'deploy', 'app', 'svc_backup', 'jenkins', 'bob', 'alice.m', 'postgres', 'grafana',
         'ci-bot', 'mkeller', 'jdoe', 'reporting', 'etl_user', 'webapp', 'ops', 'lena.w']
def user(): return pick(USERS)
HOSTS = ['db01.internal', 'pg.prod.northwind.io', '10.0.3.17', 'mysql.staging.acme-corp.com', 'nas.lan',
         '192.168.1.20', 'db-replica-2.eu-west-1.internal', 'analytics.fabrikam.net', 'srv-backup.home.arpa',
         '172.16.4.9', 'warehouse.contoso.local', 'mq.tailspin.dev']
def host(): return pick(HOSTS)
DBS = ['app', 'billing', 'analytics', 'crm_prod', 'inventory', 'wiki', 'metrics', 'shop']
def dbname(): return pick(DBS)
PEOPLE = ['Anna', 'Ben', 'Carla', 'Dmitri', 'Elif', 'Farah', 'Georg', 'Hana', 'Ivan', 'Jonas', 'Kemal', 'Lena',
          'Marco', 'Nadia', 'Omar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tariq']
def person(): return pick(PEOPLE)
ORGS = ['acme-corp', 'northwind', 'fabrikam', 'tailspin', 'contoso', 'globex', 'initech', 'umbrella-labs']
def org(): return pick(ORGS)
REPOS = ['dotfiles', 'infra', 'api-server', 'website', 'mobile-app', 'terraform-modules', 'data-pipeline', 'blog']
def repo(): return pick(REPOS)
SSIDS = ['FRITZ!Box 7590 QK', 'Vodafone-3A5C', 'HomeNet-5G', 'Pinecone', 'OfficeGuest', 'TP-Link_8E2F', 'Casa_Lopez', 'Livebox-71B2']
def ssid(): return pick(SSIDS)

def ts(): return R.randrange(1690000000, 1730000000)

# ---------------- tokens in real formats ----------------
def b62enc(n, width=6):
    s = ''
    while n:
        n, r = divmod(n, 62); s = B62[r] + s
    return s.rjust(width, '0')

def gh_token(prefix='ghp'):
    body = rs(ALNUM, 30)
    return f'{prefix}_{body}{b62enc(zlib.crc32(body.encode()) & 0xffffffff)}'
def gh_fine(): return 'github_pat_11' + rs(UP + DIG, 20) + '_' + rs(ALNUM, 59)
def glpat(): return 'glpat-' + rs(ALNUM + '-_', 20)
def npm_token():
    body = rs(ALNUM, 30)
    return 'npm_' + body + b62enc(zlib.crc32(body.encode()) & 0xffffffff)
def slack_bot(): return f'xoxb-{R.randrange(10**10, 10**12)}-{R.randrange(10**12, 10**13)}-{rs(ALNUM, 24)}'
def slack_user(): return f'xoxp-{R.randrange(10**10, 10**12)}-{R.randrange(10**10, 10**12)}-{R.randrange(10**12, 10**13)}-{rs(HEXL, 32)}'
def slack_webhook(): return f'https://hooks.slack.com/services/T{rs(UP + DIG, 10)}/B{rs(UP + DIG, 10)}/{rs(ALNUM, 24)}'
def aws_akid(): return 'AKIA' + rs(UP + '234567', 16)
def aws_secret(): return rs(ALNUM + '+/', 40)
def stripe_live(): return pick(['sk_live_', 'rk_live_']) + '51' + rs(ALNUM, 22) + rs(ALNUM, 75)
def openai_key():
    if R.random() < 0.5:
        return 'sk-' + rs(ALNUM, 20) + 'T3BlbkFJ' + rs(ALNUM, 20)
    return 'sk-proj-' + rs(ALNUM + '-_', 74) + 'T3BlbkFJ' + rs(ALNUM + '-_', 74)
def anthropic_key(): return 'sk-ant-api03-' + rs(ALNUM + '-_', 93) + 'AA'
def google_api(): return 'AIza' + rs(ALNUM + '-_', 35)
def google_client_secret(): return 'GOCSPX-' + rs(ALNUM + '-_', 28)
def sendgrid(): return 'SG.' + rs(ALNUM + '-_', 22) + '.' + rs(ALNUM + '-_', 43)
def vault_token(): return 'hvs.CAESI' + rs(ALNUM + '-_', 86)
def do_token(): return 'dop_v1_' + rs(HEXL, 64)
def dckr_pat(): return 'dckr_pat_' + rs(ALNUM + '-_', 27)
def pypi_token(): return 'pypi-AgEIcHlwaS5vcmcCJ' + rs(B64U, 160)
def mailgun(): return 'key-' + rs(HEXL, 32)
def shopify(): return 'shpat_' + rs(HEXL, 32)
def telegram(): return f'{R.randrange(10**8, 10**10)}:AA{rs(ALNUM + "-_", 33)}'
def hf_token(): return 'hf_' + rs(ALNUM, 34)
def jenkins_token(): return '11' + rs(HEXL, 32)
def atlassian(): return 'ATATT3xFfGF0' + rs(ALNUM + '-_', 171) + '=' + rs(UP + DIG, 8)
def influx_token(): return rs(ALNUM + '-_', 86) + '=='
def openshift(): return 'sha256~' + rs(ALNUM + '-_', 43)
def wg_priv(): return base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode()
def azure_secret(): return rs(ALNUM, 3) + pick(DIG) + 'Q~' + rs(ALNUM + '~.-_', 34)
def grafana_sa(): return 'glsa_' + rs(ALNUM, 32) + '_' + rs(HEXL, 8)
def newrelic(): return 'NRAK-' + rs(UP + DIG, 27)
def postman(): return 'PMAK-' + rs(HEXL, 24) + '-' + rs(HEXL, 34)
def databricks(): return 'dapi' + rs(HEXL, 32)
def linear(): return 'lin_api_' + rs(ALNUM, 40)
def notion(): return 'secret_' + rs(ALNUM, 43)
def twilio_auth(): return rs(HEXL, 32)
def tailscale(): return 'tskey-auth-k' + rs(ALNUM, 11) + 'CNTRL-' + rs(ALNUM, 33)
def age_key(): return 'AGE-SECRET-KEY-1' + rs('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)
def discord_bot():
    uid = str(R.randrange(10**17, 10**18 * 2))
    return base64.b64encode(uid.encode()).decode().rstrip('=') + '.' + rs(ALNUM + '-_', 6) + '.' + rs(ALNUM + '-_', 38)
def heroku_key():
    return '%s-%s-%s-%s-%s' % (rs(HEXL, 8), rs(HEXL, 4), rs(HEXL, 4), rs(HEXL, 4), rs(HEXL, 12))
def uuid4():
    return '%s-%s-4%s-%s%s-%s' % (rs(HEXL, 8), rs(HEXL, 4), rs(HEXL, 3), pick('89ab'), rs(HEXL, 3), rs(HEXL, 12))

def b64u(b): return base64.urlsafe_b64encode(b).decode().rstrip('=')
def jwt(claims=None):
    hdr = {'alg': pick(['HS256', 'RS256']), 'typ': 'JWT'}
    now = ts()
    pl = claims or {'sub': str(R.randrange(10**5, 10**7)), 'name': person(), 'iat': now, 'exp': now + 3600 * 24 * 30}
    sig = bytes(R.randrange(256) for _ in range(32 if hdr['alg'] == 'HS256' else 256))
    return b64u(json.dumps(hdr, separators=(',', ':')).encode()) + '.' + b64u(json.dumps(pl, separators=(',', ':')).encode()) + '.' + b64u(sig)

def base32_secret(n=32): return rs(B32, n)

def github_recovery(): return [rs(HEXL, 5) + '-' + rs(HEXL, 5) for _ in range(16)]
def google_backup(): return ['%04d %04d' % (R.randrange(10000), R.randrange(10000)) for _ in range(10)]
def generic_recovery(): return [rs(LOW, 4) + '-' + rs(LOW, 4) for _ in range(10)]
def bitlocker():
    return '-'.join('%06d' % (11 * R.randrange(65536)) for _ in range(8))
def apple_recovery(): return '-'.join(rs(UP + DIG, 4) for _ in range(7))
def onepw_secret_key():
    a = '23456789ABCDEFGHJKLMNPQRSTVWXYZ'
    return 'A3-' + rs(a, 6) + '-' + rs(a, 6) + '-' + '-'.join(rs(a, 5) for _ in range(4))
def ms_recovery():
    a = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ'
    return '-'.join(rs(a, 5) for _ in range(5))

BIP = ('abandon ability able about above absent absorb abstract absurd abuse access accident account accuse achieve '
       'acid acoustic acquire across act action actor actress actual adapt add addict address adjust admit adult '
       'advance advice aerobic affair afford afraid again age agent agree ahead aim air airport aisle alarm album '
       'alcohol alert alien all alley allow almost alone alpha already also alter always amateur amazing among '
       'amount amused analyst anchor ancient anger angle angry animal ankle announce annual another answer antenna '
       'antique anxiety any apart apology appear apple approve april arch arctic area arena argue arm armed armor '
       'army around arrange arrest arrive arrow art artefact artist artwork ask aspect assault asset assist assume '
       'asthma athlete atom attack attend attitude attract auction audit august aunt author auto autumn average '
       'avocado avoid awake aware away awesome awful awkward axis baby bachelor bacon badge bag balance balcony ball '
       'bamboo banana banner bar barely bargain barrel base basic basket battle beach bean beauty because become '
       'beef before begin behave behind believe below belt bench benefit best betray better between beyond bicycle '
       'bid bike bind biology bird birth bitter black blade blame blanket blast bleak bless blind blood blossom '
       'blouse blue blur blush board boat body boil bomb bone bonus book boost border boring borrow boss bottom '
       'bounce box boy bracket brain brand brass brave bread breeze brick bridge brief bright bring brisk broccoli '
       'broken bronze broom brother brown brush bubble buddy budget buffalo build bulb bulk bullet bundle bunker '
       'burden burger burst bus business busy butter buyer buzz cabbage cabin cable cactus cage cake call calm '
       'camera camp can canal cancel candy cannon canoe canvas canyon capable capital captain car carbon card cargo '
       'carpet carry cart case cash casino castle casual cat catalog catch category cattle caught cause caution '
       'cave ceiling celery cement census century cereal certain chair chalk champion change chaos chapter charge '
       'chase chat cheap check cheese chef cherry chest chicken chief child chimney choice choose chronic chuckle '
       'chunk churn cigar cinnamon circle citizen city civil claim clap clarify claw clay clean clerk clever click '
       'client cliff climb clinic clip clock clog close cloth cloud clown club clump cluster clutch coach coast '
       'coconut code coffee coil coin collect color column combine come comfort comic common company concert').split()
def mnemonic(n=12): return ' '.join(pick(BIP) for _ in range(n))

# ---------------- keys (deterministic) ----------------
def randbytes(n): return bytes(R.randrange(256) for _ in range(n))

def _is_probable_prime(n):
    if n < 2: return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97):
        if n % p == 0: return n == p
    d, s = n - 1, 0
    while d % 2 == 0: d //= 2; s += 1
    for _ in range(12):
        a = R.randrange(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1): continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1: break
        else:
            return False
    return True

def _prime(bits):
    while True:
        c = R.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if c % 65537 != 1 and _is_probable_prime(c): return c

def rsa_key(bits=2048):
    e = 65537
    while True:
        p, q = _prime(bits // 2), _prime(bits // 2)
        if p == q: continue
        phi = (p - 1) * (q - 1)
        try:
            d = pow(e, -1, phi)
        except ValueError:
            continue
        break
    if p < q: p, q = q, p
    pub = rsa.RSAPublicNumbers(e, p * q)
    priv = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), pub)
    return priv.private_key()

def rsa_pem(pkcs8=False, bits=2048):
    k = rsa_key(bits)
    fmt = serialization.PrivateFormat.PKCS8 if pkcs8 else serialization.PrivateFormat.TraditionalOpenSSL
    return k.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()

def ec_pem():
    k = ec.derive_private_key(R.randrange(1, 2**255), ec.SECP256R1())
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                           serialization.NoEncryption()).decode()

def _sstr(b):
    if isinstance(b, str): b = b.encode()
    return struct.pack('>I', len(b)) + b

def ed25519_openssh(comment='user@host'):
    seed = randbytes(32)
    k = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    pubblob = _sstr('ssh-ed25519') + _sstr(pub)
    chk = randbytes(4)
    priv = chk + chk + _sstr('ssh-ed25519') + _sstr(pub) + _sstr(seed + pub) + _sstr(comment)
    i = 1
    while len(priv) % 8:
        priv += bytes([i]); i += 1
    blob = b'openssh-key-v1\0' + _sstr('none') + _sstr('none') + _sstr(b'') + struct.pack('>I', 1) + _sstr(pubblob) + _sstr(priv)
    b = base64.b64encode(blob).decode()
    lines = [b[i:i + 70] for i in range(0, len(b), 70)]
    publine = 'ssh-ed25519 ' + base64.b64encode(pubblob).decode() + ' ' + comment
    return '-----BEGIN OPENSSH PRIVATE KEY-----\n' + '\n'.join(lines) + '\n-----END OPENSSH PRIVATE KEY-----\n', publine

def ssh_pub(comment='user@host'):
    if R.random() < 0.7:
        seed = randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = _sstr('ssh-ed25519') + _sstr(pub)
        t = 'ssh-ed25519'
    else:
        n = R.getrandbits(2048) | (1 << 2047) | 1
        nb = n.to_bytes(257, 'big')
        blob = _sstr('ssh-rsa') + _sstr(b'\x01\x00\x01') + _sstr(nb)
        t = 'ssh-rsa'
    fp = 'SHA256:' + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip('=')
    return f'{t} {base64.b64encode(blob).decode()} {comment}', fp

def sha256hex(): return rs(HEXL, 64)
def sha1hex(): return rs(HEXL, 40)

# ---------------- non-credential identifiers ----------------
def win_product_key():
    a = 'BCDFGHJKMPQRTVWXY2346789'
    return '-'.join(rs(a, 5) for _ in range(5))
def iban_de():
    bban = '%08d%010d' % (R.randrange(10**7, 10**8), R.randrange(10**9, 10**10))
    num = int(bban + '131400')  # D=13 E=14 + '00'
    chk = 98 - num % 97
    s = 'DE%02d%s' % (chk, bban)
    return ' '.join(s[i:i + 4] for i in range(0, len(s), 4))
def isbn13():
    d = [9, 7, 8] + [R.randrange(10) for _ in range(9)]
    s = sum(x * (1 if i % 2 == 0 else 3) for i, x in enumerate(d))
    d.append((10 - s % 10) % 10)
    s = ''.join(map(str, d))
    return f'{s[:3]}-{s[3]}-{s[4:8]}-{s[8:12]}-{s[12]}'
def ups_tracking(): return '1Z' + rs(UP + DIG, 6) + rs(DIG, 10)
def phone(): return pick(['+49 30 %d %04d' % (R.randrange(100, 999), R.randrange(10000)),
                          '+1 (%03d) %03d-%04d' % (R.randrange(201, 989), R.randrange(200, 999), R.randrange(10000)),
                          '+34 6%02d %03d %03d' % (R.randrange(100), R.randrange(1000), R.randrange(1000)),
                          '+33 6 %02d %02d %02d %02d' % tuple(R.randrange(100) for _ in range(4))])
def mac(): return ':'.join('%02x' % R.randrange(256) for _ in range(6))
def version(): return '%d.%d.%d' % (R.randrange(0, 20), R.randrange(0, 40), R.randrange(0, 30))
def serial_apple(): return 'C02' + rs(UP + DIG, 9)
def gpg_fpr(): return rs('0123456789ABCDEF', 40)
def btc_addr(): return 'bc1q' + rs('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 38)
def eth_addr(): return '0x' + rs('0123456789abcdefABCDEF', 40)

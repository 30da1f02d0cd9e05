#!/usr/bin/env python3
"""p9 blind secret-probe generator: python3 gen.py SEED -> out_SEED/{pos,neg,manifest.json,secrets.json}

Theme: home directories of data scientists, mobile devs, network engineers,
streamers/modders, crypto/finance users, web designers, students and SREs.
Everything random derives from random.Random(SEED)."""
import sys, os, json, random, string, base64, hashlib, hmac, zlib, struct, shutil, datetime

from cryptography.hazmat.primitives.asymmetric import ec, x25519, ed25519, rsa, padding
from cryptography.hazmat.primitives import serialization, hashes
from cryptography import x509
from cryptography.x509.oid import NameOID

# The BIP-39 English word list (a published list, not kept here): p5/data/bip39_english.txt,
# which run.sh copies to data/ beside this file.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bip39_english.txt")) as _f:
    BIP39 = _f.read().split()
assert len(BIP39) == 2048

LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
ALNUM = DIG + UP + LOW
B62 = DIG + UP + LOW
B64URL = UP + LOW + DIG + '-_'
B64STD = UP + LOW + DIG + '+/'
B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

FIRST = ['anna', 'ben', 'carla', 'dmitri', 'elif', 'farah', 'goran', 'hana', 'ivan', 'jules', 'kenji', 'lena',
         'marco', 'nadia', 'omar', 'priya', 'quinn', 'rosa', 'sven', 'tomas', 'uma', 'victor', 'wen', 'yusuf', 'zoe',
         'aisha', 'bruno', 'chloe', 'diego', 'emma', 'felix', 'greta', 'hugo', 'ines', 'jonas', 'kira', 'leo', 'maya']
LAST = ['schmidt', 'okafor', 'tanaka', 'novak', 'silva', 'kowalski', 'haddad', 'lindqvist', 'moreau', 'patel',
        'garcia', 'nguyen', 'oconnor', 'rossi', 'yilmaz', 'ivanova', 'kim', 'dubois', 'fischer', 'santos']
COMPANIES = ['acme', 'northwind', 'globex', 'initech', 'umbrella-labs', 'bluefin', 'stellar', 'orchid', 'kestrel',
             'nimbus', 'pinecone-analytics', 'redwood', 'tidal', 'quartzly', 'lumen', 'harbor', 'foxglove', 'ember']
TLDS = ['com', 'io', 'net', 'de', 'co.uk', 'dev', 'org', 'fr', 'nl', 'eu']
PROJECTS = ['churn-model', 'sales-forecast', 'image-seg', 'nlp-sentiment', 'fraud-detect', 'recsys', 'ab-tests',
            'climate-eda', 'thesis', 'kaggle-titanic', 'llm-eval', 'timeseries', 'geo-viz', 'survey-analysis']
APPS = ['FitTrack', 'RecipeBox', 'ParkPal', 'BudgetBee', 'StudyBuddy', 'PetPlanner', 'TrailMix', 'NoteNest',
        'QuickShop', 'WeatherNow', 'LinguaLeap', 'BeatBox']
PW_WORDS = ['horse', 'battery', 'staple', 'correct', 'purple', 'monkey', 'dragon', 'sunset', 'river', 'coffee',
            'banana', 'rocket', 'window', 'garden', 'tiger', 'falcon', 'maple', 'ocean', 'pickle', 'violin', 'cactus',
            'thunder', 'marble', 'lantern', 'walrus', 'biscuit', 'crimson', 'nebula', 'otter', 'pepper', 'quartz',
            'saffron', 'tundra', 'velvet', 'zephyr', 'anchor', 'blossom', 'canyon', 'dolphin', 'ember', 'glacier',
            'harvest', 'igloo', 'jasmine', 'kettle', 'lobster', 'meadow', 'nutmeg', 'orchard', 'pumpkin', 'raven']
SEASONS = ['Summer', 'Winter', 'Spring', 'Autumn', 'Fall']
MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October',
          'November', 'December']
PETS = ['Buddy', 'Luna', 'Max', 'Bella', 'Charlie', 'Milo', 'Coco', 'Rocky', 'Nala', 'Simba', 'Oscar', 'Pepper']
CITIES = ['Berlin', 'Lagos', 'Osaka', 'Porto', 'Denver', 'Krakow', 'Austin', 'Lyon', 'Izmir', 'Perth']


def b58encode(b):
    n = int.from_bytes(b, 'big')
    out = ''
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    pad = len(b) - len(b.lstrip(b'\0'))
    return '1' * pad + out


def b58check(payload):
    chk = hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    return b58encode(payload + chk)


def base62(n):
    s = ''
    while n:
        n, r = divmod(n, 62)
        s = B62[r] + s
    return s or '0'


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip('=')


def sshstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack('>I', len(b)) + b


def wrap(s, n=64):
    return [s[i:i + n] for i in range(0, len(s), n)]


class G:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self._rsa = None

    # ---- primitive randomness
    def ch(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def ri(self, a, b):
        return self.r.randint(a, b)

    def s(self, alphabet, n):
        return ''.join(self.r.choice(alphabet) for _ in range(n))

    def hex(self, n, upper=False):
        h = self.s('0123456789abcdef', n)
        return h.upper() if upper else h

    def rb(self, n):
        return bytes(self.r.getrandbits(8) for _ in range(n))

    def uuid(self):
        h = self.hex(32)
        h = h[:12] + '4' + h[13:16] + self.ch('89ab') + h[17:]
        return '%s-%s-%s-%s-%s' % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])

    def sha(self, n=40):
        return self.hex(n)

    # ---- people / places
    def user(self):
        f, l = self.ch(FIRST), self.ch(LAST)
        return self.ch([f, f + '.' + l, f[0] + l, f + l[0], f + '_' + l, l + str(self.ri(1, 99))])

    def fullname(self):
        return self.ch(FIRST).title() + ' ' + self.ch(LAST).title()

    def domain(self):
        return self.ch(COMPANIES) + '.' + self.ch(TLDS)

    def email(self):
        return '%s@%s' % (self.ch(FIRST) + '.' + self.ch(LAST), self.ch([self.domain(), 'gmail.com', 'outlook.com', 'proton.me']))

    def host(self):
        return self.ch(['db', 'pg', 'mysql', 'api', 'ftp', 'files', 'vpn', 'mail', 'smtp', 'grafana', 'ci']) + \
            self.ch(['', '01', '-prod', '-eu', '2', '-staging']) + '.' + self.domain()

    def ip(self, private=True):
        if private:
            return self.ch(['10.%d.%d.%d' % (self.ri(0, 254), self.ri(0, 254), self.ri(1, 254)),
                            '192.168.%d.%d' % (self.ri(0, 254), self.ri(1, 254)),
                            '172.%d.%d.%d' % (self.ri(16, 31), self.ri(0, 254), self.ri(1, 254))])
        return self.ch(['203.0.113.%d', '198.51.100.%d', '192.0.2.%d']) % self.ri(1, 254)

    def date(self, y0=2019, y1=2025):
        return datetime.date(self.ri(y0, y1), self.ri(1, 12), self.ri(1, 28))

    # ---- human / generic credentials
    def human_pw(self):
        k = self.ri(0, 11)
        y = self.ri(1975, 2025)
        if k == 0:
            return self.ch(SEASONS) + str(self.ri(2016, 2025)) + self.ch('!#$@?*')
        if k == 1:
            return self.ch(PETS) + str(self.ri(1, 99)).zfill(2) + self.ch(['!', '!!', '#', '$', ''])
        if k == 2:
            return '-'.join(self.r.sample(PW_WORDS, self.ri(3, 4)))
        if k == 3:
            return self.ch(PW_WORDS) + str(self.ri(1, 9)) + self.ch(PW_WORDS) + self.ch(['longer', 'forever', 'again', 'rules'])
        if k == 4:
            return self.s(ALNUM + '!@#$%^&*-_=+', self.ri(16, 28))
        if k == 5:
            w = self.ch(PW_WORDS)
            w = w.replace('a', '@').replace('o', '0').replace('e', '3').replace('i', '1')
            return w[0].upper() + w[1:] + str(y)
        if k == 6:
            return self.ch(FIRST).title() + self.ch(['_', '.', '']) + str(y) + self.ch(['!', '?', '', '*'])
        if k == 7:
            return ''.join(w.title() for w in self.r.sample(PW_WORDS, 3)) + str(self.ri(10, 999))
        if k == 8:
            return self.s(ALNUM, self.ri(12, 20))
        if k == 9:
            return self.ch(MONTHS) + self.ch(['.', '-', '_']) + str(self.ri(2018, 2025)) + self.ch('!#')
        if k == 10:
            return self.ch(CITIES) + self.ch(['#', '@', '!']) + str(self.ri(100, 9999)) + self.ch(PW_WORDS)
        return self.ch(['ILove', 'My', 'Go', 'Team']) + self.ch(PETS) + self.ch(PW_WORDS).title() + str(self.ri(1, 99))

    def strong_pw(self, n=None):
        return self.s(ALNUM + '!#%^*-_=+.', n or self.ri(18, 32))

    def pw(self):
        return self.human_pw() if self.chance(0.6) else self.strong_pw()

    def safe_pw(self):
        # no quote/backslash/shell-hostile/url-hostile chars, for contexts that would need escaping
        while True:
            p = self.pw()
            if not any(c in p for c in '"\'\\$`#;@:/%&=<>{}? '):
                return p

    def pin(self):
        return str(self.ri(1000, 999999)).zfill(self.ch([4, 6]))

    # ---- provider formats
    def gh_classic(self, prefix='ghp_'):
        body = self.s(B62, 30)
        return prefix + body + base62(zlib.crc32(body.encode())).rjust(6, '0')

    def gh_fine(self):
        return 'github_pat_' + self.s(ALNUM, 22) + '_' + self.s(ALNUM, 59)

    def glpat(self):
        return 'glpat-' + self.s(ALNUM + '-_', 20)

    def npm(self):
        body = self.s(B62, 30)
        return 'npm_' + body + base62(zlib.crc32(body.encode())).rjust(6, '0')

    def slack_bot(self):
        return 'xoxb-%s-%s-%s' % (self.s(DIG, self.ri(10, 12)), self.s(DIG, 13), self.s(ALNUM, 24))

    def slack_user(self):
        return 'xoxp-%s-%s-%s-%s' % (self.s(DIG, 11), self.s(DIG, 11), self.s(DIG, 13), self.hex(32))

    def slack_webhook(self):
        return 'https://hooks.slack.com/services/T%s/B%s/%s' % (self.s(UP + DIG, 8), self.s(UP + DIG, 10), self.s(ALNUM, 24))

    def snowflake_id(self):
        return str(self.ri(900000000000000000, 1300000000000000000))

    def discord_bot(self):
        uid = self.snowflake_id()
        return b64u(uid.encode()) + '.' + self.s(B64URL, 6) + '.' + self.s(B64URL, 38)

    def discord_webhook(self):
        return 'https://discord.com/api/webhooks/%s/%s' % (self.snowflake_id(), self.s(B64URL, 68))

    def twitch_oauth(self):
        return self.s(LOW + DIG, 30)

    def twitch_stream_key(self):
        return 'live_%s_%s' % (self.s(DIG, 9), self.s(ALNUM, 30))

    def yt_stream_key(self):
        return '-'.join(self.s(LOW + DIG, 4) for _ in range(5))

    def steam_key(self):
        return self.hex(32, upper=True)

    def google_key(self):
        return 'AIza' + self.s(ALNUM + '-_', 35)

    def aws_pair(self):
        return 'AKIA' + self.s(UP + '234567', 16), self.s(ALNUM + '/+', 40)

    def stripe(self):
        if self.chance(0.5):
            return 'sk_live_' + self.s(ALNUM, 24)
        return 'sk_live_51' + self.s(ALNUM, 97)

    def sendgrid(self):
        return 'SG.' + self.s(B64URL, 22) + '.' + self.s(B64URL, 43)

    def mailgun(self):
        return 'key-' + self.hex(32)

    def hf(self):
        return 'hf_' + self.s(UP + LOW, 34)

    def openai(self):
        if self.chance(0.4):
            return 'sk-' + self.s(ALNUM, 20) + 'T3BlbkFJ' + self.s(ALNUM, 20)
        return 'sk-proj-' + self.s(B64URL, 74) + 'T3BlbkFJ' + self.s(B64URL, 74)

    def anthropic(self):
        return 'sk-ant-api03-' + self.s(B64URL, 93) + 'AA'

    def databricks(self):
        return 'dapi' + self.hex(32) + self.ch(['', '', '-2', '-3'])

    def pypi(self):
        return 'pypi-AgEIcHlwaS5vcmc' + self.s(B64URL, self.ri(150, 190))

    def vault(self):
        if self.chance(0.75):
            return 'hvs.CAESI' + self.s(B64URL, 86)
        return 's.' + self.s(ALNUM, 24)

    def pd_api(self):
        return self.ch(['u+', '']) + self.s(ALNUM + '-_', 18 if True else 20)

    def sentry(self):
        return 'sntryu_' + self.hex(64)

    def dop(self):
        return 'dop_v1_' + self.hex(64)

    def telegram(self):
        return '%s:AA%s' % (self.s(DIG, 10), self.s(B64URL, 33))

    def grafana_sa(self):
        body = self.s(ALNUM, 32)
        return 'glsa_' + body + '_' + '%08x' % zlib.crc32(('glsa_' + body).encode())

    def tfc(self):
        return self.s(ALNUM, 14) + '.atlasv1.' + self.s(ALNUM, 67)

    def dockerhub(self):
        return 'dckr_pat_' + self.s(B64URL, 27)

    def netlify(self):
        return 'nfp_' + self.s(ALNUM, 36)

    def mapbox_secret(self):
        payload = json.dumps({'u': self.user().replace('.', ''), 'a': self.s(LOW + DIG, 25)}, separators=(',', ':'))
        return 'sk.' + b64u(payload.encode()) + '.' + self.s(B64URL, 22)

    def azure_conn(self):
        acct = self.ch(COMPANIES).replace('-', '') + self.s(LOW + DIG, 4)
        return 'DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;EndpointSuffix=core.windows.net' % (
            acct, base64.b64encode(self.rb(64)).decode())

    def jwt(self, payload, alg='HS256'):
        h = b64u(json.dumps({'alg': alg, 'typ': 'JWT'}, separators=(',', ':')).encode())
        p = b64u(json.dumps(payload, separators=(',', ':')).encode())
        sig = b64u(self.rb(32 if alg == 'HS256' else 256))
        return h + '.' + p + '.' + sig

    def jupyter_token(self):
        return self.hex(48)

    def eth_priv(self):
        return '0x' + self.hex(64)

    def wif(self):
        return b58check(b'\x80' + self.rb(32) + b'\x01')

    def xprv(self):
        return b58check(bytes.fromhex('0488ADE4') + b'\0' + b'\0' * 4 + b'\0' * 4 + self.rb(32) + b'\0' + self.rb(32))

    def xpub(self):
        return b58check(bytes.fromhex('0488B21E') + b'\0' + b'\0' * 4 + b'\0' * 4 + self.rb(32) + b'\x02' + self.rb(32))

    def mnemonic(self, words=12):
        ent = self.rb(words * 4 // 3)
        cs_bits = len(ent) * 8 // 32
        h = hashlib.sha256(ent).digest()
        bits = bin(int.from_bytes(ent, 'big'))[2:].zfill(len(ent) * 8) + bin(h[0])[2:].zfill(8)[:cs_bits]
        return ' '.join(BIP39[int(bits[i:i + 11], 2)] for i in range(0, len(bits), 11))

    def btc_addr(self):
        return b58check(b'\x00' + self.rb(20))

    def eth_addr(self):
        return '0x' + self.hex(40)

    def cisco7(self, pw):
        xlat = 'dsfd;kfoA,.iyewrkldJKDHSUBsgvca69834ncxv9873254k;fg87'
        seed = self.ri(0, 15)
        return '%02d' % seed + ''.join('%02X' % (ord(c) ^ ord(xlat[(seed + i) % len(xlat)])) for i, c in enumerate(pw))

    def winscp_enc(self, user, host, pw):
        M = 0xA3
        def e(v):
            return '%02X' % (((~v) & 0xFF) ^ M)
        key = user + host
        full = key + pw
        shift = self.ri(0, 6)
        out = e(0xFF) + e(0) + e(len(full)) + e(shift)
        out += ''.join(e(self.ri(0, 255)) for _ in range(shift))
        out += ''.join(e(ord(c)) for c in full)
        return out

    # ---- keys
    def ec_key(self, curve=None):
        curve = curve or ec.SECP256R1()
        n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
        return ec.derive_private_key(self.r.randrange(1, n), curve)

    def pem_pkcs8_ec(self):
        return self.ec_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()).decode()

    def pem_sec1_ec(self):
        return self.ec_key().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()).decode()

    def _prime(self, bits):
        small = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
        while True:
            c = self.r.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
            if any(c % p == 0 for p in small):
                continue
            d, s = c - 1, 0
            while d % 2 == 0:
                d //= 2
                s += 1
            ok = True
            for _ in range(24):
                a = self.r.randrange(2, c - 2)
                x = pow(a, d, c)
                if x in (1, c - 1):
                    continue
                for _ in range(s - 1):
                    x = pow(x, 2, c)
                    if x == c - 1:
                        break
                else:
                    ok = False
                    break
            if ok:
                return c

    def rsa_key(self, bits=2048):
        e = 65537
        while True:
            p, q = self._prime(bits // 2), self._prime(bits // 2)
            if p == q:
                continue
            phi = (p - 1) * (q - 1)
            if phi % e == 0:
                continue
            break
        if p < q:
            p, q = q, p
        n = p * q
        d = pow(e, -1, phi)
        pub = rsa.RSAPublicNumbers(e, n)
        priv = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), pub)
        return priv.private_key()

    def rsa_pkcs8(self, bits=2048):
        return self.rsa_key(bits).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()).decode()

    def ed_seed(self):
        return self.rb(32)

    def openssh_ed25519(self, comment):
        seed = self.ed_seed()
        k = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        pubblob = sshstr('ssh-ed25519') + sshstr(pub)
        chk = self.rb(4)
        priv = chk + chk + sshstr('ssh-ed25519') + sshstr(pub) + sshstr(seed + pub) + sshstr(comment)
        i = 1
        while len(priv) % 8:
            priv += bytes([i])
            i += 1
        blob = b'openssh-key-v1\0' + sshstr('none') + sshstr('none') + sshstr(b'') + struct.pack('>I', 1) + \
            sshstr(pubblob) + sshstr(priv)
        body = wrap(base64.b64encode(blob).decode(), 70)
        publine = 'ssh-ed25519 ' + base64.b64encode(pubblob).decode() + ' ' + comment
        return '-----BEGIN OPENSSH PRIVATE KEY-----\n' + '\n'.join(body) + '\n-----END OPENSSH PRIVATE KEY-----\n', publine

    def ssh_pub_ed25519(self, comment):
        k = ed25519.Ed25519PrivateKey.from_private_bytes(self.ed_seed())
        pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return 'ssh-ed25519 ' + base64.b64encode(sshstr('ssh-ed25519') + sshstr(pub)).decode() + ' ' + comment

    def ppk_ed25519(self, comment):
        seed = self.ed_seed()
        k = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        pub = k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        pubblob = sshstr('ssh-ed25519') + sshstr(pub)
        privblob = sshstr(seed)
        mackey = hashlib.sha1(b'putty-private-key-file-mac-key').digest()
        macdata = sshstr('ssh-ed25519') + sshstr('none') + sshstr(comment) + sshstr(pubblob) + sshstr(privblob)
        mac = hmac.new(mackey, macdata, hashlib.sha1).hexdigest()
        pl = wrap(base64.b64encode(pubblob).decode(), 64)
        vl = wrap(base64.b64encode(privblob).decode(), 64)
        out = ['PuTTY-User-Key-File-2: ssh-ed25519', 'Encryption: none', 'Comment: ' + comment,
               'Public-Lines: %d' % len(pl)] + pl + ['Private-Lines: %d' % len(vl)] + vl + ['Private-MAC: ' + mac]
        return '\n'.join(out) + '\n'

    def wg_priv(self):
        k = x25519.X25519PrivateKey.from_private_bytes(self.rb(32))
        raw = k.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
        return base64.b64encode(raw).decode()

    def wg_pub(self):
        k = x25519.X25519PrivateKey.from_private_bytes(self.rb(32))
        return base64.b64encode(k.public_key().public_bytes(serialization.Encoding.Raw,
                                                            serialization.PublicFormat.Raw)).decode()

    def ovpn_static(self):
        lines = ['-----BEGIN OpenVPN Static key V1-----'] + [self.hex(32) for _ in range(16)] + \
            ['-----END OpenVPN Static key V1-----']
        return lines

    def cert_pem(self, cn):
        if self._rsa is None:
            self._rsa = self.rsa_key(2048)
        key = self._rsa
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, self.ch(COMPANIES).title())])
        d0 = datetime.datetime(2024, self.ri(1, 12), self.ri(1, 28), 0, 0, 0)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(self.r.getrandbits(64)).not_valid_before(d0)
                .not_valid_after(d0 + datetime.timedelta(days=825))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        return cert.public_bytes(serialization.Encoding.PEM).decode()

    def pubkey_pem(self):
        k = self.ec_key()
        return k.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()


# ---------------------------------------------------------------- fillers (never contain credentials)
def nbig(g):
    """how much filler: mostly small, sometimes a big file (secret in the middle of ~300 lines)"""
    return g.ch([0, 1, 2, 3, 4, 6, 8, 12, 20, 150])


def fill_env(g, n):
    opts = [lambda: 'NODE_ENV=%s' % g.ch(['production', 'development', 'staging']),
            lambda: 'PORT=%d' % g.ch([3000, 8000, 8080, 5000, 4200]),
            lambda: 'LOG_LEVEL=%s' % g.ch(['info', 'debug', 'warn']),
            lambda: 'DEBUG=%s' % g.ch(['false', 'true', '0', '1']),
            lambda: 'TZ=%s' % g.ch(['Europe/Berlin', 'UTC', 'America/Denver', 'Asia/Tokyo']),
            lambda: 'APP_URL=https://%s' % g.domain(),
            lambda: 'DB_HOST=%s' % g.ch(['localhost', '127.0.0.1', 'postgres', g.host()]),
            lambda: 'DB_PORT=%d' % g.ch([5432, 3306, 27017]),
            lambda: 'DB_NAME=%s' % g.ch(['app', 'analytics', 'school', 'shop_prod']),
            lambda: 'REDIS_URL=redis://%s:6379/%d' % (g.ch(['localhost', 'redis']), g.ri(0, 5)),
            lambda: 'S3_BUCKET=%s-%s' % (g.ch(COMPANIES), g.ch(['assets', 'data', 'backups'])),
            lambda: 'AWS_REGION=%s' % g.ch(['eu-central-1', 'us-east-1', 'ap-southeast-2']),
            lambda: 'MAX_WORKERS=%d' % g.ri(1, 16),
            lambda: 'CACHE_TTL=%d' % g.ch([60, 300, 3600]),
            lambda: 'FEATURE_%s=%s' % (g.ch(['DARK_MODE', 'BETA_UI', 'EXPORT', 'SSO']), g.ch(['on', 'off'])),
            lambda: '# %s' % g.ch(['--- database ---', 'local overrides', 'do not commit', 'see README', 'misc']),
            lambda: '',
            lambda: 'SENTRY_ENVIRONMENT=%s' % g.ch(['prod', 'dev']),
            lambda: 'MODEL_NAME=%s' % g.ch(['gpt-4o-mini', 'llama3:8b', 'bert-base-uncased']),
            lambda: 'BATCH_SIZE=%d' % g.ch([16, 32, 64])]
    return [g.ch(opts)() for _ in range(n)]


def fill_yaml(g, n, indent=''):
    out = []
    for _ in range(n):
        k = g.ri(0, 9)
        if k == 0:
            out.append(indent + '# ' + g.ch(['TODO: tune', 'defaults', 'managed by hand', 'see runbook']))
        elif k == 1:
            out.append(indent + '%s: %d' % (g.ch(['timeout', 'retries', 'replicas', 'port', 'max_conns']), g.ri(1, 9000)))
        elif k == 2:
            out.append(indent + '%s: %s' % (g.ch(['enabled', 'verbose', 'tls', 'cache']), g.ch(['true', 'false'])))
        elif k == 3:
            out.append(indent + '%s: %s' % (g.ch(['name', 'region', 'env', 'owner']), g.ch(['eu-west-1', 'prod', 'team-data', g.ch(FIRST)])))
        elif k == 4:
            out.append(indent + '%s: "%s"' % (g.ch(['url', 'endpoint', 'homepage']), 'https://' + g.domain() + '/'))
        elif k == 5:
            out.append(indent + 'labels:')
            out.append(indent + '  app: %s' % g.ch(PROJECTS))
            out.append(indent + '  tier: %s' % g.ch(['backend', 'frontend', 'batch']))
        elif k == 6:
            out.append(indent + 'tags: [%s]' % ', '.join(g.r.sample(['ml', 'ops', 'web', 'db', 'etl', 'beta'], 3)))
        elif k == 7:
            out.append(indent + 'interval: %ds' % g.ch([15, 30, 60]))
        elif k == 8:
            out.append('')
        else:
            out.append(indent + 'log_level: %s' % g.ch(['info', 'warn', 'debug']))
    return out


def fill_ini(g, n):
    out = []
    for _ in range(n):
        k = g.ri(0, 6)
        if k == 0:
            out.append('[%s]' % g.ch(['general', 'ui', 'network', 'logging', 'paths', 'proxy']))
        elif k == 1:
            out.append('%s = %s' % (g.ch(['timeout', 'retries', 'port', 'threads']), g.ri(1, 999)))
        elif k == 2:
            out.append('%s = %s' % (g.ch(['verbose', 'color', 'autosave', 'check_updates']), g.ch(['true', 'false', 'yes', 'no'])))
        elif k == 3:
            out.append('; ' + g.ch(['generated', 'local settings', 'edit with care']))
        elif k == 4:
            out.append('%s = %s' % (g.ch(['path', 'cache_dir', 'log_file']), '/home/%s/.cache/%s' % (g.ch(FIRST), g.ch(PROJECTS))))
        elif k == 5:
            out.append('')
        else:
            out.append('%s = %s' % (g.ch(['language', 'theme', 'region']), g.ch(['en', 'dark', 'eu-west-1', 'de'])))
    return out


def fill_props(g, n):
    opts = [lambda: 'org.gradle.jvmargs=-Xmx%dg -Dfile.encoding=UTF-8' % g.ch([2, 4, 6]),
            lambda: 'org.gradle.parallel=%s' % g.ch(['true', 'false']),
            lambda: 'org.gradle.caching=true',
            lambda: 'android.useAndroidX=true',
            lambda: 'android.nonTransitiveRClass=true',
            lambda: 'kotlin.code.style=official',
            lambda: 'android.enableJetifier=%s' % g.ch(['true', 'false']),
            lambda: 'VERSION_NAME=%d.%d.%d' % (g.ri(0, 4), g.ri(0, 20), g.ri(0, 9)),
            lambda: 'VERSION_CODE=%d' % g.ri(1, 400),
            lambda: '# ' + g.ch(['Project-wide Gradle settings.', 'AndroidX package structure', 'signing']),
            lambda: '']
    return [g.ch(opts)() for _ in range(n)]


def fill_cisco(g, n):
    out = []
    while len(out) < n:
        k = g.ri(0, 5)
        if k == 0:
            out += ['interface GigabitEthernet%d/0/%d' % (g.ri(0, 2), g.ri(1, 48)),
                    ' description %s' % g.ch(['uplink', 'AP-floor2', 'printer', 'server-rack', 'unused']),
                    ' switchport mode %s' % g.ch(['access', 'trunk']),
                    ' switchport access vlan %d' % g.ri(2, 400), ' spanning-tree portfast', '!']
        elif k == 1:
            out += ['vlan %d' % g.ri(2, 400), ' name %s' % g.ch(['USERS', 'VOICE', 'MGMT', 'GUEST', 'SERVERS']), '!']
        elif k == 2:
            out += ['ip route 0.0.0.0 0.0.0.0 %s' % g.ip(), '!']
        elif k == 3:
            out += ['ntp server %s' % g.ip(), 'clock timezone CET 1 0']
        elif k == 4:
            out += ['logging host %s' % g.ip(), 'logging trap informational']
        else:
            out += ['interface Vlan%d' % g.ri(2, 400), ' ip address %s 255.255.255.0' % g.ip(), ' no shutdown', '!']
    return out[:n]


def fill_py(g, n):
    out = []
    while len(out) < n:
        k = g.ri(0, 4)
        if k == 0:
            f = g.ch(['clean', 'load', 'summarize', 'plot', 'merge', 'score'])
            out += ['', 'def %s_%s(df):' % (f, g.ch(['data', 'frame', 'rows'])),
                    '    """%s"""' % g.ch(['Drop NA rows.', 'Quick helper.', 'Used in notebook 3.']),
                    '    df = df.dropna(subset=["%s"])' % g.ch(['id', 'date', 'label']),
                    '    return df']
        elif k == 1:
            out += ['%s = %d' % (g.ch(['BATCH', 'EPOCHS', 'SEED', 'N_SPLITS', 'MAX_ROWS']), g.ri(1, 5000))]
        elif k == 2:
            out += ['# ' + g.ch(['TODO: refactor', 'works on my machine', 'see lecture 4', 'quick hack'])]
        elif k == 3:
            out += ['for i in range(%d):' % g.ri(2, 50), '    print(i, i ** 2)']
        else:
            out += ['URL = "https://%s/api/v%d"' % (g.domain(), g.ri(1, 3))]
    return out[:n]


def fill_notes(g, n):
    opts = [lambda: '- [ ] ' + g.ch(['buy milk', 'call landlord', 'finish chapter 3', 'renew passport', 'update CV',
                                      'backup photos', 'book dentist', 'pay electricity bill']),
            lambda: '- [x] ' + g.ch(['return library books', 'submit assignment', 'order cables']),
            lambda: g.ch(['Meeting notes', 'Ideas', 'Groceries', 'Links', 'Reading list']) + ':',
            lambda: 'https://%s/%s' % (g.domain(), g.ch(['docs', 'blog/post-12', 'wiki', ''])),
            lambda: '',
            lambda: '%s: %s' % (g.ch(['Mom', 'Landlord', 'Dentist', 'Plumber']), '+49 %d %d' % (g.ri(100, 999), g.ri(100000, 9999999))),
            lambda: g.ch(['Remember to stretch.', 'Deadline is Friday.', 'Ask TA about Q4.', 'Try the new ramen place.'])]
    return [g.ch(opts)() for _ in range(n)]


def fill_sh(g, n):
    opts = [lambda: 'export EDITOR=%s' % g.ch(['vim', 'nvim', 'nano', 'code -w']),
            lambda: 'export PATH="$HOME/%s:$PATH"' % g.ch(['.local/bin', 'bin', 'go/bin', '.cargo/bin']),
            lambda: 'alias %s=%s' % (g.ch(['ll', 'gs', 'k', 'tf']), g.ch(["'ls -la'", "'git status'", 'kubectl', 'terraform'])),
            lambda: 'export LANG=en_US.UTF-8',
            lambda: 'export HISTSIZE=%d' % g.ch([1000, 10000, 50000]),
            lambda: '# ' + g.ch(['aliases', 'work stuff', 'node version manager', 'prompt']),
            lambda: '',
            lambda: 'setopt %s' % g.ch(['AUTO_CD', 'HIST_IGNORE_DUPS', 'SHARE_HISTORY'])]
    return [g.ch(opts)() for _ in range(n)]


def fill_hcl(g, n):
    out = []
    while len(out) < n:
        k = g.ri(0, 3)
        if k == 0:
            out += ['%s = "%s"' % (g.ch(['region', 'environment', 'owner', 'cluster_name']),
                                   g.ch(['eu-central-1', 'prod', 'sre-team', 'main']))]
        elif k == 1:
            out += ['%s = %d' % (g.ch(['instance_count', 'disk_size_gb', 'min_nodes']), g.ri(1, 200))]
        elif k == 2:
            out += ['%s = ["%s", "%s"]' % (g.ch(['availability_zones', 'allowed_cidrs']), g.ip() + '/24', g.ip() + '/24')]
        else:
            out += ['', '# ' + g.ch(['networking', 'compute', 'tags', 'dns'])]
    return out[:n]


def fill_junos(g, n):
    opts = [lambda: 'set interfaces ge-0/0/%d unit 0 family inet address %s/24' % (g.ri(0, 47), g.ip()),
            lambda: 'set interfaces ge-0/0/%d description "%s"' % (g.ri(0, 47), g.ch(['uplink', 'fw-outside', 'lab'])),
            lambda: 'set system host-name %s' % g.ch(['edge1', 'core-fw', 'lab-srx']),
            lambda: 'set system ntp server %s' % g.ip(),
            lambda: 'set routing-options static route 0.0.0.0/0 next-hop %s' % g.ip(),
            lambda: 'set security zones security-zone trust interfaces ge-0/0/%d.0' % g.ri(0, 47),
            lambda: 'set system syslog host %s any warning' % g.ip()]
    return [g.ch(opts)() for _ in range(n)]


def fill_mikrotik(g, n):
    opts = [lambda: '/ip address add address=%s/24 interface=ether%d' % (g.ip(), g.ri(1, 10)),
            lambda: '/ip dns set servers=%s' % g.ch(['1.1.1.1', '9.9.9.9,1.1.1.1', '8.8.8.8']),
            lambda: '/ip firewall filter add action=accept chain=input protocol=icmp',
            lambda: '/ip firewall nat add action=masquerade chain=srcnat out-interface=ether1',
            lambda: '/system identity set name=%s' % g.ch(['home-gw', 'office-rb', 'hAP-ax2']),
            lambda: '/interface bridge add name=bridge%d' % g.ri(1, 3),
            lambda: '/ip pool add name=dhcp_pool%d ranges=192.168.%d.10-192.168.%d.254' % ((g.ri(0, 9),) + (g.ri(0, 50),) * 2)]
    return [g.ch(opts)() for _ in range(n)]


def fill_php(g, n):
    opts = [lambda: "define( 'WP_DEBUG', %s );" % g.ch(['false', 'true']),
            lambda: "define( 'WP_MEMORY_LIMIT', '%dM' );" % g.ch([128, 256]),
            lambda: "define( 'DISALLOW_FILE_EDIT', true );",
            lambda: "define( 'WP_POST_REVISIONS', %d );" % g.ri(3, 10),
            lambda: "/* %s */" % g.ch(['Add any custom values between this line and the "stop editing" line.', 'local']),
            lambda: '']
    return [g.ch(opts)() for _ in range(n)]


def fill_toml(g, n):
    out = []
    for _ in range(n):
        k = g.ri(0, 3)
        if k == 0:
            out.append('%s = %d' % (g.ch(['timeout', 'port', 'threads']), g.ri(1, 9000)))
        elif k == 1:
            out.append('%s = "%s"' % (g.ch(['warehouse', 'role', 'schema', 'region']), g.ch(['COMPUTE_WH', 'ANALYST', 'PUBLIC', 'eu-west-1'])))
        elif k == 2:
            out.append('# ' + g.ch(['dev', 'shared settings', 'per-user']))
        else:
            out.append('')
    return out


def place(g, head, filler, secret_lines, tail, where=None):
    """insert secret_lines (list) into filler at first/middle/last position"""
    where = where or g.ch(['first', 'mid', 'mid', 'mid', 'last'])
    if where == 'first':
        body = list(secret_lines) + filler
    elif where == 'last':
        body = filler + list(secret_lines)
    else:
        i = g.ri(0, len(filler))
        body = filler[:i] + list(secret_lines) + filler[i:]
    return head + body + tail


# ---------------------------------------------------------------- template registry
POS, NEG = [], []


def pos(fn):
    POS.append(fn)
    return fn


def neg(fn):
    NEG.append(fn)
    return fn


def kname(g, words, allow_kebab=True):
    styles = ['snake', 'camel', 'upper'] + (['kebab'] if allow_kebab else [])
    st = g.ch(styles)
    if st == 'snake':
        return '_'.join(words)
    if st == 'upper':
        return '_'.join(words).upper()
    if st == 'kebab':
        return '-'.join(words)
    return words[0] + ''.join(w.title() for w in words[1:])


def q(g, v, allow_bare=True):
    return g.ch(([v] if allow_bare else []) + ['"%s"' % v, "'%s'" % v])


def nb_cell(src_lines, outputs=None, exec_count=None, cell_type='code'):
    src = [l + '\n' for l in src_lines[:-1]] + [src_lines[-1]]
    c = {'cell_type': cell_type, 'metadata': {}, 'source': src}
    if cell_type == 'code':
        c['execution_count'] = exec_count
        c['outputs'] = outputs or []
    return c


def nb_stream(text_lines):
    return {'name': 'stdout', 'output_type': 'stream', 'text': [l + '\n' for l in text_lines]}


def nb_result(text, n):
    return {'data': {'text/plain': [text]}, 'execution_count': n, 'metadata': {}, 'output_type': 'execute_result'}


def nb_image(g):
    # a small fake-but-valid-looking base64 PNG payload
    png = b'\x89PNG\r\n\x1a\n' + g.rb(g.ri(600, 1400))
    return {'data': {'image/png': base64.b64encode(png).decode(), 'text/plain': ['<Figure size 640x480 with 1 Axes>']},
            'metadata': {}, 'output_type': 'display_data'}


def notebook(g, cells):
    nb = {'cells': cells,
          'metadata': {'kernelspec': {'display_name': 'Python 3 (ipykernel)', 'language': 'python', 'name': 'python3'},
                       'language_info': {'name': 'python', 'version': '3.%d.%d' % (g.ri(9, 12), g.ri(0, 9))}},
          'nbformat': 4, 'nbformat_minor': g.ch([4, 5])}
    return json.dumps(nb, indent=1, ensure_ascii=False)


def ds_cells(g, n):
    cells = []
    for i in range(n):
        k = g.ri(0, 3)
        if k == 0:
            cells.append(nb_cell(['df = pd.read_csv("data/%s.csv")' % g.ch(['train', 'sales', 'survey', 'events']), 'df.shape'],
                                 [nb_result('(%d, %d)' % (g.ri(100, 90000), g.ri(3, 40)), None)]))
        elif k == 1:
            cells.append(nb_cell(['## ' + g.ch(['Exploratory analysis', 'Feature engineering', 'Results', 'Baseline'])],
                                 cell_type='markdown'))
        elif k == 2:
            cells.append(nb_cell(['fig, ax = plt.subplots()', 'df["%s"].hist(ax=ax)' % g.ch(['age', 'price', 'score'])],
                                 [nb_image(g)]))
        else:
            cells.append(nb_cell(['df.describe()'], [nb_result('count  %d.0\nmean  %0.3f' % (g.ri(10, 999), g.r.random()), None)]))
    return cells


# ================================================================ POSITIVES
# ---------------- data scientist
@pos
def p_ipynb_apikey(g):
    kind = g.ri(0, 3)
    if kind == 0:
        tok = g.openai(); line = g.ch(['openai.api_key = "%s"' % tok, 'client = OpenAI(api_key="%s")' % tok])
        imp = ['import openai', 'from openai import OpenAI']; fam = 'ipynb-openai'
    elif kind == 1:
        tok = g.anthropic(); line = 'client = anthropic.Anthropic(api_key="%s")' % tok
        imp = ['import anthropic']; fam = 'ipynb-anthropic'
    elif kind == 2:
        tok = g.hf(); line = g.ch(['login(token="%s")' % tok, 'HF_TOKEN = "%s"' % tok])
        imp = ['from huggingface_hub import login']; fam = 'ipynb-hf'
    else:
        tok = g.hex(40); line = 'wandb.login(key="%s")' % tok
        imp = ['import wandb']; fam = 'ipynb-wandb'
    cells = [nb_cell(['import pandas as pd', 'import matplotlib.pyplot as plt'] + imp, [], 1)]
    cells += ds_cells(g, g.ri(0, 4))
    cells.insert(g.ri(1, len(cells)), nb_cell([line], [], g.ri(2, 30)))
    cells += ds_cells(g, g.ri(0, 4))
    p = '%s/%s/%s.ipynb' % (g.ch(['notebooks', 'work', 'projects', 'Documents/jupyter']), g.ch(PROJECTS),
                            g.ch(['analysis', 'Untitled', 'Untitled1', '01-eda', 'experiments', 'scratch']))
    return p, notebook(g, cells), tok, fam, 'key hard-coded in notebook code cell'


@pos
def p_ipynb_output(g):
    tok = g.ch([g.hf, g.gh_classic, g.openai])()
    src = g.ch([['!cat ~/.cache/huggingface/token'], ['import os', 'print(os.environ["API_TOKEN"])'],
                ['!echo $GITHUB_TOKEN'], ['os.environ.get("TOKEN")']])
    if src[-1].startswith('os.environ.get'):
        out = [nb_result("'%s'" % tok, 5)]
    else:
        out = [nb_stream([tok])]
    cells = [nb_cell(['import os'], [], 1)] + ds_cells(g, g.ri(0, 3)) + [nb_cell(src, out, 5)] + ds_cells(g, g.ri(0, 3))
    p = '%s/%s/%s.ipynb' % (g.ch(['notebooks', 'work', 'colab']), g.ch(PROJECTS), g.ch(['debug', 'setup', 'Untitled2']))
    return p, notebook(g, cells), tok, 'ipynb-output', 'token printed into a saved cell output'


@pos
def p_ipynb_dburl(g):
    pw = g.safe_pw(); u = g.ch(['analyst', 'postgres', g.user().replace('.', '_'), 'readonly'])
    url = '%s://%s:%s@%s:%d/%s' % (g.ch(['postgresql', 'postgresql+psycopg2', 'mysql+pymysql']), u, pw, g.host(),
                                   g.ch([5432, 3306]), g.ch(['warehouse', 'analytics', 'prod']))
    cells = [nb_cell(['from sqlalchemy import create_engine', 'import pandas as pd'], [], 1),
             nb_cell(['engine = create_engine("%s")' % url, 'df = pd.read_sql("select * from orders limit 1000", engine)'], [], 2)]
    cells += ds_cells(g, g.ri(1, 4))
    return 'notebooks/%s/sql_pull.ipynb' % g.ch(PROJECTS), notebook(g, cells), pw, 'ipynb-dburl', 'password in SQLAlchemy URL'


@pos
def p_kaggle(g):
    key = g.hex(32)
    d = {'username': g.user().replace('.', ''), 'key': key}
    t = json.dumps(d) if g.chance(0.6) else json.dumps(d, indent=2)
    return '.kaggle/kaggle.json', t, key, 'kaggle-json', 'Kaggle API key'


@pos
def p_hf_token_file(g):
    tok = g.hf()
    if g.chance(0.5):
        return '.cache/huggingface/token', tok, tok, 'hf-token-file', 'bare HF token file'
    t = '[%s]\nhf_token = %s\n' % (g.ch(['default', 'work', 'personal']), tok)
    return '.cache/huggingface/stored_tokens', t, tok, 'hf-token-file', 'HF stored_tokens ini'


@pos
def p_netrc(g):
    kind = g.ri(0, 2)
    if kind == 0:
        sec = g.hex(40); m = 'api.wandb.ai'; login = 'user'; fam = 'netrc-wandb'
    else:
        sec = g.safe_pw(); m = g.ch(['urs.earthdata.nasa.gov', 'physionet.org', 'dataspace.copernicus.eu',
                                     'data.ceda.ac.uk', 'ftp.' + g.domain()]); login = g.user(); fam = 'netrc-portal'
    others = []
    for _ in range(g.ri(0, 2)):
        others.append('machine %s\n  login anonymous' % g.ch(['ftp.ncbi.nlm.nih.gov', 'ftp.ebi.ac.uk']))
    if g.chance(0.5):
        me = 'machine %s\n  login %s\n  password %s' % (m, login, sec)
    else:
        me = 'machine %s login %s password %s' % (m, login, sec)
    blocks = others + [me]
    g.r.shuffle(blocks)
    return '.netrc', '\n'.join(blocks) + '\n', sec, fam, 'netrc password for ' + m


@pos
def p_renviron(g):
    kind = g.ri(0, 3)
    if kind == 0:
        sec = g.gh_classic(); k = 'GITHUB_PAT'
    elif kind == 1:
        sec = g.hex(40); k = 'CENSUS_API_KEY'
    elif kind == 2:
        sec = g.hex(32); k = 'FRED_API_KEY'
    else:
        sec = g.openai(); k = 'OPENAI_API_KEY'
    filler = ['R_LIBS_USER=~/R/library', 'R_MAX_VSIZE=%dGb' % g.ch([8, 16, 32]), '_R_CHECK_FORCE_SUGGESTS_=false',
              'RENV_PATHS_CACHE=~/.cache/renv', 'LANG=en_US.UTF-8', '# set by %s' % g.ch(FIRST)]
    g.r.shuffle(filler)
    lines = place(g, [], filler[:g.ri(1, 5)], ['%s=%s' % (k, q(g, sec))], [])
    return '.Renviron', '\n'.join(lines) + '\n', sec, 'renviron', k + ' in .Renviron'


@pos
def p_mlflow_creds(g):
    pw = g.pw()
    t = '[mlflow]\nmlflow_tracking_username = %s\nmlflow_tracking_password = %s\n' % (g.user(), pw)
    return '.mlflow/credentials', t, pw, 'mlflow-creds', 'MLflow credentials file'


@pos
def p_databrickscfg(g):
    tok = g.databricks()
    lines = ['[DEFAULT]', 'host = https://adb-%s.%d.azuredatabricks.net' % (g.s(DIG, 16), g.ri(1, 19))]
    if g.chance(0.4):
        lines += ['', '[dev]', 'host = https://dbc-%s-%s.cloud.databricks.com' % (g.hex(8), g.hex(4)), 'auth_type = databricks-cli']
        lines.insert(2, 'token = ' + tok)
    else:
        lines.append('token = ' + tok)
    return '.databrickscfg', '\n'.join(lines) + '\n', tok, 'databricks-cfg', 'Databricks PAT'


@pos
def p_snowflake(g):
    pw = g.safe_pw()
    acct = '%s-%s' % (g.s(UP, 7), g.s(UP + DIG, 7))
    if g.chance(0.5):
        lines = ['[default]', 'account = "%s"' % acct, 'user = "%s"' % g.user().upper()] + fill_toml(g, g.ri(0, 3)) + \
            ['password = "%s"' % pw, 'warehouse = "COMPUTE_WH"', 'role = "%s"' % g.ch(['ANALYST', 'SYSADMIN'])]
        return '.snowflake/connections.toml', '\n'.join(lines) + '\n', pw, 'snowflake', 'password in connections.toml'
    lines = ['[connections]', 'accountname = %s' % acct, 'username = %s' % g.user(), 'password = %s' % pw,
             'dbname = %s' % g.ch(['ANALYTICS', 'RAW']), '', '[options]', 'log_level = DEBUG', 'exit_on_error = true']
    return '.snowsql/config', '\n'.join(lines) + '\n', pw, 'snowflake', 'password in snowsql config'


@pos
def p_dvc_local(g):
    if g.chance(0.5):
        kid, sec = g.aws_pair()
        lines = ["['remote \"storage\"']", '    access_key_id = ' + kid, '    secret_access_key = ' + sec]
        note = 'S3 secret in .dvc/config.local'
    else:
        sec = g.pw()
        lines = ["['remote \"%s\"']" % g.ch(['nas', 'webdav', 'lab']), '    user = ' + g.user(), '    password = ' + sec]
        note = 'webdav/ssh password in .dvc/config.local'
    return 'projects/%s/.dvc/config.local' % g.ch(PROJECTS), '\n'.join(lines) + '\n', sec, 'dvc-config-local', note


@pos
def p_pip_conf(g):
    if g.chance(0.5):
        sec = g.glpat(); u = '__token__'; h = 'gitlab.%s/api/v4/projects/%d/packages/pypi/simple' % (g.domain(), g.ri(10, 9999))
    else:
        sec = g.safe_pw(); u = g.user(); h = 'pypi.%s/simple' % g.domain()
    lines = ['[global]', 'timeout = 60', g.ch(['extra-index-url', 'index-url']) + ' = https://%s:%s@%s' % (u, sec, h)]
    if g.chance(0.5):
        lines += ['trusted-host = pypi.org']
    return g.ch(['.config/pip/pip.conf', '.pip/pip.conf']), '\n'.join(lines) + '\n', sec, 'pip-conf', 'credentials in index URL'


@pos
def p_pypirc(g):
    tok = g.pypi()
    lines = ['[distutils]', 'index-servers =', '    pypi', '    testpypi', '', '[pypi]', 'username = __token__',
             'password = ' + tok, '', '[testpypi]', 'repository = https://test.pypi.org/legacy/', 'username = __token__']
    return '.pypirc', '\n'.join(lines) + '\n', tok, 'pypirc', 'PyPI API token'


@pos
def p_azure_conn(g):
    cs = g.azure_conn()
    sec = cs.split('AccountKey=')[1].split(';')[0]
    lines = place(g, [], fill_env(g, g.ri(1, 8)), ['AZURE_STORAGE_CONNECTION_STRING=' + q(g, cs)], [])
    return 'projects/%s/.env' % g.ch(PROJECTS), '\n'.join(lines) + '\n', sec, 'azure-storage', 'storage account key'


@pos
def p_jupyter_cfg(g):
    tok = g.jupyter_token()
    pre = ['# Configuration file for jupyter-server.', '', 'c = get_config()  # noqa', '',
           "c.ServerApp.ip = '0.0.0.0'", 'c.ServerApp.open_browser = False', 'c.ServerApp.port = %d' % g.ch([8888, 9999])]
    lines = pre + ["c.%s.token = '%s'" % (g.ch(['ServerApp', 'IdentityProvider', 'NotebookApp']), tok)]
    return '.jupyter/jupyter_server_config.py', '\n'.join(lines) + '\n', tok, 'jupyter-token', 'fixed Jupyter server token'


@pos
def p_streamlit(g):
    pw = g.safe_pw()
    lines = ['[connections.%s]' % g.ch(['snowflake', 'postgresql', 'warehouse']), 'dialect = "%s"' % g.ch(['postgresql', 'snowflake']),
             'host = "%s"' % g.host(), 'username = "%s"' % g.user(), 'password = "%s"' % pw, 'database = "%s"' % g.ch(['prod', 'dw'])]
    return 'projects/%s/.streamlit/secrets.toml' % g.ch(PROJECTS), '\n'.join(lines) + '\n', pw, 'streamlit-secrets', 'db password in secrets.toml'


@pos
def p_wandb_env(g):
    k = g.hex(40)
    lines = place(g, [], fill_sh(g, g.ri(2, 20) if g.chance(0.8) else 150), ['export WANDB_API_KEY=%s' % q(g, k)], [])
    return g.ch(['.bashrc', '.zshrc', '.bash_profile']), '\n'.join(lines) + '\n', k, 'wandb-env', 'W&B key exported in shell rc'


# ---------------- mobile developer
@pos
def p_gradle_props(g):
    pw = g.safe_pw()
    key = g.ch(['RELEASE_STORE_PASSWORD', 'MYAPP_UPLOAD_STORE_PASSWORD', 'signing.storePassword',
                'android.injected.signing.store.password', 'KEYSTORE_PASSWORD', 'storePassword'])
    filler = fill_props(g, g.ri(3, 12) if g.chance(0.85) else 150)
    extra = ['MYAPP_UPLOAD_STORE_FILE=%s-upload.keystore' % g.ch(APPS).lower(), 'MYAPP_UPLOAD_KEY_ALIAS=%s' % g.ch(['upload', 'release', 'key0'])]
    lines = place(g, [], filler, extra[:1] + ['%s=%s' % (key, pw)] + extra[1:], [])
    p = g.ch(['.gradle/gradle.properties', 'AndroidStudioProjects/%s/gradle.properties' % g.ch(APPS)])
    return p, '\n'.join(lines) + '\n', pw, 'gradle-props', key


@pos
def p_gradle_signing(g):
    pw = g.safe_pw(); app = g.ch(APPS)
    if g.chance(0.5):
        lines = ['android {', '    signingConfigs {', '        release {', "            storeFile file('%s.jks')" % app.lower(),
                 "            storePassword '%s'" % pw, "            keyAlias 'upload'",
                 "            keyPassword System.getenv('KEY_PASSWORD')", '        }', '    }', '    buildTypes {',
                 '        release {', '            signingConfig signingConfigs.release', '            minifyEnabled true', '        }', '    }', '}']
        p = 'AndroidStudioProjects/%s/app/build.gradle' % app
    else:
        lines = ['android {', '    signingConfigs {', '        create("release") {', '            storeFile = file("%s.jks")' % app.lower(),
                 '            storePassword = "%s"' % pw, '            keyAlias = "upload"',
                 '            keyPassword = System.getenv("KEY_PASSWORD")', '        }', '    }', '}']
        p = 'AndroidStudioProjects/%s/app/build.gradle.kts' % app
    return p, '\n'.join(lines) + '\n', pw, 'gradle-signing', 'storePassword literal in signingConfigs'


@pos
def p_keystore_props(g):
    pw = g.safe_pw(); app = g.ch(APPS)
    lines = ['storePassword=' + pw, 'keyAlias=' + g.ch(['upload', 'key0', 'release']), 'storeFile=../%s-release.jks' % app.lower()]
    g.r.shuffle(lines)
    return 'AndroidStudioProjects/%s/key.properties' % app, '\n'.join(lines) + '\n', pw, 'keystore-props', 'Flutter key.properties'


@pos
def p_local_props_gpr(g):
    tok = g.gh_classic()
    lines = ['## This file must *NOT* be checked into Version Control Systems,',
             '# as it contains information specific to your local configuration.', '#',
             '# Location of the SDK. This is only used by Gradle.',
             '#%s' % datetime.datetime(2024, g.ri(1, 12), g.ri(1, 28), g.ri(0, 23), g.ri(0, 59)).strftime('%a %b %d %H:%M:%S CET %Y'),
             'sdk.dir=/Users/%s/Library/Android/sdk' % g.ch(FIRST), 'gpr.user=' + g.user(), 'gpr.key=' + tok]
    return 'AndroidStudioProjects/%s/local.properties' % g.ch(APPS), '\n'.join(lines) + '\n', tok, 'local-props', 'GitHub Packages token'


@pos
def p_fastlane_env(g):
    kind = g.ri(0, 2)
    if kind == 0:
        sec = '-'.join(g.s(LOW, 4) for _ in range(4)); k = 'FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD'
    elif kind == 1:
        sec = g.pw(); k = 'MATCH_PASSWORD'
    else:
        sec = g.pw(); k = 'FASTLANE_PASSWORD'
    filler = ['FASTLANE_USER=%s' % g.email(), 'FASTLANE_SKIP_UPDATE_CHECK=1', 'LC_ALL=en_US.UTF-8',
              'APP_IDENTIFIER=com.%s.%s' % (g.ch(COMPANIES).replace('-', ''), g.ch(APPS).lower()), 'FASTLANE_HIDE_CHANGELOG=true']
    g.r.shuffle(filler)
    if kind != 0:
        sec = g.safe_pw()
    v = q(g, sec)
    lines = place(g, [], filler[:g.ri(1, 5)], ['%s=%s' % (k, v)], [])
    return 'code/%s/fastlane/.env%s' % (g.ch(APPS), g.ch(['', '.default', '.secret'])), '\n'.join(lines) + '\n', sec, 'fastlane-env', k


@pos
def p_matchfile(g):
    tok = g.gh_classic()
    basic = base64.b64encode(('%s:%s' % (g.user(), tok)).encode()).decode()
    lines = ['git_url("https://github.com/%s/certificates")' % g.ch(COMPANIES), '', 'storage_mode("git")', '',
             'type("appstore") # The default type, can be: appstore, adhoc, enterprise or development', '',
             'git_basic_authorization("%s")' % basic, 'username("%s")' % g.email()]
    return 'code/%s/fastlane/Matchfile' % g.ch(APPS), '\n'.join(lines) + '\n', basic, 'fastlane-match', 'base64 user:token basic auth'


@pos
def p_fastfile_keycontent(g):
    pem = g.pem_pkcs8_ec()
    esc = pem.strip().replace('\n', '\\n')
    lines = ['default_platform(:ios)', '', 'platform :ios do', '  lane :beta do', '    api_key = app_store_connect_api_key(',
             '      key_id: "%s",' % g.s(UP + DIG, 10), '      issuer_id: "%s",' % g.uuid(),
             '      key_content: "%s",' % esc, '      in_house: false', '    )',
             '    build_app(scheme: "%s")' % g.ch(APPS), '    upload_to_testflight(api_key: api_key)', '  end', 'end']
    return 'code/%s/fastlane/Fastfile' % g.ch(APPS), '\n'.join(lines) + '\n', 'key_content: "-----BEGIN PRIVATE KEY-----', \
        'asc-key-inline', 'ASC .p8 key inlined with \\n escapes'


@pos
def p_p8(g):
    pem = g.pem_pkcs8_ec()
    kid = g.s(UP + DIG, 10)
    p = g.ch(['Downloads/AuthKey_%s.p8', 'code/ios-keys/AuthKey_%s.p8', '.appstoreconnect/private_keys/AuthKey_%s.p8']) % kid
    return p, pem, '-----BEGIN PRIVATE KEY-----', 'asc-p8', 'App Store Connect API key (.p8)'


@pos
def p_firebase_sa(g):
    proj = '%s-%s' % (g.ch(APPS).lower(), g.hex(5))
    pem = g.rsa_pkcs8(2048)
    d = {'type': 'service_account', 'project_id': proj, 'private_key_id': g.hex(40), 'private_key': pem,
         'client_email': 'firebase-adminsdk-%s@%s.iam.gserviceaccount.com' % (g.s(LOW + DIG, 5), proj),
         'client_id': g.s(DIG, 21), 'auth_uri': 'https://accounts.google.com/o/oauth2/auth',
         'token_uri': 'https://oauth2.googleapis.com/token',
         'auth_provider_x509_cert_url': 'https://www.googleapis.com/oauth2/v1/certs',
         'client_x509_cert_url': 'https://www.googleapis.com/robot/v1/metadata/x509/firebase-adminsdk-%s%%40%s.iam.gserviceaccount.com' % (g.s(LOW, 5), proj),
         'universe_domain': 'googleapis.com'}
    p = g.ch(['code/%s/functions/serviceAccountKey.json', 'Downloads/%s-firebase-adminsdk.json', 'code/%s/backend/firebase-admin.json']) % proj
    return p, json.dumps(d, indent=2) + '\n', '"private_key": "-----BEGIN PRIVATE KEY-----', 'firebase-sa', 'Firebase admin service account'


@pos
def p_expo_env(g):
    if g.chance(0.5):
        sec = g.s(ALNUM + '_', 40); k = 'EXPO_TOKEN'
    else:
        sec = g.sentry(); k = 'SENTRY_AUTH_TOKEN'
    filler = ['EXPO_PUBLIC_API_URL=https://api.%s' % g.domain(), 'EXPO_PUBLIC_ENV=%s' % g.ch(['prod', 'dev']),
              'EAS_NO_VCS=1', 'EXPO_PUBLIC_SENTRY_DSN=https://%s@o%d.ingest.sentry.io/%d' % (g.hex(32), g.ri(10000, 999999), g.ri(1000000, 9999999))]
    # DSN public key is not a secret, but keep it out to avoid ambiguity
    filler = filler[:3]
    g.r.shuffle(filler)
    lines = place(g, [], filler, ['%s=%s' % (k, sec)], [])
    return 'code/%s/.env.local' % g.ch(APPS).lower(), '\n'.join(lines) + '\n', sec, 'expo-env', k


@pos
def p_sentry_props(g):
    tok = g.sentry() if g.chance(0.6) else g.hex(64)
    lines = ['defaults.url=https://sentry.io/', 'defaults.org=%s' % g.ch(COMPANIES), 'defaults.project=%s' % g.ch(APPS).lower(),
             'auth.token=' + tok, 'cli.executable=node_modules/@sentry/cli/bin/sentry-cli']
    p = g.ch(['code/%s/android/sentry.properties', 'code/%s/ios/sentry.properties']) % g.ch(APPS).lower()
    return p, '\n'.join(lines) + '\n', tok, 'sentry-props', 'Sentry auth token'


@pos
def p_sign_script(g):
    pw = g.safe_pw(); app = g.ch(APPS).lower()
    lines = ['#!/usr/bin/env bash', 'set -euo pipefail', '# sign the release bundle for upload',
             'BUNDLE=app/build/outputs/bundle/release/app-release.aab',
             'jarsigner -verbose -sigalg SHA256withRSA -digestalg SHA-256 \\',
             '  -keystore ~/keys/%s-upload.jks \\' % app, "  -storepass '%s' \\" % pw, '  "$BUNDLE" upload',
             'echo "signed $BUNDLE"']
    return 'AndroidStudioProjects/%s/scripts/sign-release.sh' % app, '\n'.join(lines) + '\n', pw, 'sign-script', 'keystore password on jarsigner cmdline'


@pos
def p_mapbox_netrc(g):
    tok = g.mapbox_secret()
    t = 'machine api.mapbox.com\nlogin mapbox\npassword %s\n' % tok
    return '.netrc', t, tok, 'mapbox-netrc', 'Mapbox secret download token'


# ---------------- network engineer
def cisco_wrap(g, secret_lines):
    head = ['!', 'version %s' % g.ch(['15.2', '16.12', '17.9']), 'service timestamps debug datetime msec',
            'service timestamps log datetime msec', '!', 'hostname %s' % g.ch(['sw-core-01', 'edge-rtr1', 'acc-sw-3f', 'br-rtr']), '!']
    n = g.ch([10, 30, 60, 150, 280])
    filler = fill_cisco(g, n)
    cuts = [i + 1 for i, l in enumerate(filler) if l == '!'] or [len(filler)]
    i = g.ch(cuts)
    return head + filler[:i] + list(secret_lines) + ['!'] + filler[i:] + ['!', 'line vty 0 4', ' login local', ' transport input ssh', '!', 'end']


@pos
def p_cisco_plain(g):
    pw = g.safe_pw()
    l = g.ch(['username %s privilege 15 password 0 %s' % (g.ch(['admin', 'netops', 'backup']), pw),
              'enable password %s' % pw, 'username %s password %s' % (g.ch(['admin', 'noc']), pw)])
    p = g.ch(['configs/%s-running.cfg', 'net/backups/%s.conf', 'Desktop/%s-config.txt']) % g.ch(['sw-core-01', 'edge-rtr1', 'acc-sw-3f'])
    return p, '\n'.join(cisco_wrap(g, [l])) + '\n', pw, 'cisco-plain', 'plaintext (type 0) password'


@pos
def p_cisco_type7(g):
    pw = g.safe_pw()
    enc = g.cisco7(pw)
    l = g.ch(['enable password 7 %s', 'username admin privilege 15 password 7 %s', ' password 7 %s']) % enc
    lines = cisco_wrap(g, [l])
    return 'configs/%s.cfg' % g.ch(['rtr-branch', 'sw-lab', 'core1']), '\n'.join(lines) + '\n', enc, 'cisco-type7', 'type 7 (reversible) password'


@pos
def p_cisco_aaa_key(g):
    k = g.safe_pw()
    if g.chance(0.5):
        sl = ['tacacs server TACACS-%d' % g.ri(1, 2), ' address ipv4 %s' % g.ip(), ' key 0 %s' % k]
    else:
        sl = g.ch([['radius server ISE-%d' % g.ri(1, 2), ' address ipv4 %s auth-port 1812 acct-port 1813' % g.ip(), ' key %s' % k],
                   ['tacacs-server host %s key %s' % (g.ip(), k)]])
    lines = cisco_wrap(g, ['aaa new-model', 'aaa authentication login default group tacacs+ local', '!'] + sl)
    return 'configs/%s.cfg' % g.ch(['sw-dist-2', 'rtr-hq', 'acc-4']), '\n'.join(lines) + '\n', k, 'cisco-aaa-key', 'TACACS+/RADIUS shared key'


@pos
def p_cisco_snmp(g):
    c = g.ch(['%s-%s%d' % (g.ch(PW_WORDS), g.ch(PW_WORDS), g.ri(10, 99)), g.s(ALNUM, 14), 'N0c' + g.s(ALNUM, 8) + '!'])
    lines = cisco_wrap(g, ['snmp-server community %s %s %d' % (c, g.ch(['RO', 'RW']), g.ri(10, 99)),
                           'snmp-server location %s' % g.ch(CITIES), 'snmp-server contact noc@%s' % g.domain()])
    return 'configs/%s.cfg' % g.ch(['sw-floor1', 'rtr-dc']), '\n'.join(lines) + '\n', c, 'snmp-community', 'SNMP community string'


@pos
def p_junos_set(g):
    k = g.safe_pw()
    sl = g.ch(['set system radius-server %s secret "%s"' % (g.ip(), k),
               'set security ike policy IKE-POL pre-shared-key ascii-text "%s"' % k,
               'set snmp community %s authorization read-only' % k,
               'set system tacplus-server %s secret "%s"' % (g.ip(), k)])
    lines = place(g, ['# staged change, paste in config mode'], fill_junos(g, g.ri(3, 30)), [sl], ['commit check'])
    return 'net/changes/%s-%s.set' % (g.ch(['srx-edge', 'mx-core', 'ex-acc']), g.date().isoformat()), '\n'.join(lines) + '\n', k, 'junos-set', 'plaintext secret in set commands'


@pos
def p_mikrotik(g):
    k = g.safe_pw()
    sl = g.ch(['/interface wireless security-profiles set [ find default=yes ] authentication-types=wpa2-psk mode=dynamic-keys wpa2-pre-shared-key=%s' % k,
               '/ppp secret add name=%s password=%s profile=default-encryption service=l2tp' % (g.user(), k),
               '/user add group=full name=%s password=%s' % (g.ch(['netadmin', 'backup']), k),
               '/interface wifi security add authentication-types=wpa2-psk,wpa3-psk name=sec1 passphrase=%s' % k])
    head = ['# %s by RouterOS 7.%d' % (g.date().strftime('%Y-%m-%d %H:%M:%S').replace('-', '/', 0), g.ri(8, 15)),
            '# software id = %s-%s' % (g.s(UP + DIG, 4), g.s(UP + DIG, 4)), '#', '# model = %s' % g.ch(['RB4011iGS+', 'C52iG-5HaxD2HaxD', 'RB5009UG+S+']),
            '# serial number = %s' % g.s(UP + DIG, 12)]
    lines = place(g, head, fill_mikrotik(g, g.ri(4, 40)), [sl], [])
    return 'net/mikrotik/%s-export-sensitive.rsc' % g.ch(['home', 'office', 'cabin']), '\n'.join(lines) + '\n', k, 'mikrotik', 'export show-sensitive'


@pos
def p_radius_clients(g):
    k = g.safe_pw()
    blocks = []
    mine = 'client %s {\n\tipaddr = %s\n\tsecret = %s\n\tshortname = %s\n\tnas_type = other\n}' % (
        g.ch(['switch01', 'wlc', 'vpn-gw']), g.ip(), k, g.ch(['sw1', 'wlc', 'vpn']))
    blocks.append(mine)
    t = '# -*- text -*-\n##\n## clients.conf -- client configuration directives\n##\n\n' + '\n\n'.join(blocks) + '\n'
    return 'lab/freeradius/clients.conf', t, k, 'radius-clients', 'RADIUS shared secret'


@pos
def p_tacplus(g):
    k = g.safe_pw()
    t = 'key = "%s"\n\naccounting file = /var/log/tac_plus.acct\n\ngroup = netadmin {\n\tdefault service = permit\n\tservice = exec {\n\t\tpriv-lvl = 15\n\t}\n}\n\nuser = %s {\n\tmember = netadmin\n\tlogin = PAM\n}\n' % (k, g.user())
    return 'lab/tacacs/tac_plus.conf', t, k, 'tacplus', 'TACACS+ server key'


@pos
def p_snmpd(g):
    if g.chance(0.5):
        k = g.s(ALNUM, g.ri(12, 20)); l = 'rocommunity %s %s/24' % (k, g.ip()); note = 'v2c community'
    else:
        k = g.safe_pw(); l = 'createUser %s SHA "%s"' % (g.ch(['monitor', 'librenms', 'zabbix']), k); note = 'v3 auth pass'
    lines = ['# /etc/snmp/snmpd.conf', 'agentAddress udp:161', 'sysLocation    %s' % g.ch(CITIES), 'sysContact     noc@%s' % g.domain(),
             l, 'view systemonly included .1.3.6.1.2.1.1', 'includeAllDisks 10%']
    return 'lab/snmp/snmpd.conf', '\n'.join(lines) + '\n', k, 'snmpd', note


@pos
def p_wireguard(g):
    k = g.wg_priv()
    lines = ['[Interface]', 'PrivateKey = ' + k, 'Address = 10.%d.0.%d/32' % (g.ri(0, 200), g.ri(2, 250)), 'DNS = 1.1.1.1', '',
             '[Peer]', 'PublicKey = ' + g.wg_pub(), 'AllowedIPs = 0.0.0.0/0, ::/0', 'Endpoint = %s:51820' % g.ip(False),
             'PersistentKeepalive = 25']
    if g.chance(0.3):
        lines[1], lines[2] = lines[2], lines[1]
    p = g.ch(['.config/wireguard/wg0.conf', 'Downloads/%s.conf' % g.ch(['peer1', 'laptop', 'phone', 'vpn-home']), 'vpn/wg-office.conf'])
    return p, '\n'.join(lines) + '\n', k, 'wireguard', 'WireGuard PrivateKey'


@pos
def p_ovpn_tls(g):
    st = g.ovpn_static()
    ca = g.cert_pem('%s VPN CA' % g.ch(COMPANIES)).strip().split('\n')
    lines = ['client', 'dev tun', 'proto udp', 'remote %s 1194' % g.ip(False), 'resolv-retry infinite', 'nobind',
             'persist-key', 'persist-tun', 'remote-cert-tls server', 'cipher AES-256-GCM', 'auth-user-pass', 'verb 3',
             '<ca>'] + ca + ['</ca>', 'key-direction 1', '<tls-auth>'] + st + ['</tls-auth>']
    return 'vpn/%s.ovpn' % g.ch(['office', 'client', 'homelab']), '\n'.join(lines) + '\n', '-----BEGIN OpenVPN Static key V1-----', \
        'openvpn-tls-auth', 'inline tls-auth static key'


@pos
def p_ovpn_authfile(g):
    pw = g.pw()
    return g.ch(['vpn/auth.txt', '.config/openvpn/creds', 'vpn/login.conf']), '%s\n%s\n' % (g.user(), pw), pw, 'openvpn-auth', 'auth-user-pass file'


@pos
def p_ipsec_secrets(g):
    k = g.safe_pw() if g.chance(0.6) else '0s' + base64.b64encode(g.rb(32)).decode()
    lines = ['# ipsec.secrets - strongSwan IPsec secrets file', '', '%s %s : PSK "%s"' % (g.ch(['%any', g.ip(False)]), g.ip(False), k)]
    return 'lab/ipsec/ipsec.secrets', '\n'.join(lines) + '\n', k, 'ipsec-psk', 'IPsec PSK'


@pos
def p_swanctl(g):
    k = g.safe_pw()
    t = ('connections {\n    site-b {\n        remote_addrs = %s\n        local {\n            auth = psk\n        }\n'
         '        remote {\n            auth = psk\n        }\n    }\n}\n\nsecrets {\n    ike-site-b {\n        id = %s\n'
         '        secret = "%s"\n    }\n}\n') % (g.ip(False), g.ip(False), k)
    return 'lab/swanctl/swanctl.conf', t, k, 'swanctl-psk', 'swanctl secrets block'


@pos
def p_wifi_conf(g):
    k = g.safe_pw()
    if g.chance(0.5):
        t = 'ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\nupdate_config=1\ncountry=DE\n\nnetwork={\n\tssid="%s"\n\tpsk="%s"\n\tkey_mgmt=WPA-PSK\n}\n' % (
            g.ch(['FRITZ!Box 7590 XY', 'HomeNet', 'Lab-5G']), k)
        p = 'pi-setup/wpa_supplicant.conf'
    else:
        t = 'interface=wlan0\ndriver=nl80211\nssid=%s\nhw_mode=g\nchannel=%d\nwpa=2\nwpa_passphrase=%s\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\n' % (
            g.ch(['LabAP', 'guest-net']), g.ri(1, 11), k)
        p = 'lab/hostapd/hostapd.conf'
    return p, t, k, 'wifi-psk', 'Wi-Fi passphrase'


@pos
def p_net_notes(g):
    pw = g.pw()
    line = g.ch(['core switch admin / %s', 'fw01 console pw: %s', 'enable: %s', 'WLC login -> admin : %s']) % pw
    lines = place(g, ['# network notes'], fill_notes(g, g.ri(2, 12)), [line], [])
    return g.ch(['Documents/net-notes.md', 'notes/network.txt', 'Desktop/todo.txt']), '\n'.join(lines) + '\n', pw, 'notes-netpw', 'device password in notes'


# ---------------- streamer / gamer / modder
@pos
def p_obs_service(g):
    if g.chance(0.55):
        k = g.twitch_stream_key(); svc = 'Twitch'; server = 'auto'
    else:
        k = g.yt_stream_key(); svc = 'YouTube - RTMPS'; server = 'rtmps://a.rtmps.youtube.com:443/live2'
    d = {'settings': {'bwtest': False, 'key': k, 'server': server, 'service': svc}, 'type': 'rtmp_common'}
    t = json.dumps(d, indent=g.ch([None, 4]))
    prof = g.ch(['Untitled', 'Stream', 'Main', 'YouTube'])
    p = g.ch(['.config/obs-studio/basic/profiles/%s/service.json', 'AppData/Roaming/obs-studio/basic/profiles/%s/service.json']) % prof
    return p, t, k, 'obs-stream-key', svc + ' stream key'


@pos
def p_twitch_bot(g):
    tok = g.twitch_oauth()
    if g.chance(0.5):
        d = {'username': g.user().replace('.', '') + 'bot', 'oauth': 'oauth:' + tok, 'channels': ['#' + g.ch(FIRST)]}
        return 'streaming/chatbot/config.json', json.dumps(d, indent=2) + '\n', tok, 'twitch-oauth', 'chat bot oauth token'
    lines = ['import socket', '', "SERVER = 'irc.chat.twitch.tv'", 'PORT = 6667', "NICK = '%sbot'" % g.ch(FIRST),
             "TOKEN = 'oauth:%s'" % tok, "CHANNEL = '#%s'" % g.ch(FIRST), '', 'sock = socket.socket()',
             'sock.connect((SERVER, PORT))', "sock.send(f'PASS {TOKEN}\\n'.encode('utf-8'))"]
    return 'streaming/chatbot/bot.py', '\n'.join(lines) + '\n', tok, 'twitch-oauth', 'IRC oauth token in script'


@pos
def p_twitch_client_secret(g):
    cid, sec = g.twitch_oauth(), g.twitch_oauth()
    lines = ['twitch:', '  client_id: %s' % cid, '  client_secret: %s' % q(g, sec), '  redirect_uri: http://localhost:3000/auth/callback',
             'overlay:', '  theme: %s' % g.ch(['dark', 'neon']), '  alerts: true']
    return 'streaming/overlay/config.yml', '\n'.join(lines) + '\n', sec, 'twitch-client-secret', 'Twitch app client secret'


@pos
def p_discord_bot(g):
    tok = g.discord_bot()
    k = g.ri(0, 2)
    if k == 0:
        lines = place(g, [], ['PREFIX=!', 'GUILD_ID=%s' % g.snowflake_id(), 'LOG_LEVEL=info'], ['DISCORD_TOKEN=' + tok], [])
        return 'code/%s-bot/.env' % g.ch(['mod', 'music', 'raid']), '\n'.join(lines) + '\n', tok, 'discord-bot', 'bot token in .env'
    if k == 1:
        d = {'prefix': '!', 'token': tok, 'ownerId': g.snowflake_id(), 'status': 'Modding Skyrim'}
        return 'code/modbot/config.json', json.dumps(d, indent=g.ch([2, 4])) + '\n', tok, 'discord-bot', 'bot token in config.json'
    lines = ['import discord', '', 'intents = discord.Intents.default()', 'client = discord.Client(intents=intents)', '',
             '@client.event', 'async def on_ready():', "    print(f'logged in as {client.user}')", '', "client.run('%s')" % tok]
    return 'code/modbot/bot.py', '\n'.join(lines), tok, 'discord-bot', 'bot token in client.run (no final newline)'


@pos
def p_discord_webhook(g):
    url = g.discord_webhook()
    lines = ['#!/usr/bin/env python3', '"""Post server status to Discord."""', 'import requests', '',
             'WEBHOOK = "%s"' % url, '', 'def post(msg):', '    requests.post(WEBHOOK, json={"content": msg}, timeout=10)', '',
             'if __name__ == "__main__":', '    post("Server restarted")']
    return 'gameserver/scripts/notify.py', '\n'.join(lines) + '\n', url, 'discord-webhook', 'webhook URL with token'


@pos
def p_steam_key(g):
    k = g.steam_key()
    if g.chance(0.5):
        lines = ['import requests', '', 'STEAM_API_KEY = "%s"' % k, 'STEAM_ID = "7656119%s"' % g.s(DIG, 10), '',
                 'r = requests.get("https://api.steampowered.com/IPlayerService/GetOwnedGames/v1/",',
                 '                 params={"key": STEAM_API_KEY, "steamid": STEAM_ID})', 'print(len(r.json()["response"]["games"]))']
        return 'code/steam-stats/main.py', '\n'.join(lines) + '\n', k, 'steam-key', 'Steam Web API key'
    lines = ['{', '  "steamApiKey": "%s",' % k, '  "serverName": "%s",' % g.ch(['Chill Modded', 'EU #2']), '  "maxPlayers": %d' % g.ri(8, 64), '}']
    return 'gameserver/config/settings.json', '\n'.join(lines) + '\n', k, 'steam-key', 'Steam Web API key in json'


@pos
def p_yt_api(g):
    k = g.google_key()
    lines = ['from googleapiclient.discovery import build', '', "API_KEY = '%s'" % k,
             "youtube = build('youtube', 'v3', developerKey=API_KEY)", "req = youtube.channels().list(part='statistics', forUsername='%s')" % g.ch(FIRST),
             'print(req.execute())']
    return 'streaming/yt-stats/stats.py', '\n'.join(lines) + '\n', k, 'google-api-key', 'YouTube Data API key'


@pos
def p_rcon(g):
    pw = g.safe_pw()
    props = ['#Minecraft server properties', '#%s' % g.date().strftime('%a %b %d 12:00:00 UTC %Y'), 'enable-jmx-monitoring=false',
             'rcon.port=25575', 'level-seed=', 'gamemode=survival', 'enable-command-block=false', 'enable-query=false',
             'level-name=world', 'motd=%s' % g.ch(['A Minecraft Server', 'Modded SMP']), 'query.port=25565', 'pvp=true',
             'difficulty=%s' % g.ch(['easy', 'normal', 'hard']), 'max-players=%d' % g.ri(5, 40), 'online-mode=true',
             'enable-rcon=true', 'rcon.password=' + pw, 'white-list=true', 'server-port=25565', 'view-distance=10']
    return 'gameserver/mc/server.properties', '\n'.join(props) + '\n', pw, 'mc-rcon', 'RCON password'


@pos
def p_streamelements_jwt(g):
    tok = g.jwt({'citadel': 'true', 'channel': g.hex(24), 'role': 'owner', 'authToken': g.s(B64URL, 22),
                 'iat': g.ri(1690000000, 1730000000), 'iss': 'StreamElements'})
    lines = ['SE_CHANNEL_ID=%s' % g.hex(24), 'SE_JWT=%s' % tok]
    return 'streaming/widgets/.env', '\n'.join(lines) + '\n', tok, 'jwt', 'StreamElements JWT'


# ---------------- finance / crypto
@pos
def p_ccxt(g):
    exch = g.ch(['binance', 'kucoin', 'bybit', 'okx'])
    key, sec = g.s(ALNUM, 64), g.s(ALNUM, 64)
    ks = g.ch(['apiKey', 'api_key'])
    lines = ['import ccxt', '', 'exchange = ccxt.%s({' % exch, "    '%s': '%s'," % ('apiKey', key), "    'secret': '%s'," % sec,
             "    'enableRateLimit': True,", '})', '', "print(exchange.fetch_balance()['total'])"]
    return 'trading/%s_bot.py' % exch, '\n'.join(lines) + '\n', sec, 'exchange-secret', exch + ' API secret'


@pos
def p_kraken_key(g):
    key = base64.b64encode(g.rb(42)).decode()
    priv = base64.b64encode(g.rb(64)).decode()
    return 'trading/kraken.key', '%s\n%s\n' % (key, priv), priv, 'kraken-key', 'Kraken private key (2nd line)'


@pos
def p_coinbase_cdp(g):
    pem = g.pem_sec1_ec()
    d = {'name': 'organizations/%s/apiKeys/%s' % (g.uuid(), g.uuid()), 'privateKey': pem}
    return 'Downloads/cdp_api_key.json', json.dumps(d, indent=2) + '\n', '"privateKey": "-----BEGIN EC PRIVATE KEY-----', \
        'coinbase-cdp', 'CDP API EC private key'


@pos
def p_eth_env(g):
    k = g.eth_priv()
    if g.chance(0.5):
        lines = place(g, [], ['SEPOLIA_RPC_URL=https://sepolia.infura.io/v3/', 'ETHERSCAN_CHAIN=mainnet', 'REPORT_GAS=true'],
                      ['PRIVATE_KEY=' + k], [])
        return 'code/nft-drop/.env', '\n'.join(lines) + '\n', k, 'eth-privkey', 'deployer private key in .env'
    lines = ['require("@nomicfoundation/hardhat-toolbox");', '', 'module.exports = {', '  solidity: "0.8.%d",' % g.ri(19, 24),
             '  networks: {', '    mainnet: {', '      url: "https://eth.llamarpc.com",', '      accounts: ["%s"],' % k, '    },', '  },', '};']
    return 'code/token-vesting/hardhat.config.js', '\n'.join(lines) + '\n', k, 'eth-privkey', 'private key in hardhat config'


@pos
def p_wif(g):
    w = g.wif()
    lines = ['paper wallet %d' % g.ri(2013, 2017), 'addr: %s' % g.btc_addr(), 'priv (WIF): %s' % w, '', 'keep offline!']
    return g.ch(['Documents/crypto/paperwallet.txt', 'notes/btc.txt']), '\n'.join(lines) + '\n', w, 'btc-wif', 'WIF private key'


@pos
def p_electrum(g):
    x = g.xprv()
    d = {'addr_history': {}, 'keystore': {'pw_hash_version': 1, 'type': 'bip32', 'xprv': x, 'xpub': g.xpub(),
                                          'derivation': "m/0'"}, 'seed_version': 59, 'use_encryption': False, 'wallet_type': 'standard'}
    return '.electrum/wallets/default_wallet', json.dumps(d, indent=4) + '\n', x, 'electrum-xprv', 'unencrypted wallet xprv'


@pos
def p_seed_phrase(g):
    m = g.mnemonic(g.ch([12, 24]))
    k = g.ri(0, 2)
    if k == 0:
        lines = place(g, ['Important'], fill_notes(g, g.ri(1, 8)), ['ledger seed: ' + m], [])
    elif k == 1:
        lines = ['MetaMask recovery phrase (DO NOT SHARE)', m, '', 'pin for the app is the usual one']
    else:
        lines = place(g, [], fill_notes(g, g.ri(2, 10)), ['seed = "%s"' % m], [])
    return g.ch(['Documents/important.txt', 'notes/wallet.md', 'Desktop/backup words.txt']), '\n'.join(lines) + '\n', m, 'seed-phrase', 'BIP39 mnemonic'


@pos
def p_alpaca(g):
    kid = 'PK' + g.s(UP + DIG, 18); sec = g.s(ALNUM, 40)
    lines = ['[alpaca]', 'key_id = %s' % kid, 'secret_key = %s' % sec, 'base_url = https://api.alpaca.markets']
    return 'trading/alpaca.ini', '\n'.join(lines) + '\n', sec, 'alpaca', 'Alpaca secret key'


# ---------------- web designer
@pos
def p_filezilla(g):
    pw = g.pw()
    b = base64.b64encode(pw.encode()).decode()
    host = g.host()
    other = ''
    if g.chance(0.5):
        other = ('\t\t<Server>\n\t\t\t<Host>%s</Host>\n\t\t\t<Port>22</Port>\n\t\t\t<Protocol>1</Protocol>\n\t\t\t<Type>0</Type>\n'
                 '\t\t\t<User>%s</User>\n\t\t\t<Logontype>5</Logontype>\n\t\t\t<Keyfile>/home/%s/.ssh/id_ed25519</Keyfile>\n'
                 '\t\t\t<Name>staging</Name>\n\t\t</Server>\n') % (g.host(), g.user(), g.ch(FIRST))
    t = ('<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.%d.%d" platform="%s">\n\t<Servers>\n%s'
         '\t\t<Server>\n\t\t\t<Host>%s</Host>\n\t\t\t<Port>21</Port>\n\t\t\t<Protocol>0</Protocol>\n\t\t\t<Type>0</Type>\n'
         '\t\t\t<User>%s</User>\n\t\t\t<Pass encoding="base64">%s</Pass>\n\t\t\t<Logontype>1</Logontype>\n'
         '\t\t\t<PasvMode>MODE_DEFAULT</PasvMode>\n\t\t\t<EncodingType>Auto</EncodingType>\n\t\t\t<BypassProxy>0</BypassProxy>\n'
         '\t\t\t<Name>%s</Name>\n\t\t\t<SyncBrowsing>0</SyncBrowsing>\n\t\t\t<DirectoryComparison>0</DirectoryComparison>\n'
         '\t\t</Server>\n\t</Servers>\n</FileZilla3>\n') % (g.ri(60, 68), g.ri(0, 3), g.ch(['windows', 'mac', '*nix']), other, host,
                                                            g.user(), b, g.ch(['client site', 'live', 'shop']))
    p = g.ch(['.config/filezilla/sitemanager.xml', 'AppData/Roaming/FileZilla/sitemanager.xml', '.config/filezilla/recentservers.xml'])
    return p, t, b, 'filezilla', 'base64 FTP password'


@pos
def p_winscp(g):
    u, h, pw = g.user(), g.host(), g.pw()
    enc = g.winscp_enc(u, h, pw)
    name = '%s@%s' % (u, h)
    lines = ['[Configuration\\Interface]', 'RandomSeedFile=%APPDATA%\\winscp.rnd', '', '[Sessions\\%s]' % name.replace('@', '%40'),
             'HostName=' + h, 'UserName=' + u, 'Password=' + enc, 'FSProtocol=%d' % g.ch([0, 2, 5]), '',
             '[Configuration\\Interface\\Commander]', 'Theme=Dark']
    return g.ch(['AppData/Roaming/WinSCP.ini', 'Documents/WinSCP.ini']), '\r\n'.join(lines) + '\r\n', enc, 'winscp', 'obfuscated (reversible) session password'


@pos
def p_sftp_json(g):
    pw = g.pw()
    d = {'name': g.ch(['Production', 'client-site', 'Staging']), 'host': g.host(), 'protocol': g.ch(['sftp', 'ftp']),
         'port': 22, 'username': g.user(), 'password': pw, 'remotePath': '/var/www/html', 'uploadOnSave': True}
    return 'sites/%s/.vscode/sftp.json' % g.ch(COMPANIES), json.dumps(d, indent=g.ch([2, 4, '\t'])) + '\n', json.dumps(pw)[1:-1], 'vscode-sftp', 'password in sftp.json'


@pos
def p_ftpconfig(g):
    pw = g.pw()
    d = {'protocol': 'ftp', 'host': g.host(), 'port': 21, 'user': g.user(), 'pass': pw, 'promptForPass': False,
         'remote': '/public_html', 'secure': False}
    return 'sites/%s/.ftpconfig' % g.ch(COMPANIES), json.dumps(d, indent=2) + '\n', json.dumps(pw)[1:-1], 'ftpconfig', 'Atom remote-ftp password'


def wp_salts_block(g, filled):
    out = []
    for k in ['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT']:
        v = g.s(ALNUM + '!#%^*()-_=+[]{}|;:<>,.?~', 64) if filled else 'put your unique phrase here'
        out.append("define( '%s',%s'%s' );" % (k, ' ' * (max(1, 17 - len(k))), v))
    return out


@pos
def p_wpconfig_db(g):
    pw = g.safe_pw()
    lines = ['<?php', '/**', ' * The base configuration for WordPress', ' *', ' * @package WordPress', ' */', '',
             "define( 'DB_NAME', '%s' );" % g.ch(['wordpress', 'wp_shop', 'client_site']), "define( 'DB_USER', '%s' );" % g.ch(['wpuser', 'admin_wp']),
             "define( 'DB_PASSWORD', '%s' );" % pw, "define( 'DB_HOST', '%s' );" % g.ch(['localhost', 'mysql']), "define( 'DB_CHARSET', 'utf8mb4' );",
             "define( 'DB_COLLATE', '' );", ''] + wp_salts_block(g, False) + ['', "$table_prefix = 'wp_';", ''] + fill_php(g, g.ri(0, 4)) + \
        ["/* That's all, stop editing! Happy publishing. */", "if ( ! defined( 'ABSPATH' ) ) {", "\tdefine( 'ABSPATH', __DIR__ . '/' );", '}',
         "require_once ABSPATH . 'wp-settings.php';"]
    return 'sites/%s/public_html/wp-config.php' % g.ch(COMPANIES), '\n'.join(lines) + '\n', pw, 'wp-config-db', 'DB_PASSWORD literal, salts still default'


@pos
def p_wpconfig_salts(g):
    salts = wp_salts_block(g, True)
    lines = ['<?php', "define( 'DB_NAME', getenv('WORDPRESS_DB_NAME') );", "define( 'DB_USER', getenv('WORDPRESS_DB_USER') );",
             "define( 'DB_PASSWORD', getenv('WORDPRESS_DB_PASSWORD') );", "define( 'DB_HOST', getenv('WORDPRESS_DB_HOST') );", ''] + salts + \
        ['', "$table_prefix = 'wp_';", "require_once ABSPATH . 'wp-settings.php';"]
    sec = salts[0].split("'")[3]
    return 'sites/%s/wp-config.php' % g.ch(COMPANIES), '\n'.join(lines) + '\n', sec, 'wp-salts', 'real auth keys/salts (AUTH_KEY line)'


@pos
def p_gitftp(g):
    pw = g.safe_pw()
    lines = ['[core]', '\trepositoryformatversion = 0', '\tfilemode = true', '\tbare = false', '[remote "origin"]',
             '\turl = git@github.com:%s/%s.git' % (g.user(), g.ch(COMPANIES)), '\tfetch = +refs/heads/*:refs/remotes/origin/*',
             '[git-ftp]', '\tuser = %s' % g.user(), '\turl = ftp://%s/public_html' % g.host(), '\tpassword = %s' % pw]
    return 'sites/%s/.git/config' % g.ch(COMPANIES), '\n'.join(lines) + '\n', pw, 'git-ftp', 'git-ftp password in .git/config'


@pos
def p_ppk(g):
    t = g.ppk_ed25519('%s@%s' % (g.ch(FIRST), g.ch(['laptop', 'DESKTOP-%s' % g.s(UP + DIG, 7)])))
    tl = t.split('\n')
    sec = tl[tl.index('Private-Lines: 1') + 1]
    return g.ch(['Documents/keys/%s.ppk', '.ssh/%s.ppk']) % g.ch(['hosting', 'client', 'id_ed25519']), t, sec, 'putty-ppk', 'unencrypted PuTTY key (Private-Lines body)'


@pos
def p_netlify(g):
    tok = g.netlify()
    d = {'telemetryDisabled': True, 'cliId': g.uuid(), 'userId': g.hex(24),
         'users': {g.hex(24): {'id': g.hex(24), 'name': g.fullname(), 'email': g.email(), 'auth': {'token': tok, 'github': {}}}}}
    return '.config/netlify/config.json', json.dumps(d, indent=2) + '\n', tok, 'netlify', 'Netlify access token'


# ---------------- student
@pos
def p_homework_py(g):
    pw = g.pw()
    pwl = json.dumps(pw) if g.chance(0.5) else ("'%s'" % pw if "'" not in pw and '\\' not in pw else json.dumps(pw))
    if g.chance(0.5):
        lines = ['# CS%d assignment %d' % (g.ri(101, 499), g.ri(1, 9)), 'import mysql.connector', '',
                 'db = mysql.connector.connect(', '    host="localhost",', '    user="root",', '    password=%s,' % pwl,
                 '    database="%s"' % g.ch(['school', 'library', 'hw3']), ')', 'cur = db.cursor()', 'cur.execute("SELECT * FROM students")',
                 'for row in cur.fetchall():', '    print(row)']
    else:
        lines = ['import psycopg2', '', 'conn = psycopg2.connect(host="%s", dbname="%s", user="%s", password=%s)' % (
            g.ch(['localhost', 'db.cs.university.edu']), g.ch(['course', 'proj']), g.user(), pwl)] + fill_py(g, g.ri(2, 30))
    return 'uni/%s/%s.py' % (g.ch(['databases', 'cs-intro', 'ws2024-dbs']), g.ch(['hw3', 'main', 'assignment2', 'q1'])), '\n'.join(lines) + '\n', \
        pwl[1:-1], 'homework-db', 'hard-coded DB password'


@pos
def p_jdbc(g):
    pw = g.safe_pw()
    lines = ['import java.sql.*;', '', 'public class Main {', '    public static void main(String[] args) throws Exception {',
             '        Connection c = DriverManager.getConnection(', '            "jdbc:mysql://localhost:3306/%s", "root", "%s");' % (g.ch(['school', 'shop']), pw),
             '        Statement s = c.createStatement();', '        ResultSet rs = s.executeQuery("SELECT name FROM course");',
             '        while (rs.next()) System.out.println(rs.getString(1));', '    }', '}']
    return 'uni/java-db/src/Main.java', '\n'.join(lines) + '\n', pw, 'jdbc', 'password in getConnection'


@pos
def p_student_notes(g):
    pw = g.pw()
    line = g.ch(['uni email password: %s', 'eduroam: %s', 'moodle pw = %s', 'netflix (shared w/ roommate): %s', 'PIN for bank app: %s'])
    if line.startswith('PIN'):
        pw = g.pin()
    line = line % pw
    lines = place(g, [g.ch(['# Semester notes', 'TODO', 'random'])], fill_notes(g, g.ri(3, 25)), [line], [])
    return g.ch(['Documents/notes.md', 'uni/notes.txt', 'Desktop/passwords.txt']), '\n'.join(lines) + '\n', pw, 'notes-pw', 'credential in personal notes'


@pos
def p_mycnf(g):
    pw = g.safe_pw()
    lines = ['[client]', 'user=%s' % g.ch(['root', g.user()]), 'password=%s' % q(g, pw), 'host=localhost', '', '[mysql]', 'prompt=\\u@\\h [\\d]> ']
    return '.my.cnf', '\n'.join(lines) + '\n', pw, 'my-cnf', 'mysql client password'


@pos
def p_pgpass(g):
    pw = g.safe_pw()
    rows = ['localhost:5432:*:postgres:%s' % pw]
    return '.pgpass', '\n'.join(rows) + '\n', pw, 'pgpass', 'pgpass row'


@pos
def p_mongo_uri(g):
    pw = g.safe_pw()
    uri = 'mongodb+srv://%s:%s@cluster0.%s.mongodb.net/%s?retryWrites=true&w=majority' % (g.user().replace('.', ''), pw, g.s(LOW + DIG, 5), g.ch(['test', 'todo']))
    lines = ["const mongoose = require('mongoose');", '', "mongoose.connect('%s')" % uri, "  .then(() => console.log('connected'))",
             '  .catch(err => console.error(err));']
    return 'uni/webdev/%s/server.js' % g.ch(['todo-app', 'project2']), '\n'.join(lines) + '\n', pw, 'mongo-uri', 'password in Atlas URI'


# ---------------- SRE
@pos
def p_tfvars(g):
    pw = g.pw()
    k = g.ch(['db_password', 'rds_master_password', 'grafana_admin_password', 'admin_password'])
    lines = place(g, [], fill_hcl(g, g.ri(2, 20)), ['%s = "%s"' % (k, json.dumps(pw)[1:-1])], [])
    return 'infra/%s/%s' % (g.ch(['prod', 'staging', 'envs/eu']), g.ch(['terraform.tfvars', 'secrets.auto.tfvars', 'prod.tfvars'])), \
        '\n'.join(lines) + '\n', json.dumps(pw)[1:-1], 'tfvars', k


@pos
def p_tfstate(g):
    pw = g.strong_pw(24)
    st = {'version': 4, 'terraform_version': '1.%d.%d' % (g.ri(5, 9), g.ri(0, 5)), 'serial': g.ri(1, 300), 'lineage': g.uuid(),
          'outputs': {}, 'resources': [
              {'mode': 'managed', 'type': 'aws_s3_bucket', 'name': 'logs', 'provider': 'provider["registry.terraform.io/hashicorp/aws"]',
               'instances': [{'schema_version': 0, 'attributes': {'bucket': '%s-logs' % g.ch(COMPANIES), 'id': '%s-logs' % g.ch(COMPANIES),
                                                                  'arn': 'arn:aws:s3:::%s-logs' % g.ch(COMPANIES)}}]},
              {'mode': 'managed', 'type': 'random_password', 'name': 'db', 'provider': 'provider["registry.terraform.io/hashicorp/random"]',
               'instances': [{'schema_version': 3, 'attributes': {'id': 'none', 'length': 24, 'special': True, 'result': pw,
                                                                  'override_special': '!#%^*-_=+.'}, 'sensitive_attributes': [[{'type': 'get_attr', 'value': 'result'}]]}]}]}
    return 'infra/%s/terraform.tfstate' % g.ch(['prod', 'db', 'core']), json.dumps(st, indent=2) + '\n', pw, 'tfstate', 'random_password result in state'


@pos
def p_tfc_creds(g):
    tok = g.tfc()
    d = {'credentials': {'app.terraform.io': {'token': tok}}}
    return '.terraform.d/credentials.tfrc.json', json.dumps(d, indent=2) + '\n', tok, 'tfc-token', 'Terraform Cloud API token'


@pos
def p_vault_token(g):
    tok = g.vault()
    if g.chance(0.5):
        return '.vault-token', tok, tok, 'vault-token', 'vault token helper file'
    lines = place(g, [], fill_sh(g, g.ri(3, 25)), ['export VAULT_ADDR=https://vault.%s:8200' % g.domain(), 'export VAULT_TOKEN=' + tok], [])
    return g.ch(['.zshrc', '.bashrc']), '\n'.join(lines) + '\n', tok, 'vault-token', 'VAULT_TOKEN exported'


@pos
def p_ansible_plain(g):
    pw = g.safe_pw()
    if g.chance(0.5):
        k = g.ch(['ansible_become_password', 'mysql_root_password', 'postgres_admin_password', 'ansible_password'])
        lines = ['---', 'ansible_user: deploy', 'ntp_servers:', '  - 0.pool.ntp.org', '%s: %s' % (k, q(g, pw)), 'app_port: 8080']
        return 'infra/ansible/group_vars/%s.yml' % g.ch(['all', 'db', 'webservers']), '\n'.join(lines) + '\n', pw, 'ansible-plain', k
    lines = ['[web]', 'web1.%s' % g.domain(), '', '[db]', 'db1 ansible_host=%s ansible_user=admin ansible_password=%s' % (g.ip(), pw), '',
             '[all:vars]', 'ansible_python_interpreter=/usr/bin/python3']
    return 'infra/ansible/inventory/hosts.ini', '\n'.join(lines) + '\n', pw, 'ansible-plain', 'inventory ansible_password'


@pos
def p_helm_values(g):
    pw = g.safe_pw()
    lines = ['# values for %s' % g.ch(['prod', 'staging']), 'replicaCount: %d' % g.ri(1, 5), 'image:', '  repository: ghcr.io/%s/api' % g.ch(COMPANIES),
             '  tag: "%d.%d.%d"' % (g.ri(0, 3), g.ri(0, 20), g.ri(0, 9)), '']
    sl = g.ch([['postgresql:', '  auth:', '    username: app', '    password: %s' % q(g, pw), '    database: app'],
               ['redis:', '  auth:', '    enabled: true', '    password: %s' % q(g, pw)],
               ['rabbitmq:', '  auth:', '    username: user', '    password: %s' % q(g, pw)]])
    lines += fill_yaml(g, g.ri(0, 10)) + sl + fill_yaml(g, g.ri(0, 10))
    return 'infra/helm/%s/values-%s.yaml' % (g.ch(['api', 'platform']), g.ch(['prod', 'staging'])), '\n'.join(lines) + '\n', pw, 'helm-values', 'subchart password'


@pos
def p_prometheus(g):
    pw = g.safe_pw()
    lines = ['global:', '  scrape_interval: 15s', '', 'scrape_configs:', '  - job_name: node', '    static_configs:',
             "      - targets: ['%s:9100']" % g.ip(), '  - job_name: %s' % g.ch(['federate', 'blackbox', 'remote-app']), '    scheme: https',
             '    basic_auth:', '      username: %s' % g.ch(['prometheus', 'scraper']), '      password: %s' % q(g, pw),
             '    static_configs:', "      - targets: ['%s']" % g.host()]
    return 'infra/monitoring/prometheus.yml', '\n'.join(lines) + '\n', pw, 'prometheus-basicauth', 'basic_auth password'


@pos
def p_grafana_ini(g):
    pw = g.safe_pw()
    if g.chance(0.5):
        sec = ['[security]', 'admin_user = admin', 'admin_password = %s' % pw]
        note = 'admin_password'
    else:
        sec = ['[smtp]', 'enabled = true', 'host = smtp.%s:587' % g.domain(), 'user = grafana@%s' % g.domain(), 'password = """%s"""' % pw,
               'from_address = grafana@%s' % g.domain()]
        note = 'smtp password'
    lines = ['[server]', 'http_port = 3000', 'domain = grafana.%s' % g.domain(), ''] + sec + ['', '[auth.anonymous]', 'enabled = false']
    return 'infra/monitoring/grafana.ini', '\n'.join(lines) + '\n', pw, 'grafana-ini', note


def am_wrap(g, recv_lines, globals_extra=None):
    lines = ['global:', '  resolve_timeout: 5m'] + (globals_extra or []) + ['', 'route:', '  receiver: main', "  group_by: ['alertname']",
                                                                             '', 'receivers:', '  - name: main'] + recv_lines
    return '\n'.join(lines) + '\n'


@pos
def p_alertmanager(g):
    k = g.ri(0, 3)
    if k == 0:
        sec = g.slack_webhook(); t = am_wrap(g, ['    slack_configs:', "      - api_url: '%s'" % sec, "        channel: '#alerts'"]); note = 'slack webhook'
    elif k == 1:
        sec = g.hex(32); t = am_wrap(g, ['    pagerduty_configs:', '      - routing_key: %s' % sec]); note = 'PagerDuty routing key'
    elif k == 2:
        sec = g.uuid(); t = am_wrap(g, ['    opsgenie_configs:', '      - api_key: %s' % sec, '        priority: P2']); note = 'Opsgenie API key (uuid)'
    else:
        sec = g.safe_pw(); t = am_wrap(g, ['    email_configs:', '      - to: oncall@%s' % g.domain()],
                                      ["  smtp_smarthost: 'smtp.%s:587'" % g.domain(), "  smtp_from: 'alerts@%s'" % g.domain(),
                                       "  smtp_auth_username: 'alerts@%s'" % g.domain(), "  smtp_auth_password: '%s'" % sec]); note = 'smtp_auth_password'
    return 'infra/monitoring/alertmanager.yml', t, sec, 'alertmanager', note


@pos
def p_postfix_sasl(g):
    if g.chance(0.5):
        sec = g.sendgrid(); l = '[smtp.sendgrid.net]:587 apikey:%s' % sec
    else:
        sec = g.safe_pw(); l = '[%s]:587 %s:%s' % (g.ch(['smtp.mailgun.org', 'email-smtp.eu-west-1.amazonaws.com', 'smtp.office365.com']), g.email(), sec)
    return 'infra/relay/sasl_passwd', l + '\n', sec, 'postfix-sasl', 'relay credentials'


@pos
def p_msmtprc(g):
    pw = g.safe_pw()
    lines = ['defaults', 'auth on', 'tls on', 'tls_trust_file /etc/ssl/certs/ca-certificates.crt', 'logfile ~/.msmtp.log', '',
             'account %s' % g.ch(['work', 'relay']), 'host smtp.%s' % g.domain(), 'port 587', 'from %s' % g.email(), 'user %s' % g.email(),
             'password %s' % pw, '', 'account default : %s' % g.ch(['work', 'relay'])]
    lines[-1] = 'account default : ' + lines[6].split()[1]
    return '.msmtprc', '\n'.join(lines) + '\n', pw, 'msmtp', 'SMTP password'


@pos
def p_docker_auth(g):
    u, pw = g.user(), g.ch([g.pw, g.dockerhub])()
    a = base64.b64encode(('%s:%s' % (u, pw)).encode()).decode()
    d = {'auths': {g.ch(['https://index.docker.io/v1/', 'registry.%s' % g.domain(), 'ghcr.io']): {'auth': a}}}
    return '.docker/config.json', json.dumps(d, indent='\t') + '\n', a, 'docker-auth', 'base64 user:pass'


@pos
def p_kubeconfig_token(g):
    tok = g.jwt({'iss': 'kubernetes/serviceaccount', 'kubernetes.io/serviceaccount/namespace': 'kube-system',
                 'kubernetes.io/serviceaccount/service-account.name': 'admin-user', 'sub': 'system:serviceaccount:kube-system:admin-user'}, 'RS256')
    ca = base64.b64encode(g.cert_pem('kubernetes').encode()).decode()
    lines = ['apiVersion: v1', 'clusters:', '- cluster:', '    certificate-authority-data: ' + ca, '    server: https://%s:6443' % g.ip(),
             '  name: %s' % g.ch(['homelab', 'prod-eu']), 'contexts:', '- context:', '    cluster: homelab', '    user: admin-user', '  name: default',
             'current-context: default', 'kind: Config', 'preferences: {}', 'users:', '- name: admin-user', '  user:', '    token: ' + tok]
    return '.kube/config', '\n'.join(lines) + '\n', tok, 'kube-token', 'SA bearer token in kubeconfig'


@pos
def p_gh_hosts(g):
    tok = g.gh_classic('gho_')
    lines = ['github.com:', '    git_protocol: https', '    users:', '        %s:' % g.user(), '            oauth_token: ' + tok,
             '    oauth_token: ' + tok if False else '    user: %s' % g.user()]
    return '.config/gh/hosts.yml', '\n'.join(lines) + '\n', tok, 'gh-cli', 'gh oauth token'


@pos
def p_git_credentials(g):
    tok = g.ch([g.gh_classic, g.gh_fine, g.glpat])()
    host = 'github.com' if not tok.startswith('glpat') else 'gitlab.com'
    rows = ['https://%s:%s@%s' % (g.user(), tok, host)]
    return '.git-credentials', '\n'.join(rows) + '\n', tok, 'git-credentials', 'token in credential store'


@pos
def p_pd_api(g):
    tok = g.pd_api()
    lines = ['#!/usr/bin/env bash', '# ack all my incidents', 'curl -s -X PUT https://api.pagerduty.com/incidents \\',
             '  -H "Accept: application/vnd.pagerduty+json;version=2" \\', '  -H "Authorization: Token token=%s" \\' % tok,
             '  -H "From: %s" \\' % g.email(), '  -H "Content-Type: application/json" -d @ack.json']
    return 'bin/pd-ack.sh', '\n'.join(lines) + '\n', tok, 'pagerduty-api', 'REST API token'


@pos
def p_opsgenie_hb(g):
    k = g.uuid()
    l = '*/5 * * * * curl -s -X GET "https://api.opsgenie.com/v2/heartbeats/%s/ping" -H "Authorization: GenieKey %s"' % (g.ch(['backup', 'etl']), k)
    lines = ['# m h dom mon dow command', 'MAILTO=""', '0 3 * * * /usr/local/bin/backup.sh', l]
    return 'infra/cron/crontab.txt', '\n'.join(lines) + '\n', k, 'opsgenie-key', 'GenieKey uuid in crontab'


@pos
def p_grafana_sa(g):
    tok = g.grafana_sa()
    lines = place(g, [], fill_env(g, g.ri(1, 6)), ['GRAFANA_URL=https://grafana.%s' % g.domain(), 'GRAFANA_TOKEN=' + tok], [])
    return 'infra/dashboards/.env', '\n'.join(lines) + '\n', tok, 'grafana-sa', 'service account token'


@pos
def p_ssh_key(g):
    k, _ = g.openssh_ed25519('%s@%s' % (g.ch(FIRST), g.ch(['laptop', 'ws', 'mbp'])))
    return g.ch(['.ssh/id_ed25519', '.ssh/deploy_key', '.ssh/id_ed25519_work']), k, '-----BEGIN OPENSSH PRIVATE KEY-----', 'ssh-key', 'unencrypted OpenSSH key'


@pos
def p_doctl(g):
    tok = g.dop()
    lines = ['access-token: ' + tok, 'context: default', 'output: text']
    return '.config/doctl/config.yaml', '\n'.join(lines) + '\n', tok, 'digitalocean', 'doctl access token'


@pos
def p_telegram_alert(g):
    tok = g.telegram()
    lines = ['#!/bin/sh', 'BOT_TOKEN="%s"' % tok, 'CHAT_ID="-100%s"' % g.s(DIG, 10),
             'curl -s "https://api.telegram.org/bot${BOT_TOKEN}/sendMessage" -d chat_id="$CHAT_ID" -d text="$1" > /dev/null']
    return 'bin/notify-telegram.sh', '\n'.join(lines) + '\n', tok, 'telegram-bot', 'bot token'


@pos
def p_consul_token(g):
    t = g.uuid()
    lines = place(g, [], fill_sh(g, g.ri(2, 15)), ['export CONSUL_HTTP_ADDR=https://consul.%s' % g.domain(), 'export CONSUL_HTTP_TOKEN=%s' % t], [])
    return g.ch(['.zshrc', '.bashrc', '.profile']), '\n'.join(lines) + '\n', t, 'consul-token', 'ACL token (uuid)'


@pos
def p_amqp(g):
    pw = g.safe_pw()
    l = "broker_url = 'amqp://%s:%s@%s:5672/%s'" % (g.ch(['celery', 'worker']), pw, g.host(), g.ch(['', 'prod']))
    lines = ['# celeryconfig.py', l, "result_backend = 'redis://localhost:6379/1'", "task_serializer = 'json'", "timezone = 'UTC'"]
    return 'infra/workers/celeryconfig.py', '\n'.join(lines) + '\n', pw, 'amqp-url', 'broker password'


@pos
def p_datadog(g):
    k = g.hex(32)
    lines = ['## Datadog agent config', 'api_key: %s' % k, 'site: %s' % g.ch(['datadoghq.eu', 'datadoghq.com']), 'hostname: %s' % g.ch(['web-1', 'db-2']),
             'logs_enabled: true', 'tags:', '  - env:prod', '  - team:sre']
    return 'infra/dd/datadog.yaml', '\n'.join(lines) + '\n', k, 'datadog', 'Datadog API key'


@pos
def p_aws_creds(g):
    kid, sec = g.aws_pair()
    lines = ['[default]', 'aws_access_key_id = ' + kid, 'aws_secret_access_key = ' + sec]
    if g.chance(0.5):
        lines = ['[sso-dev]', 'sso_session = corp', 'sso_account_id = %s' % g.s(DIG, 12), ''] + lines
    return '.aws/credentials', '\n'.join(lines) + '\n', sec, 'aws-creds', 'static access key pair'


@pos
def p_stripe_sendgrid_env(g):
    sec = g.ch([g.stripe, g.sendgrid, g.mailgun, g.npm, g.slack_bot])()
    name = {'sk_': 'STRIPE_SECRET_KEY', 'SG.': 'SENDGRID_API_KEY', 'key': 'MAILGUN_API_KEY', 'npm': 'NPM_TOKEN', 'xox': 'SLACK_BOT_TOKEN'}[sec[:3]]
    lines = place(g, [], fill_env(g, g.ri(2, 20) if g.chance(0.9) else 150), ['%s=%s' % (name, q(g, sec))], [])
    return '%s/%s/.env' % (g.ch(['sites', 'code', 'projects']), g.ch(COMPANIES)), '\n'.join(lines) + '\n', sec, 'env-provider', name


@pos
def p_npmrc(g):
    tok = g.npm()
    lines = ['registry=https://registry.npmjs.org/', '//registry.npmjs.org/:_authToken=' + tok]
    if g.chance(0.5):
        lines.append('save-exact=true')
    return '.npmrc', '\n'.join(lines) + '\n', tok, 'npmrc', 'npm token'


# ================================================================ NEGATIVES
PLACEHOLDERS = ['changeme', '<your-token>', '${SECRET}', 'xxxxxxxx', 'your_api_key_here', 'REPLACE_ME', '****', '',
                '<password>', 'CHANGE_ME', 'TODO', '<insert key here>', 'YOUR_TOKEN_HERE', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
                '********', 'placeholder', '<redacted>', '[REDACTED]', '...', 'your-secret-here', 'None', 'null']


def ph(g):
    return g.ch(PLACEHOLDERS)


def ref(g, name):
    return g.ch(['${%s}' % name, '$%s' % name, '{{ %s }}' % name.lower(), '%%(%s)s' % name, '${env:%s}' % name,
                 '${{ secrets.%s }}' % name])


@neg
def n_env_example(g):
    keys = g.r.sample(['OPENAI_API_KEY', 'HF_TOKEN', 'WANDB_API_KEY', 'DB_PASSWORD', 'STRIPE_SECRET_KEY', 'GITHUB_TOKEN',
                       'DISCORD_TOKEN', 'SENDGRID_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'DATABRICKS_TOKEN', 'MATCH_PASSWORD',
                       'SNOWFLAKE_PASSWORD', 'TWITCH_CLIENT_SECRET', 'BINANCE_API_SECRET'], g.ri(2, 6))
    lines = ['# Copy this file to .env and fill in your own values', ''] + fill_env(g, g.ri(1, 6))
    for k in keys:
        lines.append('%s=%s' % (k, ph(g)))
    return '%s/%s/%s' % (g.ch(['projects', 'code', 'sites']), g.ch(COMPANIES + PROJECTS), g.ch(['.env.example', '.env.sample', '.env.template', 'example.env'])), \
        '\n'.join(lines) + '\n', 'env-example', 'placeholders only'


@neg
def n_compose_refs(g):
    lines = ['services:', '  db:', '    image: postgres:16', '    environment:', '      POSTGRES_USER: app',
             '      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}', '  app:', '    build: .', '    environment:',
             '      DATABASE_URL: postgres://app:${POSTGRES_PASSWORD}@db:5432/app', '      SECRET_KEY_FILE: /run/secrets/django_key',
             '    secrets:', '      - django_key', 'secrets:', '  django_key:', '    file: ./secrets/django_key.txt']
    return 'code/%s/docker-compose.yml' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'compose-refs', 'env interpolation and docker secrets'


@neg
def n_py_environ(g):
    lines = ['import os', 'from openai import OpenAI', '', 'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
             'HF_TOKEN = os.getenv("HF_TOKEN")', 'db_password = os.environ.get("DB_PASSWORD", "")',
             'token = keyring.get_password("%s", "token")' % g.ch(PROJECTS), 'password = getpass.getpass("DB password: ")'] + fill_py(g, g.ri(3, 20))
    return 'projects/%s/src/config.py' % g.ch(PROJECTS), '\n'.join(lines) + '\n', 'py-environ', 'secrets read from env/keyring/getpass'


@neg
def n_ansible_refs(g):
    lines = ['---', 'ansible_user: deploy', 'ansible_become_password: "{{ vault_become_password }}"',
             'mysql_root_password: "{{ vault_mysql_root_password }}"', "api_token: \"{{ lookup('env', 'API_TOKEN') }}\"",
             "db_pass: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=secret/data/db:password') }}\""]
    return 'infra/ansible/group_vars/all/vars.yml', '\n'.join(lines) + '\n', 'ansible-refs', 'vault variable references'


@neg
def n_ansible_vault(g):
    inner = g.hex(64) + '\n' + g.hex(64) + '\n' + g.hex(32 * g.ri(4, 20))
    blob = inner.encode().hex()
    lines = ['$ANSIBLE_VAULT;1.1;AES256'] + wrap(blob, 80)
    return 'infra/ansible/group_vars/all/vault.yml', '\n'.join(lines) + '\n', 'ansible-vault', 'encrypted vault file'


@neg
def n_ansible_vault_inline(g):
    lines = ['---', 'db_user: app', 'db_password: !vault |', '          $ANSIBLE_VAULT;1.1;AES256'] + \
        ['          ' + l for l in wrap((g.hex(64) + '\n' + g.hex(64) + '\n' + g.hex(32 * g.ri(1, 4))).encode().hex(), 80)] + ['db_port: 5432']
    return 'infra/ansible/host_vars/db1.yml', '\n'.join(lines) + '\n', 'ansible-vault', 'inline !vault value'


@neg
def n_helm_existing(g):
    lines = ['postgresql:', '  auth:', '    existingSecret: %s-db' % g.ch(['api', 'app']), '    secretKeys:',
             '      adminPasswordKey: postgres-password', '      userPasswordKey: password', 'redis:', '  auth:', '    enabled: true',
             '    existingSecret: redis-auth', '    existingSecretPasswordKey: redis-password', 'ingress:', '  enabled: true',
             '  hosts:', '    - host: api.%s' % g.domain()] + fill_yaml(g, g.ri(0, 10))
    return 'infra/helm/api/values.yaml', '\n'.join(lines) + '\n', 'helm-existing', 'existingSecret references'


@neg
def n_helm_default(g):
    lines = ['## @param auth.password Password for the custom user to create', '## Ignored if existingSecret is set', 'auth:',
             '  enablePostgresUser: true', '  postgresPassword: ""', '  username: ""', '  password: ""', '  database: ""',
             '  existingSecret: ""']
    return 'infra/helm/charts/postgresql/values.yaml', '\n'.join(lines) + '\n', 'helm-empty', 'chart defaults, empty'


@neg
def n_prom_file(g):
    lines = ['scrape_configs:', '  - job_name: remote', '    basic_auth:', '      username: prometheus',
             '      password_file: /etc/prometheus/secrets/remote_pw', '    authorization:', '      credentials_file: /run/secrets/bearer',
             '    static_configs:', "      - targets: ['%s']" % g.host()]
    return 'infra/monitoring/prometheus.yml', '\n'.join(lines) + '\n', 'prometheus-file', 'password_file / credentials_file'


@neg
def n_grafana_env(g):
    lines = ['[security]', 'admin_user = admin', 'admin_password = $__env{GF_ADMIN_PASSWORD}', 'secret_key = $__file{/etc/grafana/secret_key}',
             '', '[database]', 'type = postgres', 'password = $__vault{database:secret/data/grafana:password}', '', '[smtp]', 'enabled = false',
             ';password =']
    return 'infra/monitoring/grafana.ini', '\n'.join(lines) + '\n', 'grafana-env', '$__env/$__file/$__vault refs'


@neg
def n_grafana_sample(g):
    lines = ['#################################### Security ####################################', '[security]',
             '# disable creation of admin user on first start of grafana', ';disable_initial_admin_creation = false', '',
             '# default admin user, created on startup', ';admin_user = admin', '',
             '# default admin password, can be changed before first start of grafana,  or in profile settings', ';admin_password = admin',
             '', '# used for signing', ';secret_key = SW2YcwTIb9zpOOhoPsMm']
    return 'infra/monitoring/grafana/sample.ini', '\n'.join(lines) + '\n', 'grafana-sample', 'shipped commented defaults (sample.ini)'


@neg
def n_alertmanager_file(g):
    t = am_wrap(g, ['    slack_configs:', '      - api_url_file: /etc/alertmanager/slack_url', "        channel: '#alerts'",
                    '    pagerduty_configs:', '      - routing_key_file: /etc/alertmanager/pd_key',
                    '    opsgenie_configs:', '      - api_key_file: /etc/alertmanager/opsgenie_key'])
    return 'infra/monitoring/alertmanager.yml', t, 'alertmanager-file', '*_file references'


@neg
def n_alertmanager_tmpl(g):
    t = am_wrap(g, ['    slack_configs:', "      - api_url: '<slack_webhook_url>'", "        channel: '#alerts'",
                    '    pagerduty_configs:', '      - routing_key: <pagerduty_integration_key>'])
    return 'infra/monitoring/alertmanager.example.yml', t, 'alertmanager-placeholder', 'placeholder receivers'


@neg
def n_tfvars_plain(g):
    lines = fill_hcl(g, g.ri(5, 25)) + ['vpc_id = "vpc-%s"' % g.hex(17), 'ami_id = "ami-%s"' % g.hex(17),
                                         'kms_key_arn = "arn:aws:kms:eu-central-1:%s:key/%s"' % (g.s(DIG, 12), g.uuid())]
    return 'infra/prod/terraform.tfvars', '\n'.join(lines) + '\n', 'tfvars-nosecret', 'ids and arns only'


@neg
def n_tf_variables(g):
    lines = ['variable "db_password" {', '  description = "Master password for RDS"', '  type        = string', '  sensitive   = true', '}', '',
             'variable "pagerduty_token" {', '  type      = string', '  sensitive = true', '}', '',
             'resource "aws_db_instance" "main" {', '  username = "app"', '  password = var.db_password', '}', '',
             'data "aws_secretsmanager_secret_version" "grafana" {', '  secret_id = "prod/grafana/admin"', '}']
    return 'infra/modules/db/main.tf', '\n'.join(lines) + '\n', 'tf-vars-decl', 'sensitive vars without values'


@neg
def n_tfstate_clean(g):
    st = {'version': 4, 'terraform_version': '1.%d.%d' % (g.ri(5, 9), g.ri(0, 5)), 'serial': g.ri(1, 300), 'lineage': g.uuid(),
          'outputs': {'vpc_id': {'value': 'vpc-' + g.hex(17), 'type': 'string'}},
          'resources': [{'mode': 'managed', 'type': 'aws_instance', 'name': 'web', 'instances': [{'schema_version': 1, 'attributes': {
              'ami': 'ami-' + g.hex(17), 'id': 'i-' + g.hex(17), 'instance_type': 't3.small', 'private_ip': g.ip(),
              'arn': 'arn:aws:ec2:eu-central-1:%s:instance/i-%s' % (g.s(DIG, 12), g.hex(17)), 'password_data': '',
              'get_password_data': False, 'key_name': 'deploy'}}]}]}
    return 'infra/web/terraform.tfstate', json.dumps(st, indent=2) + '\n', 'tfstate-clean', 'state with ids only'


@neg
def n_cisco_sanitized(g):
    sl = ['enable secret <removed>', 'username admin privilege 15 secret <removed>', 'snmp-server community <removed> RO',
          'tacacs server TAC1', ' address ipv4 %s' % g.ip(), ' key <removed>', 'service password-encryption']
    lines = cisco_wrap(g, sl)
    return 'tickets/TAC-%d/show-run-sanitized.txt' % g.ri(600000000, 699999999), '\n'.join(lines) + '\n', 'cisco-sanitized', 'secrets replaced by <removed>'


@neg
def n_cisco_nosecrets(g):
    lines = cisco_wrap(g, ['aaa new-model', 'aaa authentication login default group tacacs+ local', 'ip ssh version 2',
                           'crypto key generate rsa modulus 2048', 'login block-for 120 attempts 3 within 60'])
    return 'configs/templates/%s-base.cfg' % g.ch(['access', 'core']), '\n'.join(lines) + '\n', 'cisco-template', 'no credential lines'


@neg
def n_junos_nosecret(g):
    lines = fill_junos(g, g.ri(10, 40)) + ['set system login user %s class super-user authentication ssh-ed25519 "%s"' % (
        g.ch(['netops', 'admin']), g.ssh_pub_ed25519('netops@jumphost'))]
    return 'net/juniper/%s.set' % g.ch(['edge1', 'lab-srx']), '\n'.join(lines) + '\n', 'junos-pubkey', 'ssh public key auth'


@neg
def n_mikrotik_export(g):
    head = ['# %s by RouterOS 7.%d' % (g.date().isoformat(), g.ri(8, 15)), '# software id = %s-%s' % (g.s(UP + DIG, 4), g.s(UP + DIG, 4))]
    body = fill_mikrotik(g, g.ri(10, 50)) + ['/interface wireless security-profiles set [ find default=yes ] supplicant-identity=MikroTik',
                                             '/interface wireless security-profiles add authentication-types=wpa2-psk mode=dynamic-keys name=home']
    return 'net/mikrotik/home-export.rsc', '\n'.join(head + body) + '\n', 'mikrotik-export', 'plain export (no show-sensitive)'


@neg
def n_radius_env(g):
    t = 'client switches {\n\tipaddr = %s/24\n\tsecret = $ENV{RADIUS_SECRET}\n\tshortname = switches\n}\n' % g.ip()
    return 'lab/freeradius/clients.conf', t, 'radius-env', '$ENV reference'


@neg
def n_wg_pub(g):
    lines = ['[Interface]', 'Address = 10.%d.0.1/24' % g.ri(0, 200), 'ListenPort = 51820',
             'PostUp = wg set %i private-key /etc/wireguard/private.key', '']
    for _ in range(g.ri(1, 4)):
        lines += ['[Peer]', '# %s' % g.ch(['phone', 'laptop', 'nas', 'cabin']), 'PublicKey = ' + g.wg_pub(),
                  'AllowedIPs = 10.%d.0.%d/32' % (g.ri(0, 200), g.ri(2, 250)), '']
    return 'vpn/wg0-server.conf', '\n'.join(lines), 'wireguard-pub', 'peers public keys, private key from file'


@neg
def n_wg_template(g):
    lines = ['[Interface]', 'PrivateKey = <client-private-key>', 'Address = 10.8.0.2/32', '', '[Peer]',
             'PublicKey = ' + g.wg_pub(), 'Endpoint = vpn.%s:51820' % g.domain(), 'AllowedIPs = 0.0.0.0/0']
    return 'vpn/templates/client.conf.tmpl', '\n'.join(lines) + '\n', 'wireguard-tmpl', 'template with placeholder privkey'


@neg
def n_ovpn_ca_only(g):
    ca = g.cert_pem('%s VPN CA' % g.ch(COMPANIES)).strip().split('\n')
    lines = ['client', 'dev tun', 'proto udp', 'remote vpn.%s 1194' % g.domain(), 'auth-user-pass', 'remote-cert-tls server',
             '<ca>'] + ca + ['</ca>']
    return 'vpn/%s.ovpn' % g.ch(['office', 'uni']), '\n'.join(lines) + '\n', 'openvpn-ca', 'CA cert only, asks for creds'


@neg
def n_ipsec_conf(g):
    lines = ['config setup', '    charondebug="ike 1, knl 1, cfg 0"', '', 'conn site-b', '    left=%%defaultroute', '    leftid=@%s' % g.domain(),
             '    leftcert=gw-cert.pem', '    right=%s' % g.ip(False), '    rightid=@b.%s' % g.domain(), '    authby=pubkey', '    auto=start']
    return 'lab/ipsec/ipsec.conf', '\n'.join(lines) + '\n', 'ipsec-conf', 'cert-based, no PSK'


@neg
def n_obs_empty(g):
    d = {'settings': {'bwtest': False, 'key': '', 'server': 'auto', 'service': 'Twitch'}, 'type': 'rtmp_common'}
    return '.config/obs-studio/basic/profiles/Untitled/service.json', json.dumps(d), 'obs-empty', 'empty stream key'


@neg
def n_obs_scenes(g):
    scenes = []
    for i in range(g.ri(2, 6)):
        scenes.append({'name': g.ch(['Starting Soon', 'Gameplay', 'BRB', 'Just Chatting', 'Ending']) + ' %d' % i, 'uuid': g.uuid(),
                       'id': 'scene', 'settings': {'id_counter': g.ri(1, 20), 'items': []}})
    d = {'current_scene': scenes[0]['name'], 'name': 'Untitled', 'sources': scenes, 'modules': {'auto-scene-switcher': {'active': False}}}
    return '.config/obs-studio/basic/scenes/Untitled.json', json.dumps(d, indent=4), 'obs-scenes', 'scene collection with uuids'


@neg
def n_discord_env_ref(g):
    lines = ['import os', 'import discord', '', 'client = discord.Client(intents=discord.Intents.default())', '',
             "client.run(os.environ['DISCORD_TOKEN'])"]
    return 'code/modbot/bot.py', '\n'.join(lines) + '\n', 'discord-ref', 'token from env'


@neg
def n_discord_ids(g):
    d = {'guildId': g.snowflake_id(), 'channels': {'log': g.snowflake_id(), 'welcome': g.snowflake_id()},
         'roles': {'mod': g.snowflake_id(), 'vip': g.snowflake_id()}, 'clientId': g.snowflake_id(), 'token': 'YOUR_BOT_TOKEN'}
    return 'code/modbot/config.example.json', json.dumps(d, indent=2) + '\n', 'discord-ids', 'snowflake ids, placeholder token'


@neg
def n_twitch_readme(g):
    lines = ['# Chat bot', '', '1. Get an OAuth token from https://twitchapps.com/tmi/', '2. Put it in `config.json`:', '', '```json',
             '{', '  "username": "mybot",', '  "oauth": "oauth:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"', '}', '```', '',
             'The token looks like `oauth:` followed by 30 characters. Never commit it.']
    return 'streaming/chatbot/README.md', '\n'.join(lines) + '\n', 'twitch-doc', 'docs with x-ed token'


@neg
def n_mc_props_empty(g):
    props = ['#Minecraft server properties', 'enable-rcon=false', 'rcon.password=', 'rcon.port=25575', 'level-seed=%d' % g.ri(-2**62, 2**62),
             'server-port=25565', 'motd=A Minecraft Server', 'resource-pack-sha1=%s' % g.sha(), 'max-players=20']
    return 'gameserver/mc/server.properties', '\n'.join(props) + '\n', 'mc-props', 'rcon disabled, level-seed and pack sha1'


@neg
def n_steam_ids(g):
    lines = ['"AppState"', '{', '\t"appid"\t\t"%d"' % g.ri(10000, 2500000), '\t"Universe"\t\t"1"', '\t"name"\t\t"%s"' % g.ch(['Skyrim Special Edition', 'Stardew Valley', 'Factorio']),
             '\t"StateFlags"\t\t"4"', '\t"LastOwner"\t\t"7656119%s"' % g.s(DIG, 10), '\t"buildid"\t\t"%d"' % g.ri(1000000, 19999999),
             '\t"manifest"\t\t"%d"' % g.ri(10**17, 10**19), '}']
    return '.steam/steam/steamapps/appmanifest_%d.acf' % g.ri(10000, 2500000), '\n'.join(lines) + '\n', 'steam-manifest', 'steam ids'


@neg
def n_crypto_public(g):
    lines = ['# watch-only', 'btc: %s' % g.btc_addr(), 'xpub: %s' % g.xpub(), 'eth: %s' % g.eth_addr(), '',
             'last tx: 0x%s' % g.hex(64), 'block: 0x%s' % g.hex(64)]
    return 'Documents/crypto/watchonly.txt', '\n'.join(lines) + '\n', 'crypto-public', 'addresses, xpub, tx hashes'


@neg
def n_ccxt_env(g):
    lines = ['import os, ccxt', '', 'exchange = ccxt.binance({', "    'apiKey': os.environ['BINANCE_KEY'],", "    'secret': os.environ['BINANCE_SECRET'],", '})']
    return 'trading/bot.py', '\n'.join(lines) + '\n', 'ccxt-env', 'keys from env'


@neg
def n_eth_abi(g):
    d = {'contractName': 'Token', 'abi': [{'inputs': [{'internalType': 'address', 'name': 'to', 'type': 'address'}], 'name': 'mint',
                                           'outputs': [], 'stateMutability': 'nonpayable', 'type': 'function'}],
         'bytecode': '0x' + g.hex(g.ri(400, 1200)), 'deployedBytecode': '0x' + g.hex(g.ri(300, 900)),
         'networks': {'11155111': {'address': g.eth_addr(), 'transactionHash': '0x' + g.hex(64)}}}
    return 'code/token/build/contracts/Token.json', json.dumps(d, indent=2) + '\n', 'eth-artifact', 'bytecode, address, tx hash'


@neg
def n_hardhat_env(g):
    lines = ['require("dotenv").config();', 'module.exports = {', '  networks: {', '    sepolia: {', '      url: process.env.SEPOLIA_RPC_URL,',
             '      accounts: process.env.PRIVATE_KEY ? [process.env.PRIVATE_KEY] : [],', '    },', '  },', '};']
    return 'code/nft-drop/hardhat.config.js', '\n'.join(lines) + '\n', 'hardhat-env', 'private key from env'


@neg
def n_hardhat_default(g):
    # Hardhat's publicly documented, well-known default test account #0 (never holds value)
    lines = ['// Hardhat local network default account #0 (publicly known, DO NOT use on mainnet)',
             '// Account #0: 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (10000 ETH)',
             '// Private Key: 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', "const LOCAL_RPC = 'http://127.0.0.1:8545';"]
    return 'code/token/test/fixtures/accounts.js', '\n'.join(lines) + '\n', 'hardhat-default', 'well-known public test key from docs'


@neg
def n_filezilla_ask(g):
    t = ('<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.66.1" platform="windows">\n\t<Servers>\n\t\t<Server>\n'
         '\t\t\t<Host>%s</Host>\n\t\t\t<Port>22</Port>\n\t\t\t<Protocol>1</Protocol>\n\t\t\t<Type>0</Type>\n\t\t\t<User>%s</User>\n'
         '\t\t\t<Logontype>3</Logontype>\n\t\t\t<Name>%s</Name>\n\t\t</Server>\n\t</Servers>\n</FileZilla3>\n') % (g.host(), g.user(), g.ch(['client', 'live']))
    return 'AppData/Roaming/FileZilla/sitemanager.xml', t, 'filezilla-ask', 'logontype ask, no Pass'


@neg
def n_filezilla_settings(g):
    t = ('<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.66.1" platform="*nix">\n\t<Settings>\n'
         '\t\t<Setting name="Use Pasv mode">1</Setting>\n\t\t<Setting name="Master password encryptor">%s</Setting>\n'
         '\t\t<Setting name="Language Code">en_US</Setting>\n\t\t<Setting name="Config Location">/home/%s/.config/filezilla</Setting>\n'
         '\t</Settings>\n</FileZilla3>\n') % ('', g.ch(FIRST))
    return '.config/filezilla/filezilla.xml', t, 'filezilla-settings', 'settings file'


@neg
def n_winscp_keyauth(g):
    lines = ['[Sessions\\%s@%s]' % (g.user(), g.host()), 'HostName=%s' % g.host(), 'UserName=deploy',
             'PublicKeyFile=C:%%5CUsers%%5C%s%%5C.ssh%%5Cid_ed25519.ppk' % g.ch(FIRST), 'FSProtocol=2', '', '[Configuration\\Security]', 'UseMasterPassword=1',
             'MasterPasswordVerifier=']
    return 'AppData/Roaming/WinSCP.ini', '\r\n'.join(lines) + '\r\n', 'winscp-key', 'key file auth, no password'


@neg
def n_cyberduck(g):
    t = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
         '<plist version="1.0">\n<dict>\n\t<key>Protocol</key>\n\t<string>sftp</string>\n\t<key>Nickname</key>\n\t<string>%s</string>\n'
         '\t<key>UUID</key>\n\t<string>%s</string>\n\t<key>Hostname</key>\n\t<string>%s</string>\n\t<key>Port</key>\n\t<string>22</string>\n'
         '\t<key>Username</key>\n\t<string>%s</string>\n\t<key>Path</key>\n\t<string>/var/www</string>\n</dict>\n</plist>\n') % (
        g.ch(['client site', 'portfolio']), g.uuid().upper(), g.host(), g.user())
    return 'Library/Group Containers/G69SCX94XU.duck/Library/Application Support/duck/Bookmarks/%s.duck' % g.uuid().upper(), t, 'cyberduck', 'bookmark, password in Keychain'


@neg
def n_sftp_key(g):
    d = {'name': 'Production', 'host': g.host(), 'protocol': 'sftp', 'port': 22, 'username': 'deploy',
         'privateKeyPath': '~/.ssh/id_ed25519', 'passphrase': True, 'remotePath': '/var/www/html', 'uploadOnSave': False}
    return 'sites/%s/.vscode/sftp.json' % g.ch(COMPANIES), json.dumps(d, indent=4) + '\n', 'vscode-sftp-key', 'key path, passphrase prompt'


@neg
def n_wp_sample(g):
    lines = ['<?php', "define( 'DB_NAME', 'database_name_here' );", "define( 'DB_USER', 'username_here' );",
             "define( 'DB_PASSWORD', 'password_here' );", "define( 'DB_HOST', 'localhost' );", ''] + wp_salts_block(g, False) + \
        ['', "$table_prefix = 'wp_';", "define( 'WP_DEBUG', false );"]
    return 'sites/%s/public_html/wp-config-sample.php' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'wp-sample', 'stock wp-config-sample'


@neg
def n_wp_env(g):
    lines = ['<?php', "define( 'DB_PASSWORD', getenv('WORDPRESS_DB_PASSWORD') );", "define( 'AUTH_KEY', getenv('WP_AUTH_KEY') );",
             "define( 'SECURE_AUTH_KEY', $_ENV['WP_SECURE_AUTH_KEY'] ?? '' );", "require_once ABSPATH . 'wp-settings.php';"]
    return 'sites/%s/wp-config.php' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'wp-env', 'getenv everywhere'


@neg
def n_student_input(g):
    lines = ['import getpass', 'import mysql.connector', '', 'pw = getpass.getpass("MySQL password: ")',
             'db = mysql.connector.connect(host="localhost", user="root", password=pw, database="school")',
             '# NOTE: never hard-code the password (lecture 5)'] + fill_py(g, g.ri(2, 20))
    return 'uni/databases/hw4.py', '\n'.join(lines) + '\n', 'homework-getpass', 'password prompted'


@neg
def n_student_lecture(g):
    lines = ['# Lecture 7: SQL injection', '', 'Bad:', '```python', 'cur.execute("SELECT * FROM users WHERE name = \'" + name + "\' AND password = \'" + pw + "\'")',
             '```', '', 'Good:', '```python', 'cur.execute("SELECT * FROM users WHERE name = %s AND password_hash = %s", (name, h))', '```', '',
             'Example login form: user `alice`, password `<your password>`.', '', 'Hashing: use bcrypt / argon2, never store plaintext.']
    return 'uni/security/lecture07.md', '\n'.join(lines) + '\n', 'lecture-notes', 'security lecture notes'


@neg
def n_notebook_env(g):
    cells = [nb_cell(['import os', 'from huggingface_hub import login', 'login(token=os.environ["HF_TOKEN"])'], [nb_stream(['Login successful'])], 1)]
    cells += ds_cells(g, g.ri(2, 6))
    cells.append(nb_cell(['wandb.login()  # uses ~/.netrc'], [nb_stream(['wandb: Currently logged in as: %s' % g.user()])], 9))
    return 'notebooks/%s/train.ipynb' % g.ch(PROJECTS), notebook(g, cells), 'ipynb-env', 'tokens from env, image outputs'


@neg
def n_notebook_ids(g):
    rows = '\n'.join('%d  %s  %s' % (i, g.uuid(), g.hex(32)) for i in range(g.ri(5, 15)))
    cells = [nb_cell(['import hashlib, uuid', 'df["row_id"] = [uuid.uuid4() for _ in range(len(df))]',
                      'df["md5"] = df["text"].map(lambda s: hashlib.md5(s.encode()).hexdigest())', 'df[["row_id", "md5"]].head(15)'],
                     [nb_result('   row_id  md5\n' + rows, 3)], 3)] + ds_cells(g, g.ri(1, 4))
    return 'notebooks/%s/dedupe.ipynb' % g.ch(PROJECTS), notebook(g, cells), 'ipynb-ids', 'uuids and md5 in outputs'


@neg
def n_kaggle_template(g):
    return '.kaggle/kaggle.json.example', json.dumps({'username': 'your-kaggle-username', 'key': 'your-kaggle-api-key'}) + '\n', 'kaggle-example', 'placeholder'


@neg
def n_hf_revision(g):
    lines = ['model:', '  name_or_path: %s' % g.ch(['bert-base-uncased', 'meta-llama/Llama-3.1-8B', 'mistralai/Mistral-7B-v0.1']),
             '  revision: %s' % g.sha(40), 'tokenizer:', '  revision: %s' % g.sha(40), 'dataset:', '  name: imdb',
             '  fingerprint: %s' % g.hex(16), 'training:', '  seed: %d' % g.ri(0, 9999), '  learning_rate: 2.0e-5']
    return 'projects/%s/configs/train.yaml' % g.ch(PROJECTS), '\n'.join(lines) + '\n', 'hf-revision', 'commit sha revisions'


@neg
def n_dvc_files(g):
    lines = ['outs:', '- md5: %s.dir' % g.hex(32), '  size: %d' % g.ri(10**5, 10**10), '  nfiles: %d' % g.ri(1, 5000), '  hash: md5',
             '  path: %s' % g.ch(['data/raw', 'models', 'images'])]
    return 'projects/%s/data.dvc' % g.ch(PROJECTS), '\n'.join(lines) + '\n', 'dvc-file', 'md5 hashes'


@neg
def n_dvc_config(g):
    lines = ['[core]', '    remote = storage', "['remote \"storage\"']", '    url = s3://%s-dvc/store' % g.ch(COMPANIES), '    profile = %s' % g.ch(['default', 'ml'])]
    return 'projects/%s/.dvc/config' % g.ch(PROJECTS), '\n'.join(lines) + '\n', 'dvc-config', 'remote url + aws profile'


@neg
def n_mlflow_meta(g):
    lines = ['artifact_uri: mlflow-artifacts:/%d/%s/artifacts' % (g.ri(1, 40), g.hex(32)), 'end_time: %d' % g.ri(1.6e12, 1.8e12),
             'entry_point_name: ""', 'experiment_id: "%d"' % g.ri(1, 40), 'lifecycle_stage: active', 'run_id: %s' % g.hex(32),
             'run_name: %s' % g.ch(['bold-fox-12', 'shy-owl-3']), 'source_version: %s' % g.sha(40), 'status: 3', 'user_id: %s' % g.user()]
    return 'projects/%s/mlruns/%d/%s/meta.yaml' % (g.ch(PROJECTS), g.ri(1, 40), g.hex(32)), '\n'.join(lines) + '\n', 'mlflow-meta', 'run ids, git sha'


@neg
def n_wandb_meta(g):
    d = {'os': 'Linux-6.5.0-x86_64-with-glibc2.35', 'python': '3.11.7', 'startedAt': '2024-%02d-%02dT10:00:00.000000' % (g.ri(1, 12), g.ri(1, 28)),
         'program': 'train.py', 'git': {'remote': 'https://github.com/%s/%s.git' % (g.user(), g.ch(PROJECTS)), 'commit': g.sha(40)},
         'email': g.email(), 'root': '/home/%s/projects' % g.ch(FIRST), 'host': 'gpu-box', 'username': g.ch(FIRST), 'executable': '/usr/bin/python3',
         'codePathLocal': 'train.py', 'cpu_count': 16, 'gpu': 'NVIDIA GeForce RTX 4090'}
    return 'projects/%s/wandb/run-2024%02d%02d_%06d-%s/files/wandb-metadata.json' % (g.ch(PROJECTS), g.ri(1, 12), g.ri(1, 28), g.ri(0, 235959), g.s(LOW + DIG, 8)), \
        json.dumps(d, indent=4) + '\n', 'wandb-meta', 'run metadata'


@neg
def n_databricks_cli(g):
    lines = ['[DEFAULT]', 'host = https://adb-%s.%d.azuredatabricks.net' % (g.s(DIG, 16), g.ri(1, 19)), 'auth_type = databricks-cli', '',
             '[prod]', 'host = https://dbc-%s-%s.cloud.databricks.com' % (g.hex(8), g.hex(4)), 'auth_type = azure-cli']
    return '.databrickscfg', '\n'.join(lines) + '\n', 'databricks-oauth', 'OAuth/cli auth, no token'


@neg
def n_snowflake_sso(g):
    lines = ['[default]', 'account = "%s-%s"' % (g.s(UP, 7), g.s(UP + DIG, 7)), 'user = "%s"' % g.email(), 'authenticator = "externalbrowser"',
             'warehouse = "COMPUTE_WH"', '', '[svc]', 'account = "ORG-ACCT"', 'user = "ETL_SVC"', 'authenticator = "SNOWFLAKE_JWT"',
             'private_key_file = "~/.snowflake/rsa_key.p8"']
    return '.snowflake/connections.toml', '\n'.join(lines) + '\n', 'snowflake-sso', 'SSO and key-file auth'


@neg
def n_renviron_plain(g):
    lines = ['R_LIBS_USER=~/R/library', 'R_MAX_VSIZE=32Gb', 'RETICULATE_PYTHON=~/.venvs/r/bin/python', 'TZ=Europe/Berlin',
             '# GITHUB_PAT=', '# set via gitcreds::gitcreds_set() instead']
    return '.Renviron', '\n'.join(lines) + '\n', 'renviron-plain', 'no keys'


@neg
def n_condarc(g):
    lines = ['channels:', '  - conda-forge', '  - defaults', 'channel_priority: strict', 'auto_activate_base: false',
             'envs_dirs:', '  - ~/miniforge3/envs', 'ssl_verify: true']
    return '.condarc', '\n'.join(lines) + '\n', 'condarc', 'channels only'


@neg
def n_pip_conf(g):
    lines = ['[global]', 'index-url = https://pypi.org/simple', 'extra-index-url = https://download.pytorch.org/whl/cu121',
             'timeout = 60', '[install]', 'require-hashes = false']
    return '.config/pip/pip.conf', '\n'.join(lines) + '\n', 'pip-conf-clean', 'public indexes'


@neg
def n_gradle_clean(g):
    lines = fill_props(g, g.ri(5, 30)) + ['RELEASE_STORE_PASSWORD=', 'RELEASE_KEY_PASSWORD=']
    return 'AndroidStudioProjects/%s/gradle.properties' % g.ch(APPS), '\n'.join(lines) + '\n', 'gradle-empty', 'empty signing values'


@neg
def n_gradle_env(g):
    lines = ['android {', '    signingConfigs {', '        release {', '            storeFile file(System.getenv("KEYSTORE_PATH") ?: "release.jks")',
             '            storePassword System.getenv("KEYSTORE_PASSWORD")', '            keyAlias System.getenv("KEY_ALIAS")',
             '            keyPassword project.findProperty("RELEASE_KEY_PASSWORD") ?: ""', '        }', '    }', '}']
    return 'AndroidStudioProjects/%s/app/build.gradle' % g.ch(APPS), '\n'.join(lines) + '\n', 'gradle-env', 'env-based signing'


@neg
def n_local_props(g):
    lines = ['## This file must *NOT* be checked into Version Control Systems,', 'sdk.dir=/Users/%s/Library/Android/sdk' % g.ch(FIRST),
             'ndk.dir=/Users/%s/Library/Android/sdk/ndk/26.1.10909125' % g.ch(FIRST), 'flutter.sdk=/Users/%s/flutter' % g.ch(FIRST),
             'flutter.buildMode=release', 'flutter.versionCode=%d' % g.ri(1, 200)]
    return 'AndroidStudioProjects/%s/local.properties' % g.ch(APPS), '\n'.join(lines) + '\n', 'local-props', 'sdk paths only'


@neg
def n_appfile(g):
    lines = ['app_identifier("com.%s.%s")' % (g.ch(COMPANIES).replace('-', ''), g.ch(APPS).lower()), 'apple_id("%s")' % g.email(),
             'itc_team_id("%s")' % g.s(DIG, 9), 'team_id("%s")' % g.s(UP + DIG, 10)]
    return 'code/%s/fastlane/Appfile' % g.ch(APPS), '\n'.join(lines) + '\n', 'fastlane-appfile', 'ids, no secrets'


@neg
def n_matchfile_ssh(g):
    lines = ['git_url("git@github.com:%s/certificates.git")' % g.ch(COMPANIES), 'storage_mode("git")', 'type("development")',
             'app_identifier(["com.%s.app"])' % g.ch(COMPANIES).replace('-', ''), '# git_basic_authorization(ENV["MATCH_GIT_BASIC_AUTHORIZATION"])']
    return 'code/%s/fastlane/Matchfile' % g.ch(APPS), '\n'.join(lines) + '\n', 'fastlane-match-ssh', 'ssh url, env ref'


@neg
def n_fastlane_env_default(g):
    lines = ['FASTLANE_USER=%s' % g.email(), 'FASTLANE_PASSWORD=', 'MATCH_PASSWORD=${MATCH_PASSWORD}',
             'FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD=xxxx-xxxx-xxxx-xxxx', 'FASTLANE_SKIP_UPDATE_CHECK=1']
    return 'code/%s/fastlane/.env.default' % g.ch(APPS), '\n'.join(lines) + '\n', 'fastlane-env-ph', 'placeholders'


@neg
def n_eas_json(g):
    d = {'cli': {'version': '>= 7.0.0', 'appVersionSource': 'remote'},
         'build': {'development': {'developmentClient': True, 'distribution': 'internal'}, 'preview': {'distribution': 'internal'},
                   'production': {'autoIncrement': True, 'env': {'SENTRY_AUTH_TOKEN': '@sentry_auth_token'}}},
         'submit': {'production': {'ios': {'ascAppId': g.s(DIG, 10), 'appleTeamId': g.s(UP + DIG, 10), 'ascApiKeyPath': './keys/AuthKey.p8',
                                           'ascApiKeyIssuerId': g.uuid(), 'ascApiKeyId': g.s(UP + DIG, 10)}}}}
    return 'code/%s/eas.json' % g.ch(APPS).lower(), json.dumps(d, indent=2) + '\n', 'eas-json', 'ids, key path, EAS secret ref'


@neg
def n_app_json(g):
    d = {'expo': {'name': g.ch(APPS), 'slug': g.ch(APPS).lower(), 'version': '1.%d.0' % g.ri(0, 9),
                  'extra': {'eas': {'projectId': g.uuid()}}, 'updates': {'url': 'https://u.expo.dev/' + g.uuid()},
                  'ios': {'bundleIdentifier': 'com.%s.app' % g.ch(COMPANIES).replace('-', '')}}}
    return 'code/%s/app.json' % g.ch(APPS).lower(), json.dumps(d, indent=2) + '\n', 'expo-app-json', 'project uuid'


@neg
def n_asc_pubkey(g):
    return 'code/%s/server/apple_public_key.pem' % g.ch(APPS).lower(), g.pubkey_pem(), 'pem-public', 'EC public key'


@neg
def n_podfile_lock(g):
    pods = ['Alamofire', 'Firebase', 'FirebaseCore', 'GoogleUtilities', 'Kingfisher', 'SnapKit', 'lottie-ios', 'Sentry']
    lines = ['PODS:'] + ['  - %s (%d.%d.%d)' % (p, g.ri(1, 11), g.ri(0, 20), g.ri(0, 9)) for p in pods] + ['', 'SPEC CHECKSUMS:'] + \
        ['  %s: %s' % (p, g.sha(40)) for p in pods] + ['', 'PODFILE CHECKSUM: %s' % g.sha(40), '', 'COCOAPODS: 1.15.2']
    return 'code/%s/ios/Podfile.lock' % g.ch(APPS), '\n'.join(lines) + '\n', 'lockfile', 'Podfile.lock checksums'


@neg
def n_package_lock(g):
    pk = {}
    for n in g.r.sample(['lodash', 'react', 'axios', 'chalk', 'debug', 'ms', 'semver', 'zod', 'dayjs', 'uuid', 'tslib', 'ws'], 6):
        pk['node_modules/' + n] = {'version': '%d.%d.%d' % (g.ri(0, 9), g.ri(0, 20), g.ri(0, 9)),
                                   'resolved': 'https://registry.npmjs.org/%s/-/%s-1.0.0.tgz' % (n, n),
                                   'integrity': 'sha512-' + base64.b64encode(g.rb(64)).decode()}
    d = {'name': g.ch(COMPANIES), 'version': '1.0.0', 'lockfileVersion': 3, 'requires': True, 'packages': pk}
    return 'sites/%s/package-lock.json' % g.ch(COMPANIES), json.dumps(d, indent=2) + '\n', 'lockfile', 'npm integrity hashes'


@neg
def n_poetry_lock(g):
    out = []
    for n in g.r.sample(['numpy', 'pandas', 'requests', 'scipy', 'tqdm', 'pyyaml', 'rich', 'click'], 4):
        out += ['[[package]]', 'name = "%s"' % n, 'version = "%d.%d.%d"' % (g.ri(0, 3), g.ri(0, 30), g.ri(0, 9)), 'files = [']
        for _ in range(g.ri(1, 3)):
            out.append('    {file = "%s-1.0-py3-none-any.whl", hash = "sha256:%s"},' % (n, g.hex(64)))
        out += [']', '']
    out += ['[metadata]', 'lock-version = "2.0"', 'content-hash = "%s"' % g.hex(64)]
    return 'projects/%s/poetry.lock' % g.ch(PROJECTS), '\n'.join(out) + '\n', 'lockfile', 'poetry sha256 hashes'


@neg
def n_sha256sums(g):
    lines = ['%s  %s' % (g.hex(64), f) for f in ['ubuntu-24.04-live-server-amd64.iso', 'routeros-7.15-arm64.npk', 'obs-studio-30.2.dmg',
                                                 'model.safetensors', 'dataset.tar.gz'][:g.ri(2, 5)]]
    return g.ch(['Downloads/SHA256SUMS', 'projects/models/checksums.sha256']), '\n'.join(lines) + '\n', 'checksums', 'sha256 sums'


@neg
def n_packed_refs(g):
    lines = ['# pack-refs with: peeled fully-peeled sorted'] + ['%s refs/%s' % (g.sha(40), r) for r in
                                                              ['heads/main', 'remotes/origin/main', 'remotes/origin/dev', 'tags/v1.0.0', 'tags/v1.1.0']]
    return 'code/%s/.git/packed-refs' % g.ch(APPS + COMPANIES), '\n'.join(lines) + '\n', 'git-refs', 'commit SHAs'


@neg
def n_changelog(g):
    lines = ['# Changelog', '']
    for i in range(g.ri(3, 10)):
        lines.append('- %s (%s)' % (g.ch(['fix token refresh race', 'rotate password hashing to argon2', 'add secret scanning to CI',
                                         'bump deps', 'remove hard-coded key from example']), g.sha(7 if g.chance(0.5) else 40)))
    return 'code/%s/CHANGELOG.md' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'changelog', 'commit shas, secret-ish words'


@neg
def n_certs(g):
    pem = g.cert_pem(g.ch(['ISRG Root X1 (copy)', 'Homelab Root CA', 'corp-proxy-ca']))
    return g.ch(['certs/homelab-ca.crt', '.local/share/ca-certificates/corp.pem', 'vpn/ca.crt']), pem, 'certificate', 'CA certificate'


@neg
def n_authorized_keys(g):
    lines = [g.ssh_pub_ed25519('%s@%s' % (g.ch(FIRST), g.ch(['laptop', 'jump', 'ci']))) for _ in range(g.ri(1, 4))]
    return g.ch(['.ssh/authorized_keys', '.ssh/id_ed25519.pub']), '\n'.join(lines) + '\n', 'ssh-public', 'public keys'


@neg
def n_known_hosts(g):
    lines = []
    for _ in range(g.ri(2, 6)):
        salt = base64.b64encode(g.rb(20)).decode(); hh = base64.b64encode(g.rb(20)).decode()
        lines.append('|1|%s|%s %s' % (salt, hh, g.ssh_pub_ed25519('').strip()))
    return '.ssh/known_hosts', '\n'.join(lines) + '\n', 'known-hosts', 'hashed known_hosts'


@neg
def n_uuid_ids(g):
    lines = ['Microsoft Visual Studio Solution File, Format Version 12.00', '# Visual Studio Version 17']
    for n in ['Game', 'Game.Mods', 'Game.Tests']:
        lines += ['Project("{%s}") = "%s", "%s\\%s.csproj", "{%s}"' % ('FAE04EC0-301F-11D3-BF4B-00C04F79EFBC', n, n, n, g.uuid().upper()), 'EndProject']
    lines += ['Global', '\tGlobalSection(ExtensibilityGlobals) = postSolution', '\t\tSolutionGuid = {%s}' % g.uuid().upper(), '\tEndGlobalSection', 'EndGlobal']
    return 'code/ModLoader/ModLoader.sln', '\r\n'.join(lines) + '\r\n', 'uuid-ids', 'solution GUIDs'


@neg
def n_grafana_dashboard(g):
    d = {'uid': g.s(ALNUM, 9), 'title': 'Node Exporter', 'version': g.ri(1, 40), 'panels': [
        {'id': i, 'type': 'timeseries', 'datasource': {'type': 'prometheus', 'uid': g.s(ALNUM, 9)}, 'title': t}
        for i, t in enumerate(['CPU', 'Memory', 'Disk', 'Net'])], '__inputs': [{'name': 'DS_PROMETHEUS', 'type': 'datasource'}]}
    return 'infra/monitoring/dashboards/node.json', json.dumps(d, indent=2) + '\n', 'grafana-dashboard', 'uids'


@neg
def n_minified_js(g):
    parts = []
    for _ in range(g.ri(20, 60)):
        a, b = g.s(LOW, 1), g.s(LOW, 2)
        parts.append('function %s(%s){return %s.%s(%d)}' % (g.s(LOW, 2), a, a, g.ch(['map', 'slice', 'charCodeAt', 'toString']), g.ri(0, 64)))
        parts.append('var %s="%s"' % (b, g.ch(['click', 'hidden', 'data-id', 'aria-label', 'transform'])))
    t = '/*! %s v%d.%d.%d | MIT */\n' % (g.ch(['tiny-slider', 'lightbox', 'swiper-lite']), g.ri(1, 9), g.ri(0, 9), g.ri(0, 9)) + ';'.join(parts) + ';\n'
    t += '//# sourceMappingURL=bundle.min.js.map\n'
    return 'sites/%s/assets/js/bundle.min.js' % g.ch(COMPANIES), t, 'minified-js', 'minified library'


@neg
def n_css_font(g):
    b = base64.b64encode(b'wOF2' + g.rb(g.ri(1500, 4000))).decode()
    t = '@font-face{font-family:"Inter";src:url(data:font/woff2;base64,%s) format("woff2");font-weight:400}\nbody{font-family:Inter,sans-serif}\n' % b
    return 'sites/%s/assets/css/fonts.css' % g.ch(COMPANIES), t, 'base64-font', 'inline woff2'


@neg
def n_svg_img(g):
    b = base64.b64encode(b'\x89PNG\r\n\x1a\n' + g.rb(g.ri(800, 2000))).decode()
    t = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">\n  <image width="64" height="64" xlink:href="data:image/png;base64,%s"/>\n</svg>\n' % b
    return 'sites/%s/assets/img/logo.svg' % g.ch(COMPANIES), t, 'base64-image', 'embedded png'


@neg
def n_aws_doc_example(g):
    lines = ['# moto / localstack fixtures - these are the AWS documentation example values, not real keys',
             'FAKE_AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"', 'FAKE_AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
             '', 'def test_upload(s3):', '    s3.create_bucket(Bucket="test")']
    return 'code/%s/tests/conftest.py' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'doc-example-aws', 'AWS docs example keys in test fixture'


@neg
def n_jwt_doc(g):
    lines = ['## Authentication', '', 'Send the token as a bearer header:', '', '```', 'curl -H "Authorization: Bearer <TOKEN>" https://api.%s/v1/me' % g.domain(), '```', '',
             'A decoded example (from jwt.io):', '', '```',
             'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
             '```']
    return 'code/%s/docs/auth.md' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'doc-example-jwt', 'jwt.io canonical example'


@neg
def n_fake_fixture(g):
    lines = ['# test fixtures for the redaction filter: obviously fake values', 'FAKE_TOKENS = [', '    "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",',
             '    "xoxb-000000000000-0000000000000-XXXXXXXXXXXXXXXXXXXXXXXX",', '    "sk_live_XXXXXXXXXXXXXXXXXXXXXXXX",',
             '    "dummy-password",', '    "example-api-key",', ']']
    return 'code/%s/tests/test_redact.py' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'fake-fixture', 'X-ed out token shapes'


@neg
def n_postfix_main(g):
    lines = ['relayhost = [smtp.%s]:587' % g.domain(), 'smtp_sasl_auth_enable = yes', 'smtp_sasl_password_maps = hash:/etc/postfix/sasl_passwd',
             'smtp_sasl_security_options = noanonymous', 'smtp_tls_security_level = encrypt', 'smtp_tls_CAfile = /etc/ssl/certs/ca-certificates.crt']
    return 'infra/relay/main.cf', '\n'.join(lines) + '\n', 'postfix-main', 'password map reference'


@neg
def n_msmtp_eval(g):
    lines = ['defaults', 'auth on', 'tls on', 'account work', 'host smtp.%s' % g.domain(), 'port 587', 'user %s' % g.email(),
             'passwordeval "pass show email/work | head -n1"', 'account default : work']
    return '.msmtprc', '\n'.join(lines) + '\n', 'msmtp-eval', 'passwordeval from pass'


@neg
def n_vault_agent(g):
    lines = ['auto_auth {', '  method "approle" {', '    config = {', '      role_id_file_path   = "/etc/vault/role_id"',
             '      secret_id_file_path = "/etc/vault/secret_id"', '    }', '  }', '  sink "file" {', '    config = {', '      path = "/home/%s/.vault-token"' % g.ch(FIRST),
             '    }', '  }', '}', 'vault {', '  address = "https://vault.%s:8200"' % g.domain(), '}']
    return 'infra/vault/agent.hcl', '\n'.join(lines) + '\n', 'vault-agent', 'file path references'


@neg
def n_k8s_secret_ref(g):
    lines = ['apiVersion: apps/v1', 'kind: Deployment', 'metadata:', '  name: api', 'spec:', '  template:', '    spec:', '      containers:',
             '        - name: api', '          image: ghcr.io/%s/api:%s' % (g.ch(COMPANIES), g.sha(7)), '          env:', '            - name: DB_PASSWORD',
             '              valueFrom:', '                secretKeyRef:', '                  name: api-db', '                  key: password',
             '            - name: PAGERDUTY_KEY', '              valueFrom:', '                secretKeyRef: {name: pd, key: routing_key}']
    return 'infra/k8s/api/deployment.yaml', '\n'.join(lines) + '\n', 'k8s-secretref', 'secretKeyRef'


@neg
def n_sealed_secret(g):
    lines = ['apiVersion: bitnami.com/v1alpha1', 'kind: SealedSecret', 'metadata:', '  name: api-db', '  namespace: prod', 'spec:',
             '  encryptedData:', '    password: Ag' + base64.b64encode(g.rb(g.ri(300, 500))).decode(), '  template:', '    metadata:', '      name: api-db']
    return 'infra/k8s/api/sealed-db.yaml', '\n'.join(lines) + '\n', 'sealed-secret', 'asymmetrically encrypted (safe to commit)'


@neg
def n_sops(g):
    lines = ['db_password: ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (base64.b64encode(g.rb(18)).decode(), base64.b64encode(g.rb(32)).decode(), base64.b64encode(g.rb(16)).decode()),
             'sops:', '    age:', '        - recipient: age1%s' % g.s('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58),
             '          enc: |', '            -----BEGIN AGE ENCRYPTED FILE-----'] + ['            ' + l for l in wrap(base64.b64encode(g.rb(180)).decode(), 64)] + \
        ['            -----END AGE ENCRYPTED FILE-----', '    lastmodified: "2024-%02d-%02dT10:00:00Z"' % (g.ri(1, 12), g.ri(1, 28)),
         '    mac: ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (base64.b64encode(g.rb(32)).decode(), base64.b64encode(g.rb(32)).decode(), base64.b64encode(g.rb(16)).decode()),
         '    version: 3.8.1']
    return 'infra/secrets/prod.enc.yaml', '\n'.join(lines) + '\n', 'sops', 'sops-encrypted values'


@neg
def n_gh_actions(g):
    lines = ['name: deploy', 'on: [push]', 'jobs:', '  deploy:', '    runs-on: ubuntu-latest', '    steps:', '      - uses: actions/checkout@%s' % g.sha(40),
             '      - run: ./deploy.sh', '        env:', '          VAULT_TOKEN: ${{ secrets.VAULT_TOKEN }}', '          SSH_KEY: ${{ secrets.DEPLOY_KEY }}',
             '          FTP_PASSWORD: ${{ secrets.FTP_PASSWORD }}']
    return 'code/%s/.github/workflows/deploy.yml' % g.ch(COMPANIES), '\n'.join(lines) + '\n', 'gha-secrets', 'secrets context refs, pinned action SHA'


@neg
def n_shell_rc(g):
    lines = fill_sh(g, g.ri(10, 60)) + ['export OPENAI_API_KEY="$(pass show api/openai)"', 'export GITHUB_TOKEN=$(gh auth token)',
                                         'export VAULT_ADDR=https://vault.%s:8200' % g.domain(), '[ -f ~/.secrets ] && source ~/.secrets']
    return g.ch(['.zshrc', '.bashrc']), '\n'.join(lines) + '\n', 'shellrc-refs', 'command substitution from pass/gh'


@neg
def n_docker_credstore(g):
    d = {'auths': {'https://index.docker.io/v1/': {}, 'ghcr.io': {}}, 'credsStore': g.ch(['desktop', 'osxkeychain', 'pass'])}
    return '.docker/config.json', json.dumps(d, indent='\t') + '\n', 'docker-credstore', 'creds in helper'


@neg
def n_gh_hosts_keyring(g):
    lines = ['github.com:', '    git_protocol: ssh', '    users:', '        %s:' % g.user(), '    user: %s' % g.user()]
    return '.config/gh/hosts.yml', '\n'.join(lines) + '\n', 'gh-keyring', 'token in keyring'


@neg
def n_netrc_anon(g):
    lines = ['machine ftp.ncbi.nlm.nih.gov', '  login anonymous', 'machine api.%s' % g.domain(), '  login %s' % g.user(), '  password ${NETRC_PASSWORD}']
    return '.netrc.template', '\n'.join(lines) + '\n', 'netrc-template', 'anonymous and env placeholder'


@neg
def n_exchange_doc(g):
    lines = ['# Binance API quickstart', '', '```python', "client = Client(api_key='<your_api_key>', api_secret='<your_api_secret>')", '```', '',
             'Never share your secret key. Enable IP whitelisting. Example signature payload:', '',
             '`symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559`']
    return 'trading/NOTES.md', '\n'.join(lines) + '\n', 'exchange-doc', 'docs placeholders'


@neg
def n_seed_words_doc(g):
    lines = ['Wallet backup checklist', '- write the 24 words on the steel plate (NOT in this file)', '- verify with the device',
             '- word count: 24, passphrase: yes (kept in my head)', '- xpub for watch-only: %s' % g.xpub()]
    return 'Documents/crypto/backup-checklist.txt', '\n'.join(lines) + '\n', 'seed-checklist', 'mentions seed, holds xpub'


@neg
def n_jupyter_cfg_default(g):
    lines = ['# Configuration file for jupyter-server.', "c.ServerApp.ip = 'localhost'", "# c.ServerApp.token = '<generated>'",
             "# c.IdentityProvider.token = '<generated>'", "c.ServerApp.password_required = False"]
    return '.jupyter/jupyter_server_config.py', '\n'.join(lines) + '\n', 'jupyter-default', 'generated token default'


@neg
def n_ssh_config(g):
    lines = []
    for h in g.r.sample(['github.com', 'gitlab.com', 'jump', 'gpu-box', 'pi', 'router'], 3):
        lines += ['Host %s' % h, '    HostName %s' % (h if '.' in h else g.ip()), '    User %s' % g.ch(['git', g.ch(FIRST)]),
                  '    IdentityFile ~/.ssh/id_ed25519', '    IdentitiesOnly yes', '']
    return '.ssh/config', '\n'.join(lines), 'ssh-config', 'identity file paths'


@neg
def n_obs_log(g):
    lines = []
    for i in range(g.ri(20, 80)):
        lines.append('%02d:%02d:%02d.%03d: %s' % (g.ri(0, 23), g.ri(0, 59), g.ri(0, 59), g.ri(0, 999), g.ch([
            '[rtmp stream: \'adv_stream\'] Connecting to RTMP URL rtmp://live.twitch.tv/app...',
            'Output \'adv_stream\': stopping', 'Stream key: (hidden)', '[x264 encoder: \'streaming_h264\'] preset: veryfast',
            'Session ID: %s' % g.uuid(), 'libobs: frame time %d ns' % g.ri(10**6, 10**7)])))
    return '.config/obs-studio/logs/2024-%02d-%02d 20-1%d-00.txt' % (g.ri(1, 12), g.ri(1, 28), g.ri(0, 9)), '\n'.join(lines) + '\n', 'obs-log', 'log with hidden key'


@neg
def n_twitch_clientid(g):
    lines = ['twitch:', '  client_id: %s' % g.twitch_oauth(), '  client_secret: ${TWITCH_CLIENT_SECRET}', '  redirect_uri: http://localhost:3000/auth/callback']
    return 'streaming/overlay/config.yml', '\n'.join(lines) + '\n', 'twitch-clientid', 'public client id, secret via env'


@neg
def n_hosts_inventory(g):
    lines = ['[web]'] + ['web%d ansible_host=%s' % (i, g.ip()) for i in range(1, g.ri(3, 8))] + ['', '[all:vars]', 'ansible_user=deploy',
                                                                                             'ansible_ssh_private_key_file=~/.ssh/deploy_ed25519', 'ansible_become_password="{{ vault_become }}"']
    return 'infra/ansible/inventory/hosts.ini', '\n'.join(lines) + '\n', 'inventory-refs', 'key file, vault ref'


@neg
def n_pagerduty_tf(g):
    lines = ['resource "pagerduty_service_integration" "prom" {', '  name    = "Prometheus"', '  service = pagerduty_service.api.id',
             '  vendor  = data.pagerduty_vendor.prometheus.id', '}', '', 'output "pd_integration_key" {',
             '  value     = pagerduty_service_integration.prom.integration_key', '  sensitive = true', '}']
    return 'infra/pagerduty/main.tf', '\n'.join(lines) + '\n', 'pd-tf', 'key as resource attribute ref'


@neg
def n_mikrotik_doc(g):
    lines = ['# wifi setup (from the MikroTik wiki)', '/interface wifi security add name=sec1 authentication-types=wpa2-psk,wpa3-psk passphrase=<your-passphrase>',
             '/ppp secret add name=<user> password=<password> service=l2tp']
    return 'net/mikrotik/howto.rsc', '\n'.join(lines) + '\n', 'mikrotik-doc', 'placeholders in angle brackets'


@neg
def n_cisco_doc(g):
    lines = ['Cisco IOS quick ref', '===================', 'enable secret <strong-secret>', 'username <name> privilege 15 secret <password>',
             'snmp-server community <community-string> RO', 'crypto isakmp key <pre-shared-key> address <peer-ip>', '',
             'Always use "secret" (type 9 scrypt) over "password".']
    return 'Documents/net-cheatsheet.txt', '\n'.join(lines) + '\n', 'cisco-doc', 'cheat sheet with <placeholders>'


@neg
def n_ipynb_widget(g):
    cells = ds_cells(g, g.ri(2, 5))
    cells.append(nb_cell(['from ipywidgets import Password', 'pw = Password(description="DB pw:")', 'pw'],
                         [{'data': {'application/vnd.jupyter.widget-view+json': {'model_id': g.hex(32), 'version_major': 2, 'version_minor': 0},
                                    'text/plain': ['Password(description=\'DB pw:\')']}, 'metadata': {}, 'output_type': 'display_data'}], 4))
    return 'notebooks/%s/connect.ipynb' % g.ch(PROJECTS), notebook(g, cells), 'ipynb-widget', 'password widget, model ids'


# ================================================================ driver
N_POS, N_NEG = 200, 160
NO_BOM_EXT = ('.p8', '.ppk', '.pem', '.crt', '.key', '.sh', '.rsc')


def finish(g, path, text):
    """random formatting: CRLF, BOM, missing final newline. returns bytes"""
    base = os.path.basename(path)
    if text.endswith('\n') and g.chance(0.1):
        text = text.rstrip('\n')
    crlf = '\r\n' in text
    if not crlf and g.chance(0.12):
        text = text.replace('\n', '\r\n')
    data = text.encode('utf-8')
    keyish = base.startswith('id_') or base.endswith(NO_BOM_EXT) or text.startswith('#!') or text.startswith('-----BEGIN')
    if not keyish and g.chance(0.08):
        data = b'\xef\xbb\xbf' + data
    return data


def order(g, fns, n):
    out = []
    while len(out) < n:
        batch = list(fns)
        g.r.shuffle(batch)
        out += batch
    return out[:n]


def main():
    seed = int(sys.argv[1])
    g = G(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    od = os.path.join(here, 'out_%d' % seed)
    if os.path.exists(od):
        shutil.rmtree(od)
    manifest, secrets = [], {}
    for kind, fns, n in (('pos', POS, N_POS), ('neg', NEG, N_NEG)):
        for i, fn in enumerate(order(g, fns, n)):
            r = fn(g)
            if kind == 'pos':
                path, text, secret, fam, note = r
            else:
                path, text, fam, note = r
            rel = '%s/h%03d/%s' % (kind, i + 1, path)
            if kind == 'pos':
                lines = text.replace('\r\n', '\n').split('\n')
                hits = [j for j, l in enumerate(lines) if secret in l]
                assert len(hits) == 1, (fn.__name__, secret, hits)
                secrets[rel] = {'line': hits[0] + 1, 'text': lines[hits[0]]}
            data = finish(g, path, text)
            full = os.path.join(od, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'wb') as f:
                f.write(data)
            manifest.append({'file': rel, 'kind': kind, 'family': fam, 'note': note})
    with open(os.path.join(od, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(od, 'secrets.json'), 'w') as f:
        json.dump(secrets, f, indent=1)
    print('seed %d: %d positives, %d negatives -> %s' % (seed, sum(m['kind'] == 'pos' for m in manifest),
                                                          sum(m['kind'] == 'neg' for m in manifest), od))


if __name__ == '__main__':
    main()

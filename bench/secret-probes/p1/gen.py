#!/usr/bin/env python3
"""Blind-test generator: fake home-directory files with exactly one secret
(positives, under out_SEED/pos/) and look-alikes with no secret (under
out_SEED/neg/).  All secret values are random, in the real formats.

usage: gen.py SEED [OUTROOT]     -> OUTROOT/out_SEED/{pos,neg}/NNN/<home path>
A manifest (out_SEED.manifest.json, next to the dir) lists every file, its
kind, and for positives the secret value and the marker used to find its line.
"""
import base64, json, os, random, shutil, string, struct, sys, urllib.parse, uuid, zlib

R = random.Random(0)
UP, LO, DG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DG
HEX = '0123456789abcdef'
B64 = ALNUM + '+/'
URLS = ALNUM + '-_'
B62 = DG + UP + LO


# ---------------------------------------------------------------- helpers
def rs(n, a=ALNUM): return ''.join(R.choice(a) for _ in range(n))
def rb(n): return bytes(R.getrandbits(8) for _ in range(n))
def rhex(n): return rs(n, HEX)
def ri(a, b): return R.randint(a, b)
def ch(s): return R.choice(s)
def ruuid(): return str(uuid.UUID(int=R.getrandbits(128), version=4))
def b64(b): return base64.b64encode(b).decode()
def b64u(b): return base64.urlsafe_b64encode(b).decode().rstrip('=')


def b62(num, width):
    s = ''
    while num:
        num, r = divmod(num, 62)
        s = B62[r] + s
    return s.rjust(width, '0')


def crc_token(prefix, n=30):
    body = rs(n)
    return prefix + body + b62(zlib.crc32(body.encode()) & 0xffffffff, 6)


WORDS = ['sunflower', 'tiger', 'mango', 'river', 'falcon', 'winter', 'dragon', 'maple',
         'ocean', 'pepper', 'rocket', 'silver', 'thunder', 'coffee', 'purple', 'monkey',
         'jasper', 'willow', 'orbit', 'cobalt', 'saturn', 'lemon', 'harbor', 'granite',
         'velvet', 'biscuit', 'pickle', 'nebula', 'walrus', 'cactus']


def human_pw():
    w1, w2 = ch(WORDS), ch(WORDS)
    k = ri(0, 5)
    if k == 0: return w1.capitalize() + str(ri(1970, 2024)) + ch('!?*@')
    if k == 1: return w1 + ch('-_.') + w2 + ch('-_.') + str(ri(10, 99))
    if k == 2: return w1.capitalize() + w2.capitalize() + str(ri(1, 999)) + ch('!@%&')
    if k == 3: return ch(WORDS).capitalize() + '@' + str(ri(1000, 9999))
    if k == 4: return w1[0].upper() + w1[1:3] + str(ri(10, 99)) + w2.capitalize() + ch('!?')
    return ''.join(c.upper() if R.random() < .3 else c for c in w1 + w2) + str(ri(0, 9999))


SYM = {'any': '!@%^&*-_=+.,:~?', 'url': '-._~!*', 'shell': '-_.@%+=,:', 'ini': '!@%^&*-_=+.,~?'}


def pw(ctx='any', style=None, n=None):
    ctx = ctx or 'any'
    style = style or ch(['alnum', 'hex', 'b64', 'url', 'sym', 'sym', 'human', 'human', 'lower'])
    if n is None:
        n = ri(10, 40) if R.random() < .75 else ri(41, 64)
    if style == 'human':
        h = human_pw()
        return urllib.parse.quote(h, safe='-._~!*') if ctx == 'url' else h
    if style == 'alnum': return rs(n)
    if style == 'hex': return rhex(n)
    if style == 'lower': return rs(n, LO + DG)
    if style == 'url': return rs(n, URLS)
    if style == 'b64':
        if ctx in ('url',):
            return rs(n, URLS)
        v = b64(rb(max(8, n * 3 // 4)))
        return v if ctx != 'shell' else v.replace('/', '9')
    # sym
    while True:
        v = rs(n, ALNUM + SYM[ctx] * 2)
        if any(c in SYM[ctx] for c in v) and any(c.isdigit() for c in v) and v[0] not in '-=:':
            return v


def keyname(words, style=None):
    style = style or ch(['snake', 'camel', 'kebab', 'upper', 'snake'])
    if style == 'snake': return '_'.join(words)
    if style == 'camel': return words[0] + ''.join(w.capitalize() for w in words[1:])
    if style == 'kebab': return '-'.join(words)
    if style == 'pascal': return ''.join(w.capitalize() for w in words)
    return '_'.join(words).upper()


USERS = ['alice', 'bob', 'jdoe', 'mchen', 'priya', 'deploy', 'svc_backup', 'admin', 'ops',
         'kwame', 'lena', 'tomasz', 'app', 'ci']
FIRST = ['Alice', 'Bob', 'Jane', 'Ming', 'Priya', 'Kwame', 'Lena', 'Tomasz', 'Sofia', 'Raj']
COMP = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'piedpiper', 'wayne', 'stark', 'vandelay']
APPS = ['billing', 'api', 'webshop', 'dashboard', 'ingest', 'auth', 'reports', 'crm', 'blog']
ENVS = ['prod', 'staging', 'dev', 'qa']


def user(): return ch(USERS)
def comp(): return ch(COMP)
def app(): return ch(APPS)
def email(): return f"{ch(FIRST).lower()}.{rs(ri(4, 8), LO)}@{comp()}.{ch(['com', 'io', 'dev', 'co.uk'])}"
def proj(): return f"{comp()}-{ch(ENVS + ['data', 'ml'])}-{ri(100000, 999999)}"
def ip(): return f"10.{ri(0, 255)}.{ri(0, 255)}.{ri(1, 254)}"
def dbhost(): return ch([f"db.{comp()}.internal", ip(), f"pg-{ch(ENVS)}-{ri(1, 3)}.{comp()}.io",
                         f"mysql.{ch(ENVS)}.local", 'localhost', '127.0.0.1',
                         f"{app()}-db.c{rs(12, LO + DG)}.eu-west-1.rds.amazonaws.com"])
def ts(): return ri(1690000000, 1735000000)


# ------------------------------------------------------ key material (DER/PEM)
def der_len(n):
    if n < 128: return bytes([n])
    if n < 256: return b'\x81' + bytes([n])
    return b'\x82' + n.to_bytes(2, 'big')


def der_int(b):
    if b[0] & 0x80: b = b'\x00' + b
    return b'\x02' + der_len(len(b)) + b


def der_seq(*p):
    c = b''.join(p)
    return b'\x30' + der_len(len(c)) + c


def der_oct(b): return b'\x04' + der_len(len(b)) + b
def der_bits(b): return b'\x03' + der_len(len(b) + 1) + b'\x00' + b
RSA_OID = b'\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00'


def bigint(n):
    b = bytearray(rb(n)); b[0] |= 0x80; b[-1] |= 1
    return bytes(b)


def rsa_pkcs1(bits=2048):
    n = bits // 8
    return der_seq(der_int(b'\x00'), der_int(bigint(n)), der_int(b'\x01\x00\x01'),
                   der_int(bigint(n)), der_int(bigint(n // 2)), der_int(bigint(n // 2)),
                   der_int(bigint(n // 2)), der_int(bigint(n // 2)), der_int(bigint(n // 2)))


def rsa_pub_pkcs1(bits=2048):
    return der_seq(der_int(bigint(bits // 8)), der_int(b'\x01\x00\x01'))


def pkcs8(bits=2048):
    return der_seq(der_int(b'\x00'), der_seq(RSA_OID), der_oct(rsa_pkcs1(bits)))


def ec_key():
    return der_seq(der_int(b'\x01'), der_oct(rb(32)),
                   b'\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07',
                   b'\xa1\x44\x03\x42\x00\x04' + rb(64))


def spki():
    return der_seq(der_seq(RSA_OID), der_bits(rsa_pub_pkcs1()))


def cert_der():
    tbs = der_seq(b'\xa0\x03\x02\x01\x02', der_int(rb(16)),
                  der_seq(b'\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b\x05\x00'),
                  rb(ri(120, 180)), spki(), rb(ri(150, 300)))
    return der_seq(tbs, der_seq(b'\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b\x05\x00'),
                   der_bits(rb(256)))


def pem(label, der, width=64):
    s = b64(der)
    body = '\n'.join(s[i:i + width] for i in range(0, len(s), width))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def sshstr(b):
    if isinstance(b, str): b = b.encode()
    return struct.pack('>I', len(b)) + b


def ssh_ed25519_pub_blob(pk=None):
    return sshstr('ssh-ed25519') + sshstr(pk or rb(32))


def ssh_rsa_pub_blob():
    return sshstr('ssh-rsa') + sshstr(b'\x01\x00\x01') + sshstr(b'\x00' + bigint(256))


def openssh_private(comment):
    pk, sk = rb(32), rb(32)
    pub = ssh_ed25519_pub_blob(pk)
    chk = rb(4)
    priv = chk + chk + sshstr('ssh-ed25519') + sshstr(pk) + sshstr(sk + pk) + sshstr(comment)
    i = 1
    while len(priv) % 8:
        priv += bytes([i]); i += 1
    blob = (b'openssh-key-v1\x00' + sshstr('none') + sshstr('none') + sshstr(b'') +
            struct.pack('>I', 1) + sshstr(pub) + sshstr(priv))
    return pem('OPENSSH PRIVATE KEY', blob, 70)


def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000: crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_armor(kind, body):
    s = b64(body)
    lines = '\n'.join(s[i:i + 64] for i in range(0, len(s), 64))
    c = b64(crc24(body).to_bytes(3, 'big'))
    return f"-----BEGIN PGP {kind} KEY BLOCK-----\n\n{lines}\n={c}\n-----END PGP {kind} KEY BLOCK-----\n"


def pgp_packet(tag, body):
    return bytes([0xC0 | tag, 0xFF]) + struct.pack('>I', len(body)) + body if len(body) > 191 \
        else bytes([0xC0 | tag, len(body)]) + body


def pgp_key(secret=True):
    oid = b'\x09\x2b\x06\x01\x04\x01\xda\x47\x0f\x01'
    pubpart = b'\x04' + struct.pack('>I', ts()) + b'\x16' + oid + b'\x01\x07\x40' + rb(32)
    uid = f"{ch(FIRST)} {rs(6, LO).capitalize()} <{email()}>".encode()
    sig = b'\x04\x13\x16\x08' + rb(ri(120, 160))
    if secret:
        key = pgp_packet(5, pubpart + b'\x00\x00\xff' + rb(32) + rb(2))
        sub = pgp_packet(7, b'\x04' + struct.pack('>I', ts()) + b'\x12' + rb(60) + b'\x00' + rb(34))
    else:
        key = pgp_packet(6, pubpart)
        sub = pgp_packet(14, b'\x04' + struct.pack('>I', ts()) + b'\x12' + rb(60))
    return pgp_armor('PRIVATE' if secret else 'PUBLIC',
                     key + pgp_packet(13, uid) + pgp_packet(2, sig) + sub + pgp_packet(2, sig))


def jwt(payload, alg='HS256', sigbytes=32):
    h = b64u(json.dumps({'alg': alg, 'typ': 'JWT'} if alg == 'HS256' else
                        {'alg': alg, 'kid': rs(43, URLS)}, separators=(',', ':')).encode())
    p = b64u(json.dumps(payload, separators=(',', ':')).encode())
    return f"{h}.{p}.{b64u(rb(sigbytes))}"


BECH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
def _polymod(v):
    g = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]; c = 1
    for x in v:
        b = c >> 25; c = (c & 0x1ffffff) << 5 ^ x
        for i in range(5): c ^= g[i] if (b >> i) & 1 else 0
    return c
def bech32(hrp, data):
    acc = bits = 0; d5 = []
    for b in data:
        acc = acc << 8 | b; bits += 8
        while bits >= 5: bits -= 5; d5.append(acc >> bits & 31)
    if bits: d5.append(acc << (5 - bits) & 31)
    hx = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = _polymod(hx + d5 + [0] * 6) ^ 1
    return hrp + '1' + ''.join(BECH[x] for x in d5 + [(pm >> 5 * (5 - i)) & 31 for i in range(6)])
def age_secret(): return bech32('age-secret-key-', rb(32)).upper()
def age_public(): return bech32('age', rb(32))


# ----------------------------------------------------------- token formats
def aws_akid(): return 'AKIA' + rs(16, UP + '234567')
def aws_secret(): return rs(40, B64)
def gh_token(p=None): return crc_token(p or ch(['ghp_', 'ghp_', 'gho_', 'ghu_']))
def gh_fine(): return 'github_pat_' + rs(22) + '_' + rs(59)
def glpat(): return 'glpat-' + rs(20, URLS)
def slack_bot(): return f"xoxb-{ri(10**10, 10**12)}-{ri(10**12, 10**13)}-{rs(24)}"
def slack_user(): return f"xoxp-{ri(10**10, 10**12)}-{ri(10**10, 10**12)}-{ri(10**12, 10**13)}-{rhex(32)}"
def slack_hook(): return f"https://hooks.slack.com/services/T{rs(8, UP + DG)}/B{rs(10, UP + DG)}/{rs(24)}"
def discord_hook(): return f"https://discord.com/api/webhooks/{ri(10**17, 10**19)}/{rs(68, URLS)}"
def stripe_sk(): return ch(['sk_live_', 'sk_live_', 'rk_live_']) + rs(ch([24, 99]))
def sendgrid(): return f"SG.{rs(22, URLS)}.{rs(43, URLS)}"
def mailgun(): return 'key-' + rhex(32)
def openai(): return ch([f"sk-proj-{rs(64, URLS)}T3BlbkFJ{rs(64, URLS)}", f"sk-{rs(20)}T3BlbkFJ{rs(20)}"])
def anthropic(): return f"sk-ant-api03-{rs(93, URLS)}AA"
def hf(): return 'hf_' + rs(34, UP + LO)
def npm_tok(): return crc_token('npm_')
def pypi_tok():
    raw = b'\x02\x01\x08pypi.org\x02\x24' + ruuid().encode() + b'\x00\x02\x2a' + rb(ri(100, 140))
    return 'pypi-' + b64u(raw)
def shopify(): return ch(['shpat_', 'shpca_', 'shppa_']) + rhex(32)
def square(): return 'EAAA' + rs(60, URLS)
def discord_bot(): return b64u(str(ri(10**17, 10**18)).encode()) + '.' + rs(6, URLS) + '.' + rs(38, URLS)
def telegram(): return f"{ri(10**8, 7 * 10**9)}:AA{rs(33, URLS)}"
def dop(): return 'dop_v1_' + rhex(64)
def heroku(): return 'HRKU-AA' + rs(58, URLS)
def nrak(): return 'NRAK-' + rs(27, UP + DG)
def nr_license(): return rhex(36) + 'NRAL'
def sentry(): return 'sntryu_' + rhex(64)
def atlassian(): return 'ATATT3xFfGF0' + rs(171, URLS) + '=' + rs(8, '0123456789ABCDEF')
def notion(): return ch(['ntn_' + rs(11, DG) + rs(35), 'secret_' + rs(43)])
def linear(): return 'lin_api_' + rs(40)
def postman(): return f"PMAK-{rhex(24)}-{rhex(34)}"
def grafana(): return f"glsa_{rs(32)}_{rhex(8)}"
def vault(): return ch(['hvs.' + rs(24), 'hvs.CAESI' + rs(86, URLS)])
def doppler(): return ch(['dp.pt.' + rs(43), f"dp.st.{ch(ENVS)}." + rs(43)])
def cf_token(): return rs(40, URLS)
def cf_global(): return rhex(37)
def az_secret(): return rs(3) + ch(['8Q~', '7Q~']) + rs(34, ALNUM + '~._-')
def az_key(): return b64(rb(64))
def gcp_refresh(): return '1//0' + ch('gcdeh') + rs(99, URLS)
def gocspx(): return 'GOCSPX-' + rs(28, URLS)
def bitbucket(): return 'ATBB' + rs(32) + rs(8, '0123456789ABCDEF')
def twilio(): return 'AC' + rhex(32), rhex(32)
def datadog_api(): return rhex(32)
def datadog_app(): return rhex(40)
def rails_master(): return rhex(32)
def wg_key(): return b64(rb(32))


FILLER = ['ls -la', 'cd ~/src/{a}', 'git status', 'git pull --rebase', 'docker ps -a',
          'kubectl get pods -n {e}', 'vim ~/.zshrc', 'make test', 'python3 -m venv .venv',
          'source .venv/bin/activate', 'pip install -r requirements.txt', 'npm run dev',
          'ssh deploy@{ip}', 'tail -f /var/log/syslog', 'htop', 'terraform plan -out plan.tfplan',
          'aws s3 ls s3://{c}-backups/', 'git log --oneline -5', 'grep -rn TODO src/',
          'sudo systemctl restart nginx', 'journalctl -u nginx --since today', 'df -h', 'du -sh *',
          'export EDITOR=vim', 'export PATH="$HOME/.local/bin:$PATH"', 'history | grep ssh',
          'git checkout -b feature/{a}-cleanup', 'docker compose up -d', 'kubectl logs -f deploy/{a}',
          'cat /etc/os-release', 'brew upgrade', 'sudo apt update && sudo apt upgrade -y',
          'git push origin HEAD', 'code .', 'go test ./...', 'cargo build --release',
          'curl -s https://api.github.com/repos/torvalds/linux | jq .stargazers_count',
          'openssl x509 -in cert.pem -noout -dates', 'ping -c 3 8.8.8.8', 'tmux attach -t main',
          'rsync -avz ./dist/ deploy@{ip}:/var/www/{a}/', 'helm upgrade --install {a} ./chart -n {e}']


def filler():
    return ch(FILLER).format(a=app(), e=ch(ENVS), ip=ip(), c=comp())


def history(cmd, kind=None):
    kind = kind or ch(['bash', 'bash', 'zsh', 'fish'])
    cmds = [filler() for _ in range(ri(8, 25))]
    cmds.insert(ri(2, len(cmds)), cmd)
    if kind == 'bash':
        return '.bash_history', '\n'.join(cmds) + '\n'
    if kind == 'zsh':
        t = ts()
        out = []
        for c in cmds:
            t += ri(5, 900); out.append(f": {t}:0;{c}")
        return '.zsh_history', '\n'.join(out) + '\n'
    t = ts(); out = []
    for c in cmds:
        t += ri(5, 900); out.append(f"- cmd: {c}\n  when: {t}")
    return '.local/share/fish/fish_history', '\n'.join(out) + '\n'


POS, NEG = [], []


def P(f): POS.append(f); return f
def N(f): NEG.append(f); return f


# =================================================================== POSITIVES
# Each returns (path, content, secret_value_or_marker)

@P
def aws_credentials():
    a, s = aws_akid(), aws_secret()
    prof = ch(['default', comp(), f"{comp()}-{ch(ENVS)}"])
    extra = ch(['', f"\n[{comp()}-readonly]\nrole_arn = arn:aws:iam::{ri(10**11, 10**12 - 1)}:role/ReadOnly\nsource_profile = {prof}\n"])
    return '.aws/credentials', f"[{prof}]\naws_access_key_id = {a}\naws_secret_access_key = {s}\n{extra}", s

@P
def aws_session():
    a, s = 'ASIA' + rs(16, UP + '234567'), aws_secret()
    tok = 'IQoJb3JpZ2luX2VjE' + rs(ri(300, 420), B64) + '='
    return '.aws/credentials', (f"[saml]\naws_access_key_id={a}\naws_secret_access_key={s}\n"
                                f"aws_session_token={tok}\nx_security_token_expires=2024-05-01T12:00:00Z\n"), s

@P
def aws_env_rc():
    a, s = aws_akid(), aws_secret()
    rc = ch(['.bashrc', '.zshrc', '.profile'])
    q = ch(['', '"', "'"])
    body = (f"# ~/{rc}\nexport HISTSIZE=100000\nalias ll='ls -alF'\nalias k=kubectl\n"
            f"export AWS_DEFAULT_REGION=eu-west-1\nexport AWS_ACCESS_KEY_ID={q}{a}{q}\n"
            f"export AWS_SECRET_ACCESS_KEY={q}{s}{q}\n[ -f ~/.fzf.bash ] && source ~/.fzf.bash\n")
    return rc, body, s

@P
def aws_boto_script():
    a, s = aws_akid(), aws_secret()
    return f"scripts/{ch(['backup', 'sync_s3', 'cleanup_buckets'])}.py", (
        "#!/usr/bin/env python3\nimport boto3\n\n"
        f"s3 = boto3.client(\n    's3',\n    aws_access_key_id='{a}',\n    aws_secret_access_key='{s}',\n    region_name='us-east-1',\n)\n\n"
        "for b in s3.list_buckets()['Buckets']:\n    print(b['Name'])\n"), s

@P
def aws_s3cfg():
    a, s = aws_akid(), aws_secret()
    return '.s3cfg', (f"[default]\naccess_key = {a}\nbucket_location = US\nhost_base = s3.amazonaws.com\n"
                      f"host_bucket = %(bucket)s.s3.amazonaws.com\nsecret_key = {s}\nuse_https = True\n"), s

@P
def gcp_sa_json():
    p = proj()
    key = pem('PRIVATE KEY', pkcs8())
    d = {"type": "service_account", "project_id": p, "private_key_id": rhex(40), "private_key": key,
         "client_email": f"{ch(['terraform', 'ci-deployer', 'bq-reader', app()])}@{p}.iam.gserviceaccount.com",
         "client_id": str(ri(10**20, 10**21 - 1)), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
         "token_uri": "https://oauth2.googleapis.com/token",
         "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
         "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/x%40{p}.iam.gserviceaccount.com",
         "universe_domain": "googleapis.com"}
    path = ch([f"Downloads/{p}-{rhex(12)}.json", '.config/gcloud/sa-key.json', f"keys/gcp-{app()}.json"])
    return path, json.dumps(d, indent=2) + '\n', '"private_key":'

@P
def gcp_adc_user():
    t = gcp_refresh()
    d = {"account": "", "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
         "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty", "quota_project_id": proj(),
         "refresh_token": t, "type": "authorized_user", "universe_domain": "googleapis.com"}
    return '.config/gcloud/application_default_credentials.json', json.dumps(d, indent=2) + '\n', t

@P
def gcp_oauth_client():
    s = gocspx()
    cid = f"{ri(10**11, 10**12)}-{rs(32, LO + DG)}.apps.googleusercontent.com"
    d = {"installed": {"client_id": cid, "project_id": proj(), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                       "token_uri": "https://oauth2.googleapis.com/token",
                       "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                       "client_secret": s, "redirect_uris": ["http://localhost"]}}
    return f"Downloads/client_secret_{cid}.json", json.dumps(d, separators=(',', ':')), s

@P
def azure_storage_appsettings():
    k = az_key(); acct = comp() + rs(6, LO + DG)
    cs = f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={k};EndpointSuffix=core.windows.net"
    d = {"Logging": {"LogLevel": {"Default": "Information"}},
         "ConnectionStrings": {"AzureStorage": cs}, "AllowedHosts": "*"}
    return f"projects/{app()}/appsettings.Development.json", json.dumps(d, indent=2) + '\n', k

@P
def azure_client_secret_env():
    s = az_secret()
    return f"projects/{app()}/.env", (f"AZURE_TENANT_ID={ruuid()}\nAZURE_CLIENT_ID={ruuid()}\n"
                                      f"AZURE_CLIENT_SECRET={s}\nAZURE_SUBSCRIPTION_ID={ruuid()}\n"), s

@P
def azure_sas_notes():
    sig = b64(rb(32)).replace('+', '%2B').replace('/', '%2F').replace('=', '%3D')
    acct = comp() + 'backup'
    url = (f"https://{acct}.blob.core.windows.net/db-dumps?sv=2022-11-02&ss=b&srt=sco&sp=rwdlacupiytfx"
           f"&se=2025-12-31T23:59:59Z&st=2024-01-01T00:00:00Z&spr=https&sig={sig}")
    return 'notes/azure-backups.md', (f"# Backups to Azure\n\nContainer `db-dumps` in {acct}.\n\n"
                                      f"Upload URL (SAS, expires end of 2025):\n\n    {url}\n\n"
                                      f"azcopy copy dump.sql.gz \"<url>\"\n"), sig

@P
def azure_functions_settings():
    k = b64(rb(32))
    cs = f"Endpoint=sb://{comp()}-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={k}"
    d = {"IsEncrypted": False, "Values": {"AzureWebJobsStorage": "UseDevelopmentStorage=true",
                                          "FUNCTIONS_WORKER_RUNTIME": "python", "ServiceBusConnection": cs}}
    return f"src/{app()}-func/local.settings.json", json.dumps(d, indent=2) + '\n', k

@P
def ssh_rsa_pem():
    return ch(['.ssh/id_rsa', '.ssh/id_rsa_work']), pem('RSA PRIVATE KEY', rsa_pkcs1(ch([2048, 3072]))), 'BEGIN RSA PRIVATE KEY'

@P
def ssh_ed25519():
    return '.ssh/id_ed25519', openssh_private(f"{user()}@{ch(['laptop', 'thinkpad', 'mbp'])}"), 'BEGIN OPENSSH PRIVATE KEY'

@P
def ssh_deploy_key():
    return ch(['.ssh/github_deploy', '.ssh/deploy_key', '.ssh/gitlab-ci']), openssh_private(f"deploy@{comp()}"), 'BEGIN OPENSSH PRIVATE KEY'

@P
def ssh_ecdsa():
    return '.ssh/id_ecdsa', pem('EC PRIVATE KEY', ec_key()), 'BEGIN EC PRIVATE KEY'

@P
def tls_pkcs8():
    return ch(['certs/server.key', f"nginx/ssl/{app()}.{comp()}.com.key", 'certs/privkey.pem']), pem('PRIVATE KEY', pkcs8()), 'BEGIN PRIVATE KEY'

@P
def pgp_private():
    return ch(['.gnupg/secret-backup.asc', 'Documents/pgp-private-key.asc']), pgp_key(True), 'BEGIN PGP PRIVATE KEY BLOCK'

@P
def putty_ppk():
    pub = b64(ssh_ed25519_pub_blob())
    priv = b64(sshstr(rb(32)))
    return 'Documents/server.ppk', (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240{ri(1, 9)}1{ri(0, 9)}\n"
                                    f"Public-Lines: 2\n{pub[:64]}\n{pub[64:]}\nPrivate-Lines: 1\n{priv}\nPrivate-MAC: {rhex(64)}\n"), priv

def kubeconfig(userblock, name):
    ca = b64(pem('CERTIFICATE', cert_der()).encode())
    return (f"apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n"
            f"    server: https://{ip()}:6443\n  name: {name}\ncontexts:\n- context:\n    cluster: {name}\n"
            f"    user: {name}-admin\n  name: {name}\ncurrent-context: {name}\nkind: Config\npreferences: {{}}\n"
            f"users:\n- name: {name}-admin\n  user:\n{userblock}")

@P
def kube_clientkey():
    crt = b64(pem('CERTIFICATE', cert_der()).encode())
    key = b64(pem(ch(['RSA PRIVATE KEY', 'EC PRIVATE KEY']), ch([rsa_pkcs1(), ec_key()])).encode())
    return '.kube/config', kubeconfig(f"    client-certificate-data: {crt}\n    client-key-data: {key}\n", f"{comp()}-{ch(ENVS)}"), key[:40]

@P
def kube_token():
    t = jwt({"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": "kube-system",
             "kubernetes.io/serviceaccount/secret.name": f"admin-user-token-{rs(5, LO + DG)}",
             "kubernetes.io/serviceaccount/service-account.name": "admin-user",
             "kubernetes.io/serviceaccount/service-account.uid": ruuid(),
             "sub": "system:serviceaccount:kube-system:admin-user"}, 'RS256', 256)
    return f".kube/{ch(['config', 'config-' + ch(ENVS)])}", kubeconfig(f"    token: {t}\n", f"{comp()}-k3s"), t

@P
def docker_auth():
    u, p = user(), pw('any')
    a = b64(f"{u}:{p}".encode())
    reg = ch(['https://index.docker.io/v1/', f"registry.{comp()}.com", 'quay.io'])
    d = {"auths": {reg: {"auth": a}}, "currentContext": "desktop-linux"}
    return '.docker/config.json', json.dumps(d, indent='\t') + '\n', a

@P
def docker_ghcr():
    a = b64(f"{user()}:{gh_token('ghp_')}".encode())
    d = {"auths": {"ghcr.io": {"auth": a}, "https://index.docker.io/v1/": {}}, "credsStore": ""}
    return '.docker/config.json', json.dumps(d, indent=2) + '\n', a

@P
def netrc_github():
    t = gh_token()
    return '.netrc', f"machine github.com\n  login {user()}\n  password {t}\n\nmachine api.github.com\n  login {user()}\n  password {t}\n", t

@P
def netrc_plain():
    p = pw('shell')
    return '.netrc', f"machine ftp.{comp()}.com login {user()} password {p}\n", p

@P
def netrc_heroku():
    t = heroku()
    return '.netrc', f"machine api.heroku.com\n  login {email()}\n  password {t}\nmachine git.heroku.com\n  login {email()}\n  password {t}\n", t

@P
def gitcred_github():
    t = ch([gh_token(), gh_fine()])
    return '.git-credentials', f"https://{user()}:{t}@github.com\n", t

@P
def gitcred_gitlab():
    t = glpat()
    return '.git-credentials', f"https://oauth2:{t}@gitlab.{comp()}.com\n", t

@P
def gitcred_bitbucket():
    t = bitbucket()
    return '.git-credentials', f"https://{user()}:{t}@bitbucket.org\n", t

@P
def npmrc_token():
    t = npm_tok()
    return '.npmrc', f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={t}\nsave-exact=true\n", t

@P
def npmrc_auth():
    a = b64(f"{user()}:{pw('any')}".encode())
    return '.npmrc', (f"registry=https://nexus.{comp()}.com/repository/npm-group/\n"
                      f"//nexus.{comp()}.com/repository/npm-group/:_auth={a}\nalways-auth=true\nemail={email()}\n"), a

@P
def yarnrc():
    t = npm_tok()
    return '.yarnrc.yml', f'npmRegistries:\n  "https://registry.npmjs.org":\n    npmAuthToken: "{t}"\n', t

@P
def pypirc_token():
    t = pypi_tok()
    return '.pypirc', f"[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {t}\n", t

@P
def pypirc_plain():
    p = pw('ini')
    return '.pypirc', (f"[distutils]\nindex-servers = internal\n\n[internal]\n"
                       f"repository = https://nexus.{comp()}.com/repository/pypi-internal/\nusername = {user()}\npassword = {p}\n"), p

@P
def pip_conf():
    p = pw('url')
    return '.config/pip/pip.conf', f"[global]\nindex-url = https://{user()}:{p}@artifactory.{comp()}.com/api/pypi/pypi/simple\ntimeout = 60\n", p

@P
def pgpass():
    p = pw('url')
    lines = [f"{dbhost()}:5432:*:{user()}:{p}"]
    return '.pgpass', '\n'.join(lines) + '\n', p

@P
def mycnf():
    p = pw('ini')
    q = ch(['', '"'])
    return '.my.cnf', f"[client]\nuser={user()}\npassword={q}{p}{q}\nhost={dbhost()}\n\n[mysql]\nauto-rehash\n", p

@P
def rclone_s3():
    a, s = rs(20, UP + DG), rs(40, B64)
    return '.config/rclone/rclone.conf', (f"[wasabi]\ntype = s3\nprovider = Wasabi\naccess_key_id = {a}\n"
                                          f"secret_access_key = {s}\nendpoint = s3.eu-central-1.wasabisys.com\n"), s

@P
def rclone_obscured():
    p = b64u(rb(ri(24, 40)))
    return '.config/rclone/rclone.conf', (f"[nas]\ntype = sftp\nhost = {ip()}\nuser = {user()}\npass = {p}\n"
                                          f"shell_type = unix\nmd5sum_command = md5sum\n"), p

@P
def env_django():
    s = rs(50, LO + DG + '!@#%^&*(-_=+)')
    q = ch(['', "'", '"'])
    return f"src/{app()}/.env", (f"DEBUG=False\nALLOWED_HOSTS={app()}.{comp()}.com\nSECRET_KEY={q}{s}{q}\n"
                                 f"DATABASE_NAME={app()}\nTIME_ZONE=Europe/Berlin\n"), s

@P
def env_db_password():
    p = pw('shell')
    k = ch(['DB_PASSWORD', 'DATABASE_PASSWORD', 'POSTGRES_PASSWORD', 'MYSQL_PASSWORD', 'PGPASSWORD', 'DB_PASS'])
    q = ch(['', '"', "'"])
    return f"src/{app()}/.env", (f"DB_HOST={dbhost()}\nDB_PORT=5432\nDB_USER={user()}\n{k}={q}{p}{q}\n"
                                 f"DB_NAME={app()}_{ch(ENVS)}\nLOG_LEVEL=info\n"), p

@P
def env_rails():
    s = rhex(128)
    return f"src/{app()}/.env.production", f"RAILS_ENV=production\nRAILS_LOG_TO_STDOUT=1\nSECRET_KEY_BASE={s}\n", s

@P
def env_laravel():
    s = 'base64:' + b64(rb(32))
    return f"src/{app()}/.env", (f"APP_NAME={app().capitalize()}\nAPP_ENV=local\nAPP_KEY={s}\nAPP_DEBUG=true\n"
                                 f"APP_URL=http://localhost\n\nLOG_CHANNEL=stack\n"), s

@P
def env_nextauth():
    s = b64(rb(32))
    return f"src/{app()}-web/.env.local", f"NEXTAUTH_URL=http://localhost:3000\nNEXTAUTH_SECRET={s}\nNEXT_PUBLIC_APP_NAME={app()}\n", s

@P
def env_jwt():
    s = pw(None, ch(['alnum', 'hex', 'b64', 'sym', 'url']), ri(24, 64))
    k = ch(['JWT_SECRET', 'JWT_SIGNING_KEY', 'TOKEN_SECRET', 'AUTH_SECRET', 'SESSION_SECRET'])
    return f"src/{app()}/.env", f"PORT=8080\nNODE_ENV=production\n{k}={s}\nJWT_EXPIRES_IN=7d\n", s

@P
def compose_map():
    p = pw('any')
    q = ch(['', '"', "'"])
    return f"src/{app()}/docker-compose.yml", (
        "services:\n  db:\n    image: postgres:16\n    restart: unless-stopped\n    environment:\n"
        f"      POSTGRES_USER: {app()}\n      POSTGRES_PASSWORD: {q}{p}{q}\n      POSTGRES_DB: {app()}\n"
        "    volumes:\n      - pgdata:/var/lib/postgresql/data\n    ports:\n      - \"5432:5432\"\nvolumes:\n  pgdata:\n"), p

@P
def compose_list():
    p = pw('shell')
    return f"homelab/{ch(['nextcloud', 'wordpress', 'gitea'])}/docker-compose.yaml", (
        "version: '3.8'\nservices:\n  mariadb:\n    image: mariadb:11\n    environment:\n"
        f"      - MYSQL_ROOT_PASSWORD={p}\n      - MYSQL_DATABASE=app\n      - MYSQL_USER=app\n"
        "    volumes:\n      - ./db:/var/lib/mysql\n"), p

@P
def tfvars_db():
    p = pw('any')
    return f"infra/{ch(ENVS)}/terraform.tfvars", (f'region        = "eu-west-1"\ninstance_type = "t3.medium"\n'
                                                  f'db_username   = "{user()}"\ndb_password   = "{p}"\nenable_backups = true\n'), p

@P
def tfvars_cf():
    t = cf_token()
    return f"infra/dns/{ch(['terraform.tfvars', 'secrets.auto.tfvars'])}", f'zone_id = "{rhex(32)}"\ncloudflare_api_token = "{t}"\n', t

@P
def terraformrc():
    t = f"{rs(14)}.atlasv1.{rs(67)}"
    d = {"credentials": {"app.terraform.io": {"token": t}}}
    return '.terraform.d/credentials.tfrc.json', json.dumps(d, indent=2) + '\n', t

@P
def ansible_become():
    p = pw('any')
    q = ch(['', '"', "'"])
    return f"ansible/group_vars/{ch(['all', 'webservers'])}.yml", (
        f"---\nansible_user: {user()}\nansible_become: true\nansible_become_password: {q}{p}{q}\nntp_server: pool.ntp.org\n"), p

@P
def ansible_mysql():
    p = pw('any')
    return 'ansible/roles/db/vars/main.yml', f"---\nmysql_root_password: \"{p}\"\nmysql_databases:\n  - name: {app()}\nmysql_port: 3306\n", p

@P
def ansible_inventory():
    p = pw('shell')
    return 'ansible/inventory.ini', (f"[web]\nweb1 ansible_host={ip()}\nweb2 ansible_host={ip()}\n\n[db]\n"
                                     f"db1 ansible_host={ip()} ansible_user=root ansible_ssh_pass={p}\n"), p

# -- shell history
def H(cmd, secret, kind=None):
    path, body = history(cmd, kind)
    return path, body, secret

@P
def h_mysql():
    p = pw('shell', ch(['alnum', 'human', 'sym']))
    return H(ch([f"mysql -u root -p'{p}' -h {dbhost()}", f"mysql -uroot -p{p} {app()}", f"mysqldump -u backup --password={p} {app()} > dump.sql"]), p)

@P
def h_curl_bearer():
    t = ch([rs(40), jwt({"sub": ruuid(), "scope": "admin", "exp": ts()}), rhex(64), gh_token()])
    return H(f'curl -H "Authorization: Bearer {t}" https://api.{comp()}.com/v1/users', t)

@P
def h_curl_u():
    p = pw('shell')
    return H(f"curl -u admin:{p} https://jenkins.{comp()}.com/api/json", p)

@P
def h_export_token():
    t = ch([gh_token(), glpat(), rs(32), openai()])
    k = ch(['GITHUB_TOKEN', 'GITLAB_TOKEN', 'API_TOKEN', 'OPENAI_API_KEY', 'TOKEN'])
    return H(f"export {k}={t}", t)

@P
def h_sshpass():
    p = pw('shell')
    return H(f"sshpass -p '{p}' ssh {user()}@{ip()}", p)

@P
def h_psql():
    p = pw('url')
    return H(f'psql "postgresql://{user()}:{p}@{dbhost()}:5432/{app()}"', p)

@P
def h_redis():
    p = pw('shell', ch(['alnum', 'hex', 'lower']))
    return H(f"redis-cli -h {ip()} -p 6379 -a {p}", p)

@P
def h_docker_login():
    p = pw('shell')
    return H(f"docker login -u {user()} -p {p} registry.{comp()}.com", p)

@P
def h_git_clone():
    t = glpat()
    return H(f"git clone https://oauth2:{t}@gitlab.{comp()}.com/{app()}/{app()}.git", t)

@P
def h_mongo():
    p = pw('url')
    return H(f'mongosh "mongodb+srv://{user()}:{p}@cluster0.{rs(5, LO + DG)}.mongodb.net/admin"', p)

@P
def h_vault_login():
    t = vault()
    return H(f"vault login {t}", t)

@P
def h_az_login():
    s = az_secret()
    return H(f"az login --service-principal -u {ruuid()} -p '{s}' --tenant {ruuid()}", s)

@P
def h_openssl_pass():
    p = pw('shell')
    return H(f"openssl enc -aes-256-cbc -salt -in backup.tar -out backup.tar.enc -pass pass:{p}", p)

@P
def h_htpasswd_b():
    p = pw('shell')
    return H(f"htpasswd -b -c /etc/nginx/.htpasswd {user()} {p}", p)

# -- tool configs with provider tokens
@P
def gh_hosts():
    t = gh_token('gho_')
    return '.config/gh/hosts.yml', f"github.com:\n    user: {user()}\n    oauth_token: {t}\n    git_protocol: ssh\n", t

@P
def glab_config():
    t = glpat()
    return '.config/glab-cli/config.yml', (f"git_protocol: ssh\neditor: vim\nhosts:\n    gitlab.com:\n        token: {t}\n"
                                           f"        api_host: gitlab.com\n        git_protocol: ssh\n"), t

@P
def slack_env():
    t = ch([slack_bot(), slack_user()])
    return f"src/{app()}-bot/.env", f"SLACK_BOT_TOKEN={t}\nSLACK_CHANNEL=#alerts\n", t

@P
def slack_webhook_script():
    u = slack_hook()
    return 'bin/notify.sh', (f"#!/bin/sh\n# post a message to #ops\nWEBHOOK=\"{u}\"\n"
                             "curl -s -X POST -H 'Content-type: application/json' --data \"{\\\"text\\\":\\\"$1\\\"}\" \"$WEBHOOK\"\n"), u

@P
def discord_webhook():
    u = discord_hook()
    return f"homelab/uptime/config.yaml", f"checks:\n  - name: nas\n    url: http://{ip()}:5000\nnotify:\n  discord:\n    webhook_url: {u}\n", u

@P
def stripe_cfg():
    k = stripe_sk()
    return '.config/stripe/config.toml', (f"[default]\n  device_name = \"{user()}-laptop\"\n  live_mode_api_key = \"{k}\"\n"
                                          f"  live_mode_key_expires_at = \"2025-03-01\"\n"), k

@P
def twilio_env():
    sid, tok = twilio()
    return f"src/{app()}/.env", f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}\nTWILIO_FROM=+1415{ri(1000000, 9999999)}\n", tok

@P
def sendgrid_env():
    k = sendgrid()
    return f"src/{app()}/.env", f"MAIL_FROM=noreply@{comp()}.com\nSENDGRID_API_KEY={k}\n", k

@P
def mailgun_py():
    k = mailgun()
    return f"scripts/send_report.py", (f"import requests\n\nMAILGUN_DOMAIN = 'mg.{comp()}.com'\nMAILGUN_API_KEY = '{k}'\n\n"
                                       "def send(to, subject, text):\n    return requests.post(\n"
                                       "        f'https://api.mailgun.net/v3/{MAILGUN_DOMAIN}/messages',\n"
                                       "        auth=('api', MAILGUN_API_KEY),\n        data={'from': 'reports@' + MAILGUN_DOMAIN, 'to': to, 'subject': subject, 'text': text})\n"), k

@P
def openai_rc():
    k = openai()
    rc = ch(['.zshrc', '.bashrc', '.config/fish/config.fish'])
    line = f"set -gx OPENAI_API_KEY {k}" if rc.endswith('fish') else f"export OPENAI_API_KEY=\"{k}\""
    return rc, f"# prompt\neval \"$(starship init bash)\"\n{line}\nalias gpt='llm -m gpt-4o'\n", k

@P
def anthropic_key():
    k = anthropic()
    if R.random() < .5:
        return f"src/{app()}-agent/.env", f"ANTHROPIC_API_KEY={k}\nMODEL=claude-3-5-sonnet-latest\n", k
    return '.config/io.datasette.llm/keys.json', json.dumps({"// Note": "This file stores secret API credentials. Do not share!", "claude": k}, indent=2) + '\n', k

@P
def hf_token():
    t = hf()
    return ch(['.cache/huggingface/token', '.huggingface/token']), t, t

@P
def shopify_env():
    t = shopify()
    return f"src/{comp()}-shop-app/.env", f"SHOPIFY_SHOP={comp()}-store.myshopify.com\nSHOPIFY_ACCESS_TOKEN={t}\nSCOPES=read_products,write_orders\n", t

@P
def square_cfg():
    t = square()
    return f"src/pos-sync/config.yaml", f"square:\n  environment: production\n  location_id: L{rs(12, UP + DG)}\n  access_token: {t}\n", t

@P
def discord_bot_py():
    t = discord_bot()
    return f"src/{ch(['musicbot', 'modbot', 'dicebot'])}/bot.py", (
        "import discord\n\nintents = discord.Intents.default()\nclient = discord.Client(intents=intents)\n"
        f"TOKEN = \"{t}\"\n\n@client.event\nasync def on_ready():\n    print(f'logged in as {{client.user}}')\n\nclient.run(TOKEN)\n"), t

@P
def telegram_cfg():
    t = telegram()
    return f"src/{ch(['alertbot', 'homebot'])}/config.ini", f"[telegram]\ntoken = {t}\nchat_id = -100{ri(10**9, 10**10)}\n\n[poll]\ninterval = 60\n", t

@P
def doctl():
    t = dop()
    return '.config/doctl/config.yaml', f"access-token: {t}\ncontext: default\noutput: text\n", t

@P
def datadog_yaml():
    k = datadog_api()
    return f"homelab/datadog/datadog.yaml", f"api_key: {k}\nsite: datadoghq.eu\nlogs_enabled: true\ntags:\n  - env:homelab\n", k

@P
def newrelic_ini():
    k = nr_license()
    return f"src/{app()}/newrelic.ini", f"[newrelic]\nlicense_key = {k}\napp_name = {app().capitalize()} ({ch(ENVS)})\nmonitor_mode = true\nlog_level = info\n", k

@P
def newrelic_env():
    k = nrak()
    return f"infra/observability/.envrc", f"export NEW_RELIC_ACCOUNT_ID={ri(10**6, 10**7)}\nexport NEW_RELIC_API_KEY={k}\nexport NEW_RELIC_REGION=EU\n", k

@P
def sentryclirc():
    t = sentry()
    return '.sentryclirc', f"[auth]\ntoken={t}\n\n[defaults]\norg={comp()}\nproject={app()}\n", t

@P
def jira_env():
    t = atlassian()
    return ch(['.zshrc', '.bashrc']), f"export JIRA_API_URL=https://{comp()}.atlassian.net\nexport JIRA_USER={email()}\nexport JIRA_API_TOKEN={t}\n", t

@P
def notion_env():
    t = notion()
    return f"src/notion-sync/.env", f"NOTION_TOKEN={t}\nNOTION_DATABASE_ID={rhex(32)}\n", t

@P
def linear_cfg():
    t = linear()
    return '.config/linear/config.json', json.dumps({"workspace": comp(), "apiKey": t}, indent=2) + '\n', t

@P
def postman_env():
    t = postman()
    return f"projects/{app()}/postman/.env", f"POSTMAN_API_KEY={t}\nCOLLECTION_UID={ri(10**6, 10**7)}-{ruuid()}\n", t

@P
def grafana_cfg():
    t = grafana()
    return 'homelab/grafana/provisioning.env', f"GRAFANA_URL=https://grafana.{comp()}.com\nGRAFANA_SERVICE_ACCOUNT_TOKEN={t}\n", t

@P
def vault_token():
    t = vault()
    return '.vault-token', t, t

@P
def doppler_yaml():
    t = doppler()
    return '.doppler/.doppler.yaml', f"scoped:\n    /:\n        token: {t}\n        api-host: https://api.doppler.com\n        dashboard-host: https://dashboard.doppler.com\n", t

@P
def cloudflare_certbot():
    t = cf_token()
    return ch(['.secrets/certbot/cloudflare.ini', 'certbot/cloudflare.ini']), f"# Cloudflare API token used by Certbot\ndns_cloudflare_api_token = {t}\n", t

@P
def cloudflare_global():
    k = cf_global()
    return '.cloudflare.ini', f"dns_cloudflare_email = {email()}\ndns_cloudflare_api_key = {k}\n", k

@P
def wrangler():
    t = cf_token()
    return '.wrangler/config/default.toml', f'api_token = "{t}"\n', t

@P
def rubygems():
    t = 'rubygems_' + rhex(48)
    return '.gem/credentials', f"---\n:rubygems_api_key: {t}\n", t

@P
def cargo_cred():
    t = 'cio' + rs(32)
    return '.cargo/credentials.toml', f'[registry]\ntoken = "{t}"\n', t

@P
def composer_auth():
    t = gh_token('ghp_')
    return '.config/composer/auth.json', json.dumps({"github-oauth": {"github.com": t}}, indent=4) + '\n', t

@P
def ngrok():
    t = f"2{rs(26)}_{rs(21)}"
    return '.config/ngrok/ngrok.yml', f'version: "2"\nauthtoken: {t}\ntunnels:\n  web:\n    proto: http\n    addr: 8080\n', t

@P
def hcloud():
    t = rs(64)
    return '.config/hcloud/cli.toml', f'active_context = "{comp()}"\n\n[[contexts]]\n  name = "{comp()}"\n  token = "{t}"\n', t

@P
def databricks():
    t = 'dapi' + rhex(32)
    return '.databrickscfg', f"[DEFAULT]\nhost = https://adb-{ri(10**15, 10**16)}.{ri(1, 19)}.azuredatabricks.net\ntoken = {t}\n", t

@P
def pulumi():
    t = 'pul-' + rhex(40)
    d = {"current": "https://api.pulumi.com", "accessTokens": {"https://api.pulumi.com": t},
         "accounts": {"https://api.pulumi.com": {"accessToken": t, "username": user(), "lastValidatedAt": "2024-04-02T10:11:12Z"}}}
    return '.pulumi/credentials.json', json.dumps(d, indent=4) + '\n', t

@P
def supabase():
    t = 'sbp_' + rhex(40)
    return '.supabase/access-token', t + '\n', t

@P
def circleci():
    t = f"CCIPAT_{rs(22)}_{rhex(40)}"
    return '.circleci/cli.yml', f"host: https://circleci.com\nendpoint: graphql-unstable\ntoken: {t}\n", t

@P
def minio_mc():
    s = rs(40, B64)
    d = {"version": "10", "aliases": {"nas": {"url": f"http://{ip()}:9000", "accessKey": rs(20, UP + DG),
                                             "secretKey": s, "api": "s3v4", "path": "auto"}}}
    return '.mc/config.json', json.dumps(d, indent='\t') + '\n', s

@P
def snowsql():
    p = pw('ini')
    return '.snowsql/config', f"[connections]\naccountname = {comp()}-{rs(7, LO)}\nusername = {user().upper()}\npassword = {p}\nwarehouse = COMPUTE_WH\n", p

@P
def dbt_profiles():
    p = pw('any')
    return '.dbt/profiles.yml', (f"{app()}:\n  target: dev\n  outputs:\n    dev:\n      type: postgres\n      host: {dbhost()}\n"
                                 f"      user: {user()}\n      password: \"{p}\"\n      port: 5432\n      dbname: analytics\n      schema: dbt_{user()}\n      threads: 4\n"), p

@P
def openstack_clouds():
    p = pw('any')
    return '.config/openstack/clouds.yaml', (f"clouds:\n  ovh:\n    auth:\n      auth_url: https://auth.cloud.ovh.net/v3\n"
                                             f"      username: user-{rs(12)}\n      password: '{p}'\n      project_name: '{ri(10**15, 10**16)}'\n"
                                             f"      user_domain_name: Default\n    region_name: GRA11\n"), p

@P
def wireguard():
    k = wg_key()
    return ch(['vpn/wg0.conf', 'Documents/wireguard/home.conf']), (
        f"[Interface]\nPrivateKey = {k}\nAddress = 10.8.0.{ri(2, 250)}/32\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = {wg_key()}\n"
        f"Endpoint = vpn.{comp()}.com:51820\nAllowedIPs = 0.0.0.0/0\nPersistentKeepalive = 25\n"), k

# -- DB urls
@P
def url_pg():
    p = pw('url')
    return f"src/{app()}/config/database.yml", (f"default: &default\n  adapter: postgresql\n  pool: 5\n\nproduction:\n  <<: *default\n"
                                               f"  url: postgres://{user()}:{p}@{dbhost()}:5432/{app()}_production\n"), p

@P
def url_mysql():
    p = pw('url')
    return f"src/{app()}/.env", f"NODE_ENV=development\nDATABASE_URL=mysql://{user()}:{p}@{dbhost()}:3306/{app()}\n", p

@P
def url_mongo():
    p = pw('url')
    return f"src/{app()}/settings.py", (f"import os\n\nDEBUG = False\nMONGO_URI = \"mongodb+srv://{user()}:{p}@cluster0.{rs(5, LO + DG)}.mongodb.net/{app()}?retryWrites=true&w=majority\"\n"
                                        "CACHE_TTL = 300\n"), p

@P
def url_redis():
    p = pw('url', ch(['alnum', 'hex', 'url']))
    return f"src/{app()}/.env", f"REDIS_URL={ch(['redis', 'rediss'])}://{ch(['', 'default'])}:{p}@{ch(['redis', ip()])}:6379/0\nCACHE_PREFIX={app()}\n", p

@P
def url_amqp():
    p = pw('url')
    return f"src/{app()}/celeryconfig.py", f"broker_url = 'amqp://{user()}:{p}@rabbitmq.{comp()}.internal:5672//'\nresult_backend = 'rpc://'\ntask_serializer = 'json'\n", p

# -- JWT secrets
@P
def jwt_js_config():
    s = pw(None, ch(['alnum', 'hex', 'sym', 'b64']), ri(24, 64))
    d = {"port": 3000, "jwtSecret": s, "jwtExpiry": "1h", "db": {"host": "localhost", "name": app()}}
    return f"src/{app()}-api/config/default.json", json.dumps(d, indent=2) + '\n', s

@P
def jwt_spring():
    s = b64(rb(ri(32, 48)))
    return f"src/{app()}-service/src/main/resources/application.yml", (
        f"server:\n  port: 8080\nspring:\n  application:\n    name: {app()}\njwt:\n  secret: {s}\n  expiration: 86400000\n"), s

# -- human notes
@P
def notes_wifi():
    p = ch([human_pw(), rs(ri(12, 20), LO + DG)])
    return ch(['notes.txt', 'Documents/notes.txt']), (f"groceries: milk, eggs, coffee\n\nwifi at home: {comp().capitalize()}Net-5G\n"
                                                     f"wifi password: {p}\n\ncall landlord about heating\n"), p

@P
def notes_bank():
    p = human_pw()
    return 'Documents/bank.txt', (f"Online banking\nuser id: {ri(10**7, 10**8)}\npassword: {p}\n"
                                  f"security question: first pet -> {ch(WORDS)}\n"), p

@P
def todo_root():
    p = pw('any', ch(['sym', 'human', 'alnum']))
    return 'todo.md', (f"# TODO\n\n- [x] renew TLS cert for {app()}.{comp()}.com\n- [ ] rotate staging root password "
                       f"(currently `{p}`)\n- [ ] upgrade k8s to 1.30\n"), p

@P
def passwords_txt():
    p = human_pw()
    return ch(['Desktop/passwords.txt', 'Documents/accounts.txt']), (f"netflix - shared with family\ngmail  {email()}  {p}\n"
                                                                      f"router admin: see sticker\n"), p

@P
def meeting_vpn():
    p = pw('any', ch(['alnum', 'sym']), ri(16, 32))
    return 'notes/2024-03-onboarding.md', (f"## Onboarding with {ch(FIRST)}\n\n* laptop: enrolled in MDM\n* VPN profile: {comp()}-office\n"
                                           f"* VPN pre-shared key: {p}\n* Slack: join #dev #ops\n"), p

@P
def openvpn_auth():
    p = pw('shell')
    return 'vpn/auth.txt', f"{user()}\n{p}\n", p

# -- passwords in generic configs
GKEYS = [['password'], ['passwd'], ['pwd'], ['db', 'password'], ['admin', 'password'], ['smtp', 'password'],
         ['api', 'key'], ['api', 'secret'], ['client', 'secret'], ['auth', 'token'], ['access', 'token'],
         ['secret', 'key'], ['private', 'token'], ['encryption', 'key'], ['signing', 'key'], ['app', 'secret'],
         ['consumer', 'secret'], ['root', 'pass'], ['ldap', 'bind', 'password'], ['master', 'key']]

def gval(ctx='any'):
    return pw(ctx, ch(['alnum', 'hex', 'b64', 'url', 'sym', 'human', 'lower']))

@P
def cfg_yaml():
    k = keyname(ch(GKEYS)); v = gval()
    q = ch(['', '"', "'"])
    return f"src/{app()}/config/{ch(['config', 'settings', 'secrets', ch(ENVS)])}.yaml", (
        f"app:\n  name: {app()}\n  port: {ri(3000, 9000)}\n{ch(['database', 'service', 'integration', 'mail'])}:\n"
        f"  host: {dbhost()}\n  user: {user()}\n  {k}: {q}{v}{q}\n  timeout: 30\n"), v

@P
def cfg_ini():
    k = keyname(ch(GKEYS), ch(['snake', 'snake', 'camel', 'upper'])); v = gval('ini')
    sep = ch([' = ', '=', ': '])
    return ch([f"src/{app()}/config.ini", f".config/{app()}/{app()}.conf", f"{app()}.cfg"]), (
        f"[general]\nlog_level{sep}info\n\n[{ch(['database', 'smtp', 'api', 'ldap'])}]\nhost{sep}{dbhost()}\nuser{sep}{user()}\n{k}{sep}{v}\n"), v

@P
def cfg_xml():
    k = keyname(ch(GKEYS), ch(['camel', 'pascal'])); v = gval('ini').replace('&', '&amp;')
    if R.random() < .5:
        body = (f'<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <appSettings>\n    <add key="Environment" value="Production" />\n'
                f'    <add key="{k[0].upper() + k[1:]}" value="{v}" />\n  </appSettings>\n</configuration>\n')
        path = f"src/{app().capitalize()}.Web/Web.config"
    else:
        body = (f'<?xml version="1.0"?>\n<config>\n  <server>{dbhost()}</server>\n  <username>{user()}</username>\n'
                f'  <{k}>{v}</{k}>\n</config>\n')
        path = f"src/{app()}/conf/{app()}.xml"
    return path, body, v

@P
def cfg_properties():
    v = gval('ini')
    k = ch(['spring.datasource.password', 'db.password', 'mail.smtp.password', 'ldap.bind.password', 'app.api.secret', 'jdbc.password'])
    return f"src/{app()}-service/src/main/resources/{ch(['application', 'application-' + ch(ENVS)])}.properties", (
        f"server.port=8080\nspring.datasource.url=jdbc:postgresql://{dbhost()}:5432/{app()}\n"
        f"spring.datasource.username={user()}\n{k}={v}\nlogging.level.root=INFO\n"), v

@P
def cfg_toml():
    k = keyname(ch(GKEYS), ch(['snake', 'kebab'])); v = gval()
    return ch([f".config/{app()}/config.toml", f"src/{app()}/{app()}.toml"]), (
        f'title = "{app()}"\n\n[server]\nbind = "0.0.0.0:8080"\n\n[{ch(["database", "upstream", "auth"])}]\n'
        f'url = "https://{app()}.{comp()}.com"\n{k} = "{v}"\n'), v

@P
def cfg_json():
    k = keyname(ch(GKEYS), ch(['camel', 'snake', 'camel'])); v = gval()
    d = {"name": app(), "env": ch(ENVS), ch(['db', 'smtp', 'service']): {"host": dbhost(), "user": user(), k: v}, "retries": 3}
    return ch([f"src/{app()}/config.json", f".config/{app()}/settings.json"]), json.dumps(d, indent=ch([2, 4])) + '\n', v

@P
def wp_config():
    p = pw('any')
    return f"www/{comp()}-blog/wp-config.php", (f"<?php\ndefine( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', 'wp_{comp()}' );\n"
                                              f"define( 'DB_PASSWORD', '{p}' );\ndefine( 'DB_HOST', 'localhost' );\ndefine( 'DB_CHARSET', 'utf8mb4' );\n"
                                              "$table_prefix = 'wp_';\n"), p

@P
def maven_settings():
    p = pw('ini').replace('&', '&amp;')
    return '.m2/settings.xml', (f"<settings>\n  <servers>\n    <server>\n      <id>{comp()}-releases</id>\n      <username>{user()}</username>\n"
                                f"      <password>{p}</password>\n    </server>\n  </servers>\n</settings>\n"), p

@P
def gradle_props():
    p = pw('ini')
    k = ch(['ossrhPassword', 'signing.password', 'artifactoryPassword', 'nexusPassword'])
    return '.gradle/gradle.properties', f"org.gradle.jvmargs=-Xmx4g\norg.gradle.parallel=true\nossrhUsername={user()}\n{k}={p}\n", p

@P
def filezilla():
    p = b64(human_pw().encode())
    return '.config/filezilla/sitemanager.xml', (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.66.1" platform="unix">\n  <Servers>\n    <Server>\n'
        f'      <Host>ftp.{comp()}.com</Host>\n      <Port>21</Port>\n      <Protocol>0</Protocol>\n      <Type>0</Type>\n'
        f'      <User>{user()}</User>\n      <Pass encoding="base64">{p}</Pass>\n      <Logontype>1</Logontype>\n'
        f'      <Name>{comp()} web</Name>\n    </Server>\n  </Servers>\n</FileZilla3>\n'), p

@P
def wpa_supplicant():
    p = ch([human_pw(), rs(ri(12, 24))])
    return 'backup/etc/wpa_supplicant/wpa_supplicant.conf', (f"ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\nupdate_config=1\ncountry=DE\n\n"
                                                             f"network={{\n    ssid=\"{comp().capitalize()}-Guest\"\n    psk=\"{p}\"\n    key_mgmt=WPA-PSK\n}}\n"), p

@P
def nm_connection():
    p = ch([human_pw(), rs(ri(12, 24))])
    return f"backup/NetworkManager/system-connections/{comp().capitalize()}-Office.nmconnection", (
        f"[connection]\nid={comp().capitalize()}-Office\nuuid={ruuid()}\ntype=wifi\n\n[wifi]\nmode=infrastructure\nssid={comp().capitalize()}-Office\n\n"
        f"[wifi-security]\nkey-mgmt=wpa-psk\npsk={p}\n\n[ipv4]\nmethod=auto\n"), p

@P
def smbcredentials():
    p = pw('shell')
    return '.smbcredentials', f"username={user()}\npassword={p}\ndomain=WORKGROUP\n", p

@P
def msmtprc():
    p = pw('shell')
    return '.msmtprc', (f"defaults\nauth on\ntls on\n\naccount gmail\nhost smtp.gmail.com\nport 587\nfrom {email()}\n"
                        f"user {email()}\npassword {p}\n\naccount default : gmail\n"), p

@P
def muttrc():
    p = pw('shell')
    return '.muttrc', (f'set imap_user = "{email()}"\nset imap_pass = "{p}"\nset folder = "imaps://imap.fastmail.com:993"\n'
                       'set spoolfile = "+INBOX"\n'), p

@P
def fstab_cifs():
    p = pw('shell')
    return 'backup/etc/fstab', (f"UUID={ruuid()} /     ext4 errors=remount-ro 0 1\nUUID={rhex(4).upper()}-{rhex(4).upper()} /boot/efi vfat umask=0077 0 1\n"
                                f"//{ip()}/media /mnt/media cifs username={user()},password={p},uid=1000,iocharset=utf8 0 0\n"), p

@P
def rails_master_key():
    k = rails_master()
    return f"src/{app()}/config/master.key", k, k

@P
def k8s_secret_stringdata():
    p = pw('any')
    return f"k8s/{app()}/secret.yaml", (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {app()}-db\n  namespace: {ch(ENVS)}\ntype: Opaque\n"
                                        f"stringData:\n  username: {app()}\n  password: \"{p}\"\n"), p

@P
def k8s_secret_data():
    v = b64(pw('any').encode())
    return f"k8s/{app()}/{app()}-secret.yaml", (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {app()}-api\ntype: Opaque\n"
                                                f"data:\n  API_KEY: {v}\n"), v

@P
def jupyter_notebook_token():
    t = ch([openai(), hf(), rs(40)])
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
                     "source": ["import os\n", f"os.environ[\"OPENAI_API_KEY\"] = \"{t}\"\n"]}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
    return f"notebooks/{ch(['explore', 'eval', 'scratch'])}.ipynb", json.dumps(nb, indent=1) + '\n', t

@P
def hub_config():
    t = gh_token()
    return '.config/hub', f"github.com:\n- user: {user()}\n  oauth_token: {t}\n  protocol: https\n", t

@P
def vscode_sqltools():
    p = pw('any')
    d = {"editor.fontSize": 14, "sqltools.connections": [{"name": f"{app()} {ch(ENVS)}", "driver": "PostgreSQL",
                                                          "server": dbhost(), "port": 5432, "database": app(),
                                                          "username": user(), "password": p}]}
    return '.config/Code/User/settings.json', json.dumps(d, indent=4) + '\n', p

@P
def gitlab_ci_local():
    t = 'glrt-' + rs(20, URLS)
    return 'gitlab-runner/config.toml', (f'concurrent = 2\n\n[[runners]]\n  name = "{user()}-laptop"\n  url = "https://gitlab.com/"\n'
                                         f'  token = "{t}"\n  executor = "docker"\n  [runners.docker]\n    image = "alpine:3.19"\n'), t

@P
def dotenv_generic_api():
    v = gval('shell')
    k = keyname(ch([['api', 'key'], ['api', 'secret'], ['client', 'secret'], ['access', 'token'], ['secret', 'key'], ['webhook', 'secret']]), 'upper')
    pre = ch(['', 'PAYMENTS_', 'MAPS_', 'CRM_', 'GEO_'])
    return f"src/{app()}/.env", f"PORT=3000\n{pre}{k}={v}\n", v


@P
def age_key():
    k = age_secret()
    return '.config/sops/age/keys.txt', f"# created: 2024-0{ri(1, 9)}-1{ri(0, 9)}T10:22:31+01:00\n# public key: {age_public()}\n{k}\n", k


# ================================================================= NEGATIVES
PH = ['changeme', 'your_api_key_here', '<token>', '${API_KEY}', 'xxxxxxxxxxxxxxxxxxxx', '********', '000000',
      'YOUR_SECRET_HERE', '<your-password>', 'REPLACE_ME', '', 'TODO', '{{ api_key }}', 'secret', 'xxx', '...',
      'sk_test_your_key', 'ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', '<redacted>', 'None']

@N
def n_env_example():
    keys = ['DB_PASSWORD', 'SECRET_KEY', 'STRIPE_SECRET_KEY', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'OPENAI_API_KEY', 'JWT_SECRET', 'SENDGRID_API_KEY']
    lines = [f"{k}={ch(PH)}" for k in R.sample(keys, 5)]
    return f"src/{app()}/{ch(['.env.example', '.env.sample', '.env.template', '.env.dist'])}", "# copy to .env and fill in\nPORT=3000\n" + '\n'.join(lines) + '\n'

@N
def n_env_example2():
    return f"src/{app()}/.env.example", ("DATABASE_URL=postgres://user:password@localhost:5432/app\nREDIS_URL=redis://localhost:6379/0\n"
                                         "SECRET_KEY=change-me-to-a-long-random-string\nSENTRY_DSN=\nSMTP_PASSWORD=\nAPI_KEY=<your api key>\n")

@N
def n_env_example3():
    return f"src/{app()}/.env.example", ("AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX\nAWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
                                         "SLACK_BOT_TOKEN=xoxb-your-token\nSTRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\n")

@N
def n_env_vars_ref():
    return f"src/{app()}/config.yaml", ("database:\n  host: ${DB_HOST}\n  user: ${DB_USER}\n  password: ${DB_PASSWORD}\n"
                                        "api:\n  key: ${API_KEY:-}\n  secret: \"${API_SECRET}\"\n")

@N
def n_compose_vars():
    return f"src/{app()}/docker-compose.yml", (
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/db_password\n"
        "      POSTGRES_USER: ${POSTGRES_USER}\n    secrets:\n      - db_password\n  app:\n    env_file: .env\n"
        "    environment:\n      - API_KEY=${API_KEY}\n      - DATABASE_URL=postgres://app:${POSTGRES_PASSWORD}@db:5432/app\n"
        "secrets:\n  db_password:\n    file: ./secrets/db_password.txt\n")

@N
def n_readme_bearer():
    return f"src/{app()}/README.md", (f"# {app()}\n\n## Usage\n\nGet a token, then:\n\n```sh\nexport TOKEN=$(./get-token.sh)\n"
                                      f"curl -H \"Authorization: Bearer $TOKEN\" https://api.{comp()}.com/v1/items\n"
                                      "curl -H 'Authorization: Bearer <YOUR_TOKEN>' https://api.example.com/v1/me\n"
                                      "curl -u \"$USER:$PASSWORD\" https://jenkins.example.com/api/json\n```\n")

@N
def n_docs_export():
    return 'notes/setup.md', ("## Setup\n\n```\nexport GITHUB_TOKEN=<your-personal-access-token>\nexport OPENAI_API_KEY=sk-...\n"
                              "export AWS_PROFILE=dev\nmysql -u root -p\npsql postgres://user:${PGPASSWORD}@localhost/db\n```\n"
                              "The password is stored in 1Password under 'staging db'.\n")

@N
def n_ansible_vault():
    lines = [rhex(80) for _ in range(ri(4, 7))]
    body = '\n'.join('          ' + l for l in lines)
    return 'ansible/group_vars/prod/vault.yml', (f"---\ndb_user: {app()}\ndb_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n{body}\n"
                                                 "db_password_ref: \"{{ vault_db_password }}\"\n")

@N
def n_password_file():
    return f".config/{app()}/config.yaml", ("server:\n  tls_key: /etc/ssl/private/server.key\n  tls_cert: /etc/ssl/certs/server.crt\n"
                                           "database:\n  password_file: /run/secrets/db\n  password_command: pass show db/prod\n"
                                           "ssh:\n  key: ~/.ssh/id_rsa.pub\n  identity_file: ~/.ssh/id_ed25519\n")

@N
def n_ssh_config():
    return '.ssh/config', (f"Host bastion\n  HostName {ip()}\n  User {user()}\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n\n"
                           f"Host *.internal\n  ProxyJump bastion\n  ForwardAgent no\n")

@N
def n_pub_ed25519():
    return '.ssh/id_ed25519.pub', f"ssh-ed25519 {b64(ssh_ed25519_pub_blob())} {user()}@laptop\n"

@N
def n_pub_rsa():
    return '.ssh/id_rsa.pub', f"ssh-rsa {b64(ssh_rsa_pub_blob())} {email()}\n"

@N
def n_authorized_keys():
    return '.ssh/authorized_keys', ''.join(f"ssh-ed25519 {b64(ssh_ed25519_pub_blob())} {user()}@{ch(['mbp', 'ci', 'desktop'])}\n" for _ in range(3)) + \
        f"ssh-rsa {b64(ssh_rsa_pub_blob())} backup@nas\n"

@N
def n_known_hosts():
    out = []
    for _ in range(5):
        out.append(f"|1|{b64(rb(20))}|{b64(rb(20))} ssh-ed25519 {b64(ssh_ed25519_pub_blob())}")
    out.append(f"github.com ssh-rsa {b64(ssh_rsa_pub_blob())}")
    return '.ssh/known_hosts', '\n'.join(out) + '\n'

@N
def n_pem_pubkey():
    return f"keys/{app()}-jwt-public.pem", pem('PUBLIC KEY', spki())

@N
def n_cert():
    return ch([f"certs/{app()}.crt", 'certs/ca.pem', f"nginx/ssl/{app()}.{comp()}.com.crt"]), pem('CERTIFICATE', cert_der())

@N
def n_ca_bundle():
    return 'certs/ca-bundle.crt', ''.join(f"# {comp().capitalize()} Root CA {i}\n" + pem('CERTIFICATE', cert_der()) for i in range(3))

@N
def n_csr():
    return f"certs/{app()}.csr", pem('CERTIFICATE REQUEST', der_seq(der_seq(der_int(b'\x00'), rb(80), spki()), der_bits(rb(256))))

@N
def n_pgp_pub():
    return 'Documents/pgp-public-key.asc', pgp_key(False)

@N
def n_sha256sums():
    files = ['ubuntu-24.04-live-server-amd64.iso', 'haven-linux-amd64.tar.gz', 'node-v20.11.1-linux-x64.tar.xz', 'terraform_1.7.5_linux_amd64.zip']
    return 'Downloads/SHA256SUMS', ''.join(f"{rhex(64)}  {f}\n" for f in files)

@N
def n_md5():
    return 'backup/MD5SUMS', ''.join(f"{rhex(32)}  ./photos/IMG_{ri(1000, 9999)}.jpg\n" for _ in range(8))

@N
def n_gitlog():
    out = []
    for _ in range(6):
        out.append(f"commit {rhex(40)}\nAuthor: {ch(FIRST)} <{email()}>\nDate:   Mon Mar {ri(1, 28)} 10:{ri(10, 59)}:00 2024 +0100\n\n    "
                   f"{ch(['fix token refresh race', 'bump deps', 'add password reset flow', 'rotate keys doc', 'refactor auth middleware'])}\n")
    return 'notes/gitlog.txt', '\n'.join(out)

@N
def n_changelog_shas():
    return f"src/{app()}/CHANGELOG.md", ''.join(f"- {ch(['Fix', 'Add', 'Remove'])} {ch(['secret rotation', 'token cache', 'password hashing'])} ({rhex(7)})\n" for _ in range(6)) + \
        f"\nFull diff: https://github.com/{comp()}/{app()}/compare/{rhex(40)}...{rhex(40)}\n"

@N
def n_docker_digests():
    return f"k8s/{app()}/deployment.yaml", (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app()}\nspec:\n  template:\n    spec:\n      containers:\n"
                                            f"        - name: {app()}\n          image: ghcr.io/{comp()}/{app()}@sha256:{rhex(64)}\n          env:\n"
                                            f"            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n                  name: {app()}-db\n                  key: password\n")

def bcrypt():
    return f"$2{ch('aby')}$1{ri(0, 2)}${rs(53, ALNUM + './')}"

@N
def n_htpasswd():
    return ch(['nginx/.htpasswd', 'homelab/traefik/users.htpasswd']), ''.join(f"{user()}:{bcrypt()}\n" for _ in range(3))

@N
def n_shadow():
    return 'backup/etc/shadow', ''.join(f"{u}:$6${rs(16, ALNUM + './')}${rs(86, ALNUM + './')}:19{ri(100, 800)}:0:99999:7:::\n" for u in ['root', user()]) + \
        "daemon:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n"

@N
def n_argon2():
    h = f"$argon2id$v=19$m=65536,t=3,p=4${b64(rb(16)).rstrip('=')}${b64(rb(32)).rstrip('=')}"
    return f"homelab/authelia/users_database.yml", f"users:\n  {user()}:\n    displayname: \"{ch(FIRST)}\"\n    password: \"{h}\"\n    email: {email()}\n    groups:\n      - admins\n"

@N
def n_uuids():
    d = {"version": 4, "terraform_version": "1.7.5", "serial": ri(1, 300), "lineage": ruuid(),
         "resources": [{"type": "aws_instance", "name": app(), "instances": [{"attributes": {"id": f"i-{rhex(17)}", "ami": f"ami-{rhex(17)}",
                                                                                                    "subnet_id": f"subnet-{rhex(17)}", "arn": f"arn:aws:ec2:eu-west-1:{ri(10**11, 10**12 - 1)}:instance/i-{rhex(17)}"}}]}]}
    return f"infra/{ch(ENVS)}/terraform.tfstate.backup", json.dumps(d, indent=2) + '\n'

@N
def n_azure_ids():
    return '.azure/azureProfile.json', json.dumps({"installationId": ruuid(), "subscriptions": [{"id": ruuid(), "name": f"{comp()}-{ch(ENVS)}",
                                                                                                 "state": "Enabled", "user": {"name": email(), "type": "user"},
                                                                                                 "isDefault": True, "tenantId": ruuid(), "environmentName": "AzureCloud"}]}, indent=2) + '\n'

@N
def n_b64_data_uri():
    png = b'\x89PNG\r\n\x1a\n' + b'\x00\x00\x00\rIHDR' + rb(ri(150, 300))
    return f"notes/{ch(['diagram', 'readme'])}.md", f"# Architecture\n\n![logo](data:image/png;base64,{b64(png)})\n\nSee above.\n"

@N
def n_b64_configmap():
    script = b"#!/bin/sh\nset -e\necho starting\nexec /usr/local/bin/app --config /etc/app/config.yaml\n"
    return f"k8s/{app()}/configmap.yaml", (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app()}-scripts\nbinaryData:\n"
                                          f"  entrypoint.sh: {b64(script)}\ndata:\n  LOG_LEVEL: info\n")

@N
def n_cloud_init_b64():
    s = b64(f"#cloud-config\npackages:\n  - nginx\n  - htop\nruncmd:\n  - systemctl enable --now nginx\nhostname: {app()}\n".encode())
    return f"infra/{ch(ENVS)}/launch_template.json", json.dumps({"ImageId": f"ami-{rhex(17)}", "InstanceType": "t3.small", "UserData": s}, indent=2) + '\n'

@N
def n_package_lock():
    deps = {}
    for name in R.sample(['lodash', 'react', 'express', 'axios', 'debug', 'ms', 'chalk', 'commander', 'semver', 'uuid'], 6):
        deps[f"node_modules/{name}"] = {"version": f"{ri(1, 9)}.{ri(0, 20)}.{ri(0, 9)}",
                                         "resolved": f"https://registry.npmjs.org/{name}/-/{name}-1.0.0.tgz",
                                         "integrity": "sha512-" + b64(rb(64))}
    return f"src/{app()}-web/package-lock.json", json.dumps({"name": app(), "lockfileVersion": 3, "requires": True, "packages": deps}, indent=2) + '\n'

@N
def n_yarn_lock():
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n"]
    for name in ['ansi-regex', 'chalk', 'debug', 'ms']:
        out.append(f'\n{name}@^1.0.0:\n  version "1.2.{ri(0, 9)}"\n  resolved "https://registry.yarnpkg.com/{name}/-/{name}-1.2.3.tgz#{rhex(40)}"\n'
                   f'  integrity sha512-{b64(rb(64))}\n')
    return f"src/{app()}-web/yarn.lock", ''.join(out)

@N
def n_go_sum():
    mods = ['github.com/spf13/cobra v1.8.0', 'golang.org/x/crypto v0.21.0', 'github.com/stretchr/testify v1.9.0', 'gopkg.in/yaml.v3 v3.0.1']
    return f"src/{app()}-go/go.sum", ''.join(f"{m} h1:{b64(rb(32))}\n{m}/go.mod h1:{b64(rb(32))}\n" for m in mods)

@N
def n_cargo_lock():
    return f"src/{app()}-rs/Cargo.lock", "# This file is automatically @generated by Cargo.\nversion = 3\n" + ''.join(
        f'\n[[package]]\nname = "{n}"\nversion = "1.{ri(0, 30)}.{ri(0, 9)}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{rhex(64)}"\n'
        for n in ['anyhow', 'serde', 'tokio', 'rand_core'])

@N
def n_poetry_lock():
    return f"src/{app()}/poetry.lock", ''.join(
        f'[[package]]\nname = "{n}"\nversion = "2.{ri(0, 9)}.{ri(0, 9)}"\nfiles = [\n    {{file = "{n}-2.0.0-py3-none-any.whl", hash = "sha256:{rhex(64)}"}},\n'
        f'    {{file = "{n}-2.0.0.tar.gz", hash = "sha256:{rhex(64)}"}},\n]\n\n' for n in ['requests', 'cryptography', 'pyjwt']) + \
        f'[metadata]\nlock-version = "2.0"\npython-versions = "^3.11"\ncontent-hash = "{rhex(64)}"\n'

@N
def n_requirements_hash():
    return f"src/{app()}/requirements.txt", ''.join(f"{n}=={ri(1, 4)}.{ri(0, 9)}.{ri(0, 9)} \\\n    --hash=sha256:{rhex(64)} \\\n    --hash=sha256:{rhex(64)}\n"
                                                   for n in ['django', 'psycopg2-binary', 'python-dotenv'])

@N
def n_tf_lock():
    return f"infra/{ch(ENVS)}/.terraform.lock.hcl", (f'provider "registry.terraform.io/hashicorp/aws" {{\n  version     = "5.40.0"\n  constraints = "~> 5.0"\n  hashes = [\n'
                                                     + ''.join(f'    "h1:{b64(rb(32))}",\n' for _ in range(2)) + ''.join(f'    "zh:{rhex(64)}",\n' for _ in range(4)) + "  ]\n}\n")

@N
def n_flake_lock():
    return 'nixos/flake.lock', json.dumps({"nodes": {"nixpkgs": {"locked": {"lastModified": ts(), "narHash": "sha256-" + b64(rb(32)),
                                                                                "owner": "NixOS", "repo": "nixpkgs", "rev": rhex(40), "type": "github"}}},
                                             "root": "root", "version": 7}, indent=2) + '\n'

@N
def n_css():
    return f"src/{app()}-web/src/theme.css", ":root {\n" + ''.join(f"  --color-{n}: #{rhex(6)};\n" for n in ['primary', 'secondary', 'accent', 'bg', 'fg', 'muted']) + \
        "}\n.btn { background: var(--color-primary); border: 1px solid #" + rhex(6) + "; }\n"

@N
def n_xresources():
    return '.Xresources', ''.join(f"*.color{i}: #{rhex(6)}\n" for i in range(16)) + "*.font: JetBrainsMono Nerd Font:size=11\n"

@N
def n_urls_query():
    return 'notes/links.md', (f"- https://www.youtube.com/watch?v={rs(11, URLS)}&t=42s\n- https://www.google.com/maps/place/@52.52,13.40,15z/data=!3m1!4b1!4m6!3m5!1s0x47a84e373f035901:0x42120465b5e3b70\n"
                              f"- https://{comp()}.atlassian.net/browse/OPS-{ri(100, 999)}?focusedCommentId={ri(10**5, 10**6)}\n"
                              f"- https://github.com/{comp()}/{app()}/pull/{ri(1, 900)}/files?diff=split&w=1\n"
                              f"- https://shop.example.com/cart?session_ref={rhex(16)}&utm_source=newsletter&utm_campaign=spring24\n"
                              f"- https://docs.google.com/document/d/{rs(44, URLS)}/edit?usp=sharing\n")

@N
def n_code_getpass():
    return 'scripts/db_connect.py', ("import getpass\nimport os\nimport psycopg2\n\npassword = os.environ.get('PGPASSWORD') or getpass.getpass('DB password: ')\n"
                                     "api_key = os.environ[\"API_KEY\"]\nSECRET_KEY = os.getenv('SECRET_KEY', '')\n"
                                     "conn = psycopg2.connect(host='localhost', user='app', password=password)\n")

@N
def n_code_js_env():
    return f"src/{app()}-api/src/config.js", ("module.exports = {\n  port: process.env.PORT || 3000,\n  jwtSecret: process.env.JWT_SECRET,\n"
                                              "  db: {\n    password: process.env.DB_PASSWORD,\n    user: process.env.DB_USER || 'postgres',\n  },\n"
                                              "  stripeKey: requireEnv('STRIPE_SECRET_KEY'),\n};\n")

@N
def n_code_go():
    return f"src/{app()}-go/internal/config/config.go", ("package config\n\nimport \"os\"\n\ntype Config struct {\n\tDBPassword string\n\tAPIToken   string\n}\n\n"
                                                         "func Load() Config {\n\treturn Config{\n\t\tDBPassword: os.Getenv(\"DB_PASSWORD\"),\n"
                                                         "\t\tAPIToken:   mustReadFile(\"/run/secrets/api_token\"),\n\t}\n}\n")

@N
def n_code_hmac():
    return f"src/{app()}/webhooks.py", ("import hmac, hashlib, os\n\nWEBHOOK_SECRET = os.environ['WEBHOOK_SECRET'].encode()\n\n"
                                        "def verify(body: bytes, signature: str) -> bool:\n    mac = hmac.new(WEBHOOK_SECRET, body, hashlib.sha256).hexdigest()\n"
                                        "    return hmac.compare_digest(mac, signature)\n")

@N
def n_pw_policy():
    return f".config/{app()}/security.yaml", ("password_policy:\n  password_min_length: 12\n  password_max_age_days: 90\n  password_history: 5\n"
                                              "  require_uppercase: true\n  require_symbols: true\ntoken_ttl: 3600\nsecret_rotation_days: 30\nmax_login_attempts: 5\n")

@N
def n_pw_policy_ini():
    return 'backup/etc/security/pwquality.conf', "minlen = 14\ndcredit = -1\nucredit = -1\nlcredit = -1\nocredit = -1\nenforce_for_root\n"

@N
def n_camel_java():
    return f"src/{app()}-service/src/main/java/com/{comp()}/auth/TokenService.java", (
        f"package com.{comp()}.auth;\n\nimport org.springframework.security.crypto.password.PasswordEncoder;\n\n"
        "public class TokenService {\n    private final PasswordEncoder passwordEncoder;\n    private final JwtTokenProviderConfigurationProperties tokenProperties;\n"
        "    private static final String PASSWORD_RESET_TOKEN_HEADER = \"X-Password-Reset-Token\";\n\n"
        "    public boolean validateSecretKeyRotationPolicyForTenant(String tenantId) {\n        return AbstractSecretKeyFactoryProviderImpl.isRotationEnabled(tenantId);\n    }\n}\n")

@N
def n_paths():
    return 'notes/paths.txt', ("/usr/local/lib/python3.11/site-packages/cryptography/hazmat/primitives/asymmetric/rsa.py\n"
                               "/home/me/.local/share/keyrings/login.keyring\n/etc/ssl/private/ssl-cert-snakeoil.key\n"
                               "C:\\Users\\me\\AppData\\Roaming\\Microsoft\\Credentials\\\n~/.config/gcloud/credentials.db\n"
                               "/var/lib/docker/overlay2/" + rhex(64) + "/merged\n")

@N
def n_aws_example():
    return 'notes/aws-cli.md', ("# AWS CLI\n\nFrom the docs:\n\n```\n$ aws configure\nAWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE\n"
                                "AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nDefault region name [None]: us-west-2\n```\n")

@N
def n_tf_variables():
    return f"infra/modules/{app()}/variables.tf", ('variable "db_password" {\n  description = "Password for the master DB user"\n  type        = string\n  sensitive   = true\n}\n\n'
                                                  'variable "api_token" {\n  type    = string\n  default = ""\n}\n')

@N
def n_tf_main_ref():
    return f"infra/modules/{app()}/main.tf", ('resource "aws_db_instance" "main" {\n  username = var.db_username\n  password = var.db_password\n'
                                             '  manage_master_user_password = true\n}\n\ndata "aws_secretsmanager_secret_version" "api" {\n  secret_id = "prod/api/token"\n}\n')

@N
def n_gha():
    return f"src/{app()}/.github/workflows/release.yml", ("name: release\non:\n  push:\n    tags: ['v*']\njobs:\n  publish:\n    runs-on: ubuntu-latest\n    steps:\n"
                                                          "      - uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11\n"
                                                          "      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n"
                                                          "      - uses: docker/login-action@v3\n        with:\n          username: ${{ github.actor }}\n          password: ${{ secrets.GITHUB_TOKEN }}\n")

@N
def n_npmrc_env():
    return '.npmrc', "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n@" + comp() + ":registry=https://npm.pkg.github.com\nfund=false\n"

@N
def n_pypirc_nopw():
    return '.pypirc', "[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[pypi]\nusername = __token__\n# password comes from keyring\n\n[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = __token__\n"

@N
def n_netrc_example():
    return 'notes/netrc.example', "machine example.com\n  login YOUR_USERNAME\n  password YOUR_PASSWORD\n"

@N
def n_history_benign():
    cmds = ['mysql -u root -p', 'read -s PASSWORD', 'export TOKEN=$(vault kv get -field=token secret/ci)',
            'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/me', 'sshpass -f ~/.sshpass ssh pi@raspberrypi',
            f'psql -h {dbhost()} -U {user()} {app()}', 'docker login ghcr.io -u me --password-stdin < ~/.ghcr_token',
            'git clone git@github.com:torvalds/linux.git', 'ssh-keygen -t ed25519 -C "me@laptop"', 'gpg --full-generate-key',
            'aws configure sso', 'pass show email/gmail', 'kubectl create secret generic db --from-file=./password.txt',
            'openssl rand -hex 32 > ~/.config/app/secret', 'export GITHUB_TOKEN=$(gh auth token)', 'echo $API_KEY | wc -c']
    cmds = R.sample(cmds, 8) + [filler() for _ in range(10)]
    R.shuffle(cmds)
    kind = ch(['bash', 'zsh'])
    if kind == 'bash':
        return '.bash_history', '\n'.join(cmds) + '\n'
    t = ts()
    return '.zsh_history', ''.join(f": {t + i * 37}:0;{c}\n" for i, c in enumerate(cmds))

@N
def n_kube_exec():
    return '.kube/config', kubeconfig(f"    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args:\n"
                                      f"        - eks\n        - get-token\n        - --cluster-name\n        - {comp()}-{ch(ENVS)}\n", f"{comp()}-eks")

@N
def n_kube_cert_only():
    crt = b64(pem('CERTIFICATE', cert_der()).encode())
    return '.kube/config-readonly', kubeconfig(f"    client-certificate-data: {crt}\n    client-key: /home/me/.minikube/profiles/minikube/client.key\n", 'minikube')

@N
def n_docker_credstore():
    return '.docker/config.json', json.dumps({"auths": {"https://index.docker.io/v1/": {}, "ghcr.io": {}}, "credsStore": "desktop",
                                              "currentContext": "default", "plugins": {"-x-cli-hints": {"enabled": "true"}}}, indent='\t') + '\n'

@N
def n_gh_hosts_keyring():
    return '.config/gh/hosts.yml', f"github.com:\n    users:\n        {user()}:\n    git_protocol: ssh\n    user: {user()}\n"

@N
def n_rclone_env():
    return '.config/rclone/rclone.conf', "[s3]\ntype = s3\nprovider = AWS\nenv_auth = true\nregion = eu-west-1\n\n[gdrive]\ntype = drive\nscope = drive.readonly\n"

@N
def n_gcp_external():
    p = proj()
    d = {"type": "external_account", "audience": f"//iam.googleapis.com/projects/{ri(10**11, 10**12)}/locations/global/workloadIdentityPools/github/providers/github",
         "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": "https://sts.googleapis.com/v1/token",
         "service_account_impersonation_url": f"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/deployer@{p}.iam.gserviceaccount.com:generateAccessToken",
         "credential_source": {"file": "/var/run/secrets/tokens/gcp-ksa/token", "format": {"type": "text"}}}
    return f"infra/gcp/wif-credentials.json", json.dumps(d, indent=2) + '\n'

@N
def n_gcloud_config():
    return '.config/gcloud/configurations/config_default', f"[core]\naccount = {email()}\nproject = {proj()}\n\n[compute]\nzone = europe-west1-b\nregion = europe-west1\n"

@N
def n_stripe_pk():
    return f"src/{app()}-web/src/stripe.js", f"import {{ loadStripe }} from '@stripe/stripe-js';\n\nexport const stripePromise = loadStripe('pk_live_{rs(99)}');\n"

@N
def n_twilio_sid():
    return f"src/{app()}/twilio.yaml", f"account_sid: AC{rhex(32)}\nmessaging_service_sid: MG{rhex(32)}\nauth_token_env: TWILIO_AUTH_TOKEN\n"

@N
def n_gitconfig():
    return '.gitconfig', (f"[user]\n\tname = {ch(FIRST)} {rs(6, LO).capitalize()}\n\temail = {email()}\n\tsigningkey = {rhex(16).upper()}\n"
                          "[commit]\n\tgpgsign = true\n[credential]\n\thelper = osxkeychain\n[alias]\n\tlg = log --graph --oneline\n")

@N
def n_gpgconf():
    return '.gnupg/gpg.conf', f"default-key {rhex(40).upper()}\nkeyid-format 0xlong\nwith-fingerprint\npersonal-digest-preferences SHA512\n"

@N
def n_vscode():
    return '.config/Code/User/settings.json', json.dumps({"editor.fontFamily": "JetBrains Mono", "telemetry.telemetryLevel": "off",
                                                         "workbench.colorTheme": "One Dark Pro", "remote.SSH.remotePlatform": {"bastion": "linux"},
                                                         "sqltools.connections": [{"name": "local", "driver": "PostgreSQL", "server": "localhost",
                                                                                   "askForPassword": True, "username": "postgres"}]}, indent=4) + '\n'

@N
def n_crontab():
    return 'crontab.txt', ("# m h dom mon dow command\n0 3 * * * /home/me/bin/backup.sh >> /home/me/logs/backup.log 2>&1\n"
                           "*/15 * * * * /usr/bin/flock -n /tmp/sync.lock rclone sync ~/Documents nas:docs\n")

@N
def n_maven_env():
    return '.m2/settings.xml', ("<settings>\n  <servers>\n    <server>\n      <id>ossrh</id>\n      <username>${env.OSSRH_USERNAME}</username>\n"
                                "      <password>${env.OSSRH_PASSWORD}</password>\n    </server>\n  </servers>\n</settings>\n")

@N
def n_spring_env():
    return f"src/{app()}-service/src/main/resources/application.properties", ("spring.datasource.url=${DB_URL}\nspring.datasource.username=${DB_USER}\n"
                                                                              "spring.datasource.password=${DB_PASSWORD}\njwt.secret=${JWT_SECRET:}\nmanagement.endpoints.web.exposure.include=health\n")

@N
def n_wp_sample():
    return f"www/{comp()}-blog/wp-config-sample.php", ("<?php\ndefine( 'DB_NAME', 'database_name_here' );\ndefine( 'DB_USER', 'username_here' );\n"
                                                      "define( 'DB_PASSWORD', 'password_here' );\ndefine( 'AUTH_KEY',         'put your unique phrase here' );\n"
                                                      "define( 'SECURE_AUTH_KEY',  'put your unique phrase here' );\n")

@N
def n_django_environ():
    return f"src/{app()}/{app()}/settings.py", ("import environ\nenv = environ.Env()\n\nSECRET_KEY = env('DJANGO_SECRET_KEY')\nDEBUG = env.bool('DEBUG', False)\n"
                                                "DATABASES = {'default': env.db('DATABASE_URL')}\nAUTH_PASSWORD_VALIDATORS = [\n"
                                                "    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator', 'OPTIONS': {'min_length': 12}},\n]\n")

@N
def n_crypto_addrs():
    return 'notes/donations.md', (f"BTC: bc1q{rs(38, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l')}\nETH: 0x{rhex(40)}\n"
                                  f"Tor mirror: http://{rs(56, LO + '234567')}.onion/\nIPFS: Qm{rs(44, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz')}\n")

@N
def n_slack_ids():
    return 'notes/slack.md', f"#ops channel id: C{rs(10, UP + DG)}\nmy user id: U{rs(10, UP + DG)}\nworkspace: T{rs(8, UP + DG)}\nbot app id: A{rs(10, UP + DG)}\n"

@N
def n_sql_schema():
    return f"src/{app()}/migrations/0001_init.sql", ("CREATE TABLE users (\n  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),\n  email TEXT NOT NULL UNIQUE,\n"
                                                     "  password_hash VARCHAR(255) NOT NULL,\n  api_token_digest CHAR(64),\n  reset_token_expires_at TIMESTAMPTZ\n);\n"
                                                     f"INSERT INTO settings (id, name) VALUES ('{ruuid()}', 'default');\n")

@N
def n_i18n():
    return f"src/{app()}-web/locales/fr.json", json.dumps({"password": "Mot de passe", "forgot_password": "Mot de passe oublié ?",
                                                            "token_expired": "Votre jeton a expiré", "api_key": "Clé API", "secret": "Secret"},
                                                           indent=2, ensure_ascii=False) + '\n'

@N
def n_empty_values():
    return f".config/{app()}/config.yaml", 'smtp:\n  host: smtp.example.com\n  user: ""\n  password: ""\napi:\n  token: null\n  secret: ~\nproxy_password:\n'

@N
def n_masked():
    return f"notes/incident-{ri(100, 999)}.md", ("## Incident\n\nLeaked config (already rotated):\n\n    DB_PASSWORD=********\n    API_KEY=<redacted>\n"
                                                 "    token: [REDACTED]\n    secret_key: '***'\n")

@N
def n_helm_template():
    return f"charts/{app()}/templates/secret.yaml", ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ include \"app.fullname\" . }}\ntype: Opaque\n"
                                                    "stringData:\n  password: {{ .Values.db.password | quote }}\n  api-key: {{ required \"apiKey\" .Values.apiKey }}\n")

@N
def n_jinja():
    return 'ansible/roles/app/templates/app.conf.j2', "[db]\nhost = {{ db_host }}\npassword = {{ vault_db_password }}\n\n[api]\ntoken = {{ lookup('env', 'API_TOKEN') }}\n"

@N
def n_keyfile_paths():
    return 'homelab/nginx/site.conf', (f"server {{\n  listen 443 ssl;\n  server_name {app()}.{comp()}.com;\n  ssl_certificate /etc/letsencrypt/live/{comp()}.com/fullchain.pem;\n"
                                       f"  ssl_certificate_key /etc/letsencrypt/live/{comp()}.com/privkey.pem;\n  auth_basic_user_file /etc/nginx/.htpasswd;\n}}\n")

@N
def n_http_dump():
    return 'notes/http-debug.txt', (f"HTTP/2 200\ncontent-type: application/json\netag: \"{rhex(40)}\"\nx-request-id: {ruuid()}\n"
                                    f"x-amz-cf-id: {rs(56, URLS)}==\ncache-control: max-age=300\nset-cookie: theme=dark; Path=/\n")

@N
def n_sourcemap():
    m = ';'.join(','.join(rs(ri(4, 6), ALNUM + '+/') for _ in range(ri(3, 8))) for _ in range(20))
    return f"src/{app()}-web/dist/main.{rhex(8)}.js.map", json.dumps({"version": 3, "file": "main.js", "sources": ["../src/index.ts"], "names": [], "mappings": m}) + '\n'

@N
def n_test_vectors():
    return f"src/{app()}/tests/test_hash.py", ("import hashlib\n\ndef test_sha256():\n    assert hashlib.sha256(b'abc').hexdigest() == "
                                               "'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'\n\n"
                                               "def test_md5():\n    assert hashlib.md5(b'').hexdigest() == 'd41d8cd98f00b204e9800998ecf8427e'\n")

@N
def n_readme_prose():
    return f"src/{app()}/docs/login.md", ("# Logging in\n\nEnter your password when prompted. If you forgot your password, use the reset link.\n"
                                          "API tokens can be created under Settings -> Tokens. Never commit your secret key.\n"
                                          "Passwords must be at least 12 characters.\n")

@N
def n_env_table():
    return f"src/{app()}/docs/configuration.md", ("| Variable | Description |\n|---|---|\n| `AWS_SECRET_ACCESS_KEY` | AWS secret key |\n"
                                                  "| `SECRET_KEY_BASE` | Rails secret |\n| `DB_PASSWORD` | database password |\n| `SLACK_WEBHOOK_URL` | alerts |\n")

@N
def n_webpack_manifest():
    return f"src/{app()}-web/dist/manifest.json", json.dumps({f"{n}.js": f"/static/js/{n}.{rhex(20)}.js" for n in ['main', 'vendor', 'runtime']} |
                                                             {"main.css": f"/static/css/main.{rhex(8)}.css"}, indent=2) + '\n'

@N
def n_jwks():
    return f"src/{app()}/jwks.json", json.dumps({"keys": [{"kty": "RSA", "use": "sig", "kid": rs(43, URLS), "alg": "RS256", "e": "AQAB",
                                                           "n": b64u(bigint(256))}]}, indent=2) + '\n'

@N
def n_oci_config():
    return '.oci/config', (f"[DEFAULT]\nuser=ocid1.user.oc1..{rs(60, LO + DG)}\nfingerprint={':'.join(rhex(2) for _ in range(16))}\n"
                           f"tenancy=ocid1.tenancy.oc1..{rs(60, LO + DG)}\nregion=eu-frankfurt-1\nkey_file=~/.oci/oci_api_key.pem\n")

@N
def n_aws_config():
    return '.aws/config', (f"[default]\nregion = eu-west-1\noutput = json\n\n[profile {comp()}-admin]\nsso_start_url = https://{comp()}.awsapps.com/start\n"
                           f"sso_region = eu-west-1\nsso_account_id = {ri(10**11, 10**12 - 1)}\nsso_role_name = AdministratorAccess\n\n"
                           f"[profile ci]\ncredential_process = aws-vault exec ci --json\nrole_arn = arn:aws:iam::{ri(10**11, 10**12 - 1)}:role/ci\n")

@N
def n_xxd():
    d = rb(96)
    return 'notes/hexdump.txt', ''.join(f"{i:08x}: " + ' '.join(d[i + j:i + j + 2].hex() for j in range(0, 16, 2)) + "  ................\n" for i in range(0, 96, 16))

@N
def n_tf_lock_flake2():
    return f"src/{app()}-web/pnpm-lock.yaml", "lockfileVersion: '6.0'\n\npackages:\n" + ''.join(
        f"\n  /{n}@1.{ri(0, 9)}.0:\n    resolution: {{integrity: sha512-{b64(rb(64))}}}\n    dev: false\n" for n in ['zod', 'clsx', 'dayjs'])

@N
def n_pwgen_script():
    return 'bin/pwgen.py', ("import secrets, string\n\nALPHABET = string.ascii_letters + string.digits + '!@#$%^&*'\n"
                            "CHARSET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'\n\n"
                            "def generate(n=20):\n    return ''.join(secrets.choice(ALPHABET) for _ in range(n))\n\nif __name__ == '__main__':\n    print(generate())\n")

@N
def n_commented_template():
    return f".config/{app()}/config.toml.example", "[auth]\n# token = \"<paste your token here>\"\n# password = \"<set me>\"\nmethod = \"oauth\"\n"

@N
def n_sshkeygen_output():
    return 'notes/new-key.txt', (f"Your identification has been saved in /home/me/.ssh/id_ed25519\nYour public key has been saved in /home/me/.ssh/id_ed25519.pub\n"
                                 f"The key fingerprint is:\nSHA256:{b64(rb(32)).rstrip('=')} me@laptop\nThe key's randomart image is:\n+--[ED25519 256]--+\n|   .o+=*.        |\n+----[SHA256]-----+\n")

@N
def n_gpg_list():
    return 'notes/gpg-keys.txt', (f"pub   ed25519 2023-01-10 [SC] [expires: 2026-01-09]\n      {rhex(40).upper()}\nuid           [ultimate] {ch(FIRST)} <{email()}>\n"
                                  f"sub   cv25519 2023-01-10 [E] [expires: 2026-01-09]\n")

@N
def n_wg_peer_public():
    return 'vpn/peers.md', (f"# WireGuard peers\n\n| name | public key | ip |\n|---|---|---|\n" +
                            ''.join(f"| {n} | {wg_key()} | 10.8.0.{i + 2} |\n" for i, n in enumerate(['phone', 'laptop', 'nas'])))

@N
def n_sshd_config():
    return 'backup/etc/ssh/sshd_config', "Port 22\nPermitRootLogin no\nPasswordAuthentication no\nPubkeyAuthentication yes\nAuthorizedKeysFile .ssh/authorized_keys\nHostKey /etc/ssh/ssh_host_ed25519_key\n"

@N
def n_mac_ipv6():
    return 'notes/network.txt', (f"nas: {':'.join(rhex(2) for _ in range(6))}  {ip()}\nrouter: {':'.join(rhex(2) for _ in range(6))}\n"
                                 f"ipv6 prefix: 2001:db8:{rhex(4)}:{rhex(4)}::/64\nlink-local: fe80::{rhex(4)}:{rhex(4)}:{rhex(4)}:{rhex(4)}\n")

@N
def n_rails_credentials_enc():
    return f"src/{app()}/config/credentials.yml.enc", f"{b64(rb(ri(200, 400)))}--{b64(rb(12))}--{b64(rb(16))}"

@N
def n_lorem():
    return 'notes/draft.md', ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. Secretum non est. The token ring network was "
                              "replaced in 1998. Keyboard shortcuts: Ctrl+Shift+P opens the command palette.\n")

@N
def n_requests_ids():
    return 'logs/app.log', ''.join(f"2024-04-0{ri(1, 9)}T1{ri(0, 9)}:00:00Z INFO request_id={ruuid()} trace_id={rhex(32)} span_id={rhex(16)} "
                                   f"user_id={ri(1000, 99999)} path=/api/v1/{ch(['items', 'orders', 'login'])} status=200 duration_ms={ri(3, 400)}\n" for _ in range(8))

@N
def n_git_packed_refs():
    return f"src/{app()}/.git-refs-backup.txt", "# pack-refs with: peeled fully-peeled sorted\n" + ''.join(
        f"{rhex(40)} refs/{ch(['heads', 'remotes/origin', 'tags'])}/{ch(['main', 'develop', 'v1.2.0', 'feature/token-refresh'])}\n" for _ in range(6))

@N
def n_firebase_public():
    return f"src/{app()}-web/.firebaserc", json.dumps({"projects": {"default": proj()}, "targets": {}, "etags": {}}, indent=2) + '\n'

@N
def n_pgpass_wildcard():
    return 'notes/pgpass-howto.md', "Format of ~/.pgpass:\n\n    hostname:port:database:username:password\n\nExample: `localhost:5432:*:postgres:<password>`\n"

@N
def n_mycnf_nopw():
    return '.my.cnf', "[client]\nuser=me\nhost=127.0.0.1\nprompt=\\u@\\h [\\d]>\\_\n\n[mysql]\nno-auto-rehash\npager=less -SFX\n"

@N
def n_tokens_prefix_only():
    return f"src/{app()}/lib/token_formats.py", ("TOKEN_PREFIXES = {\n    'github': ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'),\n"
                                                 "    'slack': ('xoxb-', 'xoxp-', 'xapp-'),\n    'stripe': ('sk_live_', 'rk_live_'),\n    'gitlab': ('glpat-',),\n}\n"
                                                 "AWS_KEY_RE = r'(AKIA|ASIA)[A-Z2-7]{16}'\n")

@N
def n_base64_json():
    return f"notes/{ch(['debug', 'scratch'])}.txt", ("decoded jwt header for ticket:\n" + b64(json.dumps({"alg": "RS256", "typ": "JWT"}).encode()) +
                                                    "\n\nbase64 of the config:\n" + b64(json.dumps({"theme": "dark", "lang": "en", "items": list(range(12))}).encode()) + "\n")

@N
def n_uuid_ids_yaml():
    return f"homelab/home-assistant/automations.yaml", ''.join(f"- id: '{ri(10**12, 10**13)}'\n  alias: {ch(['Lights off', 'Heating on', 'Notify door'])}\n"
                                                                f"  trigger:\n    - platform: device\n      device_id: {rhex(32)}\n      entity_id: {ruuid()}\n" for _ in range(3))

@N
def n_ini_nosecret():
    return f".config/{app()}/{app()}.conf", f"[server]\nhost = 0.0.0.0\nport = 8080\nworkers = 4\n\n[auth]\nmethod = oidc\nissuer = https://auth.{comp()}.com\nclient_id = {app()}-web\nscopes = openid profile email\n"

@N
def n_dotenv_nonsecret():
    return f"src/{app()}/.env", (f"NODE_ENV=development\nPORT=3000\nLOG_LEVEL=debug\nPUBLIC_URL=http://localhost:3000\nSENTRY_ENVIRONMENT=dev\n"
                                 f"FEATURE_FLAGS=new_checkout,dark_mode\nBUILD_ID={rhex(12)}\nTZ=UTC\n")


# -- harder look-alikes: key-ish names / encrypted-by-design / public tokens
@N
def n_keyish_names():
    return f"src/{app()}/config/app.yaml", (f"cache:\n  cache_key: v2-deps-{rhex(40)}\n  key_prefix: {app()}:\n"
                                            f"payments:\n  idempotency_key_header: Idempotency-Key\n  key_id: {rhex(16)}\n"
                                            f"auth:\n  token_endpoint: https://auth.{comp()}.com/oauth2/token\n  secret_name: {ch(ENVS)}/{app()}/db-creds\n"
                                            f"  password_reset_url: https://{app()}.{comp()}.com/reset\n  api_key_header: X-API-Key\n  token_ttl_seconds: 3600\n"
                                            f"ml:\n  tokenizer: bert-base-uncased\n  public_key: {b64(rb(32))}\n")

@N
def n_vapid_public():
    k = b64u(b'\x04' + rb(64))
    return f"src/{app()}-web/src/push.ts", f"// VAPID public key (the private key lives in the server's secret store)\nexport const applicationServerKey = '{k}';\n"

@N
def n_mapbox_public():
    tok = 'pk.' + b64u(json.dumps({"u": user(), "a": rs(25, LO + DG)}, separators=(',', ':')).encode()) + '.' + rs(22, URLS)
    return f"src/{app()}-web/src/map.js", f"import mapboxgl from 'mapbox-gl';\nmapboxgl.accessToken = '{tok}';\n"

@N
def n_build_ids_env():
    return f"src/{app()}/.env.build", (f"GIT_SHA={rhex(40)}\nBUILD_HASH={rhex(12)}\nIMAGE_DIGEST=sha256:{rhex(64)}\nARTIFACT_CHECKSUM={rhex(64)}\n"
                                       f"SENTRY_RELEASE={app()}@{rhex(7)}\nNEXT_PUBLIC_GA_ID=G-{rs(10, UP + DG)}\nCORRELATION_ID={ruuid()}\n")

@N
def n_package_json():
    return f"src/{app()}-api/package.json", json.dumps({"name": app(), "version": "1.4.2", "dependencies": {"jsonwebtoken": "^9.0.2", "passport-jwt": "^4.0.1",
                                                        "@aws-sdk/credential-provider-ini": "^3.540.0", "bcryptjs": "^2.4.3", "dotenv": "^16.4.5"},
                                                        "scripts": {"start": "node dist/index.js", "secrets:pull": "doppler secrets download --no-file"}}, indent=2) + '\n'

@N
def n_expect_script():
    return 'bin/router-login.exp', ('#!/usr/bin/expect -f\nset timeout 10\nspawn ssh admin@192.168.1.1\nexpect "Password:"\nsend "$env(ROUTER_PASS)\\r"\n'
                                    'expect "#"\nsend "show version\\r"\ninteract\n')

@N
def n_keepass_cfg():
    return '.config/keepassxc/keepassxc.ini', ("[General]\nConfigVersion=2\nLastDatabases=/home/me/Documents/passwords.kdbx\nLastKeyFiles=@Variant(\\0\\0\\0\\x1c\\0\\0\\0\\0)\n"
                                               "\n[Security]\nClearClipboardTimeout=10\nLockDatabaseIdleSeconds=300\n")

@N
def n_shell_subst():
    return f"src/{app()}/deploy.env", ("DB_PASSWORD=${DB_PASSWORD:?required}\nAPI_KEY=$(cat /run/secrets/api_key)\nTOKEN=`pass show ci/token`\n"
                                       "SECRET_KEY=\"$(openssl rand -hex 32)\"\nGITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}\n")

@N
def n_bearer_code():
    return f"src/{app()}/client.py", ("import requests\n\nclass Client:\n    def __init__(self, token: str):\n        self.session = requests.Session()\n"
                                      "        self.session.headers['Authorization'] = f'Bearer {token}'\n\n    def login(self, username, password):\n"
                                      "        return self.session.post('/login', json={'username': username, 'password': password})\n")

@N
def n_sealed_secret():
    return f"k8s/{app()}/sealedsecret.yaml", (f"apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: {app()}-db\nspec:\n  encryptedData:\n"
                                             f"    password: Ag{b64(rb(ri(300, 400)))}\n    api_key: Ag{b64(rb(ri(300, 400)))}\n")

@N
def n_sops_file():
    enc = lambda n: f"ENC[AES256_GCM,data:{b64(rb(n))},iv:{b64(rb(32))},tag:{b64(rb(16))},type:str]"
    return f"infra/secrets/{ch(ENVS)}.enc.yaml", (f"db_password: {enc(18)}\napi_token: {enc(30)}\nsops:\n    age:\n        - recipient: {age_public()}\n"
                                                  f"          enc: |\n            -----BEGIN AGE ENCRYPTED FILE-----\n            {b64(rb(48))}\n            -----END AGE ENCRYPTED FILE-----\n"
                                                  f"    lastmodified: \"2024-04-02T10:11:12Z\"\n    mac: {enc(32)}\n    version: 3.8.1\n")

@N
def n_sops_config():
    return f"infra/.sops.yaml", "creation_rules:\n" + ''.join(f"  - path_regex: {e}/.*\\.yaml$\n    age: {age_public()}\n" for e in ENVS[:3])

@N
def n_ssh_cert_pub():
    blob = sshstr('ssh-ed25519-cert-v01@openssh.com') + sshstr(rb(32)) + sshstr(rb(32)) + rb(120) + ssh_ed25519_pub_blob() + sshstr(rb(83))
    return '.ssh/id_ed25519-cert.pub', f"ssh-ed25519-cert-v01@openssh.com {b64(blob)} {user()}@laptop\n"

@N
def n_html_form():
    return f"www/{comp()}-blog/login.html", ('<form method="post" action="/login">\n  <input type="text" name="username" autocomplete="username">\n'
                                            '  <input type="password" name="password" placeholder="Password" minlength="12">\n'
                                            f'  <input type="hidden" name="form_id" value="{rhex(32)}">\n  <button>Sign in</button>\n</form>\n')

@N
def n_fixture_hashes():
    return f"src/{app()}/tests/fixtures/users.json", json.dumps([{"id": ruuid(), "email": email(), "password_hash": bcrypt(),
                                                                  "avatar_sha1": rhex(40), "api_key_prefix": rs(8)} for _ in range(3)], indent=2) + '\n'


# ===================================================================== main
def find_line(content, marker):
    for i, l in enumerate(content.splitlines(), 1):
        if marker in l:
            return i, l
    # marker may be split across PEM lines: fall back to the first 20 chars
    for i, l in enumerate(content.splitlines(), 1):
        if marker[:20] in l:
            return i, l
    return None, None


def main():
    global R
    seed = int(sys.argv[1])
    root = sys.argv[2] if len(sys.argv) > 2 else '/tmp/blind'
    R = random.Random(seed)
    out = os.path.join(root, f"out_{seed}")
    if os.path.exists(out): shutil.rmtree(out)
    manifest = []
    for kind, gens in (('pos', POS), ('neg', NEG)):
        for i, g in enumerate(gens, 1):
            r = g()
            rel, content = r[0], r[1]
            d = os.path.join(out, kind, f"{i:03d}")
            path = os.path.join(d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f: f.write(content)
            e = {'kind': kind, 'gen': g.__name__, 'path': path}
            if kind == 'pos':
                e['secret'] = r[2]
                e['line_no'], e['line'] = find_line(content, r[2])
                assert e['line_no'], (g.__name__, r[2])
            manifest.append(e)
    with open(out + '.manifest.json', 'w') as f: json.dump(manifest, f, indent=1)
    print(f"seed {seed}: {len(POS)} positives, {len(NEG)} look-alikes -> {out}")


if __name__ == '__main__':
    main()

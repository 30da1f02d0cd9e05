#!/usr/bin/env python3
"""Blind secret-scanner corpus generator.

usage: python3 gen.py SEED
writes /tmp/blind3/out_SEED/{pos,neg}/NNN/<home-relative path> and
/tmp/blind3/out_SEED/manifest.json  (one entry per file: kind, id, file, label,
value (secret as it appears in the file, positives only), line, line_text).
All secrets are random, generated in their real formats; none is a real key.
"""
import base64, datetime, hashlib, json, os, random, shutil, string, sys, uuid, zlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 7
R = random.Random(SEED)
OUT = f"/tmp/blind3/out_{SEED}"

UP, LO, DI = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DI
B62 = DI + UP + LO
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
CRYPT64 = "./" + DI + UP + LO
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
B32L = "abcdefghijklmnopqrstuvwxyz234567"


def rs(n, alpha=ALNUM):
    return "".join(R.choice(alpha) for _ in range(n))


def hx(n):
    return rs(n, HEX)


def rb(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64(n):
    return base64.b64encode(rb(n)).decode()


def b64np(n):
    return b64(n).rstrip("=")


def b64u(n):
    return base64.urlsafe_b64encode(rb(n)).decode().rstrip("=")


def ruuid():
    return str(uuid.UUID(bytes=rb(16), version=4))


def b64e(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def b64u_json(o):
    return base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).decode().rstrip("=")


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


def pick(*a):
    return R.choice(a)


PROJECTS = ["acme-api", "billing-svc", "atlas", "orion-web", "ledger", "harbor", "kestrel", "nimbus",
            "pipeline", "shopfront", "telemetry", "warden", "lighthouse", "quill"]


def proj():
    return R.choice(PROJECTS)


def ts(base=1700000000, span=20000000):
    return base + R.randint(0, span)


def isodate():
    d = datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=R.randint(0, 300 * 86400))
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------- secret formats
def base62(n):
    s = ""
    while n:
        n, r = divmod(n, 62)
        s = B62[r] + s
    return s or "0"


def gh_style(prefix):
    body = rs(30)
    return prefix + body + base62(zlib.crc32(body.encode()) & 0xffffffff).rjust(6, "0")


def aws_akid():
    return pick("AKIA", "AKIA", "ASIA") + rs(16, UP + "234567")


def aws_secret():
    return rs(40, B64)


def password(kind=None, safe="!%*-_.+"):
    kind = kind or pick("rand", "rand", "human")
    if kind == "rand":
        while True:
            p = rs(R.randint(14, 22), ALNUM + safe)
            if any(c in DI for c in p) and any(c in UP for c in p) and any(c in LO for c in p):
                return p
    w = ["Falcon", "Harbor", "Maple", "Copper", "Orbit", "Velvet", "Summit", "Cobalt", "Juniper", "Tundra",
         "Saffron", "Quartz", "Marble", "Pepper", "Lantern"]
    return R.choice(w) + pick("-", "_", ".", "") + R.choice(w).lower() + str(R.randint(10, 9999)) + pick("!", "%", "*", "")


def jwt():
    h = b64u_json({"alg": pick("HS256", "RS256"), "typ": "JWT"})
    now = ts()
    p = b64u_json({"sub": ruuid(), "iss": pick("https://auth.acme-corp.io/", "api.internal"), "iat": now,
                   "exp": now + 86400 * 30, "scope": pick("read write", "admin", "api:full")})
    return f"{h}.{p}.{b64u(32 if 'HS' in h else 256)}"


TOKENS = {
    "github_classic": lambda: gh_style(pick("ghp_", "gho_", "ghs_")),
    "github_fine": lambda: "github_pat_11" + rs(20, UP + DI) + "_" + rs(59),
    "gitlab": lambda: "glpat-" + rs(20, ALNUM + "-_"),
    "slack_bot": lambda: f"xoxb-{R.randint(10**10, 10**12)}-{R.randint(10**12, 10**13)}-{rs(24)}",
    "slack_user": lambda: f"xoxp-{R.randint(10**10, 10**12)}-{R.randint(10**10, 10**12)}-{R.randint(10**12, 10**13)}-{hx(32)}",
    "stripe": lambda: pick("sk_live_51", "rk_live_51") + rs(97),
    "openai": lambda: "sk-proj-" + rs(74, B64URL) + "T3BlbkFJ" + rs(74, B64URL),
    "anthropic": lambda: "sk-ant-api03-" + rs(93, B64URL) + "AA",
    "sendgrid": lambda: "SG." + rs(22, B64URL) + "." + rs(43, B64URL),
    "npm": lambda: gh_style("npm_"),
    "huggingface": lambda: "hf_" + rs(34, UP + LO),
    "digitalocean": lambda: "dop_v1_" + hx(64),
    "shopify": lambda: "shpat_" + hx(32),
    "twilio_key": lambda: "SK" + hx(32),
    "mailgun": lambda: "key-" + hx(32),
    "telegram": lambda: f"{R.randint(10**8, 10**10)}:AA{rs(33, B64URL)}",
    "dockerhub": lambda: "dckr_pat_" + rs(27, B64URL),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + rs(160, B64URL),
    "google_api": lambda: "AIza" + rs(35, B64URL),
    "jwt": jwt,
    "datadog": lambda: hx(32),
    "linear": lambda: "lin_api_" + rs(40),
    "vault": lambda: "hvs." + rs(90, B64URL),
}


def token(kind=None):
    kind = kind or R.choice(list(TOKENS))
    return kind, TOKENS[kind]()


# --- private keys (deterministic from the seed)
SMALL_PRIMES = [p for p in range(3, 3000) if all(p % q for q in range(2, int(p ** .5) + 1))]


def is_probable_prime(n):
    for p in SMALL_PRIMES:
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


def gen_prime(bits):
    while True:
        c = R.getrandbits(bits) | (3 << (bits - 2)) | 1
        if (c - 1) % 65537 and is_probable_prime(c):
            return c


def rsa_key(bits=2048):
    p, q = gen_prime(bits // 2), gen_prime(bits // 2)
    n, e = p * q, 65537
    d = pow(e, -1, (p - 1) * (q - 1))
    return rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q),
                                 rsa.rsa_crt_iqmp(p, q), rsa.RSAPublicNumbers(e, n)).private_key()


def ec_key():
    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    return ec.derive_private_key(R.randrange(1, order), ec.SECP256R1())


def ed_key():
    return ed25519.Ed25519PrivateKey.from_private_bytes(rb(32))


def pem_private(kind=None):
    kind = kind or pick("rsa", "ec", "ed_openssh", "pkcs8_ec", "rsa_pkcs8")
    NE = serialization.NoEncryption()
    E = serialization.Encoding.PEM
    if kind == "rsa":
        return rsa_key().private_bytes(E, serialization.PrivateFormat.TraditionalOpenSSL, NE).decode()
    if kind == "rsa_pkcs8":
        return rsa_key().private_bytes(E, serialization.PrivateFormat.PKCS8, NE).decode()
    if kind == "ec":
        return ec_key().private_bytes(E, serialization.PrivateFormat.TraditionalOpenSSL, NE).decode()
    if kind == "pkcs8_ec":
        return ec_key().private_bytes(E, serialization.PrivateFormat.PKCS8, NE).decode()
    return ed_key().private_bytes(E, serialization.PrivateFormat.OpenSSH, NE).decode()


# ---------------------------------------------------------------- public look-alike formats
def bcrypt_h():
    return f"$2{pick('a', 'b', 'y')}${pick('10', '12', '12', '14')}$" + rs(53, CRYPT64)


def argon2_h():
    return f"$argon2{pick('id', 'id', 'i')}$v=19$m={pick('65536', '19456', '47104')},t={R.randint(2, 4)},p={pick('1', '4')}${b64np(16)}${b64np(32)}"


def sha512crypt_h():
    return f"$6${'rounds=5000$' if R.random() < .3 else ''}{rs(16, CRYPT64)}${rs(86, CRYPT64)}"


def yescrypt_h():
    return f"$y$j9T${rs(22, CRYPT64)}${rs(43, CRYPT64)}"


def pbkdf2_h():
    return pick(f"pbkdf2_sha256${pick('600000', '720000', '260000')}${rs(22)}${b64(32)}",
                f"$pbkdf2-sha512$25000${b64np(16).replace('+', '.')}${b64np(64).replace('+', '.')}")


def scrypt_h():
    return pick(f"$scrypt$ln=16,r=8,p=1${b64np(16)}${b64np(32)}", f"$7$C6..../....{rs(16, CRYPT64)}${rs(43, CRYPT64)}")


def any_hash():
    return R.choice([bcrypt_h, argon2_h, sha512crypt_h, yescrypt_h, pbkdf2_h, scrypt_h])()


def gclient_id():
    return f"{R.randint(10**11, 10**12)}-{rs(32, LO + DI)}.apps.googleusercontent.com"


def sha1():
    return hx(40)


def sha256h():
    return hx(64)


def sri(alg="sha512", n=64):
    return f"{alg}-{b64(n)}"


def ssh_pub(kind=None):
    kind = kind or pick("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256")

    def s(b):
        return len(b).to_bytes(4, "big") + b
    if kind == "ssh-ed25519":
        blob = s(b"ssh-ed25519") + s(rb(32))
    elif kind == "ssh-rsa":
        blob = s(b"ssh-rsa") + s(b"\x01\x00\x01") + s(b"\x00" + bytes([0xc0 | R.getrandbits(6)]) + rb(383))
    else:
        blob = s(b"ecdsa-sha2-nistp256") + s(b"nistp256") + s(b"\x04" + rb(64))
    return kind, base64.b64encode(blob).decode()


def armor(kind, body_bytes, headers=""):
    body = base64.b64encode(body_bytes).decode()
    crc = base64.b64encode(rb(3)).decode()
    return f"-----BEGIN {kind}-----\n{headers}\n{wrap(body)}\n={crc}\n-----END {kind}-----\n"


def b58check_like(prefix_char, n):
    return prefix_char + rs(n, B58)


def bech32_addr():
    CH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    data = [R.randrange(32) for _ in range(33)]

    def polymod(values):
        GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
        chk = 1
        for v in values:
            b = chk >> 25
            chk = (chk & 0x1ffffff) << 5 ^ v
            for i in range(5):
                chk ^= GEN[i] if ((b >> i) & 1) else 0
        return chk
    hrp = "bc"
    dd = [0] + data[:32]
    exp = [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]
    pm = polymod(exp + dd + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(CH[d] for d in dd + chk)


def certs_chain():
    now = datetime.datetime(2024, 5, 1)
    keys = [ec_key() for _ in range(3)]
    names = [x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme Corp")])
             for cn in ("Acme Root CA R1", "Acme Issuing CA 2", f"{proj()}.acme-corp.io")]
    out = []
    for i in range(3):
        issuer = names[max(i - 1, 0)]
        b = (x509.CertificateBuilder().subject_name(names[i]).issuer_name(issuer)
             .public_key(keys[i].public_key()).serial_number(R.getrandbits(120))
             .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=365 * (10 if i < 2 else 1)))
             .add_extension(x509.BasicConstraints(ca=i < 2, path_length=None), critical=True))
        c = b.sign(keys[max(i - 1, 0)], hashes.SHA256())
        out.append(c.public_bytes(serialization.Encoding.PEM).decode())
    return out[::-1]


# ---------------------------------------------------------------- writers
MANIFEST = []
COUNT = {"pos": 0, "neg": 0}


def _write(kind, path, content, label, needle=None, value=None):
    COUNT[kind] += 1
    nid = f"{COUNT[kind]:03d}"
    full = os.path.join(OUT, kind, nid, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    with open(full, "wb") as f:
        f.write(data)
    ent = {"kind": kind, "id": nid, "path": path, "file": os.path.relpath(full, OUT), "label": label}
    if kind == "pos":
        text = data.decode("utf-8", "replace")
        idx = text.find(needle)
        if idx < 0:
            raise SystemExit(f"needle not found for {label} in {path}: {needle[:40]}")
        line = text.count("\n", 0, idx) + 1
        ent.update(value=value if value is not None else needle, needle=needle, line=line,
                   line_text=text.splitlines()[line - 1].strip()[:300])
    MANIFEST.append(ent)


def pos(path, content, label, needle, value=None):
    _write("pos", path, content, label, needle, value)


def neg(path, content, label):
    _write("neg", path, content, label)


# ================================================================= NEGATIVES
def hash_user_rows(n=4):
    names = R.sample(["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"], n)
    return [(u, f"{u}@example.com", any_hash()) for u in names]


def n_password_hash_yaml(v):
    rows = hash_user_rows()
    body = "".join(f"  - username: {u}\n    email: {e}\n    role: {pick('admin', 'viewer', 'editor')}\n"
                   f"    {pick('password_hash', 'password_digest', 'hashed_password')}: \"{h}\"\n    active: true\n" for u, e, h in rows)
    neg(f"projects/{proj()}/config/seed_users.yml",
        "# Local development users. Only password HASHES are stored here; plaintext lives nowhere.\n"
        "version: 3\nusers:\n" + body, "password_hash yaml")


def n_password_hash_json(v):
    rows = hash_user_rows(3)
    data = [{"id": ruuid(), "email": e, "passwordHash": h, "passwordAlgorithm": h.split("$")[1] if h.startswith("$") else "pbkdf2",
             "createdAt": isodate()} for u, e, h in rows]
    neg(f"code/{proj()}/prisma/fixtures/users.json", json.dumps({"users": data}, indent=2), "passwordHash json")


def n_django_fixture(v):
    rows = []
    for i in range(1, 4):
        rows.append({"model": "auth.user", "pk": i, "fields": {
            "password": f"pbkdf2_sha256$600000${rs(22)}${b64(32)}", "last_login": None,
            "is_superuser": i == 1, "username": R.choice(["admin", "staff", "qa", "support"]) + str(i),
            "email": f"user{i}@example.org", "is_staff": True, "date_joined": isodate()}})
    neg(f"src/{proj()}/fixtures/initial_users.json", json.dumps(rows, indent=2), "django fixture pbkdf2 'password' field")


def n_cloudinit_hash(v):
    neg(pick("vm/cloud-init/user-data", "homelab/pi/user-data.yaml"),
        "#cloud-config\nhostname: " + pick("pihole", "nas01", "k3s-node-2") + "\nusers:\n  - name: ops\n"
        "    groups: [sudo, docker]\n    shell: /bin/bash\n    lock_passwd: false\n"
        f"    hashed_passwd: \"{pick(sha512crypt_h(), yescrypt_h())}\"\n    ssh_authorized_keys:\n"
        f"      - {' '.join(ssh_pub('ssh-ed25519'))} ops@laptop\nchpasswd:\n  expire: false\n"
        "ssh_pwauth: false\npackage_update: true\npackages: [htop, git, curl]\n", "cloud-init hashed_passwd")


def n_scrypt_py(v):
    neg(f"code/{proj()}/settings/local.py",
        "# Local settings. ADMIN_PASSWORD_HASH is a passlib hash, safe to commit.\n"
        "DEBUG = True\nALLOWED_HOSTS = ['localhost', '127.0.0.1']\n"
        f"ADMIN_PASSWORD_HASH = \"{scrypt_h()}\"\nPASSWORD_HASHERS = [\n"
        "    'django.contrib.auth.hashers.ScryptPasswordHasher',\n    'django.contrib.auth.hashers.PBKDF2PasswordHasher',\n]\n"
        "SESSION_COOKIE_SECURE = False\n", "scrypt hash py")


def n_oidc_discovery(v):
    iss = pick(f"https://login.microsoftonline.com/{ruuid()}/v2.0", "https://acme.eu.auth0.com/", "https://accounts.google.com")
    d = {"issuer": iss, "authorization_endpoint": iss.rstrip("/") + "/oauth2/v2.0/authorize",
         "token_endpoint": iss.rstrip("/") + "/oauth2/v2.0/token", "userinfo_endpoint": iss.rstrip("/") + "/userinfo",
         "jwks_uri": iss.rstrip("/") + "/discovery/v2.0/keys", "end_session_endpoint": iss.rstrip("/") + "/logout",
         "response_types_supported": ["code", "id_token", "code id_token"],
         "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
         "id_token_signing_alg_values_supported": ["RS256"], "scopes_supported": ["openid", "profile", "email", "offline_access"]}
    neg(pick("Downloads/openid-configuration.json", "work/sso/discovery.json"), json.dumps(d, indent=2), "OIDC discovery endpoints")


def n_oauth_cfg(v):
    neg(f"code/{proj()}/config/oauth.yaml",
        "oauth:\n  google:\n"
        f"    client_id: {gclient_id()}\n"
        "    client_secret: ${GOOGLE_CLIENT_SECRET}\n"
        "    auth_url: https://accounts.google.com/o/oauth2/v2/auth\n"
        "    token_url: https://oauth2.googleapis.com/token\n"
        "    redirect_uri: http://localhost:8080/auth/callback\n"
        "  github:\n"
        f"    client_id: Iv1.{hx(16)}\n"
        "    client_secret_env: GITHUB_OAUTH_SECRET\n"
        "    token_url: https://github.com/login/oauth/access_token\n"
        "    scopes: [read:user, user:email]\n"
        "  azure:\n"
        f"    tenant_id: {ruuid()}\n    client_id: {ruuid()}\n"
        "    token_endpoint: https://login.microsoftonline.com/common/oauth2/v2.0/token\n"
        "    client_secret_ref: vault:secret/data/sso#azure_client_secret\n", "oauth client ids + token urls")


def n_k8s_refs(v):
    app = proj()
    neg(f"work/infra/k8s/{app}/deployment.yaml",
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\n  labels:\n    app: {app}\nspec:\n  replicas: 3\n"
        f"  selector:\n    matchLabels:\n      app: {app}\n  template:\n    metadata:\n      labels:\n        app: {app}\n    spec:\n"
        "      serviceAccountName: " + app + "\n      containers:\n        - name: app\n"
        f"          image: ghcr.io/acme/{app}@sha256:{sha256h()}\n          envFrom:\n            - secretRef:\n                name: {app}-env\n"
        "          env:\n            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n"
        f"                  name: {app}-db\n                  key: password\n            - name: API_TOKEN\n              valueFrom:\n"
        "                secretKeyRef:\n                  name: upstream-api\n                  key: token\n"
        "          volumeMounts:\n            - name: tls\n              mountPath: /etc/tls\n              readOnly: true\n"
        "      volumes:\n        - name: tls\n          secret:\n            secretName: " + app + "-tls\n"
        "      imagePullSecrets:\n        - name: ghcr-pull\n", "k8s secretKeyRef/secretName")


def n_helm_values(v):
    neg(f"work/charts/{proj()}/values-prod.yaml",
        "postgresql:\n  auth:\n    existingSecret: db-credentials\n    secretKeys:\n      adminPasswordKey: postgres-password\n"
        "      userPasswordKey: password\n  primary:\n    persistence:\n      size: 50Gi\nredis:\n  auth:\n    enabled: true\n"
        "    existingSecret: redis-auth\n    existingSecretPasswordKey: redis-password\n"
        "externalSecrets:\n  secretStoreRef:\n    name: aws-secretsmanager\n    kind: ClusterSecretStore\n"
        "  data:\n    - secretKey: STRIPE_KEY\n      remoteRef:\n        key: prod/payments/stripe\n        property: secret_key\n"
        "secret_ref: projects/acme-prod/secrets/api-signing-key/versions/latest\npassword_secret_name: app-admin-password\n",
        "helm existingSecret refs")


def n_azure_cfg(v):
    neg(f"code/{proj()}/appsettings.Production.json", json.dumps({
        "AzureAd": {"Instance": "https://login.microsoftonline.com/", "TenantId": ruuid(), "ClientId": ruuid(),
                    "CallbackPath": "/signin-oidc"},
        "KeyVault": {"VaultUri": f"https://kv-{proj()}-prod.vault.azure.net/"},
        "ConnectionStrings": {"Default": "@Microsoft.KeyVault(SecretUri=https://kv-app-prod.vault.azure.net/secrets/db-conn/)"},
        "ApplicationInsights": {"ConnectionString": f"InstrumentationKey={ruuid()};IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/"},
        "SubscriptionId": ruuid(), "Logging": {"LogLevel": {"Default": "Information"}}}, indent=2),
        "azure GUIDs + keyvault ref")


def n_auth0_spa(v):
    neg(f"code/{proj()}/src/auth_config.json", json.dumps({
        "domain": "acme-prod.eu.auth0.com", "clientId": rs(32), "audience": "https://api.acme-corp.io",
        "authorizationParams": {"redirect_uri": "https://app.acme-corp.io/callback"}, "cacheLocation": "localstorage"}, indent=2),
        "auth0 SPA clientId (public)")


def n_jwks_rsa(v):
    keys = [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": b64u(16),
             "n": b64u(256), "e": "AQAB", "x5t": b64u(20)} for _ in range(2)]
    neg(pick("work/sso/jwks.json", f"code/{proj()}/test/data/public_jwks.json"), json.dumps({"keys": keys}, indent=2), "JWKS RSA public")


def n_jwks_ec(v):
    keys = [{"kty": "EC", "crv": "P-256", "kid": ruuid(), "use": "sig", "x": b64u(32), "y": b64u(32)},
            {"kty": "OKP", "crv": "Ed25519", "kid": hx(8), "x": b64u(32)}]
    neg(f"code/{proj()}/keys/public.jwk.json", json.dumps({"keys": keys, "jwks_uri": "https://auth.acme-corp.io/.well-known/jwks.json"}, indent=2),
        "JWK EC/OKP public")


def n_stripe_pk(v):
    pk = pick("pk_live_51", "pk_test_51") + rs(97)
    neg(f"code/{proj()}/web/src/payments.js",
        "import { loadStripe } from '@stripe/stripe-js';\n\n// Publishable key: safe to ship to the browser.\n"
        f"const STRIPE_PUBLISHABLE_KEY = '{pk}';\n\nexport const stripePromise = loadStripe(STRIPE_PUBLISHABLE_KEY);\n"
        f"export const PRICE_ID = 'price_{rs(24)}';\n", "stripe publishable")


def n_firebase(v):
    pid = proj() + "-" + hx(5)
    neg(f"code/{proj()}/web/src/firebase.ts",
        "// Firebase web app config. The apiKey below is the PUBLIC web config identifier\n"
        "// (Firebase docs: it is not a secret; access is enforced by security rules / App Check).\n"
        "import { initializeApp } from 'firebase/app';\n\nconst firebaseConfig = {\n"
        f"  apiKey: \"AIza{rs(35, B64URL)}\",\n  authDomain: \"{pid}.firebaseapp.com\",\n  projectId: \"{pid}\",\n"
        f"  storageBucket: \"{pid}.appspot.com\",\n  messagingSenderId: \"{R.randint(10**11, 10**12)}\",\n"
        f"  appId: \"1:{R.randint(10**11, 10**12)}:web:{hx(22)}\",\n  measurementId: \"G-{rs(10, UP + DI)}\"\n}};\n\n"
        "export const app = initializeApp(firebaseConfig);\n", "firebase web config")


def n_sentry(v):
    dsn = f"https://{hx(32)}@o{R.randint(10**5, 10**7)}.ingest.{pick('', 'us.', 'de.')}sentry.io/{R.randint(10**6, 10**7)}"
    if v == 0:
        neg(f"code/{proj()}/src/instrument.js",
            "import * as Sentry from '@sentry/node';\n\nSentry.init({\n"
            f"  dsn: '{dsn}',\n  tracesSampleRate: 0.2,\n  environment: process.env.NODE_ENV,\n}});\n", "sentry DSN js")
    else:
        neg(f"code/{proj()}/sentry.properties",
            f"defaults.url=https://sentry.io/\ndefaults.org=acme\ndefaults.project={proj()}\n# public DSN (no secret part)\ndsn={dsn}\n"
            "auth.token=${SENTRY_AUTH_TOKEN}\n", "sentry DSN properties")


def n_gha(v):
    lines = ["name: ci", "on:", "  push:", "    branches: [main]", "    tags: ['v*']", "  pull_request:", "permissions:",
             "  contents: read", "  id-token: write", "jobs:", "  build:", "    runs-on: ubuntu-22.04", "    steps:"]
    for act, tag in [("actions/checkout", "v4.1.1"), ("actions/setup-node", "v4.0.2"), ("actions/cache", "v4.0.0"),
                     ("docker/login-action", "v3.0.0"), ("docker/build-push-action", "v5.1.0"), ("aws-actions/configure-aws-credentials", "v4.0.1")]:
        lines.append(f"      - uses: {act}@{sha1()} # {tag}")
        if act == "docker/login-action":
            lines += ["        with:", "          registry: ghcr.io", "          username: ${{ github.actor }}", "          password: ${{ secrets.GITHUB_TOKEN }}"]
        if act.startswith("aws-actions"):
            lines += ["        with:", f"          role-to-assume: arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/gha-deploy", "          aws-region: eu-west-1"]
    lines += ["      - run: npm ci && npm test", "      - run: echo \"sha=${GITHUB_SHA::7}\" >> $GITHUB_OUTPUT",
              f"      - run: git diff --exit-code {sha1()}..HEAD -- package-lock.json", "        env:",
              "          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}"]
    neg(f"code/{proj()}/.github/workflows/ci.yml", "\n".join(lines) + "\n", "GHA pinned SHAs")


def n_gitlab_ci(v):
    neg(f"code/{proj()}/.gitlab-ci.yml",
        f"image: registry.gitlab.com/acme/ci-images/node@sha256:{sha256h()}\n\nvariables:\n  DOCKER_DRIVER: overlay2\n"
        f"  PINNED_BASE: \"{sha1()}\"\n  GIT_DEPTH: \"20\"\n\nstages: [test, build, deploy]\n\ntest:\n  stage: test\n  script:\n"
        "    - npm ci\n    - npm test\n\nbuild:\n  stage: build\n  script:\n"
        "    - docker login -u \"$CI_REGISTRY_USER\" -p \"$CI_REGISTRY_PASSWORD\" \"$CI_REGISTRY\"\n"
        "    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA .\n    - docker push $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA\n"
        f"  # last green: {sha1()} (tag v{R.randint(1, 9)}.{R.randint(0, 20)}.{R.randint(0, 9)})\n\ndeploy:\n  stage: deploy\n"
        "  script: ./deploy.sh $CI_COMMIT_SHA\n  only: [tags]\n", "gitlab-ci digests")


def n_compose_digests(v):
    svc = ["postgres:16", "redis:7", "nginx:1.25", "grafana/grafana:10.4.0", "prom/prometheus:v2.51.0"]
    out = ["services:"]
    for s in svc:
        name = s.split("/")[-1].split(":")[0]
        out += [f"  {name}:", f"    image: {s}@sha256:{sha256h()}", "    restart: unless-stopped"]
        if name == "postgres":
            out += ["    environment:", "      POSTGRES_PASSWORD_FILE: /run/secrets/pg_password", "    secrets: [pg_password]"]
    out += ["secrets:", "  pg_password:", "    file: ./secrets/pg_password.txt"]
    neg(f"homelab/{pick('stack', 'monitoring')}/docker-compose.yml", "\n".join(out) + "\n", "compose digests + secret file")


def n_package_lock(v):
    pk = {}
    for name in R.sample(["lodash", "react", "react-dom", "axios", "express", "debug", "ms", "chalk", "semver", "uuid", "zod", "tslib"], 8):
        ver = f"{R.randint(1, 18)}.{R.randint(0, 20)}.{R.randint(0, 30)}"
        pk[f"node_modules/{name}"] = {"version": ver, "resolved": f"https://registry.npmjs.org/{name}/-/{name}-{ver}.tgz",
                                      "integrity": sri("sha512", 64), "license": "MIT"}
    neg(f"code/{proj()}/package-lock.json", json.dumps({"name": proj(), "version": "1.0.0", "lockfileVersion": 3, "requires": True,
                                                         "packages": {"": {"name": "app"}, **pk}}, indent=2), "package-lock integrity")


def n_yarn_lock(v):
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.", "# yarn lockfile v1", ""]
    for name in R.sample(["@babel/core", "@types/node", "webpack", "postcss", "esbuild", "vite", "rollup", "jest"], 6):
        ver = f"{R.randint(1, 9)}.{R.randint(0, 20)}.{R.randint(0, 9)}"
        out += [f"\"{name}@^{ver}\":", f"  version \"{ver}\"",
                f"  resolved \"https://registry.yarnpkg.com/{name}/-/{name.split('/')[-1]}-{ver}.tgz#{sha1()}\"",
                f"  integrity {sri('sha512', 64)}", ""]
    neg(f"code/{proj()}/yarn.lock", "\n".join(out), "yarn.lock")


def n_pnpm_lock(v):
    out = ["lockfileVersion: '9.0'", "", "packages:", ""]
    for name in R.sample(["typescript", "prettier", "eslint", "vitest", "date-fns", "nanoid"], 5):
        ver = f"{R.randint(1, 9)}.{R.randint(0, 9)}.{R.randint(0, 9)}"
        out += [f"  {name}@{ver}:", f"    resolution: {{integrity: {sri('sha512', 64)}}}", "    engines: {node: '>=18'}", ""]
    neg(f"code/{proj()}/pnpm-lock.yaml", "\n".join(out), "pnpm-lock")


def n_gosum(v):
    out = []
    for m in R.sample(["github.com/spf13/cobra", "golang.org/x/crypto", "github.com/stretchr/testify", "go.uber.org/zap",
                       "github.com/aws/aws-sdk-go-v2", "google.golang.org/grpc", "github.com/jackc/pgx/v5"], 5):
        ver = f"v{R.randint(0, 2)}.{R.randint(0, 40)}.{R.randint(0, 9)}"
        out += [f"{m} {ver} h1:{b64(32)}", f"{m} {ver}/go.mod h1:{b64(32)}"]
    neg(f"go/src/{proj()}/go.sum", "\n".join(out) + "\n", "go.sum")


def n_cargo_lock(v):
    out = ["# This file is automatically @generated by Cargo.", "# It is not intended for manual editing.", "version = 3", ""]
    for c in R.sample(["serde", "tokio", "anyhow", "clap", "regex", "rand", "hyper", "bytes"], 5):
        out += ["[[package]]", f"name = \"{c}\"", f"version = \"{R.randint(0, 2)}.{R.randint(0, 40)}.{R.randint(0, 9)}\"",
                "source = \"registry+https://github.com/rust-lang/crates.io-index\"", f"checksum = \"{sha256h()}\"", ""]
    neg(f"rust/{proj()}/Cargo.lock", "\n".join(out), "Cargo.lock")


def n_pip_hashes(v):
    out = ["# generated by pip-compile --generate-hashes"]
    for p in R.sample(["requests", "urllib3", "certifi", "idna", "charset-normalizer", "boto3", "cryptography"], 4):
        out += [f"{p}=={R.randint(1, 40)}.{R.randint(0, 9)}.{R.randint(0, 9)} \\", f"    --hash=sha256:{sha256h()} \\",
                f"    --hash=sha256:{sha256h()}"]
    neg(f"code/{proj()}/requirements.txt", "\n".join(out) + "\n", "pip hashes")


def n_sri_html(v):
    neg(f"sites/{proj()}/index.html",
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<link rel=\"stylesheet\" href=\"https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css\" integrity=\"{sri('sha384', 48)}\" crossorigin=\"anonymous\">\n"
        f"<script src=\"https://code.jquery.com/jquery-3.7.1.min.js\" integrity=\"{sri('sha256', 32)}\" crossorigin=\"anonymous\"></script>\n"
        f"<meta name=\"csrf-token\" content=\"{{{{ csrf_token() }}}}\">\n<meta name=\"google-site-verification\" content=\"{rs(43, B64URL)}\">\n"
        "</head>\n<body><div id=\"app\"></div></body>\n</html>\n", "SRI integrity html")


def n_uuids(v):
    neg(f"code/{proj()}/config/tenants.toml",
        "[default]\n" + "".join(f"[tenants.{t}]\nid = \"{ruuid()}\"\nworkspace_id = \"{ruuid()}\"\nregion = \"{pick('eu', 'us')}\"\n\n"
                                for t in R.sample(["acme", "globex", "initech", "umbrella", "hooli"], 3)) +
        f"[telemetry]\ninstance_id = \"{ruuid()}\"\ncorrelation_header = \"X-Request-Id\"\n", "uuids config")


SVG_B64 = b64e('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M2 2l12 12M14 2L2 14"/></svg>')


def n_css_datauri(v):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rb(600)).decode()
    woff = base64.b64encode(b"wOF2" + rb(900)).decode()
    neg(f"sites/{proj()}/static/css/app.{hx(8)}.css",
        f".logo{{background:url(data:image/png;base64,{png}) no-repeat}}\n"
        f"@font-face{{font-family:Inter;src:url(data:font/woff2;base64,{woff}) format(\"woff2\")}}\n"
        ".icon-close{background-image:url(\"data:image/svg+xml;base64," + SVG_B64 + "\")}\n",
        "css data URIs")


def n_webpack_manifest(v):
    files = {}
    for c in ["main", "vendors", "runtime", "polyfills", "settings", "dashboard"]:
        h = hx(pick(8, 20))
        files[f"{c}.js"] = f"/static/js/{c}.{h}.chunk.js"
        files[f"{c}.css"] = f"/static/css/{c}.{hx(8)}.css"
    classes = {k: f"{k}_{rs(5, ALNUM + '-_')}__{rs(12, ALNUM + '-_')}" for k in ["button", "header", "modal", "tooltip"]}
    neg(f"sites/{proj()}/build/asset-manifest.json", json.dumps({"files": files, "cssModules": classes,
                                                                  "buildId": rs(21, B64URL)}, indent=2), "webpack hashes")


def n_minified_js(v):
    idents = [rs(R.randint(1, 2), LO) for _ in range(30)]
    body = ";".join(f"var {a}=function({b},{c}){{return {b}[{c}]^{R.randint(0, 255)}}}" for a, b, c in zip(idents, idents[1:], idents[2:]))
    chunks = "".join(f"{R.randint(100, 9999)}:function(e,t,n){{\"use strict\";n.d(t,{{{rs(1, LO)}:function(){{return {rs(2, LO)}}}}});var r=n({R.randint(100, 9999)}),o=\"{rs(20, ALNUM)}\";}}," for _ in range(10))
    neg(f"sites/{proj()}/static/js/main.{hx(8)}.js",
        f"/*! For license information please see main.{hx(8)}.js.LICENSE.txt */\n(self.webpackChunk=self.webpackChunk||[]).push([[{R.randint(1, 900)}],{{{chunks}}}]);\n{body};\n"
        f"//# sourceMappingURL=main.{hx(8)}.js.map\n", "minified js")


def n_pgp_pub(v):
    b = armor("PGP PUBLIC KEY BLOCK", b"\x99\x02\x0d\x04" + rb(1100), "Comment: " + pick("Alice <alice@example.com>", "release signing key"))
    neg(pick(".gnupg/exported/alice.pub.asc", f"code/{proj()}/KEYS"), b, "pgp public key")


def n_pgp_sig(v):
    if v == 0:
        sums = "".join(f"{sha256h()}  {proj()}-{R.randint(1, 3)}.{R.randint(0, 9)}.{R.randint(0, 9)}-{a}.tar.gz\n" for a in ["linux-amd64", "darwin-arm64", "windows-amd64"])
        neg("Downloads/SHA256SUMS.asc", "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n" + sums + armor("PGP SIGNATURE", b"\x89\x02\x33\x04" + rb(560)), "pgp clearsigned")
    else:
        neg(f"code/{proj()}/.git-commit-sig.txt",
            f"tree {sha1()}\nparent {sha1()}\nauthor Dev <dev@example.com> {ts()} +0100\ncommitter Dev <dev@example.com> {ts()} +0100\ngpgsig "
            + armor("PGP SIGNATURE", b"\x89\x02\x33\x04" + rb(560)).replace("\n", "\n ").rstrip() + "\n\nFix flaky test\n", "git gpgsig")


def n_known_hosts(v):
    out = []
    for _ in range(6):
        k, blob = ssh_pub()
        if R.random() < .5:
            out.append(f"|1|{b64(20)}|{b64(20)} {k} {blob}")
        else:
            out.append(f"{pick('github.com', 'gitlab.com', '10.0.3.' + str(R.randint(2, 250)), 'nas.local', 'bastion.acme-corp.io')} {k} {blob}")
    neg(".ssh/known_hosts", "\n".join(out) + "\n", "known_hosts")


def n_authorized_keys(v):
    if v == 0:
        out = []
        for who in ["me@laptop", "ci-deploy", "alice@workstation"]:
            k, blob = ssh_pub()
            out.append(("from=\"10.0.0.0/8\",no-agent-forwarding " if who == "ci-deploy" else "") + f"{k} {blob} {who}")
        neg(".ssh/authorized_keys", "\n".join(out) + "\n", "authorized_keys")
    else:
        k, blob = ssh_pub("ssh-ed25519")
        neg(".ssh/id_ed25519.pub", f"{k} {blob} me@laptop\n", "ssh .pub")


def n_cert_chain(v):
    neg(pick("certs/fullchain.pem", f"work/{proj()}/tls/ca-bundle.crt"), "".join(certs_chain()), "certificate chain")


def n_sops(v):
    def enc(n):
        return f"ENC[AES256_GCM,data:{b64(n)},iv:{b64(32)},tag:{b64(16)},type:str]"
    age_rec = "age1" + rs(58, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")
    neg(f"work/infra/secrets/{pick('prod', 'staging')}.enc.yaml",
        f"database:\n    password: {enc(18)}\n    user: {enc(6)}\napi:\n    stripe_secret_key: {enc(60)}\n    jwt_secret: {enc(32)}\n"
        "sops:\n    kms: []\n    gcp_kms: []\n    azure_kv: []\n    hc_vault: []\n    age:\n"
        f"        - recipient: {age_rec}\n          enc: |\n"
        + "".join("            " + l + "\n" for l in armor("AGE ENCRYPTED FILE", rb(180)).splitlines() if not l.startswith("=") and l.strip())
        + f"    lastmodified: \"{isodate()}\"\n    mac: ENC[AES256_GCM,data:{b64(64)},iv:{b64(32)},tag:{b64(16)},type:str]\n"
        "    pgp: []\n    unencrypted_suffix: _unencrypted\n    version: 3.8.1\n", "sops encrypted")


def n_ansible_vault(v):
    body = hx(R.randint(900, 1400))
    neg(f"work/ansible/group_vars/{pick('prod', 'all')}/vault.yml", "$ANSIBLE_VAULT;1.1;AES256\n" + wrap(body, 80) + "\n", "ansible vault")


def n_age(v):
    neg(pick("Documents/backup-codes.txt.age", "notes/secrets.md.age"),
        "-----BEGIN AGE ENCRYPTED FILE-----\n" + wrap(base64.b64encode(b"age-encryption.org/v1\n-> X25519 " + b64np(32).encode() + b"\n" + b64np(32).encode() + b"\n--- " + b64np(32).encode() + b"\n" + rb(300)).decode()) + "\n-----END AGE ENCRYPTED FILE-----\n",
        "age armor")


def n_gpg_msg(v):
    neg(pick("Documents/passwords.txt.asc", "Mail/drafts/encrypted-note.asc"), armor("PGP MESSAGE", b"\x85\x02\x0c\x03" + rb(700)), "gpg message")


ENV_FAKE = [
    ("DATABASE_URL", "postgres://user:password@localhost:5432/myapp"),
    ("SECRET_KEY", "changeme"), ("DJANGO_SECRET_KEY", "change-me-to-a-long-random-string"),
    ("STRIPE_SECRET_KEY", "sk_test_XXXXXXXXXXXXXXXXXXXXXXXX"), ("STRIPE_WEBHOOK_SECRET", "whsec_..."),
    ("AWS_ACCESS_KEY_ID", "<your-access-key-id>"), ("AWS_SECRET_ACCESS_KEY", "<your-secret-access-key>"),
    ("GITHUB_TOKEN", "${GITHUB_TOKEN}"), ("SENDGRID_API_KEY", "your-sendgrid-api-key-here"),
    ("JWT_SECRET", "{{ jwt_secret }}"), ("REDIS_PASSWORD", "%REDIS_PASSWORD%"), ("OPENAI_API_KEY", "sk-..."),
    ("SLACK_BOT_TOKEN", "xoxb-your-bot-token"), ("SMTP_PASSWORD", "********"), ("API_KEY", "<token>"),
    ("ANTHROPIC_API_KEY", "sk-ant-xxxxxxxxxxxxxxxxxxxx"), ("ADMIN_PASSWORD", "admin"), ("DB_PASSWORD", "password"),
    ("TWILIO_AUTH_TOKEN", "your_auth_token"), ("MAILGUN_API_KEY", "key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ("ENCRYPTION_KEY", "replace_me"), ("SESSION_SECRET", "${SESSION_SECRET:?must be set}"), ("NPM_TOKEN", "${NPM_TOKEN}"),
]


def n_env_example(v):
    name = [".env.example", ".env.template", ".env.sample", ".env.dist", "example.env"][v % 5]
    rows = R.sample(ENV_FAKE, 12)
    neg(f"code/{proj()}/{name}", "# Copy this file to .env and fill in real values. Never commit .env!\n"
        + "\n".join(f"{k}={val}" for k, val in rows) + "\nDEBUG=true\nPORT=3000\n", "env example placeholders")


def n_readme_placeholders(v):
    neg(f"code/{proj()}/docs/{pick('setup', 'authentication', 'getting-started')}.md",
        "# Authentication\n\nCreate a personal access token and export it:\n\n```bash\n"
        "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nexport OPENAI_API_KEY=\"sk-...your key...\"\n```\n\n"
        "Configure AWS (these are the example values from the AWS documentation):\n\n```ini\n[default]\n"
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n```\n\n"
        "Then call the API:\n\n```sh\ncurl -H \"Authorization: Bearer <YOUR_TOKEN>\" https://api.example.com/v1/me\n"
        "curl -u USERNAME:PASSWORD https://api.example.com/v1/login\n```\n\n"
        "> **Note** replace `xoxb-0000000000-0000000000000-XXXXXXXXXXXXXXXXXXXXXXXX` with your Slack bot token.\n", "docs placeholders")


def n_docs_example_keys(v):
    neg(f"notes/{pick('aws-cheatsheet', 'cli-notes')}.md",
        "## aws cli\n\n    $ aws configure\n    AWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE\n"
        "    AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n    Default region name [None]: us-west-2\n\n"
        "## stripe\n\n```python\nstripe.api_key = \"sk_test_XXXXXXXXXXXXXXXXXXXXXXXX\"  # put your test key here\n```\n\n"
        "## jwt\n\nThe example token from jwt.io: `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`\n",
        "docs AWS/Stripe/jwt.io example keys")


def n_test_fixture_py(v):
    neg(f"code/{proj()}/tests/test_{pick('auth', 'login', 'client')}.py",
        "import pytest\n\nFAKE_API_KEY = \"fake-api-key-for-tests\"\nDUMMY_PASSWORD = \"dummy-password\"\n"
        "MOCK_TOKEN = \"ghp_1234567890abcdefghijklmnopqrstuvwxyz\"\nTEST_SECRET = \"test_secret_not_real\"\n\n"
        "@pytest.fixture\ndef client(app):\n    app.config['SECRET_KEY'] = 'testing'\n    return app.test_client()\n\n"
        "def test_login_rejects_bad_password(client):\n"
        "    r = client.post('/login', json={'username': 'alice', 'password': 'wrong-password'})\n    assert r.status_code == 401\n\n"
        "def test_token_header(client, monkeypatch):\n    monkeypatch.setenv('API_KEY', FAKE_API_KEY)\n"
        "    r = client.get('/me', headers={'Authorization': f'Bearer {MOCK_TOKEN}'})\n    assert r.status_code == 200\n", "test fixture py")


def n_mock_js(v):
    neg(f"code/{proj()}/src/__mocks__/{pick('mock_config', 'fake_credentials', 'dummy_env')}.js",
        "// Test doubles only.\nexport const mockCredentials = {\n  username: 'test-user',\n  password: 'test-password',\n"
        "  apiKey: 'dummy-api-key',\n  accessToken: 'fake-access-token',\n  awsAccessKeyId: 'AKIAXXXXXXXXXXXXXXXX',\n"
        "  stripeKey: 'sk_test_' + 'x'.repeat(24),\n};\n", "mock js")


def n_password_policy(v):
    neg(pick("work/keycloak/realm-policy.yaml", f"code/{proj()}/config/security.yml"),
        "security:\n  password_policy:\n    password_min_length: 12\n    password_max_length: 128\n    password_complexity: high\n"
        "    password_history: 5\n    password_expiry_days: 90\n    require_uppercase: true\n    require_symbols: true\n"
        "  lockout:\n    max_failed_attempts: 5\n    lockout_minutes: 15\n  token_ttl_seconds: 3600\n  refresh_token_ttl: 30d\n"
        "  secret_rotation_days: 30\n  api_key_length: 40\n", "password policy")


def n_code_reads_py(v):
    neg(f"code/{proj()}/app/config.py",
        "import os\nfrom getpass import getpass\nimport hvac\n\n"
        "DB_PASSWORD = os.environ[\"DB_PASSWORD\"]\nAPI_KEY = os.getenv(\"API_KEY\", \"\")\nSECRET_KEY = os.environ.get('SECRET_KEY')\n\n"
        "def vault_secret(path=\"secret/data/app\"):\n    client = hvac.Client(url=os.environ['VAULT_ADDR'], token=os.environ['VAULT_TOKEN'])\n"
        "    return client.secrets.kv.v2.read_secret_version(path=path)['data']['data']\n\n"
        "def ask():\n    password = getpass('DB password: ')\n    token = input('token: ').strip()\n    return password, token\n", "code reads env py")


def n_code_reads_js(v):
    if v == 0:
        neg(f"code/{proj()}/src/config.ts",
            "export const config = {\n  apiKey: process.env.API_KEY!,\n  dbPassword: process.env.DB_PASSWORD ?? '',\n"
            "  jwtSecret: process.env['JWT_SECRET'],\n  stripeSecret: requireEnv('STRIPE_SECRET_KEY'),\n};\n\n"
            "function requireEnv(name: string): string {\n  const v = process.env[name];\n  if (!v) throw new Error(`missing ${name}`);\n  return v;\n}\n",
            "code reads env ts")
    else:
        neg(f"go/src/{proj()}/internal/config/config.go",
            "package config\n\nimport \"os\"\n\ntype Config struct {\n\tDBPassword string `env:\"DB_PASSWORD,required\"`\n\tAPIToken   string `env:\"API_TOKEN\"`\n}\n\n"
            "func Load() Config {\n\treturn Config{DBPassword: os.Getenv(\"DB_PASSWORD\"), APIToken: os.Getenv(\"API_TOKEN\")}\n}\n\n"
            "const passwordEnvVar = \"DB_PASSWORD\"\nconst tokenHeader = \"X-Api-Token\"\n", "code reads env go")


BENIGN_CMDS = ["ls -la", "cd ~/code", "git status", "git pull --rebase", "git log --oneline -n 20", "docker ps", "docker compose up -d",
               "kubectl get pods -n prod", "kubectl logs -f deploy/api -n prod --tail=100", "vim ~/.zshrc", "source ~/.zshrc",
               "make test", "npm run dev", "python3 -m venv .venv", "source .venv/bin/activate", "pip install -r requirements.txt",
               "htop", "df -h", "du -sh * | sort -h", "ssh bastion", "terraform plan -out=tfplan", "terraform apply tfplan",
               "brew upgrade", "sudo apt update && sudo apt upgrade -y", "curl -s https://api.github.com/repos/acme/api | jq .stargazers_count",
               "grep -rn TODO src/", "tail -f /var/log/syslog", "systemctl status nginx", "journalctl -u nginx --since today",
               "cat package.json | jq .scripts", "go test ./...", "cargo build --release", "ping -c 3 8.8.8.8", "history | grep ssh",
               "git checkout -b feature/login", "git commit -am 'wip'", "git push -u origin HEAD", "code .", "aws s3 ls",
               "aws sts get-caller-identity", "kubectl config use-context prod", "helm upgrade --install api ./chart -f values-prod.yaml",
               "scp build.tar.gz bastion:/tmp/", "rsync -avz ./dist/ web01:/var/www/", "openssl x509 -in cert.pem -noout -text",
               "dig +short acme-corp.io", "tmux attach -t main", "clear", "exit"]


def n_history_prompting(v):
    cmds = R.sample(BENIGN_CMDS, 30) + ["mysql -u root -p", "mysql -h db.internal -u app -p appdb", "ssh-keygen -t ed25519 -N \"\" -f ~/.ssh/id_ed25519",
                                        "gpg --gen-key", "gpg --full-generate-key", "read -s DB_PASSWORD && export DB_PASSWORD",
                                        "export DB_PASSWORD=$(pass show db/prod)", "aws configure", "gh auth login",
                                        "docker login -u me --password-stdin < ~/.config/ghcr-token",
                                        "kubectl create secret generic db --from-file=password=./pw.txt", "openssl rand -hex 32",
                                        "vault kv get secret/app", "htpasswd -c .htpasswd admin", "passwd", "psql -W -U postgres -h localhost",
                                        "export TOKEN=$(cat ~/.config/token)", "op read op://Private/GitHub/token", "git config --global credential.helper osxkeychain",
                                        "ssh-add ~/.ssh/id_ed25519", "age-keygen -o key.txt", "export AWS_PROFILE=prod"]
    R.shuffle(cmds)
    if v == 0:
        neg(".bash_history", "\n".join(cmds) + "\n", "bash history prompting")
    else:
        t = ts()
        neg(".zsh_history", "".join(f": {t + i * 37}:0;{c}\n" for i, c in enumerate(cmds)), "zsh history prompting")


def n_aws_ids(v):
    acct = str(R.randint(10**11, 10**12 - 1))
    insts = [{"InstanceId": "i-0" + hx(16), "ImageId": "ami-0" + hx(16), "VpcId": "vpc-0" + hx(16), "SubnetId": "subnet-0" + hx(16),
              "SecurityGroups": [{"GroupId": "sg-0" + hx(16), "GroupName": "web"}], "OwnerId": acct,
              "IamInstanceProfile": {"Arn": f"arn:aws:iam::{acct}:instance-profile/web-role", "Id": "AIPA" + rs(17, UP + "234567")},
              "NetworkInterfaces": [{"NetworkInterfaceId": "eni-0" + hx(16), "MacAddress": ":".join(hx(2) for _ in range(6))}]} for _ in range(3)]
    if v == 0:
        neg("work/aws/describe-instances.json", json.dumps({"Reservations": [{"ReservationId": "r-0" + hx(16), "OwnerId": acct, "Instances": insts}],
                                                            "ResponseMetadata": {"RequestId": ruuid()}}, indent=2), "aws describe ids")
    else:
        neg(f"work/infra/terraform/{pick('prod', 'dev')}.tfvars",
            f"account_id = \"{acct}\"\nkms_key_arn = \"arn:aws:kms:eu-west-1:{acct}:key/{ruuid()}\"\n"
            f"vpc_id = \"vpc-0{hx(16)}\"\nsubnet_ids = [\"subnet-0{hx(16)}\", \"subnet-0{hx(16)}\"]\n"
            f"secrets_manager_arn = \"arn:aws:secretsmanager:eu-west-1:{acct}:secret:prod/db/password-{rs(6)}\"\n"
            f"role_arn = \"arn:aws:iam::{acct}:role/terraform\"\ncanonical_user_id = \"{hx(64)}\"\n", "tfvars arns")


def n_stripe_ids(v):
    out = ["id,created,customer,payment_intent,amount,currency,status,invoice,subscription"]
    for _ in range(15):
        out.append(f"ch_3{rs(23)},{isodate()},cus_{rs(14)},pi_3{rs(23)},{R.randint(500, 99000)},eur,succeeded,in_1{rs(23)},sub_1{rs(23)}")
    neg("Downloads/stripe_payments_export.csv", "\n".join(out) + "\n", "stripe object ids csv")


def n_slack_ids(v):
    chans = [{"id": "C0" + rs(9, UP + DI), "name": n, "created": ts(), "creator": "U0" + rs(9, UP + DI),
              "is_archived": False, "members": ["U0" + rs(9, UP + DI) for _ in range(4)],
              "topic": {"value": "", "creator": "", "last_set": 0}} for n in ["general", "random", "ops", "deploys"]]
    neg("Downloads/slack-export-acme/channels.json", json.dumps(chans, indent=2), "slack channel ids")


def n_twilio_sid(v):
    neg(f"code/{proj()}/config/twilio.yml",
        f"twilio:\n  account_sid: AC{hx(32)}\n  messaging_service_sid: MG{hx(32)}\n  verify_service_sid: VA{hx(32)}\n"
        "  auth_token: ${TWILIO_AUTH_TOKEN}\n  from_number: \"+15005550006\"\n", "twilio SIDs")


def n_analytics_html(v):
    mb = "pk." + b64u_json({"u": pick("acme-maps", "jdoe"), "a": "cl" + rs(23, LO + DI)}) + "." + rs(22, B64URL)
    neg(f"sites/{proj()}/templates/base.html",
        f"<script async src=\"https://www.googletagmanager.com/gtag/js?id=G-{rs(10, UP + DI)}\"></script>\n"
        f"<script>gtag('config', 'G-{rs(10, UP + DI)}'); ga('create', 'UA-{R.randint(10**7, 10**8)}-1', 'auto');</script>\n"
        f"<!-- GTM-{rs(7, UP + DI)} -->\n<script>\n  mapboxgl.accessToken = '{mb}';\n  const map = new mapboxgl.Map({{container: 'map'}});\n</script>\n"
        f"<div class=\"g-recaptcha\" data-sitekey=\"6L{rs(38, B64URL)}\"></div>\n", "GA/Mapbox pk/reCAPTCHA site key")


def n_wireguard(v):
    peers = "".join(f"\n[Peer]\n# {n}\nPublicKey = {b64(32)}\nAllowedIPs = 10.8.0.{i + 2}/32\n" + (f"Endpoint = {n}.example.net:51820\n" if i == 0 else "")
                    for i, n in enumerate(["phone", "laptop", "nas"]))
    neg(pick("homelab/wireguard/wg0.conf", ".config/wireguard/wg0.conf"),
        "[Interface]\nAddress = 10.8.0.1/24\nListenPort = 51820\n# private key kept in a root-only file\n"
        "PostUp = wg set %i private-key /etc/wireguard/%i.key\n" + peers, "wireguard public keys")


def n_onion(v):
    neg(pick("Documents/bookmarks/onion.txt", ".local/share/torbrowser/notes.txt"),
        "".join(f"{n}: http://{rs(55, B32L)}d.onion/\n" for n in ["search", "news", "mirror", "forum"]) +
        "HiddenServiceDir /var/lib/tor/hidden_service/\nHiddenServicePort 80 127.0.0.1:8080\n", "onion addresses")


def n_crypto_addrs(v):
    if v == 0:
        neg(f"code/{proj()}/DONATE.md",
            f"# Support the project\n\n- BTC: `{bech32_addr()}`\n- BTC (legacy): `1{rs(33, B58)}`\n- ETH: `0x{hx(40)}`\n- XMR: `4{rs(94, B58)}`\n", "crypto addresses")
    else:
        out = ["\"Txhash\",\"Blockno\",\"UnixTimestamp\",\"From\",\"To\",\"Value_IN(ETH)\""]
        for _ in range(10):
            out.append(f"\"0x{hx(64)}\",\"{R.randint(18 * 10**6, 20 * 10**6)}\",\"{ts()}\",\"0x{hx(40)}\",\"0x{hx(40)}\",\"{R.random():.4f}\"")
        neg("Downloads/export-address-0x.csv", "\n".join(out) + "\n", "etherscan tx hashes")


def n_ipfs(v):
    neg(f"code/{proj()}/ipfs-pins.json", json.dumps({"pins": [{"cid": "Qm" + rs(44, B58), "name": "site-v1"},
                                                              {"cid": "bafybei" + rs(52, B32L), "name": "site-v2"}],
                                                     "gateway": "https://ipfs.io/ipfs/"}, indent=2), "ipfs cids")


def n_logs(v):
    out = []
    for _ in range(40):
        if v == 0:
            out.append(f"{R.randint(1, 254)}.{R.randint(0, 255)}.{R.randint(0, 255)}.{R.randint(1, 254)} - - [12/Mar/2024:10:{R.randint(10, 59)}:{R.randint(10, 59)} +0000] "
                       f"\"GET /api/v1/{pick('orders', 'users/me', 'health')}?request_id={ruuid()} HTTP/1.1\" 200 {R.randint(100, 9000)} \"-\" \"Mozilla/5.0\" "
                       f"rt=0.0{R.randint(10, 99)} sid_hash={sha256h()}")
        else:
            out.append(json.dumps({"ts": isodate(), "level": "info", "msg": "request completed", "request_id": ruuid(),
                                   "trace_id": hx(32), "span_id": hx(16), "session_id_sha256": sha256h(),
                                   "token_hash": hx(64), "user_id": R.randint(1, 99999), "duration_ms": R.randint(1, 900)}))
    neg(pick("work/logs/access.log", f"code/{proj()}/logs/app.jsonl") if v == 0 else f"code/{proj()}/logs/app.jsonl", "\n".join(out) + "\n", "logs with ids/hashes")


# extra hard negatives
def n_netrc_tpl(v):
    neg(f"code/{proj()}/docker/netrc.tpl", "machine api.example.com\n  login ${API_USER}\n  password ${API_PASSWORD}\n", "netrc template")


def n_k8s_secret_template(v):
    neg(f"work/charts/{proj()}/templates/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ include \"app.fullname\" . }}\ntype: Opaque\ndata:\n"
        "  password: {{ .Values.db.password | b64enc | quote }}\n  api-key: {{ required \"apiKey is required\" .Values.apiKey | b64enc }}\n"
        "stringData:\n  DATABASE_URL: \"postgres://{{ .Values.db.user }}:{{ .Values.db.password }}@{{ .Values.db.host }}/app\"\n", "helm secret template")


def n_ssh_config(v):
    neg(".ssh/config", "Host bastion\n  HostName bastion.acme-corp.io\n  User ops\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n\n"
        "Host *.internal\n  ProxyJump bastion\n  User deploy\n  IdentityFile ~/.ssh/deploy_key\n\nHost github.com\n  AddKeysToAgent yes\n  UseKeychain yes\n",
        "ssh config")


def n_gitconfig_clean(v):
    neg(".gitconfig", f"[user]\n\tname = Dev Person\n\temail = dev@example.com\n\tsigningkey = {hx(16).upper()}\n[commit]\n\tgpgsign = true\n"
        "[credential]\n\thelper = store --file ~/.config/git/credentials-not-here\n[credential \"https://github.com\"]\n\thelper = !gh auth git-credential\n"
        "[url \"git@github.com:\"]\n\tinsteadOf = https://github.com/\n[alias]\n\tlg = log --graph --oneline\n", "gitconfig no creds")


def n_kube_config_exec(v):
    neg(".kube/config", "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {base64.b64encode(certs_chain()[2].encode()).decode()}\n"
        f"    server: https://{hx(32).upper()}.gr7.eu-west-1.eks.amazonaws.com\n  name: prod\ncontexts:\n- context:\n    cluster: prod\n    user: prod\n  name: prod\n"
        "current-context: prod\nusers:\n- name: prod\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: aws\n      args: [eks, get-token, --cluster-name, prod]\n", "kubeconfig exec (CA data only)")


def n_aws_config(v):
    neg(".aws/config", f"[default]\nregion = eu-west-1\noutput = json\n\n[profile prod]\nsso_start_url = https://acme.awsapps.com/start\n"
        f"sso_region = eu-west-1\nsso_account_id = {R.randint(10**11, 10**12 - 1)}\nsso_role_name = AdministratorAccess\n"
        f"\n[profile ci]\nrole_arn = arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/ci\nsource_profile = default\nmfa_serial = arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:mfa/dev\n"
        "credential_process = /usr/local/bin/aws-vault exec ci --json\n", "aws config no keys")


def n_hash_digest_txt(v):
    neg("Downloads/checksums.txt", "".join(f"{pick(sha256h(), hx(128), hx(40), hx(32))}  {proj()}-{R.randint(1, 9)}.iso\n" for _ in range(8)), "checksum list")


def n_notebook_clean(v):
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
                     "source": ["import os\n", "from openai import OpenAI\n", "client = OpenAI(api_key=os.environ[\"OPENAI_API_KEY\"])\n"]},
                    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [{"output_type": "display_data", "data": {
                        "image/png": base64.b64encode(b"\x89PNG\r\n\x1a\n" + rb(1500)).decode(), "text/plain": ["<Figure size 640x480 with 1 Axes>"]}, "metadata": {}}],
                     "source": ["plt.plot(x, y)"]}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
    neg(f"notebooks/{pick('analysis', 'eda', 'plots')}.ipynb", json.dumps(nb, indent=1), "notebook env + png output")


def n_spring_props(v):
    neg(f"code/{proj()}/src/main/resources/application.properties",
        "spring.datasource.url=jdbc:postgresql://localhost:5432/app\nspring.datasource.username=${DB_USER}\n"
        "spring.datasource.password=${DB_PASSWORD}\nspring.security.oauth2.client.registration.google.client-id=" + gclient_id() + "\n"
        "spring.security.oauth2.client.registration.google.client-secret=${GOOGLE_CLIENT_SECRET}\njwt.secret=${JWT_SECRET:}\n"
        "management.endpoints.web.exposure.include=health,info\n", "spring props with ${}")


def n_terraform_vars(v):
    neg(f"work/infra/terraform/variables.tf",
        "variable \"db_password\" {\n  description = \"Master password for RDS\"\n  type        = string\n  sensitive   = true\n}\n\n"
        "resource \"random_password\" \"db\" {\n  length  = 32\n  special = true\n}\n\n"
        "resource \"aws_db_instance\" \"main\" {\n  password = random_password.db.result\n  username = \"app\"\n}\n\n"
        "data \"aws_secretsmanager_secret_version\" \"api\" {\n  secret_id = \"prod/api/key\"\n}\n", "terraform var refs")


NEG_FUNCS = [n_password_hash_yaml, n_password_hash_json, n_django_fixture, n_cloudinit_hash, n_scrypt_py, n_oidc_discovery,
             n_oauth_cfg, n_k8s_refs, n_helm_values, n_azure_cfg, n_auth0_spa, n_jwks_rsa, n_jwks_ec, n_stripe_pk, n_firebase,
             n_sentry, n_gha, n_gitlab_ci, n_compose_digests, n_package_lock, n_yarn_lock, n_pnpm_lock, n_gosum, n_cargo_lock,
             n_pip_hashes, n_sri_html, n_uuids, n_css_datauri, n_webpack_manifest, n_minified_js, n_pgp_pub, n_pgp_sig,
             n_known_hosts, n_authorized_keys, n_cert_chain, n_sops, n_ansible_vault, n_age, n_gpg_msg, n_env_example,
             n_readme_placeholders, n_docs_example_keys, n_test_fixture_py, n_mock_js, n_password_policy, n_code_reads_py,
             n_code_reads_js, n_history_prompting, n_aws_ids, n_stripe_ids, n_slack_ids, n_twilio_sid, n_analytics_html,
             n_wireguard, n_onion, n_crypto_addrs, n_ipfs, n_logs]
NEG_EXTRA = [n_netrc_tpl, n_k8s_secret_template, n_ssh_config, n_gitconfig_clean, n_kube_config_exec, n_aws_config,
             n_hash_digest_txt, n_notebook_clean, n_spring_props, n_terraform_vars]


# ================================================================= POSITIVES
def compose_filler(n_services):
    names = ["api", "worker", "scheduler", "web", "nginx", "redis", "rabbitmq", "elasticsearch", "kibana", "grafana", "prometheus",
             "loki", "promtail", "minio", "mailhog", "adminer", "jaeger", "otel-collector", "keycloak", "traefik"]
    out = []
    for name in R.sample(names, n_services):
        out += [f"  {name}:", f"    image: {pick('ghcr.io/acme/', '', 'docker.io/library/')}{name}:{R.randint(1, 9)}.{R.randint(0, 20)}",
                f"    container_name: {name}", "    restart: unless-stopped", "    networks:", "      - backend"]
        if R.random() < .7:
            out += ["    ports:", f"      - \"{R.randint(3000, 9999)}:{R.randint(80, 9000)}\""]
        out += ["    environment:", "      TZ: Europe/Berlin", f"      LOG_LEVEL: {pick('info', 'debug', 'warn')}",
                f"      {name.upper().replace('-', '_')}_PORT: \"{R.randint(1000, 9999)}\""]
        out += ["    volumes:", f"      - ./{name}/data:/data", f"      - ./{name}/config:/etc/{name}:ro",
                "    healthcheck:", f"      test: [\"CMD\", \"wget\", \"-qO-\", \"http://localhost:{R.randint(80, 9000)}/health\"]",
                "      interval: 30s", "      timeout: 5s", "      retries: 5", "    labels:",
                f"      - \"traefik.http.routers.{name}.rule=Host(`{name}.acme.local`)\"", f"      - \"traefik.enable={pick('true', 'false')}\"",
                "    logging:", "      driver: json-file", "      options:", "        max-size: \"10m\"", ""]
    return out


def p_compose_long(v):
    kind = v % 3
    pre = compose_filler(9)
    post = compose_filler(4)
    if kind == 0:
        pw = password()
        sec = ["  postgres:", "    image: postgres:16-alpine", "    restart: unless-stopped", "    environment:",
               "      POSTGRES_USER: app", f"      POSTGRES_PASSWORD: \"{pw}\"", "      POSTGRES_DB: app", "    volumes:",
               "      - pgdata:/var/lib/postgresql/data", ""]
        needle = pw
    elif kind == 1:
        ak, sk = aws_akid(), aws_secret()
        sec = ["  backup:", "    image: ghcr.io/acme/s3-backup:2.3", "    environment:", f"      - AWS_ACCESS_KEY_ID={ak}",
               f"      - AWS_SECRET_ACCESS_KEY={sk}", "      - S3_BUCKET=acme-backups-prod", "      - CRON=0 3 * * *", ""]
        needle = sk
    else:
        _, t = token(pick("sendgrid", "stripe", "slack_bot", "mailgun"))
        sec = ["  notifier:", "    image: ghcr.io/acme/notifier:1.9", "    environment:", f"      NOTIFIER_API_KEY: {t}",
               "      NOTIFIER_CHANNEL: ops", ""]
        needle = t
    lines = ["version: \"3.9\"", "", "x-logging: &default-logging", "  driver: json-file", "", "services:"] + pre + sec + post + \
            ["networks:", "  backend:", "    driver: bridge", "volumes:", "  pgdata:", "  miniodata:"]
    pos(f"{pick('projects', 'work', 'homelab')}/{proj()}/docker-compose.yml", "\n".join(lines) + "\n", "compose long", needle)


def k8s_filler(app, n):
    out = []
    for i in range(n):
        kind = pick("Service", "ConfigMap", "Ingress", "HorizontalPodAutoscaler", "ServiceAccount")
        out.append("---")
        out += [f"apiVersion: {'v1' if kind in ('Service', 'ConfigMap', 'ServiceAccount') else ('networking.k8s.io/v1' if kind == 'Ingress' else 'autoscaling/v2')}",
                f"kind: {kind}", "metadata:", f"  name: {app}-{kind.lower()}-{i}", f"  namespace: {app}", "  labels:",
                f"    app.kubernetes.io/name: {app}", f"    app.kubernetes.io/version: \"{R.randint(1, 5)}.{R.randint(0, 20)}.{R.randint(0, 9)}\""]
        if kind == "Service":
            out += ["spec:", "  type: ClusterIP", "  selector:", f"    app: {app}", "  ports:", "    - name: http", "      port: 80",
                    f"      targetPort: {R.randint(3000, 9000)}"]
        elif kind == "ConfigMap":
            out += ["data:", f"  LOG_LEVEL: {pick('info', 'debug')}", "  FEATURE_FLAGS: \"new-checkout,dark-mode\"",
                    f"  UPSTREAM_URL: http://{app}-upstream.svc.cluster.local", "  app.yaml: |", "    server:", "      port: 8080",
                    "      timeout: 30s", "    cache:", "      ttl: 300"]
        elif kind == "Ingress":
            out += ["  annotations:", "    cert-manager.io/cluster-issuer: letsencrypt", "spec:", "  ingressClassName: nginx", "  rules:",
                    f"    - host: {app}.acme-corp.io", "      http:", "        paths:", "          - path: /", "            pathType: Prefix",
                    "            backend:", "              service:", f"                name: {app}", "                port:", "                  number: 80"]
        elif kind == "HorizontalPodAutoscaler":
            out += ["spec:", "  scaleTargetRef:", "    apiVersion: apps/v1", "    kind: Deployment", f"    name: {app}",
                    "  minReplicas: 2", "  maxReplicas: 10", "  metrics:", "    - type: Resource", "      resource:", "        name: cpu",
                    "        target:", "          type: Utilization", "          averageUtilization: 70"]
        else:
            out += [f"automountServiceAccountToken: {pick('true', 'false')}"]
    return out


def p_k8s_long(v):
    app = proj()
    kind = v % 3
    if kind == 0:
        _, t = token(pick("stripe", "slack_bot", "openai", "twilio_key", "datadog"))
        envname = pick("PAYMENTS_API_KEY", "SLACK_TOKEN", "LLM_API_KEY", "UPSTREAM_KEY", "DD_API_KEY")
        val, needle = t, t
    elif kind == 1:
        pw = password(safe="-_.")
        envname, val, needle = "DATABASE_URL", f"postgresql://{app}:{pw}@{app}-db.prod.svc.cluster.local:5432/{app}", pw
    else:
        pw = password()
        envname, val, needle = pick("REDIS_PASSWORD", "RABBITMQ_DEFAULT_PASS", "ADMIN_PASSWORD"), pw, pw
    dep = ["---", "apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {app}", f"  namespace: {app}", "spec:", "  replicas: 3",
           "  template:", "    spec:", "      containers:", "        - name: app", f"          image: ghcr.io/acme/{app}:{sha1()[:7]}",
           "          resources:", "            limits:", "              cpu: 500m", "              memory: 512Mi", "          env:",
           "            - name: LOG_FORMAT", "              value: json", f"            - name: {envname}", f"              value: \"{val}\"",
           "            - name: PORT", "              value: \"8080\""]
    lines = k8s_filler(app, 12) + dep + k8s_filler(app, 5)
    pos(f"work/infra/k8s/{app}/{pick('all', 'prod', 'bundle')}.yaml", "\n".join(lines) + "\n", "k8s long", needle)


def p_history(v):
    kind = v % 5
    if kind == 0:
        t = gh_style("ghp_")
        cmd, needle = f"export GITHUB_TOKEN={t}", t
    elif kind == 1:
        pw = password(safe="!%*-_.")
        cmd, needle = f"mysql -h db-prod.internal -u admin -p'{pw}' app", pw
    elif kind == 2:
        _, t = token(pick("stripe", "openai", "anthropic", "jwt", "digitalocean"))
        cmd, needle = f"curl -sS -H \"Authorization: Bearer {t}\" https://api.acme-corp.io/v2/accounts | jq .", t
    elif kind == 3:
        sk = aws_secret()
        cmd, needle = f"aws configure set aws_secret_access_key {sk} --profile prod", sk
    else:
        pw = password(safe="-_.")
        cmd, needle = f"PGPASSWORD={pw} psql -h 10.0.4.12 -U postgres -d billing -c 'select count(*) from invoices'", pw
    cmds = [R.choice(BENIGN_CMDS) for _ in range(R.randint(300, 500))]
    cmds.insert(R.randint(100, 280), cmd)
    if v % 2 == 0:
        pos(".bash_history", "\n".join(cmds) + "\n", "bash history", needle)
    else:
        t0 = ts()
        pos(".zsh_history", "".join(f": {t0 + i * 53}:0;{c}\n" for i, c in enumerate(cmds)), "zsh history", needle)


def p_notebook_source(v):
    kind = pick("openai", "anthropic", "huggingface", "google_api")
    _, t = token(kind)
    stmt = {"openai": f"client = OpenAI(api_key=\"{t}\")\n", "anthropic": f"client = anthropic.Anthropic(api_key='{t}')\n",
            "huggingface": f"login(token=\"{t}\")\n", "google_api": f"genai.configure(api_key=\"{t}\")\n"}[kind]
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Exploration\n", "Quick look at the dataset."]},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["import pandas as pd\n", "import numpy as np\n"]},
             {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
              "source": ["import os\n", "# TODO move to env\n", stmt, "MODEL = 'default'\n"]},
             {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["(1024, 12)\n"]}],
              "source": ["df = pd.read_csv('data.csv')\n", "df.shape"]}]
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    pos(f"notebooks/{pick('exploration', 'llm-test', 'scratch')}.ipynb", json.dumps(nb, indent=1), "ipynb source", t)


def p_notebook_output(v):
    ak, sk = aws_akid(), aws_secret()
    out_text = ["[default]\n", f"aws_access_key_id = {ak}\n", f"aws_secret_access_key = {sk}\n", "region = eu-west-1\n"]
    if v % 2:
        pw = password()
        out_text = ["environ({'HOME': '/home/jovyan', 'SHELL': '/bin/bash', ", f"'DB_PASSWORD': '{pw}', ", "'LANG': 'C.UTF-8'})\n"]
        sk = pw
    cells = [{"cell_type": "code", "execution_count": 4, "metadata": {},
              "outputs": [{"name": "stdout", "output_type": "stream", "text": out_text}],
              "source": ["!cat ~/.aws/credentials" if v % 2 == 0 else "os.environ"]},
             {"cell_type": "code", "execution_count": 5, "metadata": {}, "outputs": [], "source": ["import boto3\n", "s3 = boto3.client('s3')"]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    pos(f"notebooks/{pick('s3-debug', 'env-check')}.ipynb", json.dumps(nb, indent=1), "ipynb output", sk)


def p_eml(v):
    pw = password()
    user = pick("svc_reporting", "admin", "jdoe")
    body = (f"Hi team,\n\nAs discussed, here are the credentials for the staging reporting DB:\n\n  host: reporting-staging.acme-corp.io\n"
            f"  user: {user}\n  password: {pw}\n\nPlease don't forward this.\n\nCheers,\nMark\n")
    if v % 2:
        body = body.replace("=", "=3D")
    hdr = (f"Return-Path: <mark@acme-corp.io>\nReceived: from mail.acme-corp.io (mail.acme-corp.io [10.1.2.3])\n\tby mx.example.com with ESMTPS id {rs(12)}\n"
           f"\tfor <me@example.com>; Tue, 12 Mar 2024 09:13:44 +0100\nDKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme-corp.io; s=sel1;\n"
           f"\th=from:to:subject:date; bh={b64(32)};\n\tb={wrap(b64(256), 70).replace(chr(10), chr(10) + chr(9))}\n"
           f"Message-ID: <{ruuid()}@acme-corp.io>\nDate: Tue, 12 Mar 2024 09:13:40 +0100\nFrom: Mark <mark@acme-corp.io>\nTo: me@example.com\n"
           "Subject: staging DB access\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"b1\"\n\n--b1\n"
           f"Content-Type: text/plain; charset=\"UTF-8\"\nContent-Transfer-Encoding: {'quoted-printable' if v % 2 else '7bit'}\n\n")
    html = f"--b1\nContent-Type: text/html; charset=\"UTF-8\"\n\n<p>Hi team,</p><p>see plain text part</p>\n--b1--\n"
    pos(f"Mail/{pick('INBOX', 'Archive')}/cur/{ts()}.{rs(8)}.mail:2,S" .replace(":", "_"), hdr + body + "\n" + html, "eml body password", pw)


def p_slack_export(v):
    pw = password()
    msgs = []
    for i in range(30):
        msgs.append({"type": "message", "user": "U0" + rs(9, UP + DI), "text": pick("deploy done :rocket:", "lgtm", "who is on call?",
                     "rolling back api to previous tag", "CI is red again", "can someone review my PR?"), "ts": f"{ts()}.{R.randint(100000, 999999)}",
                     "team": "T0" + rs(9, UP + DI)})
    secret_msg = pick(f"here is the prod password: {pw}", f"prod db pw is {pw} (rotate after)", f"admin login for grafana -> admin / {pw}")
    msgs.insert(R.randint(10, 25), {"type": "message", "user": "U0" + rs(9, UP + DI), "text": secret_msg, "ts": f"{ts()}.{R.randint(100000, 999999)}"})
    pos(f"Downloads/slack-export-acme/{pick('ops', 'incident-42', 'dev')}/2024-03-{R.randint(10, 28)}.json", json.dumps(msgs, indent=4), "slack export", pw)


def p_runbook(v):
    pw = password(safe="-_.")
    kind = v % 3
    if kind == 0:
        cmd = f"psql \"postgresql://admin:{pw}@db-primary.prod.internal:5432/app?sslmode=require\""
    elif kind == 1:
        cmd = f"redis-cli -h cache.prod.internal -p 6379 -a {pw} --no-auth-warning INFO replication"
    else:
        cmd = f"mongosh \"mongodb+srv://root:{pw}@cluster0.{rs(5, LO + DI)}.mongodb.net/admin\""
    md = ("# Runbook: database failover\n\n## When to use\n\nPrimary is unhealthy for > 5 minutes.\n\n## Steps\n\n1. Page the DBA on call.\n"
          "2. Check replication lag:\n\n```bash\n" + cmd + "\n```\n\n3. Promote the replica:\n\n```bash\nkubectl -n db exec -it pg-1 -- patronictl failover\n```\n\n"
          "4. Update the status page.\n\n## Rollback\n\nSee [failback.md](failback.md).\n")
    pos(f"notes/runbooks/{pick('db-failover', 'cache-incident', 'oncall')}.md", md, "runbook codeblock", pw)


def p_csv_accounts(v):
    kind = pick("github_fine", "gitlab", "datadog", "sendgrid", "linear")
    rows = ["name,email,team,created,api_key,notes"]
    keys = []
    for i in range(R.randint(6, 12)):
        _, t = token(kind)
        keys.append(t)
        rows.append(f"svc-{pick('ci', 'deploy', 'backup', 'metrics', 'sync')}-{i},svc{i}@acme-corp.io,{pick('platform', 'data', 'sre')},{isodate()[:10]},{t},")
    pos(pick("Documents/service-accounts.csv", "work/audit/service_accounts_2024.csv"), "\n".join(rows) + "\n", "csv service accounts", keys[2])


def p_yaml_anchor_pem(v):
    key = pem_private(pick("rsa", "ec", "pkcs8_ec", "ed_openssh"))
    ind = "      "
    y = ("x-common: &common\n  region: eu-west-1\n  retries: 3\n\ndefaults: &defaults\n  <<: *common\n  timeout: 30\n\n"
         "environments:\n  staging:\n    <<: *defaults\n    url: https://staging.acme-corp.io\n  prod:\n    <<: *defaults\n    url: https://acme-corp.io\n"
         "    signing:\n      algorithm: RS256\n      private_key: |\n" + "".join(ind + "  " + l + "\n" for l in key.strip().splitlines()) +
         "      public_key_url: https://acme-corp.io/.well-known/jwks.json\n\nfeatures:\n  description: >\n    This folded string is long and spans\n    multiple lines for no reason.\n")
    pos(f"code/{proj()}/config/{pick('environments', 'deploy')}.yaml", y, "yaml anchors + PEM block", key.splitlines()[0])


def p_yaml_folded_token(v):
    _, t = token(pick("github_classic", "slack_bot", "npm", "gitlab", "vault"))
    y = ("defaults: &d\n  api: https://api.acme-corp.io\nci:\n  <<: *d\n  notes: |\n    multi-line\n    notes here\n  auth:\n"
         f"    token: >-\n      {t}\n  matrix: [a, b]\n")
    pos(f"code/{proj()}/.ci/settings.yaml", y, "yaml folded token", t)


def p_env_messy(v):
    _, t = token(pick("stripe", "openai", "sendgrid", "anthropic", "github_classic"))
    pw = password(safe="!%*-_.")
    lines = ["# Production env - DO NOT COMMIT", "export NODE_ENV=production  # mode", "PORT = 8080", "",
             f"export API_BASE=\"https://api.acme-corp.io\"  # base", f"export DB_PASSWORD='{pw}' # rotated 2024-03",
             f"PAYMENT_KEY={t}   # live key", "FEATURE_X=on", "LOG_LEVEL=info # noisy otherwise"]
    txt = "\r\n".join(lines) + "\r\n"
    data = ("\ufeff" + txt).encode("utf-8")
    needle = t if v % 2 == 0 else pw
    pos(f"code/{proj()}/{pick('.env', '.env.production', '.env.local')}", data, "env CRLF+BOM+export+comments", needle)


def p_ini(v):
    pw = password()
    kind = v % 2
    if kind == 0:
        s = ("; generated by installer\n[general]\nname = reporting\n\n[database]\nhost     = 10.2.0.15\nport     = 5432\n"
             f"user     = \"report_rw\"\npassword = \"{pw}\"\n\n[smtp]\nserver = smtp.acme-corp.io\n")
    else:
        s = f"[client]\nuser = root\npassword = '{pw}'\nhost = localhost\n\n[mysql]\ndatabase = app\n"
    pos(pick(f"work/{proj()}/settings.ini", ".my.cnf") if kind else f"work/{proj()}/settings.ini", s, "ini quoted", pw)


def p_xml_cdata(v):
    pw = password(safe="!%*-_.&<>")
    xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n  <appSettings>\n    <add key=\"Env\" value=\"Production\" />\n  </appSettings>\n"
           "  <dataSource>\n    <url>jdbc:sqlserver://sql01.acme.local:1433;databaseName=erp</url>\n    <username>erp_app</username>\n"
           f"    <password><![CDATA[{pw}]]></password>\n  </dataSource>\n</configuration>\n")
    pos(f"work/{proj()}/{pick('app.config.xml', 'server.xml', 'settings.xml')}", xml, "xml CDATA", pw)


def p_json_escaped(v):
    ak = aws_akid()
    while True:
        sk = aws_secret()
        if "/" in sk:
            break
    esc = sk.replace("/", "\\/")
    s = '{"profile":"prod","credentials":{"accessKeyId":"' + ak + '","secretAccessKey":"' + esc + '","expiration":null},"endpoint":"https:\\/\\/s3.eu-west-1.amazonaws.com\\/"}\n'
    pos(f".config/{pick('s3sync', 'cyberduck', 'backup-tool')}/profile.json", s, "json escaped slashes", esc, value=sk)


def p_dockerconfigjson_k8s(v):
    _, t = token(pick("github_classic", "dockerhub", "gitlab"))
    user = pick("acme-bot", "deploy")
    cfg = json.dumps({"auths": {"ghcr.io": {"username": user, "password": t, "auth": b64e(f"{user}:{t}")}}})
    enc = b64e(cfg)
    y = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: ghcr-pull\n  namespace: {proj()}\ntype: kubernetes.io/dockerconfigjson\n"
         f"data:\n  .dockerconfigjson: {enc}\n")
    pos(f"work/infra/k8s/{proj()}/pull-secret.yaml", y, "k8s dockerconfigjson b64", enc, value=t)


def p_k8s_secret_data(v):
    pw = password()
    y = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: {proj()}\ntype: Opaque\ndata:\n"
         f"  username: {b64e('app')}\n  password: {b64e(pw)}\n  host: {b64e('db.prod.internal')}\n")
    pos(f"work/infra/k8s/{proj()}/db-secret.yaml", y, "k8s Secret data b64", b64e(pw), value=pw)


def p_gitconfig_url(v):
    t = gh_style("ghp_") if v % 2 == 0 else password(safe="-_.")
    user = pick("jdoe", "deploy-bot", "oauth2")
    s = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
         f"[remote \"origin\"]\n\turl = https://{user}:{t}@{pick('github.com/acme/', 'gitlab.acme-corp.io/platform/')}{proj()}.git\n"
         "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n")
    pos(f"code/{proj()}/.git/config" if v % 2 == 0 else ".git-credentials-backup/config", s, "git remote url creds", t)


def p_pipconf(v):
    pw = password(safe="-_.")
    s = f"[global]\ntimeout = 60\nindex-url = https://ci-reader:{pw}@nexus.acme-corp.io/repository/pypi/simple\ntrusted-host = nexus.acme-corp.io\n"
    pos(pick(".config/pip/pip.conf", ".pip/pip.conf"), s, "pip.conf creds", pw)


def p_npmrc(v):
    t = gh_style("npm_") if v % 2 == 0 else b64e(f"ci:{password()}")
    s = ("registry=https://registry.npmjs.org/\n@acme:registry=https://npm.pkg.github.com/\nsave-exact=true\n"
         + (f"//registry.npmjs.org/:_authToken={t}\n" if v % 2 == 0 else f"//nexus.acme-corp.io/repository/npm/:_auth={t}\nalways-auth=true\n"))
    pos(".npmrc", s, "npmrc token", t)


def p_gemrc(v):
    t = "rubygems_" + hx(48)
    pos(".gem/credentials", f"---\n:rubygems_api_key: {t}\n:github: Bearer {gh_style('ghp_')}\n", "gem credentials", t)


def p_cargo(v):
    t = "cio" + rs(32)
    pos(".cargo/credentials.toml", f"[registry]\ntoken = \"{t}\"\n\n[registries.acme]\ntoken = \"Bearer {rs(40)}\"\n", "cargo credentials", t)


def p_bat(v):
    _, t = token(pick("openai", "sendgrid", "stripe", "huggingface"))
    s = ("@echo off\r\nREM nightly export\r\nsetlocal\r\nset EXPORT_DIR=C:\\exports\r\n"
         f"set API_KEY={t}\r\n\"C:\\Program Files\\Acme\\exporter.exe\" --out %EXPORT_DIR% --key %API_KEY%\r\nendlocal\r\n")
    pos(f"Documents/scripts/{pick('nightly_export', 'sync')}.bat", s, "bat set", t)


def p_ps1_env(v):
    _, t = token(pick("anthropic", "github_fine", "digitalocean", "shopify"))
    s = ("# Requires -Version 7\nparam([string]$Env = 'prod')\n$ErrorActionPreference = 'Stop'\n"
         f"$env:API_KEY = \"{t}\"\nInvoke-RestMethod -Uri \"https://api.acme-corp.io/$Env/sync\" -Headers @{{ Authorization = \"Bearer $env:API_KEY\" }}\n")
    pos(f"Documents/WindowsPowerShell/Scripts/{pick('Sync-Api', 'Deploy')}.ps1", s, "ps1 $env:", t)


def p_ps1_securestring(v):
    pw = password(safe="!%*-_.")
    s = ("$user = 'ACME\\svc_backup'\n"
         f"$secure = ConvertTo-SecureString \"{pw}\" -AsPlainText -Force\n"
         "$cred = New-Object System.Management.Automation.PSCredential($user, $secure)\nNew-PSDrive -Name B -PSProvider FileSystem -Root \\\\nas01\\backup -Credential $cred\n")
    pos(f"Documents/scripts/{pick('map-backup', 'mount-nas')}.ps1", s, "ps1 ConvertTo-SecureString", pw)


def p_systemd(v):
    pw = password(safe="!%*-_.")
    s = ("[Unit]\nDescription=Acme API\nAfter=network-online.target\n\n[Service]\nType=simple\nUser=acme\nWorkingDirectory=/opt/acme\n"
         "Environment=NODE_ENV=production\n" + (f"Environment=DB_PASSWORD={pw}\n" if v % 2 == 0 else f"Environment=\"DB_USER=acme\" \"DB_PASSWORD={pw}\"\n") +
         "ExecStart=/usr/bin/node server.js\nRestart=always\n\n[Install]\nWantedBy=default.target\n")
    pos(f".config/systemd/user/{pick('acme-api', 'worker')}.service", s, "systemd Environment", pw)


def p_crontab(v):
    pw = password(safe="-_.!")
    s = ("# m h  dom mon dow   command\nMAILTO=\"\"\n*/5 * * * * /usr/local/bin/healthcheck.sh >/dev/null 2>&1\n"
         f"0 2 * * * curl -fsS -u backup:{pw} -T /var/backups/db.sql.gz https://files.acme-corp.io/upload/ >/dev/null\n"
         "30 4 * * 0 /usr/bin/find /tmp -mtime +7 -delete\n")
    pos(pick("crontab.txt", ".config/crontab.bak"), s, "crontab curl -u", pw)


def p_src_ruby(v):
    _, t = token(pick("stripe", "sendgrid", "shopify", "github_classic"))
    s = ("require 'net/http'\n\nmodule Acme\n  class Client\n" + pick(f"    API_KEY = '{t}'.freeze\n", f"    API_KEY = %q({t})\n") +
         "    def initialize(base = 'https://api.acme-corp.io')\n      @base = base\n    end\n  end\nend\n")
    pos(f"code/{proj()}/lib/acme/client.rb", s, "ruby", t)


def p_src_python(v):
    ak, sk = aws_akid(), aws_secret()
    s = ("import boto3\n\n\ndef s3():\n    return boto3.client(\n        's3',\n"
         f"        aws_access_key_id='{ak}',\n        aws_secret_access_key=\"\"\"{sk}\"\"\",\n        region_name='eu-west-1',\n    )\n")
    pos(f"code/{proj()}/scripts/{pick('upload', 'sync_s3')}.py", s, "python triple-quoted", sk)


def p_src_js_template(v):
    _, t = token(pick("openai", "anthropic", "slack_bot", "telegram"))
    s = ("const fetch = require('node-fetch');\n\n" + f"const apiKey = `{t}`;\n" +
         "module.exports = async function call(msg) {\n  return fetch(`https://api.acme-corp.io/v1/chat`, {\n"
         "    headers: { Authorization: `Bearer ${apiKey}` },\n    method: 'POST', body: JSON.stringify({ msg }),\n  });\n};\n")
    pos(f"code/{proj()}/src/{pick('llm', 'bot', 'notify')}.js", s, "js template literal", t)


def p_src_go(v):
    _, t = token(pick("datadog", "digitalocean", "gitlab", "vault"))
    s = ("package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\nconst (\n\tbaseURL  = \"https://api.acme-corp.io\"\n"
         f"\tapiToken = `{t}`\n)\n\nfunc main() {{\n\treq, _ := http.NewRequest(\"GET\", baseURL, nil)\n\treq.Header.Set(\"Authorization\", \"Bearer \"+apiToken)\n\tfmt.Println(req)\n}}\n")
    pos(f"go/src/{proj()}/cmd/cli/main.go", s, "go raw string const", t)


def p_src_java(v):
    pw = password(safe="!%*-_.")
    s = ("package com.acme.db;\n\nimport java.sql.*;\n\npublic class Db {\n    private static final String URL = \"jdbc:postgresql://db01:5432/erp\";\n"
         "    private static final String USER = \"erp\";\n" + f"    private static final String PASSWORD = \"{pw}\";\n\n"
         "    public static Connection open() throws SQLException {\n        return DriverManager.getConnection(URL, USER, PASSWORD);\n    }\n}\n")
    pos(f"code/{proj()}/src/main/java/com/acme/db/Db.java", s, "java static final", pw)


def p_src_csharp(v):
    conn_pw = password(safe="!%*-_.")
    acct_key = b64(64)
    if v % 2 == 0:
        s = ("namespace Acme.Data\n{\n    public static class Settings\n    {\n"
             f"        public const string ConnectionString = @\"Server=sql01;Database=erp;User Id=erp_app;Password={conn_pw};TrustServerCertificate=True\";\n    }}\n}}\n")
        needle = conn_pw
    else:
        s = ("using Azure.Storage.Blobs;\n\nvar client = new BlobServiceClient(\n"
             f"    \"DefaultEndpointsProtocol=https;AccountName=acmeprod{rs(4, LO)};AccountKey={acct_key};EndpointSuffix=core.windows.net\");\n")
        needle = acct_key
    pos(f"code/{proj()}/src/Acme.Data/Settings.cs", s, "csharp", needle)


def p_src_kotlin(v):
    _, t = token(pick("github_classic", "google_api", "twilio_key", "mailgun"))
    s = ("package com.acme.app\n\nobject ApiConfig {\n    const val BASE_URL = \"https://api.acme-corp.io\"\n" + f"    val token = \"{t}\"\n}}\n")
    pos(f"code/{proj()}/app/src/main/kotlin/com/acme/app/ApiConfig.kt", s, "kotlin val", t)


def p_src_rust(v):
    _, t = token(pick("stripe", "huggingface", "npm", "linear"))
    s = ("use reqwest::Client;\n\n" + f"const API_SECRET: &str = r\"{t}\";\n\n" +
         "pub async fn ping(c: &Client) -> reqwest::Result<()> {\n    let secret = API_SECRET;\n    c.get(\"https://api.acme-corp.io\").bearer_auth(secret).send().await?;\n    Ok(())\n}\n")
    if v % 2:
        s = s.replace(f"const API_SECRET: &str = r\"{t}\";", f"let secret = r#\"{t}\"#;")
    pos(f"rust/{proj()}/src/client.rs", s, "rust raw string", t)


def p_postman(v):
    t = jwt() if v % 2 == 0 else token(pick("github_classic", "stripe", "gitlab"))[1]
    col = {"info": {"_postman_id": ruuid(), "name": f"{proj()} API", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
           "item": [{"name": "List orders", "request": {"method": "GET", "header": [{"key": "Accept", "value": "application/json"}],
                                                          "url": {"raw": "{{baseUrl}}/orders", "host": ["{{baseUrl}}"], "path": ["orders"]}}}],
           "auth": {"type": "bearer", "bearer": [{"key": "token", "value": t, "type": "string"}]},
           "variable": [{"key": "baseUrl", "value": "https://api.acme-corp.io/v1"}]}
    pos(f"Documents/Postman/{proj()}.postman_collection.json", json.dumps(col, indent=2), "postman bearer", t)


def p_har(v):
    t = jwt()
    sess = b64u(32)
    entries = []
    for i in range(6):
        hdrs = [{"name": "Accept", "value": "*/*"}, {"name": "User-Agent", "value": "Mozilla/5.0"}]
        if i == 3:
            hdrs.append({"name": "Authorization", "value": f"Bearer {t}"})
            hdrs.append({"name": "Cookie", "value": f"_ga=GA1.2.{R.randint(10**8, 10**9)}.{ts()}; session={sess}; theme=dark"})
        entries.append({"startedDateTime": isodate(), "time": R.randint(10, 500),
                        "request": {"method": "GET", "url": f"https://app.acme-corp.io/api/{pick('me', 'orders', 'cart')}", "httpVersion": "HTTP/2",
                                    "headers": hdrs, "cookies": [], "queryString": [], "headersSize": -1, "bodySize": 0},
                        "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2", "headers": [], "cookies": [],
                                     "content": {"size": 10, "mimeType": "application/json"}, "redirectURL": "", "headersSize": -1, "bodySize": 10},
                        "cache": {}, "timings": {"send": 0, "wait": 20, "receive": 1}})
    pos(f"Downloads/{pick('app.acme-corp.io', 'bugreport')}.har", json.dumps({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "124"},
                                                                                      "entries": entries}}, indent=2), "HAR auth header", t if v % 2 == 0 else sess)


def p_gcp_sa(v):
    key = pem_private("rsa_pkcs8")
    sa = {"type": "service_account", "project_id": f"{proj()}-prod", "private_key_id": hx(40), "private_key": key,
          "client_email": f"deployer@{proj()}-prod.iam.gserviceaccount.com", "client_id": str(R.randint(10**20, 10**21)),
          "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
          "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs", "universe_domain": "googleapis.com"}
    if v % 2:
        wrapper = {"name": "ci-config", "settings": {"retries": 3}, "gcp": {"credentials": sa}}
        txt = json.dumps(wrapper, indent=2)
    else:
        txt = json.dumps(sa, indent=2)
    pos(pick(f"Downloads/{proj()}-prod-{hx(12)}.json", f"work/{proj()}/ci/gcp.json"), txt, "GCP SA key (escaped PEM)", "-----BEGIN PRIVATE KEY-----")


def p_netrc(v):
    pw = password(safe="!%*-_.")
    s = ("machine github.com\n  login oauth\n  password x-oauth-basic-placeholder\n\n" if False else "") + \
        f"machine api.heroku.com\n  login me@example.com\n  password {ruuid()}\nmachine files.acme-corp.io login backup password {pw}\n"
    pos(".netrc", s, "netrc multi", pw)


def p_tfvars(v):
    pw = password(safe="!%*-_.")
    s = (f"region = \"eu-west-1\"\nenv    = \"prod\"\ninstance_type = \"t3.large\"\n\ndb_master_password = \"{pw}\"\n"
         "tags = {\n  owner = \"platform\"\n}\n")
    pos(f"work/infra/terraform/{pick('prod', 'secrets')}.auto.tfvars", s, "tfvars password", pw)


def p_aws_creds(v):
    ak, sk = aws_akid(), aws_secret()
    s = ("# managed by hand\n[default]\nregion = eu-west-1\n\n[old-admin]  ; do not use\n"
         f"aws_access_key_id={ak}\naws_secret_access_key={sk}\n\n[sso]\nsso_session = acme\n")
    pos(".aws/credentials", s, "aws credentials", sk)


def p_php(v):
    pw = password(safe="!%*-_.")
    s = ("<?php\n/** WordPress base configuration */\ndefine( 'DB_NAME', 'wp_prod' );\ndefine( 'DB_USER', 'wp_user' );\n"
         f"define( 'DB_PASSWORD', '{pw}' );\ndefine( 'DB_HOST', 'localhost' );\n"
         + "".join(f"define( '{k}', '{rs(64, ALNUM + '!@#%^&*()-_[]{}<>~+=,.;:/?|')}' );\n".replace("'", "'", 1) for k in ['AUTH_KEY', 'SECURE_AUTH_KEY'])
         + "$table_prefix = 'wp_';\n")
    s = s.replace("\\", "")
    pos(f"sites/{proj()}/wp-config.php", s, "php define", pw)


def p_spring(v):
    pw = password(safe="!%*-_.")
    s = ("spring.application.name=erp\nspring.datasource.url=jdbc:mysql://db01:3306/erp\nspring.datasource.username=erp\n"
         f"spring.datasource.password={pw}\nspring.jpa.hibernate.ddl-auto=validate\n")
    pos(f"code/{proj()}/src/main/resources/application-prod.properties", s, "spring properties", pw)


def p_pgpass(v):
    pw = password(safe="!%*-_.")
    s = f"localhost:5432:*:postgres:postgres\ndb-prod.internal:5432:billing:billing_rw:{pw}\n"
    pos(".pgpass", s, "pgpass", pw)


def p_docker_config(v):
    pw = password()
    auth = b64e(f"acme-ci:{pw}")
    s = json.dumps({"auths": {"https://index.docker.io/v1/": {}, "registry.acme-corp.io": {"auth": auth}}, "credsStore": "", "currentContext": "default"}, indent="\t")
    pos(".docker/config.json", s, "docker config auth b64", auth, value=pw)


def p_ssh_key_odd(v):
    key = pem_private(pick("ed_openssh", "rsa", "ec"))
    pos(pick("backup/old-laptop/home/.ssh/id_rsa", "Documents/keys/deploy_key", "Downloads/server-key.pem"), key, "private key file", key.splitlines()[0])


def p_key_in_json(v):
    key = pem_private(pick("ec", "pkcs8_ec", "rsa"))
    s = json.dumps({"name": "signer", "kid": hx(8), "alg": "ES256", "pem": key, "created": isodate()}, indent=2)
    pos(f"code/{proj()}/secrets/signer.json", s, "PEM in JSON", key.splitlines()[0])


def p_vscode(v):
    _, t = token(pick("github_classic", "openai", "anthropic", "gitlab"))
    s = ("{\n    \"editor.fontSize\": 14,\n    \"files.autoSave\": \"afterDelay\",\n    // TODO remove\n"
         f"    \"{pick('github.copilot.advanced', 'codegpt.apiKey', 'gitlab.personalAccessToken', 'rest-client.environmentVariables')}\": \"{t}\",\n"
         "    \"workbench.colorTheme\": \"Default Dark+\",\n}\n")
    pos(pick(".config/Code/User/settings.json", f"code/{proj()}/.vscode/settings.json"), s, "vscode jsonc", t)


def p_appsettings_azure(v):
    acct_key = b64(64)
    s = json.dumps({"Logging": {"LogLevel": {"Default": "Information"}},
                    "ConnectionStrings": {"Storage": f"DefaultEndpointsProtocol=https;AccountName=acme{rs(6, LO)};AccountKey={acct_key};EndpointSuffix=core.windows.net",
                                          "Db": "Server=tcp:acme.database.windows.net,1433;Authentication=Active Directory Default;"}}, indent=2)
    pos(f"code/{proj()}/appsettings.Development.json", s, "azure storage conn string", acct_key)


POS_FUNCS = [p_compose_long, p_k8s_long, p_history, p_notebook_source, p_notebook_output, p_eml, p_slack_export, p_runbook,
             p_csv_accounts, p_yaml_anchor_pem, p_yaml_folded_token, p_env_messy, p_ini, p_xml_cdata, p_json_escaped,
             p_dockerconfigjson_k8s, p_k8s_secret_data, p_gitconfig_url, p_pipconf, p_npmrc, p_gemrc, p_cargo, p_bat, p_ps1_env,
             p_ps1_securestring, p_systemd, p_crontab, p_src_ruby, p_src_python, p_src_js_template, p_src_go, p_src_java,
             p_src_csharp, p_src_kotlin, p_src_rust, p_postman, p_har, p_gcp_sa, p_netrc, p_tfvars, p_aws_creds, p_php, p_spring,
             p_pgpass, p_docker_config, p_ssh_key_odd, p_key_in_json, p_vscode, p_appsettings_azure]


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    # negatives: every func twice (variants 0/1) + extras -> ~126
    for v in (0, 1):
        for f in NEG_FUNCS:
            f(v)
    for f in NEG_EXTRA:
        f(0)
    # positives: every func twice, with more variety for the multi-kind ones -> ~100
    for v in (0, 1):
        for f in POS_FUNCS:
            f(v + 2 * (SEED % 2) if f in (p_compose_long, p_k8s_long, p_history, p_runbook) else v)
    for f in (p_history, p_compose_long):
        f(R.randint(0, 4))
    with open(os.path.join(OUT, "manifest.json"), "w") as fh:
        json.dump(MANIFEST, fh, indent=1)
    print(f"seed {SEED}: {COUNT['pos']} positive files, {COUNT['neg']} negative files -> {OUT}")


if __name__ == "__main__":
    main()

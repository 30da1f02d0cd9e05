"""Negative families: same file kinds, no credential."""
import json, base64, string, hashlib
import vals as V
from vals import rs, B62, HEX, LOW, UP
from common import *
from pos import J, k8s_meta, deep_yaml

NEG = []


def neg(fam):
    def d(f):
        NEG.append((fam, f))
        return f
    return d


PLACEHOLDERS = ["changeme", "<password>", "xxx", "REPLACE_ME", "", "your-password-here", "<your-api-token>", "TODO", "********",
                "CHANGE_ME", "xxxxxxxx", "<redacted>", "${PASSWORD}", "null", "__PASSWORD__", "example",
                "YOUR_TOKEN_HERE", "<insert token>", "dummy", "****"]


def ph(r):
    return r.choice(PLACEHOLDERS)


def vault_blob(r, indent=""):
    salt, mac = rs(r, HEX, 64), rs(r, HEX, 64)
    ct = rs(r, HEX, 32 * r.randrange(1, 4))
    body = ("%s\n%s\n%s" % (salt, mac, ct)).encode().hex()
    return [indent + "$ANSIBLE_VAULT;1.1;AES256"] + [indent + body[i:i + 80] for i in range(0, len(body), 80)]


def sops_enc(r, typ="str", n=None):
    n = n or r.randrange(8, 40)
    return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]" % (V.secret_b64(r, n), V.secret_b64(r, 32), V.secret_b64(r, 16), typ)


# ======================= references =======================
@neg("gha_secret_ref")
def _(r):
    L = ["name: deploy", "on:", "  push:", "    branches: [main]", "jobs:", "  deploy:", "    runs-on: ubuntu-latest", "    env:",
         "      DB_PASSWORD: ${{ secrets.DB_PASSWORD }}", "      API_TOKEN: ${{ secrets.API_TOKEN }}", "    steps:", "      - uses: actions/checkout@v4",
         "      - uses: docker/login-action@v3", "        with:", "          registry: ghcr.io", "          username: ${{ github.actor }}",
         "          password: ${{ secrets.GITHUB_TOKEN }}", "      - run: ./deploy.sh", "        env:", "          SLACK_WEBHOOK_URL: ${{ secrets.SLACK_WEBHOOK_URL }}"]
    return "%s/.github/workflows/deploy.yml" % proj(r), J(L), "secrets.* references"


@neg("helm_template_ref")
def _(r):
    L = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: {{ include \"app.fullname\" . }}", "  labels:", "    {{- include \"app.labels\" . | nindent 4 }}",
         "type: Opaque", "data:", "  password: {{ .Values.auth.password | b64enc | quote }}", "  {{- if .Values.apiToken }}",
         "  api-token: {{ .Values.apiToken | b64enc }}", "  {{- end }}", "stringData:", "  DATABASE_URL: postgres://{{ .Values.db.user }}:{{ .Values.db.password }}@{{ .Values.db.host }}/app"]
    return "%s/charts/app/templates/secret.yaml" % proj(r), J(L), "helm template"


@neg("k8s_secretkeyref")
def _(r):
    app = r.choice(V.APPS)
    L = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: " + app, "spec:", "  template:", "    spec:", "      containers:", "        - name: app",
         "          image: registry.example.com/%s:1.2.3" % app, "          env:", "            - name: DB_PASSWORD", "              valueFrom:", "                secretKeyRef:",
         "                  name: %s-db" % app, "                  key: password", "            - name: API_TOKEN", "              valueFrom:",
         "                secretKeyRef: {name: %s-api, key: token}" % app, "          envFrom:", "            - secretRef:", "                name: %s-env" % app]
    return "%s/k8s/deployment.yaml" % proj(r), J(L), "secretKeyRef"


@neg("k8s_external_secret")
def _(r):
    L = ["apiVersion: external-secrets.io/v1beta1", "kind: ExternalSecret", "metadata:", "  name: db-credentials", "spec:", "  refreshInterval: 1h",
         "  secretStoreRef:", "    name: aws-secrets-manager", "    kind: ClusterSecretStore", "  target:", "    name: db-credentials", "  data:",
         "    - secretKey: password", "      remoteRef:", "        key: prod/%s/db" % r.choice(V.APPS), "        property: password"]
    return "%s/k8s/external-secret.yaml" % proj(r), J(L), "ExternalSecret reference"


@neg("k8s_sealed_secret")
def _(r):
    enc = lambda: base64.b64encode(b"\x02\x00" + V.rand_bytes(r, r.choice([270, 300, 350]))).decode()
    L = ["apiVersion: bitnami.com/v1alpha1", "kind: SealedSecret", "metadata:", "  name: db", "  namespace: prod", "spec:", "  encryptedData:",
         "    password: " + enc(), "    username: " + enc(), "  template:", "    metadata:", "      name: db"]
    return "%s/k8s/sealed-db.yaml" % proj(r), J(L), "SealedSecret (encrypted)"


@neg("compose_env_interp")
def _(r):
    L = ["services:", "  db:", "    image: postgres:16", "    environment:", "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}", "      POSTGRES_USER: ${POSTGRES_USER:-app}",
         "  app:", "    build: .", "    environment:", "      - DATABASE_URL=postgres://app:${POSTGRES_PASSWORD}@db:5432/app", "      - SECRET_KEY=${SECRET_KEY}",
         "      - REDIS_URL=redis://redis:6379/0", "    env_file:", "      - .env"]
    return "%s/docker-compose.yml" % proj(r), J(L), "interpolated"


@neg("compose_secrets_file")
def _(r):
    L = ["services:", "  db:", "    image: postgres:16", "    environment:", "      POSTGRES_PASSWORD_FILE: /run/secrets/db_password", "    secrets:", "      - db_password",
         "secrets:", "  db_password:", "    file: ./secrets/db_password.txt"]
    return "%s/docker-compose.yml" % proj(r), J(L), "_FILE secrets"


@neg("ansible_vault_inline")
def _(r):
    L = ["---", "db_user: %s" % V.user(r), "db_password: !vault |"] + vault_blob(r, "          ") + ["api_token: !vault |"] + vault_blob(r, "  ")
    return "%s/group_vars/prod/vars.yml" % proj(r), J(L), "!vault inline"


@neg("ansible_vault_file")
def _(r):
    return "%s/group_vars/prod/vault.yml" % proj(r), J(vault_blob(r)), "encrypted vault file"


@neg("ansible_lookup")
def _(r):
    L = ["---", "- hosts: db", "  become: true", "  vars:", "    db_password: \"{{ lookup('env', 'DB_PASSWORD') }}\"",
         "    api_token: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=secret/data/app:token') }}\"", "  tasks:", "    - name: create user",
         "      community.postgresql.postgresql_user:", "        name: app", "        password: \"{{ vault_db_password }}\"", "      no_log: true"]
    return "%s/playbooks/db.yml" % proj(r), J(L), "lookup / vars"


@neg("ansible_inventory_nopass")
def _(r):
    L = ["[web]"] + ["web%02d ansible_host=10.0.1.%d" % (i, 10 + i) for i in range(1, 5)] + ["", "[web:vars]", "ansible_user=deploy",
         "ansible_ssh_private_key_file=~/.ssh/deploy_ed25519", "ansible_become=true", "ansible_become_password=\"{{ vault_become_password }}\""]
    return "%s/inventory/hosts.ini" % proj(r), J(L), "key file path, templated become"


@neg("sops_yaml")
def _(r):
    L = ["db:", "    user: " + sops_enc(r), "    password: " + sops_enc(r), "api_token: " + sops_enc(r, n=40), "sops:", "    kms: []", "    age:",
         "        - recipient: age1" + rs(r, "qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58), "          enc: |", "            -----BEGIN AGE ENCRYPTED FILE-----"] + \
        ["            " + l for l in [V.secret_b64(r, 45) for _ in range(5)]] + ["            -----END AGE ENCRYPTED FILE-----",
         "    lastmodified: \"2024-%02d-%02dT10:%02d:00Z\"" % (r.randrange(1, 13), r.randrange(1, 28), r.randrange(60)), "    mac: " + sops_enc(r, n=32), "    version: 3.8.1"]
    return "%s/secrets/prod.enc.yaml" % proj(r), J(L), "SOPS encrypted"


@neg("sops_dotenv")
def _(r):
    L = ["DB_PASSWORD=" + sops_enc(r), "API_KEY=" + sops_enc(r, n=32), "sops_version=3.8.1", "sops_mac=" + sops_enc(r, n=32),
         "sops_lastmodified=2024-05-0%dT08:00:00Z" % r.randrange(1, 9), "sops_age__list_0__map_recipient=age1" + rs(r, "qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58)]
    return "%s/.env.enc" % proj(r), J(L), "SOPS dotenv"


@neg("systemd_envfile_ref")
def _(r):
    app = r.choice(V.APPS)
    L = ["[Unit]", "Description=%s" % app, "", "[Service]", "EnvironmentFile=/etc/%s/%s.env" % (app, app), "EnvironmentFile=-/etc/default/%s" % app,
         "LoadCredential=db-password:/etc/credstore/%s.db-password" % app, "Environment=DB_PASSWORD_FILE=%%d/db-password", "Environment=\"LOG_LEVEL=info\"",
         "ExecStart=/usr/bin/%s" % app, "DynamicUser=yes"]
    return "etc/systemd/system/%s.service" % app, J(L), "EnvironmentFile reference"


@neg("password_file_refs")
def _(r):
    L = ["scrape_configs:", "  - job_name: node", "    basic_auth:", "      username: prometheus", "      password_file: /run/secrets/prom_password",
         "  - job_name: api", "    authorization:", "      credentials_file: /etc/prometheus/api.token", "  - job_name: legacy",
         "    bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token"]
    return "etc/prometheus/prometheus.yml", J(L), "*_file references"


@neg("placeholder_env")
def _(r):
    L = ["# Copy to .env and fill in", "APP_ENV=local", "DB_HOST=localhost", "DB_USER=app", "DB_PASSWORD=" + ph(r), "API_KEY=" + ph(r),
         "SECRET_KEY=" + r.choice(["", "change-me", "<generate with openssl rand -hex 32>"]), "STRIPE_SECRET_KEY=sk_test_..."]
    return "%s/.env.example" % proj(r), J(L), "placeholders"


@neg("placeholder_yaml")
def _(r):
    L = ["database:", "  host: localhost", "  user: app", "  password: %s" % yq(r, ph(r), "double"), "smtp:", "  password: %s" % yq(r, ph(r), "single"),
         "api:", "  token: \"\"  # set via APP_API_TOKEN"]
    return "%s/config/config.sample.yaml" % proj(r), J(L), "placeholders yaml"


@neg("placeholder_tfvars")
def _(r):
    L = ["# terraform.tfvars.example", 'region      = "eu-west-1"', 'db_password = "%s"' % r.choice(["CHANGE_ME", "<db password>", "", "REPLACE_ME"]), 'api_token   = "xxx"']
    return "%s/terraform/terraform.tfvars.example" % proj(r), J(L), "placeholder tfvars"


# ======================= hashes =======================
@neg("htpasswd_hashes")
def _(r):
    L = []
    for _ in range(r.randrange(1, 5)):
        L.append("%s:%s" % (V.user(r), r.choice([V.bcrypt_hash(r), V.apr1_hash(r), V.sha_htpasswd(r)])))
    return "etc/nginx/.htpasswd", J(L), "hashed htpasswd"


@neg("haproxy_hashed")
def _(r):
    L = ["userlist admins", "    user admin password %s" % V.sha512crypt(r), "    group ops users admin", "", "backend be_app", "    http-request auth unless { http_auth(admins) }"]
    return "etc/haproxy/haproxy.cfg", J(L), "sha512-crypt"


@neg("pgbouncer_scram")
def _(r):
    L = ['"%s" "%s"' % (V.user(r), V.scram(r)), '"%s" "%s"' % ("pgbouncer", V.md5_pg(r, "pgbouncer"))]
    return "etc/pgbouncer/userlist.txt", J(L), "SCRAM/md5 hashes"


@neg("shadow_like")
def _(r):
    L = ["root:*:19700:0:99999:7:::", "%s:%s:19%d:0:99999:7:::" % (r.choice(V.FIRST), V.sha512crypt(r), r.randrange(100, 999))]
    return "%s/backup/etc-shadow.snippet" % home(r), J(L), "crypt hash"


@neg("traefik_basic_auth_hash")
def _(r):
    L = ["http:", "  middlewares:", "    auth:", "      basicAuth:", "        users:", "          - \"%s:%s\"" % (V.user(r), V.apr1_hash(r)), "        usersFile: /etc/traefik/users"]
    return "etc/traefik/dynamic/auth.yml", J(L), "apr1 hash"


@neg("jupyter_hashed_password")
def _(r):
    h = "argon2:$argon2id$v=19$m=10240,t=10,p=8$%s$%s" % (V.secret_b64(r, 16).rstrip("="), V.secret_b64(r, 32).rstrip("="))
    L = ["c = get_config()", "c.ServerApp.password = '%s'" % h, "c.ServerApp.ip = '127.0.0.1'"]
    return "%s/.jupyter/jupyter_server_config.py" % home(r), J(L), "argon2 hash"


# ======================= public material =======================
@neg("public_certificate")
def _(r):
    m, app = k8s_meta(r, kind="ConfigMap", name="ca-bundle")
    cert = V.cert_pem(r)
    L = m + ["data:", "  ca.crt: |"] + ["    " + l for l in cert.strip().splitlines()]
    return "%s/k8s/ca-bundle.yaml" % proj(r), J(L), "public CA cert"


@neg("public_keys")
def _(r):
    c = r.randrange(3)
    if c == 0:
        return "%s/.ssh/authorized_keys" % home(r), V.ssh_pub(r) + "\n" + V.ssh_pub(r) + "\n", "authorized_keys"
    if c == 1:
        return "%s/keys/jwt-public.pem" % proj(r), V.public_pem(r), "public PEM"
    return "%s/.ssh/id_ed25519.pub" % home(r), V.ssh_pub(r) + "\n", "ssh pub"


@neg("k8s_secret_only_public")
def _(r):
    m, app = k8s_meta(r, name="trust-anchor")
    L = m + ["type: Opaque", "data:", "  ca.crt: " + b64(V.cert_pem(r)), "  username: " + b64(V.user(r))]
    return "%s/k8s/trust.yaml" % proj(r), J(L), "Secret holding only public cert + username"


@neg("kubeconfig_exec")
def _(r):
    L = ["apiVersion: v1", "kind: Config", "clusters:", "- cluster:", "    certificate-authority-data: " + b64(V.cert_pem(r)), "    server: https://%s.gr7.eu-west-1.eks.amazonaws.com" % rs(r, UP + string.digits, 32),
         "  name: prod", "contexts:", "- context: {cluster: prod, user: prod}", "  name: prod", "current-context: prod", "users:", "- name: prod", "  user:", "    exec:",
         "      apiVersion: client.authentication.k8s.io/v1beta1", "      command: aws", "      args: [eks, get-token, --cluster-name, prod]"]
    return "%s/.kube/config" % home(r), J(L), "exec auth, CA data"


@neg("jwks_public")
def _(r):
    k = V.rsa_key(r, 1024) if r.random() < 0.3 else None
    if k:
        n = k.public_key().public_numbers().n
        jwk = {"kty": "RSA", "use": "sig", "kid": rs(r, B62, 12), "alg": "RS256", "e": "AQAB", "n": V.b64url(n.to_bytes(128, "big"))}
    else:
        jwk = {"kty": "OKP", "crv": "Ed25519", "kid": rs(r, B62, 12), "x": V.b64url(V.rand_bytes(r, 32))}
    return "%s/public/.well-known/jwks.json" % proj(r), json.dumps({"keys": [jwk]}, indent=2) + "\n", "JWKS public"


@neg("gpg_public")
def _(r):
    body = base64.b64encode(V.rand_bytes(r, 360)).decode()
    L = ["-----BEGIN PGP PUBLIC KEY BLOCK-----", ""] + [body[i:i + 64] for i in range(0, len(body), 64)] + ["=" + rs(r, B62, 4), "-----END PGP PUBLIC KEY BLOCK-----"]
    return "%s/keys/release-signing.asc" % proj(r), J(L), "PGP public key"


# ======================= ids / digests =======================
@neg("uuid_ids")
def _(r):
    L = ['subscription_id = "%s"' % V.uuid4(r), 'tenant_id       = "%s"' % V.uuid4(r), 'client_id       = "%s"' % V.uuid4(r),
         'resource_group  = "rg-%s-prod"' % r.choice(V.APPS), 'location        = "westeurope"']
    return "%s/terraform/azure.auto.tfvars" % proj(r), J(L), "azure ids"


@neg("image_digests")
def _(r):
    L = ["services:"] + sum([["  %s:" % a, "    image: ghcr.io/example/%s@sha256:%s" % (a, V.sha256_hex(r))] for a in r.sample(V.APPS, 3)], [])
    return "%s/docker-compose.pinned.yml" % proj(r), J(L), "sha256 digests"


@neg("checksums_file")
def _(r):
    L = ["%s  %s-%s-linux-amd64.tar.gz" % (V.sha256_hex(r), a, fval(r, "tag")) for a in r.sample(V.APPS, 4)]
    return "%s/dist/SHA256SUMS" % proj(r), J(L), "checksums"


@neg("tf_lock_hashes")
def _(r):
    L = ["# This file is maintained automatically by \"terraform init\".", "", 'provider "registry.terraform.io/hashicorp/aws" {', '  version     = "5.%d.0"' % r.randrange(10, 60),
         '  constraints = "~> 5.0"', "  hashes = [", '    "h1:%s",' % V.secret_b64(r, 32)] + ['    "zh:%s",' % V.sha256_hex(r) for _ in range(6)] + ["  ]", "}"]
    return "%s/terraform/.terraform.lock.hcl" % proj(r), J(L), "provider hashes"


@neg("package_lock_integrity")
def _(r):
    pk = {}
    for n in r.sample(["lodash", "express", "react", "axios", "chalk", "debug", "ms", "semver"], 4):
        v = fval(r, "tag")
        pk["node_modules/" + n] = {"version": v, "resolved": "https://registry.npmjs.org/%s/-/%s-%s.tgz" % (n, n, v), "integrity": "sha512-" + V.secret_b64(r, 64)}
    d = {"name": r.choice(V.APPS), "lockfileVersion": 3, "requires": True, "packages": pk}
    return "%s/package-lock.json" % proj(r), json.dumps(d, indent=2) + "\n", "integrity hashes"


@neg("git_shas")
def _(r):
    L = ["packed-refs with peeled fully-peeled sorted"] if False else []
    L = ["# pinned revisions"] + ["%s: %s" % (a, rs(r, HEX, 40)) for a in r.sample(V.APPS, 5)]
    return "%s/deps/revisions.yaml" % proj(r), J(L), "commit shas"


# ======================= encrypted values =======================
@neg("pulumi_secure")
def _(r):
    app = r.choice(V.APPS)
    if r.random() < 0.5:
        L = ["encryptionsalt: v1:%s:v1:%s:%s" % (V.secret_b64(r, 8), V.secret_b64(r, 12), V.secret_b64(r, 32)), "config:", "  aws:region: eu-west-1",
             "  %s:dbPassword:" % app, "    secure: v1:%s:%s" % (V.secret_b64(r, 12), V.secret_b64(r, 36))]
    else:
        L = ["config:", "  %s:apiToken:" % app, "    secure: AAABA%s" % V.secret_b64(r, 60), "  %s:replicas: \"3\"" % app]
    return "%s/Pulumi.prod.yaml" % proj(r), J(L), "secure values"


@neg("tfstate_clean")
def _(r):
    attrs = {"arn": "arn:aws:s3:::%s-assets-%s" % (r.choice(V.APPS), rs(r, LOW + string.digits, 6)), "bucket": "%s-assets" % r.choice(V.APPS), "id": "%s-assets" % r.choice(V.APPS),
             "region": "eu-west-1", "tags": {"team": r.choice(V.APPS)}, "versioning": [{"enabled": True, "mfa_delete": False}]}
    st = {"version": 4, "terraform_version": "1.7.%d" % r.randrange(5), "serial": r.randrange(1, 100), "lineage": V.uuid4(r),
          "outputs": {"bucket_name": {"value": attrs["bucket"], "type": "string"}, "db_password": {"value": "", "type": "string", "sensitive": True}} if r.random() < 0.5 else {},
          "resources": [{"mode": "managed", "type": "aws_s3_bucket", "name": "assets", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                         "instances": [{"schema_version": 0, "attributes": attrs, "sensitive_attributes": []}]}]}
    return "%s/terraform/terraform.tfstate" % proj(r), json.dumps(st, indent=2) + "\n", "state without secrets"


@neg("terraform_sensitive_var")
def _(r):
    L = ['variable "db_password" {', '  type      = string', '  sensitive = true', '  description = "Master password; supplied via TF_VAR_db_password"', '}', '',
         'resource "random_password" "db" {', '  length  = 32', '  special = true', '}', '', 'resource "aws_db_instance" "main" {', '  username = "app"',
         '  password = random_password.db.result', '  # or: password = var.db_password', '}']
    return "%s/terraform/rds.tf" % proj(r), J(L), "variables / references"


@neg("cfn_resolve")
def _(r):
    L = ["Parameters:", "  DBPassword:", "    Type: String", "    NoEcho: true", "    MinLength: 12", "Resources:", "  DB:", "    Type: AWS::RDS::DBInstance", "    Properties:",
         "      MasterUsername: admin", "      MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'", "      DBInstanceClass: db.t3.micro"]
    return "%s/cfn/db.yaml" % proj(r), J(L), "resolve / NoEcho without default"


# ======================= app configs without secrets =======================
@neg("spring_placeholders")
def _(r):
    L = ["spring:", "  datasource:", "    url: jdbc:postgresql://${DB_HOST:localhost}:5432/%s" % r.choice(V.APPS), "    username: ${DB_USER}",
         "    password: ${SPRING_DATASOURCE_PASSWORD}", "  mail:", "    password: ${MAIL_PASSWORD:}"] + fill_yaml(r, r.randrange(5, 100))
    return "%s/src/main/resources/application.yml" % proj(r), J(L), "spring placeholders"


@neg("properties_placeholders")
def _(r):
    L = fill_props(r, r.randrange(10, 200)) + ["db.password=${env:DB_PASSWORD}", "keystore.password.file=/etc/app/keystore.pass", "password.min.length=12",
                                                "password.reset.token.ttl=3600"]
    return "%s/src/main/resources/app.properties" % proj(r), J(L), "placeholders + policy keys"


@neg("appsettings_integrated")
def _(r):
    d = {"ConnectionStrings": {"Default": "Server=%s;Database=%s;Trusted_Connection=True;TrustServerCertificate=True;" % (V.host(r), r.choice(V.APPS)),
                               "Azure": "Server=tcp:%s.database.windows.net;Authentication=Active Directory Default;Database=app;" % r.choice(V.APPS)},
         "Jwt": {"Issuer": "https://%s.example.com" % r.choice(V.APPS), "Audience": "api", "KeyVaultSecretName": "jwt-signing-key"}}
    return "%s/src/Api/appsettings.json" % proj(r), json.dumps(d, indent=2) + "\n", "integrated security"


@neg("jdbc_no_password")
def _(r):
    L = ["spring.datasource.url=jdbc:postgresql://%s:5432/%s?sslmode=verify-full&ApplicationName=%s" % (V.host(r), r.choice(V.APPS), r.choice(V.APPS)),
         "spring.datasource.username=app", "spring.datasource.password=", "spring.jpa.hibernate.ddl-auto=validate"]
    return "%s/src/main/resources/application-prod.properties" % proj(r), J(L), "empty password"


@neg("django_env")
def _(r):
    L = ["import os", "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']", "DATABASES = {", "    'default': {", "        'ENGINE': 'django.db.backends.postgresql',",
         "        'NAME': os.getenv('DB_NAME', 'app'),", "        'PASSWORD': os.environ.get('DB_PASSWORD', ''),", "        'HOST': os.getenv('DB_HOST', 'localhost'),",
         "    }", "}", "AUTH_PASSWORD_VALIDATORS = [", "    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'},", "]",
         "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']"]
    return "%s/%s/settings.py" % (proj(r), r.choice(V.APPS)), J(L), "env lookups"


@neg("rails_erb")
def _(r):
    L = ["production:", "  adapter: postgresql", "  database: app_production", "  username: <%= ENV['DB_USER'] %>", "  password: <%= ENV['DB_PASSWORD'] %>",
         "  host: <%= ENV.fetch('DB_HOST', 'localhost') %>"]
    return "%s/config/database.yml" % proj(r), J(L), "ERB env"


@neg("rails_credentials_enc")
def _(r):
    body = "%s--%s--%s" % (V.secret_b64(r, r.randrange(200, 400)), V.secret_b64(r, 12), V.secret_b64(r, 16))
    return "%s/config/credentials.yml.enc" % proj(r), body, "rails encrypted credentials"


@neg("laravel_env_example")
def _(r):
    L = ["APP_NAME=Laravel", "APP_ENV=local", "APP_KEY=", "APP_DEBUG=true", "DB_CONNECTION=mysql", "DB_HOST=127.0.0.1", "DB_PORT=3306", "DB_DATABASE=laravel",
         "DB_USERNAME=root", "DB_PASSWORD=", "MAIL_MAILER=smtp", "MAIL_PASSWORD=null", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "PUSHER_APP_SECRET="]
    return "%s/.env.example" % proj(r), J(L), "empty values"


@neg("urls_without_creds")
def _(r):
    L = ["REDIS_URL=redis://redis:6379/0", "MONGODB_URI=mongodb://mongo-0.mongo:27017/%s?replicaSet=rs0" % r.choice(V.APPS),
         "AMQP_URL=amqp://rabbitmq:5672/%2F", "DATABASE_URL=postgres://%s@%s:5432/%s?sslmode=require" % (V.user(r), V.host(r), r.choice(V.APPS)),
         "SMTP_URL=smtp://mailhog:1025", "LDAP_URL=ldaps://ldap.corp.example.com:636", "MQTT_URL=mqtt://broker.local:1883", "CELERY_BROKER_URL=${REDIS_URL}"]
    return "%s/.env.docker" % proj(r), J(L), "URLs without passwords"


@neg("url_env_interp")
def _(r):
    L = ["broker_url = f\"amqp://{os.environ['MQ_USER']}:{os.environ['MQ_PASS']}@rabbitmq:5672//\"",
         "SQLALCHEMY_DATABASE_URI = f\"postgresql://{DB_USER}:{DB_PASSWORD}@{DB_HOST}/{DB_NAME}\"", "REDIS = 'redis://:%s@%s:6379' % (REDIS_PASSWORD, REDIS_HOST)"]
    return "%s/app/settings.py" % proj(r), J(["import os"] + L), "URL templates"


@neg("sentry_dsn_new")
def _(r):
    L = ["SENTRY_DSN=https://%s@o%d.ingest.sentry.io/%d" % (rs(r, HEX, 32), r.randrange(10**5, 10**6), r.randrange(10**6, 10**7)), "SENTRY_ENVIRONMENT=production",
         "SENTRY_TRACES_SAMPLE_RATE=0.1"]
    return "%s/.env.sentry" % proj(r), J(L), "public DSN (key only)"


@neg("airflow_conn_noauth")
def _(r):
    L = ["AIRFLOW__CORE__EXECUTOR=LocalExecutor", "AIRFLOW__CORE__LOAD_EXAMPLES=False", "AIRFLOW_CONN_GOOGLE_CLOUD_DEFAULT=google-cloud-platform://?key_path=%2Fopt%2Fkeys%2Fsa.json",
         "AIRFLOW_CONN_AWS_DEFAULT=aws://?region_name=eu-west-1", "AIRFLOW__SECRETS__BACKEND=airflow.providers.hashicorp.secrets.vault.VaultBackend",
         "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD=cat /run/secrets/sql_alchemy_conn"]
    return "%s/airflow/.env" % proj(r), J(L), "no creds"


@neg("celery_env")
def _(r):
    L = ["import os", "broker_url = os.environ['CELERY_BROKER_URL']", "result_backend = os.environ.get('CELERY_RESULT_BACKEND', 'redis://localhost:6379/1')",
         "broker_transport_options = {'visibility_timeout': 3600}", "task_acks_late = True"]
    return "%s/celeryconfig.py" % proj(r), J(L), "env"


# ======================= infra without secrets =======================
@neg("nginx_no_secret")
def _(r):
    L = ["server {", "    listen 443 ssl http2;", "    server_name %s.example.com;" % r.choice(V.APPS), "    ssl_certificate /etc/letsencrypt/live/x/fullchain.pem;",
         "    ssl_certificate_key /etc/letsencrypt/live/x/privkey.pem;", "    location /admin/ {", '        auth_basic "Restricted";', "        auth_basic_user_file /etc/nginx/.htpasswd;",
         "        proxy_pass http://127.0.0.1:8000;", "        proxy_set_header Authorization $http_authorization;", "        proxy_set_header X-Real-IP $remote_addr;", "    }", "}"]
    return "etc/nginx/sites-available/%s" % r.choice(V.APPS), J(L), "no secrets"


@neg("apache_no_secret")
def _(r):
    L = ["<Directory /var/www/private>", "    AuthType Basic", '    AuthName "Private"', "    AuthUserFile /etc/apache2/.htpasswd", "    Require valid-user", "</Directory>",
         'RequestHeader set X-Forwarded-Proto "https"', "SSLCertificateKeyFile /etc/ssl/private/site.key"]
    return "etc/apache2/conf-available/private.conf", J(L), "no secrets"


@neg("grafana_env_ref")
def _(r):
    L = ["apiVersion: 1", "datasources:", "  - name: Prometheus", "    type: prometheus", "    url: http://prometheus:9090", "  - name: PG", "    type: postgres",
         "    secureJsonData:", "      password: $__env{PG_PASSWORD}", "  - name: ES", "    type: elasticsearch", "    basicAuthPassword: ${ES_PASSWORD}"]
    return "etc/grafana/provisioning/datasources/ds.yaml", J(L), "env refs"


@neg("grafana_ini_clean")
def _(r):
    L = ["[server]", "http_port = 3000", "root_url = https://grafana.example.com/", "", "[security]", "admin_user = admin", "admin_password = $__file{/run/secrets/grafana_admin}",
         "disable_initial_admin_creation = false", "cookie_secure = true", "", "[auth.generic_oauth]", "client_id = grafana", "client_secret = $__env{OAUTH_CLIENT_SECRET}"]
    return "etc/grafana/grafana.ini", J(L), "file/env providers"


@neg("elastic_keystore")
def _(r):
    L = ["cluster.name: %s" % r.choice(V.APPS), "node.name: es01", "xpack.security.enabled: true", "xpack.security.http.ssl.enabled: true",
         "xpack.security.http.ssl.keystore.path: certs/http.p12", "# passwords live in elasticsearch-keystore", "elasticsearch.password: ${ES_PASSWORD}"]
    return "etc/elasticsearch/elasticsearch.yml", J(L), "keystore"


@neg("logstash_env")
def _(r):
    L = ["output {", "  elasticsearch {", '    hosts => ["${ES_HOSTS}"]', '    user => "${ES_USER}"', '    password => "${ES_PWD}"', '    ssl_certificate_authorities => ["/etc/logstash/ca.crt"]', "  }", "}"]
    return "etc/logstash/conf.d/30-output.conf", J(L), "env"


@neg("fluentd_env")
def _(r):
    L = ["<match **>", "  @type datadog", "  api_key \"#{ENV['DD_API_KEY']}\"", "  dd_source app", "</match>", "[OUTPUT]", "    Name http", "    HTTP_Passwd ${LOKI_PASSWORD}"]
    return "etc/fluent/fluent.conf", J(L), "env"


@neg("vector_env")
def _(r):
    L = ["[sinks.dd]", 'type = "datadog_logs"', 'inputs = ["app"]', 'default_api_key = "${DATADOG_API_KEY}"', "", "[sinks.s3]", 'type = "aws_s3"', 'bucket = "logs-%s"' % r.choice(V.APPS),
         'auth.assume_role = "arn:aws:iam::%d:role/vector"' % r.randrange(10**11, 10**12)]
    return "etc/vector/vector.toml", J(L), "env"


@neg("makefile_clean")
def _(r):
    L = ["DB_PASSWORD ?= $(shell cat .secrets/db_password)", "REGISTRY := registry.example.com", "", "login:", "\t@echo \"$$REGISTRY_TOKEN\" | docker login $(REGISTRY) -u ci --password-stdin",
         "", "migrate:", "\tPGPASSWORD=$(DB_PASSWORD) psql -h localhost -f schema.sql"]
    return "%s/Makefile" % proj(r), J(L), "refs"


@neg("crontab_clean")
def _(r):
    L = ["MAILTO=ops@example.com", "# credentials come from ~/.pgpass", "15 2 * * * pg_dump -h %s -U %s %s | gzip > /backup/db.sql.gz" % (V.host(r), V.user(r), r.choice(V.APPS)),
         "*/10 * * * * /usr/local/bin/healthcheck --token-file /etc/healthcheck/token", "@reboot /opt/app/bin/start"]
    return "var/spool/cron/crontabs/%s" % r.choice(V.FIRST), J(L), "no creds"


@neg("dockerfile_secret_mount")
def _(r):
    L = ["# syntax=docker/dockerfile:1.6", "FROM node:20", "ARG NPM_TOKEN", "ENV PASSWORD_MIN_LENGTH=12", "WORKDIR /app", "COPY package*.json ./",
         "RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci", "COPY . .", 'CMD ["node", "index.js"]']
    return "%s/Dockerfile" % proj(r), J(L), "build secrets"


@neg("jenkinsfile_credentials")
def _(r):
    L = ["pipeline {", "  agent any", "  environment {", "    REGISTRY_CREDS = credentials('registry-creds')", "  }", "  stages {", "    stage('Deploy') {", "      steps {",
         "        withCredentials([string(credentialsId: 'api-token', variable: 'API_TOKEN')]) {", "          sh 'curl -H \"Authorization: Bearer $API_TOKEN\" https://api.example.com/deploy'",
         "        }", "      }", "    }", "  }", "}"]
    return "%s/Jenkinsfile" % proj(r), J(L), "credentials()"


@neg("gitlab_ci_vars_ref")
def _(r):
    L = ["build:", "  image: docker:24", "  services: [docker:24-dind]", "  script:", '    - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin "$CI_REGISTRY"',
         "    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA .", "  variables:", "    DOCKER_TLS_CERTDIR: \"/certs\"", "    PASSWORD_RESET_ENABLED: \"false\""]
    return "%s/.gitlab-ci.yml" % proj(r), J(L), "CI vars"


@neg("vagrantfile_clean")
def _(r):
    L = ['Vagrant.configure("2") do |config|', '  config.vm.box = "debian/bookworm64"', '  config.ssh.private_key_path = "~/.ssh/id_ed25519"',
         '  config.vm.provision "ansible" do |a|', '    a.playbook = "site.yml"', '    a.vault_password_file = "~/.vault_pass"', "  end", "end"]
    return "%s/Vagrantfile" % proj(r), J(L), "paths"


@neg("heredoc_refs")
def _(r):
    L = ["#!/bin/bash", "set -euo pipefail", ': "${DB_PASSWORD:?DB_PASSWORD must be set}"', "cat > ~/.pgpass <<EOF", "${DB_HOST}:5432:${DB_NAME}:${DB_USER}:${DB_PASSWORD}", "EOF",
         "chmod 600 ~/.pgpass", "kubectl create secret generic db --from-literal=password=\"$DB_PASSWORD\" --dry-run=client -o yaml | kubectl apply -f -"]
    return "%s/scripts/bootstrap.sh" % proj(r), J(L), "heredoc with vars"


@neg("dotfiles_clean")
def _(r):
    c = r.randrange(4)
    if c == 0:
        return "%s/.npmrc" % home(r), "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nsave-exact=true\n", "npmrc env"
    if c == 1:
        return "%s/.docker/config.json" % home(r), json.dumps({"auths": {"ghcr.io": {}, "https://index.docker.io/v1/": {}}, "credsStore": "desktop"}, indent="\t") + "\n", "credsStore"
    if c == 2:
        return "%s/.config/pip/pip.conf" % home(r), "[global]\nindex-url = https://pypi.corp.example.com/simple/\ntrusted-host = pypi.corp.example.com\n", "pip no creds"
    return "%s/.m2/settings.xml" % home(r), J(["<settings>", "  <servers>", "    <server>", "      <id>nexus</id>", "      <username>${env.MAVEN_USER}</username>",
                                             "      <password>${env.MAVEN_PASSWORD}</password>", "    </server>", "  </servers>", "</settings>"]), "maven env"


@neg("tomcat_users_default")
def _(r):
    L = ["<?xml version='1.0' encoding='utf-8'?>", '<tomcat-users xmlns="http://tomcat.apache.org/xml" version="1.0">', "<!--",
         "  <user username=\"admin\" password=\"<must-be-changed>\" roles=\"manager-gui\"/>", "  <user username=\"robot\" password=\"<must-be-changed>\" roles=\"manager-script\"/>",
         "-->", "</tomcat-users>"]
    return "opt/tomcat/conf/tomcat-users.xml", J(L), "shipped default (commented placeholders)"


@neg("redis_conf_default")
def _(r):
    L = ["bind 127.0.0.1 -::1", "protected-mode yes", "port 6379", "# requirepass foobared", "# masterauth <master-password>", "aclfile /etc/redis/users.acl", "appendonly no"]
    return "etc/redis/redis.conf", J(L), "commented defaults"


@neg("my_cnf_clean")
def _(r):
    L = ["[mysqld]", "bind-address = 127.0.0.1", "max_connections = 200", "default_authentication_plugin = caching_sha2_password", "validate_password.length = 12",
         "", "[client]", "socket = /var/run/mysqld/mysqld.sock"]
    return "etc/mysql/my.cnf", J(L), "no password"


@neg("hex_non_secret")
def _(r):
    L = ["theme:", "  primary: \"#%s\"" % rs(r, HEX, 6), "  accent: \"#%s\"" % rs(r, HEX, 6), "network:", "  mac: %s" % ":".join(rs(r, HEX, 2) for _ in range(6)),
         "build:", "  commit: %s" % rs(r, HEX, 40), "  checksum_sha256: %s" % V.sha256_hex(r), "  trace_id_example: %s" % rs(r, HEX, 32)]
    return "%s/config/build-info.yaml" % proj(r), J(L), "hex non-secret"


@neg("base64_non_secret")
def _(r):
    m, app = k8s_meta(r, kind="ConfigMap", name="app-config")
    cfg = "\n".join(fill_yaml(r, 8)) + "\n"
    icon = base64.b64encode(b"\x89PNG\r\n\x1a\n" + V.rand_bytes(r, 120)).decode()
    L = m + ["binaryData:", "  config.yaml: " + b64(cfg), "  favicon.png: " + icon, "data:", "  LOG_LEVEL: info"]
    return "%s/k8s/configmap.yaml" % proj(r), J(L), "base64 of config / image"


@neg("token_words_non_secret")
def _(r):
    L = ["oauth:", "  token_endpoint: https://auth.example.com/oauth2/token", "  authorization_endpoint: https://auth.example.com/oauth2/authorize",
         "  token_ttl: 3600", "  refresh_token_rotation: true", "llm:", "  max_tokens: 4096", "  tokenizer: cl100k_base", "csrf:", "  token_header: X-CSRF-Token",
         "password_policy:", "  min_length: 12", "  require_symbols: true", "  hash_algorithm: argon2id", "api_key_header: X-Api-Key", "secret_rotation_days: 90"]
    return "%s/config/security.yaml" % proj(r), J(L), "secret-ish key names, no secret"


@neg("openapi_spec")
def _(r):
    L = ["openapi: 3.0.3", "info:", "  title: %s API" % r.choice(V.APPS), "  version: 1.0.0", "components:", "  securitySchemes:", "    bearerAuth:", "      type: http",
         "      scheme: bearer", "      bearerFormat: JWT", "    apiKey:", "      type: apiKey", "      in: header", "      name: X-API-Key", "paths:", "  /login:", "    post:",
         "      requestBody:", "        content:", "          application/json:", "            example:", "              username: jane.doe", "              password: \"<password>\""]
    return "%s/docs/openapi.yaml" % proj(r), J(L), "spec with placeholder example"


@neg("readme_docs")
def _(r):
    L = ["# %s deployment" % r.choice(V.APPS), "", "## Secrets", "", "Put the database password in `.env` as `DB_PASSWORD=<your password>`; never commit it.",
         "For Kubernetes create it with:", "", "```bash", "kubectl create secret generic db --from-literal=password='<password>'", "```", "",
         "The API token is read from `API_TOKEN`. Ask #ops for a token; tokens look like `ghp_...`.", "",
         "| variable | description |", "|---|---|", "| `DB_PASSWORD` | database password (required) |", "| `SMTP_PASSWORD` | SMTP relay password |"]
    return "%s/docs/DEPLOY.md" % proj(r), J(L), "docs"


@neg("k8s_serviceaccount_projected")
def _(r):
    L = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: vault-agent", "spec:", "  serviceAccountName: app", "  containers:", "    - name: app", "      image: app:1.0",
         "      volumeMounts:", "        - name: token", "          mountPath: /var/run/secrets/tokens", "  volumes:", "    - name: token", "      projected:", "        sources:",
         "          - serviceAccountToken:", "              path: vault-token", "              expirationSeconds: 7200", "              audience: vault"]
    return "%s/k8s/pod.yaml" % proj(r), J(L), "projected SA token"


@neg("cloud_init_clean")
def _(r):
    L = ["#cloud-config", "users:", "  - name: %s" % r.choice(V.FIRST), "    groups: sudo", "    shell: /bin/bash", "    lock_passwd: true",
         "    ssh_authorized_keys:", "      - %s" % V.ssh_pub(r), "ssh_pwauth: false", "chpasswd:", "  expire: true"]
    return "%s/cloud-init/user-data" % proj(r), J(L), "key-only users"


@neg("helm_values_existing_secret")
def _(r):
    body = ["postgresql:", "  auth:", "    existingSecret: %s-db" % r.choice(V.APPS), "    secretKeys:", "      adminPasswordKey: postgres-password", "      userPasswordKey: password",
            "    password: \"\"", "redis:", "  auth:", "    enabled: true", "    existingSecret: redis-auth", "    existingSecretPasswordKey: redis-password"]
    L = deep_yaml(r, body) if r.random() < 0.5 else body
    return "%s/charts/app/values.yaml" % proj(r), J(L), "existingSecret"


@neg("ansible_vars_template")
def _(r):
    L = ["---", "mysql_root_password: \"{{ vault_mysql_root_password }}\"", "app_db_password: \"{{ lookup('password', '/dev/null length=32 chars=ascii_letters,digits') }}\"",
         "keycloak_admin_password: \"{{ lookup('ansible.builtin.env', 'KC_ADMIN_PASSWORD') }}\""]
    return "%s/group_vars/all.yml" % proj(r), J(L), "templated vars"


@neg("aws_config_no_keys")
def _(r):
    L = ["[default]", "region = eu-west-1", "output = json", "", "[profile prod]", "sso_start_url = https://%s.awsapps.com/start" % r.choice(V.APPS),
         "sso_region = eu-west-1", "sso_account_id = %d" % r.randrange(10**11, 10**12), "sso_role_name = AdministratorAccess",
         "", "[profile ci]", "role_arn = arn:aws:iam::%d:role/ci" % r.randrange(10**11, 10**12), "source_profile = default"]
    return "%s/.aws/config" % home(r), J(L), "SSO / role profiles"


@neg("access_key_id_only")
def _(r):
    ak, _sk = V.aws_pair(r)
    L = ["# IAM user for CI (secret in Vault: secret/ci/aws)", "ci_access_key_id: %s" % ak.replace("AKIA", "AKIA"), "ci_user_arn: arn:aws:iam::%d:user/ci" % r.randrange(10**11, 10**12)]
    return "%s/docs/iam-inventory.yaml" % proj(r), J(L), "borderline: access key id alone, secret not present"


@neg("wifi_no_psk")
def _(r):
    L = ["[connection]", "id=CorpWiFi", "uuid=%s" % V.uuid4(r), "type=wifi", "", "[wifi-security]", "key-mgmt=wpa-eap", "", "[802-1x]", "eap=tls;",
         "identity=%s@example.com" % r.choice(V.FIRST), "client-cert=/etc/pki/wifi/client.crt", "private-key=/etc/pki/wifi/client.key", "private-key-password-flags=2"]
    return "etc/NetworkManager/system-connections/CorpWiFi.nmconnection", J(L), "EAP with key path, agent-owned password"


@neg("deep_clean_config")
def _(r):
    L = ["# main config"] + fill_yaml(r, r.randrange(250, 320))
    return "%s/config/%s.yaml" % (proj(r), r.choice(["app", "settings", "production"])), J(L), "300-line config without secrets"


@neg("properties_deep_clean")
def _(r):
    L = fill_props(r, r.randrange(200, 300))
    return "%s/src/main/resources/application.properties" % proj(r), J(L), "large properties"


@neg("env_deep_clean")
def _(r):
    L = fill_env(r, r.randrange(100, 250))
    return "%s/.env" % proj(r), J(L), "large env, no secrets"


@neg("mosquitto_clean")
def _(r):
    L = ["listener 8883", "cafile /etc/mosquitto/certs/ca.crt", "certfile /etc/mosquitto/certs/server.crt", "keyfile /etc/mosquitto/certs/server.key",
         "password_file /etc/mosquitto/passwd", "allow_anonymous false"]
    return "etc/mosquitto/conf.d/tls.conf", J(L), "paths"


@neg("mosquitto_passwd_hashed")
def _(r):
    L = ["%s:$7$101$%s$%s" % (V.user(r), V.secret_b64(r, 12), V.secret_b64(r, 64)) for _ in range(2)]
    return "etc/mosquitto/passwd", J(L), "hashed mosquitto passwd"


@neg("consul_no_token")
def _(r):
    L = ['datacenter = "dc1"', 'data_dir = "/opt/consul"', 'node_id = "%s"' % V.uuid4(r), "acl {", "  enabled = true", '  default_policy = "deny"', "  enable_token_persistence = true", "}"]
    return "etc/consul.d/consul.hcl", J(L), "node_id uuid only"

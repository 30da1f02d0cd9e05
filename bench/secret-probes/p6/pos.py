"""Positive families: exactly one credential per file."""
import json, base64, string
import vals as V
from vals import rs, B62, HEX, LOW, UP
from common import *

POS = []


def pos(fam):
    def d(f):
        POS.append((fam, f))
        return f
    return d


def J(lines):
    return "\n".join(lines) + "\n"


def deep_yaml(r, body_lines, indent=0):
    """Put body lines in the middle/end of ~300 lines of yaml filler."""
    used = set()
    before = fill_yaml(r, r.randrange(120, 260), indent, used)
    after = fill_yaml(r, r.randrange(10, 60), indent, used) if r.random() < 0.7 else []
    return before + body_lines + after


def pgurl(r, pw=None, scheme=None):
    u, pw = V.user(r), pw or V.password(r, safe=True)
    scheme = scheme or r.choice(["postgres", "postgresql", "mysql", "mariadb"])
    port = {"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306}.get(scheme, 5432)
    return "%s://%s:%s@%s:%d/%s%s" % (scheme, u, pw, V.host(r), port, r.choice(V.APPS),
                                      r.choice(["", "?sslmode=require", "?charset=utf8mb4", ""])), pw


def k8s_meta(r, kind="Secret", name=None):
    app = r.choice(V.APPS)
    name = name or app + r.choice(["-db", "-credentials", "-secrets", "-env", "-api"])
    lines = ["apiVersion: v1", "kind: " + kind, "metadata:", "  name: " + name,
             "  namespace: " + r.choice(["default", "prod", "staging", app])]
    if r.random() < 0.5:
        lines += ["  labels:", "    app.kubernetes.io/name: " + app, "    app.kubernetes.io/part-of: " + r.choice(V.APPS)]
    return lines, app


# ======================= Kubernetes =======================
@pos("k8s_secret_data_password")
def _(r):
    m, app = k8s_meta(r)
    pw = V.password(r)
    key = r.choice(["password", "DB_PASSWORD", "postgres-password", "mysql-root-password", "redis-password", "admin-password"])
    lines = m + ["type: Opaque", "data:"]
    if r.random() < 0.6:
        lines.append("  username: " + b64(V.user(r)))
    lines.append("  %s: %s" % (key, b64(pw)))
    if r.random() < 0.4:
        lines.append("  host: " + b64(V.host(r)))
    if r.random() < 0.4:
        lines = ["---"] + lines
    return "%s/k8s/%s-secret.yaml" % (proj(r, app), app), J(lines), b64(pw), "base64 of password %r under %s" % (pw, key)


@pos("k8s_secret_data_token")
def _(r):
    m, app = k8s_meta(r)
    tok, kind = V.any_token(r)
    key = r.choice(["token", "api-token", "API_KEY", kind.upper() + "_TOKEN", "apiKey"])
    lines = m + ["type: Opaque", "data:", "  %s: %s" % (key, b64(tok))]
    return "%s/deploy/manifests/%s.yaml" % (proj(r, app), r.choice(["secret", "secrets", "api-secret"])), J(lines), b64(tok), "base64 of %s token" % kind


@pos("k8s_secret_tls_key")
def _(r):
    m, app = k8s_meta(r, name=r.choice(V.APPS) + "-tls")
    pem, kind = V.pem_private(r, r.choice(["rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8"]))
    if r.random() < 0.6:
        cert = V.cert_pem(r)
        lines = m + ["type: kubernetes.io/tls", "data:", "  tls.crt: " + b64(cert), "  tls.key: " + b64(pem)]
    else:
        lines = m + ["type: kubernetes.io/ssh-auth", "data:", "  ssh-privatekey: " + b64(pem)]
    return "%s/k8s/ingress-%s.yaml" % (proj(r, app), r.choice(["tls", "cert", "secret"])), J(lines), b64(pem)[:60], "base64 PEM %s" % kind


@pos("k8s_secret_data_url")
def _(r):
    m, app = k8s_meta(r)
    url, pw = pgurl(r)
    key = r.choice(["DATABASE_URL", "database-url", "uri", "DB_DSN", "connection-string"])
    lines = m + ["type: Opaque", "data:", "  %s: %s" % (key, b64(url))]
    return "%s/k8s/base/%s-secret.yaml" % (proj(r, app), app), J(lines), b64(url)[:40], "base64 of URL %s" % url


@pos("k8s_secret_data_envfile")
def _(r):
    m, app = k8s_meta(r)
    pw = V.password(r)
    env = "\n".join(fill_env(r, r.randrange(3, 8))) + "\n%s=%s\n" % (r.choice(["DB_PASSWORD", "SMTP_PASSWORD", "ADMIN_PASSWORD"]), pw)
    lines = m + ["type: Opaque", "data:", "  .env: " + b64(env)]
    return "%s/k8s/%s-env-secret.yml" % (proj(r, app), app), J(lines), b64(env)[:40], "base64 of a .env file holding password %r" % pw


@pos("k8s_secret_stringdata")
def _(r):
    m, app = k8s_meta(r)
    if r.random() < 0.5:
        v = V.password(r)
        key = r.choice(["password", "DB_PASSWORD", "rabbitmq-password", "ADMIN_PASS"])
    else:
        v, kind = V.any_token(r)
        key = r.choice(["token", "GITHUB_TOKEN", "apiKey", "SLACK_TOKEN"])
    lines = m + ["type: Opaque", "stringData:", "  %s: %s" % (key, yq(r, v))]
    return "%s/k8s/%s.yaml" % (proj(r, app), r.choice(["secret", "creds"])), J(lines), v, "stringData plain"


@pos("k8s_secret_stringdata_block")
def _(r):
    m, app = k8s_meta(r)
    pw = V.password(r)
    if r.random() < 0.5:
        inner = ["server:", "  port: 8080", "database:", "  host: " + V.host(r), "  user: " + V.user(r),
                 "  password: " + yq(r, pw), "  pool: 10"]
        key = "config.yaml"
    else:
        inner = ["server.port=8080", "spring.datasource.url=jdbc:postgresql://%s:5432/%s" % (V.host(r), app),
                 "spring.datasource.username=" + V.user(r), "spring.datasource.password=" + pw]
        key = "application.properties"
    lines = m + ["type: Opaque", "stringData:", "  %s: |" % key] + ["    " + l for l in inner]
    return "%s/k8s/config-secret.yaml" % proj(r, app), J(lines), pw, "block scalar inside stringData"


@pos("k8s_dockerconfigjson")
def _(r):
    m, app = k8s_meta(r, name="regcred")
    reg = r.choice(["registry.gitlab.com", "ghcr.io", "https://index.docker.io/v1/", "harbor.corp.example.com", "%s.azurecr.io" % app])
    u = V.user(r)
    pw = r.choice([V.password(r), V.dockerhub(r), V.gh_token(r), V.glpat(r)])
    cfg = {"auths": {reg: {"username": u, "password": pw, "auth": b64(u + ":" + pw)}}}
    if r.random() < 0.5:
        del cfg["auths"][reg]["password"]
        del cfg["auths"][reg]["username"]
    enc = b64(json.dumps(cfg, separators=(",", ":")))
    lines = m + ["type: kubernetes.io/dockerconfigjson", "data:", "  .dockerconfigjson: " + enc]
    return "%s/k8s/regcred.yaml" % proj(r, app), J(lines), enc[:40], "dockerconfigjson with %r" % pw


@pos("k8s_deployment_env_literal")
def _(r):
    app = r.choice(V.APPS)
    v = V.password(r) if r.random() < 0.5 else V.any_token(r)[0]
    name = r.choice(["DB_PASSWORD", "DATABASE_PASSWORD", "API_TOKEN", "STRIPE_API_KEY", "REDIS_PASSWORD", "SECRET_KEY"])
    L = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: " + app, "spec:", "  replicas: %d" % r.randrange(1, 5),
         "  selector:", "    matchLabels:", "      app: " + app, "  template:", "    metadata:", "      labels:", "        app: " + app,
         "    spec:", "      containers:", "        - name: " + app, "          image: registry.example.com/%s:%s" % (app, fval(r, "tag")),
         "          ports:", "            - containerPort: 8080", "          env:",
         "            - name: LOG_LEVEL", "              value: info",
         "            - name: " + name, "              value: " + yq(r, v, r.choice(["double", "single", None])),
         "            - name: PORT", '              value: "8080"', "          resources:", "            limits:", "              memory: 512Mi"]
    return "%s/k8s/deployment.yaml" % proj(r, app), J(L), v, "literal env value in Deployment"


@pos("k8s_configmap_misuse")
def _(r):
    m, app = k8s_meta(r, kind="ConfigMap", name=r.choice(V.APPS) + "-config")
    pw = V.password(r)
    L = m + ["data:", '  LOG_LEVEL: "info"', "  DB_HOST: " + V.host(r), "  DB_USER: " + V.user(r),
             "  DB_PASSWORD: " + yq(r, pw, r.choice(["double", "single"])), '  FEATURE_FLAGS: "search,checkout"']
    return "%s/k8s/configmap.yaml" % proj(r, app), J(L), pw, "password in a ConfigMap"


@pos("kustomize_secret_generator")
def _(r):
    pw = nodollar(r, V.password(r))
    key = r.choice(["password", "DB_PASSWORD", "admin-password", "api-key"])
    L = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:", "  - deployment.yaml", "  - service.yaml",
         "secretGenerator:", "  - name: " + r.choice(V.APPS) + "-secrets", "    literals:", "      - %s=%s" % (key, pw),
         "generatorOptions:", "  disableNameSuffixHash: true"]
    return "%s/k8s/overlays/prod/kustomization.yaml" % proj(r), J(L), pw, "kustomize literal"


@pos("helm_values")
def _(r):
    pw = V.password(r)
    which = r.randrange(3)
    if which == 0:
        body = ["postgresql:", "  enabled: true", "  auth:", "    username: " + V.user(r), "    password: " + yq(r, pw), "    database: " + r.choice(V.APPS)]
    elif which == 1:
        body = ["redis:", "  architecture: standalone", "  auth:", "    enabled: true", "    password: " + yq(r, pw)]
    else:
        body = ["externalDatabase:", "  host: " + V.host(r), "  port: 5432", "  user: " + V.user(r), "  password: " + yq(r, pw), "  existingSecret: \"\""]
    L = ["# Default values for chart.", "replicaCount: 2", "image:", "  repository: registry.example.com/app", "  tag: \"%s\"" % fval(r, "tag")]
    L += deep_yaml(r, body) if r.random() < 0.5 else body
    return "%s/charts/%s/values.yaml" % (proj(r), r.choice(V.APPS)), J(L), pw, "helm values (%d lines)" % len(L)


@pos("helm_set_in_script")
def _(r):
    pw = nodollar(r, V.password(r, safe=r.random() < 0.5))
    rel = r.choice(V.APPS)
    L = ["#!/usr/bin/env bash", "set -euo pipefail", "", 'NS="%s"' % r.choice(["prod", "staging"]), "",
         "helm repo add bitnami https://charts.bitnami.com/bitnami", "helm repo update", "",
         "helm upgrade --install %s-db bitnami/postgresql \\" % rel, '  --namespace "$NS" --create-namespace \\',
         "  --set auth.username=%s \\" % V.user(r), "  --set auth.password=%s \\" % shq(r, pw), "  --set primary.persistence.size=20Gi"]
    return "%s/scripts/deploy-db.sh" % proj(r), J(L), pw, "helm --set password"


@pos("argocd_repo_secret")
def _(r):
    tok = r.choice([V.gh_token(r), V.glpat(r), V.gh_fine(r)])
    L = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: private-repo", "  namespace: argocd", "  labels:",
         "    argocd.argoproj.io/secret-type: repository", "stringData:", "  type: git",
         "  url: https://github.com/%s/%s-deploy" % (r.choice(V.FIRST), r.choice(V.APPS)), "  username: git", "  password: " + tok]
    return "%s/argocd/repo-secret.yaml" % proj(r), J(L), tok, "argocd repository secret"


# ======================= Docker =======================
@pos("compose_env_list")
def _(r):
    pw = nodollar(r, V.password(r))
    var = r.choice(["DB_PASSWORD", "MYSQL_ROOT_PASSWORD", "POSTGRES_PASSWORD", "RABBITMQ_DEFAULT_PASS", "MONGO_INITDB_ROOT_PASSWORD"])
    item = "%s=%s" % (var, pw)
    item = r.choice([item, '"%s"' % item]) if "'" not in item else item
    app = r.choice(V.APPS)
    L = ["version: \"3.8\"", "services:", "  db:", "    image: %s" % r.choice(["postgres:16", "mysql:8.0", "rabbitmq:3-management", "mongo:7"]),
         "    restart: unless-stopped", "    environment:", "      - TZ=UTC", "      - " + item, "    volumes:", "      - dbdata:/var/lib/data",
         "  %s:" % app, "    build: .", "    depends_on:", "      - db", "volumes:", "  dbdata: {}"]
    if r.random() < 0.5:
        L = L[1:]
    return "%s/docker-compose.yml" % proj(r, app), J(L), pw, "compose env list"


@pos("compose_env_map")
def _(r):
    app = r.choice(V.APPS)
    if r.random() < 0.6:
        v = nodollar(r, V.password(r)); var = r.choice(["POSTGRES_PASSWORD", "DB_PASS", "REDIS_PASSWORD", "ADMIN_PASSWORD", "MINIO_ROOT_PASSWORD"])
    else:
        v, k = V.any_token(r); var = r.choice(["API_TOKEN", "GITHUB_TOKEN", "SLACK_BOT_TOKEN", "OPENAI_API_KEY"])
    L = ["services:", "  %s:" % app, "    image: ghcr.io/example/%s:latest" % app, "    ports:", '      - "8080:8080"',
         "    environment:", "      NODE_ENV: production", "      %s: %s" % (var, yq(r, v)), "      LOG_FORMAT: json"]
    return "%s/compose.%s" % (proj(r, app), r.choice(["yaml", "yml"])), J(L), v, "compose env map"


@pos("compose_command_secret")
def _(r):
    pw = nodollar(r, V.password(r, safe=True))
    L = ["services:", "  cache:", "    image: redis:7-alpine", "    command: redis-server --appendonly yes --requirepass %s" % pw,
         "    ports:", '      - "6379:6379"']
    return "%s/docker-compose.override.yml" % proj(r), J(L), pw, "redis --requirepass in command"


@pos("dockerfile_env")
def _(r):
    if r.random() < 0.5:
        v = nodollar(r, V.password(r)); var = r.choice(["DB_PASSWORD", "ADMIN_PASSWORD", "SMTP_PASSWORD"])
    else:
        v, _k = V.any_token(r); var = r.choice(["API_KEY", "SENTRY_AUTH_TOKEN", "STRIPE_SECRET", "ACCESS_TOKEN"])
    form = r.randrange(3)
    line = {0: "ENV %s=%s" % (var, dq(v)), 1: "ENV %s %s" % (var, v), 2: "ENV %s=%s \\\n    NODE_ENV=production" % (var, shq(r, v) if "$" not in v else "'" + v + "'")}[form]
    L = ["FROM node:20-alpine", "WORKDIR /app", "COPY package*.json ./", "RUN npm ci --omit=dev", "COPY . .", line, "EXPOSE 3000", 'CMD ["node", "server.js"]']
    return "%s/Dockerfile" % proj(r), J(L), v, "Dockerfile ENV"


@pos("dockerfile_arg_default")
def _(r):
    if r.random() < 0.5:
        tok = V.npm_token(r)
        L = ["FROM node:20 AS build", "ARG NPM_TOKEN=" + tok, "WORKDIR /src", "COPY package.json package-lock.json ./",
             'RUN echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > .npmrc && npm ci && rm -f .npmrc', "COPY . .", "RUN npm run build"]
    else:
        tok = V.password(r, safe=True)
        L = ["FROM python:3.12-slim", "ARG PIP_INDEX_PASSWORD=" + tok, "ARG PIP_INDEX_USER=ci",
             "RUN pip install --index-url https://${PIP_INDEX_USER}:${PIP_INDEX_PASSWORD}@pypi.corp.example.com/simple -r requirements.txt"]
    return "%s/%s" % (proj(r), r.choice(["Dockerfile", "docker/Dockerfile.build", "Containerfile"])), J(L), tok, "ARG default"


@pos("dockerfile_run_clone")
def _(r):
    tok = r.choice([V.glpat(r), V.gh_token(r)])
    hostn = "gitlab.com" if tok.startswith("glpat") else "github.com"
    user = "oauth2" if tok.startswith("glpat") else r.choice(["x-access-token", V.user(r)])
    L = ["FROM golang:1.22 AS build", "WORKDIR /src",
         "RUN git clone https://%s:%s@%s/%s/%s-lib.git /src/lib" % (user, tok, hostn, r.choice(V.FIRST), r.choice(V.APPS)),
         "COPY . .", "RUN go build -o /out/app ./cmd/app"]
    return "%s/Dockerfile" % proj(r), J(L), tok, "token in clone URL"


@pos("docker_config_json")
def _(r):
    u, pw = V.user(r), r.choice([V.password(r), V.dockerhub(r)])
    reg = r.choice(["https://index.docker.io/v1/", "registry.example.com", "ghcr.io", "quay.io"])
    d = {"auths": {reg: {"auth": b64(u + ":" + pw)}}}
    if r.random() < 0.5:
        d["HttpHeaders"] = {"User-Agent": "Docker-Client/24.0.7 (linux)"}
    t = json.dumps(d, indent=r.choice([1, 2, "\t"]))
    return "%s/.docker/config.json" % home(r), t + "\n", b64(u + ":" + pw), "docker auth b64 of %s:%s" % (u, pw)


# ======================= Make / cron / systemd =======================
@pos("makefile_var")
def _(r):
    pw = nodollar(r, V.password(r, safe=r.random() < 0.5))
    if r.random() < 0.5:
        L = ["APP := %s" % r.choice(V.APPS), "DB_USER ?= %s" % V.user(r), "DB_PASSWORD %s %s" % (r.choice(["?=", ":=", "="]), pw), "",
             ".PHONY: migrate", "migrate:", "\tPGPASSWORD=$(DB_PASSWORD) psql -h localhost -U $(DB_USER) -f schema.sql"]
    else:
        L = [".PHONY: deploy", "deploy: build", "\tcurl -fsS -u %s:%s -T dist/app.tar.gz https://nexus.example.com/repository/raw/app.tar.gz" % (V.user(r), pw)]
    return "%s/Makefile" % proj(r), J(L), pw, "Makefile"


@pos("crontab_line")
def _(r):
    pw = nodollar(r, V.password(r, safe=r.random() < 0.6))
    c = r.randrange(3)
    if c == 0:
        line = "%d 2 * * * PGPASSWORD=%s pg_dump -h %s -U %s %s | gzip > /backup/db-$(date +\\%%F).sql.gz" % (r.randrange(60), shq(r, pw), V.host(r), V.user(r), r.choice(V.APPS))
    elif c == 1:
        line = "30 3 * * * /usr/bin/mysqldump -u root -p'%s' --all-databases > /var/backups/all.sql" % pw
    else:
        tok = V.any_token(r)[0]; pw = tok
        line = '*/5 * * * * curl -fsS -H "Authorization: Bearer %s" https://status.example.com/ping >/dev/null' % tok
    L = ["# m h  dom mon dow   command", "MAILTO=ops@example.com", "SHELL=/bin/bash", "", "0 * * * * /usr/local/bin/rotate-logs", line]
    path = r.choice(["var/spool/cron/crontabs/" + r.choice(V.FIRST), "etc/cron.d/backup", home(r) + "/crontab.bak"])
    return path, J(L), pw, "crontab"


@pos("systemd_environment")
def _(r):
    v = nodollar(r, V.password(r)) if r.random() < 0.5 else V.any_token(r)[0]
    var = r.choice(["DB_PASSWORD", "API_TOKEN", "APP_SECRET", "REDIS_PASSWORD"])
    envline = r.choice(['Environment="%s=%s"' % (var, v), "Environment=%s=%s" % (var, v) if " " not in v else 'Environment="%s=%s"' % (var, v),
                        'Environment="LOG_LEVEL=info" "%s=%s"' % (var, v)])
    app = r.choice(V.APPS)
    L = ["[Unit]", "Description=%s service" % app, "After=network-online.target", "", "[Service]", "Type=simple", "User=%s" % app,
         "WorkingDirectory=/opt/%s" % app, envline, "ExecStart=/opt/%s/bin/%s --config /etc/%s/config.yaml" % (app, app, app),
         "Restart=on-failure", "", "[Install]", "WantedBy=multi-user.target"]
    return "etc/systemd/system/%s.service" % app, J(L), v, "systemd Environment="


@pos("systemd_envfile_content")
def _(r):
    app = r.choice(V.APPS)
    v = V.password(r) if r.random() < 0.5 else V.any_token(r)[0]
    var = r.choice(["SECRET_KEY", "DATABASE_PASSWORD", "API_TOKEN", "MAIL_PASSWORD"])
    L = ["# sourced by %s.service (EnvironmentFile=)" % app] + fill_env(r, r.randrange(3, 10)) + ["%s=%s" % (var, envq(r, v))]
    return r.choice(["etc/default/%s" % app, "etc/%s/%s.env" % (app, app), "etc/sysconfig/%s" % app]), J(L), v, "EnvironmentFile content"


@pos("supervisord_env")
def _(r):
    app = r.choice(V.APPS)
    v = nodollar(r, V.password(r, safe=True))
    L = ["[program:%s]" % app, "command=/opt/%s/venv/bin/gunicorn app:app -b 127.0.0.1:8000" % app, "directory=/opt/%s" % app,
         "user=www-data", "autostart=true", "autorestart=true",
         'environment=DJANGO_SETTINGS_MODULE="%s.settings",DB_PASSWORD="%s",LANG="en_US.UTF-8"' % (app, v)]
    return "etc/supervisor/conf.d/%s.conf" % app, J(L), v, "supervisord environment"


# ======================= Ansible =======================
@pos("ansible_inventory_ini")
def _(r):
    pw = nodollar(r, V.password(r, safe=r.random() < 0.5))
    var = r.choice(["ansible_password", "ansible_ssh_pass", "ansible_become_pass", "ansible_become_password"])
    if r.random() < 0.5:
        L = ["[web]"] + ["web%02d ansible_host=10.0.1.%d" % (i, 10 + i) for i in range(1, r.randrange(3, 7))] + ["", "[web:vars]",
             "ansible_user=deploy", "%s=%s" % (var, pw)]
    else:
        L = ["[db]", "db01 ansible_host=%s ansible_user=%s %s=%s" % ("10.0.2.5", V.user(r), var, pw if r.random() < 0.5 else "'" + pw + "'")]
    return "%s/inventory/%s" % (proj(r), r.choice(["hosts", "hosts.ini", "production"])), J(L), pw, "ini inventory"


@pos("ansible_inventory_yaml")
def _(r):
    pw = V.password(r)
    L = ["all:", "  children:", "    app:", "      hosts:", "        app1.example.com:", "        app2.example.com:", "      vars:",
         "        ansible_user: %s" % V.user(r), "        %s: %s" % (r.choice(["ansible_password", "ansible_become_pass"]), yq(r, pw))]
    return "%s/inventory/prod.yml" % proj(r), J(L), pw, "yaml inventory"


@pos("ansible_group_vars")
def _(r):
    pw = V.password(r)
    var = r.choice(["ansible_become_pass", "mysql_root_password", "postgresql_admin_password", "app_db_password", "keycloak_admin_password"])
    body = ["%s: %s" % (var, yq(r, pw))]
    L = ["---"] + (deep_yaml(r, body) if r.random() < 0.4 else fill_yaml(r, 10) + body)
    return "%s/group_vars/%s.yml" % (proj(r), r.choice(["all", "prod", "webservers", "dbservers"])), J(L), pw, "group_vars"


@pos("ansible_vault_plain")
def _(r):
    v = V.password(r) if r.random() < 0.6 else V.any_token(r)[0]
    L = ["---", "# NOTE: encrypt before commit!", "vault_db_user: %s" % V.user(r), "vault_%s: %s" % (r.choice(["db_password", "api_token", "smtp_password", "admin_pass"]), yq(r, v))]
    return "%s/group_vars/prod/vault.yml" % proj(r), J(L), v, "vault file left unencrypted"


@pos("ansible_task_literal")
def _(r):
    pw = V.password(r)
    if r.random() < 0.5:
        L = ["- name: Create application DB user", "  community.mysql.mysql_user:", "    name: %s" % V.user(r),
             "    password: %s" % yq(r, pw), "    priv: '%s.*:ALL'" % r.choice(V.APPS), "    state: present"]
    else:
        L = ["- name: Register runner", "  ansible.builtin.uri:", "    url: https://ci.example.com/api/v1/runners", "    method: POST",
             "    url_username: %s" % V.user(r), "    url_password: %s" % yq(r, pw), "    force_basic_auth: true"]
    return "%s/roles/%s/tasks/main.yml" % (proj(r), r.choice(V.APPS)), J(["---"] + L), pw, "ansible task literal"


# ======================= Terraform / Pulumi / CFN =======================
@pos("terraform_tfvars")
def _(r):
    c = r.randrange(3)
    if c == 0:
        v = V.password(r); line = 'db_password = "%s"' % v
    elif c == 1:
        v = rs(r, B62 + "_-", 40); line = 'cloudflare_api_token = "%s"' % v
    else:
        v = V.digitalocean(r); line = 'do_token = "%s"' % v
    L = ['region      = "%s"' % fval(r, "region"), 'environment = "%s"' % r.choice(["prod", "staging"]), 'instance_type = "t3.medium"', line,
         'tags = {', '  team = "%s"' % r.choice(V.APPS), '}']
    return "%s/terraform/%s" % (proj(r), r.choice(["terraform.tfvars", "prod.tfvars", "secrets.auto.tfvars"])), J(L), v, "tfvars"


@pos("terraform_provider_literal")
def _(r):
    ak, sk = V.aws_pair(r)
    L = ['terraform {', '  required_providers {', '    aws = {', '      source  = "hashicorp/aws"', '      version = "~> 5.0"', '    }', '  }', '}', '',
         'provider "aws" {', '  region     = "%s"' % fval(r, "region"), '  access_key = "%s"' % ak, '  secret_key = "%s"' % sk, '}']
    return "%s/main.tf" % proj(r), J(L), sk, "aws keys in provider block"


@pos("terraform_rc_token")
def _(r):
    tok = V.tfc_token(r)
    L = ['credentials "app.terraform.io" {', '  token = "%s"' % tok, '}']
    return "%s/.terraformrc" % home(r), J(L), tok, "terraform cloud token"


@pos("terraform_backend_conn")
def _(r):
    url, pw = pgurl(r, scheme="postgres")
    L = ['terraform {', '  backend "pg" {', '    conn_str = "%s"' % url, '    schema_name = "tfstate_%s"' % r.choice(V.APPS), '  }', '}']
    return "%s/infra/backend.tf" % proj(r), J(L), pw, "pg backend conn_str"


@pos("tfstate_sensitive")
def _(r):
    c = r.randrange(3)
    res = []
    if c == 0:
        pw = V.password(r)
        attrs = {"allocated_storage": 20, "engine": "postgres", "engine_version": "15.4", "id": "db-" + rs(r, UP + string.digits, 26),
                 "identifier": r.choice(V.APPS) + "-prod", "instance_class": "db.t3.medium", "password": pw, "username": V.user(r), "port": 5432}
        res.append({"mode": "managed", "type": "aws_db_instance", "name": "main", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                    "instances": [{"schema_version": 2, "attributes": attrs, "sensitive_attributes": [[{"type": "get_attr", "value": "password"}]]}]})
        needle = pw
    elif c == 1:
        pw = V.gen_pw(r, n=r.choice([16, 24, 32]), alpha="alnumsym")
        attrs = {"id": "none", "keepers": None, "length": len(pw), "lower": True, "min_special": 0, "numeric": True, "override_special": None,
                 "result": pw, "special": True, "upper": True, "bcrypt_hash": V.bcrypt_hash(r)}
        res.append({"mode": "managed", "type": "random_password", "name": "db", "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
                    "instances": [{"schema_version": 3, "attributes": attrs, "sensitive_attributes": []}]})
        needle = pw
    else:
        pem, kind = V.pem_private(r, "rsa-pkcs1")
        attrs = {"algorithm": "RSA", "ecdsa_curve": "P224", "id": V.sha256_hex(r)[:40], "private_key_pem": pem, "rsa_bits": 2048,
                 "public_key_fingerprint_md5": ":".join(rs(r, HEX, 2) for _ in range(16))}
        res.append({"mode": "managed", "type": "tls_private_key", "name": "deploy", "provider": "provider[\"registry.terraform.io/hashicorp/tls\"]",
                    "instances": [{"schema_version": 1, "attributes": attrs, "sensitive_attributes": []}]})
        needle = "private_key_pem"
    st = {"version": 4, "terraform_version": "1.%d.%d" % (r.randrange(3, 9), r.randrange(6)), "serial": r.randrange(1, 300),
          "lineage": V.uuid4(r), "outputs": {}, "resources": res, "check_results": None}
    return "%s/terraform/terraform.tfstate" % proj(r), json.dumps(st, indent=2) + "\n", needle, "tfstate variant %d" % c


@pos("pulumi_stack_plain")
def _(r):
    app = r.choice(V.APPS)
    if r.random() < 0.5:
        v = V.password(r); line = "  %s:dbPassword: %s" % (app, yq(r, v))
    else:
        ak, v = V.aws_pair(r); line = "  aws:secretKey: %s" % v
    L = ["config:", "  aws:region: %s" % fval(r, "region"), "  %s:instanceCount: \"3\"" % app, line]
    return "%s/Pulumi.%s.yaml" % (proj(r, app), r.choice(["prod", "dev", "staging"])), J(L), v, "pulumi plain config"


@pos("pulumi_env_token")
def _(r):
    v = "pul-" + rs(r, HEX, 40) if r.random() < 0.5 else V.password(r, safe=True)
    var = "PULUMI_ACCESS_TOKEN" if v.startswith("pul-") else "PULUMI_CONFIG_PASSPHRASE"
    L = ["# direnv", "export AWS_PROFILE=%s" % r.choice(V.APPS), "export %s=%s" % (var, shq(r, v))]
    return "%s/.envrc" % proj(r), J(L), v, var


@pos("cfn_noecho_default")
def _(r):
    pw = V.password(r, safe=True)
    if r.random() < 0.6:
        L = ["AWSTemplateFormatVersion: '2010-09-09'", "Description: %s database stack" % r.choice(V.APPS), "Parameters:", "  DBUsername:",
             "    Type: String", "    Default: %s" % V.user(r), "  DBPassword:", "    Type: String", "    NoEcho: true", "    MinLength: 8",
             "    Default: %s" % yq(r, pw), "Resources:", "  DB:", "    Type: AWS::RDS::DBInstance", "    Properties:", "      Engine: postgres",
             "      MasterUsername: !Ref DBUsername", "      MasterUserPassword: !Ref DBPassword", "      DBInstanceClass: db.t3.micro", "      AllocatedStorage: '20'"]
        return "%s/cfn/database.yaml" % proj(r), J(L), pw, "NoEcho parameter with Default"
    t = {"AWSTemplateFormatVersion": "2010-09-09", "Parameters": {"MasterPassword": {"Type": "String", "NoEcho": "true", "Default": pw}},
         "Resources": {"Cluster": {"Type": "AWS::DocDB::DBCluster", "Properties": {"MasterUsername": "admin", "MasterUserPassword": {"Ref": "MasterPassword"}}}}}
    return "%s/cfn/docdb.template.json" % proj(r), json.dumps(t, indent=2) + "\n", pw, "NoEcho JSON default"


@pos("cfn_params_json")
def _(r):
    pw = V.password(r)
    p = [{"ParameterKey": "Environment", "ParameterValue": "prod"}, {"ParameterKey": "DBPassword", "ParameterValue": pw},
         {"ParameterKey": "InstanceType", "ParameterValue": "t3.small"}]
    return "%s/cfn/params-prod.json" % proj(r), json.dumps(p, indent=2) + "\n", pw, "CFN parameter file"


@pos("vagrantfile")
def _(r):
    pw = nodollar(r, V.password(r, safe=True))
    if r.random() < 0.5:
        extra = ['  config.ssh.username = "%s"' % V.user(r), '  config.ssh.password = "%s"' % pw]
    else:
        extra = ['  config.vm.provision "shell", path: "provision.sh", env: {', '    "DB_ROOT_PASSWORD" => "%s",' % pw, '    "APP_ENV" => "dev"', '  }']
    L = ['Vagrant.configure("2") do |config|', '  config.vm.box = "ubuntu/jammy64"', '  config.vm.network "private_network", ip: "192.168.56.10"'] + extra + ["end"]
    return "%s/Vagrantfile" % proj(r), J(L), pw, "Vagrantfile"


# ======================= CI =======================
@pos("jenkinsfile_literal")
def _(r):
    if r.random() < 0.5:
        v = V.any_token(r)[0]
        L = ["pipeline {", "  agent any", "  environment {", "    REGISTRY = 'registry.example.com'", "    DEPLOY_TOKEN = '%s'" % v, "  }",
             "  stages {", "    stage('Build') {", "      steps {", "        sh 'make build'", "      }", "    }", "  }", "}"]
    else:
        v = nodollar(r, V.password(r, safe=True))
        L = ["node {", "  stage('Push') {", "    sh \"docker login -u %s -p %s registry.example.com\"" % (V.user(r), v), "    sh 'docker push registry.example.com/app:latest'", "  }", "}"]
    return "%s/Jenkinsfile" % proj(r), J(L), v, "Jenkinsfile"


@pos("gitlab_ci_vars")
def _(r):
    v = r.choice([V.password(r), V.any_token(r)[0]])
    var = r.choice(["DOCKER_PASSWORD", "SONAR_TOKEN", "DEPLOY_PASSWORD", "NEXUS_PASS"])
    L = ["stages: [build, deploy]", "", "variables:", "  DOCKER_DRIVER: overlay2", "  %s: %s" % (var, yq(r, v, r.choice(["double", "single", None]))), "",
         "build:", "  stage: build", "  image: docker:24", "  script:", "    - docker build -t $CI_REGISTRY_IMAGE .", ""]
    return "%s/.gitlab-ci.yml" % proj(r), J(L), v, "gitlab ci variables literal"


@pos("github_actions_literal")
def _(r):
    v, k = V.any_token(r)
    if r.random() < 0.5:
        L = ["name: notify", "on:", "  push:", "    branches: [main]", "jobs:", "  notify:", "    runs-on: ubuntu-latest", "    env:",
             "      API_TOKEN: %s" % yq(r, v), "    steps:", "      - uses: actions/checkout@v4", "      - run: ./scripts/notify.sh"]
    else:
        v = V.password(r)
        L = ["name: release", "on: [push]", "jobs:", "  push:", "    runs-on: ubuntu-latest", "    steps:", "      - uses: docker/login-action@v3",
             "        with:", "          registry: ghcr.io", "          username: %s" % V.user(r), "          password: %s" % yq(r, v)]
    return "%s/.github/workflows/%s.yml" % (proj(r), r.choice(["ci", "release", "deploy"])), J(L), v, "actions literal"


@pos("circleci_env")
def _(r):
    ak, sk = V.aws_pair(r)
    L = ["version: 2.1", "jobs:", "  deploy:", "    docker:", "      - image: cimg/python:3.12", "    environment:", "      AWS_ACCESS_KEY_ID: %s" % ak,
         "      AWS_SECRET_ACCESS_KEY: %s" % yq(r, sk), "    steps:", "      - checkout", "      - run: make deploy"]
    return "%s/.circleci/config.yml" % proj(r), J(L), sk, "circleci env"


@pos("shell_deploy_docker_login")
def _(r):
    pw = r.choice([V.dockerhub(r), V.password(r, safe=True)])
    L = ["#!/bin/sh", "set -e", 'echo "%s" | docker login --username %s --password-stdin %s' % (pw, V.user(r), r.choice(["docker.io", "registry.example.com"])),
         "docker compose pull && docker compose up -d"]
    return "%s/deploy.sh" % proj(r), J(L), pw, "echo literal | docker login"


# ======================= Java / Spring / .NET =======================
@pos("java_properties")
def _(r):
    pw = V.password(r)
    key = r.choice(["db.password", "jdbc.password", "ldap.bind.password", "mail.smtp.password", "datasource.password", "keystore.password"])
    sep = r.choice(["=", " = ", ": ", "="])
    body = ["%s%s%s" % (key, sep, pw)]
    L = ["# generated"] + (fill_props(r, r.randrange(150, 300)) if r.random() < 0.4 else fill_props(r, 8)) + body + fill_props(r, r.randrange(0, 5))
    return "%s/src/main/resources/%s" % (proj(r), r.choice(["application.properties", "config.properties", "db.properties"])), J(L), pw, "properties"


@pos("spring_yml")
def _(r):
    pw = V.password(r)
    body = ["spring:", "  application:", "    name: %s" % r.choice(V.APPS), "  datasource:",
            "    url: jdbc:postgresql://%s:5432/%s" % (V.host(r), r.choice(V.APPS)), "    username: %s" % V.user(r),
            "    password: %s" % yq(r, pw), "    hikari:", "      maximum-pool-size: 10"]
    L = body + fill_yaml(r, r.randrange(5, 200))
    return "%s/src/main/resources/application%s.yml" % (proj(r), r.choice(["", "-prod"])), J(L), pw, "spring datasource password"


@pos("jdbc_url_password")
def _(r):
    pw = V.password(r, safe=True)
    u, h, db = V.user(r), V.host(r), r.choice(V.APPS)
    url = r.choice(["jdbc:postgresql://%s:5432/%s?user=%s&password=%s&ssl=true" % (h, db, u, pw),
                    "jdbc:mysql://%s:3306/%s?user=%s&password=%s&useSSL=false" % (h, db, u, pw),
                    "jdbc:sqlserver://%s:1433;databaseName=%s;user=%s;password=%s;encrypt=true" % (h, db, u, pw),
                    "jdbc:oracle:thin:%s/%s@//%s:1521/ORCLPDB1" % (u, pw, h)])
    if r.random() < 0.5:
        L = fill_props(r, 6) + ["spring.datasource.url=" + url.replace(":", "\\:") if False else "spring.datasource.url=" + url]
        path = "src/main/resources/application.properties"
    else:
        L = ["<?xml version='1.0' encoding='utf-8'?>", "<Context>", '  <Resource name="jdbc/%s" auth="Container" type="javax.sql.DataSource"' % db,
             '            driverClassName="org.postgresql.Driver" maxTotal="20"', '            url="%s"/>' % url.replace("&", "&amp;"), "</Context>"]
        path = "src/main/webapp/META-INF/context.xml"
    return "%s/%s" % (proj(r), path), J(L), pw, "JDBC URL with password"


@pos("tomcat_context_password")
def _(r):
    pw = V.password(r, safe=True)
    L = ["<Context>", '  <Resource name="jdbc/app" auth="Container" type="javax.sql.DataSource"', '            username="%s" password="%s"' % (V.user(r), pw),
         '            driverClassName="com.mysql.cj.jdbc.Driver"', '            url="jdbc:mysql://%s:3306/app"/>' % V.host(r), "</Context>"]
    return "opt/tomcat/conf/Catalina/localhost/%s.xml" % r.choice(V.APPS), J(L), pw, "tomcat Resource password attr"


@pos("tomcat_users")
def _(r):
    pw = V.password(r, safe=True)
    L = ["<?xml version='1.0' encoding='utf-8'?>", '<tomcat-users xmlns="http://tomcat.apache.org/xml" version="1.0">', '  <role rolename="manager-gui"/>',
         '  <user username="%s" password="%s" roles="manager-gui,admin-gui"/>' % (V.user(r), pw), "</tomcat-users>"]
    return "opt/tomcat/conf/tomcat-users.xml", J(L), pw, "tomcat-users"


@pos("hibernate_cfg")
def _(r):
    pw = V.password(r, safe=True)
    L = ['<?xml version="1.0" encoding="utf-8"?>', "<hibernate-configuration>", "  <session-factory>",
         '    <property name="hibernate.connection.url">jdbc:postgresql://%s/%s</property>' % (V.host(r), r.choice(V.APPS)),
         '    <property name="hibernate.connection.username">%s</property>' % V.user(r),
         '    <property name="hibernate.connection.password">%s</property>' % pw, "  </session-factory>", "</hibernate-configuration>"]
    return "%s/src/main/resources/hibernate.cfg.xml" % proj(r), J(L), pw, "hibernate cfg"


@pos("appsettings_json")
def _(r):
    pw = V.password(r, safe=r.random() < 0.5).replace(";", "!")
    cs = r.choice(["Server=%s;Database=%s;User Id=%s;Password=%s;TrustServerCertificate=True;" % (V.host(r), r.choice(V.APPS), V.user(r), pw),
                   "Data Source=%s,1433;Initial Catalog=%s;User ID=sa;Password=%s;MultipleActiveResultSets=True" % (V.host(r), r.choice(V.APPS), pw),
                   "Host=%s;Port=5432;Database=%s;Username=%s;Password=%s" % (V.host(r), r.choice(V.APPS), V.user(r), pw)])
    d = {"Logging": {"LogLevel": {"Default": "Information", "Microsoft.AspNetCore": "Warning"}}, "AllowedHosts": "*",
         "ConnectionStrings": {"DefaultConnection": cs}}
    return "%s/src/%s.Api/appsettings%s.json" % (proj(r), r.choice(V.APPS).capitalize(), r.choice(["", ".Production", ".Development"])), json.dumps(d, indent=2) + "\n", pw, "appsettings connection string"


@pos("dotnet_user_secrets")
def _(r):
    v = r.choice([V.secret_b64(r, 32), V.password(r), V.sendgrid(r)])
    key = r.choice(["Jwt:Key", "Smtp:Password", "SendGrid:ApiKey", "Authentication:Google:ClientSecret"])
    d = {key: v, "Features:Beta": "true"}
    return "%s/.microsoft/usersecrets/%s/secrets.json" % (home(r), V.uuid4(r)), json.dumps(d, indent=2) + "\n", v, "dotnet user-secrets"


@pos("web_config_xml")
def _(r):
    pw = V.password(r, safe=True)
    L = ['<?xml version="1.0" encoding="utf-8"?>', "<configuration>", "  <connectionStrings>",
         '    <add name="Default" connectionString="Data Source=%s;Initial Catalog=%s;User ID=%s;Password=%s" providerName="System.Data.SqlClient" />' % (V.host(r), r.choice(V.APPS), V.user(r), pw),
         "  </connectionStrings>", "  <appSettings>", '    <add key="Environment" value="Production" />', "  </appSettings>", "</configuration>"]
    return "%s/Web.config" % proj(r), J(L).replace("\n", "\r\n") if r.random() < 0.5 else J(L), pw, "web.config"


@pos("odbc_conn")
def _(r):
    pw = V.password(r, safe=True)
    if r.random() < 0.5:
        L = ["[%s]" % r.choice(V.APPS).upper(), "Driver=ODBC Driver 18 for SQL Server", "Server=%s,1433" % V.host(r), "Database=%s" % r.choice(V.APPS),
             "UID=%s" % V.user(r), "PWD=%s" % pw, "Encrypt=yes"]
        return "%s/.odbc.ini" % home(r), J(L), pw, "odbc.ini"
    L = ["import pyodbc", "", 'CONN = ("DRIVER={ODBC Driver 18 for SQL Server};"', '        "SERVER=%s;DATABASE=%s;"' % (V.host(r), r.choice(V.APPS)),
         '        "UID=%s;PWD=%s")' % (V.user(r), pw), "cnx = pyodbc.connect(CONN)"]
    return "%s/etl/extract.py" % proj(r), J(L), pw, "ODBC string in python"


# ======================= Python / Ruby / PHP app config =======================
@pos("sqlalchemy_uri")
def _(r):
    pw = V.password(r, safe=True)
    if r.random() < 0.5:
        url = "postgresql+psycopg2://%s:%s@%s:5432/%s" % (V.user(r), pw, V.host(r), r.choice(V.APPS))
        L = ["import os", "", "class Config:", "    DEBUG = False", '    SQLALCHEMY_DATABASE_URI = "%s"' % url, "    SQLALCHEMY_TRACK_MODIFICATIONS = False"]
        return "%s/app/config.py" % proj(r), J(L), pw, "sqlalchemy URI"
    url = "mysql+pymysql://%s:%s@%s/%s" % (V.user(r), pw, V.host(r), r.choice(V.APPS))
    L = ["[alembic]", "script_location = migrations", "sqlalchemy.url = " + url, "", "[loggers]", "keys = root,sqlalchemy,alembic"]
    return "%s/alembic.ini" % proj(r), J(L), pw, "alembic.ini url"


@pos("django_databases")
def _(r):
    pw = V.password(r)
    pre = ["from pathlib import Path", "", "BASE_DIR = Path(__file__).resolve().parent.parent", "DEBUG = False",
           "ALLOWED_HOSTS = ['%s.example.com']" % r.choice(V.APPS), ""]
    if r.random() < 0.5:
        pre += ["INSTALLED_APPS = ["] + ["    '%s'," % a for a in ["django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes", "rest_framework"]] + ["]", ""]
    body = ["DATABASES = {", "    'default': {", "        'ENGINE': 'django.db.backends.postgresql',", "        'NAME': '%s'," % r.choice(V.APPS),
            "        'USER': '%s'," % V.user(r), "        'PASSWORD': '%s'," % pw, "        'HOST': '%s'," % V.host(r), "        'PORT': '5432',", "    }", "}"]
    return "%s/%s/settings/production.py" % (proj(r), r.choice(V.APPS)), J(pre + body), pw, "django DATABASES"


@pos("django_secret_key")
def _(r):
    k = rs(r, "abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)", 50)
    L = ["import os", "", "SECRET_KEY = '%s'" % k, "DEBUG = False", "TIME_ZONE = 'UTC'"]
    return "%s/%s/settings.py" % (proj(r), r.choice(V.APPS)), J(L), k, "django SECRET_KEY"


@pos("rails_database_yml")
def _(r):
    pw = V.password(r)
    L = ["default: &default", "  adapter: postgresql", "  encoding: unicode", "  pool: <%= ENV.fetch(\"RAILS_MAX_THREADS\") { 5 } %>", "",
         "development:", "  <<: *default", "  database: app_development", "", "production:", "  <<: *default", "  database: %s_production" % r.choice(V.APPS),
         "  username: %s" % V.user(r), "  password: %s" % yq(r, pw), "  host: %s" % V.host(r)]
    return "%s/config/database.yml" % proj(r), J(L), pw, "rails database.yml"


@pos("rails_secrets_yml")
def _(r):
    k = rs(r, HEX, 128)
    L = ["production:", "  secret_key_base: %s" % k]
    return "%s/config/secrets.yml" % proj(r), J(L), k, "secret_key_base"


@pos("rails_master_key")
def _(r):
    k = rs(r, HEX, 32)
    return "%s/config/master.key" % proj(r), k, k, "rails master.key (no newline)"


@pos("laravel_env")
def _(r):
    c = r.randrange(3)
    if c == 0:
        v = V.password(r); line = "DB_PASSWORD=" + envq(r, v)
    elif c == 1:
        v = "base64:" + V.secret_b64(r, 32); line = "APP_KEY=" + v
    else:
        v = V.password(r); line = "MAIL_PASSWORD=" + envq(r, v)
    L = ["APP_NAME=Laravel", "APP_ENV=production", "APP_DEBUG=false", "APP_URL=https://%s.example.com" % r.choice(V.APPS), "",
         "LOG_CHANNEL=stack", "", "DB_CONNECTION=mysql", "DB_HOST=127.0.0.1", "DB_PORT=3306", "DB_DATABASE=%s" % r.choice(V.APPS), "DB_USERNAME=%s" % V.user(r)]
    if r.random() < 0.4:
        L += fill_env(r, r.randrange(100, 280))
    L.append(line)
    L += ["", "BROADCAST_DRIVER=log", "CACHE_DRIVER=file"]
    return "%s/.env" % proj(r), J(L), v, "laravel .env"


@pos("laravel_config_default")
def _(r):
    pw = V.password(r, safe=True)
    L = ["<?php", "", "return [", "    'default' => env('DB_CONNECTION', 'mysql'),", "    'connections' => [", "        'mysql' => [",
         "            'driver' => 'mysql',", "            'host' => env('DB_HOST', '127.0.0.1'),", "            'username' => env('DB_USERNAME', 'forge'),",
         "            'password' => env('DB_PASSWORD', '%s')," % pw, "        ],", "    ],", "];"]
    return "%s/config/database.php" % proj(r), J(L), pw, "env() default literal"


@pos("wp_config")
def _(r):
    pw = V.password(r).replace("'", "")
    L = ["<?php", "define( 'DB_NAME', 'wordpress' );", "define( 'DB_USER', '%s' );" % V.user(r), "define( 'DB_PASSWORD', '%s' );" % pw,
         "define( 'DB_HOST', 'localhost' );", "define( 'AUTH_KEY',         'put your unique phrase here' );", "$table_prefix = 'wp_';"]
    return "var/www/%s/wp-config.php" % r.choice(V.APPS), J(L), pw, "wp-config"


# ======================= URLs =======================
def _env_or_py(r, var, url):
    c = r.randrange(3)
    if c == 0:
        return ".env", ["%s=%s" % (var, url)]
    if c == 1:
        return "config/settings.py", ["import os", "%s = os.environ.get(%r, %r)" % (var, var, url)]
    return "config.yaml", ["%s: %s" % (var.lower(), yq(r, url, r.choice(["double", "single", "plain"])))]


@pos("amqp_url")
def _(r):
    pw = V.password(r, safe=True)
    url = "amqp%s://%s:%s@%s:%d/%s" % (r.choice(["", "s"]), V.user(r), pw, r.choice(["rabbitmq", "mq.internal", "b-%s.mq.us-east-1.amazonaws.com" % V.uuid4(r)]),
                                        r.choice([5672, 5671]), r.choice(["%2F", "prod", ""]))
    f, L = _env_or_py(r, "RABBITMQ_URL", url)
    return "%s/%s" % (proj(r), f), J(L), pw, "amqp url"


@pos("mqtt_credentials")
def _(r):
    pw = V.password(r, safe=True)
    if r.random() < 0.5:
        L = ["connection bridge-cloud", "address mqtt.example.io:8883", "topic sensors/# out 1", "remote_username %s" % V.user(r),
             "remote_password %s" % pw, "bridge_cafile /etc/ssl/certs/ca-certificates.crt"]
        return "etc/mosquitto/conf.d/bridge.conf", J(L), pw, "mosquitto bridge"
    url = "mqtts://%s:%s@broker.example.io:8883" % (V.user(r), pw)
    f, L = _env_or_py(r, "MQTT_URL", url)
    return "%s/%s" % (proj(r), f), J(L), pw, "mqtt url"


@pos("redis_url")
def _(r):
    pw = V.password(r, safe=True)
    url = r.choice(["redis://:%s@redis:6379/0" % pw, "rediss://default:%s@%s.cache.amazonaws.com:6379" % (pw, r.choice(V.APPS)),
                    "redis://%s:%s@10.0.3.4:6379/2" % (V.user(r), pw)])
    f, L = _env_or_py(r, "REDIS_URL", url)
    return "%s/%s" % (proj(r), f), J(L), pw, "redis url"


@pos("mongo_url")
def _(r):
    pw = V.password(r, safe=True)
    url = r.choice(["mongodb+srv://%s:%s@cluster0.%s.mongodb.net/%s?retryWrites=true&w=majority" % (V.user(r), pw, rs(r, LOW + string.digits, 5), r.choice(V.APPS)),
                    "mongodb://%s:%s@mongo-0.mongo:27017,mongo-1.mongo:27017/%s?replicaSet=rs0&authSource=admin" % (V.user(r), pw, r.choice(V.APPS))])
    f, L = _env_or_py(r, "MONGODB_URI", url)
    return "%s/%s" % (proj(r), f), J(L), pw, "mongo url"


@pos("smtp_credentials")
def _(r):
    c = r.randrange(3)
    if c == 0:
        pw = V.password(r, safe=True)
        f, L = _env_or_py(r, "EMAIL_URL", "smtp+tls://%s:%s@smtp.mailgun.org:587" % (V.user(r), pw))
        return "%s/%s" % (proj(r), f), J(L), pw, "smtp url"
    if c == 1:
        pw = " ".join(rs(r, LOW, 4) for _ in range(4))
        L = ["[smtp.gmail.com]:587 %s@gmail.com:%s" % (r.choice(V.FIRST), pw)]
        return "etc/postfix/sasl_passwd", J(L), pw, "postfix sasl_passwd gmail app password"
    pw = V.password(r)
    L = ["EMAIL_BACKEND = 'django.core.mail.backends.smtp.EmailBackend'", "EMAIL_HOST = 'smtp.sendgrid.net'", "EMAIL_HOST_USER = 'apikey'",
         "EMAIL_HOST_PASSWORD = '%s'" % pw, "EMAIL_PORT = 587", "EMAIL_USE_TLS = True"]
    return "%s/settings/mail.py" % proj(r), J(L), pw, "django EMAIL_HOST_PASSWORD"


@pos("ldap_bind")
def _(r):
    pw = V.password(r)
    c = r.randrange(3)
    if c == 0:
        L = ["[domain/corp]", "id_provider = ldap", "ldap_uri = ldaps://ldap.corp.example.com", "ldap_search_base = dc=corp,dc=example,dc=com",
             "ldap_default_bind_dn = cn=sssd,ou=svc,dc=corp,dc=example,dc=com", "ldap_default_authtok_type = password", "ldap_default_authtok = %s" % pw]
        return "etc/sssd/sssd.conf", J(L), pw, "sssd authtok"
    if c == 1:
        L = ["uri ldap://ldap.corp.example.com/", "base dc=corp,dc=example,dc=com", "binddn cn=nslcd,ou=svc,dc=corp,dc=example,dc=com", "bindpw %s" % pw]
        return "etc/nslcd.conf", J(L), pw, "nslcd bindpw"
    L = ["main:", "  label: 'LDAP'", "  host: 'ldap.corp.example.com'", "  port: 636", "  encryption: 'simple_tls'",
         "  bind_dn: 'CN=gitlab,OU=svc,DC=corp,DC=example,DC=com'", "  password: %s" % yq(r, pw), "  base: 'DC=corp,DC=example,DC=com'"]
    return "etc/gitlab/ldap.yml", J(L), pw, "gitlab ldap"


@pos("url_percent_encoded")
def _(r):
    pw = V.human_pw(r) + r.choice(["@", ":", "/", "#", "?", "%", "@!"]) + str(r.randrange(10, 99))
    enc = V.pct(pw)
    url = "%s://%s:%s@%s/%s" % (r.choice(["postgres", "mysql", "amqp", "redis", "mongodb"]), V.user(r), enc, V.host(r), r.choice(V.APPS))
    var = r.choice(["DATABASE_URL", "BROKER_URL", "DB_URL", "CACHE_URL"])
    L = fill_env(r, r.randrange(2, 8)) + ["%s=%s" % (var, envq(r, url))]
    return "%s/.env.production" % proj(r), J(L), enc, "percent-encoded password %r" % pw


@pos("airflow_conn")
def _(r):
    c = r.randrange(3)
    if c == 0:
        pw = V.password(r, safe=True)
        L = fill_env(r, 4) + ["AIRFLOW_CONN_%s=postgres://%s:%s@%s:5432/%s" % (r.choice(["WAREHOUSE", "MY_PG", "ANALYTICS_DB"]), V.user(r), pw, V.host(r), r.choice(V.APPS))]
        return "%s/airflow/.env" % proj(r), J(L), pw, "AIRFLOW_CONN_"
    if c == 1:
        pw = V.password(r, safe=True)
        L = ["[core]", "dags_folder = /opt/airflow/dags", "executor = CeleryExecutor", "", "[database]",
             "sql_alchemy_conn = postgresql+psycopg2://airflow:%s@%s/airflow" % (pw, V.host(r))]
        return "opt/airflow/airflow.cfg", J(L), pw, "airflow sql_alchemy_conn"
    k = V.b64url(V.rand_bytes(r, 32)) + "="
    L = ["[core]", "load_examples = False", "fernet_key = %s" % k]
    return "opt/airflow/airflow.cfg", J(L), k, "airflow fernet_key"


@pos("celery_broker")
def _(r):
    pw = V.password(r, safe=True)
    c = r.randrange(3)
    if c == 0:
        url = "amqp://%s:%s@rabbitmq:5672//" % (V.user(r), pw)
    elif c == 1:
        url = "redis://:%s@redis:6379/1" % pw
    else:
        ak, sk = V.aws_pair(r)
        pw = V.pct(sk)
        url = "sqs://%s:%s@" % (ak, pw)
    L = ["# celeryconfig.py", "broker_url = '%s'" % url, "result_backend = 'rpc://'", "task_serializer = 'json'", "timezone = 'UTC'"]
    return "%s/celeryconfig.py" % proj(r), J(L), pw, "celery broker_url"


@pos("sentry_dsn_old")
def _(r):
    pub, sec = rs(r, HEX, 32), rs(r, HEX, 32)
    dsn = "https://%s:%s@%s/%d" % (pub, sec, r.choice(["sentry.io", "o%d.ingest.sentry.io" % r.randrange(10**5, 10**6), "sentry.corp.example.com"]), r.randrange(2, 999999))
    f, L = _env_or_py(r, "SENTRY_DSN", dsn)
    return "%s/%s" % (proj(r), f), J(L), sec, "old-style DSN with secret"


# ======================= encodings =======================
@pos("json_escaped")
def _(r):
    pw = V.password(r, safe=True)
    c = r.randrange(3)
    if c == 0:
        inner = json.dumps({"username": V.user(r), "password": pw, "host": V.host(r), "port": 5432})
        d = {"name": "%s-db" % r.choice(V.APPS), "SecretString": inner, "VersionStages": ["AWSCURRENT"]}
        return "%s/fixtures/secret-%s.json" % (proj(r), r.choice(V.APPS)), json.dumps(d, indent=2) + "\n", pw, "JSON-in-JSON SecretString"
    if c == 1:
        pw2 = V.human_pw(r).replace("@", "") + "@" + str(r.randrange(10, 99))
        esc = pw2.replace("@", "\\u0040")
        t = '{\n  "database": {\n    "user": "%s",\n    "password": "%s"\n  }\n}\n' % (V.user(r), esc)
        return "%s/config/local.json" % proj(r), t, esc, "unicode-escaped password %r" % pw2
    tok = V.any_token(r)[0]
    t = '{"containerDefinitions":[{"name":"app","environment":[{"name":"API_TOKEN","value":"%s"},{"name":"PORT","value":"8080"}]}]}\n' % tok
    return "%s/ecs/taskdef.json" % proj(r), t, tok, "ECS task definition env literal"


@pos("yaml_block_literal")
def _(r):
    c = r.randrange(3)
    if c == 0:
        pw = V.password(r, safe=True)
        L = ["#cloud-config", "hostname: %s" % r.choice(V.APPS), "ssh_pwauth: true", "chpasswd:", "  expire: false", "  list: |", "    %s:%s" % (r.choice(["root", "ubuntu", "admin"]), pw),
             "packages:", "  - nginx"]
        return "%s/cloud-init/user-data" % proj(r), J(L), pw, "cloud-init chpasswd list"
    if c == 1:
        pw = nodollar(r, V.password(r, safe=True))
        L = ["deploy:", "  stage: deploy", "  script: |", "    export PGPASSWORD=%s" % pw, "    psql -h %s -U %s -c 'select 1'" % (V.host(r), V.user(r)), "    ./deploy.sh"]
        return "%s/.gitlab-ci.yml" % proj(r), J(L), pw, "export in block script"
    pw = V.password(r, safe=True)
    L = ["write_files:", "  - path: /etc/app/db.ini", "    permissions: '0600'", "    content: |", "      [db]", "      user = %s" % V.user(r), "      password = %s" % pw]
    return "%s/cloud-init/user-data.yaml" % proj(r), J(L), pw, "write_files content block"


@pos("yaml_folded")
def _(r):
    pw = V.password(r, safe=True)
    L = ["services:", "  worker:", "    image: %s/worker:1.4" % r.choice(V.APPS), "    command: >", "      python -m worker", "      --db-host %s" % V.host(r),
         "      --db-user %s" % V.user(r), "      --db-password %s" % pw, "      --concurrency 4"]
    return "%s/docker-compose.worker.yml" % proj(r), J(L), pw, "folded command with --db-password"


@pos("yaml_pem_block")
def _(r):
    pem, kind = V.pem_private(r)
    body = ["    " + l for l in pem.strip().splitlines()]
    L = ["---", "deploy_user: deploy", "deploy_ssh_private_key: |"] + body + ["deploy_known_hosts: []"]
    return "%s/group_vars/all/deploy.yml" % proj(r), J(L), pem.splitlines()[1], "PEM in yaml block (%s)" % kind


@pos("pem_env_literal_n")
def _(r):
    pem, kind = V.pem_private(r, r.choice(["rsa-pkcs8", "ec-pkcs8", "ed-pkcs8", "ec-sec1"]))
    esc = pem.replace("\n", "\\n")
    var = r.choice(["PRIVATE_KEY", "JWT_PRIVATE_KEY", "GITHUB_APP_PRIVATE_KEY", "SIGNING_KEY"])
    L = fill_env(r, r.randrange(2, 6)) + ['%s="%s"' % (var, esc)]
    return "%s/.env" % proj(r), J(L), esc[:50], "PEM with literal \\n (%s)" % kind


@pos("gcp_sa_json")
def _(r):
    pem, kind = V.pem_private(r, "rsa-pkcs8")
    proj_id = "%s-%s-%d" % (r.choice(V.WORDS), r.choice(V.APPS), r.randrange(100000, 999999))
    d = {"type": "service_account", "project_id": proj_id, "private_key_id": rs(r, HEX, 40), "private_key": pem,
         "client_email": "%s@%s.iam.gserviceaccount.com" % (r.choice(V.APPS), proj_id), "client_id": str(r.randrange(10**20, 10**21)),
         "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token"}
    return "%s/%s" % (proj(r), r.choice(["gcp-key.json", "credentials/sa.json", "terraform/account.json"])), json.dumps(d, indent=2) + "\n", "private_key\"", "GCP service account key"


@pos("base64_secret_key")
def _(r):
    v = V.secret_b64(r, r.choice([32, 48, 64]))
    key = r.choice(["encryptionKey", "jwtSecretBase64", "SESSION_SECRET_B64", "master_key_b64", "hmac_secret"])
    if r.random() < 0.5:
        L = ["security:", "  %s: %s" % (key, yq(r, v, r.choice(["double", "single"]))), "  algorithm: HS256"]
        f = "config/app.yaml"
    else:
        L = ["%s=%s" % (key.upper(), v)]
        f = ".env"
    return "%s/%s" % (proj(r), f), J(L), v, "base64 secret under secret key name"


@pos("base64_blob_env")
def _(r):
    pw = V.password(r)
    env = "DB_HOST=%s\nDB_USER=%s\nDB_PASSWORD=%s\n" % (V.host(r), V.user(r), pw)
    enc = b64(env)
    L = ["variables:", "  ENV_FILE_B64: \"%s\"" % enc, "", "deploy:", "  script:", "    - echo \"$ENV_FILE_B64\" | base64 -d > .env", "    - ./deploy.sh"]
    return "%s/.gitlab-ci.yml" % proj(r), J(L), enc[:40], "base64 of env file with password %r" % pw


@pos("hex_secret")
def _(r):
    c = r.randrange(2)
    if c == 0:
        v = rs(r, HEX, r.choice([32, 64]))
        key = r.choice(["encryption_key", "AES_KEY", "secret_key_hex", "signing_secret"])
        L = ["[crypto]", "%s = %s" % (key, v)]
        return "etc/%s/%s.conf" % (r.choice(V.APPS), r.choice(V.APPS)), J(L), v, "hex key"
    pw = V.password(r)
    v = pw.encode().hex()
    L = ["db:", "  user: %s" % V.user(r), "  password_hex: %s" % yq(r, v, "double")]
    return "%s/config/db.yaml" % proj(r), J(L), v, "hex-encoded password %r" % pw


@pos("heredoc_shell")
def _(r):
    c = r.randrange(3)
    if c == 0:
        pw = V.password(r, safe=True)
        L = ["#!/bin/bash", "set -e", "cat > ~/.pgpass <<EOF", "%s:5432:%s:%s:%s" % (V.host(r), r.choice(V.APPS), V.user(r), pw), "EOF", "chmod 600 ~/.pgpass"]
    elif c == 1:
        pw = V.any_token(r)[0]
        L = ["#!/usr/bin/env bash", "cat <<'EOF' > /etc/%s/env" % r.choice(V.APPS), "API_URL=https://api.example.com", "API_TOKEN=%s" % pw, "EOF"]
    else:
        pw = V.password(r)
        L = ["#!/bin/sh", "kubectl apply -f - <<EOF", "apiVersion: v1", "kind: Secret", "metadata:", "  name: db", "stringData:", "  password: '%s'" % pw, "EOF"]
    L = L[:2] + (fill_shell(r, r.randrange(5, 150)) if r.random() < 0.5 else []) + L[2:]
    return "%s/scripts/%s.sh" % (proj(r), r.choice(["bootstrap", "setup", "provision"])), J(L), pw, "heredoc"


@pos("heredoc_netrc")
def _(r):
    pw = V.password(r, safe=True) if r.random() < 0.5 else V.gh_token(r)
    L = ["#!/bin/bash", "cat >> \"$HOME/.netrc\" <<EOF", "machine %s" % r.choice(["github.com", "api.heroku.com", "nexus.example.com"]), "  login %s" % V.user(r), "  password %s" % pw, "EOF"]
    return "%s/ci/setup-netrc.sh" % proj(r), J(L), pw, "netrc heredoc"


# ======================= web servers / proxies =======================
@pos("htpasswd_plain")
def _(r):
    pw = V.password(r, safe=True)
    u = V.user(r)
    line = r.choice(["%s:{PLAIN}%s" % (u, pw), "%s:%s" % (u, pw)])
    return "etc/nginx/%s" % r.choice([".htpasswd", "htpasswd.users", "conf.d/users.passwd"]), line + "\n", pw, "plaintext htpasswd"


@pos("nginx_proxy_basic")
def _(r):
    u, pw = V.user(r), V.password(r)
    enc = b64(u + ":" + pw)
    L = ["server {", "    listen 443 ssl;", "    server_name %s.example.com;" % r.choice(V.APPS), "", "    location /api/ {",
         "        proxy_pass https://upstream.example.net/;", '        proxy_set_header Authorization "Basic %s";' % enc,
         "        proxy_set_header Host upstream.example.net;", "    }", "}"]
    return "etc/nginx/sites-available/%s.conf" % r.choice(V.APPS), J(L), enc, "basic auth header b64 of %s:%s" % (u, pw)


@pos("nginx_proxy_bearer")
def _(r):
    tok = r.choice([V.any_token(r)[0], V.jwt_hs(r)])
    hdr = r.choice(['Authorization "Bearer %s"' % tok, "X-Api-Key %s" % tok])
    L = ["location /upstream/ {", "    proxy_pass https://api.partner.example/;", "    proxy_set_header %s;" % hdr, "}"]
    return "etc/nginx/conf.d/partner.conf", J(L), tok, "proxy header token"


@pos("apache_proxy_header")
def _(r):
    u, pw = V.user(r), V.password(r)
    enc = b64(u + ":" + pw)
    L = ["<VirtualHost *:443>", "    ServerName %s.example.com" % r.choice(V.APPS), "    ProxyPass / http://127.0.0.1:9200/", "    ProxyPassReverse / http://127.0.0.1:9200/",
         '    RequestHeader set Authorization "Basic %s"' % enc, "</VirtualHost>"]
    return "etc/apache2/sites-enabled/%s.conf" % r.choice(V.APPS), J(L), enc, "apache RequestHeader basic"


@pos("squid_cache_peer")
def _(r):
    pw = V.password(r, safe=True)
    L = ["http_port 3128", "cache_peer proxy.upstream.example 3128 0 no-query default login=%s:%s" % (V.user(r), pw), "never_direct allow all"]
    return "etc/squid/squid.conf", J(L), pw, "squid login="


@pos("haproxy_userlist")
def _(r):
    pw = V.password(r, safe=True)
    L = ["global", "    log /dev/log local0", "", "userlist admins", "    user %s insecure-password %s" % (V.user(r), pw), "",
         "frontend stats", "    bind *:8404", "    http-request auth unless { http_auth(admins) }", "    stats enable"]
    return "etc/haproxy/haproxy.cfg", J(L), pw, "insecure-password"


@pos("haproxy_stats_auth")
def _(r):
    pw = V.password(r, safe=True)
    L = ["listen stats", "    bind :9000", "    mode http", "    stats enable", "    stats uri /haproxy?stats", "    stats auth %s:%s" % (V.user(r), pw)]
    return "etc/haproxy/haproxy.cfg", J(L), pw, "stats auth"


# ======================= observability =======================
@pos("prometheus_basic_auth")
def _(r):
    pw = V.password(r)
    L = ["global:", "  scrape_interval: 15s", "scrape_configs:", "  - job_name: %s" % r.choice(V.APPS), "    scheme: https", "    basic_auth:",
         "      username: %s" % V.user(r), "      password: %s" % yq(r, pw), "    static_configs:", "      - targets: ['%s.example.com:443']" % r.choice(V.APPS)]
    return "etc/prometheus/prometheus.yml", J(L), pw, "basic_auth password"


@pos("prometheus_bearer")
def _(r):
    tok = r.choice([V.jwt_hs(r), V.grafana_sa(r), rs(r, B62, 40)])
    if r.random() < 0.5:
        auth = ["    bearer_token: %s" % yq(r, tok)]
    else:
        auth = ["    authorization:", "      type: Bearer", "      credentials: %s" % yq(r, tok)]
    L = ["remote_write:" if False else "scrape_configs:", "  - job_name: federate", "    metrics_path: /federate"] + auth + ["    static_configs:", "      - targets: ['prom.example.com:9090']"]
    return "etc/prometheus/prometheus.yml", J(L), tok, "bearer token"


@pos("alertmanager_secret")
def _(r):
    if r.random() < 0.5:
        v = V.slack_webhook(r)
        L = ["global:", "  slack_api_url: %s" % yq(r, v), "route:", "  receiver: slack", "receivers:", "  - name: slack", "    slack_configs:", "      - channel: '#alerts'"]
    else:
        v = V.password(r)
        L = ["global:", "  smtp_smarthost: smtp.example.com:587", "  smtp_from: alerts@example.com", "  smtp_auth_username: alerts@example.com", "  smtp_auth_password: %s" % yq(r, v)]
    return "etc/alertmanager/alertmanager.yml", J(L), v, "alertmanager"


@pos("grafana_ini")
def _(r):
    pw = V.password(r)
    if r.random() < 0.5:
        L = ["[server]", "http_port = 3000", "", "[security]", "admin_user = admin", "admin_password = %s" % pw]
    else:
        L = ["[database]", "type = postgres", "host = %s:5432" % V.host(r), "name = grafana", "user = grafana", "password = %s" % (pw if r.random() < 0.5 else '"""%s"""' % pw)]
    return "etc/grafana/grafana.ini", J(L), pw, "grafana.ini"


@pos("grafana_datasource")
def _(r):
    pw = V.password(r)
    key = r.choice(["password", "basicAuthPassword"])
    L = ["apiVersion: 1", "datasources:", "  - name: Postgres", "    type: postgres", "    url: %s:5432" % V.host(r), "    user: grafana",
         "    basicAuth: %s" % ("true" if key == "basicAuthPassword" else "false"), "    secureJsonData:", "      %s: %s" % (key, yq(r, pw))]
    return "etc/grafana/provisioning/datasources/%s.yaml" % r.choice(["postgres", "datasources"]), J(L), pw, "grafana provisioning secureJsonData"


@pos("elastic_config")
def _(r):
    pw = V.password(r)
    c = r.randrange(3)
    if c == 0:
        L = ["server.host: \"0.0.0.0\"", "elasticsearch.hosts: [\"https://es01:9200\"]", "elasticsearch.username: \"kibana_system\"",
             "elasticsearch.password: %s" % yq(r, pw)]
        return "etc/kibana/kibana.yml", J(L), pw, "kibana es password"
    if c == 1:
        L = ["filebeat.inputs:", "  - type: filestream", "    paths: [/var/log/*.log]", "output.elasticsearch:", "  hosts: [\"es01:9200\"]",
             "  username: \"elastic\"", "  password: %s" % yq(r, pw)]
        return "etc/filebeat/filebeat.yml", J(L), pw, "filebeat password"
    pw = V.password(r, safe=True)
    v = "elastic:" + pw
    L = ["cloud.id: \"%s:%s\"" % (r.choice(V.APPS), b64("eu-west-1.aws.found.io$" + rs(r, HEX, 32) + "$" + rs(r, HEX, 32))), "cloud.auth: \"%s\"" % v]
    return "etc/metricbeat/metricbeat.yml", J(L), pw, "beats cloud.auth"


@pos("logstash_output")
def _(r):
    pw = V.password(r, safe=True)
    L = ["input { beats { port => 5044 } }", "output {", "  elasticsearch {", '    hosts => ["https://es01:9200"]', '    user => "logstash_writer"',
         '    password => "%s"' % pw, '    index => "logs-%%{+YYYY.MM.dd}"', "  }", "}"]
    return "etc/logstash/conf.d/30-output.conf", J(L), pw, "logstash output password"


@pos("fluentd_sink")
def _(r):
    c = r.randrange(3)
    if c == 0:
        pw = V.password(r, safe=True)
        L = ["<match app.**>", "  @type elasticsearch", "  host es.example.com", "  port 9243", "  scheme https", "  user elastic", "  password %s" % pw, "</match>"]
        return "etc/fluent/fluent.conf", J(L), pw, "fluentd es password"
    if c == 1:
        tok = V.datadog_api(r)
        L = ["<match **>", "  @type datadog", "  api_key %s" % tok, "  dd_source app", "</match>"]
        return "etc/td-agent/td-agent.conf", J(L), tok, "fluentd datadog api_key"
    pw = V.password(r, safe=True)
    L = ["[OUTPUT]", "    Name  http", "    Match *", "    Host  logs.example.com", "    Port  443", "    tls   On", "    HTTP_User  shipper", "    HTTP_Passwd %s" % pw]
    return "etc/fluent-bit/fluent-bit.conf", J(L), pw, "fluent-bit HTTP_Passwd"


@pos("vector_sink")
def _(r):
    if r.random() < 0.5:
        tok = V.datadog_api(r)
        L = ["[sources.logs]", 'type = "file"', 'include = ["/var/log/app/*.log"]', "", "[sinks.dd]", 'type = "datadog_logs"', 'inputs = ["logs"]', 'default_api_key = "%s"' % tok]
        return "etc/vector/vector.toml", J(L), tok, "vector datadog key"
    pw = V.password(r)
    L = ["sinks:", "  loki:", "    type: loki", "    inputs: [app]", "    endpoint: https://logs.example.com", "    auth:", "      strategy: basic",
         "      user: \"%d\"" % r.randrange(100000, 999999), "      password: %s" % yq(r, pw)]
    return "etc/vector/vector.yaml", J(L), pw, "vector loki basic auth"


# ======================= package managers / home dotfiles =======================
@pos("npmrc_token")
def _(r):
    if r.random() < 0.6:
        tok = r.choice([V.npm_token(r), V.gh_token(r)])
        reg = "registry.npmjs.org" if tok.startswith("npm_") else "npm.pkg.github.com"
        L = ["@%s:registry=https://%s/" % (r.choice(V.APPS), reg), "//%s/:_authToken=%s" % (reg, tok)]
    else:
        tok = b64(V.user(r) + ":" + V.password(r))
        L = ["registry=https://nexus.example.com/repository/npm-group/", "_auth=%s" % tok, "always-auth=true"]
    return r.choice([home(r) + "/.npmrc", proj(r) + "/.npmrc"]), J(L), tok, "npmrc"


@pos("pip_conf")
def _(r):
    pw = V.password(r, safe=True)
    L = ["[global]", "index-url = https://%s:%s@pypi.corp.example.com/simple/" % (V.user(r), pw), "timeout = 60"]
    return "%s/.config/pip/pip.conf" % home(r), J(L), pw, "pip index-url creds"


@pos("maven_settings")
def _(r):
    pw = V.password(r)
    pwx = pw.replace("&", "&amp;").replace("<", "&lt;")
    L = ["<settings>", "  <servers>", "    <server>", "      <id>nexus-releases</id>", "      <username>%s</username>" % V.user(r),
         "      <password>%s</password>" % pwx, "    </server>", "  </servers>", "</settings>"]
    return "%s/.m2/settings.xml" % home(r), J(L), pwx, "maven server password"


@pos("gradle_properties")
def _(r):
    pw = V.password(r)
    key = r.choice(["nexusPassword", "ossrhPassword", "signing.password", "artifactoryPassword"])
    L = ["org.gradle.jvmargs=-Xmx2g", "org.gradle.parallel=true", "%s=%s" % (key, pw)]
    return "%s/.gradle/gradle.properties" % home(r), J(L), pw, "gradle.properties"


@pos("kubeconfig_cred")
def _(r):
    if r.random() < 0.5:
        tok = r.choice([V.jwt_hs(r, {"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": "kube-system",
                                      "sub": "system:serviceaccount:kube-system:admin"}), "kubeadm." + rs(r, LOW + string.digits, 16)])
        cred = ["    token: " + tok]; needle = tok
    else:
        pem, _k = V.pem_private(r, r.choice(["ec-sec1", "rsa-pkcs1"]))
        cred = ["    client-certificate-data: " + b64(V.cert_pem(r)), "    client-key-data: " + b64(pem)]; needle = b64(pem)[:40]
    L = ["apiVersion: v1", "kind: Config", "clusters:", "- cluster:", "    server: https://%s:6443" % "10.0.0.%d" % r.randrange(2, 250), "  name: prod",
         "contexts:", "- context:", "    cluster: prod", "    user: admin", "  name: prod", "current-context: prod", "users:", "- name: admin", "  user:"] + cred
    return "%s/.kube/config" % home(r), J(L), needle, "kubeconfig credential"


@pos("git_credentials")
def _(r):
    tok = r.choice([V.gh_token(r), V.glpat(r), V.password(r, safe=True)])
    if r.random() < 0.5:
        return "%s/.git-credentials" % home(r), "https://%s:%s@%s\n" % (V.user(r), tok, r.choice(["github.com", "gitlab.com", "git.example.com"])), tok, "git-credentials"
    L = ["[core]", "\trepositoryformatversion = 0", "\tbare = false", '[remote "origin"]', "\turl = https://%s:%s@github.com/%s/%s.git" % (V.user(r), tok, r.choice(V.FIRST), r.choice(V.APPS)),
         "\tfetch = +refs/heads/*:refs/remotes/origin/*"]
    return "%s/.git/config" % proj(r), J(L), tok, "token in remote url"


@pos("aws_credentials_envrc")
def _(r):
    ak, sk = V.aws_pair(r)
    L = ["export AWS_ACCESS_KEY_ID=%s" % ak, "export AWS_SECRET_ACCESS_KEY=%s" % shq(r, sk), "export AWS_DEFAULT_REGION=%s" % fval(r, "region")]
    return "%s/%s" % (proj(r), r.choice([".envrc", "env.sh", "scripts/aws-env.sh"])), J(L), sk, "AWS secret export"


@pos("s3cfg")
def _(r):
    ak, sk = V.aws_pair(r)
    L = ["[default]", "access_key = %s" % ak, "secret_key = %s" % sk, "host_base = s3.amazonaws.com", "use_https = True"]
    return "%s/.s3cfg" % home(r), J(L), sk, "s3cmd config"


@pos("azure_storage_cs")
def _(r):
    cs = V.azure_storage_cs(r)
    d = {"IsEncrypted": False, "Values": {"AzureWebJobsStorage": cs, "FUNCTIONS_WORKER_RUNTIME": "python"}}
    return "%s/local.settings.json" % proj(r), json.dumps(d, indent=2) + "\n", cs.split("AccountKey=")[1].split(";")[0], "Azure storage key"


# ======================= databases / daemons =======================
@pos("redis_conf")
def _(r):
    pw = V.password(r, safe=True)
    key = r.choice(["requirepass", "masterauth"])
    L = ["bind 0.0.0.0", "port 6379", "protected-mode yes"] + (["# " + l for l in fill_shell(r, 40)] if r.random() < 0.3 else []) + ["%s %s" % (key, pw), "appendonly yes"]
    return "etc/redis/redis.conf", J(L), pw, key


@pos("pgbouncer_userlist_plain")
def _(r):
    pw = V.password(r, safe=True)
    L = ['"%s" "%s"' % (V.user(r), pw)]
    return "etc/pgbouncer/userlist.txt", J(L), pw, "pgbouncer plaintext"


@pos("pgpass_file")
def _(r):
    pw = V.password(r, safe=True)
    L = ["%s:5432:*:%s:%s" % (V.host(r), V.user(r), pw)]
    return "%s/.pgpass" % home(r), J(L), pw, ".pgpass"


@pos("my_cnf")
def _(r):
    pw = V.password(r)
    val = pw if "#" not in pw else '"%s"' % pw
    L = ["[client]", "user=%s" % V.user(r), "password=%s" % r.choice([val, '"%s"' % pw]), "host=%s" % V.host(r)]
    return r.choice(["%s/.my.cnf" % home(r), "etc/mysql/debian.cnf"]), J(L), pw, "my.cnf"


@pos("consul_vault_token")
def _(r):
    if r.random() < 0.5:
        tok = V.uuid4(r)
        L = ['datacenter = "dc1"', 'data_dir = "/opt/consul"', "acl {", "  enabled = true", '  default_policy = "deny"', "  tokens {", '    agent = "%s"' % tok, "  }", "}"]
        return "etc/consul.d/consul.hcl", J(L), tok, "consul ACL agent token (uuid)"
    tok = V.vault_token(r)
    L = ["export VAULT_ADDR=https://vault.example.com:8200", "export VAULT_TOKEN=%s" % tok]
    return "%s/.vault-env" % home(r), J(L), tok, "vault token"


@pos("jupyter_token")
def _(r):
    tok = rs(r, HEX, 48)
    L = ["c = get_config()", "c.ServerApp.ip = '0.0.0.0'", "c.ServerApp.open_browser = False", "c.%s.token = '%s'" % (r.choice(["ServerApp", "NotebookApp"]), tok)]
    return "%s/.jupyter/jupyter_server_config.py" % home(r), J(L), tok, "jupyter token"


@pos("wifi_psk")
def _(r):
    pw = V.human_pw(r)
    if r.random() < 0.5:
        L = ["ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev", "update_config=1", "country=DE", "", "network={", '    ssid="%s"' % r.choice(["HomeNet", "Office-5G", "FRITZ!Box 7590"]),
             '    psk="%s"' % pw, "    key_mgmt=WPA-PSK", "}"]
        return "etc/wpa_supplicant/wpa_supplicant.conf", J(L), pw, "wifi psk"
    L = ["[connection]", "id=Office", "uuid=%s" % V.uuid4(r), "type=wifi", "", "[wifi]", "ssid=Office", "", "[wifi-security]", "key-mgmt=wpa-psk", "psk=%s" % pw]
    return "etc/NetworkManager/system-connections/Office.nmconnection", J(L), pw, "NM psk"


@pos("openvpn_auth_userpass")
def _(r):
    pw = V.password(r)
    L = [V.user(r) + "@example.com", pw]
    return "etc/openvpn/client/%s" % r.choice(["auth.txt", "credentials.txt", "login.conf"]), J(L), pw, "openvpn auth-user-pass file (user line + password line)"


@pos("token_literal_in_code_config")
def _(r):
    tok, kind = V.any_token(r)
    c = r.randrange(3)
    if c == 0:
        L = ["[default]", "endpoint = https://api.example.com", "token = %s" % tok]
        f = "%s/.config/%s/config.ini" % (home(r), r.choice(V.APPS))
    elif c == 1:
        L = ["{", '  "apiUrl": "https://api.example.com",', '  "apiKey": "%s",' % tok, '  "timeoutMs": 5000', "}"]
        f = "%s/config/production.json" % proj(r)
    else:
        L = ["api:", "  base_url: https://api.example.com", "  key: %s" % yq(r, tok)]
        f = "%s/config/settings.yaml" % proj(r)
    return f, J(L), tok, "%s token in config" % kind


@pos("slack_webhook_config")
def _(r):
    v = V.slack_webhook(r)
    L = ["notifications:", "  slack:", "    webhook_url: %s" % yq(r, v), "    channel: '#deploys'"]
    return "%s/config/notify.yaml" % proj(r), J(L), v, "slack webhook url"


@pos("jwt_service_key_env")
def _(r):
    v = V.jwt_hs(r)
    L = ["NEXT_PUBLIC_SUPABASE_URL=https://%s.supabase.co" % rs(r, LOW, 20), "SUPABASE_SERVICE_ROLE_KEY=%s" % v]
    return "%s/.env.local" % proj(r), J(L), v, "supabase service role JWT"

"""Look-alike files that hold NO credential. Each function(rng) -> list of (relpath, text, context)."""
import json, hashlib
from common import *

NEGS = []


def neg(fn):
    NEGS.append((fn.__name__[2:], fn))
    return fn


def sha(rng, n=32):
    return hashlib.sha256(rbytes(rng, 16)).hexdigest()[:n * 2] if n <= 32 else None


def sha1(rng):
    return hashlib.sha1(rbytes(rng, 16)).hexdigest()


def sri(rng, alg='sha512', n=64):
    return f'{alg}-{b64(rbytes(rng, n))}'


# ---------------------------------------------------------------- public identifiers
@neg
def n_stripe_publishable(rng):
    pk = 'pk_live_51' + rs(rng, 97)
    return [(f'code/webshop/.env.production', f'NEXT_PUBLIC_SITE_URL=https://shop.example.com\nNEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY={pk}\n', 'dotenv-public-key'),
            (f'code/webshop/src/lib/stripe.js', f"import {{ loadStripe }} from '@stripe/stripe-js';\n\nexport const stripePromise = loadStripe('pk_live_51{rs(rng, 97)}');\n", 'js-public-key')]


@neg
def n_mapbox_public(rng):
    pk = 'pk.' + b64u(json.dumps({'u': user(rng), 'a': 'cl' + rs(rng, 23, LOALNUM)}, separators=(',', ':'))) + '.' + rs(rng, 22, B64U)
    return [(f'code/status-page/src/map.js', f"import mapboxgl from 'mapbox-gl';\n\nmapboxgl.accessToken = '{pk}';\nconst map = new mapboxgl.Map({{ container: 'map', style: 'mapbox://styles/mapbox/streets-v12' }});\n", 'js-public-token')]


@neg
def n_algolia_app_id(rng):
    return [('code/blog/.env', f'ALGOLIA_APP_ID={rs(rng, 10, UPALNUM)}\nALGOLIA_INDEX_NAME=prod_posts\nALGOLIA_SEARCH_PLACEHOLDER="Search posts..."\n', 'dotenv-public-id')]


@neg
def n_posthog_project_key(rng):
    return [('code/webshop/src/analytics.ts', f"import posthog from 'posthog-js';\n\nposthog.init('phc_{rs(rng, 43)}', {{ api_host: 'https://eu.i.posthog.com' }});\n", 'ts-public-key')]


@neg
def n_twilio_sid_only(rng):
    return [('notes/sms-provider.md', f'# SMS\n\nAccount SID: AC{rs(rng, 32, HEX)}\nMessaging service: MG{rs(rng, 32, HEX)}\nSender: +1 555 010 {rng.randint(1000, 9999)}\n\nAuth token is in 1Password ("Twilio prod").\n', 'notes-public-ids')]


@neg
def n_stripe_object_ids(rng):
    fx = {'id': 'evt_1' + rs(rng, 23), 'object': 'event', 'type': 'payment_intent.succeeded', 'account': 'acct_1' + rs(rng, 15),
          'data': {'object': {'id': 'pi_3' + rs(rng, 23), 'customer': 'cus_' + rs(rng, 14), 'amount': 4200, 'currency': 'eur',
                              'latest_charge': 'ch_3' + rs(rng, 23), 'payment_method': 'pm_1' + rs(rng, 23),
                              'invoice': 'in_1' + rs(rng, 23)}}, 'request': {'id': 'req_' + rs(rng, 14), 'idempotency_key': ruuid(rng)}}
    return [('code/billing-api/tests/fixtures/payment_intent_succeeded.json', json.dumps(fx, indent=2) + '\n', 'json-fixture-ids')]


@neg
def n_slack_ids(rng):
    return [('code/notifier/config/channels.yml', f'channels:\n  alerts: C0{rs(rng, 9, UPALNUM)}\n  deploys: C0{rs(rng, 9, UPALNUM)}\nteam_id: T0{rs(rng, 8, UPALNUM)}\noncall_user: U0{rs(rng, 9, UPALNUM)}\nbot_token_env: SLACK_BOT_TOKEN\n', 'yaml-public-ids')]


@neg
def n_aws_ids(rng):
    acct = rs(rng, 12, DIG)
    return [('.aws/config', f'[default]\nregion = eu-west-1\noutput = json\n\n[profile prod]\nsso_start_url = https://{org(rng)}.awsapps.com/start\nsso_region = eu-west-1\nsso_account_id = {acct}\nsso_role_name = AdministratorAccess\nregion = eu-west-1\n\n[profile ci]\nrole_arn = arn:aws:iam::{acct}:role/ci-deployer\nsource_profile = default\n', 'aws-config'),
            ('.aws/credentials', '[default]\ncredential_process = /usr/local/bin/aws-vault exec default --json\n', 'aws-credentials-process')]


@neg
def n_gcloud_config(rng):
    return [('.config/gcloud/configurations/config_default', f'[core]\naccount = {email(rng)}\nproject = {proj(rng)}-{rng.randint(100000, 999999)}\ndisable_usage_reporting = True\n\n[compute]\nzone = europe-west1-b\nregion = europe-west1\n', 'gcloud-config')]


@neg
def n_age_recipient(rng):
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives import serialization as s
    pubs = [bech32('age', X25519PrivateKey.from_private_bytes(rbytes(rng, 32)).public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)) for _ in range(2)]
    return [('code/infra/.sops.yaml', f'creation_rules:\n  - path_regex: secrets/prod/.*\\.yaml$\n    age: >-\n      {pubs[0]},\n      {pubs[1]}\n', 'sops-age-recipients')]


@neg
def n_crypto_addresses(rng):
    return [('Documents/donations.md', f'Donations welcome:\n\n- ETH: 0x{rs(rng, 40, HEX)}\n- BTC: bc1q{rs(rng, 38, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")}\n', 'public-addresses')]


@neg
def n_gpg_ids(rng):
    return [('.gitconfig', f'[user]\n\tname = {user(rng).title()} Example\n\temail = {email(rng)}\n\tsigningkey = {rs(rng, 16, HEXU)}\n[commit]\n\tgpgsign = true\n[credential]\n\thelper = osxkeychain\n[init]\n\tdefaultBranch = main\n[pull]\n\trebase = true\n', 'gitconfig')]


# ---------------------------------------------------------------- placeholders & templates
PLACEHOLDER_SETS = [
    ('your_{x}_here', 'snake-your-here'), ('<your-{x}>', 'angle-your'), ('changeme', 'changeme'), ('REPLACE_ME', 'replace-me'),
    ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'x-run'), ('', 'empty'), ('${{{X}}}', 'dollar-brace'), ('TODO', 'todo'), ('<redacted>', 'redacted'),
]


@neg
def n_env_example(rng):
    keys = ['OPENAI_API_KEY', 'STRIPE_SECRET_KEY', 'GITHUB_TOKEN', 'SLACK_BOT_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'SENDGRID_API_KEY',
            'DATABASE_PASSWORD', 'ANTHROPIC_API_KEY', 'TWILIO_AUTH_TOKEN', 'HF_TOKEN']
    out = []
    for i, (tpl, name) in enumerate(PLACEHOLDER_SETS):
        ks = rng.sample(keys, 4)
        lines = ['# copy to .env and fill in'] + [f'{k}={tpl.format(x=k.lower().replace("_", "-"), X=k)}' for k in ks]
        out.append((f'code/{PROJECTS[i]}/.env.example', '\n'.join(lines) + '\n', f'env-template-{name}'))
    return out


@neg
def n_doc_placeholders(rng):
    docs = [
        ('ghp_' + 'x' * 36, 'GITHUB_TOKEN'), ('sk_test_' + 'X' * 24, 'STRIPE_SECRET_KEY'), ('sk-' + '.' * 3, 'OPENAI_API_KEY'),
        ('xoxb-your-bot-token', 'SLACK_BOT_TOKEN'), ('glpat-XXXXXXXXXXXXXXXXXXXX', 'GITLAB_TOKEN'), ('AKIAXXXXXXXXXXXXXXXX', 'AWS_ACCESS_KEY_ID'),
        ('sk-ant-api03-...', 'ANTHROPIC_API_KEY'), ('hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'HF_TOKEN'), ('npm_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', 'NPM_TOKEN'),
        ('SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'SENDGRID_API_KEY'), ('dop_v1_' + '0' * 64, 'DIGITALOCEAN_TOKEN'),
        ('<YOUR_API_KEY>', 'MAILGUN_API_KEY'), ('sk_live_...', 'STRIPE_API_KEY'), ('xapp-1-...', 'SLACK_APP_TOKEN'),
    ]
    out = []
    for i in range(0, len(docs), 2):
        chunk = docs[i:i + 2]
        body = '\n'.join(f'export {k}="{v}"' for v, k in chunk)
        txt = f'# {proj(rng)}\n\n## Configuration\n\nSet the following before running:\n\n```bash\n{body}\n```\n\nSee CONTRIBUTING.md for details.\n'
        out.append((f'code/{PROJECTS[i % len(PROJECTS)]}/README.md', txt, 'readme-placeholder'))
    return out


@neg
def n_aws_doc_example(rng):
    return [('code/infra/docs/aws-setup.md', '## Local setup\n\n```ini\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n```\n\nThese are the example values from the AWS docs; use `aws configure sso` instead.\n', 'aws-doc-example')]


@neg
def n_jwt_io_example(rng):
    return [('code/billing-api/docs/auth.md', '# Auth\n\nClients send a JWT in the Authorization header, e.g. the jwt.io sample:\n\n    Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n\nReplace it with a token from `/auth/login`.\n', 'jwt-io-sample')]


@neg
def n_secret_refs(rng):
    return [
        ('code/deploy-tools/.github/workflows/release.yml', 'name: release\non: { push: { tags: ["v*"] } }\njobs:\n  publish:\n    runs-on: ubuntu-latest\n    permissions:\n      contents: write\n      id-token: write\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-node@v4\n        with: { node-version: 20, registry-url: "https://registry.npmjs.org" }\n      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n', 'gha-secret-refs'),
        ('code/infra/helm/values-prod.yaml', 'api:\n  replicas: 3\n  existingSecret: api-credentials\n  env:\n    - name: STRIPE_SECRET_KEY\n      valueFrom:\n        secretKeyRef: { name: api-credentials, key: stripe }\n    - name: DATABASE_PASSWORD\n      valueFrom:\n        secretKeyRef: { name: api-credentials, key: db-password }\npostgresql:\n  auth:\n    password: ""\n    existingSecret: pg-auth\n', 'helm-secret-refs'),
        ('code/chatbot/.env.tpl', 'OPENAI_API_KEY=op://Engineering/OpenAI/credential\nSLACK_BOT_TOKEN=op://Engineering/Slack bot/token\nDATABASE_URL=op://Engineering/Postgres prod/url\n', '1password-refs'),
        ('code/infra/terraform/variables.tf', 'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\nvariable "cloudflare_api_token" {\n  description = "Token with Zone:Edit"\n  type        = string\n  sensitive   = true\n}\n', 'terraform-variables'),
        ('code/infra/ansible/group_vars/prod.yml', 'ansible_user: deploy\nansible_become_password: "{{ vault_become_pass }}"\npostgres_password: "{{ vault_postgres_password }}"\napp_secret_key: "{{ lookup(\'env\', \'APP_SECRET_KEY\') }}"\n', 'ansible-vars'),
        ('code/billing-api/src/main/resources/application.yml', 'spring:\n  datasource:\n    url: jdbc:postgresql://db:5432/billing\n    username: billing\n    password: ${DB_PASSWORD}\nstripe:\n  secret-key: ${STRIPE_SECRET_KEY:}\n  webhook-secret: ${STRIPE_WEBHOOK_SECRET:}\n', 'spring-placeholders'),
        ('code/data-pipeline/docker-compose.yml', 'services:\n  worker:\n    image: ghcr.io/acme/worker:2.3.1\n    env_file: .env\n    environment:\n      AWS_ACCESS_KEY_ID: ${AWS_ACCESS_KEY_ID}\n      AWS_SECRET_ACCESS_KEY: ${AWS_SECRET_ACCESS_KEY}\n      PGPASSWORD: ${PGPASSWORD:?set PGPASSWORD}\n', 'compose-interpolation'),
        ('code/infra/k8s/external-secret.yaml', 'apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: api\nspec:\n  secretStoreRef: { name: vault, kind: ClusterSecretStore }\n  target: { name: api-credentials }\n  data:\n    - secretKey: stripe\n      remoteRef: { key: secret/data/prod/api, property: stripe_secret_key }\n', 'external-secret'),
        ('.npmrc', '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nsave-exact=true\n', 'npmrc-env-ref'),
        ('.docker/config.json', json.dumps({'auths': {'https://index.docker.io/v1/': {}, 'ghcr.io': {}}, 'credsStore': 'desktop', 'currentContext': 'desktop-linux'}, indent='\t') + '\n', 'docker-credsstore'),
    ]


@neg
def n_redacted(rng):
    return [
        ('notes/incident-2024-03.md', f'# Incident: leaked token\n\nThe token `ghp_{"*" * 36}` was pushed in commit {sha1(rng)[:10]} and revoked within 5 minutes.\nAlso rotated: `sk-proj-...{rs(rng, 4)}` (OpenAI), `xoxb-****-****-****` (Slack), AKIA**************** (AWS).\n', 'redacted-incident'),
        ('code/deploy-tools/logs/deploy.log', f'2024-05-02T10:11:12Z INFO using token ghp_****{rs(rng, 4)}\n2024-05-02T10:11:13Z INFO stripe key sk_live_••••••••{rs(rng, 4)}\n2024-05-02T10:11:14Z INFO OPENAI_API_KEY=[REDACTED]\n2024-05-02T10:11:15Z INFO aws key id AKIA************{rs(rng, 4, B32)}\n', 'redacted-log'),
        ('Documents/vendor-dashboard.txt', f'Anthropic console shows: sk-ant-api03-{rs(rng, 4)}...{rs(rng, 4)}AA (created 2024-02-01)\nStripe dashboard: rk_live_...{rs(rng, 4)}\n', 'truncated-display'),
    ]


@neg
def n_code_reads_env(rng):
    return [
        ('code/chatbot/app/llm.py', 'import os\nfrom openai import OpenAI\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\nanthropic_key = os.getenv("ANTHROPIC_API_KEY")\nif not anthropic_key:\n    raise SystemExit("ANTHROPIC_API_KEY missing")\n', 'python-env-read'),
        ('code/webshop/server/stripe.js', "const Stripe = require('stripe');\nconst stripe = Stripe(process.env.STRIPE_SECRET_KEY);\nconst endpointSecret = process.env.STRIPE_WEBHOOK_SECRET;\nmodule.exports = { stripe, endpointSecret };\n", 'js-env-read'),
        ('code/infra/cmd/sync/main.go', 'package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\ttoken := os.Getenv("GITHUB_TOKEN")\n\tif token == "" {\n\t\tlog.Fatal("GITHUB_TOKEN not set")\n\t}\n\tsecret := os.Getenv("AWS_SECRET_ACCESS_KEY")\n\t_ = secret\n}\n', 'go-env-read'),
        ('code/notifier/lib/slack.rb', "require 'slack-ruby-client'\n\nSlack.configure do |config|\n  config.token = ENV.fetch('SLACK_BOT_TOKEN')\nend\n", 'ruby-env-read'),
        ('code/billing-api/src/main/java/com/acme/Keys.java', 'package com.acme;\n\npublic final class Keys {\n    public static String stripeKey() {\n        return System.getenv("STRIPE_SECRET_KEY");\n    }\n    public static String password() { return System.getProperty("db.password", ""); }\n}\n', 'java-env-read'),
        ('code/deploy-tools/deploy.sh', '#!/usr/bin/env bash\nset -euo pipefail\n: "${GITHUB_TOKEN:?GITHUB_TOKEN must be set}"\n: "${VAULT_TOKEN:=$(vault print token)}"\nexport NPM_TOKEN="$(op read op://CI/npm/token)"\ncurl -fsS -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com/user >/dev/null\necho "$DOCKER_PASSWORD" | docker login -u "$DOCKER_USER" --password-stdin\n', 'shell-env-read'),
        ('code/ml-experiments/src/main.rs', 'use std::env;\n\nfn main() {\n    let key = env::var("HF_TOKEN").expect("HF_TOKEN");\n    let pw = env::var("DB_PASSWORD").unwrap_or_default();\n    println!("{} {}", key.len(), pw.len());\n}\n', 'rust-env-read'),
        ('code/analytics/settings.py', 'import os\n\nSECRET_KEY = os.environ["DJANGO_SECRET_KEY"]\nDATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "analytics", "PASSWORD": os.environ.get("DB_PASSWORD", "")}}\nAUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}}]\nPASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]\n', 'django-settings'),
    ]


@neg
def n_token_like_identifiers(rng):
    return [
        ('code/ml-experiments/download.py', 'from huggingface_hub import hf_hub_download, snapshot_download\n\npath = hf_hub_download(repo_id="bert-base-uncased", filename="config.json")\nsk_learn_version = "1.4.2"  # scikit-learn\n', 'python-prefix-identifiers'),
        ('.config/npm-env.sh', 'export npm_config_cache="$HOME/.cache/npm"\nexport npm_config_prefix="$HOME/.local"\nexport npm_config_update_notifier=false\n', 'npm-config-env'),
        ('code/billing-api/billing/modes.py', 'sk_live_mode = False\nrk_live_enabled = True\nwhsec_header = "Stripe-Signature"\nghp_prefix_len = len("ghp_")\nPREFIXES = ("sk_live_", "rk_live_", "ghp_", "gho_", "xoxb-", "AKIA", "glpat-")\n', 'prefix-constants'),
        ('code/infra/.gitleaks.toml', '[[rules]]\nid = "github-pat"\nregex = \'\'\'ghp_[0-9a-zA-Z]{36}\'\'\'\n\n[[rules]]\nid = "aws-access-key"\nregex = \'\'\'(A3T[A-Z0-9]|AKIA|ASIA)[A-Z0-9]{16}\'\'\'\n\n[[rules]]\nid = "slack"\nregex = \'\'\'xox[baprs]-([0-9a-zA-Z]{10,48})\'\'\'\n', 'scanner-regex-config'),
        ('notes/token-formats.md', '# Token formats cheat sheet\n\n- GitHub classic PATs start with `ghp_` and have 36 chars after the prefix.\n- GitLab PATs start with `glpat-`.\n- Slack bot tokens start with `xoxb-`, user tokens with `xoxp-`.\n- Stripe secret keys start with `sk_live_`, publishable ones with `pk_live_`.\n- AWS key ids start with `AKIA` (long-term) or `ASIA` (temporary).\n', 'prose-prefixes'),
        ('code/chatbot/tests/test_auth.py', 'import pytest\n\nFAKE_TOKEN = "test-token"\nDUMMY_KEY = "dummy"\n\n\ndef test_rejects_short_token(client):\n    r = client.get("/", headers={"Authorization": "Bearer abc123"})\n    assert r.status_code == 401\n\n\ndef test_rejects_bad_prefix(client):\n    assert not client.validate("ghp_short")\n    assert not client.validate("xoxb-123")\n    assert not client.validate("sk-invalid")\n', 'test-fake-tokens'),
        ('code/webshop/src/i18n/en.json', json.dumps({'password': 'Password', 'password_hint': 'At least 12 characters', 'api_key_label': 'API key', 'token_expired': 'Your session token expired, please sign in again', 'secret_question': 'What was your first pet?'}, indent=2) + '\n', 'i18n-strings'),
        ('code/notifier/src/xoxo.js', "// greeting card templates\nexport const SIGNOFFS = ['xoxo-love', 'xoxo-grandma', 'xoxb-typo-is-intentional'];\nexport const SKUS = ['sk-1001', 'sk-1002-large'];\n", 'js-prefix-words'),
    ]


@neg
def n_wrong_length(rng):
    return [
        ('code/deploy-tools/test/fixtures/invalid_tokens.txt', f'ghp_{rs(rng, 12)}\nglpat-{rs(rng, 6)}\nxoxb-{rs(rng, 6, DIG)}\nAKIA{rs(rng, 8, B32)}\nsk_live_{rs(rng, 5)}\nnpm_{rs(rng, 8)}\n', 'too-short-prefixed'),
    ]


# ---------------------------------------------------------------- hashes, digests, ids
@neg
def n_lockfiles(rng):
    pkgs = ['lodash', 'express', 'react', 'axios', 'debug', 'ms', 'chalk', 'semver', 'uuid', 'zod']
    pl = {'name': 'webshop', 'version': '1.0.0', 'lockfileVersion': 3, 'requires': True, 'packages': {
        '': {'name': 'webshop', 'version': '1.0.0', 'dependencies': {p: f'^{rng.randint(1, 9)}.0.0' for p in pkgs[:4]}}}}
    for p in pkgs:
        v = f'{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}'
        pl['packages'][f'node_modules/{p}'] = {'version': v, 'resolved': f'https://registry.npmjs.org/{p}/-/{p}-{v}.tgz', 'integrity': sri(rng), 'license': 'MIT'}
    yl = '# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n' + ''.join(
        f'{p}@^1.0.0:\n  version "1.{i}.0"\n  resolved "https://registry.yarnpkg.com/{p}/-/{p}-1.{i}.0.tgz#{sha1(rng)}"\n  integrity {sri(rng)}\n\n' for i, p in enumerate(pkgs))
    gosum = ''.join(f'github.com/{o}/{p} v1.{rng.randint(0, 9)}.{rng.randint(0, 9)} h1:{b64(rbytes(rng, 32))}\ngithub.com/{o}/{p} v1.{rng.randint(0, 9)}.0/go.mod h1:{b64(rbytes(rng, 32))}\n'
                    for o, p in [('spf13', 'cobra'), ('stretchr', 'testify'), ('google', 'uuid'), ('rs', 'zerolog'), ('go-chi', 'chi')])
    cargo = '# This file is automatically @generated by Cargo.\nversion = 3\n\n' + ''.join(
        f'[[package]]\nname = "{p}"\nversion = "1.{i}.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{hashlib.sha256(rbytes(rng, 8)).hexdigest()}"\n\n' for i, p in enumerate(['serde', 'tokio', 'anyhow', 'clap']))
    req = ''.join(f'{p}==2.{i}.1 \\\n    --hash=sha256:{hashlib.sha256(rbytes(rng, 8)).hexdigest()} \\\n    --hash=sha256:{hashlib.sha256(rbytes(rng, 8)).hexdigest()}\n' for i, p in enumerate(['requests', 'urllib3', 'certifi']))
    poetry = ''.join(f'[[package]]\nname = "{p}"\nversion = "3.{i}.0"\nfiles = [\n    {{file = "{p}-3.{i}.0-py3-none-any.whl", hash = "sha256:{hashlib.sha256(rbytes(rng, 8)).hexdigest()}"}},\n]\n\n' for i, p in enumerate(['httpx', 'pydantic']))
    tfl = '# This file is maintained automatically by "terraform init".\n\nprovider "registry.terraform.io/hashicorp/aws" {\n  version     = "5.31.0"\n  constraints = "~> 5.0"\n  hashes = [\n' + ''.join(
        f'    "h1:{b64(rbytes(rng, 32))}",\n' for _ in range(2)) + ''.join(f'    "zh:{hashlib.sha256(rbytes(rng, 8)).hexdigest()}",\n' for _ in range(4)) + '  ]\n}\n'
    flake = json.dumps({'nodes': {'nixpkgs': {'locked': {'lastModified': ts(rng), 'narHash': f'sha256-{b64(rbytes(rng, 32))}', 'owner': 'NixOS', 'repo': 'nixpkgs', 'rev': sha1(rng), 'type': 'github'}}}, 'root': 'root', 'version': 7}, indent=2) + '\n'
    composer = json.dumps({'packages': [{'name': 'monolog/monolog', 'version': '3.5.0', 'dist': {'type': 'zip', 'url': 'https://api.github.com/repos/Seldaek/monolog/zipball/' + sha1(rng), 'reference': sha1(rng), 'shasum': ''}}], 'content-hash': rs(rng, 32, HEX)}, indent=4) + '\n'
    return [('code/webshop/package-lock.json', json.dumps(pl, indent=2) + '\n', 'package-lock'), ('code/webshop/yarn.lock', yl, 'yarn-lock'),
            ('code/infra/go.sum', gosum, 'go-sum'), ('code/ml-experiments/Cargo.lock', cargo, 'cargo-lock'),
            ('code/scraper/requirements.txt', req, 'pip-hashes'), ('code/analytics/poetry.lock', poetry, 'poetry-lock'),
            ('code/infra/terraform/.terraform.lock.hcl', tfl, 'terraform-lock'), ('code/infra/flake.lock', flake, 'flake-lock'),
            ('code/crm-sync/composer.lock', composer, 'composer-lock')]


@neg
def n_git_internals(rng):
    shas = [sha1(rng) for _ in range(8)]
    packed = '# pack-refs with: peeled fully-peeled sorted\n' + ''.join(f'{s} refs/remotes/origin/{b}\n' for s, b in zip(shas, ['main', 'develop', 'feature/login', 'release/1.4']))
    log = ''.join(f'commit {s}\nAuthor: {user(rng).title()} <{email(rng)}>\nDate:   Mon Mar {i + 1} 10:0{i}:00 2024 +0100\n\n    {m}\n\n'
                  for i, (s, m) in enumerate(zip(shas, ['fix: handle empty cart', 'chore: bump deps', 'feat: add webhook retry', 'docs: update README'])))
    return [('code/webshop/.git/packed-refs', packed, 'git-packed-refs'), ('code/webshop/.git/ORIG_HEAD', shas[5] + '\n', 'git-orig-head'),
            ('code/webshop/.git/FETCH_HEAD', f"{shas[6]}\t\tbranch 'main' of github.com:acme/webshop\n", 'git-fetch-head'),
            ('Documents/changelog-draft.txt', log, 'git-log-output')]


@neg
def n_checksums(rng):
    files = ['app-1.4.2-linux-amd64.tar.gz', 'app-1.4.2-darwin-arm64.tar.gz', 'app-1.4.2-windows-amd64.zip']
    s256 = ''.join(f'{hashlib.sha256(rbytes(rng, 8)).hexdigest()}  {f}\n' for f in files)
    md5 = ''.join(f'{hashlib.md5(rbytes(rng, 8)).hexdigest()}  {f}\n' for f in files)
    sha512 = ''.join(f'{hashlib.sha512(rbytes(rng, 8)).hexdigest()}  {f}\n' for f in files)
    return [('Downloads/SHA256SUMS', s256, 'sha256sums'), ('Downloads/MD5SUMS', md5, 'md5sums'), ('Downloads/app-1.4.2.sha512', sha512, 'sha512sums'),
            ('notes/hashes.txt', 'sha256 of empty string: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nmd5 of empty: d41d8cd98f00b204e9800998ecf8427e\n', 'known-hashes')]


@neg
def n_docker_digests(rng):
    d = [hashlib.sha256(rbytes(rng, 8)).hexdigest() for _ in range(3)]
    return [('code/infra/k8s/deployment.yaml', f'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  uid: {ruuid(rng)}\n  resourceVersion: "{rng.randint(10**6, 10**7)}"\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api@sha256:{d[0]}\n        - name: sidecar\n          image: envoyproxy/envoy:v1.29.1@sha256:{d[1]}\n', 'k8s-digests'),
            ('code/infra/Dockerfile', f'FROM golang:1.22@sha256:{d[2]} AS build\nWORKDIR /src\nCOPY . .\nRUN go build -o /out/app ./cmd/app\n\nFROM gcr.io/distroless/static\nCOPY --from=build /out/app /app\nENTRYPOINT ["/app"]\n', 'dockerfile-digest')]


@neg
def n_uuids(rng):
    tf = {'version': 4, 'terraform_version': '1.7.3', 'serial': rng.randint(1, 300), 'lineage': ruuid(rng), 'outputs': {},
          'resources': [{'mode': 'managed', 'type': 'aws_s3_bucket', 'name': 'logs', 'instances': [{'attributes': {'id': f'{org(rng)}-logs', 'arn': f'arn:aws:s3:::{org(rng)}-logs', 'hosted_zone_id': 'Z1BKCTXD74EZPE'}}]}]}
    ws = '<?xml version="1.0" encoding="UTF-8"?>\n<project version="4">\n  <component name="ChangeListManager">\n' + ''.join(
        f'    <list default="true" id="{ruuid(rng)}" name="Changes" comment="" />\n' for _ in range(2)) + f'  </component>\n  <component name="ProjectId" id="{rs(rng, 27, ALNUM)}" />\n</project>\n'
    sln = f'Microsoft Visual Studio Solution File, Format Version 12.00\nProject("{{{ruuid(rng, True)}}}") = "Acme.Api", "src\\Acme.Api\\Acme.Api.csproj", "{{{ruuid(rng, True)}}}"\nEndProject\n'
    vs = json.dumps({'telemetry.machineId': hashlib.sha256(rbytes(rng, 8)).hexdigest(), 'telemetry.devDeviceId': ruuid(rng), 'telemetry.sqmId': '{' + ruuid(rng, True) + '}'}, indent=4) + '\n'
    return [('code/infra/terraform/terraform.tfstate.backup', json.dumps(tf, indent=2) + '\n', 'tfstate-no-secrets'),
            ('code/billing-api/.idea/workspace.xml', ws, 'idea-workspace'), ('code/crm-sync/Acme.sln', sln, 'vs-solution'),
            ('.config/Code/User/globalStorage/storage.json', vs, 'vscode-storage'),
            ('.local/share/machine-id-backup', rs(rng, 32, HEX) + '\n', 'machine-id')]


@neg
def n_ids_in_data(rng):
    rows = [{'id': rs(rng, 21, B64U), 'mongo_id': rs(rng, 24, HEX), 'ulid': '01H' + rs(rng, 23, '0123456789ABCDEFGHJKMNPQRSTVWXYZ'),
             'request_id': ruuid(rng), 'sku': f'SKU-{rng.randint(1000, 9999)}'} for _ in range(5)]
    csv = 'order_id,customer_ref,tracking_number,amount\n' + ''.join(f'{ruuid(rng)},cus_{rs(rng, 14)},1Z{rs(rng, 16, UPALNUM)},{rng.randint(5, 500)}.00\n' for _ in range(8))
    return [('code/analytics/tests/fixtures/events.json', json.dumps(rows, indent=2) + '\n', 'nanoid-ulid-fixtures'),
            ('Documents/orders-export.csv', csv, 'csv-ids')]


# ---------------------------------------------------------------- base64 of ordinary data, public key material
@neg
def n_base64_text(rng):
    msgs = ['{"theme":"dark","sidebar":true,"fontSize":14}', 'hello world, this is just a config blob for the dashboard widget',
            'server {\n  listen 80;\n  server_name example.com;\n}\n']
    cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboard\nbinaryData:\n' + ''.join(f'  blob{i}: {b64(m)}\n' for i, m in enumerate(msgs))
    hist = 'ls\necho aGVsbG8gd29ybGQK | base64 -d\ngit status\nbase64 -d <<< eyJuYW1lIjoid2lkZ2V0In0=\n'
    sec = f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-conn\ntype: Opaque\ndata:\n  host: {b64("db.internal")}\n  port: {b64("5432")}\n  username: {b64("app")}\n  database: {b64("billing")}\n'
    return [('code/infra/k8s/configmap.yaml', cm, 'configmap-base64'), ('.bash_history', hist, 'history-base64-decode'),
            ('code/infra/k8s/db-conn.yaml', sec, 'k8s-secret-no-credential')]


@neg
def n_data_uri(rng):
    png = b64(b'\x89PNG\r\n\x1a\n' + rbytes(rng, 300))
    woff = b64(b'wOF2' + rbytes(rng, 400))
    return [('code/blog/src/styles/icons.css', f'.icon-logo {{\n  background-image: url("data:image/png;base64,{png}");\n}}\n@font-face {{\n  font-family: "Inter";\n  src: url(data:font/woff2;base64,{woff}) format("woff2");\n}}\n', 'css-data-uri')]


@neg
def n_sourcemap(rng):
    segs = ','.join(rs(rng, rng.randint(4, 8), B64) for _ in range(120))
    m = {'version': 3, 'file': 'main.3f2a1b9c.js', 'sources': ['../src/index.ts', '../src/app.ts'], 'names': ['render', 'state'],
         'mappings': ';'.join(segs[i:i + 120] for i in range(0, len(segs), 120))}
    return [('code/webshop/dist/main.3f2a1b9c.js.map', json.dumps(m) + '\n', 'sourcemap')]


@neg
def n_sri_csp(rng):
    return [('code/blog/public/index.html', f'<!doctype html>\n<html>\n<head>\n<meta http-equiv="Content-Security-Policy" content="script-src \'self\' \'sha256-{b64(rbytes(rng, 32))}\'">\n<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.2/dist/js/bootstrap.bundle.min.js" integrity="{sri(rng, "sha384", 48)}" crossorigin="anonymous"></script>\n<link rel="stylesheet" href="/assets/app.{rs(rng, 8, HEX)}.css">\n</head>\n<body></body>\n</html>\n', 'html-sri')]


@neg
def n_public_keys(rng):
    k1, k2 = ed_key(rng), ed_key(rng)
    ak = f'{ssh_pub_line(k1, user(rng) + "@laptop")}\n{ssh_pub_line(k2, "deploy@ci")}\n'
    kh = ''.join(f'|1|{b64(rbytes(rng, 20))}|{b64(rbytes(rng, 20))} ssh-ed25519 {b64(ssh_pub_blob(ed_key(rng))[0])}\n' for _ in range(3))
    kh += f'github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n'
    cert = self_signed_cert(rng, f'{org(rng)}-internal-ca')
    return [('.ssh/authorized_keys', ak, 'authorized-keys'), ('.ssh/known_hosts', kh, 'known-hosts'),
            ('.ssh/id_ed25519.pub', ssh_pub_line(k1, user(rng) + '@laptop') + '\n', 'ssh-public-key'),
            ('.ssh/config', 'Host github.com\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n\nHost bastion\n  HostName 203.0.113.10\n  User deploy\n  ForwardAgent no\n', 'ssh-config'),
            ('code/infra/certs/internal-ca.crt', cert, 'ca-certificate'),
            ('notes/ssh-fingerprints.md', f'bastion: SHA256:{b64(rbytes(rng, 32)).rstrip("=")} (ED25519)\nbuild01: SHA256:{b64(rbytes(rng, 32)).rstrip("=")} (ED25519)\n', 'ssh-fingerprints')]


@neg
def n_public_pem(rng):
    from cryptography.hazmat.primitives import serialization as s
    pub = ec_key(rng).public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode()
    return [('code/billing-api/config/jwt-public.pem', pub, 'public-key-pem')]


@neg
def n_kubeconfig_exec(rng):
    ca = b64(self_signed_cert(rng, 'kubernetes'))
    acct = rs(rng, 12, DIG)
    kc = (f'apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: https://{rs(rng, 32, HEXU)}.gr7.eu-west-1.eks.amazonaws.com\n'
          f'  name: arn:aws:eks:eu-west-1:{acct}:cluster/prod\ncontexts:\n- context:\n    cluster: arn:aws:eks:eu-west-1:{acct}:cluster/prod\n'
          f'    user: arn:aws:eks:eu-west-1:{acct}:cluster/prod\n  name: prod\ncurrent-context: prod\nkind: Config\nusers:\n- name: arn:aws:eks:eu-west-1:{acct}:cluster/prod\n'
          f'  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args: [--region, eu-west-1, eks, get-token, --cluster-name, prod]\n')
    return [('.kube/config', kc, 'kubeconfig-exec')]


# ---------------------------------------------------------------- encrypted-at-rest blobs meant to be committed
@neg
def n_sops_file(rng):
    def enc(n):
        return f'ENC[AES256_GCM,data:{b64(rbytes(rng, n))},iv:{b64(rbytes(rng, 32))},tag:{b64(rbytes(rng, 16))},type:str]'
    txt = (f'db_password: {enc(24)}\nstripe_key: {enc(40)}\nsops:\n    age:\n        - recipient: {bech32("age", rbytes(rng, 32))}\n'
           f'          enc: |\n            -----BEGIN AGE ENCRYPTED FILE-----\n            {b64(rbytes(rng, 48))}\n            {b64(rbytes(rng, 48))}\n'
           f'            -----END AGE ENCRYPTED FILE-----\n    lastmodified: "2024-04-0{rng.randint(1, 9)}T10:00:00Z"\n    mac: {enc(32)}\n    version: 3.8.1\n')
    return [('code/infra/secrets/prod/app.enc.yaml', txt, 'sops-encrypted')]


@neg
def n_sealed_secret(rng):
    txt = (f'apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: api\n  namespace: prod\nspec:\n  encryptedData:\n'
           f'    STRIPE_SECRET_KEY: {b64(rbytes(rng, 380))}\n    DATABASE_URL: {b64(rbytes(rng, 400))}\n')
    return [('code/infra/k8s/sealed-api.yaml', txt, 'sealed-secret')]


@neg
def n_rails_credentials_enc(rng):
    return [('code/crm-sync/config/credentials.yml.enc', f'{b64(rbytes(rng, 300))}--{b64(rbytes(rng, 12))}--{b64(rbytes(rng, 16))}', 'rails-encrypted-credentials')]


# ---------------------------------------------------------------- configs with no secret
@neg
def n_plain_dotenv(rng):
    return [('code/status-page/.env', f'NODE_ENV=production\nPORT=3000\nPUBLIC_URL=https://status.{org(rng)}.com\nLOG_LEVEL=info\nDATABASE_URL=postgres://localhost:5432/status\nREDIS_URL=redis://127.0.0.1:6379/0\nSESSION_COOKIE_NAME=sid\nTZ=Europe/Berlin\nRELEASE={sha1(rng)}\n', 'dotenv-no-secret'),
            ('code/scraper/.env', f'USER_AGENT="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"\nCONCURRENCY=8\nMONGO_URL=mongodb://localhost:27017/scraper\nAMQP_URL=amqp://localhost:5672/\nS3_BUCKET={org(rng)}-scrapes\nAWS_REGION=us-east-1\n', 'dotenv-local-defaults')]


@neg
def n_bashrc_plain(rng):
    return [('.bashrc', '# ~/.bashrc\n[ -z "$PS1" ] && return\nHISTSIZE=10000\nalias ll=\'ls -alF\'\nexport EDITOR=vim\nexport PATH="$HOME/.local/bin:$PATH"\nexport AWS_PROFILE=prod\nexport AWS_REGION=eu-west-1\nexport VAULT_ADDR=https://vault.acme.internal:8200\nexport GITHUB_TOKEN="$(gh auth token 2>/dev/null)"\nexport OPENAI_API_KEY="$(security find-generic-password -s openai -w)"\nexport DOCKER_BUILDKIT=1\n', 'bashrc-secret-via-command')]


@neg
def n_history_plain(rng):
    return [('.zsh_history', ''.join(f': {ts(rng)}:0;{c}\n' for c in [
        'gh auth login --web', 'aws configure sso', 'aws sso login --profile prod', f'git checkout {sha1(rng)}', 'vault login -method=oidc',
        'op signin', 'export STRIPE_SECRET_KEY=$(op read op://Prod/Stripe/secret)', 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me',
        f'docker pull nginx@sha256:{hashlib.sha256(rbytes(rng, 8)).hexdigest()}', 'kubectl create secret generic api --from-env-file=.env.prod',
        'npm login', 'read -rs DB_PASSWORD && export DB_PASSWORD', 'htpasswd -B -c .htpasswd admin']), 'history-no-secret')]


@neg
def n_tool_configs(rng):
    return [
        ('.config/gh/config.yml', 'git_protocol: ssh\neditor: nvim\nprompt: enabled\npager: less\naliases:\n    co: pr checkout\n', 'gh-config'),
        ('.config/gh/hosts.yml', f'github.com:\n    git_protocol: ssh\n    users:\n        {user(rng)}:\n    user: {user(rng)}\n', 'gh-hosts-keyring'),
        ('.gitconfig.local', '[credential "https://github.com"]\n\thelper = !/usr/bin/gh auth git-credential\n[url "git@github.com:"]\n\tinsteadOf = https://github.com/\n', 'git-credential-helper'),
        ('.config/pip/pip.conf', '[global]\nindex-url = https://pypi.org/simple\ntimeout = 60\n', 'pip-conf'),
        ('.pypirc', '[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[testpypi]\nrepository = https://test.pypi.org/legacy/\n', 'pypirc-no-password'),
        ('.m2/settings.xml', '<settings>\n  <mirrors>\n    <mirror>\n      <id>central-proxy</id>\n      <url>https://repo.acme.internal/maven2</url>\n      <mirrorOf>central</mirrorOf>\n    </mirror>\n  </mirrors>\n</settings>\n', 'maven-no-password'),
        ('.config/rclone/rclone.conf', '[gdrive]\ntype = drive\nscope = drive.readonly\n\n[local-nas]\ntype = sftp\nhost = nas.local\nuser = media\nkey_file = ~/.ssh/id_ed25519\n', 'rclone-no-secret'),
        ('.wgetrc', 'timestamping = on\ntries = 3\nuser_agent = Wget/1.21\n', 'wgetrc'),
        ('.config/starship.toml', '[aws]\nformat = "on [$symbol($profile )]($style)"\n[gcloud]\ndisabled = true\n[kubernetes]\ndisabled = false\n', 'starship'),
        ('.terraformrc', 'plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"\ndisable_checkpoint = true\n', 'terraformrc-no-token'),
        ('Documents/nsswitch.conf.bak', 'passwd:         files systemd\ngroup:          files systemd\nshadow:         files\nhosts:          files dns\n', 'nsswitch'),
    ]


@neg
def n_password_fields_empty(rng):
    return [
        ('code/infra/docker/pgadmin-servers.json', json.dumps({'Servers': {'1': {'Name': 'local', 'Group': 'Servers', 'Host': 'db', 'Port': 5432, 'Username': 'postgres', 'PassFile': '/pgpass', 'SSLMode': 'prefer'}}}, indent=2) + '\n', 'pgadmin-passfile'),
        ('code/blog/config/database.yml', 'default: &default\n  adapter: postgresql\n  pool: 5\n  username: blog\n  password: <%= ENV["BLOG_DATABASE_PASSWORD"] %>\n\ndevelopment:\n  <<: *default\n  database: blog_dev\n  password:\n', 'rails-database-yml'),
        ('code/crm-sync/config/security.yml', 'password_policy:\n  min_length: 12\n  require_symbols: true\n  max_age_days: 90\ntoken_ttl_seconds: 3600\napi_key_header: X-Api-Key\nsecret_rotation: monthly\n', 'policy-config'),
        ('code/notifier/openapi.yaml', 'openapi: 3.0.3\ninfo: { title: Notifier, version: "1.0" }\ncomponents:\n  securitySchemes:\n    bearerAuth: { type: http, scheme: bearer, bearerFormat: JWT }\n    apiKey: { type: apiKey, in: header, name: X-API-Key }\npaths:\n  /send:\n    post:\n      security: [{ bearerAuth: [] }]\n      parameters:\n        - in: header\n          name: Authorization\n          example: "Bearer <token>"\n', 'openapi-security'),
        ('code/chatbot/docker-compose.dev.yml', 'services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_HOST_AUTH_METHOD: trust\n      POSTGRES_DB: chatbot\n  redis:\n    image: redis:7\n    command: ["redis-server", "--save", ""]\n', 'compose-trust-auth'),
        ('code/mobile-backend/src/login.ts', "export async function login(username: string, password: string) {\n  const res = await fetch('/api/login', { method: 'POST', body: JSON.stringify({ username, password }) });\n  if (!res.ok) throw new Error('invalid password');\n  return (await res.json()).token as string;\n}\n", 'ts-password-param'),
    ]


@neg
def n_misc_random_looking(rng):
    return [
        ('code/webshop/dist/asset-manifest.json', json.dumps({'files': {'main.js': f'/static/js/main.{rs(rng, 8, HEX)}.js', 'main.css': f'/static/css/main.{rs(rng, 8, HEX)}.css',
                                                                        'vendor.js': f'/static/js/787.{rs(rng, 8, HEX)}.chunk.js'}, 'entrypoints': ['static/js/main.js']}, indent=2) + '\n', 'asset-manifest'),
        ('code/ml-experiments/runs/summary.json', json.dumps({'run_id': rs(rng, 8, LOALNUM), 'commit': sha1(rng), 'dataset_sha256': hashlib.sha256(rbytes(rng, 8)).hexdigest(),
                                                               'model': 'bert-base-uncased', 'accuracy': 0.913, 'wandb_run': f'{org(rng)}/nlp/{rs(rng, 8, LOALNUM)}'}, indent=2) + '\n', 'ml-run-summary'),
        ('code/blog/content/posts/2024-05-hashing.md', f'---\ntitle: "Why we hash IDs"\nslug: hashing-ids\n---\n\nA short id like `{rs(rng, 11, B64U)}` (YouTube style) is not a secret; neither is `{rs(rng, 7, HEX)}` (a short git sha).\n', 'blog-post-ids'),
        ('code/analytics/notebooks/report.ipynb', json.dumps({'cells': [{'cell_type': 'code', 'execution_count': 3, 'metadata': {}, 'source': ['df[["user_id", "session"]].head()'],
                                                                          'outputs': [{'output_type': 'execute_result', 'execution_count': 3, 'metadata': {}, 'data': {'text/plain': ['   user_id                           session\n'] + [f'{i}  {ruuid(rng)}  {rs(rng, 32, HEX)}\n' for i in range(5)]}}]}],
                                                              'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}}, 'nbformat': 4, 'nbformat_minor': 5}, indent=1) + '\n', 'notebook-ids-output'),
        ('.config/Code/User/settings.json', json.dumps({'editor.fontSize': 14, 'workbench.colorTheme': 'Default Dark Modern', 'files.exclude': {'**/.git': True}, 'terminal.integrated.env.linux': {'AWS_PROFILE': 'dev'}, 'git.autofetch': True}, indent=4) + '\n', 'vscode-settings'),
        ('code/status-page/src/colors.ts', "export const palette = { primary: '#1f6feb', danger: '#da3633', ok: '#2ea043', hash: 'a3f5c9e1b2d4' };\n", 'hex-colors'),
    ]


@neg
def n_connection_strings_no_pw(rng):
    return [('code/data-pipeline/config/connections.yaml', f'warehouse:\n  url: postgresql://analytics@warehouse.{org(rng)}.internal:5432/dw\n  sslmode: require\ncache:\n  url: redis://localhost:6379/2\nqueue:\n  url: amqp://localhost:5672/\nmongo:\n  url: mongodb://localhost:27017/?replicaSet=rs0\nsearch:\n  url: http://localhost:9200\n', 'conn-strings-no-password')]


@neg
def n_sentry_config_no_secret(rng):
    return [('code/webshop/sentry.properties', f'defaults.url=https://sentry.io/\ndefaults.org={org(rng)}\ndefaults.project=webshop\n# auth.token comes from SENTRY_AUTH_TOKEN in CI\n', 'sentry-properties-no-token')]


@neg
def n_ci_public(rng):
    return [('code/blog/.gitlab-ci.yml', 'image: node:20\ncache:\n  key: ${CI_COMMIT_REF_SLUG}\n  paths: [node_modules/]\npages:\n  script:\n    - npm ci\n    - npm run build\n  artifacts:\n    paths: [public]\n  only: [main]\n', 'gitlab-ci-no-secret'),
            ('code/webshop/.circleci/config.yml', 'version: 2.1\norbs:\n  node: circleci/node@5.2.0\nworkflows:\n  test:\n    jobs:\n      - node/test:\n          context: org-global\n', 'circleci-no-secret')]


@neg
def n_example_public_ids_google(rng):
    return [('code/blog/layouts/partials/analytics.html', f'<script async src="https://www.googletagmanager.com/gtag/js?id=G-{rs(rng, 10, UPALNUM)}"></script>\n<script>\n  window.dataLayer = window.dataLayer || [];\n  function gtag(){{dataLayer.push(arguments);}}\n  gtag(\'js\', new Date());\n  gtag(\'config\', \'G-{rs(rng, 10, UPALNUM)}\');\n</script>\n', 'ga-measurement-id')]


@neg
def n_github_urls(rng):
    return [('notes/links.md', f'- PR: https://github.com/{org(rng)}/webshop/pull/{rng.randint(100, 999)}\n- Commit: https://github.com/{org(rng)}/webshop/commit/{sha1(rng)}\n- Actions run: https://github.com/{org(rng)}/webshop/actions/runs/{rng.randint(10**9, 10**10)}\n- Gist: https://gist.github.com/{user(rng)}/{rs(rng, 32, HEX)}\n', 'github-links')]


@neg
def n_pgp_public_hint(rng):
    return [('notes/pgp.md', f'My PGP key fingerprint: {" ".join(rs(rng, 4, HEXU) for _ in range(10))}\nKeyserver: keys.openpgp.org\n', 'pgp-fingerprint')]


@neg
def n_windows_crlf_configs(rng):
    return [('AppData/Roaming/acme/settings.ini', '[ui]\r\ntheme=dark\r\nlanguage=en-US\r\n[sync]\r\nserver=https://sync.acme.com\r\ninstall_id=' + ruuid(rng) + '\r\nlast_token_refresh=2024-05-01T10:00:00Z\r\n', 'windows-ini-crlf'),
            ('code/crm-sync/App.config', '<?xml version="1.0" encoding="utf-8"?>\r\n<configuration>\r\n  <appSettings>\r\n    <add key="ApiBaseUrl" value="https://api.acme.com" />\r\n    <add key="ApiKey" value="" />\r\n    <add key="ClientId" value="' + ruuid(rng) + '" />\r\n  </appSettings>\r\n</configuration>\r\n', 'app-config-crlf')]


@neg
def n_encrypted_private_key_marker_docs(rng):
    return [('code/infra/docs/tls.md', '## TLS\n\nThe key file starts with `-----BEGIN PRIVATE KEY-----` and must never be committed; it lives in Vault at `secret/tls/api`.\nGenerate a CSR with:\n\n    openssl req -new -newkey rsa:2048 -nodes -keyout api.key -out api.csr\n', 'docs-pem-marker-prose')]

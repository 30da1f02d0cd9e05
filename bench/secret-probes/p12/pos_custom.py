"""Positive templates for tool credential files and connection strings (one secret each)."""
from common import (MARK, rs, hexs, uuid4, b64, ts, jdump, user, proj, in_project, hist_time, hist_filler,
                    LOWNUM, ALNUM, B64URL, BECH32, static)
from tokens import PROV

T = []


def tpl(family, note):
    def deco(f):
        T.append(dict(family=family, name=f.__name__, note=note, build=f))
        return f
    return deco


def g(key, r):
    return PROV[key]['gen'](r)


@tpl('npm', 'npm token in ~/.npmrc _authToken')
def npmrc(r):
    s = g('npm', r)
    text = 'registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=%s%s\nsave-exact=true\n' % (MARK, s)
    return '.npmrc', text, s


@tpl('pypi', 'PyPI token as password in ~/.pypirc')
def pypirc(r):
    s = g('pypi', r)
    text = '[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = %s%s\n' % (MARK, s)
    return '.pypirc', text, s


@tpl('dockerhub', 'base64(user:dckr_pat) auth in ~/.docker/config.json')
def docker_cfg(r):
    s = b64(('%s:%s' % (user(r), g('dockerhub', r))).encode())
    cfg = {'auths': {'https://index.docker.io/v1/': {'auth': MARK + s}}, 'currentContext': 'desktop-linux'}
    return '.docker/config.json', jdump(cfg, 1), s


@tpl('tfc', 'Terraform Cloud token in credentials.tfrc.json')
def tfrc(r):
    s = g('tfc', r)
    return '.terraform.d/credentials.tfrc.json', jdump({'credentials': {'app.terraform.io': {'token': MARK + s}}}), s


@tpl('wandb', 'W&B key as password in ~/.netrc')
def netrc(r):
    s = g('wandb', r)
    text = 'machine api.wandb.ai\n  login user\n  password %s%s\n' % (MARK, s)
    return '.netrc', text, s


@tpl('huggingface', 'token alone in ~/.cache/huggingface/token')
def hf_token(r):
    s = g('huggingface', r)
    return r.choice(['.cache/huggingface/token', '.huggingface/token']), MARK + s, s


@tpl('huggingface', 'hf stored_tokens ini')
def hf_stored(r):
    s = g('huggingface', r)
    return '.cache/huggingface/stored_tokens', '[%s-laptop]\nhf_token = %s%s\n' % (user(r), MARK, s), s


@tpl('vercel', 'Vercel CLI auth.json token')
def vercel_auth(r):
    s = g('vercel', r)
    cfg = {'// Note': 'This is your Vercel credentials file. DO NOT SHARE!',
           '// Docs': 'https://vercel.com/docs/projects/project-configuration/global-configuration#auth.json', 'token': MARK + s}
    return r.choice(['.local/share/com.vercel.cli/auth.json', 'Library/Application Support/com.vercel.cli/auth.json']), jdump(cfg), s


@tpl('netlify', 'Netlify CLI config.json user auth token')
def netlify_cfg(r):
    s, uid = g('netlify', r), hexs(r, 24)
    cfg = {'telemetryDisabled': False, 'cliId': uuid4(r), 'userId': uid,
           'users': {uid: {'id': uid, 'name': user(r).title(), 'email': '%s@example.com' % user(r),
                           'auth': {'token': MARK + s, 'github': {'user': None, 'token': None}}}}}
    return r.choice(['.config/netlify/config.json', 'Library/Preferences/netlify/config.json']), jdump(cfg), s


@tpl('fly', 'flyctl ~/.fly/config.yml access_token')
def fly_cfg(r):
    s = g('fly', r)
    return '.fly/config.yml', 'access_token: %s%s\nmetrics_token: ""\nsend_metrics: true\nsyntax_highlighting: true\n' % (MARK, s), s


@tpl('ngrok', 'ngrok.yml agent authtoken')
def ngrok_yml(r):
    s = g('ngrok', r)
    text = 'version: "3"\nagent:\n  authtoken: %s%s\ntunnels:\n  web:\n    proto: http\n    addr: 3000\n' % (MARK, s)
    return r.choice(['.config/ngrok/ngrok.yml', 'Library/Application Support/ngrok/ngrok.yml']), text, s


@tpl('doppler', 'Doppler CLI .doppler.yaml scoped token')
def doppler_yaml(r):
    s = 'dp.ct.' + rs(r, 43)
    text = 'scoped:\n    /:\n        api-host: https://api.doppler.com\n        dashboard-host: https://dashboard.doppler.com\n' \
           '        token: %s%s\n    /Users/%s/code/%s:\n        enclave.project: %s\n        enclave.config: dev\n' % (
               MARK, s, user(r), proj(r), proj(r))
    return '.doppler/.doppler.yaml', text, s


@tpl('github_oauth', 'gh CLI hosts.yml oauth_token (gho_)')
def gh_hosts(r):
    s, u = 'gho_' + rs(r, 36), user(r)
    text = 'github.com:\n    users:\n        %s:\n            oauth_token: %s%s\n    git_protocol: https\n    user: %s\n' % (u, MARK, s, u)
    return '.config/gh/hosts.yml', text, s


@tpl('github_fg', 'fine-grained PAT in ~/.git-credentials URL')
def git_creds(r):
    s = g('github_fg', r)
    return '.git-credentials', 'https://%s:%s%s@github.com\n' % (user(r), MARK, s), s


@tpl('gitlab', 'glab CLI config token')
def glab(r):
    s = g('gitlab', r)
    text = 'git_protocol: ssh\neditor: vim\nhosts:\n    gitlab.com:\n        token: %s%s\n        api_host: gitlab.com\n        user: %s\n' % (
        MARK, s, user(r))
    return '.config/glab-cli/config.yml', text, s


@tpl('supabase_pat', 'Supabase CLI ~/.supabase/access-token file')
def sb_token(r):
    s = g('supabase_pat', r)
    return '.supabase/access-token', MARK + s, s


@tpl('stripe_rk', 'Stripe CLI config.toml live_mode_api_key')
def stripe_cli(r):
    s = g('stripe_rk', r)
    text = "[default]\n  account_id = 'acct_1%s'\n  device_name = '%s-mbp'\n  display_name = '%s'\n  live_mode_api_key = '%s%s'\n" \
           "  live_mode_key_expires_at = '2026-03-01'\n" % (rs(r, 15), user(r), proj(r), MARK, s)
    return '.config/stripe/config.toml', text, s


@tpl('age', 'age identity file (sops keys.txt)')
def age_keys(r):
    s = g('age', r)
    text = '# created: 2025-%02d-%02dT10:11:12+01:00\n# public key: age1%s\n%s%s\n' % (
        r.randint(1, 12), r.randint(1, 28), rs(r, 58, BECH32).lower(), MARK, s)
    return '.config/sops/age/keys.txt', text, s


@tpl('openai_proj', 'Codex CLI ~/.codex/auth.json OPENAI_API_KEY')
def codex_auth(r):
    s = g('openai_proj', r)
    return '.codex/auth.json', jdump({'OPENAI_API_KEY': MARK + s, 'tokens': None, 'last_refresh': None}), s


@tpl('mixed-llm', 'llm CLI keys.json (Anthropic/OpenAI/Gemini/Mistral)')
def llm_keys(r):
    k = r.choice(['anthropic', 'openai_proj', 'gemini', 'mistral'])
    s = g(k, r)
    name = {'openai_proj': 'openai'}.get(k, k)
    return 'Library/Application Support/io.datasette.llm/keys.json', jdump({'// Note': 'This file stores secret API credentials. Do not share!',
                                                                             name: MARK + s}), s


@tpl('neon', 'Neon Postgres URL with npg_ password')
def neon_url(r):
    s = 'npg_' + rs(r, 12)
    ep = 'ep-%s-%s-%s' % (r.choice(['cool', 'silent', 'muddy', 'bold']), r.choice(['darkness', 'river', 'forest']), rs(r, 8, LOWNUM))
    line = 'DATABASE_URL=postgresql://neondb_owner:%s%s@%s-pooler.us-east-2.aws.neon.tech/neondb?sslmode=require' % (MARK, s, ep)
    return in_project(r, '.env', True), 'NODE_ENV=development\n%s\nNEXT_PUBLIC_APP_URL=http://localhost:3000\n' % line, s


@tpl('planetscale', 'PlanetScale MySQL URL with pscale_pw_ password')
def pscale_url(r):
    s = 'pscale_pw_' + rs(r, 43, B64URL)
    line = 'DATABASE_URL="mysql://%s:%s%s@aws.connect.psdb.cloud/%s?sslaccept=strict"' % (rs(r, 12, LOWNUM), MARK, s, proj(r))
    return in_project(r, '.env', True), '# prisma\n%s\n' % line, s


@tpl('upstash', 'Upstash Redis rediss:// URL password')
def upstash_url(r):
    s = rs(r, 34)
    line = 'REDIS_URL=rediss://default:%s%s@%s-%s-%d.upstash.io:6379' % (MARK, s, r.choice(['brave', 'fond', 'quick']),
                                                                       r.choice(['lemur', 'eel', 'ox']), r.randint(10000, 99999))
    return in_project(r, '.env.local', True), 'QUEUE_NAME=jobs\n%s\n' % line, s


@tpl('mongodb', 'MongoDB Atlas SRV URL password')
def mongo_url(r):
    s = rs(r, 16)
    code = 'from pymongo import MongoClient\n\nclient = MongoClient("mongodb+srv://%s:%s%s@cluster0.%s.mongodb.net/?retryWrites=true")\n' % (
        user(r), MARK, s, rs(r, 5, LOWNUM))
    return in_project(r, 'db.py', True), code, s


@tpl('django', 'Django SECRET_KEY (django-insecure-) in settings.py')
def django_key(r):
    s = 'django-insecure-' + rs(r, 50, 'abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)')
    text = 'from pathlib import Path\n\nBASE_DIR = Path(__file__).resolve().parent.parent\n\nSECRET_KEY = "%s%s"\n\nDEBUG = True\nALLOWED_HOSTS = []\n' % (MARK, s)
    return in_project(r, '%s/settings.py' % proj(r).replace('-', '_'), True), text, s


static('django-insecure-')


@tpl('mixed-workers', 'Cloudflare Workers .dev.vars holding an OpenAI/Anthropic/Resend/Clerk key')
def dev_vars(r):
    k = r.choice(['openai_proj', 'anthropic', 'resend', 'clerk'])
    s = g(k, r)
    return in_project(r, '.dev.vars', True), 'ENVIRONMENT=dev\n%s=%s%s\n' % (PROV[k]['var'], MARK, s), s


@tpl('sentry_org', '.sentryclirc auth token')
def sentryclirc(r):
    s = g('sentry_org', r)
    return r.choice(['.sentryclirc', in_project(r, '.sentryclirc', True)]), '[auth]\ntoken=%s%s\n\n[defaults]\norg=%s\n' % (MARK, s, proj(r)), s


@tpl('datadog_api', 'datadog.yaml api_key')
def dd_yaml(r):
    s = g('datadog_api', r)
    text = '## datadog agent\napi_key: %s%s\nsite: datadoghq.eu\nlogs_enabled: true\napm_config:\n  enabled: true\n' % (MARK, s)
    return in_project(r, 'datadog/datadog.yaml', True), text, s


@tpl('grafana_cloud', 'Alloy remote_write basic_auth password')
def alloy(r):
    s = g('grafana_cloud', r)
    text = 'prometheus.remote_write "cloud" {\n  endpoint {\n    url = "https://prometheus-prod-24-prod-eu-west-2.grafana.net/api/prom/push"\n' \
           '    basic_auth {\n      username = "%d"\n      password = "%s%s"\n    }\n  }\n}\n' % (r.randint(1000000, 2999999), MARK, s)
    return in_project(r, 'config.alloy', True), text, s


@tpl('tailscale', 'tailscale up --authkey in shell history')
def ts_hist(r):
    s = g('tailscale', r)
    lines = [hist_time(r) + x for x in hist_filler(r, 5)]
    lines.insert(r.randint(0, 5), '%ssudo tailscale up --authkey=%s%s --ssh' % (hist_time(r), MARK, s))
    return '.zsh_history', '\n'.join(lines), s


@tpl('mixed-history', 'export of an LLM API key typed into bash history')
def export_hist(r):
    k = r.choice(['anthropic', 'openai_proj', 'groq', 'xai', 'openrouter'])
    s = g(k, r)
    lines = hist_filler(r, 6)
    lines.insert(r.randint(0, 6), 'export %s=%s%s' % (PROV[k]['var'], MARK, s))
    return '.bash_history', '\n'.join(lines), s


@tpl('turso', 'Turso CLI settings.json token')
def turso_cfg(r):
    s = g('turso', r)
    return r.choice(['.config/turso/settings.json', 'Library/Application Support/turso/settings.json']), jdump(
        {'config': {'token': MARK + s, 'username': user(r), 'autoupdate': 'on'}}), s


@tpl('openai_svc', 'LiteLLM proxy config with literal api_key')
def litellm_cfg(r):
    s = g('openai_svc', r)
    text = 'model_list:\n  - model_name: gpt-4o\n    litellm_params:\n      model: openai/gpt-4o\n      api_key: %s%s\n' \
           '  - model_name: local\n    litellm_params:\n      model: ollama/llama3.2\n      api_base: http://localhost:11434\n' % (MARK, s)
    return in_project(r, 'litellm_config.yaml', True), text, s


def templates():
    return list(T)

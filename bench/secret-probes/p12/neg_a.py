"""Negative templates, part A: configs and code that reference secrets without holding them."""
from common import (rs, hexs, uuid4, ts, jdump, user, proj, in_project, hist_time, hist_filler, env_filler, rc_filler,
                    MODELS, LOWNUM, digits)

T = []


def tpl(family, note):
    def deco(f):
        T.append(dict(family=family, name=f.__name__, note=note, build=f))
        return f
    return deco


@tpl('docs', 'README with export OPENAI_API_KEY="sk-..." instructions')
def readme(r):
    text = ('# %s\n\n## Setup\n\n```bash\nexport OPENAI_API_KEY="sk-..."\nexport ANTHROPIC_API_KEY="sk-ant-..."\nuv run main.py\n```\n\n'
            'Get a key at https://platform.openai.com/api-keys. Never commit it.\n' % proj(r))
    return in_project(r, 'README.md', True), text


@tpl('env-read', 'python reads keys from os.environ / getenv')
def py_environ(r):
    text = ('import os\nfrom openai import OpenAI\nimport anthropic\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\n'
            'claude = anthropic.Anthropic(api_key=os.getenv("ANTHROPIC_API_KEY"))\nMODEL = "%s"\n' % r.choice(MODELS))
    return in_project(r, 'llm.py', True), text


@tpl('env-read', 'TS reads process.env keys')
def ts_environ(r):
    text = ('import OpenAI from "openai";\nimport { Resend } from "resend";\n\nexport const openai = new OpenAI({ apiKey: process.env.OPENAI_API_KEY! });\n'
            'export const resend = new Resend(process.env.RESEND_API_KEY);\nconst secret = process.env.STRIPE_SECRET_KEY ?? "";\n')
    return in_project(r, 'src/lib/clients.ts', True), text


@tpl('env-template', '.env.example with empty values')
def env_example(r):
    keys = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'SUPABASE_SERVICE_ROLE_KEY', 'STRIPE_SECRET_KEY', 'CLERK_SECRET_KEY', 'RESEND_API_KEY']
    lines = ['# copy to .env and fill in'] + ['%s=' % k for k in r.sample(keys, 4)] + env_filler(r, 3)
    return in_project(r, '.env.example', True), '\n'.join(lines)


@tpl('mcp-input', 'VS Code mcp.json with promptString password input')
def vscode_inputs(r):
    cfg = {'inputs': [{'type': 'promptString', 'id': 'github-pat', 'description': 'GitHub Personal Access Token', 'password': True}],
           'servers': {'github': {'type': 'http', 'url': 'https://api.githubcopilot.com/mcp/',
                                  'headers': {'Authorization': 'Bearer ${input:github-pat}'}}}}
    return in_project(r, '.vscode/mcp.json', True), jdump(cfg)


@tpl('mcp-nosecret', 'Claude Desktop config with only path/url servers')
def claude_nosecret(r):
    u = user(r)
    cfg = {'mcpServers': {'filesystem': {'command': 'npx', 'args': ['-y', '@modelcontextprotocol/server-filesystem', '/Users/%s/Desktop' % u]},
                          'memory': {'command': 'npx', 'args': ['-y', '@modelcontextprotocol/server-memory']},
                          'sqlite': {'command': 'uvx', 'args': ['mcp-server-sqlite', '--db-path', '/Users/%s/data/app.db' % u]}}}
    return 'Library/Application Support/Claude/claude_desktop_config.json', jdump(cfg)


@tpl('ids', '.vercel/project.json projectId/orgId')
def vercel_project(r):
    return in_project(r, '.vercel/project.json', True), jdump({'projectId': 'prj_' + rs(r, 28), 'orgId': 'team_' + rs(r, 24),
                                                              'settings': {'framework': 'nextjs'}})


@tpl('ids', 'wrangler.toml account/kv/d1 ids')
def wrangler(r):
    text = ('name = "%s"\nmain = "src/index.ts"\ncompatibility_date = "2025-01-15"\naccount_id = "%s"\n\n[[kv_namespaces]]\nbinding = "CACHE"\n'
            'id = "%s"\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "prod"\ndatabase_id = "%s"\n\n[vars]\nMODEL = "%s"\n'
            % (proj(r), hexs(r, 32), hexs(r, 32), uuid4(r), r.choice(MODELS)))
    return in_project(r, 'wrangler.toml', True), text


@tpl('ids', '.netlify/state.json siteId UUID')
def netlify_state(r):
    return in_project(r, '.netlify/state.json', True), jdump({'siteId': uuid4(r)}, 1)


@tpl('config', 'fly.toml app config without secrets')
def fly_toml(r):
    text = ('app = "%s-%s"\nprimary_region = "%s"\n\n[build]\n  dockerfile = "Dockerfile"\n\n[env]\n  PORT = "8080"\n  LOG_LEVEL = "info"\n\n'
            '[http_service]\n  internal_port = 8080\n  force_https = true\n' % (proj(r), rs(r, 4, LOWNUM), r.choice(['fra', 'iad', 'lhr'])))
    return in_project(r, 'fly.toml', True), text


@tpl('ids', 'Railway/Infisical project link files with UUIDs')
def link_files(r):
    if r.random() < 0.5:
        return in_project(r, '.infisical.json', True), jdump({'workspaceId': uuid4(r), 'defaultEnvironment': 'dev', 'gitBranchToEnvironmentMapping': None})
    return '.railway/config.json', jdump({'projects': {'/Users/%s/code/%s' % (user(r), proj(r)): {'projectPath': '/Users/%s/code' % user(r),
                                         'name': proj(r), 'project': uuid4(r), 'environment': uuid4(r), 'environmentName': 'production'}},
                                         'user': {'token': None}})


@tpl('secret-ref', 'LiteLLM config with os.environ/ references')
def litellm_env(r):
    text = ('model_list:\n  - model_name: gpt-4o\n    litellm_params:\n      model: openai/gpt-4o\n      api_key: os.environ/OPENAI_API_KEY\n'
            '  - model_name: claude\n    litellm_params:\n      model: anthropic/%s\n      api_key: os.environ/ANTHROPIC_API_KEY\n'
            'general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n' % r.choice(MODELS[3:5]))
    return in_project(r, 'litellm_config.yaml', True), text


@tpl('secret-ref', 'GitHub Actions using ${{ secrets.* }} only')
def gha_secrets(r):
    text = ('name: deploy\non: push\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    permissions:\n      id-token: write\n      contents: read\n'
            '    steps:\n      - uses: actions/checkout@v4\n      - run: npx vercel deploy --prod --token=${{ secrets.VERCEL_TOKEN }}\n'
            '        env:\n          VERCEL_ORG_ID: ${{ vars.VERCEL_ORG_ID }}\n          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n')
    return in_project(r, '.github/workflows/deploy.yml', True), text


@tpl('secret-ref', 'Terraform variables declared sensitive, no values')
def tf_vars(r):
    text = ('variable "cloudflare_api_token" {\n  type      = string\n  sensitive = true\n}\n\nprovider "cloudflare" {\n'
            '  api_token = var.cloudflare_api_token\n}\n\nresource "cloudflare_record" "www" {\n  zone_id = "%s"\n  name    = "www"\n'
            '  type    = "CNAME"\n  content = "cname.vercel-dns.com"\n}\n' % hexs(r, 32))
    return in_project(r, 'infra/main.tf', True), text


@tpl('config', 'doppler.yaml project setup (no token)')
def doppler_setup(r):
    return in_project(r, 'doppler.yaml', True), 'setup:\n  - project: %s\n    config: dev\n' % proj(r)


@tpl('secret-ref', 'shell history with op read / doppler / wrangler secret put')
def hist_refs(r):
    cmds = ['export OPENAI_API_KEY=$(op read "op://Private/OpenAI/credential")', 'doppler run -- npm run dev',
            'wrangler secret put ANTHROPIC_API_KEY', 'vercel env pull .env.local', 'gh auth login --web',
            'export HF_TOKEN=$(security find-generic-password -s hf -w)', 'fly secrets set OPENAI_API_KEY="$OPENAI_API_KEY"',
            'infisical run --env=dev -- python app.py']
    lines = hist_filler(r, 4) + r.sample(cmds, 5)
    r.shuffle(lines)
    return '.zsh_history', '\n'.join(hist_time(r) + x for x in lines)


@tpl('secret-ref', '.zshrc loading keys from keychain / pass')
def rc_keychain(r):
    lines = rc_filler(r, 5) + ['# keys live in the keychain, not here', 'export OPENAI_API_KEY="$(security find-generic-password -a "$USER" -s openai -w)"',
                               'export ANTHROPIC_API_KEY="$(pass show api/anthropic)"', '# export GROQ_API_KEY=']
    return '.zshrc', '\n'.join(lines)


@tpl('auth-file', '~/.npmrc with ${NPM_TOKEN} reference')
def npmrc_ref(r):
    return r.choice(['.npmrc', in_project(r, '.npmrc', True)]), '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n@%s:registry=https://npm.pkg.github.com\n' % proj(r)


@tpl('auth-file', '~/.pypirc without password')
def pypirc_nopw(r):
    return '.pypirc', '[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[pypi]\nusername = __token__\n\n[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = __token__\n'


@tpl('auth-file', '~/.docker/config.json with credsStore only')
def docker_store(r):
    return '.docker/config.json', jdump({'auths': {'https://index.docker.io/v1/': {}, 'ghcr.io': {}}, 'credsStore': 'desktop',
                                         'currentContext': 'desktop-linux'}, 1)


@tpl('auth-file', 'gh hosts.yml with token in keyring')
def gh_hosts_nokey(r):
    u = user(r)
    return '.config/gh/hosts.yml', 'github.com:\n    users:\n        %s:\n    git_protocol: ssh\n    user: %s\n' % (u, u)


@tpl('auth-file', 'wandb settings without key')
def wandb_settings(r):
    return '.config/wandb/settings', '[default]\nentity = %s\nproject = %s\nbase_url = https://api.wandb.ai\nmode = online\n' % (user(r), proj(r))


@tpl('config', 'ngrok.yml with tunnels only (authtoken via env)')
def ngrok_noauth(r):
    return '.config/ngrok/ngrok.yml', 'version: "3"\n# authtoken comes from NGROK_AUTHTOKEN\ntunnels:\n  api:\n    proto: http\n    addr: 8000\n    domain: %s.ngrok.app\n' % proj(r)


@tpl('config', 'Supabase CLI config.toml with env() references')
def supabase_toml(r):
    text = ('project_id = "%s"\n\n[api]\nenabled = true\nport = 54321\n\n[auth.external.github]\nenabled = true\nclient_id = "env(GITHUB_CLIENT_ID)"\n'
            'secret = "env(SUPABASE_AUTH_GITHUB_SECRET)"\n\n[edge_runtime.secrets]\nopenai_api_key = "env(OPENAI_API_KEY)"\n' % proj(r))
    return in_project(r, 'supabase/config.toml', True), text


@tpl('test-fake', 'unit test using obviously fake keys')
def test_fakes(r):
    text = ('import pytest\n\n\n@pytest.fixture\ndef client(monkeypatch):\n    monkeypatch.setenv("OPENAI_API_KEY", "test-key")\n'
            '    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")\n    return make_client()\n\n\ndef test_missing_key(monkeypatch):\n'
            '    monkeypatch.delenv("OPENAI_API_KEY")\n    with pytest.raises(KeyError):\n        make_client()\n')
    return in_project(r, 'tests/conftest.py', True), text


@tpl('secret-ref', 'Vault agent template and ExternalSecret references')
def vault_refs(r):
    if r.random() < 0.5:
        text = 'OPENAI_API_KEY={{ with secret "kv/data/%s/openai" }}{{ .Data.data.api_key }}{{ end }}\n' % proj(r)
        return in_project(r, 'deploy/env.ctmpl', True), text
    text = ('apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: llm-keys\nspec:\n  secretStoreRef:\n'
            '    name: aws-secrets-manager\n    kind: ClusterSecretStore\n  data:\n    - secretKey: OPENAI_API_KEY\n      remoteRef:\n'
            '        key: prod/%s/openai\n        property: api_key\n' % proj(r))
    return in_project(r, 'k8s/external-secret.yaml', True), text


@tpl('notebook', 'notebook using getpass / Colab userdata')
def nb_getpass(r):
    src = ['import os', 'from getpass import getpass', 'os.environ["OPENAI_API_KEY"] = getpass("OpenAI key: ")']
    if r.random() < 0.5:
        src = ['from google.colab import userdata', 'HF_TOKEN = userdata.get("HF_TOKEN")']
    nb = {'cells': [{'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'source': [s + '\n' for s in src[:-1]] + src[-1:],
                     'outputs': [{'output_type': 'stream', 'name': 'stdout', 'text': ['OpenAI key: \u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\n']}]}],
          'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return in_project(r, 'notebooks/setup.ipynb', True), jdump(nb, 1)


@tpl('docs', 'cursor rules telling the agent not to hardcode keys')
def cursor_rules(r):
    text = ('---\ndescription: secrets handling\nalwaysApply: true\n---\n- Never hardcode API keys such as `sk-...` or `ghp_...`.\n'
            '- Read them with `process.env.OPENAI_API_KEY`.\n- Use `.env.local` (gitignored) for local development.\n')
    return in_project(r, '.cursor/rules/secrets.mdc', True), text


@tpl('ids', 'turborepo/CLI telemetry id files')
def telemetry(r):
    return '.config/turborepo/telemetry.json', jdump({'telemetry_enabled': False, 'telemetry_id': uuid4(r),
                                                       'telemetry_alerted': '2025-0%d-1%dT09:00:00Z' % (r.randint(1, 9), r.randint(0, 9))})


@tpl('config', 'aider conf with model names and commented key line')
def aider_nokey(r):
    text = ('model: %s\nweak-model: %s\n# anthropic-api-key: set ANTHROPIC_API_KEY in your shell instead\nauto-commits: false\n'
            'edit-format: diff\n' % (MODELS[3], MODELS[4]))
    return '.aider.conf.yml', text


@tpl('public-key', 'publishable keys (Stripe/Clerk pk_) in NEXT_PUBLIC_ vars')
def publishable(r):
    import base64
    host = '%s-%s-%d.clerk.accounts.dev$' % (r.choice(['ample', 'brave', 'clever']), r.choice(['koi', 'wren', 'mole']), r.randint(10, 99))
    lines = ['NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_test_51' + rs(r, 97),
             'NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_test_' + base64.b64encode(host.encode()).decode().rstrip('='),
             'NEXT_PUBLIC_APP_URL=http://localhost:3000']
    return in_project(r, '.env.local.example', True), '\n'.join(lines)


@tpl('ids', 'Sentry public DSN in client config')
def sentry_dsn(r):
    text = ('import * as Sentry from "@sentry/nextjs";\n\nSentry.init({\n  dsn: "https://%s@o%s.ingest.us.sentry.io/%s",\n'
            '  tracesSampleRate: 0.1,\n});\n' % (hexs(r, 32), digits(r, 6), digits(r, 7)))
    return in_project(r, 'sentry.client.config.ts', True), text


def templates():
    return list(T)

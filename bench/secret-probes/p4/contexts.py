"""Generic placements of a Spec's (ENV, value) pairs into realistic home-directory files."""
import json, re
from common import *

SAFE = re.compile(r'^[A-Za-z0-9_./+=:-]+$')


def pairs_of(rng, spec):
    ps = list(spec.extras)
    pos = rng.randint(0, len(ps)) if rng.random() < .5 else len(ps)
    ps.insert(pos, (spec.env, spec.value))
    return ps


def pdir(rng):
    return f'code/{proj(rng)}'


def camel(env):
    parts = env.lower().split('_')
    return parts[0] + ''.join(p.title() for p in parts[1:])


def section(spec):
    return spec.provider.split('_')[0]


def yq(v, rng):
    if re.match(r'^[A-Za-z][A-Za-z0-9_./+=-]*$', v) and rng.random() < .5 and v.lower() not in ('yes', 'no', 'true', 'false', 'null', 'on', 'off'):
        return v
    return json.dumps(v)


def shq(v, rng):
    if SAFE.match(v) and rng.random() < .4:
        return v
    if "'" in v:
        return json.dumps(v)
    if '$' in v or '`' in v or '\\' in v or '!' in v:
        return "'" + v + "'"
    return rng.choice(['"', "'"]).join(['', v, '']) if True else v


# ---------------------------------------------------------------- fillers
DOTENV_FILL = ['NODE_ENV=production', 'PORT=8080', 'LOG_LEVEL=info', 'DATABASE_HOST=localhost', 'REDIS_URL=redis://localhost:6379/0',
               'FEATURE_NEW_CHECKOUT=true', 'TZ=UTC', 'APP_ENV=production', 'CACHE_TTL=300', 'SENTRY_ENVIRONMENT=production',
               'AWS_REGION=eu-central-1', 'MAX_UPLOAD_MB=25', 'DEBUG=false']
RC_HEAD = ['# ~/.bashrc: executed by bash(1) for non-login shells.', '[ -z "$PS1" ] && return', 'HISTCONTROL=ignoreboth',
           'shopt -s histappend', 'HISTSIZE=10000', "alias ll='ls -alF'", "alias gs='git status'", "alias k=kubectl",
           'export EDITOR=vim', 'export PATH="$HOME/.local/bin:$HOME/go/bin:$PATH"', 'export GOPATH="$HOME/go"',
           '[ -f ~/.fzf.bash ] && source ~/.fzf.bash', 'eval "$(direnv hook bash)"', 'export NVM_DIR="$HOME/.nvm"',
           '[ -s "$NVM_DIR/nvm.sh" ] && \\. "$NVM_DIR/nvm.sh"']
HIST = ['ls -la', 'git status', 'git pull --rebase', 'docker ps', 'kubectl get pods -n prod', 'vim .env', 'make test',
        'python3 -m venv .venv', 'source .venv/bin/activate', 'pip install -r requirements.txt', 'npm ci', 'htop',
        'ssh deploy@10.0.3.17', 'git log --oneline -5', 'terraform plan', 'docker compose up -d', 'cd ~/code', 'go test ./...',
        'kubectl logs -f deploy/api -n prod', 'history | grep curl', 'brew upgrade', 'git push origin HEAD', 'jq . response.json',
        'tail -f /var/log/syslog', 'code .']


def r_dotenv(rng, spec):
    lines = rng.sample(DOTENV_FILL, rng.randint(2, 5))
    for k, v in pairs_of(rng, spec):
        q = rng.choice(['', '"', "'"]) if SAFE.match(v) else ("'" if '$' in v else '"')
        lines.insert(rng.randint(0, len(lines)), f'{k}={q}{v}{q}')
    name = rng.choice(['.env', '.env', '.env.production', '.env.local'])
    return f'{pdir(rng)}/{name}', '\n'.join(lines) + '\n', 'dotenv'


def r_shellrc(rng, spec):
    head = rng.sample(RC_HEAD, rng.randint(4, 8))
    body = [f'export {k}={shq(v, rng)}' for k, v in pairs_of(rng, spec)]
    path = rng.choice(['.bashrc', '.zshrc', '.profile', '.bash_profile', '.config/zsh/secrets.zsh'])
    return path, '\n'.join(head + ['', f'# {section(spec)}'] + body + ['']) , 'shell-rc-export'


def r_fish(rng, spec):
    body = [f'set -gx {k} {shq(v, rng)}' for k, v in pairs_of(rng, spec)]
    return '.config/fish/config.fish', 'if status is-interactive\n    fish_vi_key_bindings\nend\nset -gx EDITOR nvim\n' + '\n'.join(body) + '\n', 'fish-config'


def r_yaml(rng, spec):
    sec = section(spec)
    body = '\n'.join(f'  {k.lower()}: {yq(v, rng)}' for k, v in pairs_of(rng, spec))
    txt = f'# {sec} integration settings\nserver:\n  host: 0.0.0.0\n  port: 8080\n{sec}:\n{body}\nlogging:\n  level: info\n  format: json\n'
    path = rng.choice([f'.config/{sec}/config.yaml', f'{pdir(rng)}/config/settings.yml', f'{pdir(rng)}/config.yml'])
    return path, txt, 'yaml-config'


def r_json(rng, spec):
    sec = section(spec)
    d = {'name': proj(rng), 'version': f'1.{rng.randint(0, 9)}.{rng.randint(0, 20)}', 'debug': False,
         sec: {camel(k): v for k, v in pairs_of(rng, spec)}, 'timeoutMs': 15000}
    path = rng.choice([f'.config/{sec}/settings.json', f'{pdir(rng)}/config/production.json', f'{pdir(rng)}/appsettings.json'])
    return path, json.dumps(d, indent=rng.choice([2, 4])) + '\n', 'json-config'


def r_toml(rng, spec):
    sec = section(spec)
    body = '\n'.join(f'{k.lower()} = {json.dumps(v)}' for k, v in pairs_of(rng, spec))
    txt = f'title = "{proj(rng)}"\n\n[server]\nport = 8080\nworkers = 4\n\n[{sec}]\n{body}\n\n[log]\nlevel = "info"\n'
    return rng.choice([f'.config/{sec}/config.toml', f'{pdir(rng)}/config.toml']), txt, 'toml-config'


def r_ini(rng, spec):
    sec = section(spec)
    body = '\n'.join(f'{k.lower()} = {v}' for k, v in pairs_of(rng, spec))
    txt = f'[general]\nverbose = false\nretries = 3\n\n[{sec}]\n{body}\n'
    return rng.choice([f'.config/{sec}/credentials.ini', f'{pdir(rng)}/setup.cfg', f'.{sec}.ini']), txt, 'ini-config'


def r_properties(rng, spec):
    sec = section(spec)
    body = '\n'.join(f'{sec}.{k.lower().replace("_", "-")}={v}' for k, v in pairs_of(rng, spec))
    txt = f'spring.application.name={proj(rng)}\nserver.port=8080\nlogging.level.root=INFO\n{body}\nmanagement.endpoints.web.exposure.include=health\n'
    return f'{pdir(rng)}/src/main/resources/application.properties', txt, 'java-properties'


def r_compose(rng, spec):
    p = proj(rng)
    if rng.random() < .5:
        env = '\n'.join(f'      - {k}={v}' for k, v in pairs_of(rng, spec))
        env = '      - NODE_ENV=production\n' + env
    else:
        env = '\n'.join(f'      {k}: {json.dumps(v)}' for k, v in pairs_of(rng, spec))
        env = '      NODE_ENV: production\n' + env
    txt = (f'services:\n  app:\n    image: ghcr.io/{org(rng)}/{p}:1.{rng.randint(0, 9)}.{rng.randint(0, 9)}\n    restart: unless-stopped\n'
           f'    ports:\n      - "8080:8080"\n    environment:\n{env}\n    depends_on:\n      - db\n  db:\n    image: postgres:16\n'
           f'    volumes:\n      - pgdata:/var/lib/postgresql/data\nvolumes:\n  pgdata: {{}}\n')
    return f'code/{p}/docker-compose.yml', txt, 'docker-compose'


def r_k8s(rng, spec):
    p = proj(rng)
    if rng.random() < .7:
        body = '\n'.join(f'  {k}: {b64(v)}' for k, v in pairs_of(rng, spec))
        kind, ctx = 'data', 'k8s-secret-base64'
    else:
        body = '\n'.join(f'  {k}: {json.dumps(v)}' for k, v in pairs_of(rng, spec))
        kind, ctx = 'stringData', 'k8s-secret-stringdata'
    txt = f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {p}-secrets\n  namespace: {rng.choice(["prod", "default", "apps"])}\ntype: Opaque\n{kind}:\n{body}\n'
    return f'code/{p}/k8s/{rng.choice(["secret.yaml", "secrets.yml", "app-secret.yaml"])}', txt, ctx


def r_gha(rng, spec):
    body = '\n'.join(f'  {k}: {yq(v, rng)}' for k, v in pairs_of(rng, spec))
    txt = (f'name: deploy\non:\n  push:\n    branches: [main]\nenv:\n{body}\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    steps:\n'
           f'      - uses: actions/checkout@v4\n      - run: make deploy\n')
    return f'{pdir(rng)}/.github/workflows/deploy.yml', txt, 'github-actions'


def r_gitlabci(rng, spec):
    body = '\n'.join(f'  {k}: {json.dumps(v)}' for k, v in pairs_of(rng, spec))
    txt = (f'stages: [test, deploy]\nvariables:\n  DOCKER_DRIVER: overlay2\n{body}\n\ntest:\n  stage: test\n  script:\n    - make test\n\n'
           f'deploy:\n  stage: deploy\n  script:\n    - ./scripts/deploy.sh\n  only:\n    - main\n')
    return f'{pdir(rng)}/.gitlab-ci.yml', txt, 'gitlab-ci'


def r_python(rng, spec):
    ps = pairs_of(rng, spec)
    if rng.random() < .5:
        body = '\n'.join(f'{k} = {json.dumps(v) if rng.random() < .6 else repr(v)}' for k, v in ps)
        txt = f'"""Settings for {proj(rng)}."""\nimport os\n\nDEBUG = False\nALLOWED_HOSTS = ["*"]\n{body}\nTIMEOUT = 30\n'
        return f'{pdir(rng)}/{rng.choice(["settings.py", "config.py", "app/settings/production.py"])}', txt, 'python-constant'
    body = '\n'.join(f'os.environ.setdefault("{k}", {json.dumps(v)})' for k, v in ps)
    txt = f'import os\nimport sys\n\n# TODO: move to vault before merging\n{body}\n\n\ndef main():\n    print("starting", file=sys.stderr)\n'
    return f'{pdir(rng)}/scripts/{rng.choice(["run_local.py", "sync.py", "bootstrap.py"])}', txt, 'python-environ-setdefault'


def r_js(rng, spec):
    ps = pairs_of(rng, spec)
    q = rng.choice(["'", '"', '`'])
    body = ',\n'.join(f'  {camel(k)}: {q}{v}{q}' for k, v in ps)
    txt = f"// generated by init script\nconst path = require('path');\n\nmodule.exports = {{\n  port: 3000,\n{body},\n  staticDir: path.join(__dirname, 'public'),\n}};\n"
    return f'{pdir(rng)}/{rng.choice(["config.js", "src/config/index.js", "server/keys.js"])}', txt, 'js-config'


def r_ts(rng, spec):
    body = '\n'.join(f"export const {k} = '{v}';" for k, v in pairs_of(rng, spec))
    txt = f"import {{ z }} from 'zod';\n\n{body}\n\nexport const timeoutMs = 10_000;\n"
    return f'{pdir(rng)}/src/lib/{rng.choice(["constants.ts", "env.ts", "secrets.ts"])}', txt, 'ts-const'


def r_go(rng, spec):
    ps = pairs_of(rng, spec)
    body = '\n'.join(f'\t{camel(k)} = "{v}"' for k, v in ps)
    txt = f'package config\n\nimport "time"\n\nconst (\n{body}\n\tdefaultTimeout = 30 * time.Second\n)\n'
    return f'{pdir(rng)}/internal/config/{rng.choice(["config.go", "keys.go", "defaults.go"])}', txt, 'go-const'


def r_ruby(rng, spec):
    body = '\n'.join(f"  config.{k.lower()} = '{v}'" for k, v in pairs_of(rng, spec))
    sec = section(spec).title()
    txt = f"# frozen_string_literal: true\n\n{sec}.configure do |config|\n{body}\n  config.timeout = 10\nend\n"
    return f'{pdir(rng)}/config/initializers/{section(spec)}.rb', txt, 'ruby-initializer'


def r_java(rng, spec):
    body = '\n'.join(f'    private static final String {k} = "{v}";' for k, v in pairs_of(rng, spec))
    txt = (f'package com.{org(rng).replace("-", "")}.integration;\n\nimport java.time.Duration;\n\npublic final class ApiConfig {{\n'
           f'    private ApiConfig() {{}}\n\n{body}\n    public static final Duration TIMEOUT = Duration.ofSeconds(30);\n}}\n')
    return f'{pdir(rng)}/src/main/java/com/acme/integration/ApiConfig.java', txt, 'java-constant'


def r_csharp(rng, spec):
    body = '\n'.join(f'        public const string {"".join(p.title() for p in k.lower().split("_"))} = "{v}";' for k, v in pairs_of(rng, spec))
    txt = f'namespace Acme.Integrations\n{{\n    public static class Secrets\n    {{\n{body}\n    }}\n}}\n'
    return f'{pdir(rng)}/src/Acme.Integrations/Secrets.cs', txt, 'csharp-const'


def r_php(rng, spec):
    body = '\n'.join(f"    '{k.lower()}' => '{v}'," for k, v in pairs_of(rng, spec))
    return f'{pdir(rng)}/config/services.php', f"<?php\n\nreturn [\n{body}\n    'timeout' => 30,\n];\n", 'php-config'


def r_notebook(rng, spec):
    ps = pairs_of(rng, spec)
    src = ['import os\n', 'import pandas as pd\n', '\n'] + [f'os.environ["{k}"] = "{v}"\n' for k, v in ps]
    src[-1] = src[-1].rstrip('\n')
    nb = {'cells': [{'cell_type': 'markdown', 'metadata': {}, 'source': ['# Exploration\n', 'Quick look at last week\'s data.']},
                    {'cell_type': 'code', 'execution_count': 1, 'metadata': {}, 'outputs': [], 'source': src},
                    {'cell_type': 'code', 'execution_count': 2, 'metadata': {}, 'outputs': [],
                     'source': ['df = pd.read_csv("events.csv")\n', 'df.head()']}],
          'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'},
                       'language_info': {'name': 'python', 'version': '3.11.7'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return f'notebooks/{rng.choice(["explore", "scratch", "analysis-2024"])}.ipynb', json.dumps(nb, indent=1) + '\n', 'jupyter-notebook'


def r_history(rng, spec):
    cmds = rng.sample(HIST, rng.randint(5, 10))
    if spec.curl and rng.random() < .8:
        cmd = spec.curl
        ctx = 'shell-history-command'
    else:
        k, v = spec.env, spec.value
        cmd = f'export {k}={shq(v, rng)}'
        ctx = 'shell-history-export'
    cmds.insert(rng.randint(1, len(cmds)), cmd)
    if rng.random() < .5:
        t = ts(rng)
        return '.zsh_history', ''.join(f': {t + i * 37}:0;{c}\n' for i, c in enumerate(cmds)), ctx + '-zsh'
    return '.bash_history', '\n'.join(cmds) + '\n', ctx


def r_script(rng, spec):
    if not spec.curl:
        return r_history(rng, spec)
    txt = f'#!/usr/bin/env bash\nset -euo pipefail\n\n# quick helper, run from cron\ncd "$(dirname "$0")"\n{spec.curl}\necho "done"\n'
    return f'bin/{rng.choice(["notify.sh", "sync.sh", "check-api.sh"])}', txt, 'shell-script'


def r_notes(rng, spec):
    lines = [f'# {proj(rng)} setup notes', '', '- staging lives on the old droplet, prod on k8s', '- rotate keys every quarter (!)', '']
    lines.append(f'## {spec.provider.replace("_", " ")}')
    for k, v in pairs_of(rng, spec):
        lines.append(rng.choice([f'{k.lower().replace("_", " ")}: {v}', f'- {k}: `{v}`', f'{k} = {v}']))
    lines += ['', 'TODO: move these into 1Password']
    return rng.choice(['notes/setup.md', 'Documents/credentials-todo.txt', 'notes/onboarding.md', 'Desktop/keys.txt']), '\n'.join(lines) + '\n', 'personal-notes'


def r_terraform(rng, spec):
    body = '\n'.join(f'  {k.lower()} = "{v}"' for k, v in pairs_of(rng, spec))
    txt = f'# tfvars for prod\nregion = "eu-west-1"\ninstance_count = 3\n{body}\n'
    return f'{pdir(rng)}/terraform/{rng.choice(["prod.tfvars", "terraform.tfvars", "secrets.auto.tfvars"])}', txt, 'terraform-tfvars'


def r_vscode(rng, spec):
    d = {'version': '0.2.0', 'configurations': [{'name': 'Launch API', 'type': 'node', 'request': 'launch', 'program': '${workspaceFolder}/src/index.js',
                                                  'env': {k: v for k, v in pairs_of(rng, spec)}}]}
    return f'{pdir(rng)}/.vscode/launch.json', json.dumps(d, indent=4) + '\n', 'vscode-launch'


def r_systemd(rng, spec):
    env = '\n'.join(f'Environment="{k}={v}"' for k, v in pairs_of(rng, spec))
    txt = f'[Unit]\nDescription={proj(rng)} worker\n\n[Service]\nExecStart=%h/.local/bin/worker\nRestart=on-failure\n{env}\n\n[Install]\nWantedBy=default.target\n'
    return f'.config/systemd/user/{proj(rng)}.service', txt, 'systemd-unit'


def r_dockerfile(rng, spec):
    env = '\n'.join(f'ENV {k}={v}' for k, v in pairs_of(rng, spec))
    txt = f'FROM python:3.12-slim\nWORKDIR /app\nCOPY requirements.txt .\nRUN pip install --no-cache-dir -r requirements.txt\n{env}\nCOPY . .\nCMD ["python", "-m", "app"]\n'
    return f'{pdir(rng)}/Dockerfile', txt, 'dockerfile-env'


GENERIC = [(r_dotenv, 4), (r_shellrc, 3), (r_fish, 1), (r_yaml, 2), (r_json, 2), (r_toml, 1), (r_ini, 1), (r_properties, 1),
           (r_compose, 2), (r_k8s, 2), (r_gha, 1), (r_gitlabci, 1), (r_python, 2), (r_js, 2), (r_ts, 1), (r_go, 1), (r_ruby, 1),
           (r_java, 1), (r_csharp, 1), (r_php, 1), (r_notebook, 2), (r_history, 3), (r_script, 1), (r_notes, 2), (r_terraform, 1),
           (r_vscode, 1), (r_systemd, 1), (r_dockerfile, 1)]


def pick_generic(rng):
    tot = sum(w for _, w in GENERIC)
    x = rng.uniform(0, tot)
    for f, w in GENERIC:
        x -= w
        if x <= 0:
            return f
    return GENERIC[0][0]

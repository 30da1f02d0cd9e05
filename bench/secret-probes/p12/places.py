"""Places where a value (secret or placeholder) gets written.  place(r, p, v) -> (path, text, where)."""
import json
from common import (proj, user, in_project, env_filler, rc_filler, split_insert, hist_time, hist_filler,
                    jdump, MODELS, uuid4, hexs, ts, rs, LOWNUM)

PLACES = {}


def place(name):
    def deco(f):
        PLACES[name] = f
        return f
    return deco


def _server_name(p):
    return p['key'].split('_')[0]


@place('env')
def env_file(r, p, v):
    path = r.choice(['.env', '.env.local', '.env.development', 'apps/api/.env', '.gemini/.env', '.config/fabric/.env'])
    if not path.startswith(('.gemini', '.config')):
        path = in_project(r, path, always=r.random() < 0.7)
    q = r.choice(['', '"', "'"]) if ' ' not in v else '"'
    lines = env_filler(r, r.randint(2, 6))
    if r.random() < 0.5:
        lines.insert(0, '# %s' % r.choice(['local dev settings', 'DO NOT COMMIT', 'copied from 1password', 'api keys']))
    return path, '\n'.join(split_insert(r, lines, '%s=%s%s%s' % (p['var'], q, v, q))), '.env file'


@place('envrc')
def envrc(r, p, v):
    lines = ['use flake' if r.random() < 0.3 else 'layout python3', 'export PROJECT=%s' % proj(r),
             'export %s=%s' % (p['var'], v if r.random() < 0.5 else '"%s"' % v), 'dotenv_if_exists .env.local']
    return in_project(r, '.envrc', always=True), '\n'.join(lines), 'direnv .envrc'


@place('shell')
def shell_rc(r, p, v):
    path = r.choice(['.zshrc', '.bashrc', '.bash_profile', '.zprofile', '.config/zsh/.zshrc', '.profile', '.zshenv'])
    lines = rc_filler(r, r.randint(4, 9))
    sec = ['', '# %s' % r.choice(['AI stuff', 'api keys', p['label'].split(' (')[0], 'tokens - move to keychain someday']),
           'export %s="%s"' % (p['var'], v)]
    pos = r.randint(0, len(lines))
    return path, '\n'.join(lines[:pos] + sec + lines[pos:]), 'shell rc export'


@place('fish')
def fish(r, p, v):
    lines = ['if status is-interactive', '    starship init fish | source', 'end', 'fish_add_path ~/.local/bin',
             'set -gx EDITOR nvim', 'set -gx %s %s' % (p['var'], v), 'abbr -a gco git checkout']
    return '.config/fish/config.fish', '\n'.join(lines), 'fish config set -gx'


def _mcp_servers(r, p, v, vscode=False):
    servers = {}
    if r.random() < 0.7:
        servers['filesystem'] = {'command': 'npx', 'args': ['-y', '@modelcontextprotocol/server-filesystem',
                                                            '/Users/%s/Documents' % user(r)]}
    name = _server_name(p)
    srv = {'command': 'npx', 'args': ['-y', p['mcp']], 'env': {p['var']: v}}
    if vscode:
        srv = dict(type='stdio', **srv)
    servers[name] = srv
    if r.random() < 0.5:
        servers['fetch'] = {'command': 'uvx', 'args': ['mcp-server-fetch']}
    return servers


@place('mcp_claude')
def mcp_claude(r, p, v):
    path = r.choice(['Library/Application Support/Claude/claude_desktop_config.json', '.config/Claude/claude_desktop_config.json',
                     'AppData/Roaming/Claude/claude_desktop_config.json'])
    return path, jdump({'mcpServers': _mcp_servers(r, p, v)}), 'Claude Desktop MCP config env block'


@place('mcp_cursor')
def mcp_cursor(r, p, v):
    path = r.choice(['.cursor/mcp.json', in_project(r, '.cursor/mcp.json', always=True), '.codeium/windsurf/mcp_config.json'])
    return path, jdump({'mcpServers': _mcp_servers(r, p, v)}), 'Cursor/Windsurf mcp.json env block'


@place('mcp_vscode')
def mcp_vscode(r, p, v):
    return in_project(r, '.vscode/mcp.json', always=True), jdump({'servers': _mcp_servers(r, p, v, True)}), 'VS Code mcp.json'


@place('mcp_http')
def mcp_http(r, p, v):
    name = _server_name(p)
    cfg = {'mcpServers': {name: {'type': 'http', 'url': 'https://mcp.%s.example/mcp' % name,
                                 'headers': {'Authorization': 'Bearer %s' % v}}}}
    return in_project(r, '.mcp.json', always=True), jdump(cfg), 'Claude Code .mcp.json http headers'


@place('zed')
def zed(r, p, v):
    cfg = {'theme': 'One Dark', 'buffer_font_size': 14, 'vim_mode': r.random() < 0.5,
           'context_servers': {_server_name(p): {'command': {'path': 'npx', 'args': ['-y', p['mcp']], 'env': {p['var']: v}}}}}
    return '.config/zed/settings.json', jdump(cfg), 'Zed context_servers env'


@place('vscode')
def vscode(r, p, v):
    path = r.choice(['Library/Application Support/Code/User/settings.json', '.config/Code/User/settings.json',
                     'Library/Application Support/Cursor/User/settings.json'])
    cfg = {'editor.fontSize': r.choice([13, 14, 15]), 'editor.formatOnSave': True, 'workbench.colorTheme': 'Default Dark Modern',
           'files.autoSave': 'afterDelay'}
    if r.random() < 0.5:
        cfg['terminal.integrated.env.%s' % r.choice(['osx', 'linux'])] = {p['var']: v}
        where = 'VS Code terminal.integrated.env'
    else:
        cfg['%s.apiKey' % r.choice(['genieai.%s' % _server_name(p), 'codegpt', 'chatgpt.gpt3', 'aiAssistant'])] = v
        where = 'VS Code extension apiKey setting'
    cfg['python.defaultInterpreterPath'] = '~/.venvs/main/bin/python'
    return path, jdump(cfg, 4), where


@place('claude_settings')
def claude_settings(r, p, v):
    cfg = {'$schema': 'https://json.schemastore.org/claude-code-settings.json', 'model': 'sonnet',
           'env': {p['var']: v, 'DISABLE_TELEMETRY': '1'}, 'permissions': {'allow': ['Bash(npm run test:*)', 'Read(~/.zshrc)']}}
    return r.choice(['.claude/settings.json', in_project(r, '.claude/settings.local.json', True)]), jdump(cfg), 'Claude Code settings env'


@place('continue_yaml')
def continue_yaml(r, p, v):
    name = _server_name(p)
    text = ('name: Local Assistant\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: %s\n    provider: %s\n    model: %s\n'
            '    apiKey: %s\n    roles:\n      - chat\n      - edit\ncontext:\n  - provider: code\n  - provider: docs\n'
            % (name.title(), name, r.choice(MODELS), v))
    return '.continue/config.yaml', text, 'Continue config.yaml apiKey'


@place('continue_json')
def continue_json(r, p, v):
    name = _server_name(p)
    cfg = {'models': [{'title': name.title(), 'provider': name, 'model': r.choice(MODELS), 'apiKey': v}],
           'tabAutocompleteModel': {'title': 'Qwen2.5-Coder', 'provider': 'ollama', 'model': 'qwen2.5-coder:1.5b'},
           'allowAnonymousTelemetry': False}
    return '.continue/config.json', jdump(cfg), 'Continue config.json apiKey'


@place('aider')
def aider(r, p, v):
    name = _server_name(p)
    if name in ('openai', 'anthropic'):
        kl = '%s-api-key: %s' % (name, v)
    else:
        kl = 'api-key:\n  - %s=%s' % (name, v)
    text = '# aider config\nmodel: %s\nauto-commits: false\ndark-mode: true\n%s\nmap-tokens: 2048\n' % (r.choice(MODELS), kl)
    return r.choice(['.aider.conf.yml', in_project(r, '.aider.conf.yml', True)]), text, 'aider .aider.conf.yml'


def _nb(cells):
    out = []
    for kind, src, outputs in cells:
        c = {'cell_type': kind, 'metadata': {}, 'source': [ln + '\n' for ln in src[:-1]] + src[-1:]}
        if kind == 'code':
            c['execution_count'] = None if outputs is None else len(out) + 1
            c['outputs'] = outputs or []
        out.append(c)
    nb = {'cells': out, 'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'},
                                     'language_info': {'name': 'python', 'version': '3.11.9'}}, 'nbformat': 4, 'nbformat_minor': 5}
    return json.dumps(nb, indent=1, ensure_ascii=False)


def nb_path(r):
    return in_project(r, r.choice(['notebooks/', '', 'experiments/']) + r.choice(['eval', 'rag_test', 'scratch', 'demo',
                                                                                    'Untitled', 'embeddings', 'prompting']) + '.ipynb')


@place('ipynb_src')
def ipynb_src(r, p, v):
    code = p['py'].format(v=v).split('\n') if p['py'] and r.random() < 0.5 else ['import os', '', 'os.environ["%s"] = "%s"' % (p['var'], v)]
    cells = [('markdown', ['# %s experiments' % p['label'].split(' ')[0]], None), ('code', code, []),
             ('code', ['resp = run_query("What is retrieval augmented generation?")', 'resp[:200]'],
              [{'output_type': 'execute_result', 'execution_count': 2, 'metadata': {},
                'data': {'text/plain': ["'Retrieval augmented generation (RAG) combines a retriever with a generator...'"]}}])]
    return nb_path(r), _nb(cells), 'Jupyter notebook code cell'


@place('ipynb_out')
def ipynb_out(r, p, v):
    other = ['PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/home/%s' % user(r), 'JPY_PARENT_PID=%d' % r.randint(1000, 90000)]
    stream = [x + '\n' for x in other] + ['%s=%s\n' % (p['var'], v), 'LANG=C.UTF-8\n']
    cells = [('code', ['!env | sort | head -20'], [{'output_type': 'stream', 'name': 'stdout', 'text': stream}]),
             ('code', ['import pandas as pd', 'df = pd.read_csv("data.csv")'], [])]
    return nb_path(r), _nb(cells), 'Jupyter notebook output of !env'


@place('python')
def python(r, p, v):
    body = p['py'] or 'import requests\n\nAPI_KEY = "{v}"'
    body = body.format(v=v)
    tail = ('\n\n\ndef main():\n    print("model: %s")\n    # TODO: move key to env\n\n\nif __name__ == "__main__":\n    main()\n'
            % r.choice(MODELS))
    path = in_project(r, r.choice(['main.py', 'app.py', 'test_api.py', 'scripts/ingest.py', 'bot.py',
                                   '.ipython/profile_default/startup/00-keys.py']), always=True)
    if 'profile_default' in path:
        path = '.ipython/profile_default/startup/00-keys.py'
    return path, '#!/usr/bin/env python3\n"""quick %s test"""\n%s%s' % (_server_name(p), body, tail), 'Python script literal'


@place('js')
def js(r, p, v):
    body = p['js'] or 'const API_KEY = "{v}";\n\nasync function call(body) {{\n  return fetch(URL, {{ headers: {{ Authorization: `Bearer ${{API_KEY}}` }}, body }});\n}}'
    body = body.format(v=v)
    path = in_project(r, r.choice(['index.ts', 'src/lib/ai.ts', 'scripts/seed.mjs', 'server.js', 'app/api/chat/route.ts']), always=True)
    return path, '// %s client\n%s\n\nexport default {};\n' % (_server_name(p), body), 'JS/TS source literal'


@place('compose')
def compose(r, p, v):
    app = proj(r)
    envline = '      - %s=%s' % (p['var'], v) if r.random() < 0.5 else '      %s: "%s"' % (p['var'], v)
    other = '      - NODE_ENV=production' if envline.startswith('      -') else '      NODE_ENV: production'
    text = ('services:\n  %s:\n    build: .\n    ports:\n      - "8000:8000"\n    environment:\n%s\n%s\n    depends_on:\n'
            '      - redis\n  redis:\n    image: redis:7-alpine\n' % (app, other, envline))
    return in_project(r, r.choice(['docker-compose.yml', 'compose.yaml']), always=True), text, 'docker-compose environment'


@place('gha')
def gha(r, p, v):
    text = ('name: eval\non:\n  workflow_dispatch:\n  push:\n    branches: [main]\njobs:\n  run:\n    runs-on: ubuntu-latest\n'
            '    env:\n      PYTHON_VERSION: "3.12"\n      %s: %s\n    steps:\n      - uses: actions/checkout@v4\n'
            '      - uses: actions/setup-python@v5\n      - run: pip install -r requirements.txt && python eval.py\n' % (p['var'], v))
    return in_project(r, '.github/workflows/%s.yml' % r.choice(['eval', 'ci', 'deploy', 'nightly']), True), text, 'GitHub Actions env literal'


@place('tfvars')
def tfvars(r, p, v):
    lines = ['project     = "%s"' % proj(r), 'region      = "%s"' % r.choice(['us-east-1', 'eu-west-1', 'fra1']),
             'environment = "%s"' % r.choice(['prod', 'staging']), '%s = "%s"' % (p['var'].lower(), v)]
    return in_project(r, r.choice(['terraform.tfvars', 'infra/secrets.auto.tfvars', 'prod.tfvars']), True), '\n'.join(lines), 'Terraform tfvars'


@place('toml')
def toml(r, p, v):
    tool = _server_name(p)
    text = '[default]\nmodel = "%s"\napi_key = "%s"\ntimeout = 60\n\n[ui]\ncolor = true\n' % (r.choice(MODELS), v)
    return '.config/%s/config.toml' % r.choice([tool, tool + '-cli']), text, '~/.config/<tool>/config.toml'


@place('streamlit')
def streamlit(r, p, v):
    text = '# Streamlit secrets\n%s = "%s"\n\n[connections.db]\nurl = "sqlite:///local.db"\n' % (p['var'], v)
    return in_project(r, '.streamlit/secrets.toml', True), text, 'Streamlit secrets.toml'


@place('curl')
def curl(r, p, v):
    path = r.choice(['.zsh_history', '.bash_history', '.local/share/fish/fish_history'])
    url = p['url'] or 'https://api.%s.example/v1/ping' % _server_name(p)
    cmd = 'curl -s %s -H "%s" -H "Content-Type: application/json"' % (url, p['hdr'].format(v))
    lines = hist_filler(r, 6)
    if path == '.zsh_history':
        lines = [hist_time(r) + x for x in lines]
        cmd = hist_time(r) + cmd
    elif path.endswith('fish_history'):
        lines = ['- cmd: %s\n  when: %d' % (x, ts(r)) for x in lines]
        cmd = '- cmd: %s\n  when: %d' % (cmd, ts(r))
    return path, '\n'.join(split_insert(r, lines, cmd)), 'curl in shell history'


@place('notes')
def notes(r, p, v):
    name = p['label'].split(' (')[0]
    path = r.choice(['notes/keys.md', 'Documents/dev-notes.txt', 'Desktop/todo.md', 'obsidian/Dev/Setup.md', 'notes/%s.md' % proj(r)])
    lines = ['# setup notes', '', '- install node 22 and uv', '- create venv', '',
             '%s: %s' % (r.choice([name, p['var'], name + ' key']), v), '', '- remember to rotate after the demo']
    return path, '\n'.join(lines), 'personal notes file'


@place('chat')
def chat(r, p, v):
    a, b = r.sample(['alex', 'maria', 'jkim', 'sam', 'priya', 'tom'], 2)
    t = r.randint(8, 17)
    msgs = [(a, 'is the staging %s working for you?' % _server_name(p)), (b, 'yeah, use the team key for now'),
            (b, v), (a, 'thx, will put it in doppler later')]
    if r.random() < 0.5:
        text = '\n'.join('[%02d:%02d] <%s> %s' % (t, i * 3, u, m) for i, (u, m) in enumerate(msgs))
        return r.choice(['irclogs/dev.log', 'Documents/chat-export.txt']), text, 'chat log line'
    arr = [{'type': 'message', 'user': u, 'text': m, 'ts': '%d.%06d' % (ts(r), r.randint(0, 999999))} for u, m in msgs]
    return 'Downloads/slack-export/dev/%s.json' % r.choice(['2024-11-04', '2025-02-17', '2025-06-30']), jdump(arr, 4), 'Slack export message'


@place('k8s')
def k8s(r, p, v):
    text = ('apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-secrets\n  namespace: default\ntype: Opaque\nstringData:\n  %s: "%s"\n'
            % (proj(r), p['var'], v))
    return in_project(r, 'k8s/secret.yaml', True), text, 'Kubernetes Secret stringData'

"""Shared helpers for the p12 generator: random strings, JSON-ish tokens, fillers, marker handling."""
import base64
import json
import string
import uuid as _uuid

MARK = '\x01'
LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
LOWNUM = LOWER + DIGITS
UPNUM = UPPER + DIGITS
HEX = '0123456789abcdef'
B64URL = ALNUM + '-_'
BECH32 = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L'

# static prefixes shared by many tokens; 12-char windows lying wholly inside one of these
# are not counted as secret material by check.py
STATIC = set()


def static(*prefixes):
    STATIC.update(prefixes)


def static_b64(*chunks):
    """register the base64url forms (all 3 alignments) of fixed JSON text embedded in structured tokens."""
    for c in chunks:
        for k in range(3):
            enc = base64.urlsafe_b64encode(b'\0' * k + c.encode()).decode().rstrip('=')
            lead = -(-k * 4 // 3) + (1 if k else 0)
            end = len(enc) - 2
            if end - lead >= 12:
                STATIC.add(enc[lead:end])


def rs(r, n, alpha=ALNUM):
    """random string that mixes character classes (no all-letters bodies)."""
    while True:
        s = ''.join(r.choice(alpha) for _ in range(n))
        if n < 8 or alpha in (HEX, DIGITS, BECH32):
            return s
        needs_digit = any(c.isdigit() for c in alpha)
        if (not needs_digit or any(c.isdigit() for c in s)) and any(c.isalpha() for c in s):
            return s


def hexs(r, n):
    return rs(r, n, HEX)


def digits(r, n):
    return str(r.randint(1, 9)) + ''.join(r.choice(DIGITS) for _ in range(n - 1))


def uuid4(r):
    return str(_uuid.UUID(int=r.getrandbits(128), version=4))


def b64u(data):
    return base64.urlsafe_b64encode(data).decode().rstrip('=')


def b64(data):
    return base64.b64encode(data).decode()


def rbytes(r, n):
    return bytes(r.getrandbits(8) for _ in range(n))


def jwt(r, payload, alg='HS256', siglen=32):
    head = b64u(json.dumps({'alg': alg, 'typ': 'JWT'}, separators=(',', ':')).encode())
    body = b64u(json.dumps(payload, separators=(',', ':')).encode())
    return '%s.%s.%s' % (head, body, b64u(rbytes(r, siglen)))


def ts(r, lo=1693000000, hi=1767000000):
    return r.randint(lo, hi)


def jdump(obj, indent=2):
    return json.dumps(obj, indent=indent, ensure_ascii=False)


def finalize(text):
    """turn escaped markers back into MARK; return (clean_text, [marked 1-based line numbers])."""
    text = text.replace('\\u0001', MARK)
    if not text.endswith('\n'):
        text += '\n'
    lines = text.split('\n')
    marked = [i + 1 for i, ln in enumerate(lines) if MARK in ln]
    return text.replace(MARK, ''), marked


PROJECTS = ['chatbot', 'rag-demo', 'agent-lab', 'voice-notes', 'summarizer', 'acme-web', 'side-project',
            'llm-evals', 'scraper', 'portfolio', 'saas-starter', 'mcp-servers', 'finetune', 'kb-search',
            'invoice-app', 'discord-bot', 'hackathon-2025', 'transcriber', 'dashboard', 'blog']
USERS = ['alex', 'maria', 'jkim', 'sam', 'priya', 'tom', 'lena', 'diego', 'noor', 'chris']
MODELS = ['gpt-4o-mini', 'gpt-4.1', 'o3-mini', 'claude-sonnet-4-20250514', 'claude-3-5-haiku-20241022',
          'gemini-2.5-flash', 'mistral-large-latest', 'llama-3.3-70b-versatile', 'deepseek-chat',
          'command-r-plus', 'grok-3-mini', 'sonar-pro']


def proj(r):
    return r.choice(PROJECTS)


def user(r):
    return r.choice(USERS)


def in_project(r, name, always=False):
    """a path inside a random project directory or at home."""
    if always or r.random() < 0.6:
        base = r.choice(['projects', 'code', 'src', 'work', 'dev', 'Documents/GitHub'])
        return '%s/%s/%s' % (base, proj(r), name)
    return name


ENV_FILLER = [
    'NODE_ENV=development', 'PORT=3000', 'LOG_LEVEL=debug', 'APP_NAME={p}', 'HOST=0.0.0.0',
    'NEXT_PUBLIC_APP_URL=http://localhost:3000', 'DATABASE_URL=postgresql://localhost:5432/{p}',
    'REDIS_URL=redis://localhost:6379/0', 'OPENAI_MODEL={m}', 'DEFAULT_MODEL={m}', 'MAX_TOKENS=4096',
    'TEMPERATURE=0.2', 'DEBUG=true', 'TZ=Europe/Berlin', 'CHUNK_SIZE=800', 'EMBEDDING_DIM=1536',
    'VECTOR_INDEX={p}-docs', 'ENABLE_TELEMETRY=false', 'RATE_LIMIT_RPM=60', 'PYTHONUNBUFFERED=1',
    'UPLOAD_DIR=./uploads', 'S3_BUCKET={p}-assets', 'FEATURE_FLAGS=streaming,tools',
]


def env_filler(r, n):
    p, m = proj(r), r.choice(MODELS)
    return [x.format(p=p, m=m) for x in r.sample(ENV_FILLER, n)]


RC_FILLER = [
    'export PATH="$HOME/.local/bin:$PATH"', 'export EDITOR=nvim', 'alias ll="ls -lah"',
    'alias gs="git status"', 'eval "$(pyenv init -)"', 'eval "$(direnv hook zsh)"',
    'export NVM_DIR="$HOME/.nvm"', '[ -s "$NVM_DIR/nvm.sh" ] && . "$NVM_DIR/nvm.sh"',
    'export PATH="/opt/homebrew/bin:$PATH"', 'setopt HIST_IGNORE_DUPS', 'export LANG=en_US.UTF-8',
    'alias k=kubectl', 'export GOPATH="$HOME/go"', 'source "$HOME/.cargo/env"',
    'export BUN_INSTALL="$HOME/.bun"', 'alias py=python3', 'export HISTSIZE=50000',
    'export OLLAMA_HOST=127.0.0.1:11434', 'export HF_HOME="$HOME/.cache/huggingface"',
]


def rc_filler(r, n):
    return r.sample(RC_FILLER, n)


def split_insert(r, lines, item):
    """insert item at a random position of a copy of lines."""
    out = list(lines)
    out.insert(r.randint(0, len(out)), item)
    return out


def hist_time(r):
    return ': %d:0;' % ts(r)


HIST_FILLER = ['git status', 'ls -la', 'cd ~/projects/{p}', 'npm run dev', 'python3 main.py',
               'uv pip install -r requirements.txt', 'docker compose up -d', 'git pull --rebase',
               'code .', 'pnpm install', 'ollama run llama3.2', 'claude', 'vercel deploy --prod',
               'jupyter lab', 'git log --oneline | head', 'brew upgrade', 'source .venv/bin/activate']


def hist_filler(r, n):
    p = proj(r)
    return [x.format(p=p) for x in r.sample(HIST_FILLER, n)]

"""Negative templates: the positive places filled with placeholders, references and redactions."""
import random
from common import rs, ALNUM
from tokens import PROV
from places import PLACES

_CP = {}


def shown_prefix(key):
    """the visible, non-random prefix of a provider's tokens (e.g. 'sk-proj-'), or ''."""
    if key not in _CP:
        r = random.Random(12345)
        samples = [PROV[key]['gen'](r) for _ in range(3)]
        cp = samples[0]
        for s in samples[1:]:
            n = 0
            while n < min(len(cp), len(s)) and cp[n] == s[n]:
                n += 1
            cp = cp[:n]
        if len(cp) > 16:
            cp = cp[:3]
        cut = max(cp.rfind('-'), cp.rfind('_'), cp.rfind('.'))
        if cut >= 0:
            cp = cp[:cut + 1]
        elif len(cp) < 3:
            cp = ''
        _CP[key] = cp
    return _CP[key]


def _name(p):
    return p['key'].split('_')[0]


def style_value(style, r, p, place):
    cp, var = shown_prefix(p['key']), p['var']
    if style == 'dots':
        return (cp or r.choice(['', 'key-'])) + '...'
    if style == 'angle':
        return r.choice(['<your-%s-api-key>' % _name(p), 'YOUR_%s' % var, 'your_api_key_here', '<%s>' % var,
                         '<paste your key here>', 'INSERT_%s_HERE' % _name(p).upper()])
    if style == 'xxx':
        return cp + r.choice(['x', 'X']) * r.randint(8, 40)
    if style == 'envref':
        if place == 'gha':
            return '${{ secrets.%s }}' % var
        if place == 'continue_yaml':
            return '${{ secrets.%s }}' % var
        if place == 'mcp_vscode':
            return '${input:%s}' % var.lower().replace('_', '-')
        if place == 'vscode':
            return '${env:%s}' % var
        return '${%s}' % var
    if style == 'opref':
        return 'op://%s/%s/%s' % (r.choice(['Private', 'Dev', 'Engineering']), p['label'].split(' ')[0], r.choice(['credential', 'api key', 'password']))
    if style == 'redacted':
        return r.choice([cp + '...' + rs(r, 4, ALNUM), cp + '*' * r.randint(8, 24) + rs(r, 4, ALNUM), '[REDACTED]', '********', '<redacted>'])
    if style == 'changeme':
        return r.choice(['changeme', 'CHANGE_ME', 'replace-me', 'TODO', 'dummy', 'test'])
    raise ValueError(style)


NOTES = {'dots': 'truncated placeholder like sk-...', 'angle': 'angle-bracket / YOUR_KEY placeholder',
         'xxx': 'prefix followed by a run of x', 'envref': 'environment / secrets-store reference',
         'opref': '1Password op:// secret reference', 'redacted': 'redacted key (prefix...last4 or stars)',
         'changeme': 'changeme-style placeholder'}

COMBOS = [
    ('dots', 'openai_proj', 'env'), ('angle', 'openai_proj', 'python'), ('xxx', 'openai_legacy', 'shell'),
    ('envref', 'anthropic', 'mcp_claude'), ('envref', 'github_fg', 'mcp_vscode'), ('envref', 'openai_svc', 'gha'),
    ('envref', 'anthropic', 'continue_yaml'), ('envref', 'linear', 'mcp_http'), ('envref', 'datadog_api', 'compose'),
    ('envref', 'gemini', 'vscode'), ('opref', 'anthropic', 'env'), ('opref', 'stripe_rk', 'env'),
    ('redacted', 'openai_proj', 'chat'), ('redacted', 'anthropic', 'notes'), ('redacted', 'github_fg', 'chat'),
    ('angle', 'anthropic', 'aider'), ('angle', 'gemini', 'continue_json'), ('angle', 'huggingface', 'ipynb_src'),
    ('dots', 'groq', 'js'), ('xxx', 'stripe_rk', 'python'), ('changeme', 'db_password', 'compose'),
    ('changeme', 'nextauth', 'env'), ('angle', 'cloudflare', 'tfvars'), ('angle', 'notion', 'mcp_cursor'),
    ('xxx', 'figma', 'mcp_claude'), ('angle', 'mistral', 'toml'), ('dots', 'replicate', 'envrc'),
    ('angle', 'pinecone', 'streamlit'), ('xxx', 'tailscale', 'k8s'), ('dots', 'perplexity', 'curl'),
    ('angle', 'openrouter', 'zed'), ('xxx', 'npm', 'gha'), ('angle', 'wandb', 'fish'),
    ('redacted', 'supabase_pat', 'claude_settings'), ('angle', 'elevenlabs', 'ipynb_out'),
]


def _make(style, pk, pl):
    prov, fn = PROV[pk], PLACES[pl]

    def build(r):
        v = style_value(style, r, prov, pl)
        path, text, where = fn(r, prov, v)
        return path, text, '%s for %s in %s' % (NOTES[style], prov['label'].split(' (')[0], where)
    return dict(family='%s' % style, name='%s:%s@%s' % (style, pk, pl), build=build)


def templates():
    return [_make(*c) for c in COMBOS]

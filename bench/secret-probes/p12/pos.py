"""Positive templates built as (provider, place) combinations."""
from common import MARK
from tokens import PROV
from places import PLACES

COMBOS = [
    # LLM providers
    ('openai_proj', 'env'), ('openai_proj', 'python'), ('openai_proj', 'ipynb_src'), ('openai_proj', 'shell'),
    ('openai_proj', 'vscode'), ('openai_proj', 'aider'), ('openai_svc', 'gha'), ('openai_svc', 'compose'),
    ('openai_admin', 'curl'), ('openai_legacy', 'notes'), ('openai_legacy', 'ipynb_out'), ('openai_proj', 'js'),
    ('anthropic', 'env'), ('anthropic', 'claude_settings'), ('anthropic', 'continue_yaml'), ('anthropic', 'aider'),
    ('anthropic', 'python'), ('anthropic', 'curl'), ('anthropic', 'js'), ('anthropic_admin', 'shell'),
    ('gemini', 'env'), ('gemini', 'python'), ('gemini', 'continue_json'), ('gemini', 'curl'),
    ('mistral', 'env'), ('mistral', 'continue_yaml'), ('cohere', 'python'), ('cohere', 'streamlit'),
    ('groq', 'shell'), ('groq', 'js'), ('huggingface', 'ipynb_src'), ('huggingface', 'fish'),
    ('replicate', 'envrc'), ('replicate', 'python'), ('perplexity', 'mcp_claude'), ('perplexity', 'curl'),
    ('xai', 'env'), ('xai', 'python'), ('deepseek', 'aider'), ('deepseek', 'js'), ('together', 'python'),
    ('fireworks', 'env'), ('openrouter', 'continue_json'), ('openrouter', 'env'), ('elevenlabs', 'mcp_cursor'),
    ('elevenlabs', 'python'), ('assemblyai', 'python'), ('deepgram', 'env'), ('stability', 'curl'),
    ('langsmith', 'env'), ('langsmith_sk', 'ipynb_src'), ('wandb', 'ipynb_src'), ('wandb', 'shell'),
    ('pinecone', 'python'), ('pinecone', 'streamlit'), ('weaviate', 'python'), ('qdrant', 'python'),
    ('cerebras', 'shell'), ('tavily', 'mcp_claude'), ('firecrawl', 'mcp_cursor'), ('e2b', 'env'),
    ('langfuse', 'compose'), ('azure_openai', 'tfvars'), ('voyage', 'env'), ('modal', 'gha'), ('browserbase', 'mcp_vscode'),
    # developer platforms
    ('vercel', 'gha'), ('vercel', 'shell'), ('netlify', 'envrc'), ('fly', 'gha'), ('railway', 'env'),
    ('render', 'curl'), ('supabase_service', 'env'), ('supabase_secret', 'js'), ('supabase_pat', 'mcp_cursor'),
    ('neon', 'mcp_claude'), ('planetscale', 'gha'), ('turso', 'env'), ('cloudflare', 'tfvars'), ('cloudflare', 'mcp_claude'),
    ('cloudflare_global', 'shell'), ('doppler', 'compose'), ('doppler_pat', 'shell'), ('infisical', 'gha'),
    ('clerk', 'env'), ('auth0', 'env'), ('stripe_rk', 'mcp_claude'), ('stripe_rk', 'python'), ('stripe_whsec', 'env'),
    ('resend', 'js'), ('postmark', 'curl'), ('linear', 'mcp_http'), ('linear', 'zed'), ('notion', 'mcp_vscode'),
    ('notion_legacy', 'python'), ('figma', 'mcp_cursor'), ('sentry_org', 'gha'), ('sentry_user', 'curl'),
    ('grafana_cloud', 'k8s'), ('grafana_sa', 'mcp_claude'), ('datadog_api', 'compose'), ('datadog_app', 'curl'),
    ('newrelic', 'shell'), ('newrelic_lic', 'k8s'), ('tailscale', 'compose'), ('tailscale_api', 'tfvars'),
    ('ngrok', 'shell'), ('onepassword', 'shell'), ('onepassword', 'gha'), ('age', 'shell'), ('github_fg', 'mcp_claude'),
    ('github_fg', 'mcp_vscode'), ('github_classic', 'zed'), ('gitlab', 'mcp_cursor'), ('npm', 'gha'), ('pypi', 'shell'),
    ('dockerhub', 'env'), ('tfc', 'shell'), ('upstash', 'env'), ('serpapi', 'python'), ('litellm', 'compose'),
    ('nextauth', 'env'), ('db_password', 'compose'), ('jwt_secret', 'k8s'), ('mcp_auth', 'mcp_http'),
    ('gemini', 'chat'), ('groq', 'chat'), ('vercel', 'notes'), ('huggingface', 'toml'), ('mistral', 'toml'),
]


def _make(pk, pl):
    prov, fn = PROV[pk], PLACES[pl]

    def build(r):
        secret = prov['gen'](r)
        path, text, where = fn(r, prov, MARK + secret)
        note = '%s in %s' % (prov['label'], where)
        return path, text, secret, note
    return dict(family=pk, name='%s@%s' % (pk, pl), build=build)


def templates():
    seen = set()
    out = []
    for pk, pl in COMBOS:
        assert (pk, pl) not in seen, (pk, pl)
        seen.add((pk, pl))
        out.append(_make(pk, pl))
    return out

"""Provider token formats (as known to the author, 2023-2026) and how tools use them."""
import json
from common import (static_b64, rs, hexs, digits, uuid4, b64u, jwt, rbytes, ts, static,
                    ALNUM, B64URL, LOWNUM, UPNUM, BECH32, UPPER, DIGITS)

PROV = {}


def P(key, label, gen, var, hdr='Authorization: Bearer {}', url=None, py=None, js=None,
      note='', pre=(), mcp=None):
    static(*pre)
    PROV[key] = dict(key=key, label=label, gen=gen, var=var, hdr=hdr, url=url, py=py, js=js,
                     note=note, mcp=mcp or '@example/%s-mcp' % key.split('_')[0])


def _oai(prefix):
    return lambda r: prefix + rs(r, 74, B64URL) + 'T3BlbkFJ' + rs(r, 74, B64URL)


OAI_PY = 'from openai import OpenAI\n\nclient = OpenAI(api_key="{v}")'
OAI_JS = 'import OpenAI from "openai";\n\nconst client = new OpenAI({{ apiKey: "{v}" }});'


def _compat(base):
    return ('from openai import OpenAI\n\nclient = OpenAI(\n    api_key="{v}",\n    base_url="%s",\n)' % base,
            'import OpenAI from "openai";\n\nconst client = new OpenAI({{\n  apiKey: "{v}",\n  baseURL: "%s",\n}});' % base)


# ---- LLM / AI providers -------------------------------------------------------------
P('openai_proj', 'OpenAI project key', _oai('sk-proj-'), 'OPENAI_API_KEY', url='https://api.openai.com/v1/chat/completions',
  py=OAI_PY, js=OAI_JS, pre=('sk-proj-',), mcp='@openai/agents-mcp')
P('openai_svc', 'OpenAI service-account key', _oai('sk-svcacct-'), 'OPENAI_API_KEY', url='https://api.openai.com/v1/responses',
  py=OAI_PY, js=OAI_JS, pre=('sk-svcacct-',))
P('openai_admin', 'OpenAI admin key', _oai('sk-admin-'), 'OPENAI_ADMIN_KEY',
  url='https://api.openai.com/v1/organization/usage/completions', pre=('sk-admin-',))
P('openai_legacy', 'OpenAI legacy user key', lambda r: 'sk-' + rs(r, 20) + 'T3BlbkFJ' + rs(r, 20), 'OPENAI_API_KEY',
  url='https://api.openai.com/v1/models', py=OAI_PY, js=OAI_JS)
P('anthropic', 'Anthropic API key', lambda r: 'sk-ant-api03-' + rs(r, 93, B64URL) + 'AA', 'ANTHROPIC_API_KEY',
  hdr='x-api-key: {}', url='https://api.anthropic.com/v1/messages', pre=('sk-ant-api03-',),
  py='import anthropic\n\nclient = anthropic.Anthropic(api_key="{v}")',
  js='import Anthropic from "@anthropic-ai/sdk";\n\nconst anthropic = new Anthropic({{ apiKey: "{v}" }});')
P('anthropic_admin', 'Anthropic admin key', lambda r: 'sk-ant-admin01-' + rs(r, 93, B64URL) + 'AA', 'ANTHROPIC_ADMIN_KEY',
  hdr='x-api-key: {}', url='https://api.anthropic.com/v1/organizations/users', pre=('sk-ant-admin01-',))
P('gemini', 'Google AI Studio (Gemini) key', lambda r: 'AIza' + rs(r, 35, B64URL), 'GEMINI_API_KEY', hdr='x-goog-api-key: {}',
  url='https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
  py='from google import genai\n\nclient = genai.Client(api_key="{v}")',
  js='import {{ GoogleGenAI }} from "@google/genai";\n\nconst ai = new GoogleGenAI({{ apiKey: "{v}" }});')
P('mistral', 'Mistral API key (32 alnum, no prefix)', lambda r: rs(r, 32), 'MISTRAL_API_KEY',
  url='https://api.mistral.ai/v1/chat/completions', py='from mistralai import Mistral\n\nclient = Mistral(api_key="{v}")')
P('cohere', 'Cohere API key (40 alnum, no prefix)', lambda r: rs(r, 40), 'COHERE_API_KEY',
  url='https://api.cohere.com/v2/chat', py='import cohere\n\nco = cohere.ClientV2(api_key="{v}")')
P('groq', 'Groq API key', lambda r: 'gsk_' + rs(r, 52), 'GROQ_API_KEY', url='https://api.groq.com/openai/v1/chat/completions',
  py='from groq import Groq\n\nclient = Groq(api_key="{v}")', js='import Groq from "groq-sdk";\n\nconst groq = new Groq({{ apiKey: "{v}" }});')
P('huggingface', 'Hugging Face user access token', lambda r: 'hf_' + rs(r, 34, UPPER + UPPER.lower()), 'HF_TOKEN',
  url='https://huggingface.co/api/whoami-v2', py='from huggingface_hub import login\n\nlogin(token="{v}")')
P('replicate', 'Replicate API token', lambda r: 'r8_' + rs(r, 37), 'REPLICATE_API_TOKEN', hdr='Authorization: Token {}',
  url='https://api.replicate.com/v1/predictions', py='import replicate\n\nrc = replicate.Client(api_token="{v}")')
P('perplexity', 'Perplexity API key', lambda r: 'pplx-' + rs(r, 48), 'PERPLEXITY_API_KEY', url='https://api.perplexity.ai/chat/completions',
  py=_compat('https://api.perplexity.ai')[0], js=_compat('https://api.perplexity.ai')[1])
P('xai', 'xAI (Grok) API key', lambda r: 'xai-' + rs(r, 80), 'XAI_API_KEY', url='https://api.x.ai/v1/chat/completions',
  py=_compat('https://api.x.ai/v1')[0], js=_compat('https://api.x.ai/v1')[1])
P('deepseek', 'DeepSeek API key (sk- + 32 hex)', lambda r: 'sk-' + hexs(r, 32), 'DEEPSEEK_API_KEY',
  url='https://api.deepseek.com/chat/completions', py=_compat('https://api.deepseek.com')[0], js=_compat('https://api.deepseek.com')[1])
P('together', 'Together AI key (tgp_v1_ form; unsure of exact length)', lambda r: 'tgp_v1_' + rs(r, 43, B64URL), 'TOGETHER_API_KEY',
  url='https://api.together.xyz/v1/chat/completions', pre=('tgp_v1_',), py='from together import Together\n\nclient = Together(api_key="{v}")')
P('fireworks', 'Fireworks AI key (fw_ form; unsure of length)', lambda r: 'fw_' + rs(r, 24), 'FIREWORKS_API_KEY',
  url='https://api.fireworks.ai/inference/v1/chat/completions', py=_compat('https://api.fireworks.ai/inference/v1')[0])
P('openrouter', 'OpenRouter key', lambda r: 'sk-or-v1-' + hexs(r, 64), 'OPENROUTER_API_KEY',
  url='https://openrouter.ai/api/v1/chat/completions', pre=('sk-or-v1-',),
  py=_compat('https://openrouter.ai/api/v1')[0], js=_compat('https://openrouter.ai/api/v1')[1])
P('elevenlabs', 'ElevenLabs API key (sk_ + 48 hex)', lambda r: 'sk_' + hexs(r, 48), 'ELEVENLABS_API_KEY', hdr='xi-api-key: {}',
  url='https://api.elevenlabs.io/v1/voices', py='from elevenlabs.client import ElevenLabs\n\nel = ElevenLabs(api_key="{v}")')
P('assemblyai', 'AssemblyAI key (32 hex, no prefix)', lambda r: hexs(r, 32), 'ASSEMBLYAI_API_KEY', hdr='authorization: {}',
  url='https://api.assemblyai.com/v2/transcript', py='import assemblyai as aai\n\naai.settings.api_key = "{v}"')
P('deepgram', 'Deepgram key (40 hex, no prefix)', lambda r: hexs(r, 40), 'DEEPGRAM_API_KEY', hdr='Authorization: Token {}',
  url='https://api.deepgram.com/v1/listen', py='from deepgram import DeepgramClient\n\ndg = DeepgramClient("{v}")')
P('stability', 'Stability AI key', lambda r: 'sk-' + rs(r, 48), 'STABILITY_API_KEY',
  url='https://api.stability.ai/v2beta/stable-image/generate/core')
P('langsmith', 'LangSmith personal token', lambda r: 'lsv2_pt_' + hexs(r, 32) + '_' + hexs(r, 10), 'LANGSMITH_API_KEY',
  hdr='x-api-key: {}', url='https://api.smith.langchain.com/api/v1/sessions', pre=('lsv2_pt_',))
P('langsmith_sk', 'LangSmith service key', lambda r: 'lsv2_sk_' + hexs(r, 32) + '_' + hexs(r, 10), 'LANGCHAIN_API_KEY',
  hdr='x-api-key: {}', url='https://api.smith.langchain.com/api/v1/sessions', pre=('lsv2_sk_',))
P('wandb', 'Weights & Biases API key (40 hex)', lambda r: hexs(r, 40), 'WANDB_API_KEY', url='https://api.wandb.ai/graphql',
  py='import wandb\n\nwandb.login(key="{v}")')
P('pinecone', 'Pinecone key (pcsk_ form; unsure of exact length)', lambda r: 'pcsk_' + rs(r, 5) + '_' + rs(r, 63), 'PINECONE_API_KEY',
  hdr='Api-Key: {}', url='https://api.pinecone.io/indexes', py='from pinecone import Pinecone\n\npc = Pinecone(api_key="{v}")')
P('weaviate', 'Weaviate Cloud API key (generic form, unsure)', lambda r: rs(r, 40), 'WEAVIATE_API_KEY',
  url='https://demo-cluster.weaviate.cloud/v1/schema',
  py='import weaviate\nfrom weaviate.classes.init import Auth\n\nclient = weaviate.connect_to_weaviate_cloud(\n    cluster_url=WEAVIATE_URL,\n    auth_credentials=Auth.api_key("{v}"),\n)')
P('qdrant', 'Qdrant Cloud API key (generic form, unsure)', lambda r: rs(r, 54, B64URL), 'QDRANT_API_KEY', hdr='api-key: {}',
  url='https://xyz-example.eu-central.aws.cloud.qdrant.io:6333/collections',
  py='from qdrant_client import QdrantClient\n\nqdrant = QdrantClient(url=QDRANT_URL, api_key="{v}")')
P('cerebras', 'Cerebras key', lambda r: 'csk-' + rs(r, 48, LOWNUM), 'CEREBRAS_API_KEY', url='https://api.cerebras.ai/v1/chat/completions')
P('tavily', 'Tavily search key', lambda r: 'tvly-' + rs(r, 32), 'TAVILY_API_KEY', url='https://api.tavily.com/search',
  py='from tavily import TavilyClient\n\ntavily = TavilyClient(api_key="{v}")', mcp='tavily-mcp')
P('firecrawl', 'Firecrawl key', lambda r: 'fc-' + hexs(r, 32), 'FIRECRAWL_API_KEY', url='https://api.firecrawl.dev/v1/scrape',
  mcp='firecrawl-mcp')
P('e2b', 'E2B sandbox key', lambda r: 'e2b_' + hexs(r, 40), 'E2B_API_KEY', hdr='X-API-Key: {}', url='https://api.e2b.dev/sandboxes')
P('langfuse', 'Langfuse secret key', lambda r: 'sk-lf-' + uuid4(r), 'LANGFUSE_SECRET_KEY', url='https://cloud.langfuse.com/api/public/traces')
P('azure_openai', 'Azure OpenAI key (32 hex, legacy form)', lambda r: hexs(r, 32), 'AZURE_OPENAI_API_KEY', hdr='api-key: {}',
  url='https://contoso-ai.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21')
P('voyage', 'Voyage AI key (pa- form, unsure)', lambda r: 'pa-' + rs(r, 43, B64URL), 'VOYAGE_API_KEY', url='https://api.voyageai.com/v1/embeddings')
P('modal', 'Modal token secret', lambda r: 'as-' + rs(r, 22), 'MODAL_TOKEN_SECRET', url=None)
P('browserbase', 'Browserbase key (bb_live_ form, unsure)', lambda r: 'bb_live_' + rs(r, 27, B64URL), 'BROWSERBASE_API_KEY',
  hdr='X-BB-API-Key: {}', url='https://api.browserbase.com/v1/sessions', pre=('bb_live_',))

# ---- developer platforms ------------------------------------------------------------
P('vercel', 'Vercel access token (24 alnum)', lambda r: rs(r, 24), 'VERCEL_TOKEN', url='https://api.vercel.com/v9/projects')
P('netlify', 'Netlify personal access token', lambda r: 'nfp_' + rs(r, 36), 'NETLIFY_AUTH_TOKEN', url='https://api.netlify.com/api/v1/sites')
P('fly', 'Fly.io macaroon token', lambda r: 'FlyV1 fm2_' + b64u(rbytes(r, 190)) + ',fm2_' + b64u(rbytes(r, 120)), 'FLY_API_TOKEN',
  url='https://api.machines.dev/v1/apps', pre=('FlyV1 fm2_',))
P('railway', 'Railway project token (UUID, by context)', uuid4, 'RAILWAY_TOKEN', hdr='Project-Access-Token: {}',
  url='https://backboard.railway.app/graphql/v2')
P('render', 'Render API key', lambda r: 'rnd_' + rs(r, 32), 'RENDER_API_KEY', url='https://api.render.com/v1/services')


def _sb_service(r):
    ref = rs(r, 20, 'abcdefghijklmnopqrstuvwxyz')
    t = ts(r, 1690000000, 1740000000)
    return jwt(r, {'iss': 'supabase', 'ref': ref, 'role': 'service_role', 'iat': t, 'exp': t + 315360000})


P('supabase_service', 'Supabase service_role JWT', _sb_service, 'SUPABASE_SERVICE_ROLE_KEY', hdr='apikey: {}',
  url='https://abcdefghijklmnopqrst.supabase.co/rest/v1/profiles', pre=('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.',))
P('supabase_secret', 'Supabase secret API key (sb_secret_ form, unsure of length)', lambda r: 'sb_secret_' + rs(r, 31, B64URL),
  'SUPABASE_SECRET_KEY', hdr='apikey: {}', url='https://abcdefghijklmnopqrst.supabase.co/rest/v1/profiles', pre=('sb_secret_',))
P('supabase_pat', 'Supabase personal access token', lambda r: 'sbp_' + hexs(r, 40), 'SUPABASE_ACCESS_TOKEN',
  url='https://api.supabase.com/v1/projects', mcp='@supabase/mcp-server-supabase')
P('neon', 'Neon API key (napi_ form, unsure of length)', lambda r: 'napi_' + rs(r, 60, LOWNUM), 'NEON_API_KEY',
  url='https://console.neon.tech/api/v2/projects', mcp='@neondatabase/mcp-server-neon')
P('planetscale', 'PlanetScale service token', lambda r: 'pscale_tkn_' + rs(r, 43, B64URL), 'PLANETSCALE_SERVICE_TOKEN',
  url='https://api.planetscale.com/v1/organizations', pre=('pscale_tkn_',))


def _turso(r):
    t = ts(r)
    return jwt(r, {'a': 'rw', 'iat': t, 'id': uuid4(r)}, alg='EdDSA', siglen=64)


P('turso', 'Turso database auth token (EdDSA JWT)', _turso, 'TURSO_AUTH_TOKEN', url=None, pre=('eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.',))
P('cloudflare', 'Cloudflare API token (40 chars)', lambda r: rs(r, 40, B64URL), 'CLOUDFLARE_API_TOKEN',
  url='https://api.cloudflare.com/client/v4/user/tokens/verify', mcp='@cloudflare/mcp-server-cloudflare')
P('cloudflare_global', 'Cloudflare global API key (37 hex)', lambda r: hexs(r, 37), 'CLOUDFLARE_API_KEY', hdr='X-Auth-Key: {}',
  url='https://api.cloudflare.com/client/v4/zones')
P('doppler', 'Doppler service token', lambda r: 'dp.st.' + r.choice(['dev', 'prd', 'stg']) + '.' + rs(r, 40), 'DOPPLER_TOKEN',
  url='https://api.doppler.com/v3/configs/config/secrets/download')
P('doppler_pat', 'Doppler personal token', lambda r: 'dp.pt.' + rs(r, 43), 'DOPPLER_TOKEN', url='https://api.doppler.com/v3/me')
P('infisical', 'Infisical service token (st. form, unsure)', lambda r: 'st.' + uuid4(r) + '.' + hexs(r, 32) + '.' + hexs(r, 32),
  'INFISICAL_TOKEN', url='https://app.infisical.com/api/v3/secrets/raw')
P('clerk', 'Clerk secret key', lambda r: 'sk_live_' + rs(r, 40), 'CLERK_SECRET_KEY', url='https://api.clerk.com/v1/users')
P('auth0', 'Auth0 client secret (by context)', lambda r: rs(r, 64, B64URL), 'AUTH0_CLIENT_SECRET', url=None)
P('stripe_rk', 'Stripe restricted live key', lambda r: 'rk_live_51' + rs(r, 97), 'STRIPE_SECRET_KEY', hdr='Authorization: Bearer {}',
  url='https://api.stripe.com/v1/charges', py='import stripe\n\nstripe.api_key = "{v}"',
  js='import Stripe from "stripe";\n\nconst stripe = new Stripe("{v}");', mcp='@stripe/mcp')
P('stripe_whsec', 'Stripe webhook signing secret', lambda r: 'whsec_' + rs(r, 32), 'STRIPE_WEBHOOK_SECRET', url=None)
P('resend', 'Resend API key', lambda r: 're_' + rs(r, 8) + '_' + rs(r, 24), 'RESEND_API_KEY', url='https://api.resend.com/emails',
  py='import resend\n\nresend.api_key = "{v}"', js='import {{ Resend }} from "resend";\n\nconst resend = new Resend("{v}");')
P('postmark', 'Postmark server token (UUID, by context)', uuid4, 'POSTMARK_SERVER_TOKEN', hdr='X-Postmark-Server-Token: {}',
  url='https://api.postmarkapp.com/email')
P('linear', 'Linear personal API key', lambda r: 'lin_api_' + rs(r, 40), 'LINEAR_API_KEY', hdr='Authorization: {}',
  url='https://api.linear.app/graphql', pre=('lin_api_',))
P('notion', 'Notion integration secret (ntn_)', lambda r: 'ntn_' + digits(r, 11) + rs(r, 35), 'NOTION_API_KEY',
  url='https://api.notion.com/v1/search', mcp='@notionhq/notion-mcp-server')
P('notion_legacy', 'Notion integration secret (legacy secret_)', lambda r: 'secret_' + rs(r, 43), 'NOTION_TOKEN',
  url='https://api.notion.com/v1/users')
P('figma', 'Figma personal access token', lambda r: 'figd_' + rs(r, 40, B64URL), 'FIGMA_API_KEY', hdr='X-Figma-Token: {}',
  url='https://api.figma.com/v1/me', mcp='figma-developer-mcp')


def _sentry_org(r):
    body = {'iat': ts(r) + 0.5, 'url': 'https://sentry.io', 'region_url': 'https://us.sentry.io', 'org': rs(r, 8, LOWNUM)}
    return 'sntrys_' + b64u(json.dumps(body, separators=(',', ':')).encode()) + '_' + rs(r, 43, B64URL)


P('sentry_org', 'Sentry org auth token', _sentry_org, 'SENTRY_AUTH_TOKEN', url='https://sentry.io/api/0/organizations/',
  pre=('sntrys_eyJpYXQiO',))
P('sentry_user', 'Sentry user auth token', lambda r: 'sntryu_' + hexs(r, 64), 'SENTRY_AUTH_TOKEN', url='https://sentry.io/api/0/projects/')


def _glc(r):
    body = {'o': digits(r, 6), 'n': 'stack-%s-token' % digits(r, 6), 'k': rs(r, 24), 'm': {'r': r.choice(['prod-us-east-0', 'prod-eu-west-2'])}}
    return 'glc_' + b64u(json.dumps(body, separators=(',', ':')).encode())


P('grafana_cloud', 'Grafana Cloud access policy token', _glc, 'GRAFANA_CLOUD_TOKEN', url=None, pre=('glc_eyJvIjoi',))
P('grafana_sa', 'Grafana service account token', lambda r: 'glsa_' + rs(r, 32) + '_' + hexs(r, 8), 'GRAFANA_SERVICE_ACCOUNT_TOKEN',
  url='https://acme.grafana.net/api/dashboards/uid/abc')
P('datadog_api', 'Datadog API key (32 hex)', lambda r: hexs(r, 32), 'DD_API_KEY', hdr='DD-API-KEY: {}',
  url='https://api.datadoghq.com/api/v1/validate')
P('datadog_app', 'Datadog application key (40 hex)', lambda r: hexs(r, 40), 'DD_APP_KEY', hdr='DD-APPLICATION-KEY: {}',
  url='https://api.datadoghq.com/api/v1/monitor')
P('newrelic', 'New Relic user API key', lambda r: 'NRAK-' + rs(r, 27, UPNUM), 'NEW_RELIC_API_KEY', hdr='API-Key: {}',
  url='https://api.newrelic.com/graphql')
P('newrelic_lic', 'New Relic license key', lambda r: hexs(r, 36) + 'NRAL', 'NEW_RELIC_LICENSE_KEY', url=None)
P('tailscale', 'Tailscale auth key', lambda r: 'tskey-auth-k' + rs(r, 10) + 'CNTRL-' + rs(r, 33), 'TS_AUTHKEY', url=None,
  pre=('tskey-auth-k',))
P('tailscale_api', 'Tailscale API access token', lambda r: 'tskey-api-k' + rs(r, 10) + 'CNTRL-' + rs(r, 33), 'TAILSCALE_API_KEY',
  url='https://api.tailscale.com/api/v2/tailnet/-/devices', pre=('tskey-api-k',))
P('ngrok', 'ngrok authtoken', lambda r: '2' + rs(r, 26) + '_' + rs(r, 21), 'NGROK_AUTHTOKEN', url=None)


def _ops(r):
    body = {'signInAddress': 'my.1password.com', 'userAuth': {'method': 'SRPg-4096', 'alg': 'PBES2g-HS256', 'iterations': 650000,
            'salt': b64u(rbytes(r, 16))}, 'email': '%s@1passwordserviceaccounts.com' % rs(r, 13, LOWNUM),
            'srpX': hexs(r, 64), 'muk': {'alg': 'A256GCM', 'ext': False, 'k': b64u(rbytes(r, 32)), 'key_ops': ['encrypt', 'decrypt'],
            'kty': 'oct', 'kid': 'mp'}, 'secretKey': 'A3-%s-%s-%s-%s-%s-%s' % tuple(rs(r, 6, UPNUM) if i == 0 else rs(r, 5, UPNUM) for i in range(6)),
            'throttleSecret': {'seed': hexs(r, 64), 'uuid': rs(r, 26, UPNUM)}, 'deviceUuid': rs(r, 26, LOWNUM)}
    return 'ops_' + b64u(json.dumps(body, separators=(',', ':')).encode())


P('onepassword', '1Password service account token', _ops, 'OP_SERVICE_ACCOUNT_TOKEN', url=None,
  pre=('ops_' + b64u(b'{"signInAddress":"my.1password.com",'),))
static(b64u(b'{"iss":"supabase","ref":"'))
static_b64('","userAuth":{"method":"SRPg-4096","alg":"PBES2g-HS256","iterations":650000,"salt":"', '","email":"',
           '@1passwordserviceaccounts.com","srpX":"', '","muk":{"alg":"A256GCM","ext":false,"k":"',
           '","key_ops":["encrypt","decrypt"],"kty":"oct","kid":"mp"},"secretKey":"A3-', '","throttleSecret":{"seed":"',
           '","uuid":"', '"},"deviceUuid":"', ',"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"',
           '","n":"stack-', '-token","k":"', '","m":{"r":"prod-us-east-0"}}', '","m":{"r":"prod-eu-west-2"}}',
           '{"a":"rw","iat":', ',"id":"', '","role":"service_role","iat":', ',"exp":')
P('age', 'age secret key', lambda r: 'AGE-SECRET-KEY-1' + rs(r, 58, BECH32), 'SOPS_AGE_KEY', url=None, pre=('AGE-SECRET-KEY-1',))
P('github_fg', 'GitHub fine-grained PAT', lambda r: 'github_pat_11' + rs(r, 20, UPNUM) + '_' + rs(r, 59), 'GITHUB_TOKEN',
  url='https://api.github.com/user', pre=('github_pat_11',), mcp='@modelcontextprotocol/server-github')
P('github_classic', 'GitHub classic PAT', lambda r: 'ghp_' + rs(r, 36), 'GITHUB_PERSONAL_ACCESS_TOKEN', url='https://api.github.com/user/repos',
  mcp='@modelcontextprotocol/server-github')
P('gitlab', 'GitLab personal access token', lambda r: 'glpat-' + rs(r, 20, B64URL), 'GITLAB_TOKEN', hdr='PRIVATE-TOKEN: {}',
  url='https://gitlab.com/api/v4/projects?owned=true', mcp='@modelcontextprotocol/server-gitlab')
P('npm', 'npm granular/automation token', lambda r: 'npm_' + rs(r, 36), 'NPM_TOKEN', url='https://registry.npmjs.org/-/whoami')
P('pypi', 'PyPI API token (macaroon)', lambda r: 'pypi-AgEIcHlwaS5vcmc' + b64u(rbytes(r, 130)), 'PYPI_TOKEN', url=None,
  pre=('pypi-AgEIcHlwaS5vcmc',))
P('dockerhub', 'Docker Hub PAT', lambda r: 'dckr_pat_' + rs(r, 27, B64URL), 'DOCKERHUB_TOKEN', url=None, pre=('dckr_pat_',))
P('tfc', 'Terraform Cloud user token', lambda r: rs(r, 14) + '.atlasv1.' + rs(r, 67), 'TFE_TOKEN',
  url='https://app.terraform.io/api/v2/account/details')
P('upstash', 'Upstash Redis REST token (generic form)', lambda r: 'AX' + rs(r, 4) + 'AAIjcD' + rs(r, 60, B64URL), 'UPSTASH_REDIS_REST_TOKEN',
  url='https://eu1-brave-lemur-12345.upstash.io/get/foo')
P('serpapi', 'SerpAPI key (64 hex, no prefix)', lambda r: hexs(r, 64), 'SERPAPI_API_KEY', url=None)
P('litellm', 'LiteLLM proxy master key (by context)', lambda r: 'sk-' + rs(r, 22), 'LITELLM_MASTER_KEY',
  url='http://localhost:4000/key/generate')
P('nextauth', 'NextAuth/Auth.js secret (base64, by context)', lambda r: rs(r, 43, ALNUM + '+/') + '=', 'AUTH_SECRET', url=None)
P('db_password', 'database password (by context)', lambda r: rs(r, 20, ALNUM + '!#%^*') , 'POSTGRES_PASSWORD', url=None)
P('jwt_secret', 'JWT signing secret (hex, by context)', lambda r: hexs(r, 64), 'JWT_SECRET', url=None)
P('mcp_auth', 'self-hosted MCP bearer secret (by context)', lambda r: rs(r, 40, B64URL), 'MCP_AUTH_TOKEN', url='http://localhost:8787/mcp')

"""Negative templates, part B: ids, digests, public keys, encrypted blobs, ordinary base64, notebook outputs."""
import json
from common import (rs, hexs, uuid4, ts, jdump, b64, b64u, rbytes, user, proj, in_project, MODELS, LOWNUM, UPNUM, BECH32,
                    ALNUM, B64URL, digits)

T = []


def tpl(family, note):
    def deco(f):
        T.append(dict(family=family, name=f.__name__, note=note, build=f))
        return f
    return deco


def nb(cells):
    out = []
    for i, (src, outputs) in enumerate(cells):
        out.append({'cell_type': 'code', 'execution_count': i + 1, 'metadata': {},
                    'source': [s + '\n' for s in src[:-1]] + src[-1:], 'outputs': outputs})
    return json.dumps({'cells': out, 'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3'}},
                       'nbformat': 4, 'nbformat_minor': 5}, indent=1)


def stream(lines):
    return [{'output_type': 'stream', 'name': 'stdout', 'text': [x + '\n' for x in lines]}]


@tpl('ids', 'notebook output with chatcmpl/msg/request ids and usage')
def nb_ids(r):
    out = ['ChatCompletion(id=\'chatcmpl-%s\', model=\'gpt-4o-mini-2024-07-18\', system_fingerprint=\'fp_%s\')' % (rs(r, 29), hexs(r, 10)),
           'Message(id=\'msg_01%s\', model=\'%s\', stop_reason=\'end_turn\')' % (rs(r, 22), MODELS[3]),
           'request-id: req_011C%s' % rs(r, 20), 'usage: prompt_tokens=%d completion_tokens=%d' % (r.randint(50, 900), r.randint(10, 400))]
    return in_project(r, 'notebooks/compare_models.ipynb', True), nb([(['r1 = oai.chat.completions.create(**req)', 'r2 = claude.messages.create(**req)', 'show(r1, r2)'], stream(out))])


@tpl('b64-data', 'notebook with image/png base64 output')
def nb_png(r):
    png = b64(b'\x89PNG\r\n\x1a\n' + b'\x00\x00\x00\rIHDR' + rbytes(r, 300))
    outputs = [{'output_type': 'display_data', 'metadata': {}, 'data': {'image/png': png, 'text/plain': ['<Figure size 640x480 with 1 Axes>']}}]
    return in_project(r, 'notebooks/plots.ipynb', True), nb([(['import matplotlib.pyplot as plt', 'plt.plot(losses)'], outputs)])


@tpl('ids', 'notebook wandb run output with run id and URL')
def nb_wandb(r):
    rid = rs(r, 8, LOWNUM)
    out = ['wandb: Currently logged in as: %s' % user(r), 'wandb: Tracking run with wandb version 0.19.1',
           'wandb: Syncing run %s-%s-%d' % (r.choice(['fancy', 'misty', 'lucky']), r.choice(['sea', 'dream', 'wave']), r.randint(1, 99)),
           'wandb: View run at https://wandb.ai/%s/%s/runs/%s' % (user(r), proj(r), rid)]
    return in_project(r, 'train.ipynb', True), nb([(['import wandb', 'run = wandb.init(project="%s")' % proj(r)], stream(out))])


@tpl('ids', 'notebook printing dataset/embedding ids and uuids')
def nb_uuids(r):
    out = ['%s  %s  score=%.4f' % (uuid4(r), hexs(r, 16), r.random()) for _ in range(5)]
    return in_project(r, 'notebooks/retrieval.ipynb', True), nb([(['for h in index.query(vec, top_k=5): print(h.id, h.doc_hash, h.score)'], stream(out))])


@tpl('hash', 'HF hub cache refs/main commit sha')
def hf_ref(r):
    m = r.choice(['meta-llama--Llama-3.1-8B-Instruct', 'sentence-transformers--all-MiniLM-L6-v2', 'Qwen--Qwen2.5-7B-Instruct'])
    return '.cache/huggingface/hub/models--%s/refs/main' % m, hexs(r, 40)


@tpl('hash', 'ollama manifest with sha256 layer digests')
def ollama_manifest(r):
    layers = [{'mediaType': 'application/vnd.ollama.image.%s' % k, 'digest': 'sha256:' + hexs(r, 64), 'size': r.randint(100, 5 * 10 ** 9)}
              for k in ('model', 'template', 'license', 'params')]
    cfg = {'schemaVersion': 2, 'mediaType': 'application/vnd.docker.distribution.manifest.v2+json',
           'config': {'mediaType': 'application/vnd.docker.container.image.v1+json', 'digest': 'sha256:' + hexs(r, 64), 'size': 487}, 'layers': layers}
    return '.ollama/models/manifests/registry.ollama.ai/library/%s/latest' % r.choice(['llama3.2', 'qwen2.5-coder', 'mistral']), json.dumps(cfg)


@tpl('hash', 'package-lock.json integrity sha512 entries')
def pkg_lock(r):
    pk = {}
    for n, v in [('openai', '4.77.0'), ('@anthropic-ai/sdk', '0.36.3'), ('zod', '3.24.1')]:
        pk['node_modules/' + n] = {'version': v, 'resolved': 'https://registry.npmjs.org/%s/-/%s-%s.tgz' % (n, n.split('/')[-1], v),
                                   'integrity': 'sha512-' + b64(rbytes(r, 64)), 'license': 'MIT'}
    return in_project(r, 'package-lock.json', True), jdump({'name': proj(r), 'lockfileVersion': 3, 'packages': pk})


@tpl('hash', 'requirements.txt with --hash=sha256 pins')
def req_hashes(r):
    lines = []
    for n, v in [('openai', '1.59.7'), ('anthropic', '0.42.0'), ('httpx', '0.28.1')]:
        lines += ['%s==%s \\' % (n, v), '    --hash=sha256:%s \\' % hexs(r, 64), '    --hash=sha256:%s' % hexs(r, 64)]
    return in_project(r, 'requirements.txt', True), '# uv pip compile --generate-hashes\n' + '\n'.join(lines)


@tpl('hash', 'docker-compose with image@sha256 digests')
def compose_digest(r):
    text = ('services:\n  db:\n    image: postgres:16@sha256:%s\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/pg\n'
            '  qdrant:\n    image: qdrant/qdrant:v1.12.5@sha256:%s\nsecrets:\n  pg:\n    file: ./pg_password.txt\n' % (hexs(r, 64), hexs(r, 64)))
    return in_project(r, 'docker-compose.yml', True), text


@tpl('hash', 'git reflog with commit SHAs')
def reflog(r):
    lines, prev = [], '0' * 40
    for i in range(5):
        cur = hexs(r, 40)
        lines.append('%s %s %s <%s@example.com> %d +0100\tcommit: %s' % (prev, cur, user(r).title(), user(r), ts(r),
                                                                          r.choice(['add rag pipeline', 'fix streaming', 'bump deps', 'wip'])))
        prev = cur
    return in_project(r, '.git/logs/HEAD', True), '\n'.join(lines)


@tpl('ids', '.env created by vercel env pull (no secrets, commit sha)')
def vercel_env(r):
    lines = ['# Created by Vercel CLI', 'VERCEL="1"', 'VERCEL_ENV="development"', 'VERCEL_URL=""', 'VERCEL_GIT_PROVIDER="github"',
             'VERCEL_GIT_COMMIT_SHA="%s"' % hexs(r, 40), 'VERCEL_GIT_COMMIT_REF="main"', 'NEXT_PUBLIC_MODEL="%s"' % r.choice(MODELS)]
    return in_project(r, '.env.development.local', True), '\n'.join(lines)


@tpl('ids', 'OpenAI API response log with ids and request id')
def oai_log(r):
    rec = {'id': 'chatcmpl-' + rs(r, 29), 'object': 'chat.completion', 'created': ts(r), 'model': 'gpt-4o-2024-08-06',
           'system_fingerprint': 'fp_' + hexs(r, 10), 'x-request-id': 'req_' + hexs(r, 32), 'usage': {'total_tokens': r.randint(100, 3000)}}
    return in_project(r, 'logs/openai-%s.jsonl' % digits(r, 8), True), '\n'.join(json.dumps(dict(rec, created=rec['created'] + i)) for i in range(3))


@tpl('ids', 'OpenAI batch JSONL with custom ids and file ids')
def batch(r):
    lines = [json.dumps({'custom_id': 'req-%d' % i, 'method': 'POST', 'url': '/v1/chat/completions',
                         'body': {'model': 'gpt-4o-mini', 'messages': [{'role': 'user', 'content': 'Summarize doc %s' % uuid4(r)}]}})
             for i in range(3)]
    lines.append('# uploaded as file-%s, batch_%s' % (rs(r, 22), hexs(r, 32)))
    return in_project(r, 'batch/input.jsonl', True), '\n'.join(lines)


@tpl('ids', 'Stripe webhook event JSON (object ids, no keys)')
def stripe_event(r):
    ev = {'id': 'evt_1' + rs(r, 23), 'object': 'event', 'type': 'checkout.session.completed', 'livemode': False,
          'data': {'object': {'id': 'cs_test_a1' + rs(r, 56), 'customer': 'cus_' + rs(r, 14), 'payment_intent': 'pi_3' + rs(r, 23),
                              'amount_total': 2900, 'currency': 'usd'}}, 'request': {'id': 'req_' + rs(r, 14), 'idempotency_key': uuid4(r)}}
    return in_project(r, 'fixtures/checkout_completed.json', True), jdump(ev)


@tpl('ids', 'Anthropic response log with msg_ and req_ ids')
def anth_log(r):
    text = '\n'.join('%s INFO anthropic: POST /v1/messages 200 request-id=req_011C%s message=msg_01%s input_tokens=%d' % (
        '2025-%02d-%02dT10:%02d:00Z' % (r.randint(1, 12), r.randint(1, 28), i), rs(r, 20), rs(r, 22), r.randint(10, 900)) for i in range(4))
    return in_project(r, 'logs/agent.log', True), text


@tpl('ids', 'OpenTelemetry traceparent / Datadog trace ids in logs')
def traces(r):
    text = '\n'.join('level=info msg="llm call" traceparent=00-%s-%s-01 dd.trace_id=%d dd.span_id=%d latency_ms=%d' % (
        hexs(r, 32), hexs(r, 16), r.getrandbits(63), r.getrandbits(63), r.randint(80, 4000)) for _ in range(4))
    return in_project(r, 'logs/api.log', True), text


@tpl('ids', 'Grafana dashboard JSON with uids')
def grafana_dash(r):
    d = {'uid': rs(r, 14, LOWNUM), 'title': 'LLM latency', 'panels': [{'id': 1, 'type': 'timeseries',
         'datasource': {'type': 'prometheus', 'uid': rs(r, 14, LOWNUM)}, 'targets': [{'expr': 'histogram_quantile(0.95, sum(rate(llm_latency_bucket[5m])) by (le))'}]}],
         'version': 7}
    return in_project(r, 'dashboards/llm.json', True), jdump(d)


@tpl('public-key', 'SSH public keys (authorized_keys / .ollama/id_ed25519.pub)')
def ssh_pub(r):
    k = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI' + b64(rbytes(r, 32))[1:].rstrip('=')
    if r.random() < 0.5:
        return '.ollama/id_ed25519.pub', k
    return '.ssh/authorized_keys', '%s %s@laptop\n%s ci@github' % (k, user(r), 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI' + b64(rbytes(r, 32))[1:].rstrip('='))


@tpl('public-key', 'PEM public key generated with cryptography')
def pem_pub(r):
    from cryptography.hazmat.primitives.asymmetric import ed25519, ec
    from cryptography.hazmat.primitives import serialization
    if r.random() < 0.5:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rbytes(r, 32)).public_key()
    else:
        key = ec.derive_private_key(r.getrandbits(250) + 1, ec.SECP256R1()).public_key()
    pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return in_project(r, r.choice(['keys/jwt_public.pem', 'webhook_verify.pub.pem']), True), pem


@tpl('public-key', 'sops config with age recipients (public)')
def sops_cfg(r):
    text = 'creation_rules:\n  - path_regex: secrets/.*\\.yaml$\n    age: >-\n      age1%s,\n      age1%s\n' % (
        rs(r, 58, BECH32).lower(), rs(r, 58, BECH32).lower())
    return in_project(r, '.sops.yaml', True), text


@tpl('encrypted', 'sops-encrypted secrets file (ENC[...] values)')
def sops_enc(r):
    def enc(n):
        return 'ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]' % (b64(rbytes(r, n)), b64(rbytes(r, 32)), b64(rbytes(r, 16)))
    text = ('openai_api_key: %s\nstripe_secret_key: %s\nsops:\n    age:\n        - recipient: age1%s\n    lastmodified: "2025-03-04T10:00:00Z"\n'
            '    mac: %s\n    version: 3.9.4\n' % (enc(164), enc(107), rs(r, 58, BECH32).lower(), enc(32)))
    return in_project(r, 'secrets/prod.enc.yaml', True), text


@tpl('public-key', 'Tailscale status JSON with public node/disco keys')
def ts_status(r):
    peer = {'ID': 'n%sCNTRL' % rs(r, 10), 'PublicKey': 'nodekey:' + hexs(r, 64), 'DiscoKey': 'discokey:' + hexs(r, 64),
            'HostName': '%s-mbp' % user(r), 'TailscaleIPs': ['100.%d.%d.%d' % (r.randint(64, 127), r.randint(0, 255), r.randint(1, 254))]}
    return 'Documents/tailscale-status.json', jdump({'Version': '1.78.1', 'BackendState': 'Running', 'Self': peer})


@tpl('public-key', 'WireGuard peer section with public key only')
def wg_peer(r):
    text = '# peer to add on the server\n[Peer]\nPublicKey = %s\nAllowedIPs = 10.8.0.%d/32\nEndpoint = vpn.example.net:51820\n' % (
        b64(rbytes(r, 32)), r.randint(2, 250))
    return 'Documents/wg-peer.conf', text


@tpl('b64-data', 'CSS with inline data: URI font/image base64')
def data_uri(r):
    return in_project(r, 'src/styles/icons.css', True), '.logo {\n  background-image: url("data:image/png;base64,%s");\n}\n' % b64(
        b'\x89PNG\r\n\x1a\n' + rbytes(r, 120))


@tpl('b64-data', 'k8s ConfigMap binaryData of ordinary file')
def configmap(r):
    data = b64(('# prompts\nsystem: You are a helpful assistant for %s.\nmax_turns: 8\n' % proj(r)).encode())
    return in_project(r, 'k8s/prompts-configmap.yaml', True), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: prompts\nbinaryData:\n  prompts.yaml: %s\n' % data


@tpl('model-id', 'model ids and version strings in a config')
def model_cfg(r):
    text = ('[models]\nchat = "%s"\nfast = "%s"\nembed = "text-embedding-3-large"\nrerank = "rerank-v3.5"\nhf = "meta-llama/Llama-3.1-8B-Instruct"\n'
            'revision = "%s"\n\n[versions]\nopenai = "1.59.7"\nanthropic = "0.42.0"\n' % (r.choice(MODELS), r.choice(MODELS), hexs(r, 40)))
    return in_project(r, 'models.toml', True), text


@tpl('redacted', 'chat log about rotating a leaked key, key shown redacted')
def rotate_chat(r):
    text = ('[10:02] <%s> heads up: the openai key ending in ...%s leaked in a gist\n[10:03] <%s> revoked it, new one is in 1password (vault Dev)\n'
            '[10:04] <%s> also rotated sk-ant-api03-****%s\n' % (user(r), rs(r, 4), user(r), user(r), rs(r, 4)))
    return 'irclogs/ops.log', text


@tpl('redacted', 'CLI output listing keys with masked values')
def masked_list(r):
    rows = ['NAME            KEY                       CREATED', 'laptop          sk-proj-...%s            2025-01-12' % rs(r, 4),
            'ci              sk-svcacct-...%s         2025-02-03' % rs(r, 4), 'old             sk-...%s (revoked)       2024-06-30' % rs(r, 4)]
    return 'Documents/openai-keys.txt', '\n'.join(rows)


@tpl('ids', 'Pinecone index description (host, no key)')
def pinecone_desc(r):
    host = '%s-%s.svc.aped-%d-%s.pinecone.io' % (proj(r), rs(r, 7, LOWNUM), r.randint(1000, 9999), rs(r, 4, LOWNUM))
    return in_project(r, 'index.json', True), jdump({'name': proj(r), 'dimension': 1536, 'metric': 'cosine', 'host': host,
                                                     'spec': {'serverless': {'cloud': 'aws', 'region': 'us-east-1'}}, 'status': {'ready': True}})


@tpl('ids', 'uv.lock entry with sha256 and wheel urls')
def uv_lock(r):
    text = ('[[package]]\nname = "openai"\nversion = "1.59.7"\nsource = { registry = "https://pypi.org/simple" }\n'
            'sdist = { url = "https://files.pythonhosted.org/packages/%s/%s/%s/openai-1.59.7.tar.gz", hash = "sha256:%s", size = %d }\n'
            % (hexs(r, 2), hexs(r, 2), hexs(r, 60), hexs(r, 64), r.randint(100000, 400000)))
    return in_project(r, 'uv.lock', True), text


def templates():
    return list(T)

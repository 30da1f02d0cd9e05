"""p12: credentials of AI/ML providers and modern developer platforms (2023-2026) in the files where tools
and users put them (.env, shell rc, MCP/editor/agent configs, notebooks, scripts, CI, tool credential files,
history, notes, chat logs), plus look-alike negatives (placeholders, references, ids, hashes, public keys)."""
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import MARK, finalize  # noqa: E402
import pos  # noqa: E402
import pos_custom  # noqa: E402
import neg_combo  # noqa: E402
import neg_a  # noqa: E402
import neg_b  # noqa: E402

N_POS, N_NEG = 160, 130


def pos_templates():
    return pos.templates() + pos_custom.templates()


def neg_templates():
    return neg_combo.templates() + neg_a.templates() + neg_b.templates()


def draw(r, templates, n):
    """sample without replacement while templates last, then start a fresh shuffled pass."""
    out, pool = [], []
    while len(out) < n:
        if not pool:
            pool = list(templates)
            r.shuffle(pool)
        out.append(pool.pop())
    return out


def build(seed):
    """returns (files {rel: text}, manifest, secrets, raw secret values {rel: value})."""
    r = random.Random(int(seed))
    files, manifest, secrets, raw = {}, [], {}, {}
    for i, t in enumerate(draw(r, pos_templates(), N_POS), 1):
        res = t['build'](r)
        path, text, secret = res[:3]
        note = res[3] if len(res) > 3 else t['note']
        clean, marked = finalize(text)
        assert len(marked) == 1, (t['name'], marked)
        line = clean.split('\n')[marked[0] - 1]
        assert secret in line and clean.count(secret) == 1, (t['name'], secret)
        rel = 'pos/h%03d/%s' % (i, path)
        files[rel] = clean
        manifest.append({'file': rel, 'kind': 'pos', 'family': t['family'], 'note': note})
        secrets[rel] = {'line': marked[0], 'text': line}
        raw[rel] = secret
    for i, t in enumerate(draw(r, neg_templates(), N_NEG), 1):
        res = t['build'](r)
        path, text = res[:2]
        note = res[2] if len(res) > 2 else t['note']
        clean, marked = finalize(text)
        assert not marked and MARK not in text, t['name']
        rel = 'neg/h%03d/%s' % (i, path)
        files[rel] = clean
        manifest.append({'file': rel, 'kind': 'neg', 'family': t['family'], 'note': note})
    return files, manifest, secrets, raw


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: python3 gen.py SEED')
    seed = sys.argv[1]
    files, manifest, secrets, _ = build(seed)
    od = os.path.join(HERE, 'out_%s' % seed)
    if os.path.isdir(od):
        shutil.rmtree(od)
    for rel, text in files.items():
        p = os.path.join(od, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
    with open(os.path.join(od, 'manifest.json'), 'w', encoding='utf-8') as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
    with open(os.path.join(od, 'secrets.json'), 'w', encoding='utf-8') as f:
        json.dump(secrets, f, indent=1, ensure_ascii=False)
    print('wrote %s: %d positives, %d negatives' % (od, sum(m['kind'] == 'pos' for m in manifest),
                                                   sum(m['kind'] == 'neg' for m in manifest)))


if __name__ == '__main__':
    main()

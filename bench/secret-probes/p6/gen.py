#!/usr/bin/env python3
"""p6 outsider probe: IaC / deployment / app-config credentials and encodings.
usage: python3 gen.py SEED  -> out_SEED/{pos,neg}/caseNNN/..., out_SEED/manifest.json"""
import sys, os, json, random, shutil
from pos import POS
from neg import NEG

PER_FAMILY = 2


def main():
    seed = int(sys.argv[1])
    r = random.Random(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "out_%d" % seed)
    if os.path.exists(out):
        shutil.rmtree(out)
    manifest, needles = [], {}

    def emit(kind, idx, fam, path, text, note, needle=None):
        rel = "%s/case%03d/%s" % (kind, idx, path)
        crlf = r.random() < 0.12 and "\r\n" not in text
        if crlf:
            text = text.replace("\n", "\r\n")
            note += " [CRLF]"
        if needle is not None and needle not in text:
            raise SystemExit("generator bug: needle not in text for %s (%s)" % (fam, needle))
        full = os.path.join(out, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", newline="") as f:
            f.write(text)
        manifest.append({"file": rel, "kind": kind, "family": fam, "note": note})
        if needle is not None:
            needles[rel] = needle

    jobs = [("pos", fam, f) for fam, f in POS for _ in range(PER_FAMILY)] + \
           [("neg", fam, f) for fam, f in NEG for _ in range(PER_FAMILY)]
    r.shuffle(jobs)
    counters = {"pos": 0, "neg": 0}
    for kind, fam, f in jobs:
        counters[kind] += 1
        res = f(r)
        if kind == "pos":
            path, text, needle, note = res
            emit(kind, counters[kind], fam, path, text, note, needle)
        else:
            path, text, note = res
            emit(kind, counters[kind], fam, path, text, note)
    manifest.sort(key=lambda m: m["file"])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(out, "needles.json"), "w") as f:
        json.dump(needles, f, indent=1)
    print("seed %d: %d positives, %d negatives -> %s" % (seed, counters["pos"], counters["neg"], out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""p5 outsider corpus generator: app-specific credential formats in a Linux power user's home.

usage: python3 gen.py SEED   -> out_SEED/{pos,neg}/caseNNN/<home-relative path>, out_SEED/manifest.json
Deterministic per seed: every value (passwords, tokens, keys, certificates) comes from random.Random(seed).
"""
import json, os, random, shutil, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib  # noqa: E402
from pos_fams import POS  # noqa: E402
from neg_fams import NEG  # noqa: E402

MIN_POS = 130
MIN_NEG = 130


class Ctx:
    def __init__(self, r):
        self.r = r
        self._ca = None
        self._rsa = []

    def ca(self):
        if self._ca is None:
            self._ca = lib.CA(self.r, self.r.choice(["Home Lab Root CA", "Example Corp Internal CA", "pfSense CA", "Kubernetes CA"]))
        return self._ca

    def rsa(self):
        # a small pool of RSA keys for negatives (public halves only are ever written)
        if len(self._rsa) < 2:
            self._rsa.append(lib.rsa_key(self.r, self.r.choice([2048, 3072])))
            return self._rsa[-1]
        return self.r.choice(self._rsa)


def main():
    seed = int(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "out_%d" % seed)
    if os.path.exists(out):
        shutil.rmtree(out)
    r = random.Random(seed)
    c = Ctx(r)
    manifest = []

    def plan(fams, minimum):
        order = list(fams)
        r.shuffle(order)
        while len(order) < minimum:
            order.append(r.choice(fams))
        return order

    for kind, fams, minimum in (("pos", POS, MIN_POS), ("neg", NEG, MIN_NEG)):
        for i, (name, f) in enumerate(plan(fams, minimum)):
            res = f(c)
            if kind == "pos":
                rel, content, secret, note = res
            else:
                rel, content, note = res
                secret = None
            path = os.path.join(kind, "case%03d" % i, rel)
            full = os.path.join(out, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(full, mode) as fh:
                fh.write(content)
            ent = {"file": path, "kind": kind, "family": name, "note": note}
            if secret is not None:
                ent["secret"] = secret
            manifest.append(ent)
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    npos = sum(1 for m in manifest if m["kind"] == "pos")
    print("seed %d: %d positives (%d families), %d negatives (%d families) -> %s" % (
        seed, npos, len(POS), len(manifest) - npos, len(NEG), out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Score the scanner on out_SEED.  usage: HAVEN_BIN=/tmp/haven_probe_bin python3 score.py SEED"""
import json, os, re, subprocess, sys

seed = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
os.chdir(here)
out = "out_%s" % seed
binp = os.environ.get("HAVEN_BIN", "/tmp/haven_probe_bin")
man = json.load(open(os.path.join(out, "manifest.json")))
p = subprocess.run([binp, "scan", out + "/pos", out + "/neg"], capture_output=True, text=True)
if p.returncode not in (0, 4):
    print("seed %s: scanner failed rc=%d" % (seed, p.returncode))
    print(p.stderr[-2000:])
    sys.exit(2)

findings = {}  # manifest file -> [lines]
case_re = re.compile(r"((?:pos|neg)/case\d{3}/)")
for line in p.stdout.splitlines():
    m = case_re.search(line)
    if not m:
        continue
    start = m.start(1)
    rest = line[start:]
    # match the manifest file that this finding names
    for ent in man:
        if rest.startswith(ent["file"] + ":"):
            findings.setdefault(ent["file"], []).append(line)
            break
    else:
        findings.setdefault(rest.split(":")[0], []).append(line)

pos = [m for m in man if m["kind"] == "pos"]
neg = [m for m in man if m["kind"] == "neg"]
found = [m for m in pos if m["file"] in findings]
fa = [m for m in neg if m["file"] in findings]
print("seed %s: found %d of %d, false alarms %d files" % (seed, len(found), len(pos), len(fa)))


def secret_line(m):
    path = os.path.join(out, m["file"])
    try:
        txt = open(path, encoding="utf-8").read()
    except UnicodeDecodeError:
        return "(binary) " + m.get("secret", "")
    s = m.get("secret", "")
    for ln in txt.splitlines():
        if s and s in ln:
            return ln.strip()[:160]
    return (s or "")[:160]


missed = [m for m in pos if m["file"] not in findings]
print("\nMISSED POSITIVES (%d):" % len(missed))
for m in missed:
    print("  %s [%s] %s" % (m["file"], m["family"], secret_line(m)))
print("\nFALSE ALARMS (%d):" % len(fa))
for m in fa:
    print("  %s [%s]" % (m["file"], m["family"]))
    for ln in findings[m["file"]]:
        print("      " + ln[:200])

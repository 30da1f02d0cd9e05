#!/usr/bin/env python3
"""Scan /tmp/blind3/out_SEED with the scanner and score it against manifest.json.

usage: python3 score.py SEED [SEED...]     (scanner: env HAVEN_BIN, default /work/main/build/haven)
A positive counts as found when any finding names its file; any finding in a neg file is a false alarm.
Raw scanner output is kept in out_SEED/scan.stdout / scan.stderr.
"""
import json, os, re, subprocess, sys, time

BIN = os.environ.get("HAVEN_BIN", "/work/main/build/haven")
BASE = "/tmp/blind3"
LINE_RE = re.compile(r"^(.*?):(\d+):(\d+): ([^:]+): (.*)$")


def run_scan(out):
    t0 = time.time()
    cmd = [BIN, "--jobs", "1", "scan", os.path.join(out, "pos"), os.path.join(out, "neg")]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    if p.returncode not in (0, 1) and not p.stdout:
        cmd = [BIN, "scan", os.path.join(out, "pos"), os.path.join(out, "neg")]
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    open(os.path.join(out, "scan.stdout"), "w").write(p.stdout)
    open(os.path.join(out, "scan.stderr"), "w").write(p.stderr)
    return p, time.time() - t0


def score(seed):
    out = os.path.join(BASE, f"out_{seed}")
    man = json.load(open(os.path.join(out, "manifest.json")))
    byfile = {os.path.realpath(os.path.join(out, e["file"])): e for e in man}
    p, dt = run_scan(out)
    findings = {}
    unparsed, stray = [], []
    for ln in p.stdout.splitlines():
        m = LINE_RE.match(ln)
        if not m:
            unparsed.append(ln)
            continue
        path, line, col, rule, exc = m.groups()
        rp = os.path.realpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
        if rp not in byfile:
            stray.append(ln)
            continue
        findings.setdefault(rp, []).append((int(line), int(col), rule.strip(), exc))
    posents = [e for e in man if e["kind"] == "pos"]
    negents = [e for e in man if e["kind"] == "neg"]
    miss, offline, fa = [], [], []
    for e in posents:
        fs = findings.get(os.path.realpath(os.path.join(out, e["file"])))
        if not fs:
            miss.append(e)
        elif not any(f[0] == e["line"] for f in fs):
            offline.append((e, fs))
    for e in negents:
        for f in findings.get(os.path.realpath(os.path.join(out, e["file"])), []):
            fa.append((e, f))
    fa_files = len({e["id"] for e, _ in fa})
    print(f"== seed {seed}: exit {p.returncode}, {dt:.1f}s | positives {len(posents)}: found {len(posents) - len(miss)}, "
          f"missed {len(miss)} | negatives {len(negents)}: false-alarm files {fa_files}, false-alarm findings {len(fa)}")
    print(f"   scanner summary: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else '(none)'}")
    print("-- FALSE ALARMS (neg file:line  rule  | label | excerpt)")
    for e, (line, col, rule, exc) in fa:
        print(f"   neg/{e['id']}/{e['path']}:{line}  {rule}  | {e['label']} | {exc[:90]}")
    print("-- MISSES (pos file:line | label | line text)")
    for e in miss:
        print(f"   pos/{e['id']}/{e['path']}:{e['line']} | {e['label']} | {e['line_text'][:120]}")
    if offline:
        print("-- found, but no finding on the secret's line (info)")
        for e, fs in offline:
            print(f"   pos/{e['id']}/{e['path']}: secret line {e['line']}, findings at {[(f[0], f[2]) for f in fs][:4]}")
    for what, lst in (("unparsed stdout lines", unparsed), ("findings outside manifest", stray)):
        if lst:
            print(f"-- {what}: {len(lst)}")
            for ln in lst[:5]:
                print("   " + ln[:160])
    return len(miss), len(fa)


if __name__ == "__main__":
    seeds = sys.argv[1:] or ["7", "8"]
    for s in seeds:
        score(s)

#!/usr/bin/env python3
"""usage: HAVEN_BIN=/path/to/bin python3 score.py SEED"""
import sys, os, json, re, subprocess

LINE = re.compile(r"^(.*?):(\d+):(\d+): ([^:\s]+): ?(.*)$")


def main():
    seed = int(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)
    out = "out_%d" % seed
    if not os.path.exists(os.path.join(out, "manifest.json")):
        subprocess.run([sys.executable, "gen.py", str(seed)], check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    needles = json.load(open(os.path.join(out, "needles.json")))
    binp = os.environ.get("HAVEN_BIN", "/tmp/haven_probe_bin2")
    p = subprocess.run([binp, "scan", out + "/pos", out + "/neg"], capture_output=True, text=True)
    by_file, unparsed = {}, []
    marker = out + "/"
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            if line.strip():
                unparsed.append(line)
            continue
        path = m.group(1)
        i = path.find(marker)
        rel = path[i + len(marker):] if i >= 0 else path
        rel = rel.lstrip("./")
        by_file.setdefault(rel, []).append(line)
    pos = [e for e in manifest if e["kind"] == "pos"]
    neg = [e for e in manifest if e["kind"] == "neg"]
    found = [e for e in pos if e["file"] in by_file]
    missed = [e for e in pos if e["file"] not in by_file]
    fas = [e for e in neg if e["file"] in by_file]
    print("seed %d: found %d of %d, false alarms %d files" % (seed, len(found), len(pos), len(fas)))
    print("(scanner exit %d; %d negatives; stderr: %s)" % (p.returncode, len(neg), p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""))
    known = {e["file"] for e in manifest}
    stray = [f for f in by_file if f not in known]
    if unparsed or stray:
        print("unparsed output lines: %d, findings for unknown files: %d" % (len(unparsed), len(stray)))
        for l in unparsed[:5]:
            print("  ?", l[:200])
    print("\nMISSED POSITIVES (%d):" % len(missed))
    for e in missed:
        needle = needles.get(e["file"], "")
        txt = open(os.path.join(out, e["file"]), encoding="utf-8", errors="replace", newline="").read()
        sline, lno = "", 0
        for n, l in enumerate(txt.splitlines(), 1):
            if needle and needle in l:
                sline, lno = l.strip(), n
                break
        if len(sline) > 150:
            sline = sline[:147] + "..."
        print("- %s [%s] L%d: %s" % (e["file"], e["family"], lno, sline))
        print("    note: %s" % e["note"][:160])
    print("\nFALSE ALARMS (%d):" % len(fas))
    for e in fas:
        print("- %s [%s] (%s)" % (e["file"], e["family"], e["note"]))
        for l in by_file[e["file"]]:
            m = LINE.match(l)
            print("    L%s: %s: %s" % (m.group(2), m.group(4), m.group(5)[:140]))


if __name__ == "__main__":
    main()

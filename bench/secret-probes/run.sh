#!/bin/sh
# Outsider probes of the secret scanner: generators of home-directory files, each written by
# a helper that did not read the rules (p1: dotfiles and configs of many tools, 150 secret
# files and 130 look-alikes a seed; p2: CI, IDE, framework and shell files, 120 and 100; p3:
# hard look-alikes and messy files, 100 and 126; p4: 264 providers' token formats in many
# contexts, 142 look-alikes; p5: a power user's application files (mail, chat, network,
# wallets, sessions), 180 and 130; p6: deployment and application configuration and
# encodings (Kubernetes, Compose, CloudFormation, JDBC, HAProxy, base64 in base64), 244 and
# 180; p7: shell and client histories, notes in several languages, chats, password
# manager exports, recovery codes, 140 and 120; p8: a developer's and a sysadmin's home
# as a generic scanner test would sample it, 233 and 181; p9: roles the others sample
# little: a data scientist, a mobile developer, a network engineer, a streamer, a trader, a
# web designer, a student and an SRE, 200 and 160; p10: false alarms first, code, templates,
# docs, logs, lockfiles, public keys, hashes and encrypted blobs beside secrets in the same
# kinds of files, 100 and 300; p11: a home directory sampled as widely as its writer could,
# 160 and 130; p12: AI and developer platforms' keys of 2023-2026 where their tools keep them,
# MCP and agent configs, notebooks, 160 and 130; p13: the bytes beyond tidy UTF-8, UTF-16
# .reg and PowerShell files, CRLF, escapes, long lines, SQLite and LevelDB files, 150 and
# 130). Every secret is random, in its real format. A positive
# counts as found when a finding names its file; any finding in a look-alike is a false
# alarm.
#
#   bench/secret-probes/run.sh [HAVEN] [SEED...]     (default build/haven; seeds 1 2 3)
#
# Each probe works in /tmp/blind, /tmp/blind2 ... /tmp/blind13. Needs python3 and
# python3-cryptography (p3, p4 and p5 make real key and certificate formats). p5's seed-
# phrase cases read the BIP-39 and Monero English word lists from p5/data/
# (bip39_english.txt, monero_english.txt: published lists, not kept here; p5 is left out
# with a message when they are missing; p9 reads the BIP-39 list from there too). Not part of make test: a measurement, like
# bench/scan-tree.sh; the figures are in the notes of the stops that used them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
haven=$(realpath "${1:-build/haven}")
[ $# -gt 0 ] && shift
seeds=${*:-1 2 3}
for p in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
  dir=/tmp/blind; [ "$p" = 1 ] || dir=/tmp/blind$p
  if [ "$p" = 5 ] && [ ! -f "$here/p5/data/bip39_english.txt" -o ! -f "$here/p5/data/monero_english.txt" ]; then
    echo "p5 left out: p5/data/bip39_english.txt and p5/data/monero_english.txt are missing"
    continue
  fi
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$here/p$p"/* "$dir/" && rm -rf "$dir"/out_*
  # (p9 to p13 score as p8 does: its score.py)
  [ -f "$dir/score.py" ] || cp "$here/p8/score.py" "$dir/"
  if [ "$p" = 9 ]; then
    if [ ! -f "$here/p5/data/bip39_english.txt" ]; then
      echo "p9 left out: p5/data/bip39_english.txt is missing"; continue
    fi
    mkdir -p "$dir/data" && cp "$here/p5/data/bip39_english.txt" "$dir/data/"
  fi
  for s in $seeds; do
    (cd "$dir" && python3 gen.py "$s" > /dev/null 2>&1)
    case $p in
      1) "$haven" scan "$dir/out_$s" > "$dir/found_$s.txt" 2>&1 || true
         (cd "$dir" && python3 score.py "$s" 2>/dev/null | head -1) ;;
      2) (cd "$dir" && HAVEN_BIN="$haven" python3 score.py "$s" | grep '^seed') ;;
      *) (cd "$dir" && HAVEN_BIN="$haven" python3 score.py "$s" 2>/dev/null | head -1) ;;
    esac | sed "s/^/p$p /"
  done
done

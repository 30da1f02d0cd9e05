#!/usr/bin/env python3
"""Prints kCommonPairs for src/capture/scanner.cc: the letter pairs common in English words
and identifiers. A pair is common when it makes at least 2 in 10,000 of the letter pairs
inside the words of the manual pages (sections 1 and 5) and the C headers installed here;
words are split at case changes (HTTPServer -> http, server) and at anything not a letter.
Row a of the table has bit b set when the pair (a, b) is common."""
import collections
import glob
import gzip
import re
import string

WORD = re.compile(r'[A-Z]?[a-z]+|[A-Z]+(?![a-z])')


def count(pairs, text):
    for run in re.findall(r'[A-Za-z]+', text):
        for word in WORD.findall(run):
            w = word.lower()
            pairs.update(a + b for a, b in zip(w, w[1:]))


def main():
    pairs = collections.Counter()
    for path in glob.glob('/usr/share/man/man[15]/*.gz'):
        with gzip.open(path) as f:
            count(pairs, f.read().decode('utf-8', 'replace'))
    for path in sorted(glob.glob('/usr/include/**/*.h', recursive=True)):
        with open(path, errors='replace') as f:
            count(pairs, f.read())
    total = sum(pairs.values())
    rows = []
    for a in string.ascii_lowercase:
        bits = 0
        for j, b in enumerate(string.ascii_lowercase):
            if pairs[a + b] * 10000 >= 2 * total:
                bits |= 1 << j
        rows.append(bits)
    print(f'// {total} pairs counted; {sum(bin(r).count("1") for r in rows)} of 676 common')
    print('constexpr uint32_t kCommonPairs[26] = {')
    print('    ' + ', '.join(f'0x{r:07x}' for r in rows) + '};')


if __name__ == '__main__':
    main()

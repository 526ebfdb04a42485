#!/usr/bin/env python3
"""deploy/long_functions.py - the C functions of the product longer than a limit.

    deploy/long_functions.py [LIMIT]    (default 120 lines)

Reads every tracked *.c and *.h outside tests/, fuzz/ and bench/; a function
runs from the line its definition starts on (column 0) to its closing brace
at column 0, the house style's layout. Prints "LINES FILE:LINE NAME" per
function over the limit, longest first, then their count on stderr; exits 0
(a report, not a gate).
"""
import re
import subprocess
import sys


def long_functions(limit):
    files = subprocess.run(['git', 'ls-files', '*.c', '*.h'], capture_output=True,
                           text=True, check=True).stdout.split()
    out = []
    for path in files:
        if path.startswith(('tests/', 'fuzz/', 'bench/')):
            continue
        with open(path, errors='replace') as f:
            lines = f.read().split('\n')
        i = 0
        while i < len(lines):
            if lines[i] == '{':
                start = i - 1	# back to the line the signature starts on
                while start > 0 and (lines[start].startswith((' ', '\t')) or not lines[start]):
                    start -= 1
                end = i + 1
                while end < len(lines) and lines[end] != '}':
                    end += 1
                name = re.search(r'(\w+)\s*\(', lines[start])
                if end - start + 1 > limit:
                    out.append((end - start + 1, path, start + 1,
                                name.group(1) if name else '?'))
                i = end
            i += 1
    return sorted(out, reverse=True)


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    found = long_functions(limit)
    for n, path, line, name in found:
        print(f'{n:5d} {path}:{line} {name}')
    print(f'{len(found)} functions over {limit} lines', file=sys.stderr)


if __name__ == '__main__':
    main()

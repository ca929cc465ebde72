#!/usr/bin/env python3
"""Check the house rules of src/ that the compiler does not:

- every .c file is in the module map of src/module.c, and calls only
  functions of the files above it in the map (no circles); module.c, the
  entry point, is in the map too, last, with no exemption;
- every function definition has a comment just above it;
- a private header is included only by the files it belongs to (PRIVATE);
- a file of more than LONG lines says in its header comment why it is one
  file, and how long ("... some 890 lines ...", within a tenth of its
  length), so that the reason is renewed when the file grows.

Calls are all it sees: test/check-symbols.py checks the global variables.

Exits non-zero, listing what is wrong.  Run from the top of the tree.
"""
import glob
import os
import re
import sys

SRC = 'src'

# headers whose declarations only these files may see: a guard slot's
# fields, and the WAL records' formats (each header says why)
PRIVATE = {
    'slot_internal.h': {'shmem.c', 'slot.c'},
    'wal_internal.h': {'wal.c', 'walredo.c'},
}

# a file longer than this needs its reason in its header
LONG = 600


def strip(code):
    """Code without comments and string or character literals."""
    code = re.sub(r'/\*.*?\*/', ' ', code, flags=re.S)
    code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
    return re.sub(r"'(\\.|[^'\\])*'", "''", code)


def main():
    files = sorted(glob.glob(os.path.join(SRC, '*.c')))
    mapped = re.findall(r'^ \*\t([a-z0-9_]+\.c)\b',
                        open(os.path.join(SRC, 'module.c')).read(), re.M)
    pos = {name: i for i, name in enumerate(mapped)}
    problems = []
    defs = {}
    for f in files:
        text = open(f).read()
        name = os.path.basename(f)
        if name not in pos:
            problems.append('%s is not in the module map of src/module.c' % name)
        lines = text.split('\n')
        for i, line in enumerate(lines):
            m = re.match(r'^([a-z_][a-z0-9_]*)\(', line)
            if not m or line.rstrip().endswith(';'):
                continue
            defs.setdefault(m.group(1), set()).add(name)
            # the comment ends on the line above the return type
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith('*/'):
                j -= 1
            if j < 0 or not lines[j].rstrip().endswith('*/'):
                problems.append('%s:%d: %s() has no comment above it' % (f, i + 1, m.group(1)))
    for f in files:
        name = os.path.basename(f)
        if name not in pos:
            continue
        code = strip(open(f).read())
        for func, owners in defs.items():
            if name in owners or not re.search(r'\b' + func + r'\s*\(', code):
                continue
            for owner in owners:
                if owner in pos and pos[owner] > pos[name]:
                    problems.append('%s calls %s() of %s, which comes after it in the module map (a higher floor)'
                                    % (name, func, owner))
    for f in sorted(glob.glob(os.path.join(SRC, '*.[ch]'))):
        name = os.path.basename(f)
        for inc in re.findall(r'^#include "([^"]+)"', open(f).read(), re.M):
            if inc in PRIVATE and name != inc and name not in PRIVATE[inc]:
                problems.append('%s includes %s, which only %s may include'
                                % (name, inc, ' and '.join(sorted(PRIVATE[inc]))))
    for f in sorted(glob.glob(os.path.join(SRC, '*.[ch]'))):
        text = open(f).read()
        n = text.count('\n')
        if n <= LONG:
            continue
        header = text[:text.find('*/')]
        m = re.search(r'\bsome (\d+)(?:\s|\*)+lines\b', header)
        if not m:
            problems.append('%s has %d lines and its header does not say why it is one file ("some N lines")'
                            % (f, n))
        elif abs(int(m.group(1)) - n) > n / 10:
            problems.append('%s has %d lines; its header says some %s'
                            % (f, n, m.group(1)))
    for p in problems:
        print(p)
    print('%d files, %d functions: %s' % (len(files), len(defs),
                                         'ok' if not problems else '%d problems' % len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

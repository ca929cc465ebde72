#!/usr/bin/env python3
"""Check, on the built objects, that no global data crosses files unsaid.

check-layers.py sees only calls.  A global variable defined in one file and
read or written in another is a path between files that no call shows, so
every data symbol (nm types B, C, D, G, R, S, V and u: bss, common,
initialized, small, read-only, weak and unique objects) that one src/*.o
defines and another src/*.o uses (nm type U) must say why, where it is
defined: the comment that ends on the line above its definition in
src/<file>.c (or above the run of lines, with no blank line between, that
ends in the definition) must contain

    Read by other files: NAMES, and why

where NAMES names every file that uses it (e.g. "planner.c").  Anything
else is better done by an accessor function in the defining file, which
check-layers.py then sees.

Exits non-zero, listing the symbols without such a comment.  Run from the
top of the tree after the build (make): it reads src/*.o with nm.
"""
import glob
import os
import re
import subprocess
import sys

SRC = 'src'
MARKER = 'Read by other files:'
DATA_TYPES = set('BCDGRSVu')


def symbols(obj):
    """(defined data symbols, undefined symbols) of one object."""
    out = subprocess.run(['nm', obj], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in DATA_TYPES:
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            used.add(parts[1])
    return defined, used


def comment_above(lines, i):
    """The comment that ends just above line i (through a run of non-blank
    lines), or None."""
    j = i - 1
    while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith('*/'):
        j -= 1
    if j < 0 or not lines[j].rstrip().endswith('*/'):
        return None
    k = j
    while k >= 0 and '/*' not in lines[k]:
        k -= 1
    return '\n'.join(lines[max(k, 0):j + 1])


def stated(source, sym, readers):
    """None if the definition of sym in source carries the marker naming
    every reader; else what is missing."""
    if not os.path.exists(source):
        return 'no %s to find its definition in' % source
    lines = open(source).read().split('\n')
    pattern = re.compile(r'^(?!extern\b|static\b)[A-Za-z_][\w\s\*]*\b' +
                         re.escape(sym) + r'\s*(\[[^\]]*\]\s*)*(=|;)')
    for i, line in enumerate(lines):
        if not pattern.match(line):
            continue
        comment = comment_above(lines, i)
        if comment is None or MARKER not in comment:
            return 'no "%s" comment above its definition (%s:%d)' % (MARKER, source, i + 1)
        said = comment[comment.index(MARKER):]
        missing = [r for r in readers if not re.search(r'\b' + re.escape(r) + r'\b', said)]
        if missing:
            return 'its "%s" comment (%s:%d) does not name %s' % (
                MARKER, source, i + 1, ', '.join(missing))
        return None
    return 'no definition found in %s' % source


def main():
    objs = sorted(glob.glob(os.path.join(SRC, '*.o')))
    if not objs:
        print('no %s/*.o: build first (make)' % SRC)
        return 2
    defined, used = {}, {}
    for obj in objs:
        name = os.path.basename(obj)[:-2]
        d, u = symbols(obj)
        for sym in d:
            defined.setdefault(sym, []).append(name)
        used[name] = u
    problems = []
    shared = 0
    for sym in sorted(defined):
        owners = defined[sym]
        readers = sorted(n + '.c' for n, u in used.items() if sym in u and n not in owners)
        if not readers:
            continue
        shared += 1
        for owner in owners:
            why = stated(os.path.join(SRC, owner + '.c'), sym, readers)
            if why:
                problems.append('%s, defined in %s.c and used in %s: %s'
                                % (sym, owner, ', '.join(readers), why))
    for p in problems:
        print(p)
    print('%d objects, %d data symbols used by other files: %s'
          % (len(objs), shared, 'ok' if not problems else '%d without a stated reason' % len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

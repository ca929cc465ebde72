#!/usr/bin/python3
# Compare the result files of two runs of PostgreSQL's regression suite on
# guarded tables (test/core-regress.sh): OFF with the planner path off, ON
# with it on.  Every difference must be a plan line; anything else (a row,
# an error, a notice, a crash) fails.
#
#   core-compare.py OFF/results ON/results
#
# Plan lines are the rows of an EXPLAIN output, or of a function of the
# suite that returns one (explain_filter(), explain_memoize(), ...): a
# one-column psql table some row of which, in ON, is the BloomGuard
# node.  Such a table of ON is compared with OFF's after these changes:
#
#   - the node's line and its own properties (Key Checks, Answered by
#     Filter, Index Scan Skipped, Output) are removed, and its child, the
#     index scan, moved up into its place (re-indented, with the node's
#     arrow, and the node's row count and loops of EXPLAIN ANALYZE: the
#     node returns what OFF's scan returned);
#   - a child that EXPLAIN ANALYZE shows as skipped ("Index Scan Skipped:
#     t_pkey") stands for OFF's scan of that index, whatever its lines but
#     the first (the same row count and loops as the node's);
#   - below the child's first line, and below OFF's scan in its place, the
#     row counts and loops of EXPLAIN ANALYZE ("actual rows=N loops=N",
#     "never executed") and the counters of rows that an executed scan
#     alone has ("Rows Removed by ...", "Heap Fetches", "Buffers") are left
#     out: the node runs its child only for keys the filter does not rule
#     out;
#   - a Result above the node that only projects (one that OFF's plan does
#     not have: the node cannot project) is removed the same way;
#   - the header, the dashes and "(N rows)" are left out (their widths and
#     counts follow the rows).
#
# A table of ON with the node that still differs from OFF's is another
# plan the planner chose with the node in its path lists (join.out's joins
# of the three-row tables j1 and j2 cost the same either way round, and
# add_path() breaks the tie by parallel safety, which a path with the node
# never has): plan lines too, counted and named by file and line, not
# failed.
# A plan table without the node must be equal: where the node is not
# chosen, the costs are OFF's.
#
# Everything else, outside those tables, must be equal, but
# for one thing of the harness's own: the OID of its event trigger's
# function, which opr_sanity lists among the functions that are SECURITY
# DEFINER (a new one in each run's database), is not compared.  A crash
# shows as a difference (the connection lost, "in recovery mode").
# Prints per file what differed, the count of plan tables that differed
# only in plan lines, and exits 1 on any other difference.
import difflib
import os
import re
import sys

NODE = re.compile(r'^(\s*)(->  )?Custom Scan \(BloomGuard\)')
SCAN = re.compile(r'^(\s*)(->  )?(Index Scan|Index Only Scan)( Backward)? using (\S+)')
NODE_PROPS = re.compile(r'^\s*(Key Checks|Answered by Filter|Index Scan Skipped|Output|Custom Plan Provider):')
EXEC_PROPS = re.compile(r'^\s*(Rows Removed by [A-Za-z ]+|Heap Fetches|Buffers):')
HARNESS = re.compile(r'\b\d+ \| bloomguard_guard_all\b')
ACTUAL = re.compile(r'\((actual (time=\S+ )?rows=\d+ loops=\d+|never executed)\)')


def indent(line):
    return len(line) - len(line.lstrip(' '))


def tables(lines):
    """The one-column psql tables: (first row index, end index) of their rows."""
    out = []
    i = 0
    while i + 1 < len(lines):
        # psql's header, padded to the column's width, and as many dashes
        if re.match(r'^-+$', lines[i + 1]) and len(lines[i]) == len(lines[i + 1]) \
                and lines[i].startswith(' ') and '|' not in lines[i]:
            j = i + 2
            while j < len(lines) and not re.match(r'^\(\d+ rows?\)$', lines[j]):
                j += 1
            if j < len(lines):
                out.append((i, i + 2, j))
                i = j + 1
                continue
        i += 1
    return out


def children_start(row):
    """The column where a node's properties and children start."""
    return indent(row) + (4 if row.lstrip().startswith('->  ') else 0) + 2


def mask(line):
    return ACTUAL.sub('(actual ...)', line).rstrip()


def unwrap(rows):
    """ON's plan rows without the node (see the file header); the child's
    lines marked as such.  Returns a list of (text, kind): kind 'plain',
    'child' (a line of the node's child, masked), or 'skipped' (a child
    ANALYZE skipped: text is the index's name)."""
    out = []
    i = 0
    while i < len(rows):
        row = rows[i]
        m = NODE.match(row)
        if not m:
            out.append((row.rstrip(), 'plain'))
            i += 1
            continue
        prefix = m.group(1) + (m.group(2) or '')
        actual = ACTUAL.search(row)
        actual = actual.group(0) if actual else None
        col = children_start(row)
        j = i + 1
        skipped = None
        while j < len(rows) and indent(rows[j]) == col and not rows[j].lstrip().startswith('->  '):
            s = re.match(r'^\s*Index Scan Skipped: (\S+)', rows[j])
            if s:
                skipped = s.group(1)
            elif not NODE_PROPS.match(rows[j]):
                break
            j += 1
        if j < len(rows) and indent(rows[j]) == col and rows[j].lstrip().startswith('->  '):
            end = j + 1
            while end < len(rows) and indent(rows[end]) > col:
                end += 1
            # the child's line with the node's row count: the node returns
            # what the scan would have
            head = prefix + rows[j].lstrip()[4:]
            if actual:
                head = ACTUAL.sub(lambda _: actual, head)
            out.append((head.rstrip(), 'head'))
            for k in range(j + 1, end):
                if not EXEC_PROPS.match(rows[k]):
                    out.append((mask(rows[k][6:]), 'child'))
            i = end
        else:
            out.append((prefix + '\0' + (actual or ''), 'skipped:' + (skipped or '?')))
            i = j
    return drop_results(out)


def drop_results(out):
    """Remove a Result that only projects above the node's former place:
    a Result line with no properties but Output, whose only child is a
    line of the node's child."""
    res = []
    i = 0
    while i < len(out):
        text, kind = out[i]
        m = re.match(r'^(\s*)(->  )?Result$', text)
        if kind == 'plain' and m:
            col = indent(text) + (4 if text.lstrip().startswith('->  ') else 0) + 2
            j = i + 1
            while j < len(out) and indent(out[j][0]) == col and out[j][0].lstrip().startswith('Output:'):
                j += 1
            if j < len(out) and (out[j][1] == 'head' or out[j][1].startswith('skipped')) \
                    and indent(out[j][0]) == col:
                end = j + 1
                while end < len(out) and indent(out[end][0]) > col:
                    end += 1
                # nothing else below the Result: its only child
                if end == len(out) or indent(out[end][0]) < col:
                    prefix = m.group(1) + (m.group(2) or '')
                    head = out[j][0].lstrip()
                    head = head[4:] if head.startswith('->  ') else head
                    if out[j][1] == 'head':
                        res.append((prefix + head, 'head'))
                    else:
                        res.append((prefix + head[head.index('\0'):], out[j][1]))
                    for k in range(j + 1, end):
                        res.append((out[k][0][6:], out[k][1]))
                    i = end
                    continue
        res.append((text, kind))
        i += 1
    return res


def plan_equal(off_rows, on_rows):
    """Do OFF's plan rows equal ON's, but for plan lines?"""
    on = unwrap(on_rows)
    i = 0
    in_child = False
    for text, kind in on:
        # below a scan in the node's place, OFF's counters of an executed scan
        while in_child and i < len(off_rows) and EXEC_PROPS.match(off_rows[i]):
            i += 1
        if i >= len(off_rows):
            return False
        off = off_rows[i]
        if kind in ('plain', 'head'):
            if off.rstrip() != text:
                return False
            i += 1
        elif kind == 'child':
            if mask(off) != text:
                return False
            i += 1
        else:
            # OFF's scan of that index, at the node's place, whole
            index = kind.split(':', 1)[1]
            prefix, actual = text.split('\0')
            m = SCAN.match(off)
            a = ACTUAL.search(off)
            if not m or (m.group(1) + (m.group(2) or '')) != prefix or \
                    (index != '?' and m.group(5) != index) or \
                    (a.group(0) if a else '') != actual:
                return False
            col = children_start(off)
            i += 1
            while i < len(off_rows) and indent(off_rows[i]) >= col:
                i += 1
        in_child = kind in ('head', 'child')
    while in_child and i < len(off_rows) and EXEC_PROPS.match(off_rows[i]):
        i += 1
    return i == len(off_rows)


def compare(off_lines, on_lines):
    """(plan tables that differed only by the node, line numbers in ON of
    plan tables with the node whose plan differs beyond it, other
    differences as unified diff lines) of one result file."""
    off_t = tables(off_lines)
    on_t = tables(on_lines)
    plan_only = 0
    changed = []
    # replace each plan table of ON that matches OFF's table at the same
    # place (by the text before it) with OFF's, so that what remains
    # different is what is not a plan line
    fixed = list(on_lines)
    shift = 0
    sm = difflib.SequenceMatcher(None, off_lines, on_lines, autojunk=False)
    mapping = {}
    for tag, a1, a2, b1, b2 in sm.get_opcodes():
        if tag == 'equal':
            for k in range(a2 - a1):
                mapping[b1 + k] = a1 + k
    off_by_head = {h: (h, r, e) for h, r, e in off_t}
    for h, r, e in on_t:
        rows = on_lines[r:e]
        if not any(NODE.match(x) for x in rows):
            continue
        # OFF's table: the one whose header line maps to this one's, or
        # the one after the same statement
        a = mapping.get(h - 1)
        cand = [t for t in off_t if a is not None and t[0] == a + 1]
        if not cand:
            continue
        oh, orr, oe = cand[0]
        if on_lines[h].strip() != off_lines[oh].strip():
            continue
        if plan_equal(off_lines[orr:oe], rows):
            plan_only += 1
        else:
            # another plan chosen with the node in the path lists (a
            # join order): still plan lines, counted and named apart
            changed.append(h + 1)
        fixed[h + shift:e + 1 + shift] = off_lines[oh:oe + 1]
        shift += (oe - oh) - (e - h)
    diff = list(difflib.unified_diff(off_lines, fixed, 'off', 'on', n=2, lineterm=''))
    return plan_only, changed, diff


def main():
    off_dir, on_dir = sys.argv[1], sys.argv[2]
    names = sorted(set(os.listdir(off_dir)) | set(os.listdir(on_dir)))
    plan_tables = 0
    files_plan = 0
    replanned = []
    bad = []
    for name in names:
        if not name.endswith('.out'):
            continue
        paths = [os.path.join(d, name) for d in (off_dir, on_dir)]
        if not all(os.path.exists(p) for p in paths):
            bad.append((name, ['only in one run']))
            continue
        off_lines, on_lines = ([HARNESS.sub('N | bloomguard_guard_all', line) for line in
                                open(p, errors='replace').read().split('\n')] for p in paths)
        if off_lines == on_lines:
            continue
        n, changed, diff = compare(off_lines, on_lines)
        plan_tables += n
        files_plan += n > 0
        replanned += ['%s:%d' % (name, line) for line in changed]
        if diff:
            bad.append((name, diff))
    print('%d result files compared; %d plan tables in %d files differ in plan lines only'
          % (sum(1 for n in names if n.endswith('.out')), plan_tables, files_plan))
    print('%d plan tables with the node differ beyond it (another plan chosen with the node)%s'
          % (len(replanned), ': ' + ' '.join(replanned) if replanned else ''))
    for name, diff in bad:
        print('DIFFERENCE in %s (first 60 lines):' % name)
        for line in diff[:60]:
            print('  ' + line)
    print('other differences: %d files%s' % (len(bad), ': ' + ' '.join(n for n, _ in bad) if bad else ''))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

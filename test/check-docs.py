#!/usr/bin/env python3
#
# check-docs.py: the house rules of the Markdown documentation.
#
#   python3 test/check-docs.py [TOP]
#
# - In every Markdown file of the tree (README.md, CHANGELOG.md,
#   test/README.md, doc/**/*.md), every relative link names a file or
#   directory that exists, and every #anchor names a heading of the file it
#   points into (GitHub's anchors: lower case, punctuation dropped, spaces
#   to hyphens, -1, -2 for repeats).
# - README.md names no issue numbers and no commits: it is written for its
#   users, and the history is CHANGELOG.md's.
# - README.md's Reference matches the code: the functions table and the
#   objects table name every function the SQL scripts leave installed (and
#   the functions table each signature once); the columns tables of
#   bloomguard_health and bloomguard_distributed_health list each view's
#   columns, in order, as the newest script defines it; the settings table lists every setting src/ defines
#   with DefineCustom*Variable, with its context, and a boolean's default.
#
# Prints one line per problem and exits 1 if there was any.  Run by the
# layers suite of test/run-all.sh; needs no server.
#
# Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.

import os
import re
import sys

problems = []


# Record one problem.
def bad(msg):
    problems.append(msg)


# The Markdown files the project writes (not the benchmark's output).
def markdown_files(top):
    skip = {'.git', 'tmp_check', 'tmp_check_iso', 'output_iso', 'output_discard',
            'results', 'log'}
    out = []
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        dirs[:] = [x for x in dirs if x not in skip and
                   not (rel == 'test/bench' and x == 'out')]
        for f in files:
            if f.endswith('.md'):
                out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


# The text outside fenced code blocks, with inline code spans blanked, line
# by line (so that link syntax shown as code is not taken for a link).
def prose_lines(text):
    fence = False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fence = not fence
            yield ''
            continue
        yield '' if fence else re.sub(r'`[^`]*`', '``', line)


# GitHub's anchors of a file's headings.
def anchors(text):
    seen = {}
    out = set()
    for line in prose_lines_keep_code(text):
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        a = m.group(2).strip().lower()
        a = re.sub(r'[^\w\- ]', '', a)
        a = a.replace(' ', '-')
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else '%s-%d' % (a, n))
    return out


# Like prose_lines, but keeping inline code (headings keep their text).
def prose_lines_keep_code(text):
    fence = False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if not fence:
            yield line


# Every relative link and anchor of every Markdown file resolves.
def check_links(top):
    files = markdown_files(top)
    cache = {}

    def heads(path):
        if path not in cache:
            cache[path] = anchors(open(os.path.join(top, path)).read())
        return cache[path]

    for path in files:
        text = open(os.path.join(top, path)).read()
        for n, line in enumerate(prose_lines(text), 1):
            for m in re.finditer(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)', line):
                target = m.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    continue        # http:, https:, mailto:
                file_part, _, anchor = target.partition('#')
                if file_part:
                    dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if dest.startswith('..') or not os.path.exists(os.path.join(top, dest)):
                        bad('%s:%d: link to %s: no such file' % (path, n, target))
                        continue
                else:
                    dest = path
                if anchor:
                    if not dest.endswith('.md') or os.path.isdir(os.path.join(top, dest)):
                        bad('%s:%d: link to %s: an anchor into a file that is not Markdown' % (path, n, target))
                    elif anchor not in heads(dest):
                        bad('%s:%d: link to %s: no heading with that anchor in %s' % (path, n, target, dest))
    return len(files)


# README.md is for users: no issue numbers, no commits.
def check_no_history(top):
    text = open(os.path.join(top, 'README.md')).read()
    for n, line in enumerate(text.split('\n'), 1):
        if re.search(r'\b[Ii]ssues? #?\d+', line) or re.search(r'(?<![\w/&])#\d+\b', line):
            bad('README.md:%d: names an issue: %s' % (n, line.strip()))
        for m in re.finditer(r'\b[0-9a-f]{7,40}\b', line):
            w = m.group(0)
            if re.search(r'[a-f]', w) and re.search(r'[0-9]', w):
                bad('README.md:%d: names what looks like a commit (%s)' % (n, w))


# The rows of the Markdown table that follows a heading, as lists of cells.
def table_after(text, heading):
    i = text.find('\n' + heading + '\n')
    if i < 0:
        bad('README.md: no heading "%s"' % heading)
        return []
    rows = []
    started = False
    for line in text[i + len(heading) + 2:].split('\n'):
        if line.startswith('|'):
            started = True
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if not all(re.match(r'^:?-+:?$', c) for c in cells):
                rows.append(cells)
        elif started or line.startswith('#'):
            break
    return rows[1:]     # without the header row


# The SQL objects the extension scripts leave, in the order they apply:
# bloomguard--1.0.sql, then each upgrade script along the chain.
def sql_scripts(top):
    d = os.path.join(top, 'sql')
    base = sorted(f for f in os.listdir(d) if re.match(r'^bloomguard--[\d.]+\.sql$', f))
    ups = [f for f in os.listdir(d) if re.match(r'^bloomguard--[\d.]+--[\d.]+\.sql$', f)]
    key = lambda v: [int(x) for x in v.split('.')]
    order = []
    if base:
        v = base[0][len('bloomguard--'):-4]
        order.append(base[0])
        while True:
            nxt = [f for f in ups if f.startswith('bloomguard--%s--' % v)]
            if not nxt:
                break
            f = max(nxt, key=lambda f: key(f.split('--')[2][:-4]))
            order.append(f)
            v = f.split('--')[2][:-4]
    return [open(os.path.join(d, f)).read() for f in order]


# The functions installed at the newest version: {name: [argument lists]}.
def sql_functions(scripts):
    funcs = {}
    for sql in scripts:
        for m in re.finditer(r'^(CREATE(?: OR REPLACE)? FUNCTION|DROP FUNCTION)\s+@extschema@\.(\w+)\s*\(', sql, re.M):
            name = m.group(2)
            # the argument list, up to the matching parenthesis
            depth, j = 1, m.end()
            while depth and j < len(sql):
                depth += {'(': 1, ')': -1}.get(sql[j], 0)
                j += 1
            args = re.sub(r'\s+', ' ', sql[m.end():j - 1]).strip()
            if m.group(1).startswith('DROP'):
                funcs.pop(name, None)
            elif 'OR REPLACE' not in m.group(1) or name not in funcs:
                funcs.setdefault(name, []).append(args)
    return funcs


# The columns of the newest definition of a view: those of its first
# SELECT at the start of a line (after its WITH queries, which are
# indented; a UNION takes its names from its first branch).
def view_columns(scripts, view):
    sql = None
    for s in scripts:
        for m in re.finditer(r'^CREATE(?: OR REPLACE)? VIEW @extschema@\.%s AS\n(.*?);\n' % view, s, re.M | re.S):
            sql = m.group(1)
    if sql is None:
        return []
    outer = sql[sql.index('\nSELECT ') + len('\nSELECT '):]
    outer = outer[:re.search(r'\n\s*FROM\b', outer).start()]
    outer = re.sub(r"'(?:[^']|'')*'", "''", outer)     # no string literals
    items, depth, cur = [], 0, ''
    for tok in re.findall(r"\w+|[(),]|[^\w(),]+", outer):
        up = tok.upper()
        if tok == '(' or up == 'CASE':
            depth += 1
        elif tok == ')' or up == 'END':
            depth -= 1
        if tok == ',' and depth == 0:
            items.append(cur)
            cur = ''
        else:
            cur += tok
    items.append(cur)
    cols = []
    for item in items:
        m = re.search(r'\bAS\s+(\w+)\s*$', item) or re.search(r'(\w+)\s*$', item)
        cols.append(m.group(1))
    return cols


# The settings src/ defines: {name: (context, boolean default or None)}.
def code_settings(top):
    out = {}
    d = os.path.join(top, 'src')
    for f in sorted(os.listdir(d)):
        if not f.endswith('.c'):
            continue
        text = open(os.path.join(d, f)).read()
        for m in re.finditer(r'DefineCustom(\w+)Variable\(\s*"([^"]+)"(.*?)\);', text, re.S):
            kind, name, rest = m.group(1), m.group(2), m.group(3)
            ctx = re.search(r'\bPGC_(\w+)', rest)
            default = None
            if kind == 'Bool':
                dm = re.search(r'&\w+,\s*(true|false)\s*,', rest)
                default = {'true': 'on', 'false': 'off'}[dm.group(1)] if dm else None
            out[name] = (ctx.group(1) if ctx else None, default)
    return out


# README.md's Reference against the SQL scripts and src/.
def check_reference(top):
    text = open(os.path.join(top, 'README.md')).read()
    scripts = sql_scripts(top)
    funcs = sql_functions(scripts)

    documented = {}
    for row in table_after(text, '### Functions'):
        m = re.match(r'^`(\w+)\((.*)\)`$', row[0])
        if not m:
            bad('README.md: functions table: cannot read %r' % row[0])
            continue
        documented.setdefault(m.group(1), []).append(m.group(2))
    objects = ' '.join(r[0] + ' ' + (r[1] if len(r) > 1 else '') for r in table_after(text, '### Objects'))
    for name, sigs in sorted(funcs.items()):
        if name in documented:
            if len(documented[name]) != len(sigs):
                bad('README.md: functions table has %d signature(s) of %s, the SQL scripts %d'
                    % (len(documented[name]), name, len(sigs)))
        elif not re.search(r'\b%s\b' % name, objects) and not (
                name.startswith('bloomguard_untyped_key_') and
                '`_%s`' % name.rsplit('_', 1)[1] in objects):
            bad('README.md: function %s is in neither the functions nor the objects table' % name)
    for name in sorted(set(documented) - set(funcs)):
        bad('README.md: functions table names %s, which the SQL scripts do not create' % name)

    ncols = 0
    for view in ('bloomguard_health', 'bloomguard_distributed_health'):
        want = view_columns(scripts, view)
        ncols += len(want)
        have = [re.sub(r'`', '', r[0]) for r in table_after(text, '### Columns of `%s`' % view)]
        if not want:
            bad('sql: no definition of %s found' % view)
        elif have != want:
            bad('README.md: columns of %s are %s; the view has %s' % (view, have, want))

    ctxname = {'USERSET': 'user', 'SUSET': 'superuser', 'SIGHUP': 'sighup',
               'POSTMASTER': 'postmaster', 'BACKEND': 'backend',
               'SU_BACKEND': 'superuser-backend', 'INTERNAL': 'internal'}
    settings = code_settings(top)
    rows = {re.sub(r'`', '', r[0]): r for r in table_after(text, '### Settings')}
    for name, (ctx, default) in sorted(settings.items()):
        row = rows.get(name)
        if row is None:
            bad('README.md: settings table lacks %s' % name)
            continue
        if len(row) < 3 or not row[2].startswith(ctxname.get(ctx, '?')):
            bad('README.md: %s: context %r, the code says PGC_%s' % (name, row[2] if len(row) > 2 else '', ctx))
        if default is not None and not row[1].startswith(default):
            bad('README.md: %s: default %r, the code says %s' % (name, row[1], default))
    for name in sorted(set(rows) - set(settings)):
        bad('README.md: settings table names %s, which src/ does not define' % name)
    return len(funcs), ncols, len(settings)


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    nfiles = check_links(top)
    check_no_history(top)
    nfuncs, ncols, nsettings = check_reference(top)
    for p in problems:
        print(p)
    if problems:
        print('check-docs: %d problem(s)' % len(problems))
        return 1
    print('check-docs: %d Markdown files, links and anchors resolve; README names no issue or commit; '
          'its reference matches %d functions, %d view columns, %d settings'
          % (nfiles, nfuncs, ncols, nsettings))
    return 0


if __name__ == '__main__':
    sys.exit(main())

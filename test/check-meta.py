#!/usr/bin/env python3
"""Checks META.json against the PGXN Meta Spec 1.0.0 and against the tree.

    python3 test/check-meta.py [TOP]            # META.json of the tree at TOP
    python3 test/check-meta.py TOP --zip FILE   # and the `make dist` archive
    python3 test/check-meta.py TOP --update     # first set META.json's versions
                                                # from bloomguard.control (make meta)

Debian has no PGXN validator package (PGXN::Meta::Validator is not
packaged), so this checks what the spec requires: the required keys
(name, abstract, maintainer, license, provides, meta-spec, version) and
their types, SemVer 1.0.0 versions (the spec's own), a license the spec
names, every provided extension's required file and version, and the types
of the optional keys this file uses.  Against the tree it checks that the
versions agree: META.json's version is bloomguard.control's
default_version with three parts (1.1 is 1.1.0), as is each provided
extension's, and debian/changelog's upstream version is the same; every
file it names exists.  With --zip, that the archive holds the tree under
one directory bloomguard-VERSION/, META.json included.  Prints one line
per problem and exits 1 if there is any.
"""
import json
import os
import re
import sys
import zipfile

# SemVer 1.0.0, which the PGXN spec uses: MAJOR.MINOR.PATCH and an optional
# special version of letters, digits and hyphens, starting with a letter
SEMVER = re.compile(r'^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[A-Za-z][0-9A-Za-z-]*)?$')
# the license strings the spec names
LICENSES = {
    'agpl_3', 'apache_1_1', 'apache_2_0', 'artistic_1', 'artistic_2', 'bsd',
    'freebsd', 'gfdl_1_2', 'gfdl_1_3', 'gpl_1', 'gpl_2', 'gpl_3', 'lgpl_2_1',
    'lgpl_3_0', 'mit', 'mozilla_1_0', 'mozilla_1_1', 'openssl', 'perl_5',
    'postgresql', 'qpl_1_0', 'ssleay', 'sun', 'zlib', 'open_source',
    'restricted', 'unrestricted', 'unknown',
}
RELEASE_STATUS = {'stable', 'testing', 'unstable'}
PHASES = {'configure', 'build', 'test', 'runtime', 'develop'}
RELATIONS = {'requires', 'recommends', 'suggests', 'conflicts'}

problems = []


# Record one problem.
def bad(msg):
    problems.append(msg)


# A term in the spec's sense: a string of at least two characters, with no
# slash, backslash, control character or whitespace.
def is_term(s):
    return isinstance(s, str) and len(s) >= 2 and not re.search(r'[/\\\s\x00-\x1f]', s)


# A version range of prereqs: a SemVer, 0, or operators with versions.
def is_version_range(v):
    if v == 0 or v == '0':
        return True
    if not isinstance(v, str):
        return False
    for part in v.split(','):
        part = re.sub(r'^\s*(==|!=|>=|<=|>|<)?\s*', '', part).strip()
        if not SEMVER.match(part):
            return False
    return True


# A string, or a non-empty list of strings.
def is_strings(v):
    if isinstance(v, str):
        return v != ''
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, str) and x for x in v)


# The checks of the spec itself.
def check_spec(meta):
    for key in ('name', 'abstract', 'maintainer', 'license', 'provides', 'meta-spec', 'version'):
        if key not in meta:
            bad('required key "%s" is missing' % key)
    spec = meta.get('meta-spec')
    if not isinstance(spec, dict) or spec.get('version') != '1.0.0':
        bad('meta-spec must be an object with "version": "1.0.0"')
    if 'name' in meta and not is_term(meta['name']):
        bad('name %r is not a term (2+ characters, no slash, backslash or whitespace)' % meta['name'])
    if 'abstract' in meta and not (isinstance(meta['abstract'], str) and meta['abstract']):
        bad('abstract must be a non-empty string')
    if 'version' in meta and not (isinstance(meta['version'], str) and SEMVER.match(meta['version'])):
        bad('version %r is not a SemVer (MAJOR.MINOR.PATCH)' % meta.get('version'))
    if 'maintainer' in meta and not is_strings(meta['maintainer']):
        bad('maintainer must be a string or a list of strings')
    lic = meta.get('license')
    if isinstance(lic, str):
        if lic not in LICENSES:
            bad('license %r is not one the spec names' % lic)
    elif isinstance(lic, list):
        if not lic or any(x not in LICENSES for x in lic):
            bad('license list %r names a license the spec does not' % lic)
    elif isinstance(lic, dict):
        if not lic or not all(isinstance(u, str) and u.startswith(('http://', 'https://')) for u in lic.values()):
            bad('license object must map names to URLs')
    elif 'license' in meta:
        bad('license must be a string, a list or an object')
    prov = meta.get('provides')
    if 'provides' in meta:
        if not isinstance(prov, dict) or not prov:
            bad('provides must be a non-empty object')
        else:
            for ext, p in prov.items():
                if not is_term(ext):
                    bad('provides: %r is not a term' % ext)
                if not isinstance(p, dict):
                    bad('provides.%s must be an object' % ext)
                    continue
                for key in ('file', 'version'):
                    if key not in p:
                        bad('provides.%s: required key "%s" is missing' % (ext, key))
                if 'version' in p and not (isinstance(p['version'], str) and SEMVER.match(p['version'])):
                    bad('provides.%s.version %r is not a SemVer' % (ext, p['version']))
                for key in ('file', 'docfile', 'abstract'):
                    if key in p and not (isinstance(p[key], str) and p[key]):
                        bad('provides.%s.%s must be a non-empty string' % (ext, key))
    if 'description' in meta and not (isinstance(meta['description'], str) and meta['description']):
        bad('description must be a non-empty string')
    if 'release_status' in meta and meta['release_status'] not in RELEASE_STATUS:
        bad('release_status must be one of %s' % sorted(RELEASE_STATUS))
    if 'tags' in meta and not (isinstance(meta['tags'], list) and meta['tags'] and
                               all(isinstance(t, str) and 0 < len(t) <= 255 for t in meta['tags'])):
        bad('tags must be a list of strings of 1 to 255 characters')
    if 'no_index' in meta:
        ni = meta['no_index']
        if not isinstance(ni, dict) or not set(ni) <= {'file', 'directory'} or \
                not all(is_strings(v) for v in ni.values()):
            bad('no_index must be an object of "file" and "directory" string lists')
    if 'prereqs' in meta:
        pr = meta['prereqs']
        if not isinstance(pr, dict):
            bad('prereqs must be an object')
        else:
            for phase, rels in pr.items():
                if phase not in PHASES or not isinstance(rels, dict):
                    bad('prereqs: %r is not a phase with relations' % phase)
                    continue
                for rel, reqs in rels.items():
                    if rel not in RELATIONS or not isinstance(reqs, dict):
                        bad('prereqs.%s: %r is not a relation with requirements' % (phase, rel))
                        continue
                    for name, rng in reqs.items():
                        if not is_version_range(rng):
                            bad('prereqs.%s.%s.%s: %r is not a version range' % (phase, rel, name, rng))
    for key in meta:
        if key not in ('name', 'abstract', 'maintainer', 'license', 'provides', 'meta-spec',
                       'version', 'description', 'generated_by', 'tags', 'no_index',
                       'prereqs', 'release_status', 'resources') and not key.lower().startswith('x_'):
            bad('unknown key %r (custom keys start with x_)' % key)


# The distribution's version for an extension version: three parts.
def dist_version(ext_version):
    parts = ext_version.split('.')
    return '.'.join(parts + ['0'] * (3 - len(parts)))


# The checks against the tree at top.
def check_tree(meta, top):
    control = os.path.join(top, 'bloomguard.control')
    m = re.search(r"^default_version\s*=\s*'([^']*)'", open(control).read(), re.M)
    if not m:
        bad('bloomguard.control has no default_version')
        return None
    want = dist_version(m.group(1))
    if meta.get('version') != want:
        bad('META.json version %r, but bloomguard.control default_version %r makes %r'
            % (meta.get('version'), m.group(1), want))
    for ext, p in (meta.get('provides') or {}).items():
        if isinstance(p, dict):
            if ext == 'bloomguard' and p.get('version') != want:
                bad('provides.bloomguard.version %r, but the extension is %r' % (p.get('version'), want))
            for key in ('file', 'docfile'):
                if isinstance(p.get(key), str) and not os.path.isfile(os.path.join(top, p[key])):
                    bad('provides.%s.%s: no file %s in the tree' % (ext, key, p[key]))
    changelog = os.path.join(top, 'debian', 'changelog')
    if os.path.isfile(changelog):
        first = open(changelog).readline()
        m = re.match(r'^\S+ \(([^)]*)\)', first)
        upstream = m.group(1).split(':')[-1].rsplit('-', 1)[0] if m else None
        if upstream != want:
            bad('debian/changelog is at %r, the extension at %r (add a changelog entry)' % (upstream, want))
    return want


# The checks of the archive `make dist` made.
def check_zip(path, version):
    prefix = 'bloomguard-%s/' % version
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        outside = [n for n in names if not n.startswith(prefix)]
        if outside:
            bad('%s: %d entries outside %s (%s...)' % (path, len(outside), prefix, outside[0]))
        for need in ('META.json', 'bloomguard.control', 'Makefile', 'LICENSE', 'README.md'):
            if prefix + need not in names:
                bad('%s: no %s%s' % (path, prefix, need))
        if prefix + 'META.json' in names and json.loads(z.read(prefix + 'META.json')).get('version') != version:
            bad('%s: its META.json is not at %s' % (path, version))
    return len(names)


# Set META.json's version, and the extension's in provides, to
# bloomguard.control's default_version, and write it back.
def update(meta, top):
    control = open(os.path.join(top, 'bloomguard.control')).read()
    m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
    if not m:
        return
    want = dist_version(m.group(1))
    meta['version'] = want
    if isinstance(meta.get('provides', {}).get('bloomguard'), dict):
        meta['provides']['bloomguard']['version'] = want
    with open(os.path.join(top, 'META.json'), 'w') as f:
        json.dump(meta, f, indent=3, ensure_ascii=False)
        f.write('\n')


def main():
    args = sys.argv[1:]
    zpath = None
    if '--zip' in args:
        i = args.index('--zip')
        zpath = args[i + 1]
        del args[i:i + 2]
    update_wanted = '--update' in args
    args = [a for a in args if a != '--update']
    top = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    try:
        meta = json.load(open(os.path.join(top, 'META.json')))
    except (OSError, ValueError) as e:
        print('META.json: %s' % e)
        return 1
    if not isinstance(meta, dict):
        print('META.json: not a JSON object')
        return 1
    if update_wanted:
        update(meta, top)
    check_spec(meta)
    version = check_tree(meta, top)
    entries = None
    if zpath and version:
        entries = check_zip(zpath, version)
    for p in problems:
        print('META.json: %s' % p)
    if problems:
        return 1
    print('META.json: valid (PGXN Meta Spec 1.0.0), bloomguard %s%s'
          % (version, ', %s: %d entries' % (os.path.basename(zpath), entries) if entries else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/python3
"""Compare two config-download directories: ours and tripleo-common's.

Usage: compare.py OURS THEIRS

Prints one JSON object:
  only_ours, only_theirs: paths (directories end in "/") in one tree only
                          (.git is left out: git metadata differ by design);
  value_differs:          [{path, detail}] files whose values differ: JSON
                          files (*.json, NetworkConfig) as json.load reads
                          them, *.pp, *.j2 and .gitignore as text, every
                          other file as yaml.safe_load (what Ansible uses)
                          reads it;
  bytes_differ:           paths of files with equal values but other bytes.
"""

import json
import os
import sys

import yaml

TEXT_SUFFIXES = ('.pp', '.j2', '.gitignore')


def tree(root):
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == '.':
            rel = ''
        if '.git' in dirnames and rel == '':
            dirnames.remove('.git')
        for d in dirnames:
            entries[os.path.join(rel, d) + '/'] = None
        for f in filenames:
            with open(os.path.join(dirpath, f), 'rb') as fh:
                entries[os.path.join(rel, f)] = fh.read()
    return entries


def load(path, data):
    base = os.path.basename(path)
    if path.endswith(TEXT_SUFFIXES) or base == '.gitignore':
        return data.decode('utf-8', 'replace')
    if path.endswith('.json') or base == 'NetworkConfig':
        return json.loads(data)
    return yaml.safe_load(data)


def diff(a, b, where='', out=None, limit=10):
    """Where two values differ, as 'path: ours != theirs' lines."""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            p = '%s.%s' % (where, k) if where else str(k)
            if k not in a:
                out.append('%s: missing in ours (theirs %r)' % (p, short(b[k])))
            elif k not in b:
                out.append('%s: not in theirs (ours %r)' % (p, short(a[k])))
            else:
                diff(a[k], b[k], p, out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, '%s[%d]' % (where, i), out, limit)
    elif a != b or type(a) != type(b):
        out.append('%s: ours %r != theirs %r' % (where or '(document)', short(a), short(b)))
    return out


def short(v):
    s = repr(v)
    return s if len(s) < 200 else s[:200] + '...'


def main():
    ours, theirs = tree(sys.argv[1]), tree(sys.argv[2])
    report = {'only_ours': sorted(set(ours) - set(theirs)),
              'only_theirs': sorted(set(theirs) - set(ours)),
              'value_differs': [], 'bytes_differ': []}
    for path in sorted(set(ours) & set(theirs)):
        a, b = ours[path], theirs[path]
        if a == b:
            continue
        try:
            va, vb = load(path, a), load(path, b)
        except Exception as e:  # a file one side cannot read as its kind
            report['value_differs'].append({'path': path, 'detail': 'unreadable: %s' % e})
            continue
        d = diff(va, vb)
        if d:
            report['value_differs'].append({'path': path, 'detail': '; '.join(d)})
        else:
            report['bytes_differ'].append(path)
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()

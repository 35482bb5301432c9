#!/usr/bin/python3
"""Helper of make-debian-text.sh.

  prepare WORK LIMIT  reads WORK/translations.txt and WORK/packages.txt (deb822), writes
                      WORK/corpus.txt (one lower-cased description a line, for fastText) and
                      WORK/items.tsv (section, name, text), one package a line, sorted by name.
  finish WORK         turns WORK/vectors.txt (fastText sentence vectors) into
                      WORK/debian-text.npy and WORK/debian-text.meta.tsv.
"""
import re
import sys

import numpy as np


def stanzas(path):
    block = {}
    key = None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                if block:
                    yield block
                block, key = {}, None
            elif line[0] in ' \t' and key:
                block[key] += '\n' + line[1:]
            elif ':' in line:
                key, value = line.split(':', 1)
                block[key] = value.strip()
    if block:
        yield block


def clean(text):
    lines = [('' if l.strip() == '.' else l.strip()) for l in text.split('\n')]
    return re.sub(r'\s+', ' ', ' '.join(lines)).strip()


def prepare(work, limit):
    sections = {}
    for s in stanzas(f'{work}/packages.txt'):
        if 'Package' in s and 'Section' in s:
            sections.setdefault(s['Package'], s['Section'].split('/')[-1])
    items = {}
    for s in stanzas(f'{work}/translations.txt'):
        name, desc = s.get('Package'), s.get('Description-en')
        if name and desc and name not in items:
            text = clean(desc)
            if len(text.split()) >= 3:
                items[name] = (sections.get(name, 'unknown'), text)
    names = sorted(items)
    if limit > 0:
        names = names[:limit]
    if not names:
        sys.exit('debian_text: no package descriptions found')
    with open(f'{work}/corpus.txt', 'w', encoding='utf-8') as corpus, \
            open(f'{work}/items.tsv', 'w', encoding='utf-8') as out:
        for name in names:
            section, text = items[name]
            words = re.findall(r"[a-z0-9][a-z0-9+.#_-]*", (name + ' ' + text).lower())
            corpus.write(' '.join(words) + '\n')
            out.write(f'{section}\t{name}\t{name}: {text}\n'.replace('\r', ' '))


def finish(work):
    rows = []
    with open(f'{work}/vectors.txt', encoding='utf-8') as f:
        for line in f:
            values = line.split()
            rows.append([float(v) for v in values[-64:]])
    vectors = np.asarray(rows, dtype=np.float32)
    with open(f'{work}/items.tsv', encoding='utf-8') as f:
        items = [l.rstrip('\n') for l in f]
    if len(items) != len(vectors):
        sys.exit(f'debian_text: {len(items)} items but {len(vectors)} vectors')
    np.save(f'{work}/debian-text.npy', vectors)
    with open(f'{work}/debian-text.meta.tsv', 'w', encoding='utf-8') as out:
        out.write('label\tname\ttext\n')
        for line in items:
            out.write(line + '\n')


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'prepare':
        prepare(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 3 and sys.argv[1] == 'finish':
        finish(sys.argv[2])
    else:
        sys.exit(__doc__)

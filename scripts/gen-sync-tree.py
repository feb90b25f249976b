#!/usr/bin/env python3
"""The trees the sync benchmarks walk: N files of LO-HI random lower-case bytes under ROOT, each
starting "file <i> ", modified one second apart from 2020-01-01 (long ago, as a library's files
are). NAMES is plain (d0000/f0000000.txt, a thousand files to a directory) or library (photos,
music and documents named as people name them). The same arguments make the same tree.

Used by scripts/bench-sync.sh and scripts/bench-sync-instructions.sh.
Usage: gen-sync-tree.py ROOT N LO HI plain|library
"""
import os, random, sys
root, n, lo, hi, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rnd = random.Random(1)
letters = bytes(97 + i % 26 for i in range(256))

def plain():
    # d0000/f0000000.txt: a thousand files to a directory.
    for i in range(n):
        yield os.path.join(root, "d%04d" % (i // 1000)), "f%07d.txt" % i

def library():
    # A library's names: photos, music and documents in directories of 5-200 files, with
    # spaces, accents, '&', '#' and dashes outside ASCII, as people name them.
    artists = ["The Band", "Sigur Rós", "Beyoncé", "AC-DC", "Mötley Crüe", "Simon & Garfunkel", "Björk", "Nina Simone"]
    places = ["Provence", "Zürich", "São Paulo", "New York", "Kyoto", "Île de Ré", "Kraków"]
    topics = ["Taxes", "Receipts & invoices", "Letters", "Contracts", "School – reports", "Manuals"]
    seen = set()
    while True:
        kind = rnd.random()
        if kind < 0.5:
            y = rnd.randint(2005, 2024)
            d = os.path.join(root, "Photos", str(y), "%d-%02d %s trip" % (y, rnd.randint(1, 12), rnd.choice(places)))
            batch = ["IMG_%04d%s" % (rnd.randint(0, 9999), rnd.choice([".jpg", ".JPG", ".heic", ".png", " (1).jpg"])) for _ in range(rnd.randint(20, 200))]
        elif kind < 0.8:
            a = rnd.choice(artists)
            d = os.path.join(root, "Music", a, "%s – Live at Home (%d)" % (a, rnd.randint(1970, 2020)))
            batch = ["%02d Track number %d%s" % (k + 1, rnd.randint(1, 999), rnd.choice([".mp3", ".flac"])) for k in range(rnd.randint(8, 20))]
        else:
            d = os.path.join(root, "Documents", rnd.choice(topics), str(rnd.randint(2010, 2024)))
            batch = ["%s #%d – %s%s" % (rnd.choice(["Invoice", "Scan", "Note", "Letter to Ms. Müller"]), rnd.randint(1, 9999),
                     rnd.choice(["final", "draft", "copy"]), rnd.choice([".pdf", ".txt", ".docx", ".md"])) for _ in range(rnd.randint(5, 60))]
        for name in batch:
            if (d, name) not in seen:
                seen.add((d, name))
                yield d, name

made = set()
gen = plain() if names == "plain" else library()
for i in range(n):
    d, name = next(gen)
    if d not in made:
        os.makedirs(d, exist_ok=True)
        made.add(d)
    size = rnd.randint(lo, hi)
    head = ("file %d " % i).encode()
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(head + rnd.randbytes(size - len(head)).translate(letters))
    # Written long ago, as a library's files are: a file modified within SETTLE_TIME is left
    # for a second round of the sync, which on a fast machine would time that wait instead.
    t = 1577836800 + i  # 2020-01-01, one second apart
    os.utime(path, (t, t))

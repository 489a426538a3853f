#!/usr/bin/python3
"""make_gettext_pairs.py OUT.tsv CATALOGUES.txt: English-German sentence pairs from the gettext
catalogues installed on this machine (/usr/share/locale/de/LC_MESSAGES/*.mo, read by Python's
own gettext module), for the translation model of lessons/marian.md.

A pair is a message and its German translation, each with its runs of white space made one
space. Kept: an English side that starts with a letter and holds only letters, spaces and
, . ' ! ? ( ) / : -, at most 8 words and 50 characters; a German side of at most 70 characters
without format or markup characters (% { } < > & _ \\ tab); the two sides different. Each
English message is kept once (the first catalogue in name order that has it). Catalogues that
Python's reader refuses (a wrong charset) are left out. Writes the pairs sorted by the English
side, and the catalogues used with how many pairs each gave.
"""
import gettext
import glob
import os
import re
import sys

ENGLISH = re.compile(r"^[A-Za-z][A-Za-z ,.'!?()/:-]*$")
MARKUP = re.compile(r"[%{}<>&_\\\t]")


def main():
    out, listing = sys.argv[1], sys.argv[2]
    pairs, used = {}, []
    for path in sorted(glob.glob("/usr/share/locale/de/LC_MESSAGES/*.mo")):
        try:
            catalogue = gettext.GNUTranslations(open(path, "rb"))._catalog
        except Exception:
            continue
        n = 0
        for en, de in sorted((k, v) for k, v in catalogue.items() if isinstance(k, str) and isinstance(v, str)):
            en, de = " ".join(en.split()), " ".join(de.split())
            if not en or not de or en == de or en in pairs:
                continue
            if not ENGLISH.match(en) or "--" in en or len(en.split()) > 8 or len(en) > 50:
                continue
            if MARKUP.search(de) or len(de) > 70:
                continue
            pairs[en] = de
            n += 1
        if n:
            used.append((os.path.basename(path), n))
    with open(out, "w", encoding="utf-8") as f:
        for en in sorted(pairs):
            f.write("%s\t%s\n" % (en, pairs[en]))
    with open(listing, "w", encoding="utf-8") as f:
        f.write("# The German gettext catalogues (/usr/share/locale/de/LC_MESSAGES) the pairs came from,\n"
                "# and how many pairs each gave: %d pairs from %d catalogues.\n" % (len(pairs), len(used)))
        for name, n in used:
            f.write("%s\t%d\n" % (name, n))
    print("%d pairs from %d catalogues" % (len(pairs), len(used)))


if __name__ == "__main__":
    main()

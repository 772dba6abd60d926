"""Builds kjv_vocab.txt and kjv_chapters.txt, the King James Bible as an LDA corpus (one
document per chapter), from Debian's bible-kjv package (public-domain text; see README.md).

    sudo apt-get install bible-kjv
    bible -f "Gen1:1-Rev22:21" > kjv.txt
    python3 harness/data/make_kjv.py kjv.txt harness/data

Preprocessing, the "simple stopword removal" of Ding et al. 2014 and Li et al. 2016: lower case,
words = runs of letters; English function words and the KJV's archaic ones (thee, thou, hath,
unto, ...) removed; words in fewer than 5 chapters or in more than half of them dropped; the
2000 most frequent remaining words kept (id = line of kjv_vocab.txt, from 0). Each line of
kjv_chapters.txt is one chapter: its reference (Ge1, ..., Re22) then its kept words' ids in text
order.
"""

import collections
import re
import sys
from pathlib import Path

STOPWORDS = set(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also upon shall may might must let us one even every neither either yet though whether
    thee thou thy thine ye hath doth dost art wast wilt shalt hast didst unto thereof therein
    thereby wherefore whereby wherein hither thither whither hence thence whence saith spake
    said say says came come cometh went go goeth made make maketh behold yea nay lo o oh
    forth also thus therefore according among amongst shalt even""".split()
)
MIN_CHAPTERS = 5
VOCABULARY = 2000


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    chapters: dict[str, list[str]] = collections.OrderedDict()
    for line in source.read_text().splitlines():
        ref, _, text = line.partition(" ")
        chapter = ref.split(":")[0]
        words = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS]
        chapters.setdefault(chapter, []).extend(words)
    df = collections.Counter(w for words in chapters.values() for w in set(words))
    total = collections.Counter(w for words in chapters.values() for w in words)
    n = len(chapters)
    eligible = [w for w in total if MIN_CHAPTERS <= df[w] <= n / 2]
    vocab = sorted(eligible, key=lambda w: (-total[w], w))[:VOCABULARY]
    ids = {w: i for i, w in enumerate(vocab)}
    (out / "kjv_vocab.txt").write_text("\n".join(vocab) + "\n")
    with (out / "kjv_chapters.txt").open("w") as f:
        for chapter, words in chapters.items():
            kept = [str(ids[w]) for w in words if w in ids]
            f.write(chapter + " " + " ".join(kept) + "\n")
    tokens = sum(1 for words in chapters.values() for w in words if w in ids)
    print(f"{n} chapters, {len(vocab)} words, {tokens} tokens")


if __name__ == "__main__":
    main()

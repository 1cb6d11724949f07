"""The batched text similarity (pipeline/textsim.py) gives resolution the very floats the
one-by-one comparison does, as the clusters and the word counts change."""

from __future__ import annotations

import random
from collections import Counter

from looma_git.pipeline.clusters import Cluster
from looma_git.pipeline.evidence import Rarity, text_similarity
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.textsim import BATCH_FROM, Terms


def _window(terms: list[tuple[str, int]]) -> WorkSignal:
    return WorkSignal(key="a:s#0", agent="a", session_id="s", index=0, start_ts="",
                      end_ts="", edited=frozenset(), read=frozenset(), commands=(),
                      commits=frozenset(), branch=None, prs=frozenset(), terms=tuple(terms),
                      first_prompt="", event_ids=())


def test_batched_similarities_equal_the_one_by_one_floats() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(1500)]
    df = Counter({t: rng.randint(0, 300) for t in rng.sample(vocab, 1000)})
    terms = Terms()
    clusters = [Cluster(id=f"c{k}") for k in range(40)]
    compared = 0
    for step in range(40):
        for c in rng.sample(clusters, 5):  # clusters grow between windows: rows rebuilt
            c.add_terms(Counter({t: rng.choice([1, 2, 3, 9, 60]) for t in
                                 rng.sample(vocab, rng.randint(0, 120))}))
        some = rng.sample(clusters, rng.randint(BATCH_FROM, len(clusters)))
        w = _window([(t, rng.randint(1, 20)) for t in rng.sample(vocab, rng.randint(0, 40))])
        idf = Rarity(len(clusters), {}, 200 + step, df)
        got = terms.similarities(w, some, idf, df)
        assert got == [text_similarity(w, c, idf) for c in some]  # bit for bit
        compared += sum(1 for x in got if x)
        used = {t for t, _ in w.terms}
        df.update(used)
        terms.counted(df, used)
        if step == 20:  # a resolver restored from kept counts: new counts, rebuilt mirror
            df = Counter(df)
    assert compared > 100  # most comparisons shared words: the test compared real floats

"""How fast the sci_refine retrieval indexes build and answer queries on a corpus of N paragraphs
(the issue's target: 10k), per mode: BM25 (bm25s), dense (MiniLM + FAISS), hybrid (RRF of both).

    python benchmarks/sci_refine/index_speed.py --n 10000

The paragraphs are rendered from facts that ship with installed packages (scipy's CODATA constants,
periodictable's elements), two to four facts each, so a corpus has the length and vocabulary of the
sci_refine corpus without importing its generator. Each query asks for one fact; hit@k is the share
of queries whose top k holds a paragraph that states it. Build time counts the embedding of the
corpus for dense and hybrid (embedded once, the same vectors for both). Queries are timed one at a
time (as the Monitor stack issues them) and in one batch. Saves results/index_speed.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.core.embed import embed
from iclr26.sci_refine.question import Passage
from iclr26.sci_refine.retrieval import RETRIEVAL_MODES, Retriever

CONSTANT_FACTS = (
    "The CODATA 2018 value of the {name} is {value} {unit}.",
    "In SI units the {name} equals {value} {unit}, with a standard uncertainty of {unc}.",
    "Tables of physical constants list the {name} as {value} {unit}.",
)
ELEMENT_FACTS = (
    "{name} has the chemical symbol {symbol} and atomic number {number}.",
    "The standard atomic weight of {name} is {mass}.",
    "At room temperature {name} has a density of {density} grams per cubic centimetre.",
    "Element {number}, {name}, is written {symbol} in chemical formulas.",
)
CONTEXT = (
    "Such values are used throughout physical chemistry and spectroscopy.",
    "Laboratory handbooks quote this figure when calibrating instruments.",
    "The value is needed in many textbook calculations.",
    "It appears in derivations of thermodynamic and quantum relations.",
    "Measurements of this quantity have been refined over several decades.",
)
CONSTANT_QUERY = "What is the value of the {name}?"
ELEMENT_QUERIES = {
    "symbol": "What is the chemical symbol of {name}?",
    "mass": "What is the standard atomic weight of {name}?",
    "density": "What is the density of {name}?",
}


def facts() -> list[tuple[str, str, str]]:
    """(topic, fact sentence, a query the sentence answers) for every constant and element property."""
    import periodictable
    from scipy.constants import physical_constants

    rng = random.Random(0)
    out = []
    for name, (value, unit, unc) in physical_constants.items():
        sentence = rng.choice(CONSTANT_FACTS).format(name=name, value=value, unit=unit or "", unc=unc)
        out.append((name, " ".join(sentence.split()), CONSTANT_QUERY.format(name=name)))
    for el in periodictable.elements:
        if el.number == 0:  # the neutron entry
            continue
        name = el.name.capitalize()
        fields = {
            "name": name,
            "symbol": el.symbol,
            "number": el.number,
            "mass": el.mass,
            "density": el.density,
        }
        for template in ELEMENT_FACTS:
            if "{density}" in template and el.density is None:
                continue
            kind = "density" if "{density}" in template else "mass" if "{mass}" in template else "symbol"
            out.append((name, template.format(**fields), ELEMENT_QUERIES[kind].format(name=name)))
    return out


def paragraphs(n: int, seed: int) -> tuple[list[Passage], list[tuple[str, str]]]:
    """`n` paragraphs of 2-4 facts and a context sentence each, and every (fact, query) pair used."""
    rng = random.Random(seed)
    pool = facts()
    passages, used = [], {}
    for i in range(n):
        chosen = rng.sample(pool, rng.randint(2, 4))
        text = " ".join([*(fact for _, fact, _ in chosen), rng.choice(CONTEXT)])
        passages.append(Passage(id=f"p{i}", text=text, topic=chosen[0][0]))
        used.update({fact: query for _, fact, query in chosen})
    return passages, list(used.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10000, help="corpus paragraphs")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "index_speed.json")
    a = ap.parse_args()
    passages, pairs = paragraphs(a.n, a.seed)
    probes = random.Random(a.seed + 1).sample(pairs, min(a.queries, len(pairs)))
    queries = [query for _, query in probes]
    embed(["warm-up"], device=a.device)  # loading the encoder is not building the index

    start = time.perf_counter()
    vectors = embed([p.text for p in passages], device=a.device)
    embed_s = time.perf_counter() - start
    rows = []
    for mode in RETRIEVAL_MODES:
        retriever = Retriever(
            passages, mode=mode, k=a.k, vectors=None if mode == "bm25" else vectors, device=a.device
        )
        build = dict(retriever.build_s)
        if mode != "bm25":
            build["embed"] = embed_s  # measured once above, the same vectors for both modes
        start = time.perf_counter()
        results = [retriever.search(q) for q in queries]
        one_s = time.perf_counter() - start
        start = time.perf_counter()
        retriever.search_many(queries)
        batch_s = time.perf_counter() - start
        hit = sum(
            any(fact in h.passage.text for h in hits) for (fact, _), hits in zip(probes, results, strict=True)
        )
        rows.append(
            {
                "mode": mode,
                "build_s": round(sum(build.values()), 3),
                "build_parts_s": {key: round(value, 3) for key, value in build.items()},
                "queries_per_s": round(len(queries) / one_s, 1),
                "queries_per_s_batched": round(len(queries) / batch_s, 1),
                f"hit_at_{a.k}": round(hit / len(queries), 3),
            }
        )
        row = rows[-1]
        print(
            f"{mode:>7}: build {row['build_s']:8.2f} s  {row['queries_per_s']:8.1f} q/s one by one  "
            f"{row['queries_per_s_batched']:8.1f} q/s batched  hit@{a.k} {row[f'hit_at_{a.k}']:.3f}"
        )
    out = {
        **provenance(),
        "n_passages": len(passages),
        "mean_chars": round(sum(len(p.text) for p in passages) / len(passages), 1),
        "queries": len(queries),
        "k": a.k,
        "device": a.device,
        "rows": rows,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {a.out}")


if __name__ == "__main__":
    main()

"""Splits: seeded generation repeats byte for byte (CSV) and pixel for pixel (PNGs), in parallel
as serially; an interrupted generation resumes from its finished shards; the verifier's letter
matches every written answer; bad plans get one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.spatial_dise import dataset
from iclr26.spatial_dise.dataset import GENERATOR, generate_split, plan, proportional
from iclr26.spatial_dise.records import read_csv
from iclr26.spatial_dise.system import oracle_letters
from iclr26.spatial_dise.tasks import QUADRANT_OF, TASKS

COUNTS = dict.fromkeys(TASKS, 2)  # 20 items, every task, two difficulties each


def _pixels(root, records):
    return [np.asarray(Image.open(root / r.image)) for r in records]


def test_two_generations_from_one_seed_are_identical(tmp_path) -> None:
    a = generate_split(tmp_path / "a", "bench", COUNTS, seed=7)
    b = generate_split(tmp_path / "b", "bench", COUNTS, seed=7, jobs=2)
    assert a.read_bytes() == b.read_bytes()
    ra, rb = read_csv(a), read_csv(b)
    for x, y in zip(_pixels(a.parent, ra), _pixels(b.parent, rb), strict=True):
        assert x.shape == (480, 640, 3) and (x == y).all()
    assert {r.category for r in ra} == set(TASKS)
    assert all(r.dise_category == QUADRANT_OF[r.category] for r in ra)
    other = generate_split(tmp_path / "c", "bench", COUNTS, seed=8)
    assert other.read_bytes() != a.read_bytes()


def test_answers_are_the_verifiers_and_letters_are_spread(tmp_path) -> None:
    csv = generate_split(tmp_path, "bench", dict.fromkeys(TASKS, 6), seed=1)
    records = read_csv(csv)
    assert oracle_letters(records, seed=1) == [r.answer for r in records]
    letters = [r.answer for r in records]
    assert all(letters.count(x) >= 5 for x in "ABCD")  # shuffled, not always A


def test_an_interrupted_generation_resumes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(dataset, "SHARD", 4)
    full = generate_split(tmp_path / "full", "train", COUNTS, seed=3)
    calls = {"n": 0}
    real = dataset._make_shard

    def dies_after_two(args):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return real(args)

    monkeypatch.setattr(dataset, "_make_shard", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        generate_split(tmp_path / "cut", "train", COUNTS, seed=3)
    assert len(list((tmp_path / "cut" / "parts" / GENERATOR / "train").glob("*.csv"))) == 2
    monkeypatch.setattr(dataset, "_make_shard", real)
    done = []
    resumed = generate_split(tmp_path / "cut", "train", COUNTS, seed=3, on_shard=done.append)
    assert resumed.read_bytes() == full.read_bytes()
    assert sum(done) == sum(COUNTS.values())


def test_plans_and_proportions() -> None:
    slots = plan("bench", dataset.BENCH_COUNTS)
    assert len(slots) == dataset.BENCH_SIZE == 559
    assert sum(1 for s in slots if QUADRANT_OF[s.task] == "Extrinsic-Static") == 70
    assert sum(proportional(8647).values()) == 8647
    assert sum(dataset.TRAIN_SIZES.values()) == 12352
    with pytest.raises(UserError, match="unknown task 'origami'"):
        plan("bench", {"origami": 3})
    with pytest.raises(UserError, match="non-negative int"):
        plan("bench", {"3d_rotation": -1})

"""The synthetic signing corpus (data.py) and the real-data loader (loader.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from iclr26.core.errors import UserError
from iclr26.slt_reliability.data import (
    N_KEYPOINTS,
    CorpusConfig,
    Sample,
    check_sample,
    check_vocabulary,
    make_corpus,
    render_glosses,
)
from iclr26.slt_reliability.loader import load_keypoint_corpus, load_keypoint_dataset

SMALL = {"n_train": 60, "n_dev": 10, "n_test": 20}


@pytest.fixture(scope="module")
def phoenix():
    return make_corpus("phoenix_like", seed=0, **SMALL)


@pytest.fixture(scope="module")
def csl():
    return make_corpus("csl_like", seed=0, **SMALL)


def _same(a: Sample, b: Sample) -> bool:
    return (
        a.id == b.id
        and np.array_equal(a.keypoints, b.keypoints)
        and (a.glosses, a.text, a.entities, a.signer) == (b.glosses, b.text, b.entities, b.signer)
    )


def test_seeded_generation_repeats_exactly(phoenix):
    again = make_corpus("phoenix_like", seed=0, **SMALL)
    for split in ("train", "dev", "test"):
        assert all(_same(a, b) for a, b in zip(getattr(phoenix, split), getattr(again, split), strict=True))
    assert (again.glosses, again.words, again.entity_words) == (
        phoenix.glosses,
        phoenix.words,
        phoenix.entity_words,
    )


def test_different_seeds_differ(phoenix):
    other = make_corpus("phoenix_like", seed=1, **SMALL)
    assert [s.glosses for s in other.train] != [s.glosses for s in phoenix.train]
    # the same gloss sequence gets a different motion prototype under another seed
    g = phoenix.train[0].glosses
    a, b = render_glosses("phoenix_like", g, seed=0), render_glosses("phoenix_like", g, seed=1)
    assert a.shape != b.shape or not np.allclose(a, b)


def test_split_sizes_shapes_and_ids(phoenix):
    assert (len(phoenix.train), len(phoenix.dev), len(phoenix.test)) == (60, 10, 20)
    for s in phoenix.train + phoenix.test:
        assert s.keypoints.dtype == np.float32 and s.keypoints.shape[1:] == (N_KEYPOINTS, 2)
        assert 3 <= len(s.glosses) <= 9 and s.dataset == "phoenix_like"
        assert all(g.isupper() for g in s.glosses) and all(w.islower() and w.isalpha() for w in s.text)
    assert phoenix.test[12].id == "phoenix_like/test/00012"


def test_changing_n_train_leaves_dev_and_test_unchanged(phoenix):
    other = make_corpus("phoenix_like", seed=0, n_train=5, n_dev=10, n_test=20)
    assert all(_same(a, b) for a, b in zip(other.test, phoenix.test, strict=True))


def test_signers_held_out_in_test(phoenix, csl):
    for c in (phoenix, csl):
        seen = {s.signer for s in c.train + c.dev}
        test = {s.signer for s in c.test}
        assert seen and test and not seen & test
        assert seen <= set(range(7)) and test <= {7, 8}


def test_datasets_have_different_vocabularies(phoenix, csl):
    assert set(phoenix.glosses) != set(csl.glosses) and set(phoenix.words) != set(csl.words)
    assert len(set(phoenix.glosses) - set(csl.glosses)) > 40
    for c in (phoenix, csl):
        assert len(c.glosses) >= 60 and list(c.glosses) == sorted(c.glosses)
        assert list(c.words) == sorted(c.words)


def test_words_entities_and_vocabulary(phoenix, csl):
    for c in (phoenix, csl):
        words = set(c.words)
        assert c.entity_words <= words
        for s in c.train + c.dev + c.test:
            assert set(s.text) <= words and set(s.glosses) <= set(c.glosses)
            assert s.entities <= set(s.text)
            assert s.entities == set(s.text) & c.entity_words
        assert sum(bool(s.entities) for s in c.train) > 0.6 * len(c.train)


def test_translation_reorders_and_adds_function_words():
    c = make_corpus("phoenix_like", seed=0, n_train=300, n_dev=0, n_test=0)
    s = next(s for s in c.train if s.glosses[:1] == ("TOMORROW",) and len(s.glosses) == 3)
    assert len(s.text) > len(s.glosses)
    assert len({s.glosses for s in c.train}) > 200  # a few hundred distinct sentences


def test_coarticulation_makes_boundaries_continuous(phoenix):
    """With co-articulation no keypoint moves more than 0.2 (half a shoulder width) between frames;
    concatenating the signs jumps by more than that at a sign boundary."""
    cut = CorpusConfig(coarticulation=0, max_step=None)
    for s in phoenix.train[:20]:
        smooth = np.linalg.norm(np.diff(s.keypoints, axis=0), axis=-1).max()
        assert smooth < 0.2, (s.id, smooth)
    jumps = [
        np.linalg.norm(np.diff(render_glosses("phoenix_like", s.glosses, config=cut), axis=0), axis=-1).max()
        for s in phoenix.train[:20]
    ]
    assert np.median(jumps) > 0.3


def test_check_sample_errors(phoenix):
    s = phoenix.train[0]
    assert check_sample(s, min_frames=8) is s
    x = s.keypoints.copy()
    x[3, 7, 0] = np.nan
    with pytest.raises(UserError, match=r"phoenix_like/train/00000.*NaN.*frame 3"):
        check_sample(dataclasses.replace(s, keypoints=x))
    short = dataclasses.replace(s, keypoints=s.keypoints[:3])
    with pytest.raises(UserError, match=r"phoenix_like/train/00000.*3 frames.*minimum of 4"):
        check_sample(short, min_frames=4)
    with pytest.raises(UserError, match="shape"):
        check_sample(dataclasses.replace(s, keypoints=s.keypoints[:, :, 0]))


def test_check_vocabulary_errors(phoenix, csl):
    assert check_vocabulary(phoenix.test[0], phoenix) is phoenix.test[0]
    with pytest.raises(UserError, match=r"csl_like/train/00000: gloss .* not in the gloss vocabulary"):
        check_vocabulary(csl.train[0], phoenix)
    s = dataclasses.replace(phoenix.train[0], text=(*phoenix.train[0].text, "zebra"))
    with pytest.raises(UserError, match=r"phoenix_like/train/00000: word 'zebra'"):
        check_vocabulary(s, phoenix)


def test_unknown_dataset_is_a_user_error():
    with pytest.raises(UserError, match="name"):
        make_corpus("phoenix", n_train=1, n_dev=0, n_test=0)


def test_generation_is_fast():
    import time

    t = time.perf_counter()
    make_corpus("csl_like", seed=3, n_train=400, n_dev=50, n_test=50)
    assert time.perf_counter() - t < 5.0


# --- the real-data loader on a tiny fake PHOENIX folder

HEADER = "name|video|start|end|speaker|orth|translation"


def _fake_phoenix(root: Path, rows: list[str], arrays: dict[str, np.ndarray], split: str = "train") -> Path:
    manual = root / "annotations" / "manual"
    manual.mkdir(parents=True, exist_ok=True)
    (manual / f"PHOENIX-2014-T.{split}.corpus.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    (root / "features" / split).mkdir(parents=True, exist_ok=True)
    for name, x in arrays.items():
        np.save(root / "features" / split / f"{name}.npy", x)
    return root


ROWS = [
    "01April_2010_Thursday_heute-6694|01April_2010_Thursday_heute-6694/1/*.png|-1|-1|Signer04|"
    "REGEN NORD MORGEN|morgen regnet es im norden .",
    "25October_2010_Monday_tagesschau-17|25October_2010_Monday_tagesschau-17/1/*.png|-1|-1|Signer01|"
    "DANN SONNE|dann scheint die Sonne, überall !",
]


def _arrays(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "01April_2010_Thursday_heute-6694": rng.normal(size=(30, 50, 3)),  # x, y, confidence
        "25October_2010_Monday_tagesschau-17": rng.normal(size=(20, 64)).astype(np.float32),  # features
    }


def test_loader_reads_a_phoenix_folder(tmp_path):
    root = _fake_phoenix(tmp_path, ROWS, _arrays(np.random.default_rng(0)))
    (tmp_path / "entities.txt").write_text("# places\nnorden\nsonne\n")
    samples = load_keypoint_dataset(root, "train", entity_file=tmp_path / "entities.txt")
    a, b = samples
    assert a.id == "phoenix/train/01April_2010_Thursday_heute-6694" and a.signer == 4 and b.signer == 1
    assert a.keypoints.shape == (30, 50, 2) and a.keypoints.dtype == np.float32
    assert b.keypoints.shape == (20, 64, 1)
    assert a.glosses == ("REGEN", "NORD", "MORGEN")
    assert a.text == ("morgen", "regnet", "es", "im", "norden") and a.entities == {"norden"}
    assert b.text == ("dann", "scheint", "die", "sonne", "überall") and b.entities == {"sonne"}
    assert load_keypoint_dataset(root, "train")[0].entities == frozenset()


def test_loader_corpus(tmp_path):
    arrays = _arrays(np.random.default_rng(0))
    for split in ("train", "dev", "test"):
        _fake_phoenix(tmp_path, ROWS, arrays, split)
    c = load_keypoint_corpus(tmp_path)
    assert len(c.train) == len(c.dev) == len(c.test) == 2 and "REGEN" in c.glosses and "norden" in c.words


@pytest.mark.parametrize(
    ("rows", "arrays", "match"),
    [
        (ROWS[:1], {}, r"row '01April_2010_Thursday_heute-6694'.*keypoint file not found"),
        (
            ["a|b|c|Signer01|X Y|x y"],
            {},
            r"train.corpus.csv:2: malformed row: 6 '\|'-separated fields, expected 7",
        ),
        (["a|v|-1|-1|Signer01||x y"], {}, r"train.corpus.csv:2: malformed row 'a': empty orth"),
        (
            ["a|v|-1|-1|Signer01|X|x"],
            {"a": np.full((5, 50, 2), np.nan)},
            r"row 'a'.*a.npy contains NaN.*frame 0",
        ),
        (
            ["a|v|-1|-1|Signer01|X|x"],
            {"a": np.zeros((5, 50, 2, 2))},
            r"row 'a'.*shape \(5, 50, 2, 2\) \(rank 4\)",
        ),
        (["a|v|-1|-1|Signer01|X|x"], {"a": np.zeros(5)}, r"row 'a'.*rank 1"),
    ],
)
def test_loader_errors(tmp_path, rows, arrays, match):
    root = _fake_phoenix(tmp_path, rows, arrays)
    with pytest.raises(UserError, match=match):
        load_keypoint_dataset(root, "train")


def test_loader_refuses_pickled_arrays(tmp_path):
    root = _fake_phoenix(tmp_path, ["a|v|-1|-1|Signer01|X|x"], {})
    np.save(root / "features" / "train" / "a.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(UserError, match="without pickle"):
        load_keypoint_dataset(root, "train")


def test_loader_missing_csv_and_bad_split(tmp_path):
    with pytest.raises(UserError, match=r"no annotation file \*\.dev\.corpus\.csv"):
        load_keypoint_dataset(tmp_path, "dev")
    with pytest.raises(UserError, match="split"):
        load_keypoint_dataset(tmp_path, "validation")

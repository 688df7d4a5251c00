"""Pixel baselines on toy composed items, whose correct option is the question panel plus noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from iclr26.core.errors import UserError
from iclr26.spatial_dise.baselines import (
    PIXEL_BASELINES,
    Panels,
    grey_square,
    ink,
    least_ink,
    load_panels,
    most_ink,
    odd_one_out,
    panels_of,
    pixel_similarity,
    random_choice,
)
from iclr26.spatial_dise.items import LETTERS, compose
from iclr26.spatial_dise.records import Record


def shape(rng: np.random.Generator, side: int = 120, blocks: int = 4) -> Image.Image:
    """A random drawing of grey rectangles with black outlines on white."""
    im = Image.new("RGB", (side, side), "white")
    draw = ImageDraw.Draw(im)
    for _ in range(blocks):
        x, y = rng.integers(0, side * 2 // 3, size=2)
        w, h = rng.integers(side // 6, side // 3, size=2)
        draw.rectangle(
            [int(x), int(y), int(x + w), int(y + h)], fill=(150, 150, 150), outline="black", width=2
        )
    return im


def noisy(im: Image.Image, rng: np.random.Generator, sigma: float = 12.0) -> Image.Image:
    """`im` with Gaussian noise on its ink (the paper white stays white)."""
    a = np.asarray(im, dtype=np.float32)
    is_ink = a.mean(axis=2, keepdims=True) < 245
    a = np.where(is_ink, np.clip(a + rng.normal(0, sigma, a.shape), 0, 240), a)
    return Image.fromarray(a.astype(np.uint8))


def toy_panels(
    rng: np.random.Generator, n_question: int = 1
) -> tuple[list[Image.Image], list[Image.Image], str]:
    """Question panels and options A-D of a toy item: the correct option copies question panel 0."""
    question = [shape(rng) for _ in range(n_question)]
    options = [shape(rng) for _ in range(3)]
    k = int(rng.integers(4))
    options.insert(k, noisy(question[0], rng))
    return question, options, LETTERS[k]


def toy_items(n: int, seed: int = 0, n_question: int = 1) -> tuple[list[Image.Image], list[str]]:
    """`n` composed toy item images and their answers."""
    rng = np.random.default_rng(seed)
    images, answers = [], []
    for _ in range(n):
        q, o, a = toy_panels(rng, n_question)
        images.append(compose(q, o))
        answers.append(a)
    return images, answers


def accuracy(pred: list[str], answers: list[str]) -> float:
    return float(np.mean([p == a for p, a in zip(pred, answers, strict=True)]))


def test_random_choice_is_seeded_and_uniform() -> None:
    a = random_choice(range(2000), seed=3)
    assert a == random_choice(range(2000), seed=3) and a != random_choice(range(2000), seed=4)
    counts = [a.count(x) / len(a) for x in LETTERS]
    assert all(0.2 < c < 0.3 for c in counts)


@pytest.mark.parametrize("n_question", [1, 2, 3])
def test_pixel_similarity_finds_the_copied_panel(n_question: int) -> None:
    images, answers = toy_items(24, seed=n_question, n_question=n_question)
    items = [panels_of(im, n_question) for im in images]
    assert accuracy(pixel_similarity(items), answers) >= 0.9


def test_other_heuristics_return_letters_and_stay_near_chance_on_fair_toys() -> None:
    images, answers = toy_items(40, seed=7)
    items = [panels_of(np.asarray(im), 1) for im in images]  # arrays work too
    for name, fn in PIXEL_BASELINES.items():
        pred = fn(items)
        assert len(pred) == 40 and set(pred) <= set(LETTERS), name
    # the distractors are independent shapes, so ink amount says nothing about the answer
    assert accuracy(most_ink(items), answers) < 0.6 and accuracy(least_ink(items), answers) < 0.6


def test_odd_one_out_and_ink_pick_the_obvious_option() -> None:
    rng = np.random.default_rng(0)
    base = shape(rng)
    blank = Image.new("RGB", (120, 120), "white")
    dark = Image.new("RGB", (120, 120), (40, 40, 40))
    p = Panels((base,), (noisy(base, rng), dark, noisy(base, rng), noisy(base, rng)))
    assert odd_one_out([p]) == ["B"] and most_ink([p]) == ["B"]
    q = Panels((base,), (base, base, blank, base))
    assert least_ink([q]) == ["C"] and odd_one_out([q]) == ["C"]


def test_grey_square_trims_margins_so_scales_line_up() -> None:
    rng = np.random.default_rng(1)
    im = shape(rng)
    big = Image.new("RGB", (400, 300), "white")
    big.paste(im.resize((240, 240)), (80, 30))
    a, b = grey_square(im, 32), grey_square(big, 32)
    assert a.shape == (32, 32) and a.dtype == np.float32
    assert np.abs(a - b).mean() < 0.05
    assert grey_square(Image.new("RGB", (50, 50), "white")).max() == 0.0
    assert ink(Image.new("RGB", (50, 50), "white")) == 0.0


def test_records_are_loaded_from_the_image_root(tmp_path: Path) -> None:
    images, answers = toy_items(3, seed=2, n_question=2)
    records = []
    for i, (im, a) in enumerate(zip(images, answers, strict=True)):
        im.save(tmp_path / f"{i}.png")
        records.append(Record(str(i), "q", a, f"{i}.png", "toy", "easy", "Intrinsic-Static", 2))
    assert pixel_similarity(records, image_root=tmp_path) == answers
    assert len(load_panels(records[0], tmp_path).question) == 2
    with pytest.raises(ValueError, match="image_root"):
        pixel_similarity(records)
    release_row = Record("x", "q", "A", "0.png", "toy", "", "Intrinsic-Static", None)
    with pytest.raises(UserError, match="n_question_panels"):
        pixel_similarity([release_row], image_root=tmp_path)
    missing = Record("y", "q", "A", "none.png", "toy", "easy", "Intrinsic-Static", 1)
    with pytest.raises(UserError, match=r"none\.png"):
        most_ink([missing], image_root=tmp_path)

"""The grid world: exact masks, unique colours, context-dependent targets, the decoder, and the
pairwise guess (the chance floor)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.vincie.grid import (
    COLOURS,
    CONTEXT,
    SIZE,
    TURN_TYPES,
    GridEdit,
    GridScene,
    Obj,
    apply,
    decode,
    grid_session,
    instruction,
    pairwise_guess,
    random_scene,
    render,
    valid_edits,
    vocabulary,
)
from iclr26.vincie.sequence import Tokenizer
from iclr26.vincie.video import check_session, words


def test_render_decode_round_trip() -> None:
    rng = np.random.default_rng(0)
    g = rng.integers(-1, 6, size=(8, 8))
    img = render(g)
    assert img.shape == (SIZE, SIZE, 3)
    assert (decode(img) == g).all()
    noisy = np.clip(img + rng.normal(0, 0.05, img.shape), 0, 1)
    assert (decode(noisy) == g).all()


@pytest.mark.parametrize("seed", range(30))
def test_session_masks_are_the_changed_pixels(seed: int) -> None:
    s, kinds, grids = grid_session(np.random.default_rng(seed), 4, f"t{seed}", context_rate=0.6)
    check_session(s, max_words=10)
    tok = Tokenizer(vocabulary())
    for k in range(len(kinds)):
        changed = np.abs(s.images[k + 1] - s.images[k]).max(-1) > 0
        assert changed.any(), "every edit changes the image"
        assert (changed == (s.masks_current[k] | s.masks_next[k])).all()
        assert all(w in tok.ids for w in words(s.instructions[k]))
        colours = grids[k + 1][grids[k + 1] >= 0]
        assert len(set(colours.tolist())) == len(colours), "colours stay unique"
        assert (decode(s.images[k + 1]) == grids[k + 1]).all()


def test_context_targets_come_from_the_first_image() -> None:
    red, blue = COLOURS.index("red"), COLOURS.index("blue")
    scene = GridScene([Obj(red, (0, 0), (0, 0), red), Obj(blue, (5, 5), (5, 5), blue)])
    assert not valid_edits(scene, "move_back") and not valid_edits(scene, "first_colour")
    moved = next(e for e in valid_edits(scene, "move") if e.colour == red and e.step == ("right", 2))
    scene = apply(scene, moved)
    green = COLOURS.index("green")
    scene = apply(
        scene, next(e for e in valid_edits(scene, "recolour") if e.colour == red and e.new_colour == green)
    )
    assert instruction(valid_edits(scene, "move_back")[0]) == "move the green object back to its first place"
    assert valid_edits(scene, "move_back")[0].cell == (0, 0)
    (first,) = valid_edits(scene, "first_colour")
    assert first.new_colour == red and instruction(first) == "give the green object its first colour"
    # the first colour taken by another object: the turn does not apply
    scene = apply(scene, GridEdit("add", red, (7, 7)))
    assert not valid_edits(scene, "first_colour")
    seen = {k for seed in range(100) for k in grid_session(np.random.default_rng(seed), 4, "t", 0.8)[1]}
    assert seen == set(TURN_TYPES)


def test_pairwise_guess_is_exact_on_ordinary_turns_and_guesses_context_ones() -> None:
    rng = np.random.default_rng(1)
    hits = {k: [] for k in ("ordinary", *CONTEXT)}
    for seed in range(150):
        s, kinds, grids = grid_session(np.random.default_rng(seed), 4, "t", context_rate=0.6)
        for k, kind in enumerate(kinds):
            out = pairwise_guess(rng, s.images[k], s.instructions[k])
            ok = bool((decode(out) == grids[k + 1]).all())
            hits["ordinary" if kind not in CONTEXT else kind].append(ok)
    assert all(hits["ordinary"])
    assert 0 < np.mean(hits["first_colour"]) < 0.75  # one of 2-4 absent colours
    assert np.mean(hits["move_back"]) < 0.1  # one of ~60 empty cells


def test_valid_edits_keep_colours_unique() -> None:
    rng = np.random.default_rng(3)
    scene = random_scene(rng)
    for _ in range(40):
        kinds = [k for k in ("move", "recolour", "add", "remove") if valid_edits(scene, k)]
        options = valid_edits(scene, kinds[int(rng.integers(len(kinds)))])
        scene = apply(scene, options[int(rng.integers(len(options)))])
        cols = [o.colour for o in scene.objects]
        assert len(set(cols)) == len(cols) and 1 <= len(cols) <= 5


def test_grid_study_smoke_checks_its_oracle_and_floors(tmp_path) -> None:
    import dataclasses

    import torch

    from iclr26.core import RunContext
    from iclr26.core.study import run_study
    from iclr26.vincie.grid_study import TRAINED, GridConfig, study, train_arm, training_sessions

    torch.set_num_threads(1)
    base = GridConfig(seeds=(0,), train_sessions=12, test_sessions=3, turns=2)
    cfg = dataclasses.replace(
        base,
        train=dataclasses.replace(base.train, steps=2, batch=2, warmup=1, max_images=3),
        sampler=dataclasses.replace(base.sampler, steps=1),
    )
    tok = Tokenizer(vocabulary())
    data = training_sessions(cfg, 0)
    models, rows = {}, []
    for arm in TRAINED:
        models[(arm, 0)], row = train_arm(cfg, arm, 0, data, tok)
        rows.append(row)
    examples = {r["arm"]: r["next_image_examples"] for r in rows}
    assert examples["vincie"] < examples["no_masks"] == examples["pairwise"]
    assert abs(examples["no_masks_equal"] - examples["vincie"]) <= cfg.train.batch  # equal next-image budget
    result = run_study(study(cfg, models, rows), RunContext(out_dir=tmp_path))
    assert not result.invalid  # the true images pass every unit
    assert all(v == 1.0 for v in result.values("oracle", "context").values())
    assert all(v == 0.0 for v in result.values("copy", "ordinary").values())
    assert all(v == 1.0 for v in result.values("chance", "ordinary").values())
    assert {c.baseline for c in result.checks} == {"pairwise", "no_masks", "no_masks_equal", "chance"}
    assert {c.method for c in result.checks} == {"vincie", "no_masks"}
    # a rerun measures nothing again
    again = run_study(study(cfg, models, rows), RunContext(out_dir=tmp_path))
    assert again.cells.keys() == result.cells.keys()

"""Videos, annotation and sessions: exact masks, sparse sampling, the interleaved layout, and the
errors bad sessions get."""

import json

import numpy as np
import pytest
from PIL import Image

from iclr26.vincie.scenes import Edit, apply_edit, random_edit, random_scene, render
from iclr26.vincie.sequence import ProxyConfig, Tokenizer, layout, training_example
from iclr26.vincie.video import (
    Session,
    SessionError,
    annotate,
    check_session,
    edit_session,
    load_sessions,
    make_video,
    sample_frames,
    video_session,
)


def test_annotation_masks_match_the_rendered_change():
    """Every pixel that differs between two kept frames lies in the current or the next mask, and a
    mask pixel that keeps its colour is one the changed object covers in both frames or one where its
    texture or colour happens to agree."""
    rng = np.random.default_rng(0)
    checked = 0
    for i in range(30):
        video = make_video(rng, edits=3)
        frames = sample_frames(len(video.scenes), ("interval", "count")[i % 2], rng, 4)
        s = annotate(video, frames, 32, f"v{i}")
        if s is None:
            continue
        for k in range(s.turns):
            diff = np.abs(s.images[k + 1] - s.images[k]).max(-1) > 1e-6
            union = s.masks_current[k] | s.masks_next[k]
            assert not (diff & ~union).any(), f"video {i} turn {k}: a changed pixel outside the masks"
            assert diff.any() and union.any()
            checked += 1
    assert checked > 30


def test_masks_follow_the_object_through_occlusion():
    scene = random_scene(np.random.default_rng(3), (3, 3))
    front = scene.sprites[-1]
    edit = Edit("recolour", front.colour, front.shape, "white" if front.colour != "white" else "red")
    after = apply_edit(scene, edit)
    _, lab0 = render(scene, 32)
    _, lab1 = render(after, 32)
    s = annotate(
        type("V", (), {"scenes": [scene, after], "progress": [[], [(edit, 1.0)]]})(), [0, 1], 32, "occ"
    )
    assert (s.masks_current[0] == (lab0 == len(scene.sprites) - 1)).all()
    assert (s.masks_next[0] == (lab1 == len(after.sprites) - 1)).all()


def test_sparse_sampling_modes():
    rng = np.random.default_rng(1)
    idx = sample_frames(33, "interval", rng, 4)
    steps = set(np.diff(idx))
    assert len(steps) == 1 and 2 <= steps.pop() <= 4
    idx = sample_frames(33, "count", rng, 4)
    assert 2 <= len(idx) <= 8 and idx[0] == 0 and idx[-1] == 32
    with pytest.raises(ValueError, match="sampling"):
        sample_frames(10, "random", rng, 4)


def test_sessions_have_two_to_max_images_and_fit_the_budget():
    rng = np.random.default_rng(2)
    for i in range(40):
        s = video_session(rng, 32, str(i), max_images=6, max_words=16)
        assert 2 <= len(s.images) <= 6 and s.turns == len(s.images) - 1
        assert all(len(t.split()) <= 16 for t in s.instructions)
        check_session(s, 16)


def test_benchmark_edits_are_complete_and_named():
    s, scenes = edit_session(np.random.default_rng(4), 32, 5, "b")
    assert s.turns == 5 and len(scenes) == 6
    for text in s.instructions:
        assert text.split()[0] in {"move", "shift", "add", "put", "remove", "delete", "make", "turn", "give"}
        assert "little" not in text  # benchmark edits are whole


def test_interleaved_layout_blocks_and_indices():
    s, _ = edit_session(np.random.default_rng(5), 32, 3, "l")
    tok = Tokenizer()
    ex = layout(s, 2, "next_image", tok, 16)
    # I0 M00 M01 I1 M10 M11 I2 M20 M21 I3: index 3k + slot, block k (I_k in block k − 1)
    assert ex.index == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert ex.block == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert ex.target == [False] * 9 + [True]
    assert len(ex.words) == 3
    ex = layout(s, 1, "current_mask", tok, 16, keep={(0, 1): False})
    assert ex.index == [0, 2, 3, 4] and ex.target == [False, False, False, True]


def test_context_dropout_rates_within_sampling_error():
    s, _ = edit_session(np.random.default_rng(6), 32, 4, "d")
    cfg, tok, rng = ProxyConfig(), Tokenizer(), np.random.default_rng(7)
    n, stats = 4000, {"masks": 0, "img_seen": 0, "img_kept": 0, "cur_seen": 0, "cur_kept": 0, "null": 0}
    tasks = {"next_image": 0, "current_mask": 0, "next_mask": 0}
    for _ in range(n):
        ex = training_example(s, rng, cfg, tok, 16)
        tasks[ex.task] += 1
        stats["null"] += ex.words[-1][0] == 1
        k = ex.index[-1] // 3 - (1 if ex.task == "next_image" else 0)
        has_mask = any(i % 3 for i in ex.index) or ex.task != "next_image"
        stats["masks"] += has_mask
        for j in range(k):  # earlier images, never the current one
            stats["img_seen"] += 1
            stats["img_kept"] += (3 * j) in ex.index
        if ex.task == "next_mask":  # masks are on for sure: M_k0 is kept with probability 0.3
            stats["cur_seen"] += 1
            stats["cur_kept"] += (3 * k + 1) in ex.index

    def close(p_hat: float, p: float, m: int) -> bool:
        return abs(p_hat - p) <= 4 * (p * (1 - p) / m) ** 0.5 + 1e-9

    # masks in 80% of examples (some mask-bearing examples drop every mask: only a lower bound)
    assert stats["masks"] / n <= 0.8 + 4 * (0.16 / n) ** 0.5
    assert close(tasks["current_mask"] / n, 0.8 / 3, n) and close(tasks["next_mask"] / n, 0.8 / 3, n)
    assert close(stats["img_kept"] / stats["img_seen"], 0.8, stats["img_seen"])
    assert close(stats["cur_kept"] / stats["cur_seen"], 0.3, stats["cur_seen"])
    assert close(stats["null"] / n, 0.1, n)


def test_bad_sessions_name_the_session_and_turn(tmp_path):
    s, _ = edit_session(np.random.default_rng(8), 32, 2, "bad")
    masks = s.masks_current.astype(np.float32)
    masks[1, 0, 0] = 0.5
    with pytest.raises(SessionError, match=r"session bad, turn 1: masks_current is not binary"):
        check_session(Session("bad", s.images, s.instructions, masks, s.masks_next))
    long = Session("bad", s.images, ["make the red circle " + "very " * 20 + "big", s.instructions[1]])
    with pytest.raises(
        SessionError, match=r"session bad, turn 0: instruction has 25 words, over the text budget of 16"
    ):
        check_session(long, 16)
    # a folder of real frames with one image of another size
    for k, im in enumerate(s.images):
        size = 32 if k != 2 else 24
        Image.fromarray((im * 255).astype(np.uint8)).resize((size, size)).save(tmp_path / f"f{k}.png")
    (tmp_path / "annotation.json").write_text(
        json.dumps(
            [{"id": "clip7", "images": ["f0.png", "f1.png", "f2.png"], "instructions": s.instructions}]
        )
    )
    with pytest.raises(SessionError, match=r"session clip7, turn 2: image size 24x24 differs"):
        load_sessions(tmp_path)
    assert load_sessions(tmp_path, size=32)[0].images.shape == (3, 32, 32, 3)


def test_load_sessions_reads_masks(tmp_path):
    s, _ = edit_session(np.random.default_rng(9), 32, 1, "m")
    for k, im in enumerate(s.images):
        Image.fromarray((im * 255).astype(np.uint8)).save(tmp_path / f"f{k}.png")
    Image.fromarray(s.masks_current[0].astype(np.uint8) * 255).save(tmp_path / "c0.png")
    Image.fromarray(s.masks_next[0].astype(np.uint8) * 200).save(tmp_path / "n0.png")  # not 0/255
    row = {
        "id": "r",
        "images": ["f0.png", "f1.png"],
        "instructions": s.instructions,
        "masks_current": ["c0.png"],
    }
    (tmp_path / "annotation.json").write_text(json.dumps([row]))
    with pytest.raises(SessionError, match="session r: has masks_current only"):
        load_sessions(tmp_path)
    row["masks_next"] = ["n0.png"]
    (tmp_path / "annotation.json").write_text(json.dumps([row]))
    with pytest.raises(SessionError, match="session r, turn 0: masks_next is not binary"):
        load_sessions(tmp_path)
    Image.fromarray(s.masks_next[0].astype(np.uint8) * 255).save(tmp_path / "n0.png")
    got = load_sessions(tmp_path)[0]
    assert (got.masks_current[0] == s.masks_current[0]).all() and (got.masks_next[0] == s.masks_next[0]).all()


def test_random_edits_keep_scenes_valid():
    rng = np.random.default_rng(10)
    scene = random_scene(rng)
    for _ in range(50):
        scene = apply_edit(scene, random_edit(rng, scene))
        pairs = [(s.colour, s.shape) for s in scene.sprites]
        assert len(pairs) == len(set(pairs)) and 1 <= len(pairs) <= 5
        assert all(0.1 <= s.x <= 0.9 and 0.1 <= s.y <= 0.9 for s in scene.sprites)


def test_one_mask_set_alone_and_long_words_name_the_session_and_turn():
    s, _ = edit_session(np.random.default_rng(13), 32, 2, "half")
    with pytest.raises(SessionError, match="session half: has masks_current only; give both"):
        check_session(Session("half", s.images, s.instructions, s.masks_current, None))
    long = Session("w", s.images, [s.instructions[0], "make the red circle, " + "big " * 16])
    with pytest.raises(SessionError, match="session w, turn 1: instruction has 20 words"):
        layout(long, 1, "next_image", Tokenizer(), 16)

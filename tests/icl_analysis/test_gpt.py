"""The small GPT trained here to learn in context: held-out automata, sequences and loss masks,
seeded and resumable training, in-context learning above chance, and bad input."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.icl_analysis import gpt
from iclr26.icl_analysis.gpt import (
    DFA,
    FAMILY_OF_TASK,
    Contains,
    GPTConfig,
    agreement,
    encode_pairs,
    evaluate_gpt,
    is_held_out,
    is_validation,
    latest_checkpoint,
    make_batch,
    sample_automaton,
    sample_pairs,
    train_icl_gpt,
    validation_accuracy,
)
from iclr26.icl_analysis.tasks import TASKS, Item, make_splits

pytestmark = pytest.mark.usefixtures("one_torch_thread")


TINY = dict(n_layer=1, n_head=2, d_model=16, max_shots=3, max_len=10, batch_size=4, pool_size=50, warmup=2)


def support(max_len: int = 10) -> list[str]:
    """Every string of PARITY's support (starts with "0", length >= 4) up to `max_len`."""
    return ["0" + "".join(t) for n in range(4, max_len + 1) for t in itertools.product("01", repeat=n - 1)]


def parity(x: str) -> int:
    return int(x.count("0") % 2 == 0)


# --- held-out automata ---------------------------------------------------------------------------


def test_parity_dfas_are_held_out_however_written():
    two = DFA(((1, 0), (0, 1)), (True, False))
    redundant = DFA(((1, 0), (2, 1), (1, 2)), (True, False, True))  # state 2 duplicates state 0
    unreachable = DFA(((1, 0), (0, 1), (3, 2), (2, 2)), (True, False, True, False))
    negation = DFA(((1, 0), (0, 1)), (False, True))
    after_first = DFA(((1, 1), (2, 1), (1, 2)), (False, True, False))  # odd zeros after the first symbol
    strings = support()
    for d in (two, redundant, unreachable, negation, after_first):
        assert {d(x) == parity(x) for x in strings} in ({True}, {False})  # the test's own check
        assert is_held_out(d)
    # a DFA that differs from PARITY only on strings with a single zero ("0111...") is held out too
    near = DFA(((1, 0), (2, 1), (3, 2), (2, 3)), (True, True, True, False))
    assert {x for x in strings if near(x) != parity(x)} == {"0" + "1" * n for n in range(3, 10)}
    assert agreement(near) > 0.99 and is_held_out(near)
    assert not is_held_out(DFA(((0, 1), (0, 1)), (False, True)))  # "ends with 1"


def test_no_training_dfa_computes_parity_or_comes_close():
    cfg = GPTConfig(family="dfa", **TINY)
    rng = random.Random(0)
    strings = support(10)
    seen = set()
    for _ in range(1500):
        d = sample_automaton(cfg, rng)
        assert 2 <= len(d.delta) <= 4 and not is_validation(d)
        if d in seen:
            continue
        seen.add(d)
        assert len({d(x) == parity(x) for x in strings}) == 2  # differs from PARITY and its negation
        assert len({d(x) for x in strings}) == 2  # not constant on the support
        assert agreement(d) < gpt.HOLD_OUT_AGREEMENT
    assert len(seen) > 1000


def test_held_out_patterns_are_abcabb_and_its_near_twins():
    cfg = GPTConfig(family="pattern", **TINY)
    every = ["".join(t) for n in range(3, 7) for t in itertools.product("abc", repeat=n)]
    assert sorted(p for p in every if is_held_out(Contains(p))) == ["abcabb", "bcabb", "cabb"]
    rng = random.Random(1)
    train = {sample_automaton(cfg, rng).pattern for _ in range(3000)}
    assert not train & {"abcabb", "bcabb", "cabb"}
    assert all(3 <= len(p) <= 6 and not is_validation(Contains(p)) for p in train)
    validation = {sample_automaton(cfg, rng, "validation").pattern for _ in range(300)}
    assert validation and not validation & train
    assert 0.08 < sum(is_validation(Contains(p)) for p in every) / len(every) < 0.17  # about one in 8


# --- sequences and loss masks -----------------------------------------------------------------


def test_encode_pairs_puts_the_loss_on_every_label():
    tokens, targets = encode_pairs([("ab", 1), ("c", 0)])
    v = {s: i for i, s in enumerate(gpt.VOCAB)}
    assert tokens == [v["<bos>"], v["a"], v["b"], v[":"], v["<1>"], v[";"], v["c"], v[":"], v["<0>"]]
    ig = gpt.IGNORE
    assert targets == [ig, ig, ig, v["<1>"], ig, ig, ig, v["<0>"], ig]


@pytest.mark.parametrize("family", ["dfa", "pattern", "stack", "reversal", "vending"])
def test_batches_hold_the_automatons_labels(family):
    cfg = GPTConfig(family=family, **{**TINY, "max_shots": 6, "max_len": 20})
    rng = random.Random(2)
    for _ in range(50):
        a = sample_automaton(cfg, rng)
        pairs = sample_pairs(cfg, rng, a)
        assert len(pairs) == cfg.max_shots + 1
        for x, y in pairs:
            assert y == a(x) and gpt.MIN_LEN[family] <= len(x) <= cfg.max_len
            assert set(x) <= set(gpt.ALPHABET[family]) and (family != "dfa" or x[0] == "0")
    tokens, targets = make_batch(cfg, 0, range(8))
    assert tokens.shape == targets.shape and tokens.shape[1] <= cfg.train_len
    masked = targets != gpt.IGNORE
    assert (masked.sum(1) == cfg.max_shots + 1).all()  # one label per pair, none elsewhere
    assert (tokens[masked] == gpt.SEP).all()  # the label is predicted at the ':'
    nxt = torch.roll(tokens, -1, dims=1)
    assert torch.equal(targets[masked], nxt[masked])  # ... and it is the token that follows
    assert set(targets[masked].tolist()) <= {gpt.NO, gpt.YES}
    # rows are drawn from their own seeds: a process holding rows 1 and 3 sees the same sequences
    part, _ = make_batch(cfg, 0, [1, 3])
    for i, r in enumerate([1, 3]):
        n = int((part[i] != gpt.PAD).sum())
        assert torch.equal(part[i, :n], tokens[r, :n]) and (tokens[r, n:] == gpt.PAD).all()


def test_pattern_labels_are_balanced():
    cfg = GPTConfig(family="pattern", **{**TINY, "max_shots": 20, "max_len": 20})
    rng = random.Random(3)
    labels = [y for _ in range(40) for _, y in sample_pairs(cfg, rng)]
    assert 0.4 < sum(labels) / len(labels) < 0.6


# --- training: seeded, resumable --------------------------------------------------------------


def weights(model) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.net.state_dict().items()}


def test_seeded_training_repeats_and_resumes_exactly(tmp_path):
    cfg = GPTConfig(family="pattern", steps=6, checkpoint_every=2, **TINY)
    a, b = train_icl_gpt(cfg), train_icl_gpt(cfg)
    assert a.losses == b.losses and len(a.losses) == 6
    assert all(torch.equal(v, weights(b)[k]) for k, v in weights(a).items())
    other = train_icl_gpt(GPTConfig(family="pattern", steps=6, seed=1, **TINY))
    assert other.losses != a.losses

    class Stop(Exception):
        pass

    def interrupt(step, loss):
        if step == 3:
            raise Stop

    with pytest.raises(Stop):
        train_icl_gpt(cfg, tmp_path, on_progress=interrupt)
    assert latest_checkpoint(tmp_path).name == "step_0000002.pt"
    steps = []
    resumed = train_icl_gpt(cfg, tmp_path, on_progress=lambda s, _: steps.append(s))
    assert steps == [3, 4, 5, 6]  # picked up after the checkpoint at step 2
    assert resumed.losses == a.losses
    assert all(torch.equal(v, weights(resumed)[k]) for k, v in weights(a).items())
    assert [p.name for p in tmp_path.glob("step_*.pt")] == ["step_0000006.pt"]  # only the newest kept
    again = train_icl_gpt(cfg, tmp_path, on_progress=lambda s, _: steps.append(s))  # finished: no steps
    assert steps == [3, 4, 5, 6] and again.losses == a.losses
    with pytest.raises(ConfigError, match="holds a run with other lr"):
        train_icl_gpt(GPTConfig(family="pattern", steps=6, lr=1e-2, **TINY), tmp_path)
    # another step count: not below the checkpoint's; equal to it, the checkpoint's model as it is
    with pytest.raises(ConfigError, match="holds a run at step 6, beyond steps=5"):
        train_icl_gpt(GPTConfig(family="pattern", steps=5, **TINY), tmp_path)
    more = train_icl_gpt(GPTConfig(family="pattern", steps=8, **TINY), tmp_path, lambda s, _: steps.append(s))
    assert steps[-2:] == [7, 8] and more.losses[:6] == a.losses and len(more.losses) == 8
    stopped = tmp_path / "stopped"
    with pytest.raises(Stop):
        train_icl_gpt(cfg, stopped, on_progress=interrupt)
    at_two = train_icl_gpt(GPTConfig(family="pattern", steps=2, **TINY), stopped)
    assert at_two.losses == a.losses[:2]


# --- in-context learning ----------------------------------------------------------------------


def test_training_learns_from_the_exemplars_labels(monkeypatch):
    """The whole path (sequences, loss mask, causal model, optimiser) learns in context where that is
    quick: each sequence's labels are coin flips of a bias q in {0.1, 0.9} drawn per sequence, so
    only the exemplars' labels tell q. (Content ICL of the real families does not emerge in a few
    hundred CPU steps; see the module docstring.)"""

    def biased_pairs(cfg, rng, automaton=None):
        q = rng.choice([0.1, 0.9])
        return [(gpt.sample_input(cfg, rng), int(rng.random() < q)) for _ in range(cfg.max_shots + 1)]

    monkeypatch.setattr(gpt, "sample_pairs", biased_pairs)
    cfg = GPTConfig(
        family="pattern",
        n_layer=1,
        n_head=2,
        d_model=32,
        max_shots=8,
        max_len=8,
        task_mix=0.0,
        steps=150,
        batch_size=16,
        lr=3e-3,
        warmup=20,
    )
    model = train_icl_gpt(cfg)
    assert sum(model.losses[-20:]) / 20 < 0.5 < sum(model.losses[20:40]) / 20  # from ln 2 towards 0.33
    rng = random.Random(5)
    queries = [Item(gpt.sample_input(cfg, rng), 0) for _ in range(20)]
    for label in (0, 1):
        shots = [Item(gpt.sample_input(cfg, rng), label) for _ in range(8)]
        assert model.predict(shots, queries) == [label] * 20


def test_validation_floors_score_the_items_the_accuracy_scores(tiny_parity, monkeypatch):
    """A model that answers its exemplars' majority label (or always 1) scores exactly the floors,
    so the floors beside `validation_accuracy` are measured on its automata and queries."""
    model, _ = tiny_parity
    kw = {"n_automata": 30, "queries": 7, "seed": 2}

    def scripted(answer):
        with monkeypatch.context() as m:
            m.setattr(gpt.ICLGPT, "predict", lambda self, sh, qs: [answer(sh)] * len(qs))
            return validation_accuracy(model, shots, **kw)

    for shots in (0, 3):
        floors = gpt.validation_floors(model.cfg, shots, **kw)
        always_one = scripted(lambda sh: 1)
        assert floors["majority_label"] == max(always_one, 100.0 - always_one) >= 50.0
        if shots:
            assert floors["shot_majority"] == scripted(lambda sh: int(2 * sum(i.label for i in sh) > len(sh)))
            assert floors != gpt.validation_floors(model.cfg, shots, **{**kw, "seed": 3})
        else:
            assert floors["shot_majority"] is None


# --- evaluation on the real tasks and bad input -----------------------------------------------


@pytest.fixture(scope="module")
def tiny_parity():
    model = train_icl_gpt(GPTConfig(family="dfa", steps=2, context=60, **TINY))
    splits = make_splits(TASKS["parity"], 0, n_train=20, n_test=30, n_ood=30, deltas=(0.85,))
    return model, splits


def test_evaluate_gpt_scores_the_split(tiny_parity):
    model, splits = tiny_parity
    s = evaluate_gpt(model, "parity", splits, shots=2, delta=0.85, n_items=25)
    block = model.cfg.context
    prefix = 1 + sum(len(it.shown) + 3 for it in splits.train[:2])
    fits = sum(prefix + len(it.shown) + 1 <= block for it in splits.ood[0.85][:25])
    assert s.n == 25 and 0 < s.parsed == fits < 25  # a query that does not fit is unparsed
    predictions = model.predict(splits.train[:2], splits.ood[0.85][:25])
    assert s.correct == sum(p == it.label for p, it in zip(predictions, splits.ood[0.85], strict=False))
    assert model.predict([], [Item("0" * (block + 5), 1)]) == [None]
    assert FAMILY_OF_TASK == {"parity": "dfa", "pattern_matching": "pattern", "stack": "stack",
                              "reversal": "reversal", "vending_machine": "vending"}  # fmt: skip


def test_bad_input_is_rejected_in_one_line(tiny_parity):
    model, splits = tiny_parity
    cases = [
        (lambda: GPTConfig(family="regex"), "family must be one of 'dfa', 'pattern'"),
        (lambda: GPTConfig(d_model=30, n_head=4), "d_model=30 must be a multiple of 2 \\* n_head=8"),
        (lambda: GPTConfig(steps=0), "steps must be an int >= 1"),
        (lambda: GPTConfig(min_states=4, max_states=3), "max_states must be an int >= 4"),
        (lambda: GPTConfig(device="tpu"), "device must be 'cpu', 'cuda' or 'cuda:N'"),
        (lambda: GPTConfig(max_shots=20, max_len=40, context=512), "context must be an int >= 904"),
        (lambda: GPTConfig(family="pattern", max_len=5), "max_len must be >= 8 for family 'pattern'"),
        (lambda: train_icl_gpt({"steps": 3}), "cfg must be a GPTConfig"),
        (lambda: model.predict(splits.train[:4], splits.test[:1]), "4 exemplars, but the model was trained"),
        (lambda: model.predict([], [Item("0a1", 1)]), "characters \\['a'\\] outside family 'dfa'"),
        (lambda: evaluate_gpt(model, "parity", splits, 4, 0.0, 5), "shots must be an int in \\[0, 3\\]"),
        (lambda: evaluate_gpt(model, "maze_solve", splits, 2, 0.0, 5), "task_name must be one of 'parity'"),
        (lambda: evaluate_gpt(model, "stack", splits, 2, 0.0, 5), "needs a model of family 'stack'"),
        (
            lambda: evaluate_gpt(model, "pattern_matching", splits, 2, 0.0, 5),
            "needs a model of family 'pattern'",
        ),
        (
            lambda: evaluate_gpt(model, "parity", splits, 2, 0.45, 5),
            "one of the splits' OOD shifts \\[0.85\\]",
        ),
        (lambda: evaluate_gpt(model, "parity", splits, 2, 0.0, 0), "n_items must be an int >= 1"),
        (lambda: validation_accuracy(model, shots=9), "shots must be an int in \\[0, 3\\]"),
    ]
    for call, message in cases:
        with pytest.raises(ConfigError, match=message) as e:
            call()
        assert "\n" not in str(e.value)
    few = make_splits(TASKS["parity"], 0, n_train=2, n_test=5, n_ood=0)
    with pytest.raises(ConfigError, match="shots=3 is more than the 2 training items"):
        evaluate_gpt(model, "parity", few, 3, 0.0, 5)

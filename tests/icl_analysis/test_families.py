"""The rule families of the stack, reversal and vending-machine tasks: the task's rule is a member
and labels the task's strings as the task's check does, it and its near twins are held out, the
generators write what they mean, and the GPT trains and evaluates on them."""

from __future__ import annotations

import random

import pytest

from iclr26.core.config import ConfigError
from iclr26.icl_analysis import families as fam
from iclr26.icl_analysis import gpt
from iclr26.icl_analysis.families import FAMILIES, Rule, agreement, all_rules, is_held_out, is_validation
from iclr26.icl_analysis.gpt import GPTConfig, evaluate_gpt, train_icl_gpt, validation_accuracy
from iclr26.icl_analysis.tasks import TASKS, Item, make_splits

NAMES = ["stack", "reversal", "vending"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("name", NAMES)
def test_the_tasks_rule_labels_task_strings_as_the_task_checks(name):
    family = FAMILIES[name]
    task = TASKS[family.task]
    splits = make_splits(task, 3, n_train=60, n_test=60, n_ood=60, deltas=(0.85,))
    rule = family.task_rule()
    for it in splits.train + splits.test + splits.ood[0.85]:
        x = family.render(it.entry)
        assert x is not None and set(x) <= set(family.alphabet)
        # no task string is already in the alphabet, so the GPT can tell rendered text apart
        assert set(it.entry) - set(family.alphabet)
        assert rule(x) == task.check(it.entry)
    # a different rule of the family disagrees with the task on some of its strings
    others = [r for r in all_rules(name)[:40] if r.params != family.task_params]
    xs, ys = fam.reference(name)
    assert all(any(r(x) != y for x, y in zip(xs, ys, strict=True)) for r in others)


@pytest.mark.parametrize("text", ["", "abc", "1\npush,0", "0\npush,7\n0", "+5,+10", "gfx#zz", "soda,x"])
def test_render_rejects_strings_of_another_shape(text):
    rendered = {name: f.render(text) for name, f in FAMILIES.items()}
    assert set(rendered.values()) == {None}


def test_held_out_rules_are_the_tasks_and_only_close_ones():
    assert [r.params for r in all_rules("stack") if is_held_out(r)] == [(0, 0, 1, 0)]
    assert [r.params for r in all_rules("reversal") if is_held_out(r)] == [(0, 1, 2, 3, 4)]
    assert [r.params for r in all_rules("vending") if is_held_out(r)] == [(5, 10, 15, 20, 25)]
    # the closest other rules stay below the hold-out agreement (and the task's rule is at 1.0)
    near = max(agreement(r) for r in all_rules("vending") if r.params != (5, 10, 15, 20, 25))
    assert agreement(Rule("vending", (5, 10, 15, 20, 25))) == 1.0 and 0.6 < near < fam.HOLD_OUT_AGREEMENT
    # a soda at 30 is never affordable on the task's tapes (they hold at most 25): far from the task
    assert not is_held_out(Rule("vending", (5, 10, 15, 20, 30)))


@pytest.mark.parametrize("name", NAMES)
def test_training_and_validation_rules_are_disjoint_and_never_held_out(name):
    rng = random.Random(4)
    train = {fam.sample_rule(name, rng) for _ in range(400)}
    validation = {fam.sample_rule(name, rng, "validation") for _ in range(100)}
    assert train and validation and not train & validation
    assert not any(is_held_out(r) or is_validation(r) for r in train)
    assert all(is_validation(r) for r in validation)
    share = sum(is_validation(r) for r in all_rules(name)) / len(all_rules(name))
    assert 0.05 < share < 0.2  # about one in 8


@pytest.mark.parametrize("name", NAMES)
def test_generators_write_what_they_mean_at_balanced_rates(name):
    family, rng = FAMILIES[name], random.Random(5)
    labels = []
    for _ in range(30):
        rule = fam.sample_rule(name, rng)
        for positive in (True, False) * 10:
            x = family.sample_input(rule.params, rng, positive, 24)
            if x is None:
                continue
            assert family.min_len <= len(x) <= 24 and set(x) <= set(family.alphabet)
            assert rule(x) == int(positive)
        labels += [y for _, y in (fam.sample_pair(rule, rng, 24) for _ in range(10))]
    assert 0.4 < sum(labels) / len(labels) < 0.6


def test_known_labels_by_hand():
    stack, rev, vm = (FAMILIES[n] for n in NAMES)
    assert stack.render("101\npush,0,pop,pop\n1") == "101|P0OO|1"
    assert stack.label((0, 0, 1, 0), "101|P0OO|10") == 1  # the task's stack: 1010, 101, 10
    assert stack.label((0, 0, 1, 0), "101|P0OO|1") == 0
    assert stack.label((1, 1, 1, 0), "101|P0OO|01") == 1  # push left: 0101, pop left twice: 01
    assert stack.label((0, 0, 2, 1), "101|P0O|10") == 1  # push the complement: 1011, one pop of two: 10
    assert stack.label((0, 0, 2, 1), "101|P0O|1") == 0
    assert rev.label((0, 1, 2, 3, 4), "vwx#xwv") == 1 and rev.label((1, 0, 2, 3, 4), "vwx#xvw") == 1
    assert rev.render("gfx%#%gfx") == "vx#xv"
    assert vm.render("+10,+10,biscuit,5") == "ttB=5"
    assert vm.label((5, 10, 15, 20, 25), "ttB=0") == 1 and vm.label((5, 10, 15, 15, 25), "ttB=5") == 1
    assert vm.label((5, 10, 15, 20, 25), "tC=0") == 0  # coffee costs more than 10


def test_a_rule_family_gpt_trains_and_scores_its_task():
    cfg = GPTConfig(family="vending", n_layer=1, n_head=2, d_model=16, max_shots=3, max_len=16,
                    batch_size=4, steps=2, warmup=1)  # fmt: skip
    model = train_icl_gpt(cfg)
    assert model.net.tok.num_embeddings == len(gpt.SPECIALS) + len(FAMILIES["vending"].alphabet)
    assert gpt.vocab("dfa") == gpt.VOCAB  # the old families' checkpoints keep their vocabulary
    splits = make_splits(TASKS["vending_machine"], 0, n_train=10, n_test=20, n_ood=20, deltas=(0.85,))
    s = evaluate_gpt(model, "vending_machine", splits, 3, 0.85, 20)
    assert s.n == 20 and s.parsed == 20
    assert 0 <= validation_accuracy(model, 2, n_automata=3) <= 100
    tokens, _ = gpt.make_batch(cfg, 0, range(4))
    assert int(tokens.max()) < model.net.tok.num_embeddings
    with pytest.raises(ConfigError, match="is not a vending_machine string"):
        model.predict([], [Item("+5,+10,x", 1)])
    with pytest.raises(ConfigError, match="needs a model of family 'stack'"):
        evaluate_gpt(model, "stack", make_splits(TASKS["stack"], 0, n_train=5, n_test=5, n_ood=0), 1, 0.0, 5)
    with pytest.raises(ConfigError, match="draws its inputs with its rules"):
        gpt.sample_input(cfg, random.Random(0))

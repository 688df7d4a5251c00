"""The nine generators: labels against independent checks, 5% noise, balance, seeded splits, and an
OOD shift that really moves the distribution."""

import random
import re

import pytest

from iclr26.core.config import ConfigError
from iclr26.icl_analysis.tasks import DELTAS, NOISE, TASKS, get_task, make_splits
from iclr26.icl_analysis.tasks.hamiltonian import parse_graph
from iclr26.icl_analysis.tasks.mazes import STEPS
from iclr26.icl_analysis.tasks.strings import TOKENS


def direct_label(name: str, entry: str) -> int:
    """Each task's label computed a second way, not with the task's own checker."""
    if name == "parity":
        return int(sum(c == "0" for c in entry) % 2 == 0)
    if name == "pattern_matching":
        return int(re.search("abcabb", entry) is not None)
    if name == "reversal":
        left, right = entry.split("#")
        pat = "|".join(re.escape(t) for t in TOKENS)
        return int(re.findall(pat, right) == re.findall(pat, left)[::-1] and re.sub(pat, "", right) == "")
    if name == "stack":
        initial, ops, final = entry.split("\n")
        bits = list(initial)
        toks = ops.split(",")
        for i, t in enumerate(toks):
            if t == "pop" and bits:
                bits = bits[:-1]
            elif t in "01" and i > 0 and toks[i - 1] == "push":
                bits = [*bits, t]
        return int(("".join(bits) or "empty") == final)
    if name in ("vending_machine", "vending_machine_sum"):
        *toks, last = entry.split(",")
        money = 0
        for t in toks:
            money += {"+5": 5, "+10": 10, "coffee": -15, "biscuit": -20, "soda": -25}[t]
            if money < 0:
                return 0 if name == "vending_machine" else -1
        return money if name == "vending_machine_sum" else int(str(money) == last)
    if name == "hamiltonian":
        adj, path = parse_graph(entry)
        n = len(adj)
        ok = sorted(path) == list(range(n)) and path[0] == 0
        return int(ok and all(path[(i + 1) % n] in adj[path[i]] for i in range(n)))
    grid_text, moves = entry.split("\n", 1)[1].rsplit("\n", 2)[0], entry.rsplit("\n", 1)[1].split(",")
    grid = grid_text.split("\n")
    if name == "maze_solve":
        (r, c) = next((i, row.index("S")) for i, row in enumerate(grid) if "S" in row)
        seen = {(r, c)}
        for m in moves:
            r, c = r + STEPS[m][0], c + STEPS[m][1]
            if not (0 <= r < len(grid) and 0 <= c < len(grid[r])) or grid[r][c] not in "+E" or (r, c) in seen:
                return 0
            seen.add((r, c))
        return int(grid[r][c] == "E" and len(seen) == sum(row.count("+") for row in grid) + 2)
    pytest.skip("maze_complete is checked by its own test")


@pytest.mark.parametrize("name", list(TASKS))
def test_labels_agree_with_a_direct_computation_and_noise_is_5_percent(name):
    task = TASKS[name]
    items = task.generate(400, 0.0, random.Random(1))
    assert len({i.entry for i in items}) == 400
    for it in items:
        assert task.check(it.entry) == it.clean_label
        if name != "maze_complete":
            assert direct_label(name, it.entry) == it.clean_label, it.entry
    flipped = sum(i.label != i.clean_label for i in items) / len(items)
    assert abs(flipped - NOISE) < 0.035  # 400 draws: ±3.2 standard errors
    if task.binary:
        assert sum(i.clean_label for i in items) == 200  # exactly balanced before the noise


def test_noise_rate_is_5_percent_on_a_large_sample():
    items = TASKS["parity"].generate(6000, 0.0, random.Random(3))
    assert abs(sum(i.label != i.clean_label for i in items) / 6000 - 0.05) < 0.009


def test_maze_complete_answers_fill_the_gap():
    task = TASKS["maze_complete"]
    items = task.generate(200, 0.0, random.Random(2))
    pos = [i for i in items if i.clean_label == 1]
    for it in pos:
        grid_part, moves = it.entry.split("\nMissing moves:\n")
        assert grid_part.count("?") == 1 and set(moves.split(",")) <= set(STEPS)
        assert len(moves.split(",")) == 3
    for it in items:
        if it.clean_label == 0:  # a corrupted answer: one move changed, added or dropped
            assert len(it.entry.rsplit("\n", 1)[1].split(",")) in (2, 3, 4)


@pytest.mark.parametrize("name", list(TASKS))
def test_ood_shift_moves_the_distribution_and_grows_with_delta(name):
    task = TASKS[name]
    assert task.kl(0.0) == 0
    kls = [task.kl(d) for d in DELTAS]
    assert all(k > 0 for k in kls) and kls == sorted(kls) and len(set(kls)) == len(kls)
    for d in (0.0, *DELTAS):  # Q(δ) is a distribution in every state
        for row in task.transitions(d):
            assert min(row) >= 0 and sum(row) > 0


def test_ood_strings_differ_measurably():
    task = TASKS["pattern_matching"]
    base = task.generate(300, 0.0, random.Random(0))
    far = task.generate(300, 0.85, random.Random(0))
    assert sum(len(i.entry) for i in far) > 1.3 * sum(len(i.entry) for i in base)


def test_splits_are_deterministic_from_the_seed():
    task = TASKS["stack"]
    a = make_splits(task, 7, n_train=30, n_test=20, n_ood=10, deltas=(0.2, 0.85))
    b = make_splits(task, 7, n_train=30, n_test=20, n_ood=10, deltas=(0.2, 0.85))
    c = make_splits(task, 8, n_train=30, n_test=20, n_ood=10, deltas=(0.2, 0.85))
    assert a == b and a.train != c.train
    assert len(a.train) == 30 and len(a.test) == 20 and set(a.ood) == {0.2, 0.85}
    assert not {i.entry for i in a.train} & {i.entry for i in a.test}
    assert all(i.delta == 0.85 for i in a.ood[0.85])


def test_vm_sum_hides_the_balance_from_the_query():
    it = TASKS["vending_machine_sum"].generate(20, 0.0, random.Random(0))[0]
    assert it.shown == it.entry.rsplit(",", 1)[0] and it.clean_label == int(it.entry.rsplit(",", 1)[1])


def test_bad_names_and_sizes():
    with pytest.raises(ConfigError, match=r"task must be one of .*got 'parityy'; did you mean 'parity'"):
        get_task("parityy")
    with pytest.raises(ConfigError, match="delta must be"):
        TASKS["parity"].generate(10, 1.5, random.Random(0))
    with pytest.raises(ConfigError, match="n_train must be an int >= 1"):
        make_splits(TASKS["parity"], 0, n_train=0)

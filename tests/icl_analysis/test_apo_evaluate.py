"""APO's search (budget, beam, selection) with a rule-following test double standing in for the
model, and the evaluation path with the real embedded SmolLM2."""

from __future__ import annotations

import pytest

from iclr26.core.llm import Completion
from iclr26.icl_analysis.apo import APOConfig, optimise_prompt
from iclr26.icl_analysis.evaluate import Cell, cell_messages, evaluate_cell
from iclr26.icl_analysis.tasks import TASKS, make_splits

PARITY = TASKS["parity"]
SPLITS = make_splits(PARITY, 0, n_train=80, n_test=30, n_ood=10, deltas=(0.85,))


class RuleDouble:
    """A test double, not a language model: it answers a labelling request correctly only when the
    instruction contains the word COUNT, and proposes an instruction with COUNT when asked to edit.
    It lets the test see whether APO keeps the better prompt."""

    name = "rule-double"
    supports_images = supports_json_schema = supports_logprobs = False

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages, **kw):
        self.calls += 1
        last = messages[-1]["content"]
        if "Rewrite the instruction" in last:
            return [Completion("COUNT the zeros; reply with 1 if even, else 0.")]
        if "Give 2 distinct reasons" in last:
            return [Completion("- it never says how to count the zeros\n- it does not define even")]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        label = int(last.count("0") % 2 == 0) if "COUNT" in system else 1
        return [Completion(str(label))]


def test_apo_finds_the_better_prompt_within_budget():
    model = RuleDouble()
    cfg = APOConfig(beam=2, rounds=2, minibatch=10, reasons=2, budget=200)
    res = optimise_prompt(model, PARITY, SPLITS.train, cfg, seed=0)
    assert "COUNT" in res.prompt and res.accuracy == 100.0
    assert res.calls == model.calls <= cfg.budget
    assert res.history[0]["round"] == 0 and any(h["round"] == 1 for h in res.history)


def test_apo_stops_at_its_budget():
    model = RuleDouble()
    res = optimise_prompt(model, PARITY, SPLITS.train, APOConfig(minibatch=10, budget=12), seed=0)
    assert res.calls <= 12 and model.calls <= 12 and "COUNT" not in res.prompt


def test_apo_needs_enough_training_items():
    with pytest.raises(ValueError, match="APO needs at least 18 training items"):
        optimise_prompt(RuleDouble(), PARITY, SPLITS.train[:5], APOConfig(minibatch=16))


def test_cells_take_the_first_items_of_the_right_split():
    chats = cell_messages(PARITY, SPLITS, Cell("parity", "modus_ponens", 2, 0.85), n_items=4, seed=0)
    assert [m[-1]["content"] for m, _ in chats] == [i.shown for i in SPLITS.ood[0.85][:4]]
    assert [y for _, y in chats] == [i.label for i in SPLITS.ood[0.85][:4]]


def test_evaluate_cell_with_smollm2(smollm2):
    res = evaluate_cell(
        smollm2,
        PARITY,
        SPLITS,
        Cell("parity", "description", 2, 0.0),
        n_items=4,
        logprobs=True,
        keep_replies=True,
    )
    assert res.score.n == 4 and len(res.replies) == 4
    assert res.logprob is not None and res.logprob.n == 4
    # a reply that does not parse is scored by the mode, never a crash
    assert (res.score.parsed <= 4 and res.score.punish <= res.score.drop) or res.score.parsed == 0


class OverflowDouble(RuleDouble):
    """A test double whose server refuses long prompts, as llama.cpp does past its context."""

    def chat(self, messages, **kw):
        from iclr26.core.llm.base import LLMError

        if sum(len(m["content"]) for m in messages) > 150:
            raise LLMError("server returned an error: request exceeds the available context size")
        return super().chat(messages, **kw)


def test_a_refused_request_is_an_unparsed_reply_not_a_crash():
    res = evaluate_cell(OverflowDouble(), PARITY, SPLITS, Cell("parity", "modus_ponens", 20, 0.0), n_items=3)
    assert res.refused == 3 and res.score.parsed == 0 and res.score.punish == 0.0
    assert res.as_dict()["refused"] == 3

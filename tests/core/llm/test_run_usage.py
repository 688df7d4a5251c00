"""A run's language-model usage lands in results.json, and a resumed run is answered from the
run folder's cache (a real system run through the runner, on the real SmolLM2)."""

from dataclasses import dataclass

import pytest

from iclr26.core import Report, RunContext, System, Table, load_record
from iclr26.core.runner import run_system

pytestmark = pytest.mark.llm


@dataclass(frozen=True)
class AskConfig:
    questions: int = 3
    seed: int = 0


def run_ask(cfg: AskConfig, ctx: RunContext) -> Report:
    model = ctx.chat_model()
    rows = []
    for i in range(cfg.questions):
        [c] = model.chat([{"role": "user", "content": f"What is {i} times 2?"}], max_tokens=8)
        rows.append([i, c.text])
    return Report(tables=[Table("answers", ["i", "text"], rows)])


ASK = System(
    name="ask",
    number=0,
    title="Ask a model",
    claim="-",
    presets={p: AskConfig() for p in ("smoke", "demo", "bench", "paper")},
    run=run_ask,
)


def test_usage_in_results_and_resume_from_the_cache(tmp_path):
    record, run_dir = run_system(ASK, "smoke", out=tmp_path / "run", llm="embedded")
    u = load_record(run_dir).llm_usage
    assert (
        u["calls"] == 3 and u["cached_calls"] == 0 and u["completion_tokens"] > 0 and u["prompt_tokens"] > 0
    )
    assert (run_dir / "llm-cache.sqlite").exists()
    assert "Language model: 3 calls" in (run_dir / "report.md").read_text()
    again, _ = run_system(ASK, "smoke", out=run_dir, llm="embedded")  # a rerun asks nothing
    assert again.llm_usage["cached_calls"] == 3 and again.llm_usage["total_tokens"] == 0
    assert again.report.tables[0].rows == record.report.tables[0].rows

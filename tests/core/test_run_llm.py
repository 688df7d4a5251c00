"""The run's model (`--llm`): with only `ICLR26_LLM_BASE_URL` set, every system that has an LLM arm
sends its requests to the user's server, and `--llm embedded` keeps them off it.

A stub OpenAI-compatible server (a real HTTP server on 127.0.0.1, not a language model) counts the
requests; each system runs a smoke-sized run with its LLM arm on, through `run_system` as
`iclr26 run NAME` does. Its reply is one fixed text that every system's parser takes without
failing the run (the LLM judge of vincie needs its two scores in it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iclr26.catalog import PAPERS, get_system
from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.records import load_record
from iclr26.core.runner import run_system
from tests.core.llm.json_server import ChatStub, serve
from tests.devops_gym.conftest import DEBIAN as DEVOPS_DEBIAN

SRC = Path(__file__).resolve().parents[2] / "src" / "iclr26"

REPLY = '{"prompt_following": 5, "consistency": 5}'
"""the stub's answer to every request: vincie's judge parses its scores, the others fail to parse
it and score the item as failed (none of them fails the run for it)"""

LLM_ARMS: dict[str, dict[str, str]] = {
    "conavbench": {"agents": "llm", "llm_episodes": "1", "protocols": "high", "n_single": "0",
                   "n_collab": "6", "n_scenes": "3"},
    "devops_gym": {"agents": "llm", "llm_tasks": "1", "max_steps": "1", "categories": "monitor"},
    "glow": {"agents": "react", "step_budget": "2"},
    "icl_analysis": {"tasks": "parity", "styles": "modus_ponens", "shots": "2", "deltas": "0",
                     "items": "2", "baselines": "", "gpt_tasks": "", "n_train": "20", "n_test": "10",
                     "logprobs": "true"},
    "lfqa_e": {"metrics": "judge_pairwise", "judge_items": "1", "n_questions": "4", "n_boot": "10"},
    "liveweb_ie": {"methods": "cot", "records_per_type": "1", "pages_per_group": "1", "versions": "0",
                   "types": "type_1", "sites": "books"},
    "sci_refine": {"rows": "baseline", "n_questions": "1", "n_distractors": "5"},
    "scienceboard": {"agents": "llm", "domains": "algebra", "per_domain": "1", "max_steps": "1"},
    "spatial_dise": {"vlm_row": "true", "vlm_items": "1", "bench_items": "8", "train_items": "0",
                     "val_items": "0", "baselines": "random"},
    "vincie": {"methods": "copy", "judge": "llm", "paraphrase": "true", "bench_sessions": "1",
               "turns": "1"},
}  # fmt: skip
"""each system with an LLM arm: smoke-preset overrides that turn the arm on and keep the rest small"""

NEEDS = {
    "devops_gym": pytest.mark.debian(*DEVOPS_DEBIAN),
    "scienceboard": pytest.mark.debian(
        "xvfb", "xdotool", "dbus", "at-spi2-core", "python3-pyatspi", "openbox", "kalgebra"
    ),
}
"""the arms that run in sandboxes or on the desktop need those Debian packages"""


def _calls_a_model(name: str) -> bool:
    """Whether the system's code asks the run context for a model."""
    return any("chat_model(" in p.read_text() for p in (SRC / name).rglob("*.py"))


def test_every_system_that_asks_for_a_model_is_listed():
    """A new LLM system joins `LLM_ARMS`, so this test reaches its arm too."""
    assert {p.name for p in PAPERS if _calls_a_model(p.name)} == set(LLM_ARMS)


@pytest.fixture
def stub(monkeypatch):
    """The stub server; only `ICLR26_LLM_BASE_URL` is set (the model and key variables unset)."""
    handler = ChatStub.new(lambda body: REPLY)
    with serve(handler) as url:
        monkeypatch.setenv("ICLR26_LLM_BASE_URL", f"{url}/v1")
        for var in ("ICLR26_LLM_MODEL", "ICLR26_LLM_API_KEY", "ICLR26_LLM_MAX_CONCURRENCY"):
            monkeypatch.delenv(var, raising=False)
        yield handler


@pytest.mark.parametrize("name", [pytest.param(n, marks=NEEDS.get(n, ())) for n in LLM_ARMS])
def test_the_llm_arm_reaches_the_users_server(name, stub, tmp_path):
    system = get_system(name)
    if system.status != "implemented":
        pytest.skip(f"{name} is {system.status} here")
    record, run_dir = run_system(system, "smoke", LLM_ARMS[name], out=tmp_path / name)
    assert record.status == "complete"
    assert stub.requests, f"{name} sent no request to ICLR26_LLM_BASE_URL"
    assert record.llm["used"] == "http" and record.llm["asked"] == "auto"
    assert record.llm["identity"] == "http:stub-model"
    assert record.llm_usage["calls"] >= len(stub.requests) - record.llm_usage["cached_calls"]
    assert load_record(run_dir).llm_usage["prompt_tokens"] > 0  # the server's counts, in results.json


def test_ray_workers_use_the_runs_model_and_report_their_tokens(stub, tmp_path):
    """icl_analysis's cells in Ray tasks: each worker opens the run's choice (the stub, though the
    worker's environment is the driver's at `ray.init`) and its usage comes back to results.json."""
    ray = pytest.importorskip("ray")
    cells = {**LLM_ARMS["icl_analysis"], "shots": "2,5"}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        record, _ = run_system(
            get_system("icl_analysis"), "smoke", cells, out=tmp_path / "ray", parallel="ray"
        )
    finally:
        ray.shutdown()
    asked = len(stub.requests)  # two cells of two items (a reply and a log-prob request each)
    assert asked >= 4, "the Ray workers sent no request to ICLR26_LLM_BASE_URL"
    # every request was a worker's (the driver's model asks nothing here), and its tokens came back
    assert record.llm_usage["calls"] == asked and record.llm_usage["prompt_tokens"] == 10 * asked


@pytest.mark.llm
def test_llm_embedded_overrides_the_variable(stub, tmp_path):
    """`--llm embedded` with ICLR26_LLM_BASE_URL set: SmolLM2 answers, the server hears nothing."""
    record, _ = run_system(
        get_system("sci_refine"), "smoke", LLM_ARMS["sci_refine"], out=tmp_path / "run", llm="embedded"
    )
    assert record.status == "complete" and record.llm_usage["calls"] > 0
    assert record.llm["used"] == "embedded" and record.llm["identity"].startswith("embedded:")
    assert stub.requests == []


def test_a_resume_with_another_model_is_refused(stub, tmp_path):
    """A run folder made with the server is not resumed with the embedded model (or the reverse)."""
    system = get_system("sci_refine")
    run_system(system, "smoke", LLM_ARMS["sci_refine"], out=tmp_path / "run")
    with pytest.raises(ConfigError, match=r"made with --llm http, not embedded") as e:
        run_system(system, "smoke", LLM_ARMS["sci_refine"], out=tmp_path / "run", llm="embedded")
    assert e.value.exit_code == 2 and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("name", "field"),
    [("conavbench", "llm"), ("devops_gym", "llm_path"), ("glow", "llm"), ("icl_analysis", "model"),
     ("lfqa_e", "model"), ("liveweb_ie", "llm"), ("sci_refine", "llm"), ("scienceboard", "llm"),
     ("spatial_dise", "vlm"), ("vincie", "llm_backend")],
)  # fmt: skip
def test_an_old_model_field_names_the_flag(name, field):
    with pytest.raises(ConfigError, match=r"has no field .* any more: .*--llm") as e:
        get_system(name).config("smoke", {field: "http"})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("name", "overrides", "what"),
    [
        ("spatial_dise", {"vlm_row": "true"}, "the VLM row"),
        ("vincie", {"judge": "llm"}, "the LLM judge"),
        ("scienceboard", {"agents": "oracle,llm", "observation": "screenshot"}, "observation=screenshot"),
    ],
)
def test_a_text_model_is_refused_where_images_are_needed_before_any_work(
    name, overrides, what, tmp_path, monkeypatch
):
    """The embedded (text-only) model where a system needs images: one line, exit 2, and nothing
    done first (no data generated, no model trained, no desktop started)."""
    monkeypatch.delenv("ICLR26_LLM_BASE_URL", raising=False)
    refused = re.escape(what) + r".* needs a model that sees images, and --llm embedded reads text only"
    with pytest.raises(UserError, match=refused) as e:
        run_system(get_system(name), "smoke", overrides, out=tmp_path / "run")
    assert e.value.exit_code == 2 and "\n" not in str(e.value)
    left = {p.name for p in (tmp_path / "run").iterdir()}
    assert left <= {"results.json", "report.md", "traceback.txt", ".lock"}, left


@pytest.mark.parametrize(
    ("spec", "env", "message"),
    [
        ("http", None, r"--llm http needs ICLR26_LLM_BASE_URL"),
        ("gpt-5", None, r"--llm must be one of auto, embedded, http, hf:PATH; got 'gpt-5'"),
        ("hf:/no/such/folder", None, r"give hf:PATH with PATH a local Hugging Face checkpoint folder"),
        ("auto", "localhost:8000", r"ICLR26_LLM_BASE_URL must start with http:// or https://"),
    ],
)
def test_a_bad_choice_is_one_line_before_the_run(spec, env, message, tmp_path, monkeypatch):
    if env is None:
        monkeypatch.delenv("ICLR26_LLM_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("ICLR26_LLM_BASE_URL", env)
    with pytest.raises(UserError, match=re.escape(message) if spec == "gpt-5" else message):
        run_system(get_system("dash"), "smoke", out=tmp_path / "run", llm=spec)
    assert not (tmp_path / "run").exists()


def test_results_record_the_choice_for_a_run_without_a_model(tmp_path, monkeypatch):
    monkeypatch.delenv("ICLR26_LLM_BASE_URL", raising=False)
    _, run_dir = run_system(get_system("tiered_pruning"), "smoke", out=tmp_path / "run")
    saved = json.loads((run_dir / "results.json").read_text())
    assert saved["llm"] == {"asked": "auto", "used": "embedded"} and saved["llm_usage"] is None


def test_the_cli_takes_llm_and_refuses_an_old_field_in_one_line(stub, tmp_path):
    """`iclr26 run NAME --llm ...` reaches the run; `--set llm=http` is one line naming `--llm`."""
    from typer.testing import CliRunner

    import iclr26.cli as cli

    runner = CliRunner()
    res = runner.invoke(cli.app, ["run", "glow", "--preset", "smoke", "--set", "llm=http"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "error: GlowConfig has no field 'llm' any more: choose the run's model with --llm (auto, embedded, "
        "http or hf:PATH)"
    ]
    res = runner.invoke(
        cli.app, ["run", "dash", "--preset", "smoke", "--llm", "nope", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "error: --llm must be one of auto, embedded, http, hf:PATH" in res.output
    args = ["run", "sci_refine", "--preset", "smoke", "--llm", "http", "--out", str(tmp_path / "run")]
    for k, v in LLM_ARMS["sci_refine"].items():
        args += ["--set", f"{k}={v}"]
    res = runner.invoke(cli.app, args)
    assert res.exit_code == 0, res.output
    assert stub.requests and load_record(tmp_path / "run").llm["asked"] == "http"


def test_the_tour_passes_llm_to_each_run_and_reuses_no_run_of_another_model(stub, tmp_path):
    """`iclr26 demo` runs each system in its own process: the server's variable reaches it, and a
    finished run made with the server is not reused by a tour with `--llm embedded` (that run is
    refused in one line, since its folder holds another model's answers)."""
    from iclr26.core import tour

    system = get_system("sci_refine")
    [done] = tour.run_tour([system], tmp_path, preset="smoke", jobs=1, say=lambda m: None)
    assert done.status == "complete" and done.record.llm["used"] == "http" and stub.requests
    [again] = tour.run_tour([system], tmp_path, preset="smoke", jobs=1, llm="auto", say=lambda m: None)
    assert again.status == "reused"
    [other] = tour.run_tour([system], tmp_path, preset="smoke", jobs=1, llm="embedded", say=lambda m: None)
    assert other.status == "failed" and "made with --llm http, not embedded" in other.error


def test_a_password_in_the_server_url_goes_to_the_server_not_into_the_run_folder(tmp_path, monkeypatch):
    """`ICLR26_LLM_BASE_URL=http://user:secret@host/v1`: the server gets basic auth; results.json,
    report.md and the model record name the server without the password."""
    import base64

    handler = ChatStub.new(lambda body: REPLY)
    with serve(handler) as url:
        monkeypatch.setenv("ICLR26_LLM_BASE_URL", url.replace("http://", "http://me:s3cret@") + "/v1")
        monkeypatch.delenv("ICLR26_LLM_API_KEY", raising=False)
        record, run_dir = run_system(
            get_system("sci_refine"), "smoke", LLM_ARMS["sci_refine"], out=tmp_path / "run"
        )
    assert handler.requests and record.llm["base_url"] == url + "/v1"
    assert handler.seen_headers[-1]["Authorization"] == "Basic " + base64.b64encode(b"me:s3cret").decode()
    for path in run_dir.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".txt"):
            assert "s3cret" not in path.read_text(errors="replace"), path

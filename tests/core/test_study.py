"""`core.study`: the ledger survives a kill at any byte, `jobs` does not change the cells, each verdict
of the one claim rule on data whose outcome is known, and a failing oracle or passing null is flagged."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from iclr26.core.claim import Claim, judge
from iclr26.core.ledger import CELLS_FILE, LedgerError, read_cells
from iclr26.core.records import ClaimCheck, Report, RunRecord, load_record, render_report, save_record
from iclr26.core.study import Arm, Reference, Study, Unit, run_study
from iclr26.core.system import RunContext
from tests.core.llm.json_server import JSONHandler, serve
from tests.waiting import wait_until

ROOT = Path(__file__).parents[2]


def noisy_measure(arm: Arm, unit: Unit, ctx: RunContext) -> dict:
    """Deterministic given the cell's seed (run_study seeds NumPy's global stream per cell)."""
    offset = arm.params.get("offset", 0.0)
    return {"score": float(unit.seed + offset + np.random.normal(0, 0.1)), "passed": arm.role != "null"}


def toy_study(n_units: int = 4, measure=noisy_measure, **kw) -> Study:
    arms = [
        Arm("ours", "method", params={"offset": 1.0}),
        Arm("base", "baseline"),
        Arm("zero", "floor", floor="constant"),
        Arm("oracle", "oracle"),
        Arm("null", "null"),
    ]
    units = [Unit(f"u{i}", seed=i) for i in range(n_units)]
    kw.setdefault("claims", [Claim("score", "ours", ("base",))])
    return Study("toy", arms, units, measure, pass_metric="passed", config={"n": n_units}, **kw)


def ctx_in(path: Path) -> RunContext:
    path.mkdir(parents=True, exist_ok=True)
    return RunContext(out_dir=path)


def ledger(path: Path) -> list[dict]:
    """The ledger's records without their wall time (the one field that may differ between runs)."""
    recs = [json.loads(line) for line in (path / CELLS_FILE).read_text().splitlines()]
    for r in recs:
        r.pop("wall_s")
    return recs


def test_resume_after_a_cut_at_every_byte_gives_the_same_ledger(tmp_path):
    full = run_study(toy_study(), ctx_in(tmp_path / "full"))
    data = (tmp_path / "full" / CELLS_FILE).read_bytes()
    expected = ledger(tmp_path / "full")
    assert len(expected) == 20 and full.checks[0].verdict == "held"
    last = data.rfind(b"\n", 0, len(data) - 1) + 1
    cuts = list(range(last, len(data) + 1)) + list(range(0, last, 37))  # every byte of the last record
    for cut in cuts:
        run = tmp_path / f"cut{cut}"
        run.mkdir()
        (run / CELLS_FILE).write_bytes(data[:cut])
        result = run_study(toy_study(), RunContext(out_dir=run))
        assert ledger(run) == expected, f"cut at byte {cut}"
        assert result.report.tables[0].rows == full.report.tables[0].rows
    # a finished ledger is not run again
    again = run_study(toy_study(), RunContext(out_dir=tmp_path / "full"))
    assert (tmp_path / "full" / CELLS_FILE).read_bytes() == data and again.checks == full.checks


SLOW_STUDY = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from iclr26.core.interrupt import stop_on_signals
    from iclr26.core.study import run_study
    from iclr26.core.system import RunContext
    from tests.core.test_study import toy_study, noisy_measure

    def slow(arm, unit, ctx):
        time.sleep(60 if arm.name == "null" else 0.05)  # the last arm's cells outlast the test
        return noisy_measure(arm, unit, ctx)

    with stop_on_signals():
        run_study(toy_study(measure=slow), RunContext(out_dir=Path(sys.argv[1])), jobs=int(sys.argv[2]))
    """
)


def start_slow(out: Path, jobs: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    out.mkdir()
    cmd = [sys.executable, "-c", SLOW_STUDY, str(out), str(jobs)]
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True)


def cells_so_far(out: Path) -> int:
    path = out / CELLS_FILE
    return path.exists() and path.read_bytes().count(b"\n")


@pytest.mark.parametrize(("sig", "jobs"), [(signal.SIGKILL, 1), (signal.SIGTERM, 2)])
def test_a_killed_run_resumes_to_the_uninterrupted_ledger(tmp_path, sig, jobs):
    """A real run killed mid-way (SIGKILL: no cleanup at all; SIGTERM with 2 workers: they stop their
    cells at once, the minute-long ones too) resumes, running only what was missing, to the ledger of
    an uninterrupted run."""
    run_study(toy_study(), ctx_in(tmp_path / "whole"))
    proc = start_slow(tmp_path / "killed", jobs)
    try:
        wait_until(lambda: cells_so_far(tmp_path / "killed") >= 3, 60, "three cells recorded")
        os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
        assert proc.wait(timeout=30) != 0
        if sig == signal.SIGTERM:  # the run told its workers to stop: none is left behind
            wait_until(lambda: not _children_alive(proc.pid), 10, "the workers to exit")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever a failed check left
        proc.wait()
    done_before = cells_so_far(tmp_path / "killed")
    assert 3 <= done_before < 20
    run_study(toy_study(), RunContext(out_dir=tmp_path / "killed"))
    key = lambda r: (r["arm"], r["unit"])  # noqa: E731
    assert sorted(ledger(tmp_path / "killed"), key=key) == sorted(ledger(tmp_path / "whole"), key=key)


def _children_alive(pid: int) -> bool:
    """Whether any process of the killed run's session is left."""
    out = subprocess.run(["ps", "-o", "pid=", "-s", str(pid)], capture_output=True, text=True).stdout
    return bool(out.strip())


def test_two_jobs_give_the_ledger_of_one(tmp_path):
    one = run_study(toy_study(6), ctx_in(tmp_path / "one"), jobs=1)
    two = run_study(toy_study(6), ctx_in(tmp_path / "two"), jobs=2)
    key = lambda r: (r["arm"], r["unit"])  # noqa: E731
    assert sorted(ledger(tmp_path / "two"), key=key) == sorted(ledger(tmp_path / "one"), key=key)
    assert one.report.tables == two.report.tables and one.checks == two.checks


def test_another_config_is_refused_not_mixed(tmp_path):
    run_study(toy_study(4), ctx_in(tmp_path))
    with pytest.raises(LedgerError, match="another --out"):
        run_study(toy_study(5), RunContext(out_dir=tmp_path))


# ------------------------------------------------------------------------------- the claim rule


def values(xs) -> dict[str, float]:
    return {f"u{i}": float(x) for i, x in enumerate(xs)}


BASE = [10.0, 12.0, 9.0, 11.0, 13.0, 8.0]
UP = [b + 2 + 0.1 * (-1) ** i for i, b in enumerate(BASE)]  # every unit 2 ± 0.1 better
DOWN = [b - 2 + 0.1 * (-1) ** i for i, b in enumerate(BASE)]  # every unit 2 ± 0.1 worse
SWING = [b + (-1) ** i for i, b in enumerate(BASE)]  # differences +1, -1, ...: mean 0


@pytest.mark.parametrize(
    ("method", "claim", "verdict"),
    [
        (UP, Claim("s", "m", ("b",)), "held"),  # the interval excludes 0 on the claimed side
        (SWING, Claim("s", "m", ("b",)), "within noise"),
        (DOWN, Claim("s", "m", ("b",)), "did not hold"),
        (DOWN, Claim("s", "m", ("b",), higher_is_better=False), "held"),  # lower is better
        (UP, Claim("s", "m", ("b",), higher_is_better=False), "did not hold"),
        # the same with the paired bootstrap a skewed or bounded metric declares
        (UP, Claim("s", "m", ("b",), interval="bootstrap"), "held"),
        (SWING, Claim("s", "m", ("b",), interval="bootstrap"), "within noise"),
        (DOWN, Claim("s", "m", ("b",), interval="bootstrap"), "did not hold"),
    ],
)  # fmt: skip
def test_verdicts_on_constructed_data(method, claim, verdict):
    check = judge(claim, "b", values(method), values(BASE))
    assert check.verdict == verdict and check.n == 6
    lo, hi = check.interval
    assert lo <= check.method_value - check.baseline_value <= hi


def test_one_big_difference_among_noise_is_within_noise_not_held():
    # mean difference +1 but carried by one unit: 2 SE of the differences covers 0
    lopsided = [b + (6 if i == 0 else 0) for i, b in enumerate(BASE)]
    check = judge(Claim("s", "m", ("b",)), "b", values(lopsided), values(BASE))
    assert check.method_value > check.baseline_value and check.verdict == "within noise"


def test_too_few_pairs_is_not_tested():
    # a big gap on 2 paired units (the old paired margin on 2 units would have said held)
    check = judge(Claim("s", "m", ("b",)), "b", {"u0": 5.0, "u1": 6.1, "u2": 7.0}, {"u0": 1.0, "u1": 2.0})
    assert check.verdict == "not tested" and check.n == 2 and "fewer than the 3" in check.rule


def test_every_arm_at_its_floor_is_uninformative():
    zeros = values([0.0] * 6)
    claim = Claim("success", "m", ("b",), floor=0.0)
    assert judge(claim, "b", zeros, zeros).verdict == "uninformative"
    # at or below a floor arm's value per unit (an always-FAIL agent's successes)
    floor = values([1, 0, 1, 0, 1, 0])
    with_arm = Claim("success", "m", ("b",), floor_arm="fail")
    assert judge(with_arm, "b", floor, values([0] * 6), floor).verdict == "uninformative"
    # one unit above the floor: informative again
    assert judge(claim, "b", values([1, 0, 0, 0, 0, 0]), zeros).verdict == "within noise"


def test_a_claim_must_hold_against_every_baseline_and_the_worst_is_reported(tmp_path):
    def measure(arm, unit, ctx):
        return {
            "score": unit.seed + {"ours": 2.0, "weak": 0.0, "strong": 3.0}[arm.name] + 0.1 * (-1) ** unit.seed
        }

    arms = [Arm("ours"), Arm("weak", "baseline"), Arm("strong", "baseline")]
    study = Study("two", arms, [Unit(f"u{i}", i) for i in range(5)], measure,
                  claims=[Claim("score", "ours", ("weak", "strong"))])  # fmt: skip
    result = run_study(study, ctx_in(tmp_path))
    assert [c.verdict for c in result.checks] == ["held", "did not hold"]
    assert (
        result.report.claim_check.baseline == "strong" and result.report.claim_check.verdict == "did not hold"
    )
    assert result.report.tables[-1].title.startswith("Claim checks")


def test_a_paper_constant_is_never_a_baseline():
    with pytest.raises(ValueError, match="is a Reference"):
        toy_study(
            claims=[Claim("score", "ours", ("human",))],
            references=[Reference("human", {"score": 76.8}, "paper")],
        )
    with pytest.raises(ValueError, match="not an arm"):
        toy_study(claims=[Claim("score", "ours", ("gpt",))])


# -------------------------------------------------------------------------------- reference arms


def test_an_oracle_that_fails_or_a_null_that_passes_makes_the_suite_invalid(tmp_path):
    def broken(arm, unit, ctx):
        out = noisy_measure(arm, unit, ctx)
        if arm.name == "oracle" and unit.key == "u2":
            out["passed"] = False
        if arm.name == "null" and unit.key in ("u0", "u3"):
            out["passed"] = True
        return out

    result = run_study(toy_study(measure=broken), ctx_in(tmp_path / "bad"))
    assert result.invalid == [
        "the oracle arm 'oracle' failed 1 unit(s): u2",
        "the null arm 'null' passed 2 unit(s): u0, u3",
    ]
    check = result.report.claim_check
    assert check.verdict == "not tested" and "the suite is invalid" in check.rule
    table = result.report.tables[0]
    assert "INVALID SUITE" in table.caption and "'oracle' failed 1 unit(s): u2" in table.caption
    good = run_study(toy_study(), ctx_in(tmp_path / "good"))
    assert good.invalid == [] and good.report.claim_check.verdict == "held"


def test_standard_table_puts_floors_and_references_beside_the_method(tmp_path):
    study = toy_study(references=[Reference("paper", {"score": 4.2}, "Table 2")])
    table = run_study(study, ctx_in(tmp_path)).report.tables[0]
    assert [r[:3] for r in table.rows] == [
        ["ours", "method", 4], ["base", "baseline", 4], ["zero", "floor (constant)", 4],
        ["oracle", "oracle", 4], ["null", "null", 4], ["paper", "reference (Table 2)", None]]  # fmt: skip
    assert table.columns == ["arm", "role", "n units", "score", "score 95% interval", "passed",
                             "passed 95% interval"]  # fmt: skip
    passed = table.column("passed 95% interval")
    assert passed[3] == "[0.5101, 1]" and passed[4] == "[0, 0.4899]"  # Wilson, 4 of 4 and 0 of 4
    assert table.rows[-1][3] == 4.2


def test_an_arm_that_leaves_cells_empty_counts_only_the_units_it_measured(tmp_path):
    """devops_gym's llm arm runs a subset of the tasks: its other cells are empty, not units measured."""

    def subset(arm: Arm, unit: Unit, ctx: RunContext) -> dict:
        return {} if arm.name == "ours" and unit.seed >= 2 else noisy_measure(arm, unit, ctx)

    table = run_study(toy_study(measure=subset), ctx_in(tmp_path)).report.tables[0]
    assert [r[:3] for r in table.rows][:2] == [["ours", "method", 2], ["base", "baseline", 4]]


def test_the_verdict_goes_through_results_json_and_the_report(tmp_path):
    check = judge(Claim("s", "m", ("b",)), "b", values([b + 2 for b in BASE]), values(BASE))
    rec = RunRecord("toy", "smoke", {}, 0, "now", 1.0, "complete", Report(claim_check=check))
    save_record(tmp_path, rec)
    back = load_record(tmp_path).report.claim_check
    assert back == check and back.verdict == "held" and back.n == 6
    assert "± 2 SE of 6 paired differences: difference in [2, 2]" in render_report(rec)
    stored = json.loads((tmp_path / "results.json").read_text())["report"]["claim_check"]
    assert stored["verdict"] == "held" and stored["interval"] == [2.0, 2.0]
    # a record written before the study (no verdict stored) gets the margin rule's
    old = {k: v for k, v in stored.items() if k not in ("verdict", "n", "interval", "rule")}
    assert ClaimCheck(**old).verdict == "held"
    assert read_cells(tmp_path / CELLS_FILE) == {}


def test_a_failing_cell_in_a_pool_keeps_what_finished_and_raises(tmp_path):
    def measure(arm, unit, ctx):
        if (arm.name, unit.key) == ("base", "u1"):
            raise RuntimeError("cell broke")
        return noisy_measure(arm, unit, ctx)

    with pytest.raises(RuntimeError, match="cell broke"):
        run_study(toy_study(measure=measure), ctx_in(tmp_path), jobs=2)
    done = read_cells(tmp_path / CELLS_FILE)
    assert ("base", "u1") not in done and ("ours", "u0") in done
    result = run_study(toy_study(), RunContext(out_dir=tmp_path), jobs=2)  # the resume runs the rest
    assert len(result.cells) == 20 and result.checks[0].verdict == "held"


def test_ray_cells_give_the_ledger_of_one_process(tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run_study(toy_study(), ctx_in(tmp_path / "one"))
        on_ray = run_study(toy_study(), ctx_in(tmp_path / "ray"), parallel="ray")
    finally:
        ray.shutdown()
    key = lambda r: (r["arm"], r["unit"])  # noqa: E731
    assert sorted(ledger(tmp_path / "ray"), key=key) == sorted(ledger(tmp_path / "one"), key=key)
    assert on_ray.checks[0].verdict == "held"


def test_bad_jobs_or_parallel_is_a_one_line_error(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    import iclr26.catalog as catalog
    import iclr26.cli as cli
    from tests.core.toy_system import TOY

    real = catalog.get_system
    monkeypatch.setattr(cli, "get_system", lambda name: TOY if name == "toy" else real(name))
    runner = CliRunner()
    res = runner.invoke(
        cli.app, ["run", "toy", "--preset", "smoke", "--parallel", "mpi", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "--parallel process, threads or ray" in " ".join(res.output.split())
    res = runner.invoke(cli.app, ["run", "toy", "--preset", "smoke", "--jobs", "0", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "--jobs" in res.output
    res = runner.invoke(cli.app, ["run", "toy", "--preset", "smoke", "--jobs", "2", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output


class _Counting(JSONHandler):
    """A test server (not an LLM): answers each chat request after 0.3 s, reporting as prompt tokens
    the length of the question, and counts the requests in flight at once."""

    lock = threading.Lock()
    in_flight = 0
    most = 0

    def do_POST(self):
        body = self.read_json()
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.most = max(cls.most, cls.in_flight)
        time.sleep(0.3)
        with cls.lock:
            cls.in_flight -= 1
        question = body["messages"][-1]["content"]
        self.send_json({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": question.upper()},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(question), "completion_tokens": 1},
        })  # fmt: skip


def test_llm_cells_in_threads_share_one_model_and_keep_their_own_tokens(tmp_path):
    from iclr26.core.llm import chat_many
    from iclr26.core.llm.http import OpenAIChatModel

    with serve(_Counting) as url:
        model = OpenAIChatModel(url, max_concurrency=8)

        def ask(arm, unit, ctx):
            q = [{"messages": [{"role": "user", "content": unit.key * k}], "max_tokens": 4} for k in (1, 2)]
            answers = chat_many(model, q, max_concurrency=2)  # its threads count in this cell too
            return {"chars": sum(len(a[0].text) for a in answers)}

        units = [Unit(f"q{'x' * i}", i) for i in range(6)]
        study = Study("ask", [Arm("llm")], units, ask)
        start = time.perf_counter()
        run_study(study, ctx_in(tmp_path / "threads"), jobs=3, parallel="threads")
        wall = time.perf_counter() - start
        run_study(study, ctx_in(tmp_path / "one"), jobs=1)
    assert _Counting.most >= 4 and wall < 6 * 0.3  # cells overlapped: 6 cells × 0.3 s each, serially
    for path in ("threads", "one"):
        cells = read_cells(tmp_path / path / CELLS_FILE)
        for u in units:
            cell = cells[("llm", u.key)]
            assert cell.metrics == {"chars": 3 * len(u.key)}
            assert (cell.tokens["calls"], cell.tokens["prompt_tokens"]) == (2, 3 * len(u.key)), path


def _ask_stub(arm, unit, ctx):
    """A cell that asks the server at `unit.params["url"]` one question (in a worker process)."""
    from iclr26.core.llm.http import OpenAIChatModel

    model = OpenAIChatModel(unit.params["url"])
    replies = model.chat([{"role": "user", "content": unit.key}], max_tokens=4)
    return {"chars": len(replies[0].text)}


def test_tokens_spent_in_worker_processes_reach_the_runs_llm_usage(tmp_path):
    """Cells in a process pool use models this process never sees: their usage comes back with the
    cell and is added to results.json's `llm_usage`, as a serial run's is."""
    with serve(_Counting) as url:
        units = [Unit(f"q{'x' * i}", i, {"url": url}) for i in range(4)]
        ctx = ctx_in(tmp_path)
        run_study(Study("ask", [Arm("llm")], units, _ask_stub), ctx, jobs=2)
    usage = ctx.llm_usage()
    assert usage is not None and usage["calls"] == 4
    assert usage["prompt_tokens"] == sum(len(u.key) for u in units)


def test_the_claim_carries_the_floors_on_its_paired_units_to_the_report(tmp_path):
    """The demo page and report.md set each floor beside the method and its baseline, averaged over
    the units the claim paired (not over every unit the floor ran on)."""

    def subset(arm: Arm, unit: Unit, ctx: RunContext) -> dict:
        return {} if arm.name == "ours" and unit.seed == 0 else noisy_measure(arm, unit, ctx)

    result = run_study(toy_study(measure=subset), ctx_in(tmp_path))
    check = result.report.claim_check
    zero = result.values("zero", "score")
    assert check.n == 3 and check.floors == {
        "zero": pytest.approx(np.mean([zero[k] for k in ("u1", "u2", "u3")]))
    }
    rec = RunRecord("toy", "smoke", {}, 0, "now", 1.0, "complete", result.report)
    save_record(tmp_path, rec)
    assert load_record(tmp_path).report.claim_check.floors == check.floors
    assert "Floors on the same units: zero " in render_report(rec)
    without = Study("bare", [Arm("ours"), Arm("base", "baseline")], [Unit(f"u{i}", i) for i in range(3)],
                    noisy_measure, claims=[Claim("score", "ours", ("base",))])  # fmt: skip
    assert run_study(without, ctx_in(tmp_path / "bare")).report.claim_check.floors is None


def test_a_percentage_that_is_zero_for_one_arm_gets_no_rate_interval(tmp_path):
    """liveweb_ie's F1 (%) is 0 on every unit for the empty extraction and 0..100 for the oracle: the
    empty arm's interval is not Wilson's [0, 0.49] for a 0/1 rate; a true 0/1 metric's still is."""

    def f1(arm: Arm, unit: Unit, ctx: RunContext) -> dict:
        return {"f1": 0.0 if arm.name == "empty" else 50.0 + 10 * unit.seed, "passed": float(unit.seed % 2)}

    arms = [Arm("ours"), Arm("base", "baseline"), Arm("empty", "floor", floor="empty extraction")]
    study = Study("pct", arms, [Unit(f"u{i}", i) for i in range(4)], f1)
    table = run_study(study, ctx_in(tmp_path)).report.tables[0]
    empty = next(r for r in table.rows if r[0] == "empty")
    assert empty[3] == 0 and empty[4] == "[0, 0]"
    assert empty[6] == "[0.15, 0.85]"  # passed: 2 of 4, a rate (Wilson)

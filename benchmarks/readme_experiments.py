"""The top README's table of mechanism experiments (issues 60-62), generated from saved results.

Each row names a question an experiment answers about one system's mechanism, the saved result
(`benchmarks/<system>/results/...`, written by a script there with its command, date and machine) and
what it found, read from the file: its one-rule claim checks where it has them, otherwise the figures
of a named table with the check the experiment makes (a false-pass count, a suite's hardness).
The questions are the only typed text; every figure and verdict is read from the JSON.
`benchmarks/readme_table.py` writes this table into README.md between its markers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from iclr26.core.records import format_cell

ROOT = Path(__file__).resolve().parents[1]
Line = tuple[str, str]  # (what the result shows, its verdict)
Render = Callable[[dict], list[Line]]


@dataclass(frozen=True)
class Experiment:
    system: str
    question: str
    result: str  # a file under benchmarks/<system>/results/
    render: Render
    note: str = ""  # what the figures cannot say by themselves (a floor, an artefact), from the README

    @property
    def path(self) -> Path:
        return ROOT / "benchmarks" / self.system / "results" / self.result


def claim_text(cc: dict, metric: bool = True, floors: bool = True) -> str:
    """One claim check as `metric: method m vs baseline b; floors ...`."""
    text = (
        f"{cc['method']} {format_cell(float(cc['method_value']))} vs "
        f"{cc['baseline']} {format_cell(float(cc['baseline_value']))}"
    )
    if metric:
        text = f"{cc['metric']}: {text}"
    if floors and cc.get("floors"):
        text += "; floors " + ", ".join(f"{k} {format_cell(v)}" for k, v in cc["floors"].items())
    return text


def claim_verdict(cc: dict) -> str:
    if cc.get("rule"):
        return f"**{cc['verdict']}** ({cc['rule']})"
    interval = f", difference {cc['interval']}" if cc.get("interval") else ""
    return f"**{cc['verdict']}** ({cc['n']} pairs{interval})"


def saved_claims(saved: dict) -> list[dict]:
    """The claim checks a saved result holds: `claim_check`, `claim_checks` or `claims`, and any
    further rows of its "Claim checks" table (every baseline of every claim; those carry the pairs
    and the interval, not the rule's name)."""
    found = [saved["claim_check"]] if saved.get("claim_check") else []
    found += list(saved.get("claim_checks") or []) + list(saved.get("claims") or [])
    try:
        t = table(saved, "Claim checks (paired over units)")
    except KeyError:
        return found
    keys = {(c["metric"], c["method"], c["baseline"]) for c in found}
    floors = found[0].get("floors") if found else None
    for r in t["rows"]:
        row = dict(zip(t["columns"], r, strict=True))
        if (row["metric"], row["method"], row["baseline"]) in keys:
            continue
        found.append({"metric": row["metric"], "method": row["method"], "baseline": row["baseline"],
                      "method_value": row["method mean"], "baseline_value": row["baseline mean"],
                      "verdict": row["verdict"], "n": row["pairs"], "interval": row["difference interval"],
                      "floors": floors})  # fmt: skip
    return found


def claims(*picks: int, keep: Callable[[dict], bool] | None = None, metric: str = "") -> Render:
    """Every claim check of the file (or those at `picks`, or those `keep` accepts), each with its
    one-rule verdict; `metric` names them all when their own metrics differ only by the method. A
    metric and floors shared with the line before are not repeated."""

    def render(saved: dict) -> list[Line]:
        found = saved_claims(saved)
        if keep is not None:
            found = [cc for cc in found if keep(cc)]
        if not found:
            raise ValueError("no claim checks in the saved result")
        chosen = [found[i] for i in picks] if picks else found
        if metric:
            chosen = [{**cc, "metric": metric} for cc in chosen]
        out = []
        for i, cc in enumerate(chosen):
            before = chosen[i - 1] if i else None
            last = i == len(chosen) - 1 or chosen[i + 1].get("floors") != cc.get("floors")
            text = claim_text(cc, metric=before is None or before["metric"] != cc["metric"], floors=last)
            out.append((text, claim_verdict(cc)))
        return out

    return render


def table(saved: dict, title: str) -> dict:
    """The saved table whose title starts with `title`."""
    tables = [*saved.get("tables", []), *([saved["table"]] if "table" in saved else [])]
    for t in tables:
        if t["title"].startswith(title):
            return t
    raise KeyError(f"no table titled {title!r}")


def arms(title: str, column: str, labels: dict[str, str], what: str, verdict: str) -> Render:
    """The named arms' `column` from the table `title` (first column = arm), as one line."""

    def render(saved: dict) -> list[Line]:
        t = table(saved, title)
        at = t["columns"].index(column)
        value = {r[0]: r[at] for r in t["rows"]}
        shown = "; ".join(f"{label} {format_cell(value[arm])}" for arm, label in labels.items())
        return [(f"{what}: {shown}", verdict)]

    return render


def both(*renders: Render) -> Render:
    """The lines of each render, in order."""
    return lambda saved: [line for render in renders for line in render(saved)]


def beside(system: str, result: str, key: str, what: str, verdict: str) -> Render:
    """One figure (`key`) from another saved result of the system, shown beside the experiment's."""

    def render(_saved: dict) -> list[Line]:
        other = ROOT / "benchmarks" / system / "results" / result
        value = json.loads(other.read_text())[key]
        return [(f"{what}: {format_cell(value)} ([{result}]({other.relative_to(ROOT).as_posix()}))", verdict)]

    return render


def near_misses(saved: dict) -> list[Line]:
    """devops_gym's verifier discrimination: near misses accepted, references accepted."""
    kinds = saved["per_kind"]
    total = sum(r[1] for r in kinds["rows"])
    accepted = sum(r[2] for r in kinds["rows"])
    tasks = [r for r in saved["per_task"]["rows"] if r[0] != "all tasks"]
    refs = sum(r[-1] == "yes" for r in tasks)
    with_miss = sum(r[1] > 0 for r in tasks)
    text = (
        f"near misses accepted by the task's verifier: {accepted} of {total} "
        f"({len(kinds['rows'])} kinds, {with_miss} of {len(tasks)} tasks); "
        f"references accepted {refs} of {len(tasks)}"
    )
    verdict = "**no false pass**" if accepted == 0 else f"**{accepted} false passes** (listed in the README)"
    return [(text, verdict)]


def ladder(saved: dict) -> list[Line]:
    """devops_gym's capability ladder: resolved per rung against the floor, with its verdict."""
    cols = saved["columns"]
    out = []
    for r in saved["rows"]:
        row = dict(zip(cols, r, strict=True))
        text = (
            f"{row['rung']}: SmolLM2 resolved {row['resolved']} of {row['tasks']}, constant floor "
            f"{row['floor resolved']}; named command run {row['named command run']} "
            f"of {row['commands']} commands"
        )
        verdict, _, rule = str(row["verdict (llm vs floor)"]).partition(" (")
        out.append((text, f"**{verdict}** ({rule}" if rule else f"**{verdict}**"))
    return out


def hard_suite(limit: float) -> Render:
    """glow's hard games: the normalised score of each agent; hard when random and Go-Explore < limit."""

    def render(saved: dict) -> list[Line]:
        t = table(saved, "Summary over games")
        value = {r[0]: float(str(r[1]).split()[0]) for r in t["rows"]}
        shown = "; ".join(f"{a} {format_cell(v)}" for a, v in value.items())
        hard = all(value[a] < limit for a in ("random", "go_explore"))
        word, sign = ("hard", "<") if hard else ("not hard", "≥")
        verdict = f"**{word}** (random and Go-Explore {sign} {limit})"
        return [(f"normalised max score, mean over the hard games: {shown}", verdict)]

    return render


def soft_constraint(saved: dict) -> list[Line]:
    """glow's remap switch: per agent, normalised score and off-list share with remap off and on."""
    t = table(saved, "The soft constraint")
    cols = t["columns"]
    parts = []
    for r in t["rows"]:
        row = dict(zip(cols, r, strict=True))
        parts.append(
            f"{row['agent']} remap {row['remap']}: {format_cell(row['normalised'])} "
            f"(off-list {format_cell(row['off-list share'])}, "
            f"parse-fail {format_cell(row['parse-fail share'])})"
        )
    return [("; ".join(parts), "counts, not a claim (demo scale: 2 env steps, 3 seeds)")]


def answerability(saved: dict) -> list[Line]:
    """spatial_dise's answerability audit: per 3D task, the verified bench items whose difference
    cannot be seen in the rendered views."""
    parts = []
    for task, row in saved["rows"]["bench"].items():
        low, high = row["ci"]
        parts.append(
            f"{task}: {row['failed']} of {row['items']} fail the gate "
            f"({format_cell(row['share'])}% [{format_cell(low)}, {format_cell(high)}])"
        )
    return [("; ".join(parts), "counts, not a claim (the splits are now regenerated through the gate)")]


def _teach_headline(cc: dict) -> bool:
    """spatial_dise's learning curve: each task's largest size against chance and its blind twin."""
    return cc["method"].endswith("@16k") and cc["baseline"] in ("chance", f"{cc['method']}-blind")


def _in_type_vs_cross(cc: dict) -> bool:
    """lfqa_e's transfer claims of a model trained and tested on one type against one trained on the other."""
    method, baseline = cc["method"].split(":")[-1], cc["baseline"].split(":")[-1]
    return "->" in baseline and len(set(method.split("->"))) == 1


EXPERIMENTS: list[Experiment] = [
    Experiment("devops_gym", "Do the verifiers reject near-miss solutions?", "devops_gym_near_miss.json",
               near_misses),
    Experiment("devops_gym", "Are the monitoring tasks solvable by observing /proc?",
               "devops_gym_bench_observer.json", claims()),
    Experiment("devops_gym", "Does naming the needed command move the LLM off 0?", "devops_gym_ladder.json",
               ladder),
    Experiment("glow", "Does the dual-scale memory help a scripted policy of known quality?",
               "glow_bench_structure.json", claims()),
    Experiment("glow", "Are the hard-exploration games hard for random and uniform Go-Explore?",
               "glow_bench_hard.json", hard_suite(0.3)),
    Experiment("glow", "What does the paper's soft constraint (remap off) change?", "glow_soft_demo.json",
               soft_constraint),
    Experiment("scienceboard", "Grounding or planning: how much do the tasks need precise pointing, and does "
               "a scripted agent given the plan as text find the elements in the accessibility tree?",
               "grounding_bench.json", claims()),
    Experiment("scienceboard", "Does a command action space let a text-only model use what it knows?",
               "command_space_bench.json",
               both(claims(keep=lambda cc: cc["baseline"] == "llm_pixel"),
                    arms("scienceboard-command: every arm", "success",
                         {"oracle_command": "reference as commands"}, "the action space itself",
                         "suite check (the oracle must pass every task)")),
               note="SmolLM2 copies the tree's fields into command() or types wrong syntax (README)"),
    Experiment("liveweb_ie", "Does visual narrowing (VGS) beat raw HTML, with no LLM?", "no_llm_bench.json",
               claims()),
    Experiment("liveweb_ie", "Which VGS stage fails?", "no_llm_bench.json",
               arms("liveweb_ie_nollm: every arm", "f1_v0",
                    {"true_classes": "true elements → stage 4", "region_classes": "true region → stage 3",
                     "vgs_classes": "VGS", "heuristic": "class-name heuristic", "empty": "empty floor"},
                    "F1 at v0 (%)", "stage 3 (ablation, no claim)")),
    Experiment("sci_refine", "Does anchor repair beat averaging on pools with one good candidate?",
               "sci_refine_pools_bench.json", claims()),
    Experiment("sci_refine", "Does implicit retrieval save tokens on streams of the paper's length?",
               "sci_refine_streams_bench.json", claims()),
    Experiment("lfqa_e", "Does any static metric agree with the labels of the released Chinese file?",
               "lfqa_e_headline_bench_whole_zh.json",
               claims(keep=lambda cc: cc["baseline"] == "always_a",
                      metric="agreement with the label, 1,193 comparisons")),
    Experiment("lfqa_e", "Does a trained evaluator transfer between compare types?",
               "lfqa_e_transfer_bench.json",
               claims(keep=_in_type_vs_cross, metric="agreement with the label, trained on T → tested on T'"),
               note="no in-type model beats always 'a' (63% of the Chinese input is [UNK] to MiniLM); "
                    "the one held comes from the cross-type model's tie threshold (README)"),
    Experiment("icl_analysis", "Do the paper's own models learn in context (released predictions)?",
               "authors_study.json", claims(0, 3, 6, 9, 2, 5, 8, 11)),
    Experiment("icl_analysis", "Does the GPT trained here learn PARITY in context (held out from its "
               "automata)?",
               "icl_analysis_bench_gpt_grid.json", claims(),
               note="every arm is at chance in every cell; the same GPT is 9-15 points above the exemplars' "
                    "majority on random automata it never saw (README)"),
    Experiment("icl_analysis", "Does it learn reversal in context (a family trained here, the task held "
               "out)?",
               "icl_analysis_bench_gpt_grid_reversal.json",
               both(claims(),
                    beside("icl_analysis", "reversal_length_rule.json", "mean",
                           "a rule that reads no exemplar (same length: label 1), accuracy %",
                           "a floor the labels missed: the held verdicts do not show learning"))),
    Experiment("icl_analysis", "Does it learn stack in context (a family trained here, the task held out)?",
               "icl_analysis_bench_gpt_grid_stack.json", claims(),
               note="the GPT scores 84% on its family's validation rules with no exemplar and does not rise "
                    "with exemplars: it learned a prior, not to read them (README)"),
    Experiment("icl_analysis", "Does it learn the vending machine in context (a family trained here)?",
               "icl_analysis_bench_gpt_grid_vending.json", claims(),
               note="every compared arm is at its floor: the GPT did not learn its family (49-50% on its own "
                    "validation rules), so this says nothing of the mechanism (README)"),
    Experiment("icl_analysis", "Does SmolLM2 beat the floors at 100 items a cell (5 shots, 3 tasks)?",
               "icl_analysis_bench_smollm2_grid.json", claims()),
    Experiment("conavbench", "Does a policy trained on collaborative legs beat one trained on single-robot "
               "legs, on one common trial set?", "conavbench_bench_learned.json", claims()),
    Experiment("slt_reliability", "Does grounding catch the confident, prior-driven hallucinations that text "
               "confidence misses?", "slt_reliability_bench_counter_prior.json", claims(),
               "under the skewed prior confidence is worse on counter-prior sentences than on the others "
               "(not under uniform), and grounding and the visual signals are worse with it (README)"),
    Experiment("spatial_dise", "Are verified 3D items decidable from their pictures (the answerability "
               "gate)?", "answerability.json", answerability),
    Experiment("spatial_dise", "Does generated data teach a small Siamese scorer (16k items, 2 seeds, vs "
               "chance and a question-blind twin)?", "spatial_dise_bench_teach.json",
               claims(keep=_teach_headline),
               "every size vs chance, majority and untrained, and each size vs the next, are in the README"),
    Experiment("vincie", "Does training on sessions let the model use history a pairwise editor cannot see "
               "(grid world, context-dependent turns)?", "vincie_grid_bench.json",
               claims(keep=lambda cc: cc["metric"].startswith("judge success")),
               "no learned arm reaches the chance floor on context turns, and the overfit gate is not met "
               "(vincie_overfit_gate.json; README)"),
]  # fmt: skip


@cache
def lines(e: Experiment) -> tuple[str, list[Line]]:
    """The experiment's link to its saved result and its rendered lines (read once per process: the
    experiments table and the systems table's column both use them)."""
    saved = json.loads(e.path.read_text())
    link = f"[{saved.get('date', '')[:10]}]({e.path.relative_to(ROOT).as_posix()})"
    return link, e.render(saved)


def rows() -> list[str]:
    out = []
    for e in EXPERIMENTS:
        link, found = lines(e)
        result = "<br>".join(text for text, _ in found) + f" ({link})"
        if e.note:
            result += f"<br>*{e.note}*"
        verdict = "<br>".join(v for _, v in found)
        cells = [f"[`{e.system}`](src/iclr26/{e.system}/README.md)", e.question, result, verdict]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out


def verdicts_of(system: str) -> str:
    """The systems table's cell: each experiment's verdicts, in the order of the experiments table."""
    found = []
    for e in EXPERIMENTS:
        if e.system == system:
            _, shown = lines(e)
            verdicts = [v.split(" (")[0].replace("**", "") for _, v in shown]
            counts = {v: verdicts.count(v) for v in verdicts}  # in order of first appearance
            found.append(", ".join(v if n == 1 else f"{n}× {v}" for v, n in counts.items()))
    return "; ".join(found) if found else "—"

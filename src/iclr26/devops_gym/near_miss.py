"""Near-miss solutions of the built-here tasks, for measuring each verifier's false-pass rate.

A near miss is a script that looks like a fix and is not one. Each is made from the task's own
reference solution and starting repository, by rule, per category:

- `one_step_removed`: the reference with one of its steps reverted: a file it writes (when it
  writes several), else one changed block of the one file (when it changes several), and on an
  end-to-end task one of the four stages;
- `symptom`: the failing tests deleted (build, issue resolving) or skipped (Maven's `skipTests`),
  the cause left in place; on an issue, the reference regression test added instead of the fix;
- `wrong_dependency`: the dependency and toolchain tasks with the wrong one bumped (the JUnit API
  instead of the engine, the engine to a version the API does not match, `go` to a release the
  machine does not have);
- `fails_on_both` / `passes_on_both`: the reference regression test with a failure, or a return,
  as the first statement of each test (test generation);
- `wrong_label` / `hedged_label`: the anomaly most easily confused with the true one, and every
  label listed with the true one last (monitoring).

A verifier should reject every one: the share it accepts is its false-pass rate (target 0).
`near_miss_task` writes a copy of the task folder whose `solution.sh` is the near miss, so the
runner's oracle path runs it through the task's unchanged verifier.
"""

from __future__ import annotations

import difflib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from iclr26.devops_gym.suite import TaskDraft
from iclr26.devops_gym.suite.bugs import BUGS
from iclr26.devops_gym.suite.code import _heredoc
from iclr26.devops_gym.suite.monitor import LABELS, REPORT
from iclr26.devops_gym.task import SOLUTION, Task, load_task

KINDS: tuple[str, ...] = (
    "one_step_removed",
    "symptom",
    "wrong_dependency",
    "fails_on_both",
    "passes_on_both",
    "wrong_label",
    "hedged_label",
)
MAX_STEP_VARIANTS = 4
"""At most this many `one_step_removed` variants per task (one per reverted step)."""
CONFUSABLE: dict[str, str] = {
    "memory_leak": "handle_exhaustion",
    "handle_exhaustion": "memory_leak",
    "disk_leak": "io_bottleneck",
    "io_bottleneck": "disk_leak",
    "cpu_spike": "inefficient_sql",
    "inefficient_sql": "cpu_spike",
    "healthy": "memory_leak",
}
"""The label a hasty look would give instead of the true one (what grows, what burns CPU)."""
WRONG_DEPENDENCY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "java-unavailable-dependency": (
        "the engine bumped to 5.14.1, past the API's 5.10.2",
        (("<version>5.10.2</version>\n      <scope>test</scope>\n    </dependency>\n  </dependencies>",
          "<version>5.14.1</version>\n      <scope>test</scope>\n    </dependency>\n  </dependencies>"),),
    ),
    "java-dependency-conflict": (
        "the API bumped to 5.14.4 instead of aligned with the engine's 5.10.2",
        (("<version>5.10.2</version>", "<version>5.14.4</version>"),),
    ),
    "go-toolchain-mismatch": (
        "the code fixed and the go directive bumped to 1.21, a release the machine does not have",
        (("go 1.19", "go 1.21"),),
    ),
    "go-dependency-conflict": (
        "the pin kept at mathx 1.0 and geo's requirement dropped",
        (("\texample.com/geo v0.1.0\n", ""), ("replace example.com/mathx => ./third_party/mathx-1.3",
                                               "replace example.com/mathx => ./third_party/mathx-1.0")),
    ),
}  # fmt: skip
"""Per dependency task: what the wrong bump is and its replacements in the reference's files (the
first text of each pair occurs in them)."""

_HEREDOC = re.compile(r"mkdir -p \S+\ncat > (\S+) <<'ICLR26_EOF'\n(.*?)ICLR26_EOF", re.S)
_GO_TEST = re.compile(r"^(func Test\w+\(t \*testing\.T\) \{\n)", re.M)
_JAVA_TEST = re.compile(r"(@Test\s+(?:public\s+)?void\s+\w+\(\)\s*(?:throws [\w., ]+)?\{\n)")


@dataclass(frozen=True)
class NearMiss:
    """One near-miss solution of one task: its kind, what it does, and the script."""

    task_id: str
    kind: str
    detail: str
    script: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"near miss of {self.task_id}: unknown kind {self.kind!r}")


def reference_steps(solution: str) -> list[str]:
    """The reference solution cut into steps: each file it writes (a heredoc) and each other line."""
    steps, pos = [], 0
    for m in _HEREDOC.finditer(solution):
        steps += [line for line in solution[pos : m.start()].splitlines() if line.strip()]
        steps.append(m.group(0))
        pos = m.end()
    steps += [line for line in solution[pos:].splitlines() if line.strip()]
    return steps


def reference_files(solution: str) -> dict[str, str]:
    """The files the reference solution writes, by path."""
    return {m.group(1).strip("'"): m.group(2) for m in _HEREDOC.finditer(solution)}


def _imports_only(lines: list[str]) -> bool:
    """A change of import lines alone (cleanup such as an unused import removed, not a step of the
    fix: reverting it leaves a program that behaves as the reference does, or does not compile)."""
    return all(re.match(r"\s*(import\b|\"[\w./]+\"$|\)$|\($|$)", x.strip()) for x in lines)


def revert_one_block(old: str, new: str) -> list[str]:
    """`new` with one changed block of lines put back as in `old`, once per block (none if one);
    blocks that only change imports are not steps (`_imports_only`)."""
    a, b = old.splitlines(True), new.splitlines(True)
    blocks = [
        op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    blocks = [op for op in blocks if not _imports_only(a[op[1] : op[2]] + b[op[3] : op[4]])]
    if len(blocks) < 2:
        return []
    out = []
    for _, i1, i2, j1, j2 in blocks:
        cut = new.splitlines(True)
        out.append("".join(cut[:j1] + a[i1:i2] + cut[j2:]))
    return out


def _one_step_removed(draft: TaskDraft, task_id: str) -> list[NearMiss]:
    steps = reference_steps(draft.solution)
    made: list[NearMiss] = []
    if draft.category == "end_to_end":
        stages = _e2e_stages(steps)
        for k in range(1, len(stages) + 1):
            rest = [s for j, group in enumerate(stages, 1) if j != k for s in group]
            made.append(NearMiss(task_id, "one_step_removed", f"stage {k} of 4 left out", "\n".join(rest)))
        return made
    if len(steps) >= 2:
        for k in range(len(steps)):
            rest = "\n".join(s for j, s in enumerate(steps) if j != k)
            made.append(NearMiss(task_id, "one_step_removed", f"step {k + 1} of {len(steps)} left out", rest))
        return made[:MAX_STEP_VARIANTS]
    ((path, content),) = reference_files(draft.solution).items()
    for k, variant in enumerate(revert_one_block(draft.workspace.get(path, ""), content)):
        made.append(
            NearMiss(task_id, "one_step_removed", f"{path}: change {k + 1} reverted", _heredoc(path, variant))
        )
    return made[:MAX_STEP_VARIANTS]


def _e2e_stages(steps: list[str]) -> list[list[str]]:
    """An end-to-end reference's steps as its four stages: the build fix (every file before the
    report), the report, the cause's fix, the regression test."""
    report = next(i for i, s in enumerate(steps) if s.startswith("echo ") and REPORT in s)
    return [steps[:report], [steps[report]], [steps[report + 1]], steps[report + 2 :]]


def _test_files_removed(draft: TaskDraft) -> str:
    return "find . -name '*_test.go' -delete" if draft.language == "go" else "rm -rf src/test"


def _symptoms(draft: TaskDraft, task_id: str) -> list[NearMiss]:
    out = [NearMiss(task_id, "symptom", "the tests deleted, the cause left", _test_files_removed(draft))]
    if draft.language == "java" and "pom.xml" in draft.workspace:
        pom = draft.workspace["pom.xml"].replace(
            "<properties>", "<properties>\n    <skipTests>true</skipTests>", 1
        )
        out.append(
            NearMiss(
                task_id, "symptom", "the tests skipped (skipTests), the cause left", _heredoc("pom.xml", pom)
            )
        )
    if draft.category == "issue_resolving":
        bug = next(b for b in BUGS if f"{b.language}-{b.name}" == draft.name)
        write = _heredoc(bug.regression_path, bug.regression)
        out.append(NearMiss(task_id, "symptom", "a regression test added, the code not fixed", write))
    return out


def _wrong_dependency(draft: TaskDraft, task_id: str) -> list[NearMiss]:
    if draft.name not in WRONG_DEPENDENCY:
        return []
    detail, replacements = WRONG_DEPENDENCY[draft.name]
    files = reference_files(draft.solution)
    for old, new in replacements:
        holders = [p for p, c in files.items() if old in c]
        if not holders:
            raise ValueError(f"{task_id}: {old!r} is not in the reference's files")
        files[holders[0]] = files[holders[0]].replace(old, new, 1)
    return [
        NearMiss(task_id, "wrong_dependency", detail, "\n".join(_heredoc(p, c) for p, c in files.items()))
    ]


def _broken_test(source: str, language: str, statement: str) -> str:
    """`source` with `statement` as the first line of each test method."""
    pattern, indent = (_GO_TEST, "\t") if language == "go" else (_JAVA_TEST, "        ")
    text, n = pattern.subn(lambda m: m.group(1) + indent + statement + "\n", source)
    if not n:
        raise ValueError(f"no test method found in a {language} test")
    return text


def _test_generation(draft: TaskDraft, task_id: str) -> list[NearMiss]:
    ((path, content),) = reference_files(draft.solution).items()
    go = draft.language == "go"
    fail = 't.Fatal("near miss")' if go else 'if (true) throw new AssertionError("near miss");'
    skip = "return" if go else "if (true) return;"
    return [
        NearMiss(task_id, "fails_on_both", "the reference test failing first",
                 _heredoc(path, _broken_test(content, draft.language, fail))),
        NearMiss(task_id, "passes_on_both", "the reference test returning first",
                 _heredoc(path, _broken_test(content, draft.language, skip))),
    ]  # fmt: skip


def _monitor(draft: TaskDraft, task_id: str) -> list[NearMiss]:
    label = draft.tags[0]
    hedge = " ".join([*(x for x in LABELS if x != label), label])
    return [
        NearMiss(
            task_id, "wrong_label", f"{CONFUSABLE[label]} for {label}", f"echo {CONFUSABLE[label]} > {REPORT}"
        ),
        NearMiss(task_id, "hedged_label", "every label, the true one last", f"echo {hedge} > {REPORT}"),
    ]


def near_misses(draft: TaskDraft) -> list[NearMiss]:
    """Every near miss of one task, by its category's rules (see the module docstring)."""
    task_id = f"{draft.category}/{draft.name}"
    if draft.category == "monitor":
        return _monitor(draft, task_id)
    if draft.category == "test_generation":
        return _test_generation(draft, task_id)
    made = _one_step_removed(draft, task_id)
    if draft.category in ("build", "issue_resolving"):
        made += _symptoms(draft, task_id) + _wrong_dependency(draft, task_id)
    return made


def near_miss_task(task: Task, near_miss: NearMiss, root: Path) -> Task:
    """A copy of `task` under `root` whose `solution.sh` is `near_miss`'s script (the verifier unchanged)."""
    dst = root / task.path.name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(task.path, dst)
    (dst / SOLUTION).write_text("#!/bin/bash\nset -euo pipefail\n" + near_miss.script.strip() + "\n")
    return load_task(dst)

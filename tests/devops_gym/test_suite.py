"""The built-here suite: its shape, and every category's verifier on the reference solution
(resolved) and on a deliberately wrong one (not resolved), run through the real runner."""

from __future__ import annotations

import pytest

from iclr26.devops_gym.agent import oracle_agent
from iclr26.devops_gym.runner import RunLimits, run_trial
from iclr26.devops_gym.suite import all_drafts
from iclr26.devops_gym.task import CATEGORIES, load_tasks
from tests.devops_gym.conftest import DEBIAN, ScriptAgent

pytestmark = pytest.mark.debian(*DEBIAN)
LIMITS = RunLimits(command_timeout_s=120.0, max_steps=4)


def test_the_suite_has_eight_tasks_per_category_and_three_end_to_end(suite):
    tasks = load_tasks(suite)
    count = {c: sum(t.spec.category == c for t in tasks) for c in CATEGORIES}
    assert count == {"build": 12, "monitor": 8, "issue_resolving": 8, "test_generation": 8, "end_to_end": 3}
    languages = {c: {t.spec.tags[0] for t in tasks if t.spec.category == c} for c in CATEGORIES}
    assert languages["build"] == languages["issue_resolving"] == languages["end_to_end"] == {"go", "java"}
    assert all(
        t.has_solution and t.workspace is not None and (t.path / "Dockerfile").is_file() for t in tasks
    )
    assert {t.spec.difficulty for t in tasks} == {"easy", "medium", "hard"}


def test_the_monitoring_onsets_are_seeded(suite):
    onsets = [d.services["server.py"] for d in all_drafts(seed=0) if d.category == "monitor"]
    assert onsets == [d.services["server.py"] for d in all_drafts(seed=0) if d.category == "monitor"]
    assert onsets != [d.services["server.py"] for d in all_drafts(seed=1) if d.category == "monitor"]


WRONG = {
    # a build "fix" that deletes the failing test: the verifier restores the project's tests
    "build/go-compilation-error": "rm store/store_test.go",
    # a monitoring report that names the wrong anomaly
    "monitor/cpu-spike": "echo memory_leak > report.txt",
    # a fix that keeps comparing strings (fail-to-pass stays failing)
    "issue_resolving/go-semver": (
        "sed -i 's/if pa\\[i\\] < pb\\[i\\]/if len(pa[i]) < len(pb[i]) \\&\\& pa[i] < pb[i]/' compare.go"
    ),
    # a regression test that passes on the buggy code too
    "test_generation/go-textutil": (
        'printf \'package textutil\\nimport "testing"\\nfunc TestASCII(t *testing.T) {\\n'
        'if Reverse("ab") != "ba" { t.Fatal("x") }\\n}\\n\' > reverse_regression_test.go'
    ),
    # every stage but the last: the regression test passes on the faulty code
    "end_to_end/go-logship-descriptors": (
        "bash solution.sh && "
        "printf 'package logship\\nimport \"testing\"\\nfunc TestNothing(t *testing.T) {}\\n'"
        " > logship/regression_test.go"
    ),
}


@pytest.mark.parametrize("task", sorted(WRONG), indirect=True)
def test_each_category_verifier_passes_the_oracle_and_fails_a_wrong_solution(task):
    oracle = run_trial(task, oracle_agent([task]), LIMITS, oracle=True)
    assert oracle.resolved, (oracle.failure_mode, oracle.tests)
    assert oracle.setup_s < 1.0  # sandbox, tmux and any service: under a second
    wrong = run_trial(task, ScriptAgent(WRONG[task.task_id]), LIMITS, oracle=True)
    assert wrong.failure_mode == "none" and not wrong.resolved, wrong.tests


@pytest.mark.debian("maven", "default-jdk-headless")
@pytest.mark.parametrize("task", ["issue_resolving/java-stats"], indirect=True)
def test_a_java_verifier_builds_offline_with_maven(task):
    oracle = run_trial(task, oracle_agent([task]), LIMITS, oracle=True)
    assert oracle.resolved, oracle.tests
    assert oracle.tests == {
        "test_fail_to_pass[StatsGoldTest.evenCount]": "PASSED",
        "test_pass_to_pass[StatsTest.oddCount]": "PASSED",
        "test_pass_to_pass[StatsTest.single]": "PASSED",
    }
    # a wrong fix: the even case averaged with the wrong neighbour
    source = "src/main/java/org/example/stats/Stats.java"
    wrong = (
        "sed -i 's|return sorted.get(sorted.size() / 2);"
        f"|return (sorted.get(0) + sorted.get(sorted.size() / 2)) / 2.0;|' {source}"
    )
    result = run_trial(task, ScriptAgent(wrong), LIMITS)
    assert not result.resolved and result.tests["test_fail_to_pass[StatsGoldTest.evenCount]"] == "FAILED"
    assert result.tests["test_pass_to_pass[StatsTest.oddCount]"] == "FAILED"  # odd lists broke too


def _test_file(body: str) -> str:
    header = 'package intervals\\nimport "testing"\\nfunc TestCase(t *testing.T) {'
    return f"printf '{header}\\n{body}\\n}}\\n' > merge_regression_test.go"


@pytest.mark.parametrize("task", ["test_generation/go-intervals"], indirect=True)
def test_strict_test_generation_checks_all_four_combinations(task):
    touching = "got := Merge([]Interval{{1, 3}, {3, 5}})\\nif len(got) != 1 { t.Fatal(got) }"
    cases = {
        "fails on buggy, passes on fixed": (
            touching,
            True,
            {"test_agent_test_fails_on_buggy", "test_agent_test_passes_on_fixed"},
        ),
        "passes on both": (
            "if len(Merge(nil)) != 0 { t.Fatal() }",
            False,
            {"test_agent_test_passes_on_fixed"},
        ),
        "fails on both": ('t.Fatal("always")', False, {"test_agent_test_fails_on_buggy"}),
        "fails on fixed only": (touching.replace("!= 1", "!= 2"), False, set()),
    }
    for label, (body, want, passing) in cases.items():
        result = run_trial(task, ScriptAgent(_test_file(body)), LIMITS)
        agent_tests = {k for k, v in result.tests.items() if "agent" in k and v == "PASSED"}
        assert result.resolved is want, (label, result.tests)
        assert agent_tests == passing, (label, result.tests)
        # the gold test's own two combinations hold whatever the agent wrote
        assert (
            result.tests["test_gold_test_fails_on_buggy"]
            == result.tests["test_gold_test_passes_on_fixed"]
            == "PASSED"
        )


def test_a_monitoring_image_deletes_the_service_source_once_it_runs(suite):
    """Under Docker the source (its mode written in) would stay at /opt/service: a static tell."""
    dockerfile = (suite / "monitor" / "cpu-spike" / "Dockerfile").read_text()
    cmd = dockerfile.splitlines()[-1]
    assert cmd.startswith("CMD ") and "start.sh && rm -rf /opt/service" in cmd

"""Issue-resolving and strict test-generation tasks, one of each per bug in `bugs.BUGS`.

- **Issue resolving** (SWE-bench style): the agent gets the issue text and the repository. The
  verifier copies the work dir, adds the gold tests, and requires every fail-to-pass and every
  pass-to-pass test to pass.
- **Test generation, strict:** the agent writes a regression test at a given path without fixing
  the bug. The verifier checks all four combinations: the agent's test fails on the buggy source
  and passes on the fixed one, and the gold test does the same (buggy and fixed sources are
  restored from the verifier's own copies, so editing the source gains nothing).
"""

from __future__ import annotations

import shlex
import textwrap

from iclr26.devops_gym.suite import TaskDraft, dedent
from iclr26.devops_gym.suite.bugs import BUGS, Bug

_RUNNER = """
def _run(app):
    \"\"\"The language's test run in `app`: (process, test name -> status).\"\"\"
    if LANGUAGE == "go":
        return go_test(app)
    proc = maven(app, "test")
    return proc, surefire(app)
"""

ISSUE_TESTS = '''"""Issue resolving: with the gold tests added, every fail-to-pass and pass-to-pass
test passes."""

import pytest
from checks import TEST_DIR, go_test, maven, overlay, scratch_copy, surefire, tail

LANGUAGE = {language!r}
FAIL_TO_PASS = {f2p!r}
PASS_TO_PASS = {p2p!r}
{runner}

@pytest.fixture(scope="module")
def results():
    app = scratch_copy()
    overlay(TEST_DIR / "gold", app)  # the gold tests, and the original tests over any edited copy
    return _run(app)


@pytest.mark.parametrize("name", FAIL_TO_PASS)
def test_fail_to_pass(results, name):
    proc, statuses = results
    assert statuses.get(name) == "passed", f"{{name}}: {{statuses.get(name, 'did not run')}}\\n{{tail(proc)}}"


@pytest.mark.parametrize("name", PASS_TO_PASS)
def test_pass_to_pass(results, name):
    proc, statuses = results
    assert statuses.get(name) == "passed", f"{{name}}: {{statuses.get(name, 'did not run')}}\\n{{tail(proc)}}"
'''

TESTGEN_TESTS = '''"""Strict test generation: the agent's test and the gold test each fail on the
buggy source and pass on the fixed source (all four combinations)."""

from pathlib import Path

import pytest
from checks import APP_DIR, TEST_DIR, go_test, maven, overlay, scratch_copy, surefire, tail

LANGUAGE = {language!r}
AGENT_TEST = {agent_test!r}
TEST_GLOB = {test_glob!r}
{runner}

def _combination(source, test):
    """Run one test file (the agent's or the gold one) against the buggy or fixed source."""
    app = scratch_copy()
    for old in app.glob(TEST_GLOB):
        old.unlink()
    overlay(TEST_DIR / source, app)
    if test == "agent":
        (app / AGENT_TEST).write_text((APP_DIR / AGENT_TEST).read_text())
    else:
        overlay(TEST_DIR / "gold", app)
    proc, statuses = _run(app)
    assert statuses, f"no test ran (did it compile?)\\n{{tail(proc)}}"
    return proc, statuses


@pytest.fixture(scope="module")
def agent_test():
    path = APP_DIR / AGENT_TEST
    assert path.is_file(), f"no test was written at {{AGENT_TEST}}"
    return path


def test_agent_test_fails_on_buggy(agent_test):
    proc, statuses = _combination("buggy", "agent")
    assert "failed" in statuses.values(), f"the new test passes on the buggy code: {{statuses}}"


def test_agent_test_passes_on_fixed(agent_test):
    proc, statuses = _combination("fixed", "agent")
    message = f"the new test fails on the fixed code: {{statuses}}\\n{{tail(proc)}}"
    assert set(statuses.values()) == {{"passed"}}, message


def test_gold_test_fails_on_buggy():
    proc, statuses = _combination("buggy", "gold")
    assert "failed" in statuses.values(), statuses


def test_gold_test_passes_on_fixed():
    proc, statuses = _combination("fixed", "gold")
    assert set(statuses.values()) == {{"passed"}}, f"{{statuses}}\\n{{tail(proc)}}"
'''


def _heredoc(path: str, content: str) -> str:
    """A solution.sh line that writes `content` to `path` verbatim."""
    folder = shlex.quote(path.rsplit("/", 1)[0]) if "/" in path else "."
    return f"mkdir -p {folder}\ncat > {shlex.quote(path)} <<'ICLR26_EOF'\n{content}ICLR26_EOF"


def _issue_text(bug: Bug) -> str:
    return textwrap.dedent(bug.issue).strip()


def _workspace(bug: Bug) -> dict[str, str]:
    return {**bug.files, bug.source_path: bug.buggy, bug.tests_path: bug.tests}


def issue_task(bug: Bug) -> TaskDraft:
    """The agent fixes `bug` from its issue text; gold tests decide."""
    tool = "go test ./..." if bug.language == "go" else "mvn -o -q test"
    instruction = dedent(f"""
        A user filed this issue against the repository in your working directory:

        {textwrap.indent(_issue_text(bug), "        ").strip()}

        Fix the bug in the source code. The existing tests must keep passing; hidden tests that
        reproduce the issue will be run after you finish. You can run the tests with `{tool}`
        (offline; nothing can be downloaded).
        """)
    return TaskDraft(
        name=f"{bug.language}-{bug.name}",
        category="issue_resolving",
        language=bug.language,
        difficulty=bug.difficulty,
        instruction=instruction,
        workspace=_workspace(bug),
        tests=ISSUE_TESTS.format(language=bug.language, f2p=list(bug.f2p), p2p=list(bug.p2p), runner=_RUNNER),
        test_files={f"gold/{bug.gold_path}": bug.gold, f"gold/{bug.tests_path}": bug.tests},
        solution=_heredoc(bug.source_path, bug.fixed),
        tags=("swe",),
        agent_timeout_s=600.0,
    )


def testgen_task(bug: Bug) -> TaskDraft:
    """The agent writes a regression test for `bug` without fixing it; all four combinations decide."""
    test_glob = "*_test.go" if bug.language == "go" else "src/test/java/**/*.java"
    instruction = dedent(f"""
        A user filed this issue against the repository in your working directory:

        {textwrap.indent(_issue_text(bug), "        ").strip()}

        Do not fix the bug. Write a regression test for it in `{bug.regression_path}`: a test that
        fails on the current code because of this bug and passes once the bug is fixed. It must
        compile against the current code. Run the tests with
        `{"go test ./..." if bug.language == "go" else "mvn -o -q test"}` (offline).
        """)
    return TaskDraft(
        name=f"{bug.language}-{bug.name}",
        category="test_generation",
        language=bug.language,
        difficulty=bug.difficulty,
        instruction=instruction,
        workspace=_workspace(bug),
        tests=TESTGEN_TESTS.format(
            language=bug.language, agent_test=bug.regression_path, test_glob=test_glob, runner=_RUNNER
        ),
        test_files={
            f"buggy/{bug.source_path}": bug.buggy,
            f"fixed/{bug.source_path}": bug.fixed,
            f"gold/{bug.gold_path}": bug.gold,
        },
        solution=_heredoc(bug.regression_path, bug.regression),
        tags=("test-generation",),
        agent_timeout_s=600.0,
        test_timeout_s=300.0,
    )


def drafts() -> list[TaskDraft]:
    """Eight issue-resolving and eight test-generation tasks."""
    return [issue_task(b) for b in BUGS] + [testgen_task(b) for b in BUGS]

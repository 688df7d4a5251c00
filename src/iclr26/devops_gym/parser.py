"""Reading a test run's verdict from pytest's output, as Terminal-Bench's `pytest` parser does.

`run-tests.sh` runs `pytest -rA`, whose "short test summary info" section lists one line per test:
`PASSED tests/test_outputs.py::test_build`, `FAILED tests/...::test_x - AssertionError: ...`.
`parse_pytest` reads that section into {test name: status}. A task is resolved when at least one
test was parsed and every parsed test PASSED; output without the section is a parse error (the
failure mode `parse_error`), never a silent pass.
"""

from __future__ import annotations

import re
from enum import StrEnum

_SUMMARY = re.compile(r"^=+ short test summary info =+\s*$", re.M)
_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)")
_SKIPPED = re.compile(r"^SKIPPED \[\d+\] (\S+?:\d+)")  # a skip names its location, not its test
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class TestStatus(StrEnum):
    """A test's outcome in pytest's summary."""

    __test__ = False  # not a pytest test class

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    XFAIL = "XFAIL"
    XPASS = "XPASS"


class ParseError(ValueError):
    """The test output has no pytest summary to read."""


def parse_pytest(output: str) -> dict[str, TestStatus]:
    """{test name: status} from the last "short test summary info" section of `output`.

    The name is the node id without its file (`test_outputs.py::test_build` -> `test_build`), as
    Terminal-Bench reports it; a skipped test is listed by pytest under its location
    (`test_outputs.py:12`). Raises `ParseError` when no summary section is present.
    """
    text = _ANSI.sub("", output)
    starts = [m.end() for m in _SUMMARY.finditer(text)]
    if not starts:
        raise ParseError("no 'short test summary info' section in the test output (was pytest run with -rA?)")
    results: dict[str, TestStatus] = {}
    for line in text[starts[-1] :].splitlines():
        if line.startswith("="):  # the closing "=== 3 passed in 0.1s ===" line
            break
        skipped = _SKIPPED.match(line.strip())
        if skipped:
            results[skipped.group(1).rsplit("/", 1)[-1]] = TestStatus.SKIPPED
            continue
        m = _LINE.match(line.strip())
        if m:
            name = m.group(2).split("::", 1)[-1]
            results[name] = TestStatus(m.group(1))
    return results


def resolved(results: dict[str, TestStatus]) -> bool:
    """At least one test, and every one PASSED."""
    return bool(results) and all(s is TestStatus.PASSED for s in results.values())

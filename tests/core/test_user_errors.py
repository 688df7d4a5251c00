"""User errors print as one line and exit 2, through the CLI, for every implemented system; bugs
keep their traceback; --debug shows the traceback of user errors too."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import iclr26.cli as cli
from iclr26.catalog import all_systems
from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError

runner = CliRunner()
IMPLEMENTED = [s for s in all_systems() if s.status == "implemented"]


def one_error_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1, output
    assert "Traceback" not in output and "╭" not in output, output  # no (rich) traceback
    return errors[0]


def test_every_system_is_covered():
    assert len(IMPLEMENTED) >= 8, [s.name for s in all_systems()]


@pytest.mark.parametrize("system", IMPLEMENTED, ids=lambda s: s.name)
def test_missing_gpu_is_one_line(system):
    if not hasattr(system.presets["smoke"], "device"):
        pytest.skip(f"{system.name} has no device field")
    res = runner.invoke(cli.app, ["run", system.name, "--preset", "smoke", "--set", "device=cuda"])
    assert res.exit_code == 2
    line = one_error_line(res.output)
    assert "device='cuda'" in line and "no CUDA device" in line


@pytest.mark.parametrize("system", IMPLEMENTED, ids=lambda s: s.name)
def test_unwritable_out_is_one_line(system):
    res = runner.invoke(cli.app, ["run", system.name, "--preset", "smoke", "--out", "/proc/iclr26-no/run"])
    assert res.exit_code == 2
    assert "cannot write the run folder under /proc/iclr26-no/run" in one_error_line(res.output)


@pytest.mark.parametrize("system", IMPLEMENTED, ids=lambda s: s.name)
def test_bad_field_is_one_line(system):
    res = runner.invoke(cli.app, ["run", system.name, "--preset", "smoke", "--set", "no_such_field=1"])
    assert res.exit_code == 2
    assert "has no field 'no_such_field'" in one_error_line(res.output)


def test_long_messages_with_brackets_stay_one_line(monkeypatch):
    def boom(*a, **k):
        raise ConfigError("x" * 300 + " must be in [0, 1]")

    monkeypatch.setattr(cli, "run_system", boom)
    res = runner.invoke(cli.app, ["run", IMPLEMENTED[0].name])
    assert res.exit_code == 2 and one_error_line(res.output).endswith("must be in [0, 1]")


def test_user_error_hierarchy():
    from iclr26.core.device import DeviceUnavailable
    from iclr26.core.llm import LLMConnectionError, LLMUnsupported
    from iclr26.core.runner import SystemNotImplemented
    from iclr26.core.sysdeps import MissingSystemPackage

    for cls in (ConfigError, DeviceUnavailable, LLMConnectionError, LLMUnsupported, SystemNotImplemented):
        assert issubclass(cls, UserError)
    assert issubclass(MissingSystemPackage, UserError)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "iclr26", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_real_cli_one_line_and_debug_traceback():
    name = next(s.name for s in IMPLEMENTED if hasattr(s.presets["smoke"], "device"))
    plain = _cli("run", name, "--preset", "smoke", "--set", "device=cuda")
    assert plain.returncode == 2
    one_error_line(plain.stdout + plain.stderr)
    debug = _cli("run", name, "--preset", "smoke", "--set", "device=cuda", "--debug")
    assert debug.returncode != 0 and "DeviceUnavailable" in debug.stdout + debug.stderr
    assert "Traceback" in debug.stdout + debug.stderr or "╭" in debug.stdout + debug.stderr


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path):
    from tests.core.toy_system import TOY

    monkeypatch.setattr(cli, "get_system", lambda name: TOY)
    res = runner.invoke(cli.app, ["run", "toy", "--set", "fail=true", "--out", str(tmp_path / "r")])
    assert res.exit_code == 1 and isinstance(res.exception, RuntimeError)  # not turned into a one-liner
    assert "error:" not in res.output

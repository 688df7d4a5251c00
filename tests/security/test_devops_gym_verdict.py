"""Issue 57, items 5-7, attacked through the real devops_gym runner (bubblewrap sandbox, tmux shell,
the real verifier): a scripted sequence of shell commands stands where a model's commands would.

- 5: the agent looks for the answers: the task's `tests/` and `solution.sh`, the package's suite, `/root`,
  `/work`, a runs folder. Before the fix the sandbox mounted `/` read-only, so all that was readable
  by the sandbox uid could be read (a suite under a world-readable folder, as a run writes one).
- 6: the agent plants code that the verifier would run (user site-packages: usercustomize, a .pth, a
  pytest plugin; shell dotfiles; PYTEST_ADDOPTS/PYTHONPATH exported in a same-shell task) and does not
  solve the task. Before the fix HOME was the work dir, and a same-shell verifier inherited the shell's
  variables, so the null-effort agent passed.
- 7: in a same-shell task the agent swaps a link in where the host used to create the tests' folder
  inside its work dir (the host then wrote and chowned through it, as root); the Maven mirror's
  fixed path, planted by another local user (uid 65534), steered the host's rmtree, cp and chmod -R.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

import iclr26.devops_gym.suite as suite_pkg
from iclr26.core.errors import UserError
from iclr26.devops_gym import toolchains
from iclr26.devops_gym.agent import null_agent, oracle_agent
from iclr26.devops_gym.runner import run_trial
from iclr26.devops_gym.suite import TaskDraft, write_task
from iclr26.devops_gym.task import load_task
from tests.devops_gym.conftest import ScriptAgent

pytestmark = pytest.mark.debian("bubblewrap", "tmux", "python3-pytest", "util-linux")

TESTS = """from checks import APP_DIR

def test_marker():
    assert (APP_DIR / "marker").read_text().strip() == "ok"
"""
# what a planted hook prints instead of running the tests: a summary that says every test passed
FAKE_PASS = (
    "import os, sys\n"
    "if sys.argv[:1] == ['-m'] or any('test_outputs' in a for a in sys.argv):\n"
    "    print('=== short test summary info ===\\nPASSED test_outputs.py::test_marker\\n=== 1 passed ===')\n"
    "    sys.stdout.flush(); os._exit(0)\n"
)
PLUGIN = (
    "def pytest_collection_modifyitems(items):\n    for item in items:\n        item.runtest = lambda: None\n"
)
USER_SITE = 'site="$(python3 -c "import site; print(site.getusersitepackages())")" && mkdir -p "$site"'


def _heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF'\n{text}EOF"


@pytest.fixture
def public_root():
    """A folder outside /tmp that the sandbox uid could traverse (as a run's folder in a checkout)."""
    root = Path(tempfile.mkdtemp(prefix="iclr26-public-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    yield root
    subprocess.run(["rm", "-rf", str(root)], check=False)


def _task(root: Path, *, same_shell: bool = False, test_files: dict[str, str] | None = None):
    draft = TaskDraft(
        name="toy",
        category="build",
        language="go",
        difficulty="easy",
        instruction="Write ok to ./marker.",
        workspace={"README": "toy\n"},
        tests=TESTS,
        solution="echo ok > marker",
        agent_timeout_s=60.0,
        test_timeout_s=60.0,
        test_files=test_files or {},
    )
    path = write_task(draft, root / "tasks")
    if same_shell:
        text = (
            (path / "task.yaml")
            .read_text()
            .replace("run_tests_in_same_shell: false", "run_tests_in_same_shell: true")
        )
        (path / "task.yaml").write_text(text)
    task = load_task(path)
    assert task.spec.run_tests_in_same_shell is same_shell
    return task


def test_the_agent_cannot_read_the_tests_the_solution_or_other_runs(public_root):
    task = _task(public_root)
    runs = public_root / "runs" / "other-run"
    runs.mkdir(parents=True)
    (runs / "trials.jsonl").write_text('{"answer": 1}\n')
    secrets = [
        task.path / "tests" / "test_outputs.py",
        task.path / "solution.sh",
        task.path / "run-tests.sh",
        Path(suite_pkg.__file__).parent / "build.py",
        runs / "trials.jsonl",
        Path("/root"),
        Path("/work"),
        Path("/home"),
    ]
    probe = " ".join(
        f'(cat {p} >/dev/null 2>&1 || ls {p} >/dev/null 2>&1) && echo "LEAK {p}";' for p in secrets
    )
    result = run_trial(task, ScriptAgent(probe + " echo probed"))
    seen = result.episode["steps"][1]["observation"]  # what the probe printed
    assert "probed" in seen and "LEAK" not in seen, seen
    assert not result.resolved and result.failure_mode == "none"
    # the verdicts that every table rests on are unchanged
    assert run_trial(task, oracle_agent([task]), oracle=True).resolved
    assert not run_trial(task, null_agent()).resolved


PLANTS = {
    "usercustomize": f"{USER_SITE} && " + _heredoc('"$site/usercustomize.py"', FAKE_PASS),
    "pth": f"{USER_SITE} && "
    + _heredoc('"$site/fake.py"', FAKE_PASS)
    + "\necho 'import fake' > \"$site/zz-fake.pth\"",
    "sitecustomize": f"{USER_SITE} && "
    + _heredoc('"$site/sitecustomize.py"', FAKE_PASS)
    + '\ncp "$site/sitecustomize.py" ./sitecustomize.py',
    "pytest plugin": f"{USER_SITE} && "
    + _heredoc('"$site/fakeplugin.py"', PLUGIN)
    + '\nmkdir -p "$site/fakeplugin-1.0.dist-info" && '
    + "printf 'Metadata-Version: 2.1\\nName: fakeplugin\\nVersion: 1.0\\n' "
    + '> "$site/fakeplugin-1.0.dist-info/METADATA" && '
    + "printf '[pytest11]\\nfake = fakeplugin\\n' > \"$site/fakeplugin-1.0.dist-info/entry_points.txt\"",
    "conftest outside the tests": _heredoc("conftest.py", PLUGIN) + "\ncp conftest.py /tmp/conftest.py",
    "dotfiles": "mkdir -p plug && "
    + _heredoc("plug/fakeplugin.py", PLUGIN)
    + "\nfor f in .bashrc .profile .bash_profile .bash_login .pam_environment; do "
    + "echo \"export PYTHONPATH=$PWD/plug PYTEST_ADDOPTS='-p fakeplugin'\" > $f; done",
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_planted_hooks_do_not_pass_an_unsolved_task(tmp_path, plant):
    task = _task(tmp_path)
    result = run_trial(task, ScriptAgent(PLANTS[plant], "echo no > marker"))
    assert result.failure_mode == "none" and result.tests == {"test_marker": "FAILED"}, result.tests
    assert not result.resolved


def test_a_same_shell_verifier_does_not_inherit_the_agents_variables(tmp_path):
    task = _task(tmp_path, same_shell=True)
    plant = (
        f"mkdir -p plug && {_heredoc('plug/fakeplugin.py', PLUGIN)}\n"
        "export PYTHONPATH=$PWD/plug PYTEST_ADDOPTS='-p fakeplugin' BASH_ENV=$PWD/.bashrc"
    )
    fake_output = (  # a summary where the verifier's output went before (the folder is writable to it)
        "printf '=== short test summary info ===\\nPASSED test_outputs.py::test_marker\\n' "
        "| tee /run/test-output/output.txt && chmod 444 /run/test-output/output.txt"
    )
    result = run_trial(task, ScriptAgent(plant, PLANTS["usercustomize"], fake_output, "echo no > marker"))
    assert result.failure_mode == "none" and result.tests == {"test_marker": "FAILED"}, result.tests
    assert run_trial(task, oracle_agent([task]), oracle=True).resolved  # the tests still run there


def test_a_link_swapped_into_a_same_shell_work_dir_gets_no_host_tree_written_or_chowned(tmp_path):
    # many files in tests/: the old runner's copy took long enough for the swap to land in its middle
    task = _task(tmp_path, same_shell=True, test_files={f"data{i}.txt": "x\n" for i in range(3000)})
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("host file\n")
    before = {p.name: (p.stat().st_uid, stat.S_IMODE(p.stat().st_mode)) for p in [victim, *victim.iterdir()]}
    # the agent's background job, still running in the same shell: whenever a folder appears where
    # the old runner created the tests' folder, it is moved away and a link to a host folder put there
    swapper = (
        f'(while :; do for d in .iclr26-tests*; do [ -d "$d" ] && [ ! -L "$d" ] && '
        f'mv "$d" "x$RANDOM" && ln -sfn {victim} "$d"; done; done) >/dev/null 2>&1 &'
    )
    result = run_trial(task, ScriptAgent(swapper, "echo ok > marker"))
    after = {p.name: (p.stat().st_uid, stat.S_IMODE(p.stat().st_mode)) for p in [victim, *victim.iterdir()]}
    assert after == before, "a host folder was written or chowned through the agent's link"
    assert result.resolved, result.tests  # the verifier ran from its own folder


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="the mirror exists for root callers only")
@pytest.mark.parametrize("plant", ["link at the mirror's folder", "folder of another user"])
def test_a_local_user_cannot_steer_the_maven_mirror(tmp_path, monkeypatch, plant):
    source = tmp_path / "m2"
    (source / "org/junit/jupiter/junit-jupiter" / toolchains.JUNIT_VERSION).mkdir(parents=True)
    victim = tmp_path / "victim"
    (victim / "maven-repository").mkdir(parents=True)
    secret = victim / "maven-repository" / "secret"
    secret.write_text("root's\n")
    secret.chmod(0o600)
    shared = Path(tempfile.mkdtemp(prefix="iclr26-shared-", dir="/var/tmp"))  # like /var/tmp itself
    shared.chmod(0o1777)
    try:
        if plant == "link at the mirror's folder":
            planted = _as_nobody("ln", "-s", str(victim), str(shared / "iclr26"))
        else:
            planted = _as_nobody("mkdir", str(shared / "iclr26"))
            planted = (
                planted
                if planted.returncode
                else _as_nobody("ln", "-s", str(victim), str(shared / "iclr26" / "maven-repository"))
            )
        assert planted.returncode == 0, planted.stderr
        monkeypatch.setenv(toolchains.MAVEN_REPO_ENV, str(source))
        monkeypatch.setattr(toolchains, "_MIRROR", shared / "iclr26" / "maven-repository")
        toolchains.maven_repository.cache_clear()
        try:
            toolchains.maven_repository()
            refused = ""
        except UserError as e:
            refused = str(e)
        assert secret.read_text() == "root's\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert sorted(p.name for p in victim.rglob("*")) == ["maven-repository", "secret"]
        assert "only root can change" in refused
    finally:
        toolchains.maven_repository.cache_clear()
        subprocess.run(["rm", "-rf", str(shared)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="the mirror exists for root callers only")
def test_the_maven_mirror_is_built_in_a_root_only_folder_and_readable_inside(tmp_path, monkeypatch):
    source = tmp_path / "m2"
    jar = source / "org/junit/jupiter/junit-jupiter" / toolchains.JUNIT_VERSION / "x.jar"
    jar.parent.mkdir(parents=True)
    jar.write_text("jar\n")
    jar.chmod(0o600)
    (source / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("not ours\n")
    (tmp_path / "elsewhere").chmod(0o600)
    shared = Path(tempfile.mkdtemp(prefix="iclr26-shared-", dir="/var/tmp"))
    shared.chmod(0o1777)
    try:
        monkeypatch.setenv(toolchains.MAVEN_REPO_ENV, str(source))
        monkeypatch.setattr(toolchains, "_MIRROR", shared / "iclr26" / "maven-repository")
        toolchains.maven_repository.cache_clear()
        mirror = toolchains.maven_repository()
        assert mirror == shared / "iclr26" / "maven-repository"
        assert _as_nobody("cat", str(mirror / jar.relative_to(source))).stdout == "jar\n"
        assert stat.S_IMODE((tmp_path / "elsewhere").stat().st_mode) == 0o600  # no chmod through the link
        assert (shared / "iclr26").stat().st_uid == 0
        assert _as_nobody("touch", str(mirror / "x")).returncode != 0
        toolchains.maven_repository.cache_clear()
        assert toolchains.maven_repository() == mirror  # reused, not rebuilt
    finally:
        toolchains.maven_repository.cache_clear()
        subprocess.run(["rm", "-rf", str(shared)], check=False)

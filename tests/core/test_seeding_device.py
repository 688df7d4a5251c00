import numpy as np
import pytest
import torch

from iclr26.core import resolve_device, set_seed


def _draw(seed):
    s = set_seed(seed)
    net = torch.nn.Linear(4, 3)  # initialised from the global torch RNG
    return (
        net.weight.detach().clone(),
        torch.randn(5, generator=s.torch_generator),
        s.rng.normal(size=5),
        np.random.rand(3),
    )


def test_set_seed_repeats_every_generator():
    a, b, c = _draw(7), _draw(7), _draw(8)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    assert not torch.equal(a[0], c[0])


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_set_seed_rejects_bad_seed(bad):
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        set_seed(bad)


def test_resolve_device():
    assert resolve_device() == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="device must be one of"):
        resolve_device("gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error")
def test_resolve_device_cuda_absent_is_clear():
    with pytest.raises(RuntimeError, match="no CUDA device"):
        resolve_device("cuda")


def test_cpuinfo_reads_a_field_of_the_first_cpu(monkeypatch, tmp_path):
    import builtins

    from iclr26.core.device import cpuinfo

    fake = tmp_path / "cpuinfo"
    fake.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2\n\nprocessor\t: 1\n")
    real_open = builtins.open
    monkeypatch.setattr(
        builtins, "open", lambda p, *a, **k: real_open(fake if p == "/proc/cpuinfo" else p, *a, **k)
    )
    assert cpuinfo("model name") == "Test CPU 9000" and cpuinfo("flags") == "fpu avx2"
    assert cpuinfo("microcode") is None
    fake.unlink()
    assert cpuinfo("model name") is None  # no /proc/cpuinfo: None, not an error

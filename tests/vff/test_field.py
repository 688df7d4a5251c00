"""The Fourier field, the models, rendering and training."""

import math

import numpy as np
import pytest
import torch

from iclr26.vff.field import FourierField, frame_queries, nearest_voxel, neighbours, psf_factor
from iclr26.vff.models import (
    EncoderConfig,
    ImplicitVideoBaseline,
    VideoFourierField,
    interpolate_input,
    render,
)
from iclr26.vff.train import TrainConfig, train_model


def _single_wave_field(omega, k=0.0):
    field = FourierField(frequencies=1)
    with torch.no_grad():
        field.omega.copy_(torch.tensor([omega]))
        field.k.fill_(k)
    return field


def _coefficients_for(omega, psi, amp, grid):
    """Per-voxel phases φ_v = ψ + ω·c_v and amplitudes, so every voxel describes sin(ω·p + ψ)."""
    t_len, h, w = grid
    kk, ii, jj = torch.meshgrid(torch.arange(t_len), torch.arange(h), torch.arange(w), indexing="ij")
    centres = torch.stack([kk.float(), ii + 0.5, jj + 0.5], -1).view(-1, 3)
    phase = (psi + centres @ torch.tensor(omega))[:, None]
    amplitude = torch.full((len(centres), 1, 3), amp)
    return phase, amplitude


def test_field_with_known_coefficients_reproduces_an_analytic_sinusoidal_video():
    omega, psi, amp, grid = (0.7, 1.3, -2.1), 0.4, 0.8, (3, 5, 6)
    field = _single_wave_field(omega)
    phase, amplitude = _coefficients_for(omega, psi, amp, grid)
    p = torch.rand(500, 3, generator=torch.Generator().manual_seed(0)) * torch.tensor([2.0, 5.0, 6.0])
    flat, delta = nearest_voxel(p, grid)
    rgb = field(phase[flat], amplitude[flat], delta, scale=2.0)
    expected = amp * torch.sin(p @ torch.tensor(omega) + psi)
    assert torch.allclose(rgb, expected[:, None].expand(-1, 3), atol=1e-5)


def test_psf_removes_frequencies_above_nyquist_at_the_requested_scale():
    # a frame at scale s samples at s pixels per LR pixel: Nyquist is π·s rad per LR pixel
    s, k, size = 2.0, 0.5, 64  # 32×32 LR grid rendered at 64×64
    lo, hi = 0.25 * math.pi * s, 1.2 * math.pi * s  # a quarter of Nyquist, and above it
    frames = {}
    for name, w_x in (("low", lo), ("high", hi)):
        omega = (0.0, 0.0, w_x)
        field = _single_wave_field(omega, k=k)
        phase, amplitude = _coefficients_for(omega, 0.0, 1.0, (1, 32, 32))
        p = frame_queries(0.0, (size, size), (32, 32))
        flat, delta = nearest_voxel(p, (1, 32, 32))
        frames[name] = field(phase[flat], amplitude[flat], delta, s)[:, 0].view(size, size).detach()
    spectrum = {n: torch.fft.rfft2(f).abs() / f.numel() for n, f in frames.items()}
    assert spectrum["low"].max() > 0.3  # passes (attenuation exp(−k·ω²/s²) ≈ 0.74)
    assert spectrum["high"].max() < 2e-3  # would alias to a visible low frequency without the PSF
    # the same high frequency passes when the output is fine enough to hold it
    assert psf_factor(torch.tensor([[0.0, hi]]), 4 * s, k).item() > 0.5


def test_nearest_voxel_and_neighbours():
    p = torch.tensor([[0.49, 0.2, 1.7], [0.51, 2.9, 0.0], [1.5, 1.0, 1.0]])
    flat, delta = nearest_voxel(p, (2, 3, 2))
    assert flat.tolist() == [1, 10, 9]  # voxels (k, i, j) = (0, 0, 1), (1, 2, 0), (1, 1, 1)
    assert torch.allclose(delta[0], torch.tensor([0.49, -0.3, 0.2]))
    assert delta[2, 0].item() == pytest.approx(0.5)  # t = 1.5 is halfway: it goes to frame 1, the earlier
    idx, _, w = neighbours(torch.rand(50, 3) * torch.tensor([1.0, 3.0, 2.0]), (2, 3, 2))
    assert torch.allclose(w.sum(1), torch.ones(50)) and idx.max() < 12


def test_interpolate_input_is_exact_at_pixel_centres_and_frames():
    lr = torch.rand(1, 3, 3, 4, 5)
    t, i, j = 1, 2, 3
    p = torch.tensor([[[float(t), i + 0.5, j + 0.5], [0.5, i + 0.5, j + 0.5]]])
    out = interpolate_input(lr, p)[0]
    assert torch.allclose(out[0], lr[0, t, :, i, j], atol=1e-5)
    assert torch.allclose(out[1], 0.5 * (lr[0, 0, :, i, j] + lr[0, 1, :, i, j]), atol=1e-5)


SMALL = EncoderConfig(channels=8, blocks=1)


@pytest.mark.parametrize("cls", [VideoFourierField, ImplicitVideoBaseline])
def test_rendering_in_chunks_equals_rendering_at_once(cls):
    torch.manual_seed(0)
    model = cls(SMALL, frequencies=8) if cls is VideoFourierField else cls(SMALL, hidden=16)
    with torch.no_grad():  # random weights everywhere (the residual heads start at zero)
        for p in model.parameters():
            p.normal_(0, 0.3)
    lr = torch.rand(3, 3, 6, 7)
    a = render(model, lr, [0.0, 0.75, 2.0], (15, 17), chunk=37)
    b = render(model, lr, [0.0, 0.75, 2.0], (15, 17), chunk=10**6)
    assert a.shape == (3, 3, 15, 17) and torch.allclose(a, b, atol=1e-6)
    assert (a - render(type(model)(SMALL), lr, [0.0, 0.75, 2.0], (15, 17))).abs().max() > 1e-3  # not trivial


def test_render_errors():
    model = VideoFourierField(SMALL, frequencies=4)
    with pytest.raises(ValueError, match="outside the clip"):
        render(model, torch.rand(3, 3, 6, 7), [2.5], (12, 14))
    with pytest.raises(ValueError, match="at least 2"):
        render(model, torch.rand(1, 3, 6, 7), [0.0], (12, 14))
    with pytest.raises(ValueError, match="out_size must be positive"):
        render(model, torch.rand(3, 3, 6, 7), [0.0], (0, 14))
    with pytest.raises(ValueError, match="RGB clips"):
        model.encode(torch.rand(1, 3, 4, 6, 7))


def test_training_lowers_the_loss_and_resumes_bitwise(tmp_path):
    cfg = TrainConfig(steps=4, batch=1, lr_frames=2, lr_size=8, queries=64, checkpoint_every=2, warmup=1)
    photos = ("astronaut", "coffee")

    def make():
        torch.manual_seed(0)
        return VideoFourierField(SMALL, frequencies=8)

    full = make()
    losses = train_model(full, photos, cfg, seed=3).losses

    class Interrupted(Exception):
        pass

    def stop_after_two(step, _seconds):
        if step == 2:
            raise Interrupted

    with pytest.raises(Interrupted):  # killed right after the step-2 checkpoint
        train_model(make(), photos, cfg, seed=3, checkpoint=tmp_path / "c.pt", on_step=stop_after_two)
    resumed = make()
    torch.manual_seed(99)  # the global RNG at restart must not matter
    losses2 = train_model(resumed, photos, cfg, seed=3, checkpoint=tmp_path / "c.pt").losses
    assert losses2 == losses
    assert all(
        torch.equal(a, b)
        for a, b in zip(full.state_dict().values(), resumed.state_dict().values(), strict=True)
    )
    with pytest.raises(ValueError, match="min_scale"):
        TrainConfig(min_scale=0.5)


def test_training_reduces_l1_on_moving_views():
    torch.manual_seed(0)
    model = VideoFourierField(SMALL, frequencies=16)
    cfg = TrainConfig(steps=30, batch=2, lr_frames=2, lr_size=12, queries=256, lr=3e-3, warmup=2)
    losses = train_model(model, ("astronaut", "chelsea", "coffee"), cfg, seed=0).losses
    assert np.mean(losses[-5:]) < np.mean(losses[:5])

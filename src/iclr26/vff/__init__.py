"""V³ Video Fourier Field: continuous space-time video super-resolution (arXiv 2509.26325, ICLR 2026).

In progress: the field, models, data, metrics, baselines and training are here and tested; the
`vff` system (evaluation table, frame strip, presets) is not registered yet.
"""

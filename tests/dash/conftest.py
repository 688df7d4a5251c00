import os

import torch

# Triton kernels run on CPU tensors through the interpreter when no GPU is present. Set before
# triton is imported by any test module of this package.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

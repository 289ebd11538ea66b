"""Timing done the XLA way, and events that are not CUDA events."""

import threading
import time

import torch
import torch_xla

stop = threading.Event()
x = torch.randn(64, 64, device=torch_xla.device())
start = time.perf_counter()
y = x @ x
torch_xla.sync(wait=True)
elapsed = time.perf_counter() - start
print(f"matmul took {elapsed * 1000:.1f} ms", stop.is_set())

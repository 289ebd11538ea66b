"""Memory accounting that is not CUDA's: host RSS, tracemalloc, a local helper, XLA's own query."""

import resource
import tracemalloc

import torch_xla
import torch_xla.core.xla_model as xm


def memory_allocated():
    """Bytes the host process holds."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


tracemalloc.start()
print(memory_allocated(), tracemalloc.get_traced_memory())
info = xm.get_memory_info(torch_xla.device())

"""XLA8xx: CUDA-only code is never kept silently, nor half-converted.

The migration guide's "Unsupported Operations" and "Debugging and Profiling": what
only exists on NVIDIA GPUs must be replaced by a person, and these rules say where and
with what (one TODO comment a statement, an error for ``--check``). Where an XLA
counterpart keeps the meaning, the rule converts instead: NVTX ranges become
``torch_xla.debug.profiler`` traces (XLA804), and ``torch.compile`` with inductor goes
(XLA810: XLA compiles the whole step anyway). XLA899 catches what no rule named. Under ``--runtime torch-tpu``,
streams and events become ``torch.tpu``'s (XLA801, XLA802), ``torch.compile`` gets the
``tpu`` backend (XLA810), NVTX is flagged (XLA804), and the messages name TorchTPU's
counterparts.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   streams.py          XLA801 cuda-stream, XLA802 cuda-event, XLA803 cuda-graph
#   nvtx.py             XLA804 nvtx-range
#   kernels.py          XLA805 cuda-extension, XLA806 triton-kernel
#   libraries.py        XLA807 apex, XLA808 cupy, XLA809 nvml-query
#   compile_backend.py  XLA810 torch-compile-backend
#   library_helpers.py  XLA811 library-cuda-helper
#   reference_left.py   XLA899 cuda-reference-left
#   common.py           CudaOnlyApi (the base of XLA801-XLA809), the documents the messages cite

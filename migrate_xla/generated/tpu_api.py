"""torch_tpu's public API and what loading it does, as its wheel (torch_tpu 0.2.0) declares them.

Generated from the wheel by migrate_xla/generators/make_tpu_api.py, which reads it without importing
torch_tpu; do not edit. Regenerate it for another release of torch_tpu:

    .venv/bin/python -m migrate_xla.generators.make_tpu_api WHEEL  (or: make tpu-api)
"""

TORCH_TPU_VERSION = "0.2.0"
REQUIRES_PYTHON = ">=3.11"
# Requires-Dist: the torch releases this torch_tpu runs with
REQUIRES_TORCH = ">=2.11.0,<=2.15.0"
# torch loads torch_tpu by itself through this entry point (group, name, object): device-backend
# autoload, which TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns off; no `import torch_tpu` is needed
ENTRY_POINT = ("torch.backends", "torch_tpu", "torch_tpu._loader:load")
# The device type PrivateUse1 is renamed to: torch.device("tpu"), .to("tpu"),
# and the methods torch generates for it (Tensor.tpu(), Tensor.is_tpu, Module.tpu())
DEVICE = "tpu"
# The process-group backends it registers (init_process_group(backend=...)), for device type DEVICE
PROCESS_GROUP_BACKENDS = ("tpu_dist", "tpu")
# torch.compile(model, backend=...)
COMPILE_BACKEND = "tpu"
# autocast's default dtype on DEVICE
AUTOCAST_DTYPE = "bfloat16"

# Each public module (torch_tpu/_internal/public_api.py's _PUBLIC_MODULES) and the names it
# exports; a module's submodules in this table are its attributes too.
PUBLIC_MODULES = {
    "torch.tpu": frozenset(
        {
            "EagerMode",
            "Event",
            "Precision",
            "Stream",
            "allow_excess_precision",
            "current_device",
            "current_stream",
            "default_generators",
            "default_stream",
            "device",
            "device_count",
            "device_of",
            "eager_mode",
            "get_amp_supported_dtype",
            "get_device_name",
            "get_device_properties",
            "get_rng_state",
            "initial_seed",
            "is_available",
            "is_initialized",
            "manual_seed",
            "manual_seed_all",
            "precision",
            "set_device",
            "set_eager_mode",
            "set_rng_state",
            "set_stream",
            "stream",
            "synchronize",
            "topology_aware_mesh",
        }
    ),
    "torch.tpu.compiler": frozenset(
        {
            "custom_compiler_options",
        }
    ),
    "torch.tpu.distributed": frozenset(
        {
            "set_tpu_launch_env",
            "spmd_safe",
            "topology_aware_mesh",
            "window_num_stripes",
            "window_stripe_chunk_mb",
        }
    ),
    "torch.tpu.ops": frozenset(
        {
            "align_jagged_to_multiple",
            "all_gather_dim",
            "max_pool1d",
            "max_pool1d_backward",
            "max_pool2d",
            "max_pool2d_backward",
            "max_pool3d",
            "max_pool3d_backward",
            "optimization_barrier",
            "ragged_all_to_all",
            "ragged_dot",
            "ragged_dot_weight_grad",
            "recv",
            "reduce_scatter_dim",
            "send",
            "sparse_dense_matmul",
            "sparse_dense_matmul_activation_unstack",
            "sparse_dense_matmul_grad_with_adagrad",
            "sparse_dense_matmul_grad_with_adam",
            "sparse_dense_matmul_grad_with_sgd",
            "sparse_dense_matmul_gradient_stack",
            "sparse_gather",
            "sparse_gather_backward",
            "sparse_iota",
            "sparse_map_row",
            "splash_sdpa",
            "strip_jagged_padding",
        }
    ),
    "torch.tpu.optimizers": frozenset(
        {
            "AdamW",
            "Muon",
            "Optimizer",
            "Sgd",
            "SingleTraceTrainer",
        }
    ),
    "torch.tpu.pallas": frozenset(
        {
            "get_pallas_mesh",
            "jax_op",
        }
    ),
    "torch.tpu.profiler": frozenset(
        {
            "TpuProfilerConfig",
        }
    ),
}


def is_public(qualname: str) -> bool:
    """Whether ``qualname`` (``torch.tpu.synchronize``, ``torch.tpu.ops``) is a public module or name."""
    module, _, name = qualname.rpartition(".")
    return qualname in PUBLIC_MODULES or name in PUBLIC_MODULES.get(module, ())

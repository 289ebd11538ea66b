"""A device emulated on the CPU, what CUDA's emulation and TorchTPU's share: the mode that
maps the device to the CPU, streams and events, and the device module's common shim."""

from __future__ import annotations

import inspect
import os
import re
import sys

import torch
from torch.overrides import TorchFunctionMode

from .shared import _after_import

# the port of a tcp:// rendezvous address: (tcp://host:)(port)(/...)
TCP_PORT = re.compile(r"^(tcp://[^/]*:)(\d+)(.*)$")

# -- a device emulated on the CPU: CUDA (the reference run without a GPU), TorchTPU's "tpu" --
#
# The same machinery for both, by device type: every device of that type, wherever a device
# is given (a name, "cuda:0", a torch.device, a bare index, device= keywords, .to(...)), is
# made the CPU by a torch function mode; the device module (torch.cuda, torch.tpu) answers
# as one device would; Tensor.cuda()/.tpu() and Module.cuda()/.tpu() keep the tensor;
# autocast, GradScaler, torch.load, the process-group backend and DDP's device ids all
# point at the CPU.


def _on_cpu(value, device_type: str):
    """``value`` with a device of ``device_type`` (a name, a torch.device, a bare index) made the CPU."""
    if isinstance(value, str) and (value == device_type or value.startswith(device_type + ":")):
        return "cpu"
    if isinstance(value, torch.device) and value.type == device_type:
        return torch.device("cpu")
    if isinstance(value, int) and not isinstance(value, bool):
        return "cpu"
    return value


_LEGACY_NAMES: dict[str, str] = {}  # "torch.cuda.FloatTensor": "torch.FloatTensor", filled by the shim


def _decuda(func, args, kwargs, device_type: str = "cuda"):
    """Arguments with devices of ``device_type`` replaced by the CPU, or None when there were none."""
    changed = False
    if (
        func is torch.Tensor.type and len(args) > 1 and isinstance(args[1], str) and args[1] in _LEGACY_NAMES
    ):  # x.type("torch.cuda.FloatTensor")
        args = (args[0], _LEGACY_NAMES[args[1]], *args[2:])
        changed = True
    if func is torch.Tensor.type and isinstance(kwargs.get("dtype"), str) and kwargs["dtype"] in _LEGACY_NAMES:
        kwargs = {**kwargs, "dtype": _LEGACY_NAMES[kwargs["dtype"]]}  # x.type(dtype="torch.cuda.FloatTensor")
        changed = True
    if "device" in kwargs and _on_cpu(kwargs["device"], device_type) is not kwargs["device"]:
        kwargs = {**kwargs, "device": _on_cpu(kwargs["device"], device_type)}
        changed = True
    if func is torch.Tensor.to and len(args) > 1 and isinstance(args[1], (str, torch.device, int)):
        new = _on_cpu(args[1], device_type)
        if new is not args[1]:
            args = (args[0], new, *args[2:])
            changed = True
    return (args, kwargs) if changed else None


class EmulationMode(TorchFunctionMode):
    """Sees every torch call of an emulated run and maps the emulated device to the CPU."""

    device_type = "cuda"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fixed = _decuda(func, args, kwargs, self.device_type)
        if fixed is not None:
            args, kwargs = fixed
        return func(*args, **kwargs)


def _returning(value):
    """A new function returning ``value`` (torch.compile refuses one function under two names)."""
    return lambda *args, **kwargs: value


def _torch_calls(depth: int = 2) -> bool:
    """Whether the frame ``depth`` levels above this one is torch's own code (at the default,
    the caller of the function that asks)."""
    caller = sys._getframe(depth).f_globals.get("__name__", "")
    return caller == "torch" or caller.startswith("torch.")


def _for_user_code(real, emulated):
    """``emulated`` for the script's own calls; torch's internals keep seeing no GPU."""

    def query(*args, **kwargs):
        if _torch_calls():
            return real(*args, **kwargs)
        return emulated

    return query


def _binder(original):
    """Binds a call's arguments by ``original``'s own signature (``inspect.signature``), so a
    wrapper that reads or changes one argument finds it however the caller passed it, by
    position or by keyword, and passes on every call ``original`` accepts. The binder returns
    the ``inspect.BoundArguments`` (defaults not applied), or None where the call does not fit
    the signature (the wrapper then calls ``original`` as it was called, which raises its own
    error) or ``original`` has no signature to read."""
    try:
        signature = inspect.signature(original)
    except (TypeError, ValueError):
        signature = None

    def bind(*args, **kwargs):
        if signature is None:
            return None
        try:
            return signature.bind(*args, **kwargs)
        except TypeError:
            return None

    return bind


class _Event:
    """torch.cuda.Event on the CPU: recorded at once, timed by the wall clock."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False, **kwargs):
        self._at = None

    def record(self, stream=None):
        import time

        self._at = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        if self._at is None or end_event._at is None:
            return 0.0
        return (end_event._at - self._at) * 1000.0


class _Stream:
    """torch.cuda.Stream on the CPU: everything runs in order on the one CPU stream."""

    cuda_stream = 0

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("cpu")
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or _Event()
        event.record(self)
        return event

    def synchronize(self):
        pass

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _DeviceContext:
    """torch.cuda.device(i) / device_of(tensor), torch.tpu's: the one device is always current."""

    def __init__(self, device=None) -> None:
        self.idx = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _DeviceOfContext(_DeviceContext):
    """torch.cuda.device_of(obj), torch.tpu's: the device of a tensor, the one device."""

    def __init__(self, obj=None) -> None:
        super().__init__()


class _StreamContext:
    def __init__(self, stream=None):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def _install_device_shim(device_type: str, module, backends: tuple[str, ...]) -> None:
    """What every emulated device gets: ``module`` (torch.cuda, torch.tpu) with CPU streams and
    events, ``Tensor.<device_type>()`` and ``Module.<device_type>()`` keeping the tensor,
    autocast and GradScaler on the CPU, ``torch.load`` onto the CPU, ``backends`` of
    init_process_group as gloo (at this child's own port), DDP without device ids, SyncBatchNorm of
    one process, FSDP and device meshes on the CPU, and
    ``torch.accelerator`` answering the script as one device would."""
    # streams and events (a data loader that prefetches on a side stream, timm's style)
    default_stream = _Stream()
    module.Stream = _Stream
    module.Event = _Event
    module.StreamContext = _StreamContext
    module.stream = _StreamContext
    module.current_stream = lambda device=None: default_stream
    module.default_stream = lambda device=None: default_stream
    module.set_stream = _returning(None)
    torch.Tensor.record_stream = lambda self, stream: None
    setattr(torch.Tensor, device_type, lambda self, *args, **kwargs: self)
    setattr(torch.nn.Module, device_type, lambda self, *args, **kwargs: self)
    torch.Tensor.pin_memory = lambda self, *args, **kwargs: self
    if hasattr(torch, "accelerator"):
        accelerator = torch.accelerator
        if device_type == "cuda":  # a CPU build of torch has no accelerator: one for everybody
            accelerator.is_available = _returning(True)
            accelerator.current_accelerator = _returning(torch.device("cpu"))
        else:  # the renamed privateuse1 device is the accelerator already; torch's internals see none
            accelerator.is_available = _for_user_code(accelerator.is_available, True)
        accelerator.device_count = _returning(1)
        accelerator.set_device_index = _returning(None)
        accelerator.current_device_index = _returning(0)
        accelerator.synchronize = _returning(None)

    emulated = device_type
    # each wrapper below binds the call by the signature of what it wraps (_binder): torch.load(f,
    # "cuda:0") names map_location by position, autocast(device_type="cuda") by keyword
    autocast_init = torch.amp.autocast_mode.autocast.__init__
    autocast_arguments = _binder(autocast_init)

    def autocast(self, *args, **kwargs):
        bound = autocast_arguments(self, *args, **kwargs)
        if bound is None:
            return autocast_init(self, *args, **kwargs)
        if bound.arguments.get("device_type") == emulated:
            bound.arguments["device_type"] = "cpu"
        return autocast_init(*bound.args, **bound.kwargs)

    torch.amp.autocast_mode.autocast.__init__ = autocast

    scaler_init = torch.amp.GradScaler.__init__
    scaler_arguments = _binder(scaler_init)

    def grad_scaler(self, *args, **kwargs):
        bound = scaler_arguments(self, *args, **kwargs)
        if bound is None:
            return scaler_init(self, *args, **kwargs)
        if bound.arguments.get("device", emulated) == emulated:  # torch's default is "cuda": the emulated device's
            bound.arguments["device"] = "cpu"
        return scaler_init(*bound.args, **bound.kwargs)

    torch.amp.GradScaler.__init__ = grad_scaler

    # custom autograd functions for autocast (torch.cuda.amp.custom_fwd calls these): they look at
    # autocast on the device they name, which is CPU autocast in the emulation
    for name in ("custom_fwd", "custom_bwd"):
        setattr(torch.amp, name, _device_type_on_cpu(getattr(torch.amp, name), emulated))

    load = torch.load
    load_arguments = _binder(load)

    def load_on_cpu(*args, **kwargs):
        bound = load_arguments(*args, **kwargs)
        if bound is None:
            return load(*args, **kwargs)
        bound.arguments["map_location"] = _load_location(bound.arguments.get("map_location"), emulated)
        return load(*bound.args, **bound.kwargs)

    torch.load = load_on_cpu

    import torch.distributed as dist

    init_process_group = dist.init_process_group
    group_arguments = _binder(init_process_group)

    def gloo_instead(*args, **kwargs):
        bound = group_arguments(*args, **kwargs)
        if bound is None:
            return init_process_group(*args, **kwargs)
        backend = bound.arguments.get("backend")
        if isinstance(backend, str) and any(name in backend for name in backends):
            bound.arguments["backend"] = "gloo"
        # the device the group binds to (PyTorch's examples: ``device_id=device``) is the CPU here, which
        # torch refuses ("device_id parameter must be an accelerator with an index"): a CPU group has none
        bound.arguments.pop("device_id", None)
        # this child's own port (children.RENDEZVOUS_PORT): the other run's group may be meeting
        # at the port the script names, side by side on this machine
        method = bound.arguments.get("init_method")
        port = os.environ.get("XLA_MIGRATE_VERIFY_PORT")
        if port and (method is None or str(method).startswith("env://")):
            os.environ["MASTER_PORT"] = port
        elif port and isinstance(method, str) and TCP_PORT.match(method):
            # "tcp://localhost:10001", MoCo's and the ImageNet launcher's: the same port, side by side
            bound.arguments["init_method"] = TCP_PORT.sub(rf"\g<1>{port}\g<3>", method)
        return init_process_group(*bound.args, **bound.kwargs)

    dist.init_process_group = gloo_instead

    # DDP's device ids name devices; for a module on the CPU it takes none (and raises otherwise).
    ddp = torch.nn.parallel.DistributedDataParallel
    ddp_init = ddp.__init__
    ddp_arguments = _binder(ddp_init)

    def ddp_on_cpu(self, *args, **kwargs):
        bound = ddp_arguments(self, *args, **kwargs)
        if bound is None:
            return ddp_init(self, *args, **kwargs)
        bound.arguments.update(device_ids=None, output_device=None)
        return ddp_init(*bound.args, **bound.kwargs)

    ddp.__init__ = ddp_on_cpu
    _sync_batchnorm_on_cpu()
    _sharding_on_cpu(emulated)


def _sync_batchnorm_on_cpu() -> None:
    """SyncBatchNorm at the world size the reference runs (1), on the CPU: torch refuses it there
    (DDP: "SyncBatchNorm layers only work with GPU modules"; its forward: "expected input tensor
    to be on GPU") before finding that one process has nothing to synchronise, where it computes
    plain batch norm. So DDP skips the check, and the forward on the CPU of a group of one is
    batch norm's (the same running statistics and momentum)."""
    import torch.distributed as dist
    from torch.nn.modules.batchnorm import SyncBatchNorm, _BatchNorm

    torch.nn.parallel.DistributedDataParallel._passing_sync_batchnorm_handle = lambda self, module: None
    forward = SyncBatchNorm.forward

    def on_cpu(self, input):
        # without a process group torch's forward is batch norm already, and takes the CPU
        alone = dist.is_available() and dist.is_initialized()
        alone = alone and dist.get_world_size(getattr(self, "process_group", None) or dist.group.WORLD) == 1
        if alone and isinstance(input, torch.Tensor) and input.device.type == "cpu":
            return _BatchNorm.forward(self, input)
        return forward(self, input)

    SyncBatchNorm.forward = on_cpu


def _sharding_on_cpu(emulated: str) -> None:
    """FSDP at the world size the reference runs (1), on the CPU: a device mesh of the emulated
    device is a CPU mesh (FSDP2's ``fully_shard`` expects the parameters on the mesh's device),
    and FSDP v1 is given the CPU as its device (torch refuses FSDP v1 without an accelerator
    unless ``device_id`` names the CPU; an index or the emulated device would be a GPU's), once
    the script imports it. At world size 1 both shard nothing: what runs is the unsharded model
    with FSDP's mixed precision. A mesh of several axes is one device on each at world size 1,
    whatever shape the script computes for it: ``(world_size // tp, tp)`` with ``tp = 2``, the
    2-D layout of PyTorch's FSDP + tensor-parallel example, is ``(0, 2)`` there."""
    import torch.distributed as dist
    from torch.distributed import device_mesh

    init_mesh = device_mesh.init_device_mesh
    mesh_on_cpu = _mesh_of_one_process(_device_type_on_cpu(init_mesh, emulated), init_mesh)
    device_mesh.init_device_mesh = mesh_on_cpu
    if getattr(dist, "init_device_mesh", None) is init_mesh:
        dist.init_device_mesh = mesh_on_cpu

    def fsdp_on_cpu(module) -> None:
        fsdp = module.FullyShardedDataParallel
        fsdp_init = fsdp.__init__
        fsdp_arguments = _binder(fsdp_init)

        def on_cpu(self, *args, **kwargs):
            bound = fsdp_arguments(self, *args, **kwargs)
            if bound is None:
                return fsdp_init(self, *args, **kwargs)
            device = bound.arguments.get("device_id")
            if device is None or isinstance(device, int) or torch.device(device).type == emulated:
                bound.arguments["device_id"] = torch.device("cpu")
            return fsdp_init(*bound.args, **bound.kwargs)

        fsdp.__init__ = on_cpu

    # FSDP v1 takes 0.4 s to import: patched when the script imports it
    _after_import(("torch.distributed.fsdp.fully_sharded_data_parallel",), fsdp_on_cpu)
    _after_import(("torch.distributed.tensor.parallel",), _plan_of_one_process)


def _alone() -> bool:
    """Whether the reference runs alone (world size 1, the only size it runs at)."""
    import torch.distributed as dist

    return dist.get_world_size() == 1 if dist.is_initialized() else os.environ.get("WORLD_SIZE", "1") == "1"


def _plan_of_one_process(package) -> None:
    """``parallelize_module`` leaves the module as it is where the reference runs alone: at world
    size 1 a tensor-parallel plan is the unsharded model, and DTensor has no sharding strategy
    for some of the CPU's kernels (the CPU's flash attention: PyTorch's 2-D FSDP + tensor-parallel
    example died in the reference at ``_scaled_dot_product_flash_attention_for_cpu``)."""
    import torch.distributed.tensor.parallel.api as api

    real = api.parallelize_module
    arguments = _binder(real)

    def unsharded(*args, **kwargs):
        bound = arguments(*args, **kwargs)
        if bound is None or not _alone():
            return real(*args, **kwargs)
        return bound.arguments["module"]

    api.parallelize_module = package.parallelize_module = unsharded


def _mesh_of_one_process(init_mesh, signature_of):
    """``init_mesh`` (``init_device_mesh``) with its ``mesh_shape`` one device on each axis where
    the reference runs alone (world size 1, the only size it runs at)."""

    arguments = _binder(signature_of)

    def one_each(*args, **kwargs):
        bound = arguments(*args, **kwargs)
        shape = bound.arguments.get("mesh_shape") if bound is not None else None
        if not _alone() or not isinstance(shape, (tuple, list)):
            return init_mesh(*args, **kwargs)
        bound.arguments["mesh_shape"] = (1,) * len(shape)
        return init_mesh(*bound.args, **bound.kwargs)

    return one_each


def _device_type_on_cpu(original, emulated: str):
    """``original`` (``torch.amp.custom_fwd`` / ``custom_bwd``, ``init_device_mesh``) with its
    ``device_type`` the emulated device made "cpu"."""
    arguments = _binder(original)

    def on_cpu(*args, **kwargs):
        bound = arguments(*args, **kwargs)
        if bound is None or bound.arguments.get("device_type") != emulated:
            return original(*args, **kwargs)
        bound.arguments["device_type"] = "cpu"
        return original(*bound.args, **bound.kwargs)

    return on_cpu


def _load_location(map_location, emulated: str):
    """torch.load's ``map_location`` in the emulation: everything loads onto the CPU. None (a
    checkpoint saved on a GPU would load where it was saved), a function or a dict (which map
    storages to devices, the emulated one among them) are the CPU; another location (a
    device) as ``_on_cpu`` makes it."""
    if map_location is None or callable(map_location) or isinstance(map_location, dict):
        return "cpu"
    return _on_cpu(map_location, emulated)

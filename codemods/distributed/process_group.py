"""XLA602-XLA603: the process group and DDP in the DDP guide's form: the ``xla`` backend
with ``init_method="xla://"`` (XLA602), ``DDP(model)`` without CUDA device ids (XLA603);
under TorchTPU, its ``tpu`` backend and ``DDP(model)`` without CUDA device ids."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from migrate_xla.rule.api import (
    SAFE,
    Import,
    Rule,
    append_keyword,
    call_arg,
    code_of,
    drop_items,
    last_name,
    string_value,
)

XLA_BACKEND = Import("torch_xla.distributed.xla_backend")  # registers the "xla" backend and "xla://"

INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
DEFAULT_BACKEND = "torch.distributed.get_default_backend_for_device"  # "nccl" for a CUDA device
CPU_BACKENDS = frozenset({"gloo", "mpi"})
DERIVED = frozenset({"rank", "world_size", "init_method", "device_id"})  # what the xla:// rendezvous supplies


def _is_nccl(node: cst.CSTNode) -> bool:
    """``"nccl"``, ``"cuda:nccl,cpu:gloo"`` or ``"nccl" if ... else "gloo"``."""
    if isinstance(node, cst.IfExp):
        return _is_nccl(node.body) or _is_nccl(node.orelse)
    value = string_value(node)
    return value is not None and "nccl" in value


def _names_backend(name: str) -> bool:
    return "backend" in name.lower()


def _tpu_backend(node: cst.CSTNode, device_type: str, backend: str) -> str:
    """The TorchTPU backend string for a CUDA one: ``"tpu"``, or, for a string that names a
    backend per device type (``"cuda:nccl,cpu:gloo"``), the CUDA pair made TorchTPU's
    (``"tpu:tpu,cpu:gloo"``), so that the CPU's group stays."""
    value = string_value(node)
    if value is None or ":" not in value:
        return backend
    pairs = [pair.split(":", 1) for pair in value.split(",")]
    if any(len(pair) != 2 for pair in pairs):
        return backend
    return ",".join(
        f"{device_type}:{backend}" if kind.strip() == "cuda" or name.strip() == "nccl" else f"{kind}:{name}"
        for kind, name in pairs
    )


class XlaProcessGroup(Rule):
    """``dist.init_process_group("nccl", ...)`` becomes the XLA backend's group.

    PyTorch/XLA's DDP guide: ``dist.init_process_group("xla", init_method="xla://")``
    after ``import torch_xla.distributed.xla_backend`` (which registers both). The
    ``xla://`` rendezvous takes the rank and world size from the XLA runtime (and
    torchrun's variables when torchrun started the process), so ``rank=``,
    ``world_size=``, ``init_method=`` and ``device_id=`` go. A backend given as a
    variable or flag becomes ``"xla"`` too: a TPU has no other device backend. ``gloo``
    or ``mpi`` groups are CPU groups and stay. NCCL names stored for later
    (``backend = "nccl"``, an argparse ``--dist-backend`` default, a parameter default)
    become ``"xla"`` so the script reports what it runs, and so does the backend torch picks for the
    script's device (``get_default_backend_for_device(device)``, PyTorch's examples): torch knows none
    for an XLA device ("Default backend not registered for device : xla:0").

    Both runtimes. TorchTPU registers its collectives as an ordinary process-group backend,
    ``"tpu"`` (also ``"tpu_dist"``), for the device type ``tpu``: there the NCCL backend (a
    literal, a variable or flag, the stored names above) becomes ``"tpu"``, and ``rank=``,
    ``world_size=``, ``init_method=``, a ``store`` and ``device_id=`` stay as the script had
    them (torchrun's ``env://`` rendezvous works as on GPUs; there is no ``xla://``). A string
    that names a backend per device type keeps its CPU pair (``"cuda:nccl,cpu:gloo"`` becomes
    ``"tpu:tpu,cpu:gloo"``). A group without a backend stays: torch picks TorchTPU's for the
    ``tpu`` device. No import is needed: torch loads TorchTPU, and its backends, by itself.
    """

    CODE = "XLA602"
    NAME = "xla-process-group"
    SUMMARY = "init_process_group('nccl', rank, world_size) becomes init_process_group('xla', init_method='xla://')"
    FIX = SAFE
    TRIGGERS = (r"init_process_group", r"""['"][^'"\n]*nccl""", r"get_default_backend_for_device")
    BEFORE = 'import torch.distributed as dist\n\ndist.init_process_group("nccl", rank=rank, world_size=world_size)\n'
    AFTER = 'import torch.distributed as dist\n\ndist.init_process_group("xla", init_method="xla://")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name == DEFAULT_BACKEND and self.ctx.runtime == "torch-xla":
            return self.replace(
                original,
                updated,
                cst.SimpleString('"xla"'),
                f'`{code_of(original)}` -> `"xla"`: an XLA device\'s backend (torch registers none for it)',
            )
        if name != INIT_PROCESS_GROUP:
            return self._backend_default(original, updated)
        backend = call_arg(original, 0, "backend")
        if self.ctx.runtime != "torch-xla":
            return self._tpu_group(original, updated, backend)
        if backend is not None and string_value(backend.value) in CPU_BACKENDS | {"xla"}:
            return updated
        if len([a for a in original.args if a.keyword is None]) > 1 or any(a.star for a in original.args):
            self.flag(
                original, f'pass the backend only: `init_process_group("xla", init_method="xla://")`, see {DDP_GUIDE}'
            )
            return updated
        if call_arg(original, None, "store") is not None:
            self.flag(
                original,
                f'a store-based group: the xla backend rendezvous through `init_method="xla://"`, see {DDP_GUIDE}',
            )
            return updated
        for arg in original.args:
            if arg.keyword is not None and arg.keyword.value in DERIVED:
                self.ctx.forget_fixes_inside(arg)
        xla = cst.SimpleString('"xla"')
        derived = {
            id(a) for o, a in zip(original.args, updated.args) if o.keyword is not None and o.keyword.value in DERIVED
        }
        args = [
            a.with_changes(value=xla) if backend is not None and o is backend else a
            for o, a in zip(original.args, updated.args)
        ]
        args = drop_items(args, lambda a: id(a) in derived)
        if backend is None:
            args.insert(
                0, cst.Arg(xla, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) if args else cst.Arg(xla)
            )
        call = append_keyword(updated.with_changes(args=args), "init_method", cst.SimpleString('"xla://"'))
        was = f"`{code_of(backend.value)}`" if backend is not None else "the default backend"
        return self.replace(
            original,
            updated,
            call,
            f'{was} -> the XLA backend (`"xla"`, `init_method="xla://"`): it takes the rank and world size from the runtime',
            imports=[XLA_BACKEND],
        )

    def _tpu_group(self, original: cst.Call, updated: cst.Call, backend: cst.Arg | None):
        """TorchTPU's group: the backend becomes ``"tpu"``; everything else stays."""
        api = self.ctx.api
        if backend is None or (string_value(backend.value) is not None and not _is_nccl(backend.value)):
            return updated  # no backend (torch picks TorchTPU's for its device), gloo, or TorchTPU's already
        self.ctx.forget_fixes_inside(backend.value)
        new = cst.SimpleString(f'"{_tpu_backend(backend.value, api.device_type, api.backend)}"')
        args = [a.with_changes(value=new) if o is backend else a for o, a in zip(original.args, updated.args)]
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            f"`{code_of(backend.value)}` -> `{new.value}`, {api.title}'s process-group backend: the rank, world size "
            "and rendezvous stay as they were",
        )

    def _backend_default(self, original: cst.Call, updated: cst.Call):
        """``parser.add_argument("--dist-backend", default="nccl")``."""
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return updated
        flags = [string_value(a.value) or "" for a in original.args if a.keyword is None]
        default = call_arg(original, None, "default")
        if default is None or not _is_nccl(default.value) or not any(_names_backend(f) for f in flags):
            return updated
        return self._to_xla(original, updated, default.value, "argparse default")

    def _to_xla(self, original, updated, value: cst.BaseExpression, where: str):
        """``updated`` with its NCCL ``value`` (an argument's, or an assignment's) made ``"xla"``
        (TorchTPU's ``"tpu"``)."""
        api = self.ctx.api
        on_xla = self.ctx.runtime == "torch-xla"
        xla = cst.SimpleString('"xla"' if on_xla else f'"{_tpu_backend(value, api.device_type, api.backend)}"')
        if isinstance(updated, cst.Call):
            replacement = updated.with_changes(
                args=[a.with_changes(value=xla) if o.value is value else a for o, a in zip(original.args, updated.args)]
            )
        elif isinstance(updated, cst.Param):
            replacement = updated.with_changes(default=xla)
        else:
            replacement = updated.with_changes(value=xla)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{code_of(value)}` ({where}) -> `{xla.value}`",
            imports=[XLA_BACKEND] if on_xla else [],
        )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        targets = [last_name(t.target) for t in original.targets]
        if _is_nccl(original.value) and all(_names_backend(t) for t in targets):
            return self._to_xla(original, updated, original.value, "assigned")
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        if original.default is not None and _is_nccl(original.default) and _names_backend(original.name.value):
            return self._to_xla(original, updated, original.default, "a default")
        return updated


# -- DistributedDataParallel (XLA603) -----------------------------------------------------------

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})


class DdpXlaForm(Rule):
    """``DDP(model, device_ids=[rank], output_device=rank)`` becomes the DDP guide's form.

    PyTorch/XLA's DDP guide wraps the model already on the XLA device as
    ``DDP(model, gradient_as_bucket_view=True)``: there are no device ids on XLA (each
    process owns one device), and gradients kept as views of DDP's buckets save a copy
    of every gradient, which the guide recommends for memory and speed. Other options
    (``find_unused_parameters``, ``broadcast_buffers``, ...) stay.

    Both runtimes. A TorchTPU process is bound to one device (``torch.tpu.set_device`` refuses
    another index), the one its model is on (``torch.device("tpu")``, XLA605's): a CUDA index
    from the rank could name another, so ``device_ids`` and ``output_device`` go there too
    and DDP uses the model's device; ``gradient_as_bucket_view`` is the XLA guide's advice and is
    not added.
    """

    CODE = "XLA603"
    NAME = "ddp-xla-form"
    SUMMARY = "DDP(model, device_ids=[rank]) becomes DDP(model, gradient_as_bucket_view=True)"
    FIX = SAFE
    TRIGGERS = (r"DistributedDataParallel",)
    BEFORE = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "model = DDP(model, device_ids=[rank], output_device=rank)\n"
    )
    AFTER = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "model = DDP(model, gradient_as_bucket_view=True)\n"
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) not in DDP or any(a.star for a in original.args):
            return updated
        device_args = [call_arg(original, 1, "device_ids"), call_arg(original, 2, "output_device")]
        dropped = {i for i, a in enumerate(original.args) if a in device_args and a is not None}
        on_xla = self.ctx.runtime == "torch-xla"
        has_views = call_arg(original, None, "gradient_as_bucket_view") is not None or not on_xla
        if not dropped and has_views:
            return updated
        gone = {id(updated.args[i]) for i in dropped}
        call = updated.with_changes(args=drop_items(updated.args, lambda a: id(a) in gone))
        if not has_views:
            call = append_keyword(call, "gradient_as_bucket_view", cst.Name("True"))
        for i in dropped:
            self.ctx.forget_fixes_inside(original.args[i])
        message = (
            "DDP on XLA (DDP guide): no device ids, each process owns its device; `gradient_as_bucket_view=True` "
            "saves a copy of the gradients"
            if on_xla
            else f"DDP on {self.ctx.api.title}: no CUDA device ids, each process is bound to one device, the model's"
        )
        return self.replace(original, updated, call, message)

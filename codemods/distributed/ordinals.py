"""XLA604-XLA605: ranks and world sizes are read from ``torch_xla.runtime`` (XLA604), and
a rank used as a CUDA device index becomes the XLA device (XLA605)."""

from __future__ import annotations

import re

import libcst as cst

from codemods.distributed.launch import MpSpawnToLaunch
from codemods.shared.launch_plan import LaunchPlan, is_device_count, launch_plan
from codemods.shared.statements import environment_variable
from migrate_xla.rule.api import (
    GAP,
    ON_ACCELERATOR,
    SAFE,
    XR,
    FileContext,
    Rule,
    code_of,
    last_name,
    parse_expr,
)

WORLD_NAME = re.compile(r"world_?size|num_replicas|nprocs", re.IGNORECASE)

ENV_ORDINALS = {"RANK": "xr.global_ordinal()", "LOCAL_RANK": "xr.local_ordinal()", "WORLD_SIZE": "xr.world_size()"}
DIST_ORDINALS = {
    "torch.distributed.get_rank": "xr.global_ordinal()",
    "torch.distributed.get_world_size": "xr.world_size()",
    "torch.distributed.get_node_local_rank": "xr.local_ordinal()",
}


class XlaOrdinals(Rule):
    """Ranks and world sizes are read from ``torch_xla.runtime``.

    The guide's multi-process example reads ``xr.global_ordinal()`` and
    ``xr.world_size()``. ``int(os.environ["RANK"])`` / ``LOCAL_RANK`` / ``WORLD_SIZE``
    become ``xr.global_ordinal()`` / ``xr.local_ordinal()`` / ``xr.world_size()``: under
    ``torch_xla.launch`` torchrun's variables are not set, while the runtime always
    knows. A variable compared with a default (``int(os.environ.get("RANK", -1)) != -1``)
    asks whether torchrun started the script, and stays. ``dist.get_rank()`` and
    ``dist.get_world_size()`` of the default group become the same calls (they agree
    under the xla group and also work before it exists). ``torch.cuda.device_count()``
    stored as the world size becomes ``xr.world_size()``: ``torch_xla.device_count()``
    (XLA105) counts the devices this process addresses, one under ``torch_xla.launch``.
    Rank-0 checks keep their meaning: the global ordinal 0 is the master.

    PyTorch/XLA only: under TorchTPU the script keeps its launcher (torchrun sets ``RANK`` and
    the rest, ``mp.spawn`` passes the index) and its ``tpu`` process group answers
    ``dist.get_rank()`` as NCCL's did.
    """

    CODE = "XLA604"
    NAME = "xla-ordinals"
    SUMMARY = "RANK / LOCAL_RANK / WORLD_SIZE, dist.get_rank() and world-size counts become xr calls"
    FIX = SAFE
    TRIGGERS = (r"RANK|WORLD_SIZE", r"get_rank|get_world_size|get_node_local_rank", r"device_count")
    # a CPU-only script's gloo ranks stay its own; FSDP and DTensor code is a GPU program's, where its
    # modules name no device (PyTorch's FSDP2 example's checkpoint.py: `map_location="cpu"`)
    REQUIRES = (ON_ACCELERATOR + r"|distributed\.(?:fsdp|_composable|tensor|_tensor)\b",)
    RUNTIMES = ("torch-xla",)
    CONTEXT = MpSpawnToLaunch.TRIGGERS  # the launch plan's spawn calls
    BEFORE = (
        "import os\n\nimport torch.distributed as dist\n\n"
        'local_rank = int(os.environ["LOCAL_RANK"])\nworld_size = dist.get_world_size()\n'
    )
    AFTER = "import os\n\nlocal_rank = xr.local_ordinal()\nworld_size = xr.world_size()\n"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.compared: set[int] = set()  # operands of comparisons: torchrun-or-not switches
        self.plan = LaunchPlan()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.compared |= {id(node.left), *(id(c.comparator) for c in node.comparisons)}

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in DIST_ORDINALS and not original.args:
            return self._ordinal(original, updated, DIST_ORDINALS[name], f"`{code_of(original)}`")
        if (
            isinstance(original.func, cst.Name)
            and original.func.value == "int"
            and name is None
            and len(original.args) == 1
            and id(original) not in self.compared
        ):
            variable = environment_variable(self.qualname, original.args[0].value)
            if variable in ENV_ORDINALS:
                return self._ordinal(original, updated, ENV_ORDINALS[variable], f"torchrun's `{variable}`")
        return updated

    def _ordinal(self, original, updated, call: str, what: str):
        return self.replace(
            original,
            updated,
            parse_expr(call),
            f"{what} -> `{call}`: the XLA runtime knows it in every launch",
            imports=[XR],
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = launch_plan(self.ctx, node)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not (
            is_device_count(self.ctx, original.value)
            and all(WORLD_NAME.search(last_name(t.target)) for t in original.targets)
        ):
            return updated
        if id(original.value) in self.plan.kept_counts or id(original.value) in self.plan.counts:
            return updated  # counted before a launch: XLA601's
        self.ctx.forget_fixes_inside(original.value)
        return self.replace(
            original,
            updated,
            updated.with_changes(value=parse_expr("xr.world_size()")),
            f"`{code_of(original.value)}` as the world size -> `xr.world_size()` (all processes' devices, not this one's)",
            imports=[XR],
        )


RANK_NAME = re.compile(r"(^|_)rank$|^(gpu|gpu_id|device_id)$", re.IGNORECASE)


def _is_rank(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and bool(RANK_NAME.search(last_name(node)))


class RankAsDevice(Rule):
    """A rank used as a CUDA device index (``model.to(rank)``) becomes the XLA device.

    DDP tutorials move the model and batches to ``rank`` / ``local_rank`` / ``args.gpu``,
    an integer that means ``cuda:<rank>``. On XLA each process owns one device, which
    ``torch_xla.device()`` returns. Matched by shape: a ``.to(...)`` whose only
    positional argument, or a ``device=`` argument, is a name ending in ``rank`` (or
    ``gpu``, ``device_id``); the diagnostic says it guessed.

    Both runtimes: a TorchTPU process is bound to one device too (``torch.tpu.set_device``
    refuses another index), which ``torch.device("tpu")`` names.
    """

    CODE = "XLA605"
    NAME = "rank-as-device"
    SUMMARY = ".to(rank) and device=local_rank become the XLA device (TorchTPU's under torch-tpu)"
    FIX = SAFE
    # A RANK_NAME (any case) as an argument, so followed by , or ); of .to( or device=
    TRIGGERS = (rf"(?:[rR][aA][nN][kK]|[gG][pP][uU](?:_[iI][dD])?|[dD][eE][vV][iI][cC][eE]_[iI][dD]){GAP}[,)]",)
    REQUIRES = (rf"\.{GAP}to{GAP}\(|device{GAP}=",)
    BEFORE = "model = Net().to(rank)\nbuffer = torch.zeros(2, device=local_rank)\n"
    AFTER = "model = Net().to(torch_xla.device())\nbuffer = torch.zeros(2, device=torch_xla.device())\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        method = original.func.attr.value if isinstance(original.func, cst.Attribute) else ""
        positional = [a for a in original.args if a.keyword is None]
        moved = [
            i
            for i, a in enumerate(original.args)
            if _is_rank(a.value)
            and (
                (a.keyword is not None and a.keyword.value == "device")
                or (method == "to" and a.keyword is None and a is positional[0])
            )
        ]
        if not moved:
            return updated
        api = self.ctx.api
        args = list(updated.args)
        for i in moved:
            args[i] = args[i].with_changes(value=parse_expr(api.device))
        names = ", ".join(f"`{code_of(original.args[i].value)}`" for i in moved)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            f"{names} as a CUDA device index -> `{api.device}` (matched by name: taken for a rank)",
            imports=api.imports,
        )

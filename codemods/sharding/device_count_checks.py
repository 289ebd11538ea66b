"""XLA629: a sharded script's check of its world size counts the devices, in the one SPMD program."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import SPMD_GUIDE, TRIGGER, ShardingRule
from codemods.shared.statements import environment_variable
from migrate_xla.rule.api import XR, code_nodes, code_of, snippet, words

WORLD_SIZE_CALLS = ("torch.distributed.get_world_size", "torch_xla.runtime.world_size")
DEVICE_COUNT = "xr.global_runtime_device_count()"
# what XLA604 makes of a world size read, which this rule may see in the statement it converts
CONVERTED = "xr.world_size()"


class DeviceCountChecks(ShardingRule):
    """``assert world_size % tp_size == 0`` (and an ``if`` that refuses to run: its block a
    ``raise`` or an exit) reads the number of devices the mesh spans: in the one SPMD program,
    ``xr.global_runtime_device_count()``.

    A script that shards its model over a mesh of its processes checks their number before it
    builds the mesh (PyTorch's tensor-parallel examples: ``assert _world_size % 2 == 0, "TP
    examples require even number of GPUs"``; its 2-D one: the world size divisible by the
    tensor-parallel size). SPMD user guide: one process drives every device, so the world size
    XLA604 reads for the script (``xr.world_size()``, what slices its data) is 1 there and the
    check would refuse every TPU; the devices it meant are the runtime's
    (``xr.global_runtime_device_count()``), over which XLA623 builds the mesh. So in such a check,
    and only there, a world size read (``dist.get_world_size()``, torchrun's ``WORLD_SIZE``, or a
    name the file binds to one once) becomes the device count. A world size the script uses
    elsewhere keeps XLA604's form.
    """

    CODE = "XLA629"
    NAME = "device-count-checks"
    SUMMARY = "in a script that shards its model, a check of the world size counts the devices the mesh spans"
    FIX = "safe"
    TRIGGERS = (r"WORLD_SIZE|world_size",)
    # where the family converts (a file that imports FSDP or a device mesh), a check to convert
    REQUIRES = (*ShardingRule.REQUIRES, TRIGGER, words("assert", "raise", "exit"))
    BEFORE = (
        "import os\nimport torch.distributed as dist\nfrom torch.distributed.device_mesh import init_device_mesh\n\n"
        'world_size = int(os.environ["WORLD_SIZE"])\nassert world_size % 2 == 0, "an even number of GPUs"\n'
        'mesh = init_device_mesh("cuda", (world_size,))\n'
    )
    AFTER = (
        "import os\nimport torch.distributed as dist\nfrom torch.distributed.device_mesh import init_device_mesh\n\n"
        'world_size = int(os.environ["WORLD_SIZE"])\n'
        'assert xr.global_runtime_device_count() % 2 == 0, "an even number of GPUs"\n'
        'mesh = init_device_mesh("cuda", (world_size,))\n'
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.names = self._world_size_names(node) if self.shards else frozenset()

    def _world_size_names(self, module: cst.Module) -> frozenset[str]:
        """The names the file binds once, to a world size read."""
        bound: dict[str, bool] = {}
        for node in code_nodes(module):
            targets = (
                [t.target for t in node.targets]
                if isinstance(node, cst.Assign)
                else [node.target]
                if isinstance(node, (cst.AnnAssign, cst.AugAssign))
                else []
            )
            for target in targets:
                if isinstance(target, cst.Name):
                    once = target.value not in bound and isinstance(node, cst.Assign) and len(node.targets) == 1
                    bound[target.value] = once and self._reads_world_size(node.value)
        return frozenset(name for name, world_size in bound.items() if world_size)

    def _reads_world_size(self, value: cst.BaseExpression) -> bool:
        """``dist.get_world_size()``, ``xr.world_size()``, torchrun's ``WORLD_SIZE`` (in ``int()``)."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "int":
            value = value.args[0].value if len(value.args) == 1 else value
        if isinstance(value, cst.Call) and self.qualname(value.func) in WORLD_SIZE_CALLS and not value.args:
            return True
        return environment_variable(self.qualname, value) == "WORLD_SIZE"

    def _counted(self, updated: cst.CSTNode):
        """``updated`` with its world size reads made the device count, or None where it has none."""
        counter = _ToDeviceCount(self.names, self._reads_world_size)
        counted = updated.visit(counter)
        return counted if counter.found else None

    def leave_Assert(self, original: cst.Assert, updated: cst.Assert):
        return self._check(original, updated)

    def leave_If(self, original: cst.If, updated: cst.If):
        return self._check(original, updated) if _refuses(original) else updated

    def _check(self, original, updated):
        counted = self._counted(updated) if self.shards else None
        if counted is None:
            return updated
        self.ctx.forget_fixes_inside(original)  # XLA604's world size reads there: the device count instead
        return self.replace(
            original,
            updated,
            counted,
            f"`{snippet(original.test)}`: a check of the devices the mesh spans; in the one SPMD program the "
            f"world size is 1 and the devices are the runtime's: `{DEVICE_COUNT}` ({SPMD_GUIDE})",
            imports=[XR],
        )


class _ToDeviceCount(cst.CSTTransformer):
    """A check with each world size read in it (a bound name, a call, XLA604's form) made the device count."""

    def __init__(self, names: frozenset[str], reads_world_size) -> None:
        super().__init__()
        self.names, self.reads_world_size = names, reads_world_size
        self.found = False
        self.not_reads: set[int] = set()  # an attribute's member, a keyword's name: names, not reads

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_reads.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_reads.add(id(node.keyword))

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if original.value in self.names and id(original) not in self.not_reads:
            return self._device_count()
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if code_of(original) == CONVERTED or self.reads_world_size(original):
            return self._device_count()
        return updated

    def _device_count(self) -> cst.BaseExpression:
        self.found = True
        return cst.parse_expression(DEVICE_COUNT)


def _refuses(node: cst.If) -> bool:
    """Whether an ``if`` without ``else`` refuses to go on: its block raises or exits."""
    if node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
        return False
    last = node.body.body[-1]
    if not isinstance(last, cst.SimpleStatementLine):
        return False
    statement = last.body[-1]
    if isinstance(statement, cst.Raise):
        return True
    call = statement.value if isinstance(statement, cst.Expr) else None
    return isinstance(call, cst.Call) and code_of(call.func) in ("exit", "sys.exit", "quit", "os._exit")

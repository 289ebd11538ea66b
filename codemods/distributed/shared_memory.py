"""XLA611: a model in shared memory (``model.share_memory()``, Hogwild training by
``torch.multiprocessing`` workers) cannot run on XLA: flagged, with the data-parallel form."""

from __future__ import annotations

import libcst as cst

from codemods.distributed.common import DDP_GUIDE
from migrate_xla.rule import ON_ACCELERATOR, Rule, code_of, snippet, subtree, words

# What starts worker processes that may share the model: qualified names, and the attribute
# that a multiprocessing context spells (``mp.get_context("spawn").Process``, ``ctx.Process``)
STARTERS = frozenset(
    {
        "torch.multiprocessing.Process",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.Pool",
        "multiprocessing.Process",
        "multiprocessing.Pool",
    }
)
DATA_PARALLEL = (
    "train data parallel instead: one process per XLA device started by `torch_xla.launch(fn)` (what "
    "`mp.spawn` becomes, XLA601; `--target multiprocess` writes that form for a one-process script), each "
    "with its own replica of the model, the gradients averaged by `xm.optimizer_step(optimizer)` or by DDP "
    f"over the `xla` process group, see {DDP_GUIDE}"
)
STAYS = (
    "the call is left as it is, and raises on the XLA device: a person decides what replaces it "
    "(removed alone, each worker would train its own copy of the model)"
)


# TorchTPU's words: the same training, one process per chip over its "tpu" process group
TPU_DATA_PARALLEL = (
    "train data parallel instead: one process per TPU chip (`mp.spawn` or torchrun), each with its own "
    'replica of the model, the gradients averaged by DDP over the `"tpu"` process group'
)

TPU_STAYS = (
    "the call is left as it is: a person decides what replaces it "
    "(removed alone, each worker would train its own copy of the model)"
)


def _why_tpu(call: str, workers: str | None) -> str:
    if workers is None:
        return (
            f"`{call}` is meant to put the module's tensors in shared memory for other processes: on TorchTPU's "
            "device it does nothing (torch shares only CPU storages), and processes cannot share "
            f"them, each being bound to its own chip; remove it (to train on several chips, {TPU_DATA_PARALLEL}; "
            f"{TPU_STAYS})"
        )
    return (
        f"`{call}` shares the model with the workers `{workers}` starts, which all update it (Hogwild): "
        "TorchTPU's tensors live in device memory, which processes cannot share (each is bound to its own chip), "
        f"so this training cannot run on TorchTPU; {TPU_DATA_PARALLEL}; {TPU_STAYS}"
    )


def _why(call: str, workers: str | None) -> str:
    if workers is None:
        return (
            f"`{call}` moves the module's tensors to shared memory for other processes: on the XLA device it "
            "raises (`_share_fd_: only available on CPU`), since processes cannot share XLA tensors; remove it "
            f"(to train on several devices, {DATA_PARALLEL}; {STAYS})"
        )
    return (
        f"`{call}` shares the model with the workers `{workers}` starts, which all update it (Hogwild): XLA "
        "tensors live on the device and processes cannot share them (`share_memory_()` raises "
        f"`_share_fd_: only available on CPU`), so this training cannot run on XLA; {DATA_PARALLEL}; {STAYS}"
    )


class SharedMemoryTraining(Rule):
    """A module put in shared memory (``model.share_memory()``) is flagged: it cannot be on XLA.

    Hogwild training (PyTorch's "Multiprocessing best practices") moves a model's tensors
    to shared memory and starts ``torch.multiprocessing.Process`` workers (or ``mp.spawn``,
    a ``Pool``) that each run an optimizer on the one model, without locks. Shared memory
    is host memory: ``share_memory_()`` of an XLA tensor raises ``_share_fd_: only
    available on CPU`` (measured on torch_xla 2.9, CPU PJRT: the migrated run dies there),
    and XLA devices are not shared between processes at all. PyTorch/XLA's form of
    training with several processes is data parallelism: one process per device, started
    by ``torch_xla.launch``, each with its own replica, gradients all-reduced
    (``xm.optimizer_step``, or DDP over the ``xla`` process group; the DDP guide). That is
    a different training algorithm (synchronous, averaged gradients; a batch split over
    the replicas), so nothing is rewritten: the call is flagged as an error, with what to
    write instead, and left as it is, since removing it alone would make each worker train
    its own copy. ``Module.share_memory()`` is matched by shape (a call of
    ``.share_memory()`` without arguments); a tensor's ``share_memory_()`` is not flagged,
    since a host buffer the workers fill (a replay buffer, a counter) stays on the CPU and
    works.

    Both runtimes: under TorchTPU the model is in device memory too, which ``share_memory()``
    leaves where it is (torch shares only CPU storages) and no other process can reach (each is
    bound to its own chip); the finding says so, with one process per chip and DDP over the
    ``tpu`` process group.
    """

    CODE = "XLA611"
    NAME = "shared-memory-training"
    SUMMARY = "model.share_memory() (Hogwild training by multiprocessing workers) cannot run on XLA: flagged"
    FIX = None
    SEVERITY = "error"
    TRIGGERS = (words("share_memory"),)
    REQUIRES = (ON_ACCELERATOR,)
    CONTEXT = (words("Process", "spawn", "start_processes", "Pool"),)  # the workers the message names
    BEFORE = (
        "import torch.multiprocessing as mp\n\nmodel.share_memory()\n"
        "workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]\n"
    )
    AFTER = (
        "import torch.multiprocessing as mp\n\n"
        f"# TODO(xla-migrate): XLA611 {_why('model.share_memory()', 'mp.Process')}\n"
        "model.share_memory()\nworkers = [mp.Process(target=train, args=(model,)) for _ in range(4)]\n"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.module: cst.Module | None = None
        self.workers: str | None = None  # how the file starts its worker processes, if it does
        self.looked = False

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def _find_workers(self) -> None:
        """At the first ``share_memory()``, when the imports above it are known."""
        self.looked = True
        for found in subtree(self.module) if self.module is not None else ():
            if isinstance(found, cst.Call) and self._starts_workers(found.func):
                self.workers = code_of(found.func)
                return

    def _starts_workers(self, func: cst.BaseExpression) -> bool:
        name = self.qualname(func)
        if name is not None:
            return name in STARTERS
        return isinstance(func, cst.Attribute) and func.attr.value == "Process"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "share_memory" and not node.args:
            if not self.looked:
                self._find_workers()
            why = _why if self.ctx.runtime == "torch-xla" else _why_tpu
            self.flag(node, why(snippet(node), self.workers))

"""XLA105-XLA107: the ``torch.cuda`` runtime: bookkeeping calls become their XLA meaning
(their ``torch.tpu`` twin under ``--runtime torch-tpu``) or go (XLA105), memory and
device-property queries are flagged (XLA106), cuDNN and CUDA matmul switches go (XLA107)."""

from __future__ import annotations

import libcst as cst

from codemods.devices.cuda_guards import CudaGuards, cuda_guards
from codemods.shared.device_values import KEPT_CUDA_CHECKS, ON_RUNTIME, XLA_DEVICE
from migrate_xla.rule.api import (
    CUDA_WORD,
    SAFE,
    TORCH,
    TORCH_XLA,
    XM,
    XR,
    FileContext,
    Import,
    Rule,
    code_of,
    names_trigger,
    parse_expr,
    words,
)

# qualified name -> (replacement template or None to remove the statement, imports).
# In a template, {0} is the call's first argument.
RUNTIME_CALLS: dict[str, tuple[str | None, tuple[Import, ...]]] = {
    "torch.cuda.is_available": ("bool(torch_xla.device_count())", (TORCH_XLA,)),
    "torch.accelerator.is_available": ("bool(torch_xla.device_count())", (TORCH_XLA,)),
    "torch.cuda.device_count": ("torch_xla.device_count()", (TORCH_XLA,)),
    "torch.accelerator.device_count": ("torch_xla.device_count()", (TORCH_XLA,)),
    "torch.cuda.current_device": ("xr.local_ordinal()", (XR,)),
    "torch.accelerator.current_device_index": ("xr.local_ordinal()", (XR,)),
    # the accelerator's type, without an index (``f"{accelerator}:{rank}"`` names a device)
    "torch.accelerator.current_accelerator": ('torch.device("xla")', (TORCH, TORCH_XLA)),
    "torch.cuda.synchronize": ("torch_xla.sync(wait=True)", (TORCH_XLA,)),
    "torch.accelerator.synchronize": ("torch_xla.sync(wait=True)", (TORCH_XLA,)),
    "torch.cuda.get_device_name": (f"xm.xla_device_hw({XLA_DEVICE})", (TORCH_XLA, XM)),
    "torch.cuda.is_bf16_supported": ("True", ()),
    "torch.cuda.manual_seed": ("torch_xla.manual_seed({0})", (TORCH_XLA,)),
    "torch.cuda.manual_seed_all": ("torch_xla.manual_seed({0})", (TORCH_XLA,)),
    "torch.cuda.set_device": (None, ()),
    "torch.accelerator.set_device_index": (None, ()),
    "torch.cuda.empty_cache": (None, ()),
    "torch.cuda.ipc_collect": (None, ()),
    "torch.cuda.init": (None, ()),
    "torch.cuda.reset_peak_memory_stats": (None, ()),
    "torch.cuda.reset_max_memory_allocated": (None, ()),
    "torch.cuda.reset_accumulated_memory_stats": (None, ()),
}
# torch.cuda calls only TorchTPU has a twin of (torch.tpu.X, Runtime.mirror): converted under
# torch-tpu; under torch-xla XLA899 flags them
TPU_ONLY_CALLS = (
    "torch.cuda.initial_seed",
    "torch.cuda.get_rng_state",
    "torch.cuda.set_rng_state",
    "torch.cuda.is_initialized",
)
# What the calls XLA105 acts on give under torch-tpu that is a bool (``X and is_bf16_supported()``)
TPU_BOOLEANS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.accelerator.is_available",
        "torch.cuda.is_initialized",
        "torch.cuda.is_bf16_supported",
    }
)


class CudaRuntimeCall(Rule):
    """``torch.cuda`` / ``torch.accelerator`` bookkeeping becomes its XLA meaning.

    Left alone, these crash on a TPU VM ("Found no NVIDIA driver") or silently report
    no device, so the script falls back to the CPU. ``synchronize()`` becomes
    ``torch_xla.sync(wait=True)`` (run the pending graph and wait for it);
    ``manual_seed(_all)`` becomes ``torch_xla.manual_seed`` (``torch.manual_seed`` does
    not seed the XLA generator); ``is_available()`` asks whether an XLA device is
    there; ``set_device``, ``empty_cache`` and resetting peak-memory statistics mean
    nothing on XLA and are removed. ``is_bf16_supported()`` is true on XLA devices, so
    ``X and is_bf16_supported()`` becomes ``X`` and ``A if is_bf16_supported() else B``
    becomes ``A`` rather than leaving ``and True``/``if True`` behind. Two seeding calls
    in a row (``manual_seed`` then ``manual_seed_all``) become one. See PyTorch/XLA's
    ``torch_xla`` and ``torch_xla.runtime`` API reference.

    An ``is_available()`` that guards code only a GPU runs stays a CUDA check, so that it is
    False on XLA, as XLA104 leaves an ``is_cuda`` check that guards a CUDA-only feature:
    code that reads ``torch.cuda.get_device_properties`` / ``get_device_capability`` /
    ``mem_get_info`` or builds a CUDA extension or Triton kernel, and does nothing else a
    training script does on its device (no loop, move, ``backward()`` or ``step()``), in the
    branch the check opens, or after an early ``return`` when it fails
    (denoising-diffusion-pytorch's attention: ``if not torch.cuda.is_available() or not
    flash: return``, then the device's properties pick flash attention; asked for the XLA
    device, the check opened that code on XLA, and the migrated run died "Found no NVIDIA
    driver"). Not a check that raises or exits when it fails: that says the script needs an
    accelerator, which XLA is (``codemods/devices/cuda_guards.py``).

    Under ``--runtime torch-tpu``, ``torch.tpu`` mirrors ``torch.cuda``: a call whose name
    torch_tpu exports (``synchronize``, ``manual_seed(_all)``, ``device_count``,
    ``is_available``, ``current_device``, ``set_device``, ``get_device_name``,
    ``initial_seed``, ``get_rng_state``, ``set_rng_state``, ``is_initialized``) becomes
    ``torch.tpu.X`` with its arguments; the others mean nothing there and are removed as on
    XLA (``empty_cache``, ``ipc_collect``, the peak-memory resets), and
    ``is_bf16_supported()`` is true (TPUs compute in bfloat16). ``torch.accelerator``
    is device-agnostic: TorchTPU is its accelerator, so its calls stay as they are.
    """

    CODE = "XLA105"
    NAME = "cuda-runtime-call"
    SUMMARY = "torch.cuda / torch.accelerator runtime calls become torch_xla calls, or go"
    FIX = SAFE
    # It acts only on the RUNTIME_CALLS (after calls it rewrote)
    TRIGGERS = (names_trigger(*RUNTIME_CALLS, *TPU_ONLY_CALLS),)
    REQUIRES = (words("cuda", "accelerator"),)
    BEFORE = "torch.cuda.manual_seed_all(0)\ntorch.cuda.set_device(rank)\ntorch.cuda.synchronize()\n"
    AFTER = "torch_xla.manual_seed(0)\ntorch_xla.sync(wait=True)\n"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # the torch_xla.manual_seed(...) calls this rule wrote, by id; held so no id is reused
        self.seeds: dict[int, cst.BaseExpression] = {}
        self.guards = CudaGuards()

    def visit_Module(self, node: cst.Module) -> None:
        self.guards = cuda_guards(self.ctx, node)

    def _call(self, name: str | None) -> tuple[str | None, tuple[Import, ...]] | None:
        """What the call ``name`` becomes on the run's runtime: (template, imports), a None
        template to remove it; None when this rule leaves it."""
        if self.ctx.runtime == "torch-xla":
            return RUNTIME_CALLS.get(name or "")
        if name is None or name.startswith("torch.accelerator."):
            return None  # device-agnostic: TorchTPU is the accelerator
        if name not in RUNTIME_CALLS and name not in TPU_ONLY_CALLS:
            return None
        mirror = self.ctx.api.mirror(name)
        if mirror is not None:
            return mirror, (TORCH,)  # torch.tpu.X, with the call's own arguments
        return RUNTIME_CALLS.get(name)  # is_bf16_supported: True; the rest means nothing there

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        if not isinstance(call, cst.Call):
            return updated
        name = self.qualname(call.func)
        found = self._call(name)
        if found is not None and found[0] is None:
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                f"`{name}()` means nothing on {ON_RUNTIME[self.ctx.runtime]}: removed",
                drop_if_unused=self.ctx.import_behind(call.func),
            )
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        found = self._call(name)
        if found is None:
            return updated
        guarded = self.guards.checks.get(id(original))
        if guarded is not None:
            kept = self.ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})  # XLA899 leaves it
            kept[id(original)] = kept[id(updated)] = f"`{guarded}`"
            self.note(
                original,
                f"`{code_of(original)}` guards `{guarded}()`, which only CUDA has: left as a CUDA check, so it stays "
                f"False on {ON_RUNTIME[self.ctx.runtime]}",
            )
            return updated
        template, imports = found
        if template is None:
            return updated  # a statement of its own is removed by leave_Expr; elsewhere XLA899 flags it
        if template == self.ctx.api.mirror(name):  # torch.tpu.X(...): the same arguments
            replacement = updated.with_changes(func=parse_expr(template))
            shown = f"{template}()"
        else:
            if "{0}" in template:
                if not original.args:
                    return updated
                template = template.format(code_of(updated.args[0].value))
            replacement, shown = parse_expr(template), template
            if name.endswith("manual_seed") or name.endswith("manual_seed_all"):
                self.seeds[id(replacement)] = replacement
        return self.replace(
            original,
            updated,
            replacement,
            f"`{name}()` -> `{shown}`",
            imports=imports,
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def _is_bf16_check(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.qualname(node.func) == "torch.cuda.is_bf16_supported"

    def _is_boolean(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` (original code) is a bool, so ``node and True`` is ``node``."""
        return (
            isinstance(node, (cst.Comparison, cst.BooleanOperation))
            or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not))
            or (isinstance(node, cst.Call) and self._gives_bool(self.qualname(node.func)))
        )

    def _gives_bool(self, name: str | None) -> bool:
        if self.ctx.runtime != "torch-xla":
            return name in TPU_BOOLEANS
        return name in RUNTIME_CALLS and (RUNTIME_CALLS[name][0] or "").startswith(("bool(", "True"))

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        if not isinstance(original.operator, cst.And):
            return updated
        if self._is_bf16_check(original.left):
            kept = updated.right  # True and X is X
        elif self._is_bf16_check(original.right) and self._is_boolean(original.left):
            kept = updated.left
        else:
            return updated
        self.ctx.forget_fixes_inside(original.right if kept is updated.left else original.left)
        return kept.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else kept

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        if not self._is_bf16_check(original.test):
            return updated
        self.ctx.forget_fixes_inside(original.orelse)  # the branch that goes: no fix made in it stays reported
        return updated.body.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else updated.body

    def _seed_line(self, statement: cst.BaseStatement) -> str | None:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            expr = statement.body[0]
            if isinstance(expr, cst.Expr) and id(expr.value) in self.seeds:
                return code_of(expr.value)
        return None

    def leave_IndentedBlock(self, original, updated):
        """``torch.cuda.manual_seed(s)`` then ``manual_seed_all(s)``: one ``torch_xla.manual_seed(s)``."""
        if not self.seeds:
            return updated
        body, previous = [], None
        for statement in updated.body:
            seed = self._seed_line(statement)
            if seed is not None and seed == previous and all(line.comment is None for line in statement.leading_lines):
                continue
            previous = seed
            body.append(statement)
        return updated.with_changes(body=body) if len(body) != len(updated.body) else updated

    leave_Module = leave_IndentedBlock


# qualified name -> (severity, what to do instead)
MEMORY_CALLS = {
    "torch.cuda.memory_allocated": "warning",
    "torch.cuda.max_memory_allocated": "warning",
    "torch.cuda.memory_reserved": "warning",
    "torch.cuda.max_memory_reserved": "warning",
    "torch.cuda.memory_stats": "warning",
    "torch.cuda.memory_summary": "error",
    "torch.cuda.mem_get_info": "error",
    "torch.cuda.get_device_properties": "error",
    "torch.cuda.get_device_capability": "error",
}
MEMORY_HINT = (
    "on TPU read `xm.get_memory_info(device)` (bytes_used, bytes_limit, peak_bytes_used; "
    "not available on CPU PJRT), see https://docs.pytorch.org/xla/master/learn/troubleshoot.html"
)


# Under torch-tpu: what to do instead, by the kind of query
TPU_MEMORY_HINT = "TorchTPU's `torch.tpu` has no memory statistics: remove the query, or report something else"
TPU_PROPERTY_HINTS = {
    "torch.cuda.get_device_properties": (
        "on TorchTPU `torch.tpu.get_device_properties(device)` describes the TPU, with fields of its own: "
        "port what the code reads of it by hand"
    ),
    "torch.cuda.get_device_capability": (
        "a TPU has no CUDA compute capability: remove the check (`torch.tpu.get_device_name()` names the chip)"
    ),
}


class CudaMemoryQuery(Rule):
    """CUDA memory and device-property queries have no XLA counterpart on every device.

    Without a GPU, ``memory_allocated()`` and its kind quietly return 0, and
    ``memory_summary()``, ``mem_get_info()``, ``get_device_properties()`` crash. On a TPU
    the nearest meaning is ``xm.get_memory_info(device)``, which CPU PJRT does not
    implement, so the rule flags these for a person to decide.

    Under ``--runtime torch-tpu`` they are flagged too: ``torch.tpu`` (torch_tpu's public
    API) has no memory statistics, and its ``get_device_properties`` describes a TPU with
    fields that are not CUDA's.

    A query behind a CUDA availability check that XLA105 leaves for CUDA (it guards code only
    a GPU runs) does not run on XLA: it is noted, not flagged, and stays as written, its
    arguments included (``get_device_properties(torch.device("cuda"))``).
    """

    CODE = "XLA106"
    NAME = "cuda-memory-query"
    SUMMARY = "CUDA memory statistics and device properties are flagged"
    FIX = None
    SEVERITY = "warning"
    TRIGGERS = (names_trigger(*MEMORY_CALLS),)
    REQUIRES = (CUDA_WORD,)
    BEFORE = 'print(torch.cuda.max_memory_allocated() / 2**20, "MiB")\n'
    AFTER = (
        "# TODO(xla-migrate): XLA106 `torch.cuda.max_memory_allocated()` reads CUDA memory; "
        f"{MEMORY_HINT}\n"
        'print(torch.cuda.max_memory_allocated() / 2**20, "MiB")\n'
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.guards = CudaGuards()

    def visit_Module(self, node: cst.Module) -> None:
        self.guards = cuda_guards(self.ctx, node)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) not in self.guards.guarded:
            return updated
        self.ctx.forget_fixes_inside(original)  # CUDA code: its device stays CUDA's
        kept = self.ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})  # XLA899 leaves it
        kept[id(original)] = "a CUDA-only query"
        return original

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func)
        if id(node) in self.guards.guarded:
            self.note(
                node,
                f"`{name}()` runs only where a CUDA availability check holds, left for CUDA (XLA105): "
                f"it does not run on {ON_RUNTIME[self.ctx.runtime]}",
            )
            return
        if name in MEMORY_CALLS:
            crash = " and crashes without a GPU" if MEMORY_CALLS[name] == "error" else ""
            if self.ctx.runtime == "torch-tpu":
                what = "describes the CUDA device" if name in TPU_PROPERTY_HINTS else "reads CUDA memory"
                hint = TPU_PROPERTY_HINTS.get(name, TPU_MEMORY_HINT)
                self.flag(node, f"`{name}()` {what}{crash}; {hint}")
            else:
                self.flag(node, f"`{name}()` reads CUDA memory{crash}; {MEMORY_HINT}")


CUDA_FLAG_PREFIXES = ("torch.backends.cudnn.", "torch.backends.cuda.matmul.")


class CudaBackendFlag(Rule):
    """``torch.backends.cudnn.*`` and CUDA matmul precision switches mean nothing on XLA.

    cuDNN autotuning (``benchmark``), determinism and TF32 switches configure NVIDIA
    libraries that XLA does not use; assignments to them are removed. XLA picks its own
    matmul precision (``torch_xla.backends.set_mat_mul_precision`` changes it). So does
    TorchTPU (``--runtime torch-tpu``), which uses neither library: they are removed there too.
    """

    CODE = "XLA107"
    NAME = "cuda-backend-flag"
    SUMMARY = "torch.backends.cudnn / cuda.matmul switches are removed"
    FIX = SAFE
    # names under torch.backends.cudnn. / torch.backends.cuda.matmul., however imported
    TRIGGERS = (words("cudnn", "matmul"),)
    REQUIRES = (words("backends"),)
    BEFORE = "torch.backends.cudnn.benchmark = True\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    AFTER = ""

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        names = [self.qualname(t.target) or "" for t in original.targets]
        if names and all(n.startswith(CUDA_FLAG_PREFIXES) for n in names):
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                f"`{' = '.join(names)} = ...` configures an NVIDIA library {ON_RUNTIME[self.ctx.runtime]} does not use: "
                "removed",
                drop_if_unused=[spec for t in original.targets for spec in self.ctx.import_behind(t.target)],
            )
        return updated

"""XLA621: FSDP v1 (``FullyShardedDataParallel``) becomes torch_xla's FSDPv2 wrapper."""

from __future__ import annotations

import libcst as cst

from codemods.sharding.common import FSDPV2, FSDPV2_GUIDE, FUNCTOOLS, XLA_WRAP, StatementRule, imports_behind
from migrate_xla.rule.api import TORCH, call_arg, code_of, drop_items, parse_expr

FSDP_CLASSES = (
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
)
# torch's wrap policies -> torch_xla's of the same name and keywords (FSDPv2 calls a policy with
# ``unwrapped_params=``, torch's take ``nonwrapped_numel``: measured, a TypeError)
POLICIES = {
    f"torch.distributed.fsdp.wrap.{name}": name
    for name in ("transformer_auto_wrap_policy", "size_based_auto_wrap_policy", "lambda_auto_wrap_policy")
}
MODULE_WRAP_POLICY = "torch.distributed.fsdp.wrap.ModuleWrapPolicy"
# FSDP's keywords that mean nothing to one SPMD program, and why
DROPPED = {
    "sharding_strategy": "XLA's partitioner places the gathers and reduce-scatters of the sharded parameters",
    "device_id": "one process drives every device",
    "sync_module_states": "one SPMD process holds one copy of each parameter: there is nothing to broadcast",
    "use_orig_params": "FSDPv2 keeps the module's own parameters",
    "limit_all_gathers": "XLA schedules the collectives",
    "forward_prefetch": "XLA schedules the collectives",
    "backward_prefetch": "XLA schedules the collectives",
    "cpu_offload": "FSDPv2 keeps parameters in device memory (no host offload): check that the model fits",
    "mixed_precision": "bfloat16 compute is `torch.autocast('xla', dtype=torch.bfloat16)` around the forward",
}
KEPT = {"auto_wrap_policy"}
NOT_SPMD_STRATEGIES = ("HYBRID_SHARD", "_HYBRID_SHARD_ZERO2")


class FsdpToFsdpV2(StatementRule):
    """``FullyShardedDataParallel(model, auto_wrap_policy=..., mixed_precision=..., ...)`` becomes
    ``FSDPv2(model, auto_wrap_policy=...)``, torch_xla's ``SpmdFullyShardedDataParallel``.

    FSDP via SPMD (FSDPV2_GUIDE): the wrapper shards each parameter over the mesh's ``fsdp``
    axis and leaves the gathers and reduce-scatters to XLA's partitioner; an
    ``auto_wrap_policy`` makes each matching submodule its own unit, as FSDP's does (torch's
    ``transformer_auto_wrap_policy``, ``size_based_auto_wrap_policy`` and
    ``lambda_auto_wrap_policy`` become torch_xla's, which take the same keywords;
    ``ModuleWrapPolicy({Block})`` becomes ``functools.partial(transformer_auto_wrap_policy,
    transformer_layer_cls={Block})``). Measured on a small GPT over four CPU devices
    (docs/decisions.md): the losses of six AdamW steps equal the unsharded model's to float32
    and float64 rounding, with and without a policy. ``MixedPrecision(param_dtype=torch.bfloat16)``
    becomes ``model.forward = torch.autocast("xla", dtype=torch.bfloat16)(model.forward)``: the
    forward in bfloat16 with the parameters and the optimizer in float32 (autocast keeps
    reductions in float32 where FSDP casts every parameter). The strategy, ``device_id``,
    ``sync_module_states``, ``use_orig_params``, the prefetch settings and ``cpu_offload`` go,
    each with the reason in the finding. A hybrid strategy, a ``device_mesh``, a process group,
    ignored modules, a mixed precision that is not a ``MixedPrecision(...)`` written in the call
    or whose ``param_dtype`` is not bfloat16 / float16, or a call that is not ``name = FSDP(...)``
    are flagged (XLA608 stays), not half-converted. FSDPv2 shards the wrapped module's output on
    its first dimension (a tensor, or a tuple's first tensor): a model that returns a dict (a
    Hugging Face ``ModelOutput``) needs ``shard_output=`` (torch_xla raises "The output type is
    not supported" otherwise).
    """

    CODE = "XLA621"
    NAME = "fsdp-to-fsdpv2"
    SUMMARY = (
        "FullyShardedDataParallel(model, auto_wrap_policy, mixed_precision, ...) becomes torch_xla's FSDPv2 (SPMD)"
    )
    FIX = "safe"
    BEFORE = (
        "from torch.distributed import init_process_group\n"
        "from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "from torch.distributed.fsdp import MixedPrecision\n\n"
        'init_process_group("nccl")\n'
        "model = FSDP(model, auto_wrap_policy=policy, mixed_precision=MixedPrecision(param_dtype=torch.bfloat16))\n"
    )
    AFTER = (
        "from torch.distributed import init_process_group\n"
        "from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2\n\n"
        'init_process_group("nccl")\n'
        "model = FSDPv2(model, auto_wrap_policy=policy)\n"
        'model.forward = torch.autocast("xla", dtype=torch.bfloat16)(model.forward)\n'
    )

    def convert(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, plan):
        target, dropped, autocast = plan
        for arg in original.body[0].value.args:
            if arg.keyword is not None and arg.keyword.value not in KEPT:
                self.ctx.forget_fixes_inside(arg)  # a fix inside an argument that goes (XLA105's device_id)
        assign = updated.body[0]
        call = assign.value
        kept = drop_items(call.args, lambda a: a.keyword is not None and a.keyword.value not in KEPT)
        args = [self._policy(a) for a in kept]
        new_call = call.with_changes(func=cst.Name("FSDPv2"), args=args)
        statements = [updated.with_changes(body=[assign.with_changes(value=new_call)])]
        imports = [FSDPV2]
        if autocast:
            statements.append(
                cst.parse_statement(f'{target}.forward = torch.autocast("xla", dtype=torch.bfloat16)({target}.forward)')
            )
            imports.append(TORCH)
        if any(a is not o for a, o in zip(args, kept)):
            imports.append(XLA_WRAP)
            if "functools.partial" in "".join(code_of(a.value) for a in args):
                imports.append(FUNCTOOLS)
        reasons = "; ".join(f"`{k}` dropped: {DROPPED[k]}" for k in dropped)
        return self.replace(
            original,
            updated,
            cst.FlattenSentinel(statements) if len(statements) > 1 else statements[0],
            f"FSDP -> FSDPv2 (`SpmdFullyShardedDataParallel`): each parameter sharded over the mesh's `fsdp` axis, "
            f"the wrap policy's units kept ({FSDPV2_GUIDE})" + (f"; {reasons}" if reasons else ""),
            imports=imports,
            drop_if_unused=imports_behind(self, original),
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """``functools.partial(transformer_auto_wrap_policy, ...)`` of torch's policy, wherever the
        script builds it: torch_xla's, which FSDPv2 can call."""
        if not self.shards or self.qualname(original.func) != "functools.partial" or not original.args:
            return updated
        policy = POLICIES.get(self.qualname(original.args[0].value) or "")
        if policy is None:
            return updated
        first = updated.args[0].with_changes(value=parse_expr(f"xla_wrap.{policy}"))
        return self.replace(
            original,
            updated,
            updated.with_changes(args=[first, *updated.args[1:]]),
            f"torch's `{policy}` -> torch_xla's (`torch_xla.distributed.fsdp.wrap`): FSDPv2 calls a policy with "
            "torch_xla's keywords",
            imports=[XLA_WRAP],
            drop_if_unused=imports_behind(self, original.args[0].value),
        )

    def plan(self, statement: cst.SimpleStatementLine):
        """(the assigned name, the keywords dropped, whether the forward gets autocast) for
        ``name = FSDP(model, ...)`` that converts whole; None otherwise (flagged where it is FSDP)."""
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
            return None
        assign = statement.body[0]
        call = assign.value
        if not isinstance(call, cst.Call) or self.qualname(call.func) not in FSDP_CLASSES:
            return None
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, (cst.Name, cst.Attribute)):
            return None
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) != 1 or positional[0].star or any(a.star for a in call.args):
            return None
        dropped, autocast = [], False
        for arg in call.args:
            if arg.keyword is None:
                continue
            key = arg.keyword.value
            if key in KEPT:
                if not self._policy_ok(arg.value):
                    return None
                continue
            if key not in DROPPED:
                return None
            if key == "sharding_strategy" and code_of(arg.value).rsplit(".", 1)[-1] in NOT_SPMD_STRATEGIES:
                return None
            if key == "mixed_precision":
                dtype = self._param_dtype(arg.value)
                if dtype is None:
                    return None
                autocast = True
            dropped.append(key)
        return code_of(assign.targets[0].target), dropped, autocast

    def _param_dtype(self, value: cst.BaseExpression) -> str | None:
        if not isinstance(value, cst.Call) or (self.qualname(value.func) or "").rsplit(".", 1)[-1] != "MixedPrecision":
            return None
        dtype = call_arg(value, 0, "param_dtype")
        name = self.qualname(dtype.value) if dtype is not None else None
        return name if name in ("torch.bfloat16", "torch.float16", "torch.half") else None

    def _policy_ok(self, value: cst.BaseExpression) -> bool:
        """A policy this rule can hand to FSDPv2: a name (defined by the script), torch's
        policies (also through ``functools.partial``) or ``ModuleWrapPolicy({...})``."""
        if isinstance(value, cst.Name) and self.qualname(value) in (None, value.value):
            return True
        inner = value.args[0].value if isinstance(value, cst.Call) and value.args else value
        name = self.qualname(value.func) if isinstance(value, cst.Call) else None
        if name == MODULE_WRAP_POLICY:
            return len(value.args) == 1
        if name == "functools.partial":
            return self.qualname(inner) in POLICIES or self.qualname(inner) in (None, code_of(inner))
        return self.qualname(value) in POLICIES

    def _policy(self, arg: cst.Arg) -> cst.Arg:
        if arg.keyword is None or arg.keyword.value != "auto_wrap_policy":
            return arg
        value = arg.value
        if isinstance(value, cst.Call) and self.qualname(value.func) == MODULE_WRAP_POLICY:
            classes = code_of(value.args[0].value)
            return arg.with_changes(
                value=parse_expr(
                    f"functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={classes})"
                )
            )
        if isinstance(value, cst.Call) and self.qualname(value.func) == "functools.partial":
            inner = value.args[0]
            if self.qualname(inner.value) in POLICIES:
                new = parse_expr(f"xla_wrap.{POLICIES[self.qualname(inner.value)]}")
                return arg.with_changes(value=value.with_changes(args=[inner.with_changes(value=new), *value.args[1:]]))
            return arg
        if self.qualname(value) in POLICIES:
            return arg.with_changes(value=parse_expr(f"xla_wrap.{POLICIES[self.qualname(value)]}"))
        return arg

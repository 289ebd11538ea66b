"""XLA401: CUDA autocast becomes XLA autocast, float16 bfloat16 where it is chosen (the
migration guide's "Automatic Mixed Precision")."""

from __future__ import annotations

import libcst as cst

from codemods.amp.common import (
    CUDA_CUSTOM,
    DEVICE_AUTOCAST,
    HALF,
    amp_guide,
    arg_index,
    autocast_positions,
    autocast_view,
    device_imports,
    device_string,
    device_word,
    is_partial,
    keyword_arg,
    torch_module,
)
from codemods.amp.dtype_choices import dtype_choices
from codemods.shared.statements import carried_name
from migrate_xla.rule.api import (
    CUDA_WORD,
    SAFE,
    Import,
    Rule,
    append_keyword,
    call_arg,
    code_of,
    parse_expr,
    snippet,
    string_value,
)


class CudaAutocast(Rule):
    """CUDA autocast becomes XLA autocast; float16 becomes bfloat16, where it is chosen.

    Guide, "Automatic Mixed Precision": TPUs compute in bfloat16 natively, and bfloat16
    needs no GradScaler (XLA402 removes it). Of the two spellings the AMP guide shows,
    this is the one torch_xla 2.9 can run everywhere: ``torch_xla.amp.autocast(device)``
    only works on TPU and Neuron devices (on CPU PJRT it prints "AMP only supported for
    XLA:TPU. Ignoring autocast." and then fails when entered), while ``torch.autocast("xla",
    dtype=torch.bfloat16)``, which the guide recommends for scripts that run on TPUs, is
    plain PyTorch, works on every PJRT device and prints no warning.

    Recognised however imported: ``torch.cuda.amp.autocast(...)`` and ``torch.autocast`` /
    ``torch.amp.autocast`` whose device is ``"cuda"``, a CUDA/CPU choice, a variable this
    file assigned one to (``device_type = "cuda" if "cuda" in device else "cpu"``), or any
    device with ``dtype=torch.float16``; as a ``with`` or as a decorator. ``enabled=`` and
    ``cache_enabled=`` are kept. A ``"cuda"`` device becomes ``"xla"``; a device variable
    that XLA102 rewrites stays (``torch.autocast(device_type=device_type, ...)`` is valid
    whether it holds ``"xla"`` or, where the script keeps a CPU branch, ``"cpu"``).

    The dtype: a literal float16, or none (CUDA autocast's default is float16), becomes
    ``torch.bfloat16``. A dtype the user chooses (``dtype=ptdtype``) stays, so that
    ``--dtype=float32`` still trains in float32, and float16 becomes bfloat16 where it
    is chosen, followed through the file: the ``torch.float16`` of a dtype table
    (``{"float16": torch.float16, ...}[dtype]``), the string that picks it (``dtype =
    "float16"``, an argparse default, ``getattr(torch, "float16")``), each branch of a
    conditional. A conditional whose branches then agree and whose test only decides
    (``"bfloat16" if torch.cuda.is_bf16_supported() else "float16"``: every XLA device
    supports bfloat16) becomes its one value. These are safe, as the old replacement of
    the whole dtype was: they change only what this autocast computes in (every name on
    the way is used only to choose it, compared, or printed; a comparison such as a
    GradScaler's ``enabled=(dtype == "float16")`` then says that no float16 is used,
    which is true). A string is mapped only where its table has the bfloat16 key. Where
    the choice is not in sight (a parameter, a function's result) or one of its names
    is used for something else too (``model.to(ptdtype)``: XLA405's unsafe territory),
    the autocast's own dtype becomes ``torch.bfloat16 if ptdtype == torch.float16 else
    ptdtype``, which keeps every other choice. The decorators of custom
    autograd functions, ``torch.cuda.amp.custom_fwd`` / ``custom_bwd``, become
    ``torch.amp.custom_fwd(device_type="xla")`` (a float16 ``cast_inputs`` becomes bfloat16).

    Autocast prepared as a context-manager factory, ``functools.partial(torch.autocast,
    device_type=device.type, dtype=amp_dtype)`` (timm's train.py builds ``amp_autocast`` so and
    enters it as ``with amp_autocast():``), gets what a direct call gets, argument by argument:
    ``partial(torch.autocast, "xla", dtype=amp_dtype)``, the partial kept. A device's ``.type``
    counts as CUDA where the device is a CUDA choice, and a dtype variable the file assigns
    ``torch.float16`` (timm's ``amp_dtype = torch.float16``, ``torch.bfloat16`` under an
    option) counts as float16 does, for direct calls too. Where the file calls the partial's
    name with autocast's own arguments (``amp_autocast(torch.float16)``, ``dtype=`` at the
    call), the migrated partial's device and dtype would clash with them or be overridden: it
    is flagged instead, with the partial to write.

    Under ``--runtime torch-tpu`` the device is ``"tpu"``: ``torch.autocast("tpu",
    dtype=torch.bfloat16)`` (bfloat16 is also TorchTPU's default autocast dtype; it is
    written out, as above), ``custom_fwd(device_type="tpu")``, and no import beyond torch
    (torch loads torch_tpu by itself).
    """

    CODE = "XLA401"
    NAME = "cuda-autocast"
    SUMMARY = "CUDA autocast becomes XLA autocast; float16 becomes bfloat16 where it is chosen"
    FIX = SAFE
    TRIGGERS = (r"autocast",)
    CONTEXT = (CUDA_WORD, r"float16|fp16|half")  # the device variables; where a dtype is chosen
    BEFORE = "with torch.cuda.amp.autocast():\n    loss = model(x)\n"
    AFTER = 'with torch.autocast("xla", dtype=torch.bfloat16):\n    loss = model(x)\n'

    def visit_Module(self, node: cst.Module) -> None:
        self.choices = dtype_choices(self.ctx, node)

    def _custom(self, original, updated, name: str, args: list[cst.Arg]):
        """``torch.cuda.amp.custom_fwd`` / ``custom_bwd``, bare or called with ``args``."""
        torch, imports = torch_module(self.ctx)
        args = [keyword_arg("device_type", cst.SimpleString(f'"{self.ctx.api.device_type}"')), *args]
        replacement = cst.Call(parse_expr(f"{torch}.amp.{CUDA_CUSTOM[name]}"), args)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{code_of(replacement)}`: autocast on {device_word(self.ctx)}; "
            f"see {amp_guide(self.ctx)}",
            imports=imports,
            drop_if_unused=self.ctx.import_behind(original),
        )

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        name = self.qualname(original.decorator)  # bare @torch.cuda.amp.custom_fwd
        if name not in CUDA_CUSTOM:
            return updated
        return updated.with_changes(decorator=self._custom(original.decorator, updated.decorator, name, []))

    # -- where float16 is chosen ------------------------------------------------------
    def _chosen(self, original, updated, replacement):
        code, choice = self.choices.sites[id(original)]
        through = ", ".join(f"`{key}`" for key in choice.keys)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: this chooses the dtype autocast computes in"
            f"{f' (through {through})' if through else ''}; {device_word(self.ctx)} autocast computes in "
            f"bfloat16, which TPUs compute in natively and which needs no GradScaler; see {amp_guide(self.ctx)}",
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) not in self.choices.sites:
            return updated
        return self._chosen(original, updated, updated.with_changes(attr=cst.Name("bfloat16")))

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        if id(original) not in self.choices.sites:
            return updated
        return self._chosen(original, updated, updated.with_changes(value=self.choices.sites[id(original)][0]))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        choice = self.choices.merged.get(id(original))
        if choice is None:
            return updated
        self.ctx.forget_fixes_inside(original)
        replacement = updated.body
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: once float16 is bfloat16 both branches "
            f"agree (every {device_word(self.ctx)} device supports bfloat16); this chooses the dtype autocast "
            f"computes in; see {amp_guide(self.ctx)}",
        )

    # -- the autocast ---------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name in CUDA_CUSTOM and not any(a.star for a in original.args):
            args = []
            for old, new in zip(original.args, updated.args):
                if old.keyword is not None and old.keyword.value == "cast_inputs" and self.qualname(old.value) in HALF:
                    self.ctx.forget_fixes_inside(old)
                    new = new.with_changes(value=parse_expr(f"{torch_module(self.ctx)[0]}.bfloat16"))
                args.append(new)
            return self._custom(original, updated, name, args)
        view = autocast_view(self.ctx, original)
        if view is None:
            return updated
        if not is_partial(view, original):
            found = self._migrated(original, updated, original)
            if found is None:
                return updated
            replacement, why, imports = found
            kept = replacement.func is updated.func  # the device variable stays: only the dtype changed
            return self.replace(
                original,
                updated,
                replacement,
                f"`{snippet(original)}` -> `{(snippet if kept else code_of)(replacement)}`: {why}; "
                f"see {amp_guide(self.ctx)}",
                imports=imports,
                drop_if_unused=() if kept else self.ctx.import_behind(original.func),
            )
        return self._partial(original, updated, view)

    def _partial(self, original: cst.Call, updated: cst.Call, view: cst.Call):
        """``functools.partial(torch.autocast, device_type=device.type, dtype=amp_dtype)`` (timm's
        ``amp_autocast``): its arguments migrate as a direct call's do, the partial stays a partial."""
        updated_view = cst.Call(func=updated.args[0].value, args=updated.args[1:])
        site = self.choices.overridden.get(id(original))
        if site is not None:
            if autocast_positions(self.ctx, view, self.choices.cuda_variables, self.choices.half_variables):
                what = "a positional argument" if any(a.keyword is None for a in site.args) else "its own dtype"
                torch = torch_module(self.ctx)[0]
                self.flag(
                    original,
                    f"`{snippet(original)}` prepares CUDA autocast, and `{snippet(site)}` passes it {what} at its "
                    "call, which the device type and dtype a migration names in the partial would clash with or be "
                    f"overridden by: make it `{code_of(original.func)}({torch}.autocast, "
                    f"{device_string(self.ctx, original).value}, dtype={torch}.bfloat16)` and pass only `enabled=` "
                    f"or `cache_enabled=` at its calls; {device_word(self.ctx)} autocast computes in bfloat16, which "
                    f"needs no GradScaler; see {amp_guide(self.ctx)}",
                )
            return updated
        found = self._migrated(view, updated_view, original)
        if found is None:
            return updated
        migrated, why, imports = found
        function = updated.args[0].with_changes(value=migrated.func)
        replacement = updated.with_changes(args=[function, *migrated.args])
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` -> `{snippet(replacement)}`: the partial's arguments are autocast's; {why}; "
            f"see {amp_guide(self.ctx)}",
            imports=imports,
            drop_if_unused=self.ctx.import_behind(view.func),
        )

    def _migrated(
        self, original: cst.Call, updated: cst.Call, at: cst.CSTNode
    ) -> tuple[cst.Call, str, list[Import]] | None:
        """The XLA autocast call for CUDA autocast ``original`` (a call, or a partial's
        ``autocast_view``; ``at`` is the node of the tree a flag goes on), what the message
        says about it after the arrow, and the imports it needs; None when it is not CUDA
        autocast or stays as it is."""
        positions = autocast_positions(self.ctx, original, self.choices.cuda_variables, self.choices.half_variables)
        if positions is None or any(a.star for a in original.args):
            return None
        dtype_at, enabled_at, cache_at = positions
        torch, imports = torch_module(self.ctx)
        dtype_value, why = self._dtype(original, updated, dtype_at, torch, at)
        device = call_arg(original, 0, "device_type") if self.qualname(original.func) in DEVICE_AUTOCAST else None
        if device is not None and carried_name(device.value) in self.choices.device_variables:
            replacement = self._keep_device(original, updated, dtype_at, dtype_value)
            if replacement is None:
                return None  # the dtype is mapped where it is chosen
            return (
                replacement,
                f"the device variable is the {device_word(self.ctx)} device; TPUs compute in bfloat16, which "
                f"needs no GradScaler{why}",
                [],
            )
        like = device.value if device is not None and string_value(device.value) is not None else original
        args = [cst.Arg(device_string(self.ctx, like)), keyword_arg("dtype", dtype_value)]
        for keyword, position in (("enabled", enabled_at), ("cache_enabled", cache_at)):
            index = arg_index(original, position, keyword)
            if index is not None:
                args.append(keyword_arg(keyword, updated.args[index].value))
        replacement = cst.Call(parse_expr(f"{torch}.autocast"), args, lpar=updated.lpar, rpar=updated.rpar)
        self.ctx.forget_fixes_inside(original.func)
        if device is not None:
            self.ctx.forget_fixes_inside(device)
        return (
            replacement,
            f"TPUs compute in bfloat16, which needs no GradScaler{why}",
            [*device_imports(self.ctx), *imports],
        )

    def _dtype(
        self, original: cst.Call, updated: cst.Call, dtype_at: int, torch: str, at: cst.CSTNode
    ) -> tuple[cst.BaseExpression, str]:
        """The migrated autocast's dtype, and what the message says about it (a flag goes on ``at``)."""
        index = arg_index(original, dtype_at, "dtype")
        choice = self.choices.choices.get(id(original.args[index].value)) if index is not None else None
        if choice is None:  # float16, or CUDA's default float16
            return parse_expr(f"{torch}.bfloat16"), ""
        value = updated.args[index].value
        if choice.mapped:
            return (
                value,
                f"; the dtype `{snippet(value)}` is kept: float16 becomes bfloat16 where it is chosen"
                if choice.sites
                else "",
            )
        if choice.unknown is not None:
            reads = f" (it reads `{choice.unknown}`)" if choice.unknown != snippet(value) else ""
            why = f"xla-migrate cannot see where `{snippet(value)}` is chosen{reads}"
        else:
            why = f"`{snippet(value)}` is also used outside autocast (`{snippet(choice.shared)}`)"
        if not isinstance(value, (cst.Name, cst.Attribute)):
            self.flag(
                at,
                f"{why}: if it can be float16, choose bfloat16 there (TPUs compute in "
                f"bfloat16 natively, and it needs no GradScaler); see {amp_guide(self.ctx)}",
            )
            return value, ""
        code = code_of(value)
        guarded = parse_expr(f"{torch}.bfloat16 if {code} == {torch}.float16 else {code}")
        return guarded, f"; {why}, so float16 becomes bfloat16 here and any other choice is kept"

    def _keep_device(self, original, updated, dtype_at, dtype_value) -> cst.Call | None:
        """``torch.autocast(device_type=device_type, dtype=...)``: XLA102 rewrites the variable.
        None when the call stays as it is (its dtype is mapped where it is chosen)."""
        index = arg_index(original, dtype_at, "dtype")
        if index is None:
            replacement = append_keyword(updated, "dtype", dtype_value)
        else:
            args = list(updated.args)
            args[index] = args[index].with_changes(value=dtype_value)
            replacement = updated.with_changes(args=args)
        return None if replacement.deep_equals(updated) else replacement

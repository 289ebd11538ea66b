"""XLA1xx: every way training code picks and uses a CUDA device, moved to the XLA device.

Follows the migration guide's "Device Handling" section: ``torch.device("cuda:0")``
becomes the XLA device (``torch_xla.device()``, or the string ``"xla"`` where the
code keeps device names as strings), and the ``torch.cuda`` runtime calls become
their torch_xla meaning, or go away where they mean nothing on XLA.
"""

from __future__ import annotations

import re
import libcst as cst

from migrate_xla.rule import (
    CUDA_WORD,
    EQUAL,
    append_keyword,
    code_of,
    SAFE,
    TORCH_XLA,
    XM,
    XR,
    FileContext,
    Import,
    Rule,
    call_arg,
    children,
    names_trigger,
    parse_expr,
    snippet,
    string_value,
    subtree,
    words,
)

# "cuda", "cuda:0", and the templates scripts format an index into: "cuda:", "cuda:{}", "cuda:%d"
CUDA_NAME = re.compile(r"cuda(:(\d+|\{\w*\}|%[dis])?)?$")
OTHER_DEVICE = re.compile(r"(cpu|mps)(:\d+)?$")
# The text of every CUDA_NAME literal is_cuda_literal sees: its quote, then cuda (but for
# escapes, "\x63uda", or a concatenation that splits the word, "cu" "da")
CUDA_STRING = r"""['"]cuda"""


def is_cuda_literal(node: cst.CSTNode) -> bool:
    """A CUDA device name: ``"cuda"``, ``"cuda:0"``, ``f"cuda:{rank}"``, ``"cuda:{}".format(rank)``,
    ``"cuda:%d" % rank`` or ``"cuda:" + str(rank)``."""
    value = string_value(node)
    if value is not None:
        return bool(CUDA_NAME.match(value))
    if isinstance(node, cst.FormattedString) and node.parts:
        first = node.parts[0]
        return isinstance(first, cst.FormattedStringText) and (
            first.value == "cuda:" or (first.value == "cuda" and len(node.parts) == 1)
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        return string_value(node.func.value) is not None and is_cuda_literal(node.func.value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Modulo, cst.Add)):
        return string_value(node.left) is not None and is_cuda_literal(node.left)
    return False


def is_other_device(node: cst.CSTNode) -> bool:
    value = string_value(node)
    return value is not None and bool(OTHER_DEVICE.match(value))


def cuda_choice(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The condition of ``"cuda" if COND else "cpu"`` (either order), else None."""
    if isinstance(node, cst.IfExp) and (
        (is_cuda_literal(node.body) and is_other_device(node.orelse))
        or (is_other_device(node.body) and is_cuda_literal(node.orelse))
    ):
        return node.test
    return None


def is_cuda_value(node: cst.CSTNode) -> bool:
    return is_cuda_literal(node) or cuda_choice(node) is not None


# "cuda" if torch.cuda.is_available() else "cpu": a test that means "use the accelerator"
AVAILABILITY_TEST = re.compile(r"(not\s+)?[\w.]*(cuda|accelerator)\.is_available\(\)")


def picks_by_availability(choice: cst.CSTNode) -> bool:
    """Whether a CUDA/CPU choice only asks whether a GPU is there (then it means the XLA device)."""
    test = cuda_choice(choice)
    return test is not None and bool(AVAILABILITY_TEST.fullmatch(code_of(test)))


def choice_note(node: cst.CSTNode) -> str:
    """What the message adds about a CUDA/CPU choice on anything but GPU availability."""
    test = cuda_choice(node)
    if test is None or picks_by_availability(node):
        return ""
    return f"; the choice on `{code_of(test)}` is kept: its CPU branch still runs on the CPU"


def with_xla_branch(updated: cst.IfExp, cuda_first: bool, xla: cst.BaseExpression) -> cst.IfExp:
    """The choice ``updated`` with its CUDA branch (the first when ``cuda_first``) replaced by ``xla``."""
    return updated.with_changes(body=xla) if cuda_first else updated.with_changes(orelse=xla)


def xla_string(like: cst.CSTNode) -> cst.SimpleString:
    """The string ``"xla"``, quoted the way ``like`` (or the template it formats) was."""
    if isinstance(like, cst.Call) and isinstance(like.func, cst.Attribute):
        like = like.func.value  # 'cuda:{}'.format(rank)
    elif isinstance(like, cst.BinaryOperation):
        like = like.left  # 'cuda:%d' % rank
    quote = "'" if isinstance(like, cst.SimpleString) and like.quote == "'" else '"'
    return cst.SimpleString(f"{quote}xla{quote}")


def target_name(node: cst.CSTNode) -> str:
    """The name a value is stored under: ``device``, ``self.device``, ``cfg["device"]``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            return string_value(index.value) or ""
    return ""


def names_device(name: str) -> bool:
    return "device" in name.lower()


XLA_DEVICE = "torch_xla.device()"

# The text every device choice chooses_cpu finds spells: a "cpu" string, or a --device option
CPU_CHOICE = r"""['"](?:cpu|--[\w-]*device)\b"""


def chooses_cpu(module: cst.Module, qualname) -> bool:
    """Whether the migrated ``module`` may run on the CPU by the user's choice.

    A CUDA/CPU choice on anything but GPU availability (XLA101 and XLA102 keep those), a
    device-named variable set to the CPU (``else: device = torch.device("cpu")``), or a
    ``--device`` option (the user may pass ``cpu``). ``qualname`` resolves names.
    """
    def is_cpu(node: cst.CSTNode) -> bool:
        if is_other_device(node):
            return True
        return isinstance(node, cst.Call) and qualname(node.func) == "torch.device" and any(
            is_other_device(a.value) for a in node.args[:1]
        )

    def is_accelerator(node: cst.CSTNode) -> bool:
        if is_cuda_value(node) or string_value(node) == "xla":
            return True
        if isinstance(node, cst.IfExp):
            return is_accelerator(node.body) or is_accelerator(node.orelse)
        return isinstance(node, cst.Call) and (
            qualname(node.func) in ("torch_xla.device", "torch.accelerator.current_accelerator")
            or (qualname(node.func) == "torch.device" and any(is_accelerator(a.value) for a in node.args[:1]))
        )

    for node in subtree(module):
        if isinstance(node, cst.IfExp):
            branches = (node.body, node.orelse)
            if any(map(is_cpu, branches)) and any(map(is_accelerator, branches)):
                if not AVAILABILITY_TEST.fullmatch(code_of(node.test)):
                    return True
        elif isinstance(node, cst.Assign):
            if is_cpu(node.value) and any(names_device(target_name(t.target)) for t in node.targets):
                return True
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument":
            flags = [string_value(a.value) or "" for a in node.args if a.keyword is None]
            if any(re.fullmatch(r"--[\w-]*device", flag) for flag in flags):
                return True
    return False

# autocast and GradScaler name a device too, but the mixed-precision rules (XLA4xx) own
# them: moving them to XLA also changes float16 to bfloat16 and drops the loss scaling.
AMP_DEVICE_CALLS = frozenset({
    "torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
    "torch.GradScaler", "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler",
})


class CudaDevice(Rule):
    """``torch.device("cuda...")`` becomes the XLA device.

    Guide, "Device Handling": ``torch.device("cuda:0" if torch.cuda.is_available() else
    "cpu")`` becomes the XLA device: the availability test means "use the accelerator".
    An index (``"cuda:1"``, ``torch.device("cuda", rank)``) is dropped: on XLA each
    process owns its device, and ``torch_xla.device()`` returns it. A CUDA/CPU choice on
    anything else (the user's own flag, ``args.cuda``, ``use_cuda = not args.no_cuda and
    ...``) keeps its condition and its CPU branch: ``torch.device("xla" if args.cuda else
    "cpu")``, so a run the user sends to the CPU still runs there.
    """

    CODE = "XLA101"
    NAME = "cuda-device"
    SUMMARY = "torch.device('cuda...') becomes torch_xla.device()"
    FIX = SAFE
    # It rewrites torch.device calls whose type is a "cuda..." string (or a choice of one)
    TRIGGERS = (words("device"),)
    REQUIRES = (CUDA_STRING,)
    BEFORE = (
        'device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n'
        'device = torch.device("cuda" if args.cuda else "cpu")\n'
    )
    AFTER = 'device = torch_xla.device()\ndevice = torch.device("xla" if args.cuda else "cpu")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.device":
            return updated
        kind = call_arg(original, 0, "type")
        if kind is None or not is_cuda_value(kind.value):
            return updated
        if cuda_choice(kind.value) is not None and not picks_by_availability(kind.value):
            # torch.device("cuda" if args.cuda else "cpu"): only the CUDA name changes
            choice = kind.value
            cuda_first = is_cuda_value(choice.body)
            self.ctx.forget_fixes_inside(choice.body if cuda_first else choice.orelse)
            index = next(i for i, a in enumerate(original.args) if a is kind)
            new_choice = with_xla_branch(updated.args[index].value, cuda_first, xla_string(choice.body if cuda_first else choice.orelse))
            arg = updated.args[index].with_changes(value=new_choice, comma=cst.MaybeSentinel.DEFAULT)
            replacement = updated.with_changes(args=[arg])  # an index means nothing on the CPU or XLA
            return self.replace(
                original,
                updated,
                replacement,
                f"`{code_of(original)}` -> `{code_of(replacement)}`{choice_note(choice)}",
                imports=[TORCH_XLA],
            )
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            parse_expr(XLA_DEVICE),
            f"`{code_of(original)}` -> `{XLA_DEVICE}`",
            imports=[TORCH_XLA],
        )

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        # torch.device("cuda") if COND else torch.device("cpu")
        branches = [original.body, original.orelse]
        devices = [b for b in branches if isinstance(b, cst.Call) and self.qualname(b.func) == "torch.device"]
        if len(devices) != 2:
            return updated
        kinds = [call_arg(d, 0, "type") for d in devices]
        if any(k is None for k in kinds):
            return updated
        flags = [is_cuda_value(k.value) for k in kinds]
        others = [is_other_device(k.value) for k in kinds]
        if sorted(flags) != [False, True] or not any(others):
            return updated
        if not AVAILABILITY_TEST.fullmatch(code_of(original.test)):
            return updated  # the user's own choice: leave_Call rewrote the CUDA branch
        self.ctx.forget_fixes_inside(original)
        return self.replace(
            original,
            updated,
            parse_expr(XLA_DEVICE),
            f"`{code_of(original)}` -> `{XLA_DEVICE}`",
            imports=[TORCH_XLA],
        )


class CudaDeviceString(Rule):
    """Device names kept as strings: ``"cuda"`` becomes ``"xla"`` where it names a device.

    Scripts keep the device in variables, config dicts, argparse defaults, function
    defaults, ``device=`` / ``.to(...)`` arguments and the return values of helpers
    named like ``get_device()``. ``"xla"`` is the guide's
    ``torch.device('xla')`` spelled as a string; ``import torch_xla`` is added so that
    the XLA backend is registered before the string is used. The device of ``autocast``
    and ``GradScaler`` is left to the mixed-precision rules (XLA4xx), which change its
    float16 to bfloat16 with it.
    """

    CODE = "XLA102"
    NAME = "cuda-device-string"
    SUMMARY = "'cuda' device strings in variables, configs, defaults and .to() become 'xla'"
    FIX = SAFE
    TRIGGERS = (CUDA_STRING, r"""['"]cpu['"]\s+if""")
    BEFORE = 'parser.add_argument("--device", default="cuda")\nx = x.to("cuda:0")\n'
    AFTER = 'parser.add_argument("--device", default="xla")\nx = x.to("xla")\n'

    def _to_xla(self, original: cst.CSTNode, updated: cst.BaseExpression, where: str):
        if isinstance(original, cst.IfExp) and not picks_by_availability(original):
            # "cuda" if args.cuda else "cpu": the user's choice stays, the CUDA name changes
            cuda_first = is_cuda_literal(original.body)
            cuda = original.body if cuda_first else original.orelse
            self.ctx.forget_fixes_inside(cuda)
            replacement = with_xla_branch(updated, cuda_first, xla_string(cuda))
            shown = code_of(replacement)
        else:
            self.ctx.forget_fixes_inside(original)  # a dropped availability test or formatted index
            replacement = xla_string(original if not isinstance(original, cst.IfExp) else original.body)
            shown = '"xla"'
        return self.replace(
            original,
            updated,
            replacement,
            f"device `{code_of(original)}` {where} -> `{shown}`{choice_note(original)}",
            imports=[TORCH_XLA],
        )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if is_cuda_value(original.value) and any(names_device(target_name(t.target)) for t in original.targets):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "assigned"))
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        if original.value is not None and is_cuda_value(original.value) and names_device(target_name(original.target)):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "assigned"))
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement):
        if is_cuda_value(original.value) and names_device(string_value(original.key) or ""):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "in a dict"))
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return):
        functions = [s for s in self.ctx.statements if isinstance(s, cst.FunctionDef)]
        if original.value is None or not functions or not names_device(functions[-1].name.value):
            return updated
        if is_cuda_value(original.value):
            return updated.with_changes(value=self._to_xla(original.value, updated.value, "returned"))
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        if original.default is not None and is_cuda_value(original.default) and names_device(original.name.value):
            return updated.with_changes(default=self._to_xla(original.default, updated.default, "as a default"))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if self.qualname(func) in AMP_DEVICE_CALLS:
            return updated
        method = func.attr.value if isinstance(func, cst.Attribute) else ""
        changed = []
        for index, arg in enumerate(original.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if not is_cuda_value(arg.value) or keyword == "pin_memory_device":  # XLA301 drops that one
                continue
            if keyword is not None and names_device(keyword):
                where = f"as `{keyword}=`"
            elif method == "to" and (keyword is None and index == 0):
                where = "in `.to()`"
            elif method == "add_argument" and keyword == "default":
                where = "as an argparse default"
            elif self.qualname(func) in ("os.environ.get", "os.getenv") and index == 1:
                where = "as an environment default"
            else:
                continue
            changed.append((index, self._to_xla(arg.value, updated.args[index].value, where)))
        if not changed:
            return updated
        args = list(updated.args)
        for index, value in changed:
            args[index] = args[index].with_changes(value=value)
        return updated.with_changes(args=args)


class CudaMethod(Rule):
    """``.cuda()`` on tensors, modules and losses becomes ``.to(torch_xla.device())``.

    Matched by shape: any ``x.cuda(...)`` call is taken to be ``Tensor.cuda`` or
    ``Module.cuda``, and the diagnostic says it guessed. A device index is dropped
    (each XLA process owns one device); ``non_blocking`` (keyword or second
    positional argument) and ``memory_format=`` are kept: ``Tensor.to`` takes them too.
    """

    CODE = "XLA103"
    NAME = "cuda-method"
    SUMMARY = ".cuda() on tensors and modules becomes .to(torch_xla.device())"
    FIX = SAFE
    TRIGGERS = (r"\.cuda\(",)
    BEFORE = "model = Net().cuda()\nx = x.cuda(non_blocking=True)\n"
    AFTER = "model = Net().to(torch_xla.device())\nx = x.to(torch_xla.device(), non_blocking=True)\n"

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return updated
        if (self.qualname(original.func) or "").startswith("torch."):  # torch.cuda(...): not a method call
            return updated
        kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        blocking = call_arg(updated, 1, None)  # Tensor.cuda(device, non_blocking)
        if blocking is not None:
            kept.insert(0, blocking.with_changes(keyword=cst.Name("non_blocking"), equal=EQUAL))
        args = [cst.Arg(parse_expr(XLA_DEVICE)), *kept]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        replacement = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
        return self.replace(
            original,
            updated,
            replacement,
            f"`.cuda()` -> `.to({XLA_DEVICE})` (matched by shape: assumed to be a tensor or module)",
            imports=[TORCH_XLA],
        )


# What a CUDA check may guard that XLA does not have, as a branch spells it: fused /
# capturable optimizers, DataParallel, CUDA graphs and streams. Not what other rules
# remove from the branch (pinned memory, cuDNN flags, a GradScaler, "nccl"): a second run
# would find the branch without it and decide otherwise.
GPU_ONLY_FEATURE = re.compile(
    r"\b(fused|capturable|data_parallel|DataParallel|CUDAGraph|make_graphed_callables"
    r"|graph_pool_handle|Stream)\b|\bcuda\.graph\b"
)
# Names whose value a check decides is such a feature: use_fused, pin, scaler_enabled
GPU_ONLY_NAME = re.compile(r"fused|capturable|(^|_)pin(_|$)|pin_memory|data_?parallel|cudnn|cuda_?graph|scaler|stream", re.I)
GPU_ONLY_KEYWORDS = frozenset({"fused", "capturable", "pin_memory"})
GRAD_SCALERS = frozenset({
    "torch.GradScaler", "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler",
    "torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
})
# ctx.shared key: ids of the CUDA checks left as they are, which XLA899 does not flag
KEPT_CUDA_CHECKS = "kept-cuda-checks"


class CudaDeviceCheck(Rule):
    """Checks for CUDA tensors and devices now check for XLA, unless they guard a GPU-only feature.

    ``t.is_cuda`` becomes ``t.is_xla``; ``device.type == "cuda"`` and ``"cuda" in
    str(device)`` compare with ``"xla"``, so branches written for the GPU (moving data,
    synchronising, picking the device or the autocast type) now run on the device that
    took the GPU's place.

    A check that guards something only CUDA has stays a CUDA check, so that it is off
    on XLA: a fused or capturable optimizer (``use_fused = fused_available and
    device_type == "cuda"``; ``fused=True`` on XLA tensors raises), ``DataParallel``
    (``if input.is_cuda and self.ngpu > 1: nn.parallel.data_parallel(...)`` would route
    XLA tensors into CUDA-only replication), CUDA graphs and streams, a GradScaler's
    ``enabled=``, a flag named for pinned memory or cuDNN. Told apart by what the check
    decides: the branch an ``if`` takes when the check holds, the name it is assigned to
    (``use_fused``, ``pin_memory``), or the ``fused=`` / ``capturable=`` /
    ``pin_memory=`` argument it is passed as. A branch that only pins memory or sets cuDNN
    flags becomes an XLA branch: XLA301 and XLA107 take those out of it.
    """

    CODE = "XLA104"
    NAME = "cuda-device-check"
    SUMMARY = "t.is_cuda and device.type == 'cuda' checks become XLA checks (not those guarding CUDA-only features)"
    FIX = SAFE
    SEVERITY = "info"  # what stays: a check left for CUDA on purpose
    TRIGGERS = (r"\.is_cuda\b", CUDA_STRING)
    BEFORE = (
        'if device.type == "cuda":\n    pass\nif x.is_cuda:\n    pass\n'
        'use_fused = fused_available and device_type == "cuda"\n'
    )
    AFTER = (
        'if device.type == "xla":\n    pass\nif x.is_xla:\n    pass\n'
        'use_fused = fused_available and device_type == "cuda"\n'
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.kept: dict[int, str] = ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})  # check id -> what it guards

    def _is_check(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute):
            return node.attr.value == "is_cuda" and self.qualname(node) is None
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(t.comparator for t in node.comparisons)]
            return any(is_cuda_literal(o) for o in operands) and not all(string_value(o) is not None for o in operands)
        return False

    def _checks(self, node: cst.CSTNode, holds: bool = True):
        """(check, whether the condition holds when the check does) for the CUDA checks in a condition."""
        if self._is_check(node):
            negated = isinstance(node, cst.Comparison) and any(
                isinstance(t.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)) for t in node.comparisons
            )
            yield node, holds != negated
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            yield from self._checks(node.expression, not holds)
        else:
            for child in children(node):
                yield from self._checks(child, holds)

    def _keep_if_guarding(self, condition: cst.CSTNode, when_true, when_false) -> None:
        for check, holds in self._checks(condition):
            branch = when_true if holds else when_false
            found = GPU_ONLY_FEATURE.search(code_of(branch)) if branch is not None else None
            if found:
                self.kept[id(check)] = f"`{found.group(0)}`"

    def _keep_all(self, value: cst.CSTNode, what: str) -> None:
        for check, _ in self._checks(value):
            self.kept[id(check)] = what

    def visit_If(self, node: cst.If) -> None:
        self._keep_if_guarding(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._keep_if_guarding(node.test, node.body, node.orelse)

    def visit_Assign(self, node: cst.Assign) -> None:
        names = [target_name(t.target) for t in node.targets]
        found = [n for n in names if GPU_ONLY_NAME.search(n)]
        if found:
            self._keep_all(node.value, f"`{found[0]}`")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = target_name(node.target)
        if node.value is not None and GPU_ONLY_NAME.search(name):
            self._keep_all(node.value, f"`{name}`")

    def visit_Call(self, node: cst.Call) -> None:
        scaler = self.qualname(node.func) in GRAD_SCALERS
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in GPU_ONLY_KEYWORDS or (scaler and keyword == "enabled"):
                self._keep_all(arg.value, f"`{keyword}=`")

    def _left_for_cuda(self, original: cst.CSTNode, updated: cst.CSTNode) -> bool:
        what = self.kept.get(id(original))
        if what is None:
            return False
        self.kept[id(updated)] = what
        self.note(
            original,
            f"`{code_of(original)}` guards {what}, which only CUDA has: left as a CUDA check, "
            "so it stays off on XLA",
        )
        return True

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "is_cuda" or self.qualname(original) is not None:
            return updated
        if self._left_for_cuda(original, updated):
            return updated
        return self.replace(
            original,
            updated,
            updated.with_changes(attr=cst.Name("is_xla")),
            "`.is_cuda` -> `.is_xla`",
        )

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison):
        if not self._is_check(original) or self._left_for_cuda(original, updated):
            return updated

        def swap(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
            if not is_cuda_literal(old):
                return new
            self.ctx.forget_fixes_inside(old)  # "cuda:{}".format(...): the index goes
            return xla_string(old)

        replacement = updated.with_changes(
            left=swap(original.left, updated.left),
            comparisons=[
                u.with_changes(comparator=swap(o.comparator, u.comparator))
                for o, u in zip(original.comparisons, updated.comparisons)
            ],
        )
        return self.replace(original, updated, replacement, f"`{code_of(original)}` now checks for \"xla\"")


# qualified name -> (replacement template or None to remove the statement, imports).
# In a template, {0} is the call's first argument.
RUNTIME_CALLS: dict[str, tuple[str | None, tuple[Import, ...]]] = {
    "torch.cuda.is_available": ("bool(torch_xla.device_count())", (TORCH_XLA,)),
    "torch.accelerator.is_available": ("bool(torch_xla.device_count())", (TORCH_XLA,)),
    "torch.cuda.device_count": ("torch_xla.device_count()", (TORCH_XLA,)),
    "torch.accelerator.device_count": ("torch_xla.device_count()", (TORCH_XLA,)),
    "torch.cuda.current_device": ("xr.local_ordinal()", (XR,)),
    "torch.accelerator.current_device_index": ("xr.local_ordinal()", (XR,)),
    "torch.accelerator.current_accelerator": (XLA_DEVICE, (TORCH_XLA,)),
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
    """

    CODE = "XLA105"
    NAME = "cuda-runtime-call"
    SUMMARY = "torch.cuda / torch.accelerator runtime calls become torch_xla calls, or go"
    FIX = SAFE
    # It acts only on the RUNTIME_CALLS (after calls it rewrote)
    TRIGGERS = (names_trigger(*RUNTIME_CALLS),)
    REQUIRES = (words("cuda", "accelerator"),)
    BEFORE = "torch.cuda.manual_seed_all(0)\ntorch.cuda.set_device(rank)\ntorch.cuda.synchronize()\n"
    AFTER = "torch_xla.manual_seed(0)\ntorch_xla.sync(wait=True)\n"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # the torch_xla.manual_seed(...) calls this rule wrote, by id; held so no id is reused
        self.seeds: dict[int, cst.BaseExpression] = {}

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        call = original.value
        if not isinstance(call, cst.Call):
            return updated
        name = self.qualname(call.func)
        if name in RUNTIME_CALLS and RUNTIME_CALLS[name][0] is None:
            return self.replace(
                original,
                updated,
                cst.RemoveFromParent(),
                f"`{name}()` means nothing on XLA: removed",
                drop_if_unused=self.ctx.import_behind(call.func),
            )
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.qualname(original.func)
        if name not in RUNTIME_CALLS:
            return updated
        template, imports = RUNTIME_CALLS[name]
        if template is None:
            return updated  # a statement of its own is removed by leave_Expr; elsewhere XLA899 flags it
        if "{0}" in template:
            if not original.args:
                return updated
            template = template.format(code_of(updated.args[0].value))
        replacement = parse_expr(template)
        if name.endswith("manual_seed") or name.endswith("manual_seed_all"):
            self.seeds[id(replacement)] = replacement
        return self.replace(
            original,
            updated,
            replacement,
            f"`{name}()` -> `{template}`",
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
            or (isinstance(node, cst.Call) and self.qualname(node.func) in RUNTIME_CALLS
                and (RUNTIME_CALLS[self.qualname(node.func)][0] or "").startswith(("bool(", "True")))
        )

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


class CudaMemoryQuery(Rule):
    """CUDA memory and device-property queries have no XLA counterpart on every device.

    Without a GPU, ``memory_allocated()`` and its kind quietly return 0, and
    ``memory_summary()``, ``mem_get_info()``, ``get_device_properties()`` crash. On a TPU
    the nearest meaning is ``xm.get_memory_info(device)``, which CPU PJRT does not
    implement, so the rule flags these for a person to decide.
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

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func)
        if name in MEMORY_CALLS:
            crash = " and crashes without a GPU" if MEMORY_CALLS[name] == "error" else ""
            self.flag(node, f"`{name}()` reads CUDA memory{crash}; {MEMORY_HINT}")


CUDA_FLAG_PREFIXES = ("torch.backends.cudnn.", "torch.backends.cuda.matmul.")


class CudaBackendFlag(Rule):
    """``torch.backends.cudnn.*`` and CUDA matmul precision switches mean nothing on XLA.

    cuDNN autotuning (``benchmark``), determinism and TF32 switches configure NVIDIA
    libraries that XLA does not use; assignments to them are removed. XLA picks its own
    matmul precision (``torch_xla.backends.set_mat_mul_precision`` changes it).
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
                f"`{' = '.join(names)} = ...` configures an NVIDIA library XLA does not use: removed",
                drop_if_unused=[spec for t in original.targets for spec in self.ctx.import_behind(t.target)],
            )
        return updated


MAP_LOCATION_NOTE = (
    "torch.load cannot restore tensors onto an XLA device: it loads to the CPU, "
    "and load_state_dict copies onto the device (move other loaded tensors with .to(device))"
)


class LoadMapLocation(Rule):
    """``torch.load`` always loads to the CPU.

    Guide, "Saving and Loading Models": load the state to the CPU, then move it to
    the device. ``torch.load(..., map_location=<xla device>)`` fails ("don't know how
    to restore data location ... tagged with xla"), and a checkpoint saved on a GPU
    cannot be loaded without a GPU unless it is mapped, so a CUDA or device
    ``map_location`` becomes ``"cpu"`` and a missing one is added.
    """

    CODE = "XLA108"
    NAME = "load-map-location"
    SUMMARY = "torch.load(..., map_location=cuda/device) loads to 'cpu'"
    FIX = SAFE
    TRIGGERS = (r"load(?<!\wload)\(",)  # torch.load(...), load(...) however imported
    BEFORE = 'state = torch.load("ckpt.pt", map_location=device)\n'
    AFTER = 'state = torch.load("ckpt.pt", map_location="cpu")\n'

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.qualname(original.func) != "torch.load":
            return updated
        arg = call_arg(original, 1, "map_location")
        cpu = cst.SimpleString('"cpu"')
        if arg is None:
            if any(a.star for a in original.args):
                return updated
            return self.replace(
                original,
                updated,
                append_keyword(updated, "map_location", cpu),
                f'`torch.load` without map_location: loads to "cpu" so a GPU checkpoint loads without a GPU; {MAP_LOCATION_NOTE}',
            )
        if is_other_device(arg.value) or not self._is_device(arg.value):
            return updated
        index = next(i for i, a in enumerate(original.args) if a is arg)
        self.ctx.forget_fixes_inside(arg.value)  # lambda storage, loc: storage.cuda(rank)
        args = list(updated.args)
        args[index] = args[index].with_changes(value=cpu)
        return self.replace(
            original,
            updated,
            updated.with_changes(args=args),
            f"`map_location={code_of(arg.value)}` -> `\"cpu\"`: {MAP_LOCATION_NOTE}",
        )

    def _is_device(self, value: cst.BaseExpression) -> bool:
        if is_cuda_value(value):
            return True
        if isinstance(value, (cst.Lambda, cst.Dict)):
            return "cuda" in code_of(value)
        if isinstance(value, cst.Call) and self.qualname(value.func) == "torch.device":
            kind = call_arg(value, 0, "type")
            return kind is None or not is_other_device(kind.value)  # torch.device("cpu") is right already
        if isinstance(value, cst.Call) and self.qualname(value.func) == "torch_xla.device":
            return True
        return names_device(target_name(value))




# -- XLA109: modules keep their Parameter objects when moved to the XLA device ------------

SWAP_SWITCH = "torch.__future__.set_swap_module_params_on_conversion"
TORCH = Import("torch")
# What a moved value is taken for a module by (besides `Net().to(device)` and a move whose
# result is dropped, `model.cuda()`): its name.
MODULE_NAME = re.compile(
    r"model|net|module|encoder|decoder|generator|discriminator|critic|classifier|backbone|layer|block"
    r"|transformer|gpt|bert|ema|teacher|student|policy|actor|head|embed|rnn|lstm|gru|cnn|mlp|^[gdm]$",
    re.IGNORECASE,
)
DEVICE_WORD = re.compile(r"(^|_)(dev|rank|gpu|gpu_id)$", re.IGNORECASE)
DDP_CLASSES = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
})


class SwapModuleParams(Rule):
    """Modules moved to the XLA device keep their ``Parameter`` objects.

    On CUDA, ``model.cuda()`` / ``model.to(device)`` changes each parameter in place
    (``param.data = ...``): the ``Parameter`` objects stay. CPU to XLA is not such a move,
    so torch_xla 2.9 puts a *new* ``Parameter`` in the module. Whatever held the old
    objects now holds stale CPU tensors, silently: an optimizer, scheduler, EMA copy or
    parameter list built before the move (a Trainer given an optimizer before it calls
    ``model.cuda(gpu_id)``, a layer that builds ``self.opt = Adam(self.parameters())`` in
    ``__init__``) updates tensors the model no longer uses, so the model never learns;
    and weights tied by assignment (``self.wte.weight = self.lm_head.weight``) come
    apart into two trained copies.

    ``torch.__future__.set_swap_module_params_on_conversion(True)`` makes ``Module._apply``
    swap each new tensor into the old ``Parameter`` (``torch.utils.swap_tensors``), so
    every holder sees the device tensor, whatever the order of construction. Measured on
    torch_xla 2.9, CPU PJRT: an AdamW built before the move trains to the CPU losses
    (without it the loss never moves), a tied embedding stays one parameter, a model run
    before the move and wrapped in DDP after it trains the same; nothing changes per step.
    The switch is global: it is added once, after the imports of each file that moves a
    module (``.cuda()``, or ``.to(<device>)`` on something taken for a module), so it
    runs before the first move, also in processes ``torch_xla.launch`` starts.

    What it changes besides: a move raises ("_apply(): Couldn't swap") instead of
    copying when something else holds the parameter's tensor (a weak reference, such as
    ``torch.compile``'s on a model compiled and run before the move; a view of the
    parameter; the autograd graph of an output kept from before the move). And
    ``load_state_dict`` swaps too, so it raises ("Expected use_count of t1 to be 1 or 2")
    while DistributedDataParallel holds the parameters: a load after the DDP wrap is an
    error-level finding (load before wrapping). A file that turns the switch off is one
    too. See torch.__future__ and torch.utils.swap_tensors in the PyTorch reference.
    """

    CODE = "XLA109"
    NAME = "swap-module-params"
    SUMMARY = "files that move modules to the XLA device swap parameters on conversion (keeps optimizers and ties)"
    FIX = SAFE
    SEVERITY = "error"  # what stays is what the switch breaks
    TRIGGERS = (r"\.cuda\(", r"\.to\(")
    REQUIRES = (r"cuda|xla",)
    CONTEXT = (words("set_swap_module_params_on_conversion", "load_state_dict", "DistributedDataParallel"),)
    BEFORE = (
        "import torch\n\n"
        "model = GPT(config)\n"
        "optimizer = torch.optim.AdamW(model.parameters())\n"
        "model.cuda()\n"
    )
    AFTER = (
        "import torch\n\n"
        "torch.__future__.set_swap_module_params_on_conversion(True)\n\n"
        "model = GPT(config)\n"
        "optimizer = torch.optim.AdamW(model.parameters())\n"
        "model.cuda()\n"  # XLA103 makes it model.to(torch_xla.device())
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.first_move: cst.Call | None = None
        self.first_move_top: cst.CSTNode | None = None  # the top-level statement that holds it
        self.cuda_move = False  # a move to CUDA (.cuda(), .to("cuda")) is among them
        self.switch: bool | None = None  # the file's own setting, when it has one
        self.wrapped = False  # a DistributedDataParallel wrap came before, in code order

    def visit_Call(self, node: cst.Call) -> None:
        name = self.qualname(node.func)
        if name == SWAP_SWITCH:
            value = call_arg(node, 0, "value")
            self.switch = not (value is not None and isinstance(value.value, cst.Name) and value.value.value == "False")
            if not self.switch and self.first_move is not None:
                self._flag_switched_off(node)
            return
        if name in DDP_CLASSES:
            self.wrapped = True
            return
        func = node.func
        if not isinstance(func, cst.Attribute) or name is not None:
            return
        swapping = self.switch or (self.switch is None and self.first_move is not None)
        if func.attr.value == "load_state_dict" and self.wrapped and swapping and self._is_module(func.value):
            self.flag(
                node,
                f"`{snippet(node)}` after the model was wrapped in DistributedDataParallel: with parameters "
                "swapped on conversion, load_state_dict swaps them too and raises while DDP holds "
                "them (\"Expected use_count of t1 to be 1 or 2\"); load the state dict before the DDP wrap",
            )
        elif self._moves_module(node):
            if func.attr.value == "cuda" or any(is_cuda_value(a.value) for a in node.args):
                self.cuda_move = True
            if self.first_move is not None:
                return
            self.first_move = node
            self.first_move_top = self.ctx.statements[0]
            if self.switch is False:
                self._flag_switched_off(node)

    def _flag_switched_off(self, node: cst.CSTNode) -> None:
        self.flag(
            node,
            f"`{snippet(node)}`: this file turns parameter swapping off, so a module moved to the XLA "
            "device gets new Parameter objects: optimizers built before the move update stale CPU "
            "tensors and tied weights come apart; move the module before anything holds its parameters",
        )

    def _moves_module(self, call: cst.Call) -> bool:
        """``model.cuda()``, ``Net().to(device)``, ``self.model.to(device)`` (matched by shape)."""
        method = call.func.attr.value
        if method == "to":
            where = call_arg(call, 0, "device")
            if where is None or not self._names_device(where.value):
                return False
        elif method != "cuda":
            return False
        statement = self.ctx.statements[-1] if self.ctx.statements else None
        result_dropped = isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Expr) and small.value is call for small in statement.body
        )
        return result_dropped or self._is_module(call.func.value)

    def _is_module(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Call):  # Net(...).to(device), nn.Linear(2, 2).cuda()
            name = self.qualname(value.func) or code_of(value.func)
            last = name.rsplit(".", 1)[-1]
            return last[:1].isupper() and not last.endswith("Tensor") and not name.startswith("torch.Tensor")
        return bool(MODULE_NAME.search(target_name(value)))

    def _names_device(self, value: cst.BaseExpression) -> bool:
        """A device the migration moves to: a CUDA one, or one named like a device.

        Not an explicit XLA device (``torch_xla.device()``, ``"xla"``): code already
        written for XLA is its author's, and the migrated moves were ``.cuda()`` or CUDA
        names when this rule saw them."""
        if is_cuda_value(value):
            return True
        if isinstance(value, cst.IfExp):
            return self._names_device(value.body) or self._names_device(value.orelse)
        if isinstance(value, cst.Call):
            kind = call_arg(value, 0, "type") if self.qualname(value.func) == "torch.device" else None
            return kind is not None and not is_other_device(kind.value) and string_value(kind.value) != "xla"
        name = target_name(value)
        return names_device(name) or bool(DEVICE_WORD.search(name))

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.first_move is None or self.switch is not None:
            return updated
        if not self.cuda_move and not any(p.fixed for p in self.ctx.pending):
            return updated  # nothing else migrated: code already written for XLA is its author's
        # After the last import line before the top-level statement that holds the first
        # move: every move runs after that statement starts (a move in a function runs
        # only once the function is defined), so after the switch.
        before = original.body[: next(i for i, s in enumerate(original.body) if s is self.first_move_top)]
        anchors = [s for s in before if _is_import_line(s)]
        body = list(updated.body)
        at = 0
        if anchors:
            at = next((i + 1 for i, s in enumerate(body) if s is anchors[-1]), None)
            if at is None:  # a rule changed an import line: cannot happen (imports are scheduled)
                return updated
        else:
            while at < len(body) and _is_docstring(body[at]):
                at += 1
        switch = cst.SimpleStatementLine(
            body=[cst.Expr(parse_expr(f"{SWAP_SWITCH}(True)"))],
            leading_lines=[cst.EmptyLine()] if at else [],
        )
        if at < len(body) and not body[at].leading_lines:
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])
        body.insert(at, switch)
        return self.replace(
            self.first_move,
            updated,
            updated.with_changes(body=body),
            f"`{snippet(self.first_move)}` moves a module to the XLA device, where it would get new "
            f"Parameter objects: `{SWAP_SWITCH}(True)` added before it runs, so optimizers built "
            "before the move and tied weights keep them (matched by shape)",
            imports=[TORCH],
        )


def _is_import_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )

"""XLA111: a device named at run time (``--device cuda``, ``DEVICE=cuda``) means the XLA
device once migrated (TorchTPU's ``tpu`` under ``--runtime torch-tpu``): the CUDA name is
mapped where the script reads it."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.device_values import (
    KEPT_CUDA_CHECKS,
    ON_RUNTIME,
    is_cuda_literal,
    names_device,
    string_imports,
    target_name,
)
from migrate_xla.rule import (
    SAFE,
    Rule,
    append_keyword,
    call_arg,
    code_of,
    snippet,
    string_value,
    subtree,
    words,
)

DEVICE_FLAG = re.compile(r"--[\w-]*device")
ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})
# The mapping: a CUDA name ("cuda", "cuda:2") becomes "xla" ("tpu" under torch-tpu); any other name ("cpu") stays
MAPS = 'startswith("cuda")'
MAPPING = re.compile(r"""['"]xla['"] if [\w.]+\.startswith\((['"])cuda\1\) else""")
TPU_MAPPING = re.compile(r"""['"]tpu['"] if [\w.]+\.startswith\((['"])cuda\1\) else""")
MAPPINGS = {"torch-xla": MAPPING, "torch-tpu": TPU_MAPPING}


class RunTimeDevice(Rule):
    """A device the user names at run time keeps working: ``cuda`` and ``cuda:N`` become ``xla``.

    Guide, "Device Handling": the CUDA device becomes the XLA device. Scripts that take the
    device from the command line (``parser.add_argument("--device", default="cpu")``, run
    as ``--device cuda`` or ``--device cuda:2``), from the environment (``os.environ.get(
    "DEVICE", "cuda")``) or from a config (``device = cfg["device"]``) get a CUDA name from
    their users' launch commands, docs and job files, which the migration does not see (so
    do the globals a configurator ``exec`` sets from ``--device=cuda`` or a config file, as
    nanoGPT's ``exec(open("configurator.py").read())`` does); the
    migrated script would crash at ``model.to(args.device)``. The name is mapped where it is
    read: the option gets a ``type=`` that argparse applies to the value given and to a
    string default (``"xla"`` added to a literal ``choices=`` list, so that the mapped value
    is one of them), and a device-named variable assigned from the environment or a config,
    or a device-named global given a string before such an ``exec``, is mapped on the line
    after the read. ``cuda:N`` loses its index as XLA101 drops it: each
    XLA process owns its device. Any other name (``cpu``) stays, so a run the user sends to
    the CPU still runs there. An option whose help or choices already name ``xla`` is its
    author's, written for XLA, and stays as it is.

    Under ``--runtime torch-tpu`` the CUDA name becomes ``"tpu"``, TorchTPU's device
    (``type=lambda name: "tpu" if name.startswith("cuda") else name``), with nothing to
    import; an option whose help or choices name ``tpu`` is its author's.
    """

    CODE = "XLA111"
    NAME = "run-time-device"
    SUMMARY = "a device named at run time (--device cuda, DEVICE=cuda) becomes 'xla' where the script reads it"
    FIX = SAFE
    # a --device option's flag; an environment or config read of a device-named value
    TRIGGERS = (
        r"""['"]--[\w-]*device""",
        words("environ", "getenv", "exec"),
        r"""\[\s*['"]\w*device['"]\s*\]""",
        r"""get\(\s*['"]\w*device['"]""",
    )
    CONTEXT = (r"""device\w*\s*=\s*[rRuU]?['"]""",)  # device = "cpu": a global a configurator exec may set
    BEFORE = 'parser.add_argument("--device", default="cpu")\ndevice = os.environ.get("DEVICE", "cpu")\n'
    AFTER = (
        'parser.add_argument("--device", default="cpu", type=lambda name: "xla" if name.startswith("cuda") else name)\n'
        'device = os.environ.get("DEVICE", "cpu")\ndevice = "xla" if str(device).startswith("cuda") else device\n'
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.options: dict[int, tuple[str, cst.BaseExpression | None]] = {}  # id(add_argument) -> flag, choices
        self.reads: dict[int, tuple[str, str]] = {}  # id(assignment) -> its target, where it reads
        self.marked: dict[int, tuple] = {}  # id(updated reader) -> original, updated, targets, source
        self.device_globals: dict[str, None] = {}  # module-level device names given a string, in order
        self.execs: dict[int, list[str]] = {}  # id(exec statement) -> the device globals it may set

    # -- argparse options ----------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        option = self._device_option(node)
        if option is not None:
            self.options[id(node)] = option
        kind = call_arg(node, None, "type") if option is None else None
        if option is not None or (kind is not None and self._is_mapping(kind.value, self.ctx.runtime)):
            choices = call_arg(node, None, "choices")
            if choices is not None:  # "cuda" stays a valid choice: it is mapped, not left behind
                self._keep(choices.value)

    @staticmethod
    def _is_mapping(node: cst.CSTNode, runtime: str) -> bool:
        return isinstance(node, cst.Lambda) and bool(MAPPINGS[runtime].search(code_of(node)))

    def _device_option(self, call: cst.Call) -> tuple[str, cst.BaseExpression | None] | None:
        """The flag and the literal choices (or None) of an ``add_argument`` call whose string
        value names a device, when this rule maps it; else None."""
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            return None
        if any(a.star for a in call.args):
            return None
        flags = [string_value(a.value) or "" for a in call.args if a.keyword is None]
        dest = call_arg(call, None, "dest")
        flag = next((f for f in flags if DEVICE_FLAG.fullmatch(f)), None)
        if flag is None and not (dest is not None and names_device(string_value(dest.value) or "")):
            return None
        if flag is None:
            flag = next((f for f in flags if f.startswith("--")), None) or code_of(dest.value)
        action = call_arg(call, None, "action")
        if call_arg(call, None, "nargs") is not None:
            return None
        if action is not None and string_value(action.value) != "store":
            return None
        kind = call_arg(call, None, "type")
        if kind is not None and self.qualname(kind.value) not in ("str", "torch.device"):
            if not (isinstance(kind.value, cst.Name) and kind.value.value == "str"):
                return None  # type=int (a GPU index), or a mapping of the user's (a second run: ours)
        device_type = self.ctx.api.device_type  # "xla", "tpu"
        default = call_arg(call, None, "default")
        if default is not None and (string_value(default.value) or "").startswith(device_type):
            return None  # written for XLA
        helps = call_arg(call, None, "help")
        if helps is not None and device_type in code_of(helps.value).lower():
            return None
        choices = call_arg(call, None, "choices")
        if choices is None:
            return flag, None
        if not isinstance(choices.value, (cst.List, cst.Tuple, cst.Set)):
            return None  # choices the file does not show: "xla" cannot be added to them
        values = [string_value(e.value) for e in choices.value.elements]
        if any(v is None for v in values) or any(v.startswith(device_type) for v in values):
            return None
        return flag, choices.value

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        option = self.options.pop(id(original), None)
        if option is None:
            return updated
        flag, choices = option
        quote = "'" if "'" in code_of(original.args[0].value)[:1] else '"'
        cuda, xla = f"{quote}cuda{quote}", f"{quote}{self.ctx.api.device_type}{quote}"
        name = f"{xla} if name.startswith({cuda}) else name"
        kind = call_arg(original, None, "type")
        if kind is not None and self.qualname(kind.value) == "torch.device":
            name = f"{code_of(kind.value)}({name})"
        mapping = cst.parse_expression(f"lambda name: {name}")
        self._keep(mapping)
        args = list(updated.args)
        if kind is not None:
            index = next(i for i, a in enumerate(original.args) if a is kind)
            args[index] = args[index].with_changes(value=mapping)
            replacement = updated.with_changes(args=args)
        else:
            replacement = append_keyword(updated, "type", mapping)
        added = ""
        if choices is not None:
            index = next(i for i, a in enumerate(original.args) if a.value is choices)
            listed = replacement.args[index].value
            elements = list(listed.elements)
            last = elements[-1]
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            elements[-1] = last.with_changes(comma=comma)
            elements.append(cst.Element(cst.SimpleString(xla), comma=last.comma))
            new_args = list(replacement.args)
            new_args[index] = new_args[index].with_changes(value=listed.with_changes(elements=elements))
            replacement = replacement.with_changes(args=new_args)
            added = f", and {xla} is one of its choices"
        return self.replace(
            original,
            updated,
            replacement,
            f"`{flag}` names the device at run time: a launch command's `{flag} cuda` (or `cuda:N`) "
            f"now means {self._device_named()} (`type=` maps it where argparse reads it{added}); `cpu` stays the CPU",
            imports=string_imports(self.ctx.api),
        )

    # -- device-named variables read from the environment or a config --------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not self.ctx.statements:
            return
        line = self.ctx.statements[-1]
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.body[0] is node):
            return
        target = node.targets[0].target
        if not isinstance(target, (cst.Name, cst.Attribute)) or not names_device(target_name(target)):
            return
        if code_of(node.value) == _mapping(code_of(target), self.ctx.api.device_type):
            self._keep(node.value)  # the mapping line of a first run: its "cuda" is no CUDA left behind
            return
        if isinstance(target, cst.Name) and self._module_level() and string_value(node.value) is not None:
            self.device_globals[target.value] = None  # device = "cuda": a global a configurator may set
        source = self._run_time_read(node.value)
        if source is not None:
            self.reads[id(node)] = (code_of(target), source)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        if self._is_mapping(node, self.ctx.runtime):
            self._keep(node)  # an option mapped by a first run

    def _device_named(self) -> str:
        return "the XLA device" if self.ctx.runtime == "torch-xla" else f"{ON_RUNTIME[self.ctx.runtime]}'s device"

    def _keep(self, node: cst.CSTNode) -> None:
        """The CUDA names of a mapping: XLA899 leaves them, they are what the launch may say."""
        kept = self.ctx.shared.setdefault(KEPT_CUDA_CHECKS, {})
        for found in subtree(node):
            if is_cuda_literal(found):
                kept[id(found)] = "the CUDA name a run-time device is mapped from"

    def _run_time_read(self, value: cst.BaseExpression) -> str | None:
        """Where ``value`` reads a device name the launch decides: "the environment", "a config"."""
        if isinstance(value, cst.Call):
            if self.qualname(value.func) in ENVIRONMENT_READS:
                return "the environment"
            key = call_arg(value, 0, None)
            if (
                isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "get"
                and key is not None
                and names_device(string_value(key.value) or "")
            ):
                return "a config"
            return None
        if isinstance(value, cst.Subscript) and len(value.slice) == 1:
            index = value.slice[0].slice
            if self.qualname(value.value) == "os.environ":
                return "the environment"
            if isinstance(index, cst.Index) and names_device(string_value(index.value) or ""):
                return "a config"
        return None

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        read = self.reads.pop(id(original), None)
        if read is not None:
            target, source = read
            self.marked[id(updated)] = (original, updated, [target], source)  # the node held: its id stays its own
        return updated

    # -- a configuration file or the command line run over the module's globals -----------------
    def _module_level(self) -> bool:
        return len(self.ctx.statements) == 1 and isinstance(self.ctx.statements[0], cst.SimpleStatementLine)

    def visit_Expr(self, node: cst.Expr) -> None:
        """``exec(open("configurator.py").read())``: nanoGPT's way to let ``--device=cuda`` or
        a config file set the module's globals; the device globals given a string before it
        are mapped after it."""
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "exec"):
            return
        if self._module_level() and self.device_globals and self.qualname(call.func) in (None, "exec"):
            self.execs[id(node)] = list(self.device_globals)

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        targets = self.execs.pop(id(original), None)
        if targets is not None:
            self.marked[id(updated)] = (original, updated, targets, "the configuration this `exec` runs")
        return updated

    def leave_Module(self, original, updated):
        if not self.marked:
            return updated
        body = list(updated.body)
        changed = False
        for at in range(len(body) - 1, -1, -1):
            line = body[at]
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
                continue
            mark = self.marked.pop(id(line.body[0]), None)
            if mark is None:
                continue
            reader, _, targets, source = mark
            following = [code_of(s).strip() for s in body[at + 1 : at + 1 + len(targets)]]
            device_type = self.ctx.api.device_type
            if following == [f"{target} = {_mapping(target, device_type)}" for target in targets]:
                continue  # mapped already (a second run)
            lines = []
            for target in targets:
                value = cst.parse_expression(_mapping(target, device_type))
                self._keep(value)
                assign = cst.Assign([cst.AssignTarget(cst.parse_expression(target))], value)
                lines.append(cst.SimpleStatementLine(body=[assign]))
            new_body = [*body[: at + 1], *lines, *body[at + 1 :]]
            names = ", ".join(f"`{target}`" for target in targets)
            body = self.replace(
                reader,
                body,
                new_body,
                f"`{snippet(reader)}` reads the device from {source} at run time: a launch that names `cuda` "
                f"(or `cuda:N`) now gets {self._device_named()} ({names} mapped on the next "
                f"line{'s' if len(lines) > 1 else ''}); `cpu` stays the CPU",
                imports=string_imports(self.ctx.api),
            )
            changed = changed or body is new_body
        return updated.with_changes(body=body) if changed else updated

    leave_IndentedBlock = leave_Module


def _mapping(target: str, device_type: str = "xla") -> str:
    """The value a device-named variable read at run time is given on the next line."""
    return f'"{device_type}" if str({target}).{MAPS} else {target}'

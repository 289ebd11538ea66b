"""XLA111: a device named at run time (``--device cuda``, ``DEVICE=cuda``) means the XLA
device once migrated (TorchTPU's ``tpu`` under ``--runtime torch-tpu``): the CUDA name is
mapped where the script reads it."""

from __future__ import annotations

import re

import libcst as cst

from codemods.shared.device_values import (
    AMP_DEVICE_CALLS,
    CUDA_STRING,
    KEPT_CUDA_CHECKS,
    ON_RUNTIME,
    is_cuda_literal,
    names_device,
    string_imports,
    target_name,
)
from codemods.shared.run_time_configs import RUN_TIME_CONFIGS, ConfigNames, names_one_device, plain
from migrate_xla.rule.api import (
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
# Where a device is read (a Hydra or OmegaConf config's read names its key)
ENVIRONMENT, CONFIG = "the environment", "a config"
# Calls whose first argument is a device: a device read at run time is mapped there
DEVICE_CALLS = {"torch.device": "type", "torch.set_default_device": "device"}


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

    A device read where the script takes it, not through a variable, is mapped in place, in
    the form the next-line mapping has: ``torch.device(os.environ.get("DEVICE", "cuda"))``
    becomes ``torch.device("xla" if str(os.environ.get("DEVICE", "xla")).startswith("cuda")
    else os.environ.get("DEVICE", "xla"))`` (XLA102 maps the default), and so does a read
    given to ``.to()``, to a ``device=`` argument, to ``torch.set_default_device`` or compared
    with a CUDA name (``if cfg.device == "cuda"``, whose ``"cuda"`` XLA104 makes ``"xla"``:
    it holds again for a config that says ``cuda``). A read is the environment's
    (``os.environ.get``, ``os.getenv``, ``os.environ[...]``), a config's by a string key
    (``config["device"]``, ``config.get("device", "cuda")`` for a dict loaded from JSON or
    YAML), or a Hydra or OmegaConf config's: an attribute of the config parameter of a
    ``@hydra.main`` function or of one annotated ``DictConfig``, of a name (or ``self.``
    attribute) given ``OmegaConf.load(...)``, ``hydra.compose(...)`` or a part of such a
    config (``cfg.training``), or of ``OmegaConf.load(...)`` itself: the YAML file says
    ``device: cuda``, and the user does not change it. The read is written twice, so only
    a read that gives the same value again is mapped in place (keys, names and literals;
    ``OmegaConf.load`` reads its file again). Which value is a config's is known by where it
    comes from, never by the name ``device`` alone: ``tensor.device``, ``model.device`` and
    ``next(model.parameters()).device`` are no config's and stay as they are; at ``.to()``
    the config key must name one device (``.to(cfg.dtype)`` stays). A variable not named
    for a device that is assigned such a read by a key that names one (``dev =
    os.environ["DEVICE"]``) is mapped on the next line as a device-named one is.

    Under ``--runtime torch-tpu`` the CUDA name becomes ``"tpu"``, TorchTPU's device
    (``type=lambda name: "tpu" if name.startswith("cuda") else name``), with nothing to
    import; an option whose help or choices name ``tpu`` is its author's.
    """

    CODE = "XLA111"
    NAME = "run-time-device"
    SUMMARY = "a device named at run time (--device cuda, DEVICE=cuda) becomes 'xla' where the script reads it"
    FIX = SAFE
    # a --device option's flag; an environment or config read of a device-named value; a Hydra or OmegaConf config
    TRIGGERS = (
        r"""['"]--[\w-]*device""",
        words("environ", "getenv", "exec", "hydra", "omegaconf", "OmegaConf", "DictConfig"),
        r"""\[\s*['"]\w*device['"]\s*\]""",
        r"""get\(\s*['"]\w*device['"]""",
    )
    CONTEXT = (
        r"""device\w*\s*=""",  # device = "cpu": a global a configurator exec may set; device=cfg.device
        r"\.\w*device\b",  # torch.device(cfg.device), .to(cfg.train_device): where a config's device is read
        CUDA_STRING,  # cfg.accelerator == "cuda"
    )
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
        self.configs: ConfigNames = ctx.shared.setdefault(RUN_TIME_CONFIGS, ConfigNames())
        self.sites: dict[int, tuple[str, str]] = {}  # id(read) -> where it is taken, where it reads
        self.parenthesized: set[int] = set()  # ids of the reads whose mapping needs parentheses there

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
        if option is None:
            self._device_taken(node)

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
            return self._map_read(original, updated)
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
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return
        self._bind(target, node.value)
        line = self.ctx.statements[-1] if self.ctx.statements else None
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.body[0] is node):
            return
        if type(node.value) is cst.IfExp and code_of(node.value) == _mapping(code_of(target), self.ctx.api.device_type):
            self._keep(node.value)  # the mapping line of a first run: its "cuda" is no CUDA left behind
            return
        name = target_name(target)
        if (
            names_device(name)
            and isinstance(target, cst.Name)
            and self._module_level()
            and string_value(node.value) is not None
        ):
            self.device_globals[target.value] = None  # device = "cuda": a global a configurator may set
        # not hip_devices = os.getenv("HIP_VISIBLE_DEVICES")
        named = names_device(name) and "devices" not in name.lower()
        source = self._run_time_read(node.value) if named else None
        if source is None:
            read = self._read(node.value, again=False)
            if read is not None and (named or names_one_device(read[1])):
                source = read[0]  # also dev = os.environ["DEVICE"], d = cfg.device: the key names the device
        if source is not None:
            self.reads[id(node)] = (code_of(target), source)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """Keep the names given a Hydra or OmegaConf config (``conf = OmegaConf.load(...)``,
        ``self.cfg = cfg``, ``train_cfg = cfg.training``)."""
        config = self.configs.holds_config(value, self.qualname)
        self.configs.bind(target, config)
        local = isinstance(target, cst.Name) and self.configs.scopes[-1][0] == "function"
        if config is not None and not local:
            self.ctx.need_whole_module()  # read in other units, which a slice may leave out with a binding in between

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.configs.enter_function(node, self.qualname)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self.configs.leave()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.configs.enter_class()

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        self.configs.leave()
        return updated

    # -- a device read where the script takes it: torch.device(...), .to(...), device=... --
    def _device_taken(self, call: cst.Call) -> None:
        """Note the run-time reads ``call`` takes as a device, to map them in place."""
        name = self.qualname(call.func)
        if name in AMP_DEVICE_CALLS:
            return  # autocast's and GradScaler's device: the mixed-precision rules' (XLA4xx)
        if name in DEVICE_CALLS:
            arg = call_arg(call, 0, DEVICE_CALLS[name])
            if arg is not None:
                self._site(arg.value, f"`{name}()`", parenthesize=False)
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
            arg = call_arg(call, 0, None)
            if arg is not None:  # .to(cfg.dtype) is no device: at .to() a config's key must name one
                self._site(arg.value, "`.to()`", parenthesize=False, one_device=True)
        for arg in call.args:
            if arg.keyword is not None and names_one_device(arg.keyword.value):
                self._site(arg.value, f"`{arg.keyword.value}=`", parenthesize=False)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """``cfg.device == "cuda"``: the read is mapped, so that the check XLA104 makes of it
        (``== "xla"``) holds for a config that says ``cuda``, and one it keeps for CUDA is off."""
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        if any(is_cuda_literal(o) for o in operands):
            for operand in operands:
                if not is_cuda_literal(operand):
                    self._site(operand, "the comparison", parenthesize=True)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if self._is_mapped(node):
            self._keep(node)  # mapped in place by a first run

    def _is_mapped(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.IfExp):
            return False
        bare = node.with_changes(lpar=(), rpar=())
        return code_of(bare) == _mapping(code_of(node.orelse), self.ctx.api.device_type)

    def _site(self, value: cst.BaseExpression, where: str, parenthesize: bool, one_device: bool = False) -> None:
        if self._is_mapped(value):
            return
        if isinstance(value, cst.IfExp):  # torch.device(cfg.device if ... else "cpu")
            self._site(value.body, where, parenthesize=True, one_device=one_device)
            self._site(value.orelse, where, parenthesize=True, one_device=one_device)
            return
        read = self._read(value, again=True)
        if read is None:
            return
        source, key, from_environment = read
        if not from_environment and (one_device or source == CONFIG) and not names_one_device(key):
            return  # a plain dict's value, or .to(cfg.dtype): a device only where the key says so
        self.sites[id(value)] = (where, source)
        if parenthesize:
            self.parenthesized.add(id(value))

    def _read(self, value: cst.BaseExpression, again: bool) -> tuple[str, str | None, bool] | None:
        """Where ``value`` reads a value the launch decides, its key, and whether it is the
        environment's; None when it is no such read. ``again``: only a read that gives the
        same value when it is evaluated again (it is written twice in place)."""
        if isinstance(value, cst.Call) and self.qualname(value.func) in ENVIRONMENT_READS:
            if again and not all(plain(a.value) and not a.star for a in value.args):
                return None
            key = call_arg(value, 0, "key")
            return ENVIRONMENT, string_value(key.value) if key is not None else None, True
        if isinstance(value, cst.Subscript) and self.qualname(value.value) == "os.environ" and len(value.slice) == 1:
            index = value.slice[0].slice
            if not isinstance(index, cst.Index) or (again and not plain(index.value)):
                return None
            return ENVIRONMENT, string_value(index.value), True
        if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
            # os.environ.get("DEVICE") or "cuda": mapped whole
            operands = [value.left, value.right]
            reads = [self._read(o, again) for o in operands]
            found = next((r for r in reads if r is not None), None)
            if found is None or (again and not all(r is not None or plain(o) for r, o in zip(reads, operands))):
                return None
            return found
        read = self.configs.read(value, self.qualname)
        if read is None:
            return None
        source = CONFIG if read.config is None else f"{read.config}'s `{read.key}`"
        return source, read.keys[-1], False

    def _map_read(self, original: cst.CSTNode, updated: cst.CSTNode):
        """A run-time read where the script takes a device, mapped in place."""
        site = self.sites.pop(id(original), None)
        if site is None:
            return updated
        where, source = site
        read = code_of(updated)
        if "\n" in read and not (read.startswith("(") and read.endswith(")")):
            read = f"({read})"  # os.environ.get("DEVICE") or\n "cuda": its lines held together out of its call
        mapped = _mapping(read, self.ctx.api.device_type)
        if id(original) in self.parenthesized:
            mapped = f"({mapped})"
        replacement = cst.parse_expression(mapped)
        self._keep(replacement)
        return self.replace(
            original,
            updated,
            replacement,
            f"`{snippet(original)}` reads the device from {source} at run time: a launch or config that "
            f"names `cuda` (or `cuda:N`) now gets {self._device_named()} where {where} takes it, mapped in "
            f"place; `cpu` stays the CPU",
            imports=string_imports(self.ctx.api),
        )

    leave_Attribute = leave_Subscript = leave_BooleanOperation = _map_read

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
        """Where ``value``, given to a device-named variable, reads a device name the launch
        decides: "the environment", "a config"."""
        if self.configs.passed_by_keyword(value):
            return None  # kwargs.get("device"): the caller's argument
        if isinstance(value, cst.Call):
            if self.qualname(value.func) in ENVIRONMENT_READS:
                return ENVIRONMENT
            key = call_arg(value, 0, None)
            if (
                isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "get"
                and key is not None
                and names_one_device(string_value(key.value))
            ):
                return CONFIG
            return None
        if isinstance(value, cst.Subscript) and len(value.slice) == 1:
            index = value.slice[0].slice
            if self.qualname(value.value) == "os.environ":
                return ENVIRONMENT
            if isinstance(index, cst.Index) and names_one_device(string_value(index.value)):
                return CONFIG
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

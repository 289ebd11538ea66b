"""Configurations read at run time: which names hold a Hydra or OmegaConf config (``cfg`` in
``@hydra.main(...) def main(cfg: DictConfig)``, ``conf = OmegaConf.load("config.yaml")``,
``self.cfg = cfg``), and what a value read from a config is (``cfg.training.device``,
``config["device"]``, ``config.get("device", "cuda")``).

Shared by devices (XLA111 keeps the config names as it walks a file, in
``ctx.shared[RUN_TIME_CONFIGS]``, and maps a CUDA device read from a config where the script
takes it) and batch_moves (BatchMoveProof gives no MpDeviceLoader a device read from a
config: XLA111 maps that read at each move, where a loader built from the read would not
see the mapping)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from codemods.shared.statements import dotted
from migrate_xla.rule.api import FileContext, string_value

# ctx.shared key: the ConfigNames of the file, kept by XLA111
RUN_TIME_CONFIGS = "run-time-configs"

HYDRA = "the Hydra config"
OMEGACONF = "an OmegaConf config"
KEYWORDS = ""  # a function's **kwargs: what its caller passes, no config of the launch
# What these calls return is a config read from files or the command line at run time
CONFIG_LOADERS = {
    "omegaconf.OmegaConf.load": OMEGACONF,
    "omegaconf.OmegaConf.create": OMEGACONF,
    "omegaconf.OmegaConf.merge": OMEGACONF,
    "omegaconf.OmegaConf.structured": OMEGACONF,
    "omegaconf.OmegaConf.from_cli": OMEGACONF,
    "omegaconf.OmegaConf.from_dotlist": OMEGACONF,
    "hydra.compose": HYDRA,
}
HYDRA_MAIN = "hydra.main"
DICT_CONFIG = frozenset({"omegaconf.DictConfig", "omegaconf.dictconfig.DictConfig"})

# A dict of keyword arguments by its name: kwargs, new_kwargs, to_kwargs
KEYWORDS_NAME = re.compile(r"(\w*_)?kwargs", re.IGNORECASE)
# A key that names one device: device, train_device, TORCH_DEVICE; not devices, device_ids, num_devices
ONE_DEVICE = re.compile(r"(\w*_)?device", re.IGNORECASE)


def names_one_device(key: str | None) -> bool:
    return key is not None and bool(ONE_DEVICE.fullmatch(key))


@dataclass(frozen=True)
class ConfigRead:
    """A value read from a config: where from (``HYDRA``, ``OMEGACONF``, or None for a
    plain dict or object that holds it under a string key) and the keys read, in order."""

    config: str | None
    keys: tuple[str, ...]

    @property
    def key(self) -> str:
        return ".".join(self.keys)


class ConfigNames:
    """The names that hold a Hydra or OmegaConf config, scope by scope, as a walk meets
    them: a ``@hydra.main`` function's config parameter, a parameter annotated
    ``DictConfig``, a name (or ``self.name``) assigned a loaded config or a part of one."""

    def __init__(self) -> None:
        # (kind, name -> HYDRA, OMEGACONF, KEYWORDS, or None for a name bound to something else there)
        self.scopes: list[tuple[str, dict[str, str | None]]] = [("module", {})]

    def enter_function(self, node: cst.FunctionDef, qualname: Callable[[cst.CSTNode], str | None]) -> None:
        names: dict[str, str | None] = {}
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        hydra = any(
            qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) == HYDRA_MAIN
            for d in node.decorators
        )
        if isinstance(node.params.star_kwarg, cst.Param):
            names[node.params.star_kwarg.name.value] = KEYWORDS
        if hydra and params:
            names[params[0].name.value] = HYDRA
        for param in params:
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is not None and param.name.value not in names:
                if qualname(annotation) in DICT_CONFIG or string_value(annotation) == "DictConfig":
                    names[param.name.value] = OMEGACONF
            names.setdefault(param.name.value, None)  # any other parameter hides a config of its name outside
        self.scopes.append(("function", names))

    def enter_class(self) -> None:
        self.scopes.append(("class", {}))

    def leave(self) -> None:
        if len(self.scopes) > 1:
            self.scopes.pop()

    def bind(self, target: cst.BaseExpression, config: str | None) -> None:
        """``target = value``: ``config`` is what the value is (HYDRA, OMEGACONF), or None."""
        name = dotted(target)
        if name is None:
            return
        scopes = self.scopes
        if name.startswith("self."):  # an attribute of the instance: the class's
            scopes = [s for s in self.scopes if s[0] == "class"][-1:] or self.scopes
        scopes[-1][1][name] = config  # None: no config here, whatever an outer scope's name holds

    def config_of(self, name: str) -> str | None:
        """HYDRA or OMEGACONF for a config name, KEYWORDS for a function's ``**kwargs``, else None
        (the nearest scope that binds the name decides: a parameter hides a config of its name)."""
        for _, names in reversed(self.scopes):
            if name in names:
                return names[name]
        return None

    def read(self, node: cst.CSTNode, qualname: Callable[[cst.CSTNode], str | None]) -> ConfigRead | None:
        """What ``node`` reads from a config, if it reads a value from one by its keys:
        ``cfg.training.device`` (a config name's), ``OmegaConf.load(path).device``,
        ``config["train"]["device"]`` or ``config.get("device", "cuda")`` (any name's, when
        read by a string key last). None for anything else, among them ``tensor.device``
        and ``next(model.parameters()).device``."""
        found = _chain(node)
        if found is None:
            return None
        root, steps = found
        if isinstance(root, cst.Call):
            config = CONFIG_LOADERS.get(qualname(root.func) or "")
            if config is None or not all(plain(a.value) for a in root.args):
                return None
            return ConfigRead(config, tuple(key for key, _ in steps)) if steps else None
        parts = [root.value]
        for key, attribute in steps:
            if not attribute:
                break
            parts.append(key)
        if any(KEYWORDS_NAME.fullmatch(part) for part in parts):
            return None  # kwargs["device"], node.kwargs.get("device"): a call's arguments
        for length in range(len(parts), 0, -1):  # the longest config name the chain starts with
            config = self.config_of(".".join(parts[:length]))
            if config == KEYWORDS:
                return None  # kwargs["device"]: the caller's argument
            if config is not None:
                keys = tuple(key for key, _ in steps[length - 1 :])
                return ConfigRead(config, keys) if keys else None
        if steps and not steps[-1][1]:  # config["device"], args.config.get("device")
            return ConfigRead(None, tuple(key for key, _ in steps))
        return None

    def passed_by_keyword(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` reads from a call's keyword arguments (``kwargs.get("device")``,
        ``node.kwargs["device"]``): what a caller passes, no config of the launch."""
        while True:
            if isinstance(node, cst.Attribute) and KEYWORDS_NAME.fullmatch(node.attr.value):
                return True
            if isinstance(node, (cst.Attribute, cst.Subscript)):
                node = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                node = node.func.value
            else:
                break
        return isinstance(node, cst.Name) and (
            self.config_of(node.value) == KEYWORDS or bool(KEYWORDS_NAME.fullmatch(node.value))
        )

    def holds_config(self, value: cst.BaseExpression, qualname: Callable[[cst.CSTNode], str | None]) -> str | None:
        """What ``value`` is when it is a config (to bind to its target): a loaded one, or a
        config name's part (``cfg.training``; not its device, ``cfg.device``, a value)."""
        if isinstance(value, cst.Name):
            return self.config_of(value.value) or None
        if isinstance(value, cst.Call) and (qualname(value.func) or "") in CONFIG_LOADERS:
            return CONFIG_LOADERS[qualname(value.func)]
        read = self.read(value, qualname)
        if read is None or "device" in read.keys[-1].lower():
            return None
        return read.config


def plain(node: cst.CSTNode) -> bool:
    """A value that reading again gives again: a literal, a name, an attribute of one, or an
    item of one by a literal key (``config["device"]``)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Subscript):
        index = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(index, cst.Index) and string_value(index.value) is not None and plain(node.value)
    return dotted(node) is not None


def _chain(node: cst.CSTNode) -> tuple[cst.BaseExpression, list[tuple[str, bool]]] | None:
    """The root and the steps of a read by keys: ``cfg.train["device"]`` is ``cfg`` and
    ``[("train", True), ("device", False)]`` (True: an attribute; False: a subscript or a
    ``.get(key[, default])``). None unless the root is a name or a call."""
    steps: list[tuple[str, bool]] = []
    while True:
        if isinstance(node, cst.Attribute):
            steps.append((node.attr.value, True))
            node = node.value
        elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = string_value(node.slice[0].slice.value)
            if key is None:
                return None
            steps.append((key, False))
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "get"
            and 1 <= len(node.args) <= 2
            and not any(a.star or a.keyword is not None for a in node.args)
            and string_value(node.args[0].value) is not None
            and all(plain(a.value) for a in node.args[1:])
        ):
            steps.append((string_value(node.args[0].value), False))
            node = node.func.value
        else:
            break
    if not isinstance(node, (cst.Name, cst.Call)):
        return None
    steps.reverse()
    return node, steps


def reads_run_time_config(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` reads a value from a Hydra or OmegaConf config: XLA111 maps a device
    read so where the script takes it (``.to(cfg.device)``), and nowhere else."""
    names = ctx.shared.get(RUN_TIME_CONFIGS)
    if names is None:
        return False
    read = names.read(node, ctx.qualname)
    return read is not None and read.config is not None

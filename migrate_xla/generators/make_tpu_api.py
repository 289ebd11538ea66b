"""Generates ``tpu_api.py``, torch_tpu's public names and load-time facts, from its wheel:

    pip download torch-tpu==0.2.0 --no-deps -d /tmp/tpu
    .venv/bin/python -m migrate_xla.generators.make_tpu_api /tmp/tpu/torch_tpu-0.2.0-*.whl     (or: make tpu-api)

The wheel is read as a zip and its sources parsed with ``ast``; nothing of torch_tpu is
imported (it needs torch >= 2.11 and a TPU's libtpu). Read from it:

- ``torch_tpu/_internal/public_api.py``: ``_PUBLIC_MODULES``, the one table of the public
  modules ``torch.tpu``, ``torch.tpu.ops``, ... and the names each exports;
- ``*.dist-info/METADATA``: the version, Requires-Python and the torch versions of Requires-Dist;
- ``*.dist-info/entry_points.txt``: the entry point through which torch loads torch_tpu by
  itself (``torch.backends``: device-backend autoload);
- ``torch_tpu/_loader.py``: the device name (``assert device == "tpu"`` before it renames
  PrivateUse1) and the process-group backends it registers;
- ``torch_tpu/_internal/compile/__init__.py``: the ``torch.compile`` backend's name;
- ``torch_tpu/_internal/device/_device_module.py``: autocast's default dtype.

A fact that is not where it was is an error: the wheel changed, and so may the migration.
tests/test_tpu_api.py checks the generator on a small wheel it makes, and (slow) that
``tpu_api.py`` is what the wheel on PyPI gives.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import NamedTuple

from migrate_xla.generators.write import GENERATED, write_generated

TABLE = GENERATED / "tpu_api.py"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.make_tpu_api WHEEL  (or: make tpu-api)"
PUBLIC_API = "torch_tpu/_internal/public_api.py"
LOADER = "torch_tpu/_loader.py"
COMPILE = "torch_tpu/_internal/compile/__init__.py"
DEVICE_MODULE = "torch_tpu/_internal/device/_device_module.py"


class WheelError(Exception):
    """A wheel that does not hold what the generator reads; the message says what and where."""


class TpuApi(NamedTuple):
    """What ``tpu_api.py`` records of a torch_tpu wheel."""

    version: str
    requires_python: str
    requires_torch: str
    entry_point: tuple[str, str, str]  # (group, name, object reference)
    device: str
    process_group_backends: tuple[str, ...]
    compile_backend: str
    autocast_dtype: str
    public_modules: dict[str, frozenset[str]]


def read_wheel(wheel: Path) -> TpuApi:
    """The facts of the torch_tpu wheel at ``wheel``, read without importing it."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise WheelError(f"{wheel}: not a readable wheel: {exc}") from None
    with archive:
        names = archive.namelist()

        def text(name: str) -> str:
            if name not in names:
                raise WheelError(f"{wheel}: no {name}")
            return archive.read(name).decode("utf-8")

        info = next((n.split("/")[0] for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)), None)
        if info is None:
            raise WheelError(f"{wheel}: no *.dist-info/METADATA")
        metadata = HeaderParser().parsestr(text(f"{info}/METADATA"))
        torch = [r for r in metadata.get_all("Requires-Dist", []) if re.match(r"torch\s*[<>=!~(]", r)]
        if len(torch) != 1:
            raise WheelError(f"{wheel}: METADATA: expected one Requires-Dist of torch, found {torch}")
        return TpuApi(
            version=metadata["Version"],
            requires_python=metadata.get("Requires-Python", ""),
            requires_torch=re.sub(r"^torch\s*", "", torch[0].split(";")[0]).strip(" ()"),
            entry_point=_entry_point(text(f"{info}/entry_points.txt"), f"{wheel}: entry_points.txt"),
            device=_device(ast.parse(text(LOADER)), f"{wheel}: {LOADER}"),
            process_group_backends=_process_group_backends(ast.parse(text(LOADER)), f"{wheel}: {LOADER}"),
            compile_backend=_compile_backend(ast.parse(text(COMPILE)), f"{wheel}: {COMPILE}"),
            autocast_dtype=_autocast_dtype(ast.parse(text(DEVICE_MODULE)), f"{wheel}: {DEVICE_MODULE}"),
            public_modules=_public_modules(ast.parse(text(PUBLIC_API)), f"{wheel}: {PUBLIC_API}"),
        )


def _entry_point(text: str, where: str) -> tuple[str, str, str]:
    """The one entry point of the group torch loads device backends from."""
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # names keep their case
    parser.read_string(text)
    if "torch.backends" not in parser or len(parser["torch.backends"]) != 1:
        raise WheelError(f"{where}: expected one entry point in [torch.backends]")
    ((name, value),) = parser["torch.backends"].items()
    return ("torch.backends", name, value.strip())


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _calls(tree: ast.AST, name: str):
    """The calls of a function or method called ``name`` (``f(...)``, ``a.b.f(...)``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                isinstance(func, ast.Attribute) and func.attr == name
            ):
                yield node


def _device(tree: ast.AST, where: str) -> str:
    """The device the loader renames PrivateUse1 to: ``assert device == "tpu"`` ("Only "tpu" is supported")."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "device"
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Eq)
            and _string(node.test.comparators[0])
        ):
            if not any(True for _ in _calls(tree, "rename_privateuse1_backend")):
                break
            return _string(node.test.comparators[0])
    raise WheelError(f'{where}: no `assert device == "..."` before rename_privateuse1_backend')


def _process_group_backends(tree: ast.AST, where: str) -> tuple[str, ...]:
    """The names ``torch.distributed.Backend.register_backend`` gets, in order."""
    found = [
        _string(call.args[0])
        for call in _calls(tree, "register_backend")
        if isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Attribute)
        and call.func.value.attr == "Backend"
        and call.args
        and _string(call.args[0])
    ]
    if not found:
        raise WheelError(f"{where}: no Backend.register_backend call naming a process-group backend")
    return tuple(found)


def _compile_backend(tree: ast.AST, where: str) -> str:
    """The ``name=`` of the dynamo registry's ``register_backend`` call."""
    for call in _calls(tree, "register_backend"):
        name = next((_string(k.value) for k in call.keywords if k.arg == "name"), None)
        if name:
            return name
    raise WheelError(f"{where}: no register_backend(..., name=...) call")


def _autocast_dtype(tree: ast.AST, where: str) -> str:
    """The default of ``_autocast_dtype`` (``torch.bfloat16``): its dtype's name."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "_autocast_dtype"
            and isinstance(node.value, ast.Attribute)
        ):
            return node.value.attr
    raise WheelError(f"{where}: no `_autocast_dtype: ... = torch.<dtype>`")


def _public_modules(tree: ast.Module, where: str) -> dict[str, frozenset[str]]:
    """``_PUBLIC_MODULES``: each public module and the names of its ``exports``."""
    table = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(isinstance(t, ast.Name) and t.id == "_PUBLIC_MODULES" for t in _targets(node))
        ),
        None,
    )
    if not isinstance(table, ast.Dict):
        raise WheelError(f"{where}: no `_PUBLIC_MODULES = {{...}}` at module level")
    modules: dict[str, frozenset[str]] = {}
    for key, spec in zip(table.keys, table.values):
        module = _string(key)
        if module is None or not isinstance(spec, ast.Call):
            raise WheelError(f'{where}: line {spec.lineno}: expected "module": ModuleSpec(...)')
        exports = next((k.value for k in spec.keywords if k.arg == "exports"), None)
        if exports is None:
            modules[module] = frozenset()
            continue
        if not isinstance(exports, ast.Dict) or not all(_string(k) for k in exports.keys):
            raise WheelError(f'{where}: line {spec.lineno}: {module}: expected exports={{"name": ...}}')
        modules[module] = frozenset(_string(k) for k in exports.keys)
    return modules


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _py(value: str | tuple[str, ...]) -> str:
    """A string or a tuple of strings as ``ruff format`` writes it (double quotes)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_py, value)) + ("," if len(value) == 1 else "") + ")"
    return json.dumps(value)


def table_text(api: TpuApi) -> str:
    """The text of ``tpu_api.py`` for these facts, formatted as ``ruff format`` would."""
    modules = "".join(
        f"    {_py(module)}: frozenset(\n        {{\n"
        + "".join(f"            {_py(name)},\n" for name in sorted(names))
        + "        }\n    ),\n"
        if names
        else f"    {_py(module)}: frozenset(),\n"
        for module, names in sorted(api.public_modules.items())
    )
    return f'''"""torch_tpu's public API and what loading it does, as its wheel (torch_tpu {api.version}) declares them.

Generated from the wheel by migrate_xla/generators/make_tpu_api.py, which reads it without importing
torch_tpu; do not edit. Regenerate it for another release of torch_tpu:

    {REGENERATE}
"""

TORCH_TPU_VERSION = {_py(api.version)}
REQUIRES_PYTHON = {_py(api.requires_python)}
# Requires-Dist: the torch releases this torch_tpu runs with
REQUIRES_TORCH = {_py(api.requires_torch)}
# torch loads torch_tpu by itself through this entry point (group, name, object): device-backend
# autoload, which TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns off; no `import torch_tpu` is needed
ENTRY_POINT = {_py(api.entry_point)}
# The device type PrivateUse1 is renamed to: torch.device({_py(api.device)}), .to({_py(api.device)}),
# and the methods torch generates for it (Tensor.{api.device}(), Tensor.is_{api.device}, Module.{api.device}())
DEVICE = {_py(api.device)}
# The process-group backends it registers (init_process_group(backend=...)), for device type DEVICE
PROCESS_GROUP_BACKENDS = {_py(api.process_group_backends)}
# torch.compile(model, backend=...)
COMPILE_BACKEND = {_py(api.compile_backend)}
# autocast's default dtype on DEVICE
AUTOCAST_DTYPE = {_py(api.autocast_dtype)}

# Each public module (torch_tpu/_internal/public_api.py's _PUBLIC_MODULES) and the names it
# exports; a module's submodules in this table are its attributes too.
PUBLIC_MODULES = {{
{modules}}}


def is_public(qualname: str) -> bool:
    """Whether ``qualname`` (``torch.tpu.synchronize``, ``torch.tpu.ops``) is a public module or name."""
    module, _, name = qualname.rpartition(".")
    return qualname in PUBLIC_MODULES or name in PUBLIC_MODULES.get(module, ())
'''


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    try:
        text = table_text(read_wheel(Path(argv[0])))
    except WheelError as exc:
        print(f"make_tpu_api: {exc}", file=sys.stderr)
        return 1
    return write_generated(TABLE, text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The runtimes (docs/runtimes.md): each example migrated to each runtime is that runtime's code.

Under either runtime, every CUDA reference left in the output is flagged (a TODO stands
above its statement). Under torch-tpu the output names no torch_xla, and every
``torch.tpu`` name it uses is one torch_tpu exports (migrate_xla/generated/tpu_api.py, generated from
its wheel). That the migrated examples also train as the originals did is verify's part
(tests/test_verify_examples.py).
"""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest

from conftest import EXAMPLES, FIXTURE_CASES, ROOT, fixture_options
from migrate_xla.app.run import migrate_code, options_for
from migrate_xla.generated import tpu_api
from migrate_xla.rule.findings import RUNTIMES

TODO = "# TODO(xla-migrate):"
# CUDA device names, as strings: "cuda", "cuda:0", "cuda:{}"
CUDA_STRING = re.compile(r"cuda(:(\d+|\{\w*\}|%d))?$")


@cache
def migrated(example, runtime: str) -> str:
    unsafe = "# verify-unsafe-fixes" in example.read_text()
    code, _ = migrate_code(example.read_text(), options_for(runtime=runtime, unsafe_fixes=unsafe), str(example))
    return code


def dotted(node: ast.AST) -> str | None:
    """``torch.cuda.amp.GradScaler`` for that attribute chain, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def cuda_references(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, text)`` of each CUDA API a module still uses: ``torch.cuda.X``,
    ``torch.backends.cudnn``, ``.cuda()``, a CUDA device string, the NCCL backend. A test of
    a value's device (``x.is_cuda``, ``device_type == "cuda"``, ``name.startswith("cuda")``)
    is no use of CUDA: it is false on the TPU, and the code it guards stays off (docs/decisions.md)."""
    tests = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        or isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "startswith"
        for part in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        name = dotted(node) if isinstance(node, ast.Attribute) else None
        if name and re.match(r"torch\.(cuda|backends\.cudnn)\b", name):
            found.append((node.lineno, name))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
            found.append((node.lineno, ".cuda()"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in tests:
            if CUDA_STRING.match(node.value) or node.value == "nccl":
                found.append((node.lineno, repr(node.value)))
    return found


def flagged_lines(code: str, tree: ast.Module) -> set[int]:
    """The lines of the statements a TODO stands above (in the comment lines just above them)."""
    lines = code.splitlines()
    flagged = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        above = node.lineno - 2  # index of the line above the statement
        while above >= 0 and lines[above].strip().startswith("#"):
            if lines[above].strip().startswith(TODO):
                end = node.body[0].lineno - 1 if hasattr(node, "body") and node.body else node.end_lineno
                flagged.update(range(node.lineno, end + 1))
                break
            above -= 1
    return flagged


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_cuda_reference_left_is_flagged(example, runtime):
    code = migrated(example, runtime)
    tree = ast.parse(code)
    flagged = flagged_lines(code, tree)
    left = [f"{line}: {text}" for line, text in cuda_references(tree) if line not in flagged]
    assert not left, f"CUDA references left without a TODO above them under {runtime}:\n" + "\n".join(left)


def tpu_names(tree: ast.Module) -> set[str]:
    """Every ``torch.tpu.X`` (``torch.tpu.ops.Y``) the code names, as the longest chain under torch.tpu."""
    names = set()
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            name = dotted(node) or ""
            if name.startswith("torch.tpu."):
                names.add(name)
    return names


def exported(name: str) -> bool:
    """Whether torch_tpu exports ``name`` (``torch.tpu.synchronize``, ``torch.tpu.Stream.wait_stream``
    counts as ``torch.tpu.Stream``): its longest module prefix in the table exports the next part."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 1, -1):
        module = ".".join(parts[:cut])
        if module in tpu_api.PUBLIC_MODULES:
            return parts[cut] in tpu_api.PUBLIC_MODULES[module] or ".".join(parts[: cut + 1]) in tpu_api.PUBLIC_MODULES
    return False


TPU_OUTPUTS = [("example", example) for example in EXAMPLES] + [
    ("fixture", case) for case in FIXTURE_CASES if "runtime=torch-tpu" in case.read_text().splitlines()[0]
]


@pytest.mark.parametrize(("kind", "path"), TPU_OUTPUTS, ids=lambda v: v if isinstance(v, str) else v.stem)
def test_torch_tpu_output_uses_only_torch_tpus_public_api(kind, path):
    if kind == "example":
        code = migrated(path, "torch-tpu")
    else:
        code, _ = migrate_code(path.read_text(), fixture_options(path), str(path))
    tree = ast.parse(code)
    unknown = sorted(name for name in tpu_names(tree) if not exported(name))
    assert not unknown, f"torch.tpu names torch_tpu {tpu_api.TORCH_TPU_VERSION} does not export: {unknown}"
    imports = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        and any(a.name.startswith("torch_xla") for a in node.names)
        or isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("torch_xla")
    ]
    assert not imports, "torch-tpu output imports torch_xla"
    assert "torch_xla." not in code and "xm." not in code


def test_the_api_check_knows_an_unexported_name():
    assert exported("torch.tpu.synchronize") and exported("torch.tpu.Stream.wait_stream")
    assert not exported("torch.tpu.memory_allocated") and not exported("torch.tpu.nvtx.range_push")
    assert tpu_names(ast.parse("torch.tpu.Stream().wait_stream(s)\nx = torch.tpu.manual_seed(0)\n")) == {
        "torch.tpu.Stream",
        "torch.tpu.manual_seed",
    }


def test_runtimes_md_shows_what_each_runtime_writes():
    """docs/runtimes.md's side-by-side: its first block migrated under each runtime is the next two."""
    text = (ROOT / "docs" / "runtimes.md").read_text()
    before, xla, tpu = re.findall(r"```python\n(.*?)```", text, re.S)
    assert migrate_code(before, options_for())[0] == xla
    assert migrate_code(before, options_for(runtime="torch-tpu"))[0] == tpu


def test_every_family_has_torch_tpu_fixtures():
    """What each family does under torch-tpu is documented by snapshots (or _noop fixtures, where
    it does nothing); the XLA0xx families are about the input itself, the same under both."""
    from migrate_xla.engine import registry

    families = {registry.family(rule) for rule in registry.all_rules() if not rule.CODE.startswith("XLA0")}
    covered = {path.parent.name for _, path in TPU_OUTPUTS}
    assert families <= covered, f"families without a `# fixture: runtime=torch-tpu` case: {sorted(families - covered)}"

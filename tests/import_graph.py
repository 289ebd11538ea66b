"""The import graph of the project's packages (migrate_xla/, codemods/), read from their
source with ``ast``: nothing is imported, so it works on a tree that does not import.

    .venv/bin/python tests/import_graph.py             every module's imports of the project, by package
    .venv/bin/python tests/import_graph.py --cycles    only the cycles (exit status 1 if an import-time one)
    .venv/bin/python -m tests.import_graph             the same, run as a module from the repository root

Each import is one of three kinds: ``top`` runs when the module is imported (module and
class level), ``deferred`` runs when a function runs (an import inside it, most often to
keep LibCST or the rules out of a run that does not need them; also a module named in a
string, which ``importlib.import_module`` loads: cli.py's LAZY_COMMANDS), ``typing`` only
under ``if TYPE_CHECKING:``. A cycle of ``top`` imports can break an import; a cycle through a
deferred import cannot, but still ties two modules into one. tests/test_architecture.py
checks the layout's rules with it.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("migrate_xla", "codemods")
KINDS = ("top", "deferred", "typing")


@dataclass(frozen=True)
class Import:
    """One import of a project module: ``importer`` imports ``module`` (the names it takes
    from it, none for ``import module``) at ``line``, of one of KINDS."""

    importer: str
    module: str
    names: tuple[str, ...]
    line: int
    kind: str


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of PACKAGES: its dotted name (a package's is its ``__init__.py``'s) -> its file."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(body: list[ast.stmt], kind: str):
    """(import statement, kind) for every import in ``body``, however deep."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, kind
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _statements(node.body, "deferred" if kind == "top" else kind)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _statements(node.body, "typing")
            yield from _statements(node.orelse, kind)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _statements([n for n in inner if isinstance(n, ast.AST)], kind)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """The imports of project modules that module ``name`` (at ``path``) makes. ``from
    package import module`` is an import of that module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, kind in _statements(tree.body, "top"):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    found.append(Import(name, alias.name, (), node.lineno, kind))
            continue
        base = node.module or ""
        if node.level:  # relative: from . import x, from ..rule import Rule
            anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        if base.split(".")[0] not in PACKAGES:
            continue
        taken = []
        for alias in node.names:
            if f"{base}.{alias.name}" in known:
                found.append(Import(name, f"{base}.{alias.name}", (), node.lineno, kind))
            else:
                taken.append(alias.name)
        if taken:
            found.append(Import(name, base, tuple(taken), node.lineno, kind))
    for node in ast.walk(tree):  # a module named in a string, loaded by importlib when it is needed
        if isinstance(node, ast.Constant) and node.value in known and "." in node.value and node.value != name:
            found.append(Import(name, node.value, (), node.lineno, "deferred"))
    return found


# A generated table that names modules another module loads: the registry imports the module
# of each rule a file wakes, named in the rule index (registry.rules_of).
LOADED_BY = {"migrate_xla.generated.rule_index": "migrate_xla.engine.registry"}


def graph(root: Path = ROOT) -> dict[str, list[Import]]:
    """Every project module -> the imports of project modules it makes (the modules a table
    of LOADED_BY names are its loader's deferred imports)."""
    known = modules(root)
    imports = {name: imports_of(name, path, known) for name, path in known.items()}
    for table, loader in LOADED_BY.items():
        if table in imports and loader in imports:
            named = [i for i in imports[table] if i.kind == "deferred"]
            imports[table] = [i for i in imports[table] if i.kind != "deferred"]
            imports[loader] += [Import(loader, i.module, (), 0, "deferred") for i in named]
    return imports


def cycles(imports: dict[str, list[Import]], kinds=("top",)) -> list[list[str]]:
    """The import cycles through imports of ``kinds``: each a sorted list of the modules
    that import one another (a strongly connected component of two or more, or a module
    that imports itself)."""
    edges = {
        name: sorted({i.module for i in found if i.kind in kinds and i.module in imports})
        for name, found in imports.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges[node]:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def package_of(module: str, imports: dict[str, list[Import]]) -> str:
    """The package a module is listed under: itself for a package, else its parent."""
    is_package = module in PACKAGES or any(other.startswith(f"{module}.") for other in imports)
    return module if is_package else module.rpartition(".")[0]


def report(imports: dict[str, list[Import]]) -> str:
    """The imports of every module, grouped by package, then the cycles."""
    by_package: dict[str, list[str]] = defaultdict(list)
    for module in imports:
        by_package[package_of(module, imports)].append(module)
    lines = []
    for package in sorted(by_package):
        lines.append(f"{package.replace('.', '/')}/")
        for module in sorted(by_package[package]):
            short = module[len(package) + 1 :] or "__init__"
            targets = defaultdict(set)
            for found in imports[module]:
                targets[found.module].add(found.kind)
            parts = [
                target + ("" if kinds == {"top"} else f" ({', '.join(k for k in KINDS if k in kinds)})")
                for target, kinds in sorted(targets.items())
            ]
            lines.append(f"  {short:<24} -> {', '.join(parts) if parts else '(nothing of the project)'}")
        lines.append("")
    lines.append(cycles_text(imports))
    return "\n".join(lines) + "\n"


def cycles_text(imports: dict[str, list[Import]]) -> str:
    top = cycles(imports, ("top",))
    deferred = [c for c in cycles(imports, ("top", "deferred")) if c not in top]
    lines = ["import-time cycles (top-level imports): " + ("none" if not top else "")]
    lines += [f"  {' <-> '.join(c)}" for c in top]
    lines.append("cycles through deferred imports: " + ("none" if not deferred else ""))
    lines += [f"  {' <-> '.join(c)}" for c in deferred]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    imports = graph()
    if "--cycles" in argv:
        print(cycles_text(imports))
    else:
        sys.stdout.write(report(imports))
    return 1 if cycles(imports, ("top",)) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The layout's rules, read from the imports (tests/import_graph.py, with ``ast``).

- Imports go one way: no cycle anywhere in migrate_xla/ and codemods/, neither of imports
  that run at import time nor through a deferred one (an import inside a function, which
  cannot break an import but still ties two modules into one) or a typing-only one.
- A rule family (a module or package directly under codemods/) imports from its own
  modules, from codemods/shared/ and from ``migrate_xla.rule.api``, the rule API, which gives
  it public names only: never another family, never a private name of another family or
  of shared/, never the engine. shared/ imports no family and holds no rule.
- migrate_xla reaches the rules only through the registry's discovery.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import migrate_xla
import migrate_xla.rule.api
from import_graph import KINDS, cycles, graph
from migrate_xla.engine import registry

IMPORTS = graph()
RULE_API = "migrate_xla.rule.api"
SHARED = f"codemods.{registry.SHARED}"


def family_of(module: str) -> str | None:
    """``codemods.amp`` for ``codemods.amp.autocast``; shared/ counts as one; None outside codemods."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "codemods" and len(parts) > 1 else None


RULE_MODULES = sorted(m for m in IMPORTS if family_of(m) is not None)


def test_the_graph_sees_the_packages():
    assert {
        "migrate_xla.engine.pipeline",
        "migrate_xla.sources.notebooks",
        "migrate_xla.rule.api",
        "codemods.checkpoints",
        "codemods.amp.autocast",
        SHARED,
    } <= set(IMPORTS)
    assert any(i.module == RULE_API for i in IMPORTS["codemods.amp.autocast"])


def test_the_graph_sees_modules_loaded_by_name():
    """cli.py loads the verify command through importlib (LAZY_COMMANDS): an import the
    cycle check must see, or verify could import the CLI back unseen (it shares the
    migration options and the project's migration through migrate_xla.app.project instead)."""
    lazy = [i for i in IMPORTS["migrate_xla.app.cli"] if i.module == "migrate_xla.verify.command"]
    assert lazy and {i.kind for i in lazy} == {"deferred"}  # verify and tpu-report
    assert not [i for i in IMPORTS["migrate_xla.verify.command"] if i.module == "migrate_xla.app.cli"]


def test_no_import_cycle():
    assert cycles(IMPORTS, ("top",)) == [], (
        "modules that import each other when imported (python tests/import_graph.py)"
    )
    assert cycles(IMPORTS, KINDS) == [], "modules that import each other (python tests/import_graph.py --cycles)"


@pytest.mark.parametrize("module", RULE_MODULES)
def test_a_family_imports_no_other_family(module):
    own = family_of(module)
    for found in IMPORTS[module]:
        other = family_of(found.module)
        if other is None or other == own:
            continue
        assert other == SHARED, (
            f"{module} (line {found.line}) imports {found.module}: a family imports only itself, "
            f"codemods/shared/ and {RULE_API}; move what two families need to codemods/shared/"
        )


@pytest.mark.parametrize("module", RULE_MODULES)
def test_no_private_name_crosses_a_family(module):
    for found in IMPORTS[module]:
        if family_of(found.module) in (None, family_of(module)) and not found.module.startswith("migrate_xla"):
            continue
        private = [name for name in found.names if name.startswith("_")]
        assert not private, f"{module} (line {found.line}) imports private {private} from {found.module}"


@pytest.mark.parametrize("module", RULE_MODULES)
def test_rules_import_only_the_rule_api_from_migrate_xla(module):
    for found in IMPORTS[module]:
        if not found.module.startswith("migrate_xla"):
            continue
        assert found.module == RULE_API and found.names, (
            f"{module} (line {found.line}) imports {found.module}: a rule imports from migrate_xla "
            f"only `from {RULE_API} import ...`; make what it needs public there"
        )
        for name in found.names:
            assert not name.startswith("_") and hasattr(migrate_xla.rule.api, name), (
                f"{module} (line {found.line}): {name} is not a public name of {RULE_API}"
            )


def test_migrate_xla_reaches_the_rules_only_through_the_registry():
    reaching = sorted(
        (name, found.module)
        for name, found_all in IMPORTS.items()
        if name.startswith("migrate_xla")
        for found in found_all
        if family_of(found.module) is not None or found.module == "codemods"
    )
    assert {name for name, _ in reaching} == {"migrate_xla.engine.registry"}, reaching
    assert ("migrate_xla.engine.registry", "codemods") in reaching  # every rule (all_rules)
    rule_modules = {rule.__module__ for rule in registry.all_rules()}
    assert {module for _, module in reaching} - {"codemods"} == rule_modules  # the woken rules' (rules_of)
    assert all(
        i.kind == "deferred"
        for i in IMPORTS["migrate_xla.engine.registry"]
        if family_of(i.module) or i.module == "codemods"
    )


def test_shared_code_holds_no_rule():
    assert not [rule for rule in registry.all_rules() if rule.__module__.startswith(f"{SHARED}.")]
    assert registry.SHARED not in {registry.family(rule) for rule in registry.all_rules()}


def package_of(module: str) -> str:
    """``migrate_xla.engine`` for ``migrate_xla.engine.registry``; the module itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "migrate_xla" and len(parts) > 2 else module


# What each package of migrate_xla may import of the others (itself aside), any kind of import.
MAY_IMPORT = {
    "migrate_xla.generated": set(),
    "migrate_xla.sources": {"migrate_xla.rule"},  # findings only: the rule package's __init__ is empty
    "migrate_xla.rule": {"migrate_xla.generated", "migrate_xla.sources"},
    "migrate_xla.engine": {"migrate_xla.rule", "migrate_xla.generated", "migrate_xla.sources"},
}


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_only_the_layers_below_it(package):
    allowed = MAY_IMPORT[package] | {package}
    for module, found_all in IMPORTS.items():
        if package_of(module) != package:
            continue
        for found in found_all:
            if found.module.startswith("migrate_xla.") and found.module != "migrate_xla":
                assert package_of(found.module) in allowed, (
                    f"{module} (line {found.line}) imports {found.module}: {package} may import only "
                    f"{', '.join(sorted(MAY_IMPORT[package])) or 'nothing of the project'}"
                )


def test_nothing_at_run_time_imports_a_generator():
    importing = sorted(
        (module, found.module)
        for module, found_all in IMPORTS.items()
        for found in found_all
        if package_of(found.module) == "migrate_xla.generators" and package_of(module) != "migrate_xla.generators"
    )
    assert importing == [], "the generators write migrate_xla/generated/; the tool reads only what they wrote"


def test_every_generated_module_says_how_it_is_written():
    import migrate_xla.generated as generated

    folder = Path(generated.__file__).parent
    tables = sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")
    assert {p.stem for p in tables} == {"rule_index", "cuda_api", "xla_ops", "tpu_api", "node_builders"}
    for table in tables:
        head = " ".join(table.read_text(encoding="utf-8")[:1200].split())
        assert "python -m migrate_xla.generators.make_" in head and "do not edit" in head, table.name
        assert table.stem in generated.__doc__, (
            f"{table.name}: say in generated/__init__.py which test keeps it current"
        )


# Modules stay small enough to read whole: the tool, the rules, the tests and the benchmarks; the
# generated tables aside (fixtures are inputs, laid out as users write them).
MAX_LINES = 600


def test_no_module_is_over_the_size_a_reader_takes_in():
    project = Path(migrate_xla.__file__).parents[1]
    roots = [project / name for name in ("migrate_xla", "codemods", "tests", "benchmarks")]
    long = sorted(
        (str(path), lines)
        for root in roots
        for path in root.rglob("*.py")
        if "generated" not in path.parts and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )
    assert long == [], f"modules over {MAX_LINES} lines: split them by concern"

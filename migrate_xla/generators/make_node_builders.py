"""Generates ``node_builders.py``, what the fast parse (migrate_xla/rule/tree.py) makes each of
LibCST's node classes with, written ahead from the installed LibCST:

    .venv/bin/python -m migrate_xla.generators.make_node_builders     (or: make docs)

Each builder is the code ``tree.builder_code`` writes for the class, inside a function that
takes the names it reads (the class, its slots' setters, its defaults) and returns it; the table
keeps that code too, and the parse uses a builder only where the installed LibCST's class gives
the same code (else it compiles its own). tests/test_engine_rules.py checks that the table is
current.
"""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import version

from migrate_xla.generators.write import GENERATED, write_generated
from migrate_xla.rule import tree

TABLE = GENERATED / "node_builders.py"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.make_node_builders  (or: make docs)"


def table_text() -> str:
    """The text of ``node_builders.py`` for the installed LibCST."""
    functions, rows = [], []
    for name, cls in sorted(tree.node_classes().items()):
        made = tree.builder_code(cls)
        if made is None:
            continue
        code, scope = made
        functions.append(f"def _{name}(*, {', '.join(scope)}):\n{textwrap.indent(code, '    ')}    return build\n")
        rows.append(f"    {name!r}: ({code!r}, _{name}),\n")
    return (
        '"""What the fast parse (migrate_xla/rule/tree.py) makes each of LibCST\'s node classes with: the\n'
        "code ``tree.builder_code`` writes for it, and a function that takes the names that code reads and\n"
        "returns it (compiled with this module, not when a run first makes the node).\n\n"
        f"Generated from the installed LibCST {version('libcst')} by migrate_xla/generators/make_node_builders.py;\n"
        f"do not edit. Regenerate it after an upgrade of LibCST:\n\n    {REGENERATE}\n"
        '"""\n\n\n'
        + "\n\n".join(functions)
        + "\n\n# class name -> (the code of its builder, the function that returns it)\n"
        + f"BUILDERS = {{\n{''.join(rows)}}}\n"
    )


def main() -> int:
    return write_generated(TABLE, table_text())


if __name__ == "__main__":
    sys.exit(main())

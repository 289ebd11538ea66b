"""Writing a generated file (the rule index, the tables of torch_tpu's, torch.cuda's and
torch_xla's names) into migrate_xla/generated/: only when its text changed, saying which."""

from __future__ import annotations

import sys
from pathlib import Path

# where every generated module lives
GENERATED = Path(__file__).parents[1] / "generated"


def write_generated(path: Path, text: str) -> int:
    """Write ``text`` to ``path`` unless it holds it already; the exit status (0)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        print(f"{path.name} is current", file=sys.stderr)
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return 0

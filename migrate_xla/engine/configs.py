"""Training frameworks' YAML config files, each kind converted by its rule (found through the
registry): Accelerate's (XLA827, codemods/frameworks/accelerate_config.py) and Lightning trainer
configs (XLA828, codemods/frameworks/lightning_config.py: a Hydra trainer group's file, a
LightningCLI config's ``trainer:`` section), edited line by line (migrate_xla/rule/yaml_lines.py).
Each kind knows its files by their content (``is_config``) and converts one (``convert``); a YAML
file of no kind is left unread: a project's other YAML files are no concern of this tool's."""

from __future__ import annotations

from pathlib import Path

from migrate_xla.engine import registry
from migrate_xla.rule.findings import ACCELERATE_CONFIG, LIGHTNING_CONFIG

# the rules that convert YAML files, in the order a file is tried
CONFIG_RULES = (ACCELERATE_CONFIG, LIGHTNING_CONFIG)
# the configs are a few hundred bytes: a larger YAML file is something else, and is not read
# past this while walking a folder
MAX_BYTES = 64 * 1024


def kinds() -> tuple:
    """The rule classes that convert YAML files (their modules imported only now)."""
    return registry.rules_of(CONFIG_RULES)


def kind_of(data: bytes):
    """The kind (the rule converting it) of a YAML file with these bytes, or None."""
    if len(data) > MAX_BYTES:
        return None
    return next((kind for kind in kinds() if kind.is_config(data)), None)


def kind_of_file(path: Path, unreadable: bool = False):
    """The kind of the YAML file at ``path`` (read up to MAX_BYTES), or None; one that cannot be
    read is ``unreadable``: of no kind while walking, of the first kind (to read, and fail on,
    saying why) when named."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return kinds()[0] if unreadable else None
    return kind_of(data)


def is_config_file(path: Path) -> bool:
    """Whether a YAML file met while walking is a framework's config (a small file of a kind);
    the other YAML files of a project are not taken (sources/discovery.py asks)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return False
    except OSError:
        return False
    return kind_of_file(path) is not None

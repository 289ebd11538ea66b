"""Training frameworks' YAML config files in their TPU form, edited line by line (lines.py):
Accelerate's (XLA827, accelerate.py) and Lightning trainer configs (XLA828, lightning.py: a
Hydra trainer group's file, a LightningCLI config's ``trainer:`` section). Each kind knows its
files by their content (``is_config``) and converts one (``migrate``); a YAML file of no kind
is left unread: a project's other YAML files are no concern of this tool's."""

from __future__ import annotations

from pathlib import Path

from migrate_xla.configs import accelerate, lightning

KINDS = (accelerate, lightning)
# the configs are a few hundred bytes: a larger YAML file is something else, and is not read
# past this while walking a folder
MAX_BYTES = 64 * 1024


def kind_of(data: bytes):
    """The kind (its module) of a YAML file with these bytes, or None."""
    if len(data) > MAX_BYTES:
        return None
    return next((kind for kind in KINDS if kind.is_config(data)), None)


def kind_of_file(path: Path, unreadable: bool = False):
    """The kind of the YAML file at ``path`` (read up to MAX_BYTES), or None; one that cannot be
    read is ``unreadable``: of no kind while walking, of the first kind (to read, and fail on,
    saying why) when named."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return KINDS[0] if unreadable else None
    return kind_of(data)

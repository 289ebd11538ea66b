"""A framework's YAML config edited line by line, as text: comments, key order, quoting and line
ends stay as they are, and no YAML library is needed (the configs are block mappings of
``key: value`` lines, their nested settings indented under a section). A change replaces a
line's value or drops the line; a flag writes a ``# TODO(xla-migrate): CODE ...`` comment above
it. Suppression comments work as in Python files (docs/configuration.md): a noqa comment naming
the code (or none) ending a line leaves that line; an ``# xla-migrate: noqa`` line, the whole file."""

from __future__ import annotations

import re

from migrate_xla.rule.findings import Diagnostic

# one ``key: value  # comment`` line of a block mapping, its line end kept. The patterns are
# compiled by ``re`` when first used (its cache keeps them): most runs edit no YAML config.
_ENTRY = (
    r"(?P<indent>[ \t]*)(?P<key>[A-Za-z_][\w.-]*)(?P<colon>[ \t]*:[ \t]*)"
    r"(?P<value>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^#\s][^#\r\n]*?|)(?P<rest>[ \t]*(?:#[^\r\n]*)?)(?P<end>\r\n|\r|\n|)\Z"
)
_CODES = r"(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_LINE_NOQA = rf"(?i)#\s*noqa(?::\s*{_CODES})?(?![\w-])"
_FILE_NOQA = rf"(?im)^[ \t]*#\s*xla-migrate:\s*noqa(?::\s*{_CODES})?\s*$"


class Entry:
    """One ``key: value`` line: where it is, its parts, its value without quotes."""

    def __init__(self, index: int, match: re.Match) -> None:
        self.index = index
        self.match = match
        raw = match["value"]
        self.quote = raw[0] if raw[:1] in ("'", '"') else ""
        self.value = raw[1:-1] if self.quote else raw

    def line(self, value: str) -> str:
        """The line with ``value`` in place of its value, quoted as it was."""
        m = self.match
        return f"{m['indent']}{m['key']}{m['colon']}{self.quote}{value}{self.quote}{m['rest']}{m['end']}"

    def shown(self) -> str:
        return f"`{self.match['key']}: {self.match['value']}`"


class Edit:
    """The config's lines and what the migration does to them."""

    def __init__(self, text: str, code: str) -> None:
        self.code = code
        self.todo = f"# TODO(xla-migrate): {code} "
        self.lines = text.splitlines(keepends=True)
        self.top: dict[str, Entry] = {}  # top-level keys
        self.nested: dict[tuple[str, str], Entry] = {}  # (section, key) of an indented line
        section = None
        for index, line in enumerate(self.lines):
            match = re.match(_ENTRY, line)
            if match is None:
                continue
            if match["indent"]:
                if section is not None:
                    self.nested.setdefault((section, match["key"]), Entry(index, match))
            else:
                section = match["key"]
                self.top.setdefault(section, Entry(index, match))
        self.replaced: dict[int, str] = {}
        self.findings: list[Diagnostic] = []
        self.silenced = any(self._silences(m) for m in re.finditer(_FILE_NOQA, text))

    def value(self, key: str) -> str | None:
        entry = self.top.get(key)
        return entry.value if entry is not None else None

    def set(self, entry: Entry, value: str, why: str) -> None:
        self.change(entry, entry.line(value), f"{entry.shown()} -> `{entry.match['key']}: {value}`: {why}")

    def drop(self, entry: Entry, why: str) -> None:
        self.change(entry, "", f"{entry.shown()} dropped: {why}")

    def change(self, entry: Entry, line: str, message: str) -> None:
        """``entry``'s line becomes ``line`` (nothing: dropped), unless a comment silences it."""
        if not self._found(entry, message, fixed=True):
            self.replaced[entry.index] = line

    def flag(self, entry: Entry, message: str) -> None:
        above = self.lines[entry.index - 1] if entry.index else ""
        if self._found(entry, message, fixed=False) or above.lstrip().startswith(self.todo):  # one comment, never two
            return
        end = entry.match["end"] or "\n"
        self.replaced[entry.index] = f"{entry.match['indent']}{self.todo}{message}{end}" + self.replaced.get(
            entry.index, self.lines[entry.index]
        )

    def _found(self, entry: Entry, message: str, fixed: bool) -> bool:
        """Report ``message`` at ``entry``; whether a suppression comment silences it."""
        noqa = re.search(_LINE_NOQA, entry.match["rest"])
        silenced = self.silenced or (noqa is not None and self._silences(noqa))
        self.findings.append(
            Diagnostic(
                code=self.code,
                message=message,
                line=entry.index + 1,
                column=len(entry.match["indent"]) + 1,
                severity="info" if fixed and not silenced else "warning",
                fixed=fixed and not silenced,
                fix="safe" if fixed else None,
                suppressed=silenced,
            )
        )
        return silenced

    def _silences(self, noqa: re.Match) -> bool:
        """Whether a suppression comment covers this code: without codes, or naming it or a prefix of it."""
        codes = noqa["codes"]
        return codes is None or any(self.code.startswith(c.upper()) for c in re.split(r"[\s,]+", codes) if c)

    def text(self) -> str:
        return "".join(self.replaced.get(index, line) for index, line in enumerate(self.lines))

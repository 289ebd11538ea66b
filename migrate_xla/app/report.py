"""Renders the results of a run: findings as text, JSON, SARIF or GitHub annotations; diffs; statistics."""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Sequence

from migrate_xla.app.run import FileResult
from migrate_xla.engine import registry
from migrate_xla.rule.findings import RUNTIMES, TARGETS, UNSAFE, Diagnostic

UNSAFE_HINT = "unsafe fix available with --unsafe-fixes"


class Summary:
    """What a run did, for the closing line, --stats and the exit code."""

    def __init__(self, files: int = 0) -> None:
        self.files = files
        self.changed = self.errors = self.fixed = 0
        self.remaining = self.remaining_errors = self.unsafe_available = 0
        self.by_code: Counter = Counter()
        self.fixed_by_code: Counter = Counter()
        self.suppressed_by_code: Counter = Counter()  # silenced by suppression comments: not in by_code

    @classmethod
    def of(cls, results: Sequence[FileResult]) -> Summary:
        summary = cls(files=len(results))
        for result in results:
            summary.changed += result.changed
            summary.errors += result.error is not None
            summary.suppressed_by_code.update(d.code for d in result.suppressed)
            for d in result.diagnostics:
                summary.by_code[d.code] += 1
                if d.fixed:
                    if result.error is None:  # a fix in a file that could not be written did not happen
                        summary.fixed += 1
                        summary.fixed_by_code[d.code] += 1
                else:
                    summary.remaining += 1
                    summary.remaining_errors += d.severity == "error"
                    summary.unsafe_available += d.fix == UNSAFE
        return summary

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "changed": self.changed,
            "errors": self.errors,
            "fixed": self.fixed,
            "remaining": self.remaining,
            "remaining_errors": self.remaining_errors,
            "unsafe_fixes_available": self.unsafe_available,
            "suppressed": sum(self.suppressed_by_code.values()),
            "by_code": dict(sorted(self.by_code.items())),
        }


def _plain(text: str, **style) -> str:
    return text


def _painter(colour: bool):
    """``click.style`` for a terminal (as ruff: the path bold, the code red, ``[*]`` cyan), else nothing."""
    if not colour:
        return _plain
    import click

    return click.style


def finding_line(path: str, d: Diagnostic, show_fixed: bool, colour: bool = False) -> str:
    paint = _painter(colour)
    cell = "" if d.cell is None else f"cell {d.cell}:"
    where = f"{paint(path, bold=True)}:{cell}{d.line}:{d.column}:"
    mark = ""
    if d.fixed and show_fixed:
        mark = " " + paint("[*]", fg="cyan")
    elif not d.fixed and d.fix == UNSAFE:
        mark = f" ({UNSAFE_HINT})"
    return f"{where} {paint(d.code, fg='red', bold=True)} {d.message}{mark}"


def text_findings(results: Sequence[FileResult], show_fixed: bool, colour: bool = False) -> list[str]:
    """``path:line:col: CODE message`` lines; fixed findings only when ``show_fixed``."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            if show_fixed or not d.fixed:
                lines.append(finding_line(result.path, d, show_fixed, colour))
    return lines


def error_lines(results: Sequence[FileResult], colour: bool = False) -> list[str]:
    paint = _painter(colour)
    return [
        f"{paint(r.path, bold=True)}: {paint('error', fg='red', bold=True)}: {r.error}"
        for r in results
        if r.error is not None
    ]


def closing_line(summary: Summary, mode: str) -> str:
    done = mode in ("write", "output")
    noun = "file" if summary.files == 1 else "files"
    parts = [f"{summary.changed} of {summary.files} {noun} {'migrated' if done else 'would be migrated'}"]
    parts.append(f"{summary.fixed} {('fix' if summary.fixed == 1 else 'fixes') if done else 'fixable'}")
    parts.append(f"{summary.remaining} left for a person")
    if summary.errors:
        parts.append(f"{summary.errors} could not be read, parsed or written")
    line = ", ".join(parts)
    if summary.unsafe_available:
        line += f" ({summary.unsafe_available} hidden unsafe fixes: --unsafe-fixes applies them)"
    return line


def unified_diff(result: FileResult) -> str:
    """A diff ``patch -p1`` and ``git apply`` accept, also for a file without a final newline.

    A notebook's diff is one per changed cell, of the cell's code (``a/nb.ipynb:cell 3``).
    """
    assert result.source is not None and result.new_text is not None
    import difflib  # only for --diff

    out = []
    for old, new in zip(result.source.units(result.source.text), result.source.units(result.new_text)):
        if old.text == new.text:
            continue
        name = result.path if old.cell is None else f"{result.path}:cell {old.cell}"
        old_lines, new_lines = _lines(old.text), _lines(new.text)
        if old.cell is not None:  # a cell's last line has no newline: nothing to say about it
            old_lines, new_lines = _ended(old_lines), _ended(new_lines)
        for line in difflib.unified_diff(old_lines, new_lines, fromfile=f"a/{name}", tofile=f"b/{name}"):
            out.append(line)
            if not line.endswith(("\n", "\r")):
                out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _ended(lines: list[str]) -> list[str]:
    return [*lines[:-1], lines[-1] + "\n"] if lines and not lines[-1].endswith(("\n", "\r")) else lines


def _lines(text: str) -> list[str]:
    """Lines as Python sees them: split at \\n, \\r\\n and \\r only (not at form feeds), ends kept."""
    return io.StringIO(text, newline="").readlines()


def json_report(results: Sequence[FileResult], summary: Summary, stats: bool) -> str:
    files = []
    for result in results:
        entry = {
            "path": result.path,
            "changed": result.changed,
            "diagnostics": [
                {k: v for k, v in d.to_dict().items() if k != "cell" or v is not None} for d in result.diagnostics
            ],
        }
        if result.error is not None:
            entry["error"] = result.error
        files.append(entry)
    out = {"files": files, "summary": summary.to_dict()}
    if stats:
        out["stats"] = {"rules": rule_stats(summary), "files": file_stats(results)}
    import json  # only for --format json or sarif: a pre-commit run (text) does not load it

    return json.dumps(out, indent=2)


# GitHub workflow commands and SARIF levels for a finding's severity.
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def github_lines(results: Sequence[FileResult], show_fixed: bool) -> list[str]:
    """GitHub Actions annotations (``::warning file=...,line=...::...``), one per finding."""

    def escape(text: str, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    lines = []
    for result in results:
        path = escape(result.path, prop=True)
        if result.error is not None:
            lines.append(f"::error title=xla-migrate,file={path}::{escape(result.error)}")
        file_line = _file_lines(result, show_fixed)
        for d in result.diagnostics:
            if show_fixed or not d.fixed:
                level = _GITHUB_LEVEL.get(d.severity, "warning")
                where = f"line={d.line},col={d.column}" if d.cell is None else f"line={file_line(d.cell, d.line)}"
                lines.append(
                    f"::{level} title=xla-migrate ({d.code}),file={path},{where}"
                    f"::{escape(finding_line(result.path, d, show_fixed))}"
                )
    return lines


def _file_lines(result: FileResult, show_fixed: bool):
    """(cell, line) -> line of the file shown: as read with fixed findings, else as written."""
    if result.source is None:
        return lambda cell, line: line
    written = not show_fixed and result.new_text is not None
    return result.source.file_lines(result.new_text if written else result.source.text)


def sarif_report(results: Sequence[FileResult], show_fixed: bool) -> str:
    """A SARIF 2.1.0 log: one run, the rules it reported, one result per finding."""
    codes = sorted({d.code for r in results for d in r.diagnostics if show_fixed or not d.fixed})
    rules = [registry.by_code(code) for code in codes]
    findings, notifications = [], []
    for result in results:
        location = {"physicalLocation": {"artifactLocation": {"uri": result.path}}}
        if result.error is not None:
            notifications.append({"level": "error", "message": {"text": result.error}, "locations": [location]})
        file_line = _file_lines(result, show_fixed)
        for d in result.diagnostics:
            if show_fixed or not d.fixed:
                if d.cell is None:
                    region, message = {"startLine": d.line, "startColumn": d.column}, d.message
                else:  # the JSON line that holds the cell's line; the message says where in the cell
                    region = {"startLine": file_line(d.cell, d.line)}
                    message = f"cell {d.cell}, line {d.line}, column {d.column}: {d.message}"
                findings.append(
                    {
                        "ruleId": d.code,
                        "ruleIndex": codes.index(d.code),
                        "level": _SARIF_LEVEL.get(d.severity, "warning"),
                        "message": {"text": message},
                        "locations": [{"physicalLocation": {**location["physicalLocation"], "region": region}}],
                    }
                )
    driver = {
        "name": "xla-migrate",
        "rules": [
            {
                "id": code,
                "name": rule.NAME if rule else code,
                "shortDescription": {"text": rule.SUMMARY if rule else code},
            }
            for code, rule in zip(codes, rules)
        ],
    }
    run = {
        "tool": {"driver": driver},
        "results": findings,
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
    }
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    import json

    return json.dumps(log, indent=2)


def rule_stats(summary: Summary) -> list[dict]:
    rows = []
    for code in sorted(summary.by_code.keys() | summary.suppressed_by_code.keys()):
        rule = registry.by_code(code)
        count, fixed = summary.by_code[code], summary.fixed_by_code[code]
        rows.append(
            {
                "code": code,
                "name": rule.NAME if rule else "",
                "count": count,
                "fixed": fixed,
                "remaining": count - fixed,
                "suppressed": summary.suppressed_by_code[code],
            }
        )
    return rows


def file_stats(results: Sequence[FileResult]) -> list[dict]:
    rows = []
    for result in results:
        if result.diagnostics or result.suppressed:
            fixed = sum(d.fixed for d in result.diagnostics)
            rows.append(
                {
                    "path": result.path,
                    "count": len(result.diagnostics),
                    "fixed": fixed,
                    "remaining": len(result.diagnostics) - fixed,
                    "suppressed": len(result.suppressed),
                }
            )
    return sorted(rows, key=lambda row: (-row["count"], row["path"]))


def text_stats(results: Sequence[FileResult], summary: Summary) -> list[str]:
    lines = ["", "Findings by rule:"]
    for row in rule_stats(summary):
        lines.append(
            f"  {row['count']:6d}  {row['code']}  {row['name']:<28} fixed {row['fixed']}, remaining {row['remaining']}"
            + _suppressed(row)
        )
    lines.append("Findings by file:")
    for row in file_stats(results):
        lines.append(
            f"  {row['count']:6d}  {row['path']} (fixed {row['fixed']}, remaining {row['remaining']}{_suppressed(row)})"
        )
    return lines


def _suppressed(row: dict) -> str:
    return f", suppressed {row['suppressed']}" if row["suppressed"] else ""


def rules_table() -> list[str]:
    lines = [f"{'code':<7} {'name':<24} {'fix':<7} {'severity':<8} summary"]
    for rule in registry.all_rules():
        lines.append(f"{rule.CODE:<7} {rule.NAME:<24} {rule.FIX or '-':<7} {rule.SEVERITY:<8} {rule.SUMMARY}")
    return lines


# The migration guide the rules follow; a rule's docstring cites its sections by name.
GUIDE_URL = "https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html"
# Patterns, not compiled ones: re compiles them when `explain` or the docs first need them.
_GUIDE_SECTION = r"""(?i)guide(?:'s)?,?\s+"([^"]+)\""""
_URL = r"https?://[^\s)>\]\"']+[^\s)>\]\"'.,;:]"
_FIX_TEXT = {
    "safe": "safe (applied by default)",
    "unsafe": "unsafe (applied with --unsafe-fixes)",
}


def rule_links(rule) -> list[tuple[str, str]]:
    """(title, URL) of the documents a rule follows: the guide sections its docstring
    cites (else those its family module cites), then the URLs in either docstring."""
    own, family_doc = rule.why(), registry.family_doc(rule)
    sections = re.findall(_GUIDE_SECTION, own) or re.findall(_GUIDE_SECTION, family_doc)
    links = [(f'Migration guide, "{" ".join(section.split())}"', GUIDE_URL) for section in sections]
    links += [(url, url) for url in re.findall(_URL, own) + re.findall(_URL, family_doc)]
    return list(dict.fromkeys(links))


def explain(rule, markdown: bool = False) -> str:
    """A rule's documentation: what ``xla-migrate explain`` prints and, with ``markdown``,
    its section of docs/rules.md. One content, two markups."""
    fix = _FIX_TEXT.get(rule.FIX, "none (reported, with a TODO comment where it cannot be converted)")
    facts = f"Family: {registry.family(rule)}    Fix: {fix}    Severity if left: {rule.SEVERITY}"
    silence = (
        f"To silence it where a person has reviewed it: `# noqa: {rule.CODE}` at the end of the line "
        f"(the header line of a compound statement), or a line `# xla-migrate: noqa: {rule.CODE}` for the "
        'whole file; it is then neither fixed nor reported (docs/configuration.md, "Suppressing a finding").'
    )
    if tuple(rule.TARGETS) != TARGETS:  # a target's own rule: say which --target runs it
        facts += f"    Only with: --target {' / '.join(rule.TARGETS)}"
    if tuple(rule.RUNTIMES) != RUNTIMES:  # a runtime's own rule: say which --runtime runs it
        facts += f"    Only with: --runtime {' / '.join(rule.RUNTIMES)}"
    examples = [("Before", rule.BEFORE), ("After", rule.AFTER or "(removed)\n")] if rule.BEFORE else []
    links = rule_links(rule)
    if not markdown:
        parts = [f"{rule.CODE} ({rule.NAME}): {rule.SUMMARY}", facts, rule.why(), silence]
        if examples:
            parts.append("\n".join(f"{label}:\n{_indent(code)}" for label, code in examples))
        if links:
            parts.append(
                "Links:\n" + "\n".join(f"    {title}: {url}" if title != url else f"    {url}" for title, url in links)
            )
        return "\n\n".join(parts) + "\n"
    parts = [f"### {rule.CODE} ({rule.NAME})", _md_text(rule.SUMMARY), _md_text(facts), _md_text(rule.why())]
    parts += [f"{label}:\n\n```{rule.EXAMPLE_LANGUAGE}\n{code.rstrip()}\n```" for label, code in examples]
    if links:
        parts.append(
            "Links:\n\n"
            + "\n".join(f"- [{_md_text(title)}]({url})" if title != url else f"- <{url}>" for title, url in links)
        )
    return "\n\n".join(parts) + "\n"


def rules_page() -> str:
    """docs/rules.md: an index table of every rule, then each family and its rules' sections."""
    rules = registry.all_rules()
    lines = [
        "# xla-migrate rules",
        "",
        "Generated from the rules themselves (their attributes and docstrings) by",
        "`python -m migrate_xla.generators.docs > docs/rules.md` (or `make docs`); a test checks that it is",
        "current. `xla-migrate explain CODE` prints the same section in the terminal.",
        "",
        "Any finding can be silenced where a person has reviewed it: `# noqa: XLA201` at the end of",
        "its line (the header line of a compound statement), or a line `# xla-migrate: noqa: XLA201`",
        "for the whole file; it is then neither fixed, nor reported, nor counted in the exit code",
        "([configuration](configuration.md#suppressing-a-finding)).",
        "",
        "| code | name | fix | severity if left | summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in rules:
        anchor = f"{rule.CODE}-{rule.NAME}".lower()
        summary = _md_text(rule.SUMMARY).replace("|", "\\|")
        lines.append(f"| [{rule.CODE}](#{anchor}) | {rule.NAME} | {rule.FIX or '-'} | {rule.SEVERITY} | {summary} |")
    # each family once, in the order of its first code (cuda_only's XLA899 follows its XLA8xx,
    # not the frameworks' XLA82x)
    families: dict[str, list] = {}
    for rule in rules:
        families.setdefault(registry.family(rule), []).append(rule)
    for family, members in families.items():
        lines += ["", f"## {members[0].CODE[:4]}xx {family}", "", _md_text(registry.family_doc(members[0]))]
        for rule in members:
            lines += ["", explain(rule, markdown=True).rstrip("\n")]
    return "\n".join(lines) + "\n"


# Characters Markdown would read as markup outside code spans (``code`` is kept as is).
_MD_SPECIAL = r"(?s)(``.*?``|`[^`]*`)|([\\*<\[\]])|(?<![\w])_|_(?![\w])"


def _md_text(text: str) -> str:
    return re.sub(_MD_SPECIAL, lambda m: m.group(1) or "\\" + m.group(0), text)


def _indent(code: str) -> str:
    return "".join(f"    {line}" for line in code.splitlines(keepends=True)).rstrip("\n")

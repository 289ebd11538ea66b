"""docs/rules.md: generated from the rules, current, and what `xla-migrate explain` prints."""

from __future__ import annotations

import re
from functools import cache

import pytest

from conftest import ROOT
from migrate_xla.app import report
from migrate_xla.engine import registry

RULES_MD = ROOT / "docs" / "rules.md"
REGENERATE = ".venv/bin/python -m migrate_xla.generators.docs > docs/rules.md  (or: make docs)"


def test_rules_md_is_current():
    written = RULES_MD.read_text(encoding="utf-8") if RULES_MD.exists() else ""
    assert written == report.rules_page(), f"docs/rules.md is out of date with the rules; regenerate it: {REGENERATE}"


@cache
def _page() -> str:
    return report.rules_page()


def _unescaped(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


@pytest.mark.parametrize("rule", registry.all_rules(), ids=lambda r: r.CODE)
def test_explain_and_the_docs_show_the_same_section(rule, cli):
    text = cli("explain", rule.CODE).stdout
    assert text == report.explain(rule)
    section = report.explain(rule, markdown=True)
    assert section in _page()
    assert f"| [{rule.CODE}](#{rule.CODE.lower()}-{rule.NAME}) |" in _page()  # index -> section
    assert section.startswith(f"### {rule.CODE} ({rule.NAME})\n")  # GitHub's anchor: xla101-cuda-device
    plain = _unescaped(section)
    # The same content in both: summary, fix safety, why (the docstring), examples, links.
    for part in [rule.SUMMARY, f"Severity if left: {rule.SEVERITY}", *rule.why().split("\n\n")]:
        assert part in text and part in plain, part
    for code in (rule.BEFORE, rule.AFTER):
        assert code.rstrip() in section
        assert "".join(f"    {line}" for line in code.splitlines(keepends=True)).rstrip() in text
    for _, url in report.rule_links(rule):
        assert url in text and url in section


def test_links_name_the_guide_sections_a_rule_cites():
    links = report.rule_links(registry.by_code("XLA501"))
    assert ('Migration guide, "Saving and Loading Models"', report.GUIDE_URL) in links
    pallas = "https://docs.pytorch.org/xla/master/features/pallas.html"
    assert (pallas, pallas) in report.rule_links(registry.by_code("XLA806"))
    # A rule that cites no section gets its family's (devices: "Device Handling").
    assert ('Migration guide, "Device Handling"', report.GUIDE_URL) in report.rule_links(registry.by_code("XLA103"))


def test_markdown_text_keeps_code_spans_and_escapes_markup():
    assert report._md_text("``a_b*c``, x * y, <cond>, [i], _private") == r"``a_b*c``, x \* y, \<cond>, \[i\], \_private"

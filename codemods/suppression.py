"""XLA002: suppression comments, ``# noqa: XLA201`` on a line and ``# xla-migrate: noqa`` for
a file (migrate_xla/engine/suppression.py applies them; docs/configuration.md).

A finding a person has reviewed can be silenced where it is, as in ruff, flake8 and
torchfix: it is then neither fixed, nor reported, nor counted in the exit code, and
``--stats`` counts it as suppressed. This rule reports a comment that silences nothing.
"""

from __future__ import annotations

from migrate_xla.rule.api import Rule


class UnusedSuppression(Rule):
    """A suppression comment names a code that silenced nothing; remove it (or the code).

    ``# noqa: XLA201`` at the end of a line silences XLA201 on the statement it ends (any
    line of a simple statement; the header line of a compound one, such as ``for batch
    in loader:  # noqa: XLA302``, not its body), ``# noqa`` alone every code there, and a
    line ``# xla-migrate: noqa: XLA201`` (or ``# xla-migrate: noqa``) the whole file.
    Codes match as prefixes (``XLA2``) and several are separated by commas. A comment
    that no longer silences anything (the code was changed by hand, or the rule no longer
    finds it) hides the next real finding there: this rule says so, for the codes of
    this tool's rules that the run enabled, as ruff's RUF100 does. Codes of other tools
    (``# noqa: E501``) are left alone.
    """

    CODE = "XLA002"
    NAME = "unused-noqa"
    SUMMARY = "a `# noqa: XLAnnn` comment that silences nothing"
    FIX = None
    SEVERITY = "warning"
    # The engine reports it (engine/pipeline.py) wherever a comment names a code of this
    # tool's: a file whose only trigger is such a comment is parsed for it.
    TRIGGERS = (r"noqa:[^\n]*XLA", r"xla-migrate:\s*noqa")
    BEFORE = "x = 1  # noqa: XLA102\n"
    AFTER = "x = 1  # noqa: XLA102\n"

"""The command line and the service behind it: what a user calls.

- ``cli.py``: ``xla-migrate`` (click): the options, the modes (write, ``--diff``, ``--check``,
  ``-o``), ``rules``, ``explain``, and the ``verify`` / ``tpu-report`` commands loaded lazily;
- ``config.py``: ``[tool.xla-migrate]`` in pyproject.toml, read into the run's ``Settings``;
- ``project.py``: the files of a run and its settings, as the command line and verify use them;
- ``run.py``: a run over files (in parallel where there are many): each file read, migrated by
  the engine where it wakes a rule, its findings kept;
- ``report.py``: the findings printed (text, JSON, SARIF, statistics).

It may import every other package; nothing outside it imports it but verify (the project a
verification migrates, through ``project.py``) and the tests.
"""

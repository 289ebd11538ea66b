"""The commands that write ``migrate_xla/generated/`` and docs/rules.md (``make docs``,
``make cuda-api``, ``make xla-ops``, ``make tpu-api``). Nothing at run time imports them:
tests/test_architecture.py checks it."""

"""``python -m migrate_xla`` runs the command-line interface."""

from migrate_xla.app.cli import main

main()

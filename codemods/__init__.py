"""The rules, one module per family; ``migrate_xla.registry`` finds them by walking this package."""

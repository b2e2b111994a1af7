"""Reliability suite (a package, so its conftest never shadows another directory's
`conftest` module)."""

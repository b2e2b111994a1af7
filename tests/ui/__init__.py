"""Browser and API tests of the web console (a package, so its conftest never shadows
another directory's `conftest` module)."""

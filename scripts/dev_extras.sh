# The pyproject.toml extras a development checkout installs (scripts/setup.sh) and locks
# (scripts/lock.sh): the test tools and schemathesis for the default suite. One place for both.
HYBRIDSERVE_DEV_EXTRAS=test,reliability

"""pytest plugin for the upstream run: deselect out-of-scope tests, record every outcome.

Loaded with `-p plugin` by runner.py, which sets UPSTREAM_REPORT (a JSON-lines file to append to).
"""
from __future__ import annotations

import json
import os

from numpy1_compat import install
from scope import Module

_modules: dict[str, Module] = {}


def _test_name(item) -> str:
    cls = item.cls.__name__ + "::" if getattr(item, "cls", None) is not None else ""
    return cls + item.originalname if hasattr(item, "originalname") else cls + item.name


def _emit(**rec) -> None:
    with open(os.environ["UPSTREAM_REPORT"], "a") as f:
        f.write(json.dumps(rec) + "\n")


def pytest_collection_modifyitems(session, config, items):
    keep, drop = [], []
    for module in {getattr(item, "module", None) for item in items} - {None}:
        install(module)     # MXNet's tests were written for NumPy 1.x (numpy1_compat.py)
    for item in items:
        path = str(item.path)
        mod = _modules.get(path)
        if mod is None:
            mod = _modules[path] = Module(item.path.read_text())
        try:
            verdict = mod.classify(_test_name(item))
        except (KeyError, StopIteration):       # generated tests: keep them in scope
            verdict = None
        if verdict is not None and not verdict.in_scope:
            drop.append(item)
            _emit(file=item.path.name, test=_test_name(item), case=item.name, outcome="out",
                  reason=verdict.reason)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collectreport(report):
    if report.failed:
        _emit(file=os.path.basename(str(report.nodeid).split("::")[0]), test=None, case=None,
              outcome="collect-error", reason=str(report.longrepr)[-400:])


def pytest_runtest_logreport(report):
    # one record per case: a failure in any phase fails it; a skip is recorded as such
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        nodeid = report.nodeid.split("::")
        name = "::".join(nodeid[1:])
        _emit(file=os.path.basename(nodeid[0]), test=name.split("[")[0], case=name,
              outcome=report.outcome,
              reason="" if report.passed else _short(report))


def _short(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    return (crash.message if crash is not None else str(report.longrepr))[:300]


def pytest_collection_finish(session):
    # MXNet's conftest runs gc.collect() around every test (its leak check); with thousands of
    # collected items each collection walks them all. Freezing what collection built keeps those
    # objects out of later collections: same check, a fraction of the time.
    import gc
    gc.collect()
    gc.freeze()

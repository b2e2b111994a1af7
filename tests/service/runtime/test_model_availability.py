"""A model that is gone answers 404; one that exists but cannot serve now (load failed,
unloaded, being unloaded) answers 503 with the reason and Retry-After — never 400, which
tells clients the request itself is wrong and not to retry (issue 26, defect 5)."""
from __future__ import annotations

import threading

import httpx
import numpy as np

from serverproc import copy_store, infer_json, inproc_server
from service.errors import NotFound, Unavailable
from service.runtime.registry import State

X = np.zeros((1, 512), np.float32)


def _infer(c: httpx.Client, name: str) -> httpx.Response:
    return c.post(f"/v2/models/{name}/infer", json=infer_json(name, X))


def test_failed_and_unloaded_models_are_503_with_reason(tmp_path):
    store = copy_store(tmp_path / "store", ("mlp",))
    (store / "broken" / "1").mkdir(parents=True)
    (store / "broken" / "1" / "broken-symbol.json").write_text("{not json")
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        r = _infer(c, "broken")
        assert r.status_code == 503, r.text
        assert "FAILED" in r.json()["error"] and "Retry-After" in r.headers
        assert c.get("/v2/models/broken/ready").status_code == 503
        assert c.post("/v2/repository/models/mlp/unload").status_code == 200
        r = _infer(c, "mlp")
        assert r.status_code == 503 and "unloaded" in r.json()["error"], r.text
        assert _infer(c, "nosuch").status_code == 404


def test_a_delete_by_another_replica_is_404_or_503_never_400(tmp_path):
    """Replica B polls the store fast while A deletes the model under B's traffic; then the
    windows of B's own unload are checked one by one."""
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store, store_poll_s=0.02) as a, inproc_server(store, store_poll_s=0.02) as b:
        codes: list[int] = []
        stop = threading.Event()

        def hammer():
            with httpx.Client(base_url=b.url, timeout=30) as c:
                while not stop.is_set() and len(codes) < 3000:
                    codes.append(_infer(c, "mlp").status_code)

        th = threading.Thread(target=hammer)
        th.start()
        try:
            with httpx.Client(base_url=a.url, timeout=30) as ca:
                assert ca.delete("/v2/models/mlp").status_code == 200
            end = threading.Event()
            end.wait(1.0)                 # B's poll applies the delete meanwhile
        finally:
            stop.set()
            th.join(30)
        assert codes and set(codes) <= {200, 404, 503}, sorted(set(codes))
        assert codes[-1] == 404


def test_registry_windows_of_an_unload(tmp_path):
    """White-box: each state a version passes through while it goes away."""
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store) as srv:
        reg = srv.core.registry
        mv = reg.get("mlp")
        for state in (State.UNLOADING, State.UNAVAILABLE, State.FAILED):
            mv.state = state
            try:
                reg.get("mlp")
            except Unavailable as e:
                assert e.status == 503 and "Retry-After" in e.headers
            else:
                raise AssertionError(f"{state} served")
        entries = reg.models["mlp"]
        reg.models["mlp"] = {}                      # between forget's pops: still on disk
        _expect(reg, Unavailable)
        reg.models["mlp"] = entries
        (store / "mlp").rename(tmp_path / "gone")   # files gone (another replica deleted it)
        _expect(reg, NotFound)
        reg.models["mlp"] = {}
        _expect(reg, NotFound)


def _expect(reg, cls) -> None:
    try:
        reg.get("mlp")
    except cls:
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{type(e).__name__}: {e}") from None
    raise AssertionError("served")

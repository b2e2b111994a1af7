"""The object store (repository/objstore.py) on a real S3 server: layout, numbering by
conditional manifest writes, the read cache, hidden writes in progress and their recovery, a
bucket edited by hand, and the errors of an unreachable server or wrong credentials."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from s3server import READER_KEY, READER_SECRET
from serverproc import ROOT
from service.errors import Forbidden
from service.repository.backend import open_store
from service.repository.blobs import StoreUnavailable
from service.repository.manifest import Manifest, parse_manifest
from service.repository.objstore import ObjectStore
from service.repository.owner import owner_prefix

MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
MX2 = ROOT / "tests" / "fixtures" / "mxnet-2.0.0b1"


def store(bucket: str, tmp_path: Path, prefix: str, **kw) -> ObjectStore:
    s = open_store(f"s3://{bucket}/{prefix}", cache_dir=tmp_path / "cache", **kw)
    assert isinstance(s, ObjectStore)
    return s


def staged_copy(s: ObjectStore, *files: Path) -> Path:
    d = s.new_staging()
    for f in files:
        (d / f.name).write_bytes(f.read_bytes())
    return d


def fc_files() -> tuple[Path, Path]:
    return MX1 / "fc_flatten-symbol.json", MX1 / "fc_flatten-0000.params"


def test_commit_list_and_cache(bucket, pfx, tmp_path, seaweed):
    s = store(bucket, tmp_path, pfx)
    assert s.models() == [] and s.manifest() is None
    assert s.commit_version("fc", staged_copy(s, *fc_files())) == "1"
    assert s.commit_version("fc", staged_copy(s, *fc_files())) == "2"
    assert s.versions("fc") == ["1", "2"] and s.models() == ["fc"]
    keys = sorted(o["Key"] for o in seaweed.client().list_objects_v2(
        Bucket=bucket, Prefix=pfx + "/")["Contents"])
    assert f"{pfx}/fc/1/fc_flatten-symbol.json" in keys and f"{pfx}/.manifest.json" in keys
    man = s.manifest()
    assert man.models["fc"].versions == ("1", "2") and not man.pending
    # a version's files come from the read cache: downloaded once for unchanged content
    mf = s.files("fc", "1")
    assert mf.symbol.read_bytes() == fc_files()[0].read_bytes()
    n = s.cache.downloads
    assert s.files("fc", "1").symbol == mf.symbol and s.cache.downloads == n
    s2 = store(bucket, tmp_path, pfx)          # a restart on the same cache directory
    assert s2.files("fc", "1").symbol == mf.symbol and s2.cache.downloads == 0
    # replaced content → a new identity and a new download
    ident = s.version_ident("fc", "1")
    s.commit_version("fc", staged_copy(s, MX1 / "fc_flatten-symbol.json"), "1", replace=True)
    assert s.version_ident("fc", "1") != ident
    assert s.files("fc", "1").params is None
    s.delete_version("fc", "1")
    assert s.versions("fc") == ["2"]
    s.delete_model("fc")
    assert s.models() == [] and "fc" not in s.manifest().models


def test_concurrent_commits_get_distinct_versions(bucket, pfx, tmp_path):
    """Two stores (replicas) commit at once: conditional manifest writes number them apart."""
    a, b = store(bucket, tmp_path / "a", pfx), store(bucket, tmp_path / "b", pfx)
    got, start = [], threading.Barrier(4)

    def up(s: ObjectStore) -> None:
        d = staged_copy(s, *fc_files())
        start.wait(30)
        got.append(s.commit_version("race", d))

    ts = [threading.Thread(target=up, args=(s,)) for s in (a, b, a, b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert sorted(got, key=int) == ["1", "2", "3", "4"]
    assert a.versions("race") == ["1", "2", "3", "4"] == b.versions("race")


def test_write_in_progress_is_hidden_then_recovered(bucket, pfx, tmp_path, seaweed):
    """A killed upload leaves its claim and some objects: nobody sees the version; the next
    startup's recovery removes both (its owner is gone)."""
    s = store(bucket, tmp_path, pfx)
    s.commit_version("fc", staged_copy(s, *fc_files()))
    c = seaweed.client()
    c.put_object(Bucket=bucket, Key=f"{pfx}/fc/2/fc_flatten-symbol.json", Body=b"{half")
    man = s.manifest()
    dead = f"{owner_prefix().split('-')[0]}-{2 ** 22 + 12345}-"          # no such pid
    pending = {"fc/2": {"owner": dead, "since": 0}}
    c.put_object(Bucket=bucket, Key=f"{pfx}/.manifest.json",
                 Body=Manifest(man.generation + 1, man.models, pending).to_bytes())
    s._invalidate()
    assert s.versions("fc") == ["1"] and "fc" in s.scan() and "2" not in s.scan()["fc"][0]
    assert s.recover() == ["fc/2"]
    assert s.versions("fc") == ["1"] and not s.manifest().pending
    assert not c.list_objects_v2(Bucket=bucket, Prefix=f"{pfx}/fc/2/").get("Contents")
    # a live owner's claim (this process, not at startup) is left alone
    assert s.commit_version("fc", staged_copy(s, *fc_files())) == "2"


def test_bucket_edited_by_hand(bucket, pfx, tmp_path, seaweed):
    """Objects put by hand (aws s3 sync of a model_store) are served; stray keys ignored; an
    unreadable manifest is ignored as a directory store ignores it."""
    c = seaweed.client()
    for f in (MX2 / "activations_2-symbol.json", MX2 / "activations_2-0000.params"):
        c.put_object(Bucket=bucket, Key=f"{pfx}/mx2/3/{f.name}", Body=f.read_bytes())
    c.put_object(Bucket=bucket, Key=f"{pfx}/mx2/labels.txt", Body=b"a\nb\n")
    c.put_object(Bucket=bucket, Key=f"{pfx}/mx2/config.json", Body=b'{"max_batch_size": 4}')
    for junk in ("README", ".hidden/x", "bad name/1/x", "mx2/1/deep/er/x", "mx2/notaversion/x"):
        c.put_object(Bucket=bucket, Key=f"{pfx}/{junk}", Body=b"x")
    c.put_object(Bucket=bucket, Key=f"{pfx}/.manifest.json", Body=b"{not json")
    s = store(bucket, tmp_path, pfx)
    assert s.models() == ["mx2"] and s.versions("mx2") == ["3"]
    assert s.read_config("mx2").max_batch_size == 4
    mf = s.files("mx2", "3")
    assert (mf.symbol.parent.parent / "labels.txt").read_text() == "a\nb\n"
    assert s.manifest() is None
    s.publish()                                  # the next write repairs the manifest
    assert parse_manifest(s.blobs.get(".manifest.json")[0], "m").models["mx2"].versions == ("3",)


def test_wrong_credentials_and_unreachable(bucket, pfx, tmp_path, monkeypatch, seaweed):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value")
    with pytest.raises(StoreUnavailable) as e:
        store(bucket, tmp_path, pfx).scan()
    msg = e.value.message
    assert bucket in msg and seaweed.endpoint in msg and "credentials" in msg
    assert "wrong-secret-value" not in msg
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")        # nothing listens
    with pytest.raises(StoreUnavailable, match="unreachable") as e:
        store(bucket, tmp_path, pfx).scan()
    assert "127.0.0.1:9" in e.value.message and e.value.status == 503


def test_read_only_credentials_serve_read_only(bucket, pfx, tmp_path, seaweed, monkeypatch):
    """Credentials that may read but not write: the start's recovery finds it out, the store
    is served read-only (uploads 403), not left unready."""
    for f in fc_files():
        seaweed.client().put_object(Bucket=bucket, Key=f"{pfx}/fc/1/{f.name}",
                                    Body=f.read_bytes())
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", READER_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", READER_SECRET)
    s = store(bucket, tmp_path, pfx)
    assert s.recover() == [] and s.read_only
    assert s.versions("fc") == ["1"] and s.files("fc", "1").params is not None
    with pytest.raises(Forbidden):
        s.new_staging()


def test_endpoint_setting_wins_over_env(bucket, pfx, tmp_path, seaweed, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    s = store(bucket, tmp_path, pfx, endpoint_url=seaweed.endpoint)
    assert s.models() == [] and seaweed.endpoint in s.location
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in s.location


class _Flaky(threading.Thread):
    """A loopback proxy in front of the S3 server answering some requests (two in a row
    among them) with 503 SlowDown, as S3 throttles under load."""

    def __init__(self, target: str):
        super().__init__(daemon=True)
        import http.server

        import httpx
        outer = self
        self.count = 0
        self_fail = {2, 3, 7}

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"     # answers boto3's `Expect: 100-continue` at once

            def _any(self):
                outer.count += 1
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                if outer.count in self_fail:
                    msg = b"<Error><Code>SlowDown</Code><Message>slow</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                r = httpx.request(self.command, target + self.path, content=body,
                                  headers=headers, timeout=30)
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def run(self):
        self.server.serve_forever()


def test_throttling_is_retried(bucket, pfx, tmp_path, seaweed):
    proxy = _Flaky(seaweed.endpoint)
    proxy.start()
    try:
        s = store(bucket, tmp_path, pfx, endpoint_url=proxy.url)
        assert s.commit_version("fc", staged_copy(s, *fc_files())) == "1"
        assert s.files("fc", "1").params.read_bytes() == fc_files()[1].read_bytes()
        assert proxy.count >= 10          # three answered 503, every call succeeded
    finally:
        proxy.server.shutdown()

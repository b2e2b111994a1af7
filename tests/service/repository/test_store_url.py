"""A `--model-store` value names a directory (path or file:///PATH) or s3://BUCKET/PREFIX;
any other scheme is refused at start and never becomes a local directory (issue 29:
`s3://models` once became `./s3:/models`, served nothing and reported ready)."""
from __future__ import annotations

import os

import pytest

from service.cli.main import main
from service.core.server import Core
from service.repository.backend import open_store
from service.repository.store import ModelStore
from service.repository.url import UnsupportedStore, split_url
from service.settings import Settings


@pytest.mark.parametrize("spec", ["gs://models/x", "az://c/p", "ftp://h/models", "http://h/m",
                                  "S3X://b", "models:latest"])
def test_unsupported_schemes_are_refused(spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedStore, match="unsupported scheme"):
        open_store(spec)
    with pytest.raises(UnsupportedStore):
        Core(Settings(model_store=spec))
    assert main(["serve", "--model-store", spec, "--port", "0"]) == 2
    assert os.listdir(tmp_path) == []                 # nothing created in the working dir


def test_paths_and_file_urls_open_the_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    for spec in ("m", "./m", str(tmp_path / "m"), f"file://{tmp_path / 'm'}"):
        s = open_store(spec)
        assert isinstance(s, ModelStore) and s.location == str(tmp_path / "m"), spec
    for bad in ("file:m", "file://host/m"):
        with pytest.raises(UnsupportedStore, match="file:///"):
            open_store(bad)


@pytest.mark.parametrize("spec", ["s3://", "s3:bucket/x", "s3:///x", "s3://ab/x"])
def test_malformed_s3_urls_are_refused(spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedStore, match="s3://BUCKET/PREFIX"):
        open_store(spec)
    assert main(["serve", "--model-store", spec, "--port", "0"]) == 2
    assert os.listdir(tmp_path) == []


def test_split_url():
    assert split_url("s3://bucket/a/b") == ("s3", "//bucket/a/b")
    assert split_url("/abs/path") == ("", "/abs/path")
    assert split_url("./a:b") == ("", "./a:b")

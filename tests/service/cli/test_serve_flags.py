"""Every server setting is a `serve` flag with help; every offline option has help; the
top-level help names the commands; a port in use fails before any model loads."""
from __future__ import annotations

import argparse
import importlib
import socket
import subprocess

import pytest

from serverproc import ROOT
from service.cli import offline
from service.cli.flags import add_settings_flags, overrides
from service.cli.main import main, port_problem
from service.settings import Settings

cli_main = importlib.import_module("service.cli.main")   # the package re-exports main()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_settings_flags(p)
    return p


def test_every_setting_is_a_flag_with_help():
    flags = {a.dest: a for a in _parser()._actions if a.dest != "help"}
    assert set(flags) == set(Settings.model_fields)
    for name, action in flags.items():
        help_ = Settings.model_fields[name].description      # the one place help is written
        assert help_ and action.help.startswith(help_)
        assert f"HYBRIDSERVE_{name.upper()}" in action.help


def test_flags_become_settings():
    args = _parser().parse_args(["--max-image-pixels", "1234", "--no-optimize-graphs",
                                 "--log-level", "debug", "--model-store", "/tmp/x",
                                 "--store-poll-s", "0.5", "--auth-token", "s3cret"])
    s = Settings(**overrides(args))
    assert (s.max_image_pixels, s.optimize_graphs, s.log_level, s.store_poll_s) == \
        (1234, False, "debug", 0.5)
    assert str(s.model_store) == "/tmp/x" and s.auth_token.get_secret_value() == "s3cret"
    assert overrides(_parser().parse_args([])) == {}          # env and defaults untouched
    with pytest.raises(SystemExit):
        _parser().parse_args(["--log-level", "loud"])


def test_offline_options_have_help():
    p = argparse.ArgumentParser()
    offline.add_commands(p.add_subparsers(dest="cmd"))
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    for cmd, sp in sub.choices.items():
        for a in sp._actions:
            assert a.help, f"{cmd} {a.option_strings or a.dest} has no help"


def test_top_level_help_names_the_commands():
    out = subprocess.run([str(ROOT / ".venv/bin/python"), "-m", "service.cli.main", "--help"],
                         capture_output=True, text=True, cwd=ROOT).stdout
    assert "offline.py" not in out
    for cmd in ("serve", "summary", "validate", "predict", "inspect", "convert"):
        assert cmd in out


def test_a_port_in_use_fails_before_loading(monkeypatch, capsys, tmp_path):
    def no_load(*_a, **_k):
        raise AssertionError("models were loaded before the port was checked")
    monkeypatch.setattr(cli_main, "create_app", no_load)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert "already in use" in port_problem("127.0.0.1", port)
        assert main(["serve", "--port", str(port), "--grpc-port", "0",
                     "--model-store", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hybridserve: error: port") and "already in use" in err
    assert "{" not in err                                      # a plain line, not a JSON log
    assert port_problem("127.0.0.1", port) is None             # free again


def test_user_models_in_the_default_store_are_ignored_by_git():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", path],
                              cwd=ROOT).returncode == 0
    assert ignored("model_store/mymlp/1/mymlp-symbol.json")
    assert ignored("model_store/fc/config.json")
    for demo in ("model_store/mlp/config.json", "model_store/colors/labels.txt",
                 "model_store/lenet/1/lenet-symbol.json", "model_store/README.md"):
        assert not ignored(demo), demo

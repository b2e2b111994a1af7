"""`hybridserve predict`: images through the model's declared preprocessing (top-K with labels,
as the server answers), float64 .npy cast for a float32 model, .npz keys naming the inputs."""
from __future__ import annotations

import json

import numpy as np
from PIL import Image

from serverproc import ROOT
from service.cli import main
from service.cli.demo import COLORS

STORE = str(ROOT / "model_store")


def test_predict_image_top5_with_labels(tmp_path, capsys):
    Image.new("RGB", (300, 200), COLORS["orange"]).save(tmp_path / "o.jpg")
    Image.new("RGB", (50, 80), COLORS["cyan"]).save(tmp_path / "c.png")
    assert main(["predict", "colors", "--model-store", STORE, "-q",
                 "--image", str(tmp_path / "o.jpg"), "--image", str(tmp_path / "c.png")]) == 0
    rows = json.loads(capsys.readouterr().out)["probabilities"]
    assert [len(r) for r in rows] == [5, 5]
    assert rows[0][0].split(":")[1:] == [str(list(COLORS).index("orange")), "orange"]
    assert rows[1][0].endswith(":cyan")
    assert main(["predict", "colors", "--model-store", STORE, "-q", "--top", "2",
                 "--image", str(tmp_path / "o.jpg")]) == 0
    assert len(json.loads(capsys.readouterr().out)["probabilities"][0]) == 2


def test_predict_image_errors(tmp_path, capsys):
    (tmp_path / "x.jpg").write_bytes(b"plain text")
    assert main(["predict", "colors", "--model-store", STORE, "-q",
                 "--image", str(tmp_path / "x.jpg")]) == 1
    assert "not an image in a supported format" in capsys.readouterr().err
    assert main(["predict", "mlp", "--model-store", STORE, "-q",
                 "--image", str(tmp_path / "x.jpg")]) == 1
    assert "declares no image input" in capsys.readouterr().err


def test_float64_npy_is_cast_and_said(tmp_path, capsys):
    x = np.random.default_rng(0).standard_normal((2, 512))          # float64, NumPy's default
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "x32.npy", x.astype(np.float32))
    assert main(["predict", "mlp", "--model-store", STORE, "--input", str(tmp_path / "x.npy")]) == 0
    cap = capsys.readouterr()
    assert "input 'data': cast float64 → float32" in cap.err
    assert main(["predict", "mlp", "--model-store", STORE, "-q",
                 "--input", str(tmp_path / "x32.npy")]) == 0
    assert json.loads(cap.out) == json.loads(capsys.readouterr().out)
    np.save(tmp_path / "huge.npy", np.full((1, 512), 1e300))
    assert main(["predict", "mlp", "--model-store", STORE, "-q",
                 "--input", str(tmp_path / "huge.npy")]) == 1
    assert "does not fit float32 (512 values overflow" in capsys.readouterr().err


def test_npz_keys_name_inputs_and_others_are_ignored(tmp_path, capsys):
    x = np.random.default_rng(1).standard_normal((1, 512)).astype(np.float32)
    np.savez(tmp_path / "in.npz", labels=np.arange(3), data=x)
    assert main(["predict", "mlp", "--model-store", STORE, "--input", str(tmp_path / "in.npz")]) == 0
    cap = capsys.readouterr()
    assert "ignoring .npz keys ['labels']" in cap.err
    assert np.asarray(json.loads(cap.out)["output"]).shape == (1, 2)
    np.savez(tmp_path / "bad.npz", x=x)
    assert main(["predict", "mlp", "--model-store", STORE, "-q",
                 "--input", str(tmp_path / "bad.npz")]) == 1
    assert ".npz file lacks ['data'] (its keys: ['x']" in capsys.readouterr().err

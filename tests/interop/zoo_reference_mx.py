"""Record MXNet's model-zoo facts into tests/fixtures/zoo_reference.json.

    .mxnet-venvs/mxnet-1.9.1/bin/python tests/interop/zoo_reference_mx.py [--only NAME ...]
    .mxnet-venvs/mxnet-2.0.0b1/bin/python tests/interop/zoo_reference_mx.py   # repr digests

Per architecture: parameter count and output shape at the standard input (224, 299 for
Inception) and at a small input (see zoo_common.small_input_size), and a digest of the
structural parameter names with shapes. The default test suite compares hybridserve's zoo
against this file without needing MXNet. Run under MXNet 2.0.0b1, the script only adds
`repr_sha256_mx2`: a digest of each network's Gluon 2 `repr()` (before any forward).
"""
import hashlib
import argparse
import json
import os
import sys
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxnet as mx  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

from zoo_common import REPO, ZOO_MODELS, input_size, params_digest, small_input_size  # noqa: E402

OUT = os.path.join(REPO, "tests", "fixtures", "zoo_reference.json")


def facts(name: str, side: int) -> dict:
    net = vision.get_model(name)
    net.initialize(mx.init.Zero())
    out = net(mx.nd.zeros((1, 3, side, side)))
    named = net._collect_params_with_prefix()
    count = sum(int(p.data().size) for p in named.values())
    return {"input": [1, 3, side, side], "params": count, "output_shape": list(out.shape),
            "digest": params_digest((k, p.shape) for k, p in named.items()),
            "n_param_arrays": len(named)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    ref = json.load(open(OUT)) if os.path.exists(OUT) else {}
    models = ref.setdefault("models", {})
    if mx.__version__.startswith("2"):
        for name in ZOO_MODELS:
            if not args.only or name in args.only:
                text = repr(vision.get_model(name)).encode("utf-8")
                models[name]["repr_sha256_mx2"] = hashlib.sha256(text).hexdigest()
        with open(OUT, "w") as f:
            json.dump(ref, f, indent=1, sort_keys=True)
            f.write("\n")
        return
    ref["meta"] = {"mxnet": mx.__version__, "generator": "tests/interop/zoo_reference_mx.py"}
    for name in ZOO_MODELS:
        if args.only and name not in args.only:
            continue
        std, small = input_size(name), small_input_size(name)
        entry = {"standard": facts(name, std)}
        entry["small"] = entry["standard"] if small == std else facts(name, small)
        models.setdefault(name, {}).update(entry)
        print(f"{name:18s} params={entry['standard']['params']:>11,d} "
              f"small={entry['small']['params']:>11,d} out={entry['standard']['output_shape']}",
              flush=True)
    with open(OUT, "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

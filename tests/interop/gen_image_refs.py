"""Record MXNet 2.0's outputs of its image operators (npx.image.*, BilinearSampler) on random
images (run in the MXNet 2.0 venv) → tests/fixtures/image_ops_mx2.npz, read by
tests/ops/test_image_refs.py. The random operators are recorded with degenerate ranges (one
factor, one position), which makes them deterministic. (MXNet 2.0.0b1's random_crop to a size
larger than the image returns uninitialised memory, so that case is not recorded.)

    /path/to/mxnet-2.0.0b1/bin/python tests/interop/gen_image_refs.py
"""
from __future__ import annotations

import json
import os
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "image_ops_mx2.npz")
rng = np.random.default_rng(11)


def image(shape, dtype):
    return rng.uniform(0, 255, shape).astype(dtype)


def cases():
    for dt in ("uint8", "float32"):
        img, batch = image((13, 10, 3), dt), image((2, 9, 14, 1), dt)
        for interp in (0, 1, 2, 3):
            for size in ((7, 5), (23, 31), (6, 29)):
                yield "resize", {"size": size, "interp": interp}, [img]
        yield "resize", {"size": (8,), "keep_ratio": True}, [img]
        yield "resize", {"size": (8,), "keep_ratio": True}, [batch]
        yield "resize", {"size": (5,)}, [batch]
        yield "crop", {"x": 2, "y": 3, "width": 5, "height": 4}, [img]
        yield "flip_left_right", {}, [img]
        yield "flip_top_bottom", {}, [img]
        yield "to_tensor", {}, [img]
        yield "to_tensor", {}, [batch]
        yield "random_crop", {"xrange": (0.5, 0.5), "yrange": (0.5, 0.5), "width": 6,
                              "height": 4}, [img]
        yield "random_brightness", {"min_factor": 1.3, "max_factor": 1.3}, [img]
        yield "random_contrast", {"min_factor": 0.6, "max_factor": 0.6}, [img]
        yield "random_hue", {"min_factor": 0.15, "max_factor": 0.15}, [img]
        yield "adjust_lighting", {"alpha": (0.02, -0.01, 0.03)}, [img]
    t = rng.uniform(0, 1, (3, 6, 5)).astype("float32")
    yield "normalize", {"mean": (0.1, 0.2, 0.3), "std": (0.5, 2.0, 1.0)}, [t]
    yield "normalize", {"mean": (0.4,), "std": (0.25,)}, [t[None, :1]]


def run(stem, attrs, ins):
    mx.npx.set_np()
    return getattr(mx.npx.image, stem)(*[mx.np.array(x, dtype=x.dtype) for x in ins], **attrs)


def main():
    arrays, meta = {}, []
    for i, (stem, attrs, ins) in enumerate(cases()):
        out = run(stem, attrs, ins).asnumpy()
        for j, x in enumerate(ins):
            arrays[f"{i}:in{j}"] = x
        arrays[f"{i}:out0"] = out
        meta.append({"op": f"_image_{stem}", "attrs": {k: str(v) for k, v in attrs.items()},
                     "n_in": len(ins)})
    data = rng.normal(size=(2, 3, 7, 8)).astype("float32")
    grid = rng.uniform(-1.2, 1.2, (2, 2, 5, 6)).astype("float32")
    i = len(meta)
    arrays.update({f"{i}:in0": data, f"{i}:in1": grid,
                   f"{i}:out0": mx.nd.BilinearSampler(mx.nd.array(data), mx.nd.array(grid)).asnumpy()})
    meta.append({"op": "BilinearSampler", "attrs": {}, "n_in": 2})
    np.savez_compressed(OUT, meta=json.dumps(meta), **arrays)
    print(f"wrote {len(meta)} cases to {OUT}")


if __name__ == "__main__":
    main()

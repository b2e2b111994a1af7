"""Model-zoo vision networks with MXNet's names: `get_model('resnet18_v1', classes=10)`.

Architectures, parameter names and counts match `mxnet.gluon.model_zoo.vision`. Weights are
random unless `pretrained=True`, which loads `<root>/<name>[-<hash>].params` from local disk.
"""
from __future__ import annotations

from ...hybrid_block import HybridBlock
from .alexnet import *  # noqa: F401,F403
from .alexnet import alexnet
from .densenet import *  # noqa: F401,F403
from .densenet import densenet121, densenet161, densenet169, densenet201
from .inception import *  # noqa: F401,F403
from .inception import inception_v3
from .mobilenet import *  # noqa: F401,F403
from .mobilenet import (mobilenet0_5, mobilenet0_25, mobilenet0_75, mobilenet1_0,
                        mobilenet_v2_0_5, mobilenet_v2_0_25, mobilenet_v2_0_75, mobilenet_v2_1_0)
from .resnet import *  # noqa: F401,F403
from .resnet import (resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2, resnet50_v1,
                     resnet50_v2, resnet101_v1, resnet101_v2, resnet152_v1, resnet152_v2)
from .squeezenet import *  # noqa: F401,F403
from .squeezenet import squeezenet1_0, squeezenet1_1
from .vgg import *  # noqa: F401,F403
from .vgg import vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

_models = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161, "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75, "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}
# also accepted: the constructor names (`inception_v3`, `squeezenet1_0`, `mobilenet_v2_1_0`)
# and `mobilenet_v2_1.0`-style spellings
_aliases = {f.__name__: k for k, f in _models.items()}
_aliases.update({k.replace("mobilenetv2_", "mobilenet_v2_"): k for k in _models
                 if k.startswith("mobilenetv2_")})
_aliases["inception_v3"] = "inceptionv3"


def model_names() -> list[str]:
    """MXNet's canonical model names, sorted."""
    return sorted(_models)


def get_model(name: str, **kwargs) -> HybridBlock:
    """A model-zoo network by MXNet name.

    Keyword arguments: `pretrained=False`, `classes=1000`, `root='~/.mxnet/models'`,
    `device`/`ctx`, and architecture options (`thumbnail`, `batch_norm`, …).
    """
    key = name.lower()
    key = key if key in _models else _aliases.get(key, key)
    if key not in _models:
        raise ValueError("Model %s is not supported. Available options are\n\t%s"
                         % (name, "\n\t".join(sorted(_models))))
    return _models[key](**kwargs)

"""PyTorch modules equivalent to dptrain's models, for its exports.

`dptrain export` names each tensor as the state_dict of these modules names
it, and puts the model's description (layers, input, classes) in the
safetensors __metadata__["model"] (and model.json beside .npy files):

    from torch_models import load_export, from_meta, predict
    meta, state = load_export("m.safetensors")  # the standard library reads the header
    model = from_meta(meta)
    model.load_state_dict(state)
    probs = predict(model, meta, x)  # x: [N, *meta["input"]["shape"]], scaled and preprocessed

No `safetensors` package is needed (Debian does not ship it): the format is
an 8-byte little-endian header length, a JSON header and the raw tensors,
which load_export reads with json and struct, as scripts/numpy_client.py
does.

The zoo constructors below build the same modules by hand. Every model is an
nn.Sequential, as models.FromLayers stacks are.
"""
import json
import struct

import torch
import torch.nn.functional as F
from torch import nn


def load_export(path):
    """The model description and its state_dict from a `dptrain export`
    .safetensors file, read with the standard library (F32 tensors only,
    which is what export writes)."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    meta = json.loads(header.pop("__metadata__")["model"])
    data = b[8 + n:]
    state = {}
    for name, e in header.items():
        if e["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {e['dtype']}, want F32")
        lo, hi = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[lo:hi]), dtype=torch.float32)
        state[name] = t.reshape(e["shape"]) if e["shape"] else t.reshape(())
    return meta, state


class Linear(nn.Linear):
    """nn.Linear that reads any input as a flat vector, as dptrain's does."""

    def forward(self, x):
        return super().forward(x.flatten(1))


class WSConv2d(nn.Conv2d):
    """Bias-free convolution with each output channel's kernel standardised:
    (w - mean) / sqrt(var + eps), biased variance."""

    def __init__(self, cin, cout, k, stride=1, padding=0, eps=1e-4):
        super().__init__(cin, cout, k, stride, padding, bias=False)
        self.eps = eps

    def forward(self, x):
        w = self.weight
        m = w.mean(dim=(1, 2, 3), keepdim=True)
        v = w.var(dim=(1, 2, 3), unbiased=False, keepdim=True)
        return F.conv2d(x, (w - m) / torch.sqrt(v + self.eps), None, self.stride, self.padding)


class Residual(nn.Module):
    """body(x) + shortcut(x); the identity when shortcut is None."""

    def __init__(self, body, shortcut=None):
        super().__init__()
        self.body, self.shortcut = body, shortcut

    def forward(self, x):
        return self.body(x) + (x if self.shortcut is None else self.shortcut(x))


class GlobalAvgPool(nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3))


def layer(s):
    """The module of one layer of the metadata's "layers" list."""
    t = s["type"]
    if t == "linear":
        return Linear(s["in"], s["out"], bias=s.get("bias", False))
    if t == "conv2d":
        args = (s["in"], s["out"], s["kernel"], s.get("stride", 1), s.get("padding", 0))
        if s.get("weight_std"):
            return WSConv2d(*args, eps=s["eps"])
        return nn.Conv2d(*args, bias=s.get("bias", False))
    if t == "groupnorm":
        return nn.GroupNorm(s["groups"], s["in"], eps=s["eps"], affine=s.get("affine", False))
    if t == "sequential":
        return nn.Sequential(*map(layer, s["layers"]))
    if t == "residual":
        return Residual(layer(s["body"]), layer(s["shortcut"]) if s.get("shortcut") else None)
    simple = {
        "relu": nn.ReLU, "tanh": nn.Tanh, "flatten": nn.Flatten, "globalavgpool": GlobalAvgPool,
        "dropout": lambda: nn.Dropout(s.get("p", 0)),
        "maxpool2d": lambda: nn.MaxPool2d(s["kernel"], s["stride"]),
        "avgpool2d": lambda: nn.AvgPool2d(s["kernel"], s["stride"]),
    }
    return simple[t]()


def from_meta(meta):
    """The model an export describes (zoo or models.FromLayers)."""
    return nn.Sequential(*map(layer, meta["layers"]))


def predict(model, meta, x):
    """Probabilities as `dptrain predict` prints them (a regression's value)."""
    model.eval()
    with torch.no_grad():
        z = model(x)
    if meta["output"] == "softmax":
        return z.softmax(1)
    if meta["output"] == "sigmoid":  # one logit: columns 1 - p, p
        p = torch.sigmoid(z)
        return torch.cat([1 - p, p], 1)
    return z


# The zoo, by hand (models/zoo.go, models/scatter.go).

def logreg(d, classes):
    return nn.Sequential(Linear(d, 1 if classes == 2 else classes))


def mlp(d, widths, classes, activation="relu"):
    act = nn.ReLU if activation == "relu" else nn.Tanh
    mods, prev = [], d
    for w in widths:
        mods += [Linear(prev, w), act()]
        prev = w
    return nn.Sequential(*mods, Linear(prev, classes))


def mnist_cnn(classes=10):
    return nn.Sequential(
        nn.Conv2d(1, 16, 8, 2, 3), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Conv2d(16, 32, 4, 2), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Flatten(), Linear(512, 32), nn.Tanh(), Linear(32, classes))


def scatter_cnn(c, h, w, classes):
    return nn.Sequential(
        nn.Conv2d(c, 64, 3, 1, 1), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Conv2d(64, 64, 3, 1, 1), nn.Tanh(), nn.Flatten(), Linear(64 * (h // 2) * (w // 2), classes))


def _conv(cin, cout, k, stride, pad, ws):
    return WSConv2d(cin, cout, k, stride, pad) if ws else nn.Conv2d(cin, cout, k, stride, pad, bias=False)


def _block(cin, cout, stride, ws):
    body = nn.Sequential(
        _conv(cin, cout, 3, stride, 1, ws), nn.GroupNorm(4, cout), nn.ReLU(),
        _conv(cout, cout, 3, 1, 1, ws), nn.GroupNorm(4, cout))
    if cin == cout and stride == 1:
        return Residual(body)
    return Residual(body, nn.Sequential(_conv(cin, cout, 1, stride, 0, ws), nn.GroupNorm(4, cout)))


def resnet_gn(blocks, classes=10, in_channels=3, weight_std=False):
    """ResNet with GroupNorm(4): blocks (3, 3, 3) is resnet20gn, (3, 4, 3) resnet22gn."""
    mods, cin = [_conv(in_channels, 16, 3, 1, 1, weight_std), nn.GroupNorm(4, 16), nn.ReLU()], 16
    for s, width in enumerate((16, 32, 64)):
        for b in range(blocks[s]):
            mods += [_block(cin, width, 2 if s > 0 and b == 0 else 1, weight_std), nn.ReLU()]
            cin = width
    return nn.Sequential(*mods, GlobalAvgPool(), Linear(64, classes))


def resnet20gn(classes=10, weight_std=False):
    return resnet_gn((3, 3, 3), classes, weight_std=weight_std)


def resnet22gn(classes=10, weight_std=False):
    return resnet_gn((3, 4, 3), classes, weight_std=weight_std)

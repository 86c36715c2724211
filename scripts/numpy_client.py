#!/usr/bin/env python3
"""Run a `dptrain export` with NumPy alone, from the export's metadata.

    python3 scripts/numpy_client.py EXPORT INPUT.csv

EXPORT is a .safetensors file or an npy directory (NAME.npy and model.json).
INPUT.csv holds one record per line: the model's columns by name when the
model records them (its header line names them), else its features in order
(a header line, if any, is skipped). Values are used as given: scale raw
pixels by input.scale yourself. Prints one line of probabilities per record
(a regression's value), as `dptrain predict` computes them.
"""
import csv
import json
import os
import struct
import sys

import numpy as np


def load(path):
    """The model description and its tensors by name."""
    if os.path.isdir(path):
        with open(os.path.join(path, "model.json")) as f:
            meta = json.load(f)
        tensors = {n[:-4]: np.load(os.path.join(path, n)) for n in os.listdir(path) if n.endswith(".npy")}
        return meta, tensors
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    meta = json.loads(header.pop("__metadata__")["model"])
    data = b[8 + n:]
    tensors = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", e
        lo, hi = e["data_offsets"]
        tensors[name] = np.frombuffer(data[lo:hi], dtype="<f4").reshape(e["shape"])
    return meta, tensors


def windows(x, k, stride):
    """[N, C, OH, OW, k, k] views of the k×k windows moved by stride."""
    v = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))
    return v[:, :, ::stride, ::stride]


def forward(s, x, t):
    """Layer s (a metadata dict) on x, [N, C, H, W] or [N, D]; t: tensors."""
    typ = s["type"]
    if typ == "linear":
        w = t[s["tensors"][0]].astype(np.float64)
        z = x.reshape(len(x), -1) @ w.T
        return z + t[s["tensors"][1]] if s.get("bias") else z
    if typ == "conv2d":
        w = t[s["tensors"][0]].astype(np.float64)
        if s.get("weight_std"):
            m = w.mean(axis=(1, 2, 3), keepdims=True)
            w = (w - m) / np.sqrt(w.var(axis=(1, 2, 3), keepdims=True) + s["eps"])
        p = s.get("padding", 0)
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        z = np.einsum("nchwij,ocij->nohw", windows(xp, s["kernel"], s.get("stride", 1)), w, optimize=True)
        return z + t[s["tensors"][1]][None, :, None, None] if s.get("bias") else z
    if typ == "relu":
        return np.maximum(x, 0)
    if typ == "tanh":
        return np.tanh(x)
    if typ == "dropout":
        return x
    if typ == "maxpool2d":
        return windows(x, s["kernel"], s["stride"]).max(axis=(4, 5))
    if typ == "avgpool2d":
        return windows(x, s["kernel"], s["stride"]).mean(axis=(4, 5))
    if typ == "globalavgpool":
        return x.mean(axis=(2, 3))
    if typ == "flatten":
        return x.reshape(len(x), -1)
    if typ == "groupnorm":
        n, c = x.shape[:2]
        g = x.reshape(n, s["groups"], -1)
        g = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + s["eps"])
        y = g.reshape(x.shape)
        if s.get("affine"):
            shape = (1, c) + (1,) * (x.ndim - 2)
            y = y * t[s["tensors"][0]].reshape(shape) + t[s["tensors"][1]].reshape(shape)
        return y
    if typ == "sequential":
        for l in s["layers"]:
            x = forward(l, x, t)
        return x
    if typ == "residual":
        sc = forward(s["shortcut"], x, t) if s.get("shortcut") else x
        return forward(s["body"], x, t) + sc
    raise ValueError("unknown layer type %r" % typ)


def preprocess(meta, x):
    """The model's preprocessing of the records x, [N, D]."""
    def normalize(c):
        nrm = np.sqrt((x * x).sum(axis=1, keepdims=True))
        return np.where(nrm > 0, x * (c / np.where(nrm > 0, nrm, 1)), x)
    for p in meta.get("preprocess", []):
        if p["type"] == "l2_normalize":
            x = normalize(p["c"])
        elif p["type"] == "center":
            if p.get("c", 0) > 0:
                x = normalize(p["c"])
            x = x - np.asarray(p["mean"])
        elif p["type"] == "clip_scale":
            x = np.clip(x, np.asarray(p["lo"]), np.asarray(p["hi"]))
            x = (x - np.asarray(p["mean"])) / np.asarray(p["scale"])
        else:
            raise ValueError("preprocessing %r is not in the export" % p.get("name", p["type"]))
    return x


def predict(meta, tensors, x):
    """Probabilities (a regression's value) for the records x, [N, D]."""
    x = preprocess(meta, np.asarray(x, dtype=np.float64))
    z = x.reshape((len(x),) + tuple(meta["input"]["shape"]))
    for s in meta["layers"]:
        z = forward(s, z, tensors)
    z = z.reshape(len(z), -1)
    if meta["output"] == "softmax":
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if meta["output"] == "sigmoid":
        p = 1 / (1 + np.exp(-z))
        return np.concatenate([1 - p, p], axis=1)
    return z


def read_records(path, meta):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    cols = meta["input"].get("columns")
    if cols:
        idx = [rows[0].index(c) for c in cols]
        return [[float(r[i]) for i in idx] for r in rows[1:]]
    try:
        [float(v) for v in rows[0]]
    except ValueError:
        rows = rows[1:]
    return [[float(v) for v in r] for r in rows]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    meta, tensors = load(sys.argv[1])
    probs = predict(meta, tensors, read_records(sys.argv[2], meta))
    for row in probs:
        print(",".join("%.9g" % p for p in row))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Build the small convolutional detector the ort-run workload runs by default.

A one-shot model of the kind run once per camera frame (not a decoder): an image in, box offsets
and class scores per anchor out, random weights from a fixed seed, f32 throughout (SwiftShader
has no shader-f16). Operators (ONNX operator docs, docs/Operators.md in onnx/onnx), all of which
onnxruntime-web's WebGPU execution provider runs on the GPU:

  image [batch, 3, H, W]
    Conv 3x3 stride 2 -> Relu -> Conv 3x3 stride 2 -> Relu -> Conv 3x3 -> Relu -> MaxPool 2x2
    box head:   Conv 1x1 (4 * anchors)            -> Transpose NHWC -> Reshape -> boxes  [batch, cells * anchors, 4]
    score head: Conv 1x1 (classes * anchors) -> Sigmoid -> Transpose -> Reshape -> scores [batch, cells * anchors, classes]

`batch` is a symbolic (dynamic) dimension, so the workload's `dims` parameter exercises it.

Output: <out>/model.onnx, <out>/config.json (dimensions, I/O names and shapes), <out>/input.npy
(a fixed [1, 3, H, W] input) and <out>/expected.json (sum and first values of every output for
input.npy, computed by the NumPy reference below — float64, so the browser's f32 result agrees
to about 1e-4 relative). Same flags, same bytes.

Regenerate the committed fixture:
    python workloads/ort-run/make_model.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
OPSET = 17

PRESETS: dict[str, dict[str, int]] = {
    # 64x64 RGB, 3 anchors, 2 classes: 7 Conv-family kernels, a few hundred KB of work per run.
    "conv-tiny": dict(height=64, width=64, c1=8, c2=16, c3=16, anchors=3, classes=2, seed=7),
}


def conv_weights(rng: np.random.Generator, cout: int, cin: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """He-scaled random weights [cout, cin, k, k] and small biases [cout], f32."""
    w = rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
    b = rng.standard_normal(cout) * 0.05
    return w.astype(np.float32), b.astype(np.float32)


def weights(cfg: dict[str, int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(cfg["seed"])
    a, c = cfg["anchors"], cfg["classes"]
    return {
        "conv1": conv_weights(rng, cfg["c1"], 3, 3),
        "conv2": conv_weights(rng, cfg["c2"], cfg["c1"], 3),
        "conv3": conv_weights(rng, cfg["c3"], cfg["c2"], 3),
        "box": conv_weights(rng, 4 * a, cfg["c3"], 1),
        "score": conv_weights(rng, c * a, cfg["c3"], 1),
    }


def build(cfg: dict[str, int]) -> tuple[onnx.ModelProto, dict]:
    w = weights(cfg)
    h, wd, a, c = cfg["height"], cfg["width"], cfg["anchors"], cfg["classes"]
    cells = (h // 8) * (wd // 8)
    nodes, inits = [], []
    for name, (wt, bias) in w.items():
        inits += [numpy_helper.from_array(wt, f"{name}.weight"), numpy_helper.from_array(bias, f"{name}.bias")]
    inits += [numpy_helper.from_array(np.array([0, -1, 4], np.int64), "boxes_shape"),
              numpy_helper.from_array(np.array([0, -1, c], np.int64), "scores_shape")]

    def conv(x: str, name: str, k: int, stride: int) -> str:
        pad = k // 2
        nodes.append(helper.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [f"{name}_out"], name=name,
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4))
        return f"{name}_out"

    def relu(x: str, name: str) -> str:
        nodes.append(helper.make_node("Relu", [x], [f"{name}_relu"], name=f"{name}_relu"))
        return f"{name}_relu"

    x = relu(conv("image", "conv1", 3, 2), "conv1")
    x = relu(conv(x, "conv2", 3, 2), "conv2")
    x = relu(conv(x, "conv3", 3, 1), "conv3")
    nodes.append(helper.make_node("MaxPool", [x], ["pool_out"], name="pool", kernel_shape=[2, 2], strides=[2, 2]))
    box = conv("pool_out", "box", 1, 1)
    nodes.append(helper.make_node("Transpose", [box], ["box_nhwc"], name="box_nhwc", perm=[0, 2, 3, 1]))
    nodes.append(helper.make_node("Reshape", ["box_nhwc", "boxes_shape"], ["boxes"], name="boxes"))
    score = conv("pool_out", "score", 1, 1)
    nodes.append(helper.make_node("Sigmoid", [score], ["score_sigmoid"], name="score_sigmoid"))
    nodes.append(helper.make_node("Transpose", ["score_sigmoid"], ["score_nhwc"], name="score_nhwc", perm=[0, 2, 3, 1]))
    nodes.append(helper.make_node("Reshape", ["score_nhwc", "scores_shape"], ["scores"], name="scores"))
    graph = helper.make_graph(
        nodes, "conv-detector",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, h, wd])],
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", cells * a, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", cells * a, c])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="webgpu-harness")
    model.ir_version = 8
    onnx.checker.check_model(model)
    config = {**cfg, "inputs": {"image": ["batch", 3, h, wd]},
              "outputs": {"boxes": ["batch", cells * a, 4], "scores": ["batch", cells * a, c]},
              "operators": sorted({n.op_type for n in nodes})}
    return model, config


# --- NumPy reference (float64) ---------------------------------------------------------------

def ref_conv(x: np.ndarray, wt: np.ndarray, bias: np.ndarray, stride: int) -> np.ndarray:
    """NCHW convolution with 'same'-style padding k // 2 (the graph's pads), by patches."""
    n, cin, h, w = x.shape
    cout, _, k, _ = wt.shape
    p = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    ho, wo = (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1
    out = np.zeros((n, cout, ho, wo))
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
            out += np.einsum("nchw,oc->nohw", patch, wt[:, :, i, j].astype(np.float64))
    return out + bias.astype(np.float64)[None, :, None, None]


def reference(x: np.ndarray, cfg: dict[str, int]) -> dict[str, np.ndarray]:
    """boxes and scores of the graph for input x [n, 3, H, W], in float64."""
    w = weights(cfg)
    y = x.astype(np.float64)
    for name, stride in (("conv1", 2), ("conv2", 2), ("conv3", 1)):
        y = np.maximum(ref_conv(y, *w[name], stride), 0)
    n, ch, h, wd = y.shape
    y = y.reshape(n, ch, h // 2, 2, wd // 2, 2).max(axis=(3, 5))
    box = ref_conv(y, *w["box"], 1).transpose(0, 2, 3, 1).reshape(n, -1, 4)
    score = 1 / (1 + np.exp(-ref_conv(y, *w["score"], 1)))
    score = score.transpose(0, 2, 3, 1).reshape(n, -1, cfg["classes"])
    return {"boxes": box, "scores": score}


def fixed_input(cfg: dict[str, int]) -> np.ndarray:
    """A deterministic [1, 3, H, W] f32 image in [0, 1)."""
    rng = np.random.default_rng(cfg["seed"] + 1000)
    return rng.random((1, 3, cfg["height"], cfg["width"])).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="conv-tiny", choices=sorted(PRESETS))
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: models/<preset>/ next to this script)")
    args = ap.parse_args(argv)
    cfg = PRESETS[args.preset]
    out = args.out or HERE / "models" / args.preset
    out.mkdir(parents=True, exist_ok=True)
    model, config = build(cfg)
    data = model.SerializeToString()
    (out / "model.onnx").write_bytes(data)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    x = fixed_input(cfg)
    np.save(out / "input.npy", x)
    ref = reference(x, cfg)
    expected = {"input": "input.npy", "outputs": {k: {"shape": list(v.shape), "sum": float(v.sum()),
                                                      "first": [float(f) for f in v.reshape(-1)[:8]]}
                                                  for k, v in ref.items()}}
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{out / 'model.onnx'}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}, "
          f"operators {', '.join(config['operators'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Build small Qwen2-architecture decoder-only LLMs in ONNX for the ort-decode workload.

The graphs use the same operators onnxruntime-genai's model builder emits for a q4 Qwen2 model
(and that onnxruntime-web's WebGPU execution provider runs on the GPU), with random weights from
a fixed seed, f32 activations (SwiftShader has no shader-f16) and 4-bit block-32 weights.

Operators and where they are specified (ONNX Runtime contrib op docs, docs/ContribOperators.md in
microsoft/onnxruntime, unless noted):
  - Embedding: com.microsoft.GatherBlockQuantized (uint8 data holding two 4-bit values per byte,
    low nibble first, quantize_axis = last, gather_axis = 0, default zero point 8 for uint8 data)
    or ai.onnx Gather on an f32 table (docs/Operators.md in onnx/onnx).
  - RMS norms: SimplifiedLayerNormalization (ONNX Runtime's own op in the ai.onnx domain, schema in
    onnxruntime/core/graph/contrib_ops/contrib_defs.cc, not in ContribOperators.md) for the first
    input_layernorm; com.microsoft.SkipSimplifiedLayerNormalization for every later norm (its 4th
    output, input_skip_bias_sum, carries the residual stream), as the genai builder fuses them.
  - Projections: com.microsoft.MatMulNBits, bits=4, block_size=32, B of shape (N, K/32, 16) uint8,
    scales (N, K/32) f32, no zero_points (default 8). Qwen2's q/k/v biases are separate ai.onnx Add
    nodes (the JS EP's MatMulNBits takes no bias input).
  - Rotary position embedding: either com.microsoft.RotaryEmbedding on q and k fed by the
    position_ids input and cos/sin caches (--rope op), or inside com.microsoft.GroupQueryAttention
    with do_rotary=1 and cos_cache/sin_cache inputs (--rope gqa, positions from seqlens_k).
  - Attention: com.microsoft.GroupQueryAttention with past_key/past_value (BNSH), seqlens_k =
    ReduceSum(attention_mask) - 1 as int32 and total_sequence_length = attention_mask.shape[1]
    as an int32 scalar, outputs present_key/present_value (BNSH, past + new length).
  - MLP: SiLU(gate) * up with SiLU = Sigmoid(x) * x (ai.onnx Sigmoid and Mul), then down.
  - Head: SkipSimplifiedLayerNormalization (final norm) then MatMulNBits to the vocabulary.

Inputs/outputs follow onnxruntime-genai and Transformers.js: input_ids, attention_mask,
position_ids (only with --rope op), past_key_values.N.key/value -> logits, present.N.key/value.
--io-names alt renames the cache to past_key.N / past_value.N -> present_key.N / present_value.N
and lists logits last, for tests of the workload's name discovery.

Output: <out>/model.onnx (one file, no external data), <out>/config.json (dimensions and I/O
names) and, unless --no-expected, <out>/expected.json (greedy tokens from onnxruntime's CPU EP
for the default prompt, a cross-check for the browser run). Same flags, same bytes.

Regenerate the committed fixtures:
    python workloads/ort-decode/make_model.py --preset all
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
MS = "com.microsoft"
BLOCK_SIZE = 32
DEFAULT_PROMPT = [1, 17, 42, 99, 7]

PRESETS: dict[str, dict[str, object]] = {
    # 2 layers: used by tests (few dispatches, fast on SwiftShader).
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=192, vocab=512,
                 rope="op", embed="gbq", io_names="genai", seed=1),
    # 24 layers of small dims: Qwen2.5-0.5B's layer count, so dispatches per token are in the
    # hundreds like a real 0.5B-1.7B model while the file stays about 1 MB.
    "qwen2-24l": dict(layers=24, hidden=64, heads=4, kv_heads=2, intermediate=192, vocab=1024,
                 rope="op", embed="gbq", io_names="genai", seed=2),
    # Different I/O: no position_ids (rotary inside GroupQueryAttention), past_key.N naming,
    # f32 Gather embeddings, kv_heads == heads, logits listed last.
    "tiny-alt-io": dict(layers=2, hidden=64, heads=2, kv_heads=2, intermediate=128, vocab=384,
                        rope="gqa", embed="gather", io_names="alt", seed=3),
}


def quantize_q4(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quantize a (K, N) f32 matrix to MatMulNBits layout: B (N, K/32, 16) uint8, scales (N, K/32).

    Symmetric per block: q = round(w / scale) + 8 in [0, 15], scale = max|w| / 7 (zero point 8 is
    the op's default when zero_points is absent). Two values per byte, element 2j in the low nibble.
    """
    k, n = w.shape
    assert k % BLOCK_SIZE == 0, f"K={k} must be a multiple of {BLOCK_SIZE}"
    blocks = k // BLOCK_SIZE
    wt = w.T.reshape(n, blocks, BLOCK_SIZE).astype(np.float32)
    scale = np.abs(wt).max(axis=2) / 7.0
    scale = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
    q = np.clip(np.rint(wt / scale[:, :, None]) + 8, 0, 15).astype(np.uint8)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    return packed, scale


class Builder:
    """Collects nodes and initializers of one graph; names follow the genai builder's style."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op: str, inputs: list[str], outputs: list[str], name: str,
             domain: str = "", **attrs: object) -> list[str]:
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        return outputs

    def normal(self, shape: tuple[int, ...], std: float) -> np.ndarray:
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def matmul_q4(self, x: str, k: int, n: int, name: str) -> str:
        packed, scales = quantize_q4(self.normal((k, n), 1.0 / math.sqrt(k)))
        b = self.init(f"{name}.weight_Q4", packed)
        s = self.init(f"{name}.weight_scales", scales)
        return self.node("MatMulNBits", [x, b, s], [f"{name}/output_0"], f"{name}/MatMulNBits",
                         MS, K=k, N=n, bits=4, block_size=BLOCK_SIZE, accuracy_level=0)[0]


def rope_caches(max_pos: int, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    freqs = np.outer(np.arange(max_pos, dtype=np.float64), inv_freq)
    return np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32)


def io_names(style: str, layers: int) -> dict[str, object]:
    if style == "genai":
        past = [(f"past_key_values.{i}.key", f"past_key_values.{i}.value") for i in range(layers)]
        present = [(f"present.{i}.key", f"present.{i}.value") for i in range(layers)]
    elif style == "alt":
        past = [(f"past_key.{i}", f"past_value.{i}") for i in range(layers)]
        present = [(f"present_key.{i}", f"present_value.{i}") for i in range(layers)]
    else:
        raise ValueError(f"unknown --io-names {style!r}")
    return {"past": past, "present": present}


def build(cfg: dict[str, object]) -> tuple[onnx.ModelProto, dict[str, object]]:
    layers, hidden = int(cfg["layers"]), int(cfg["hidden"])
    heads, kv_heads = int(cfg["heads"]), int(cfg["kv_heads"])
    inter, vocab = int(cfg["intermediate"]), int(cfg["vocab"])
    rope, embed, style = str(cfg["rope"]), str(cfg["embed"]), str(cfg["io_names"])
    max_pos, theta, eps = int(cfg["max_positions"]), float(cfg["rope_theta"]), float(cfg["rms_eps"])
    if hidden % heads or (hidden // heads) % 2:
        raise ValueError("hidden must be a multiple of heads with an even head size")
    if heads % kv_heads:
        raise ValueError("heads must be a multiple of kv_heads")
    if hidden % BLOCK_SIZE or inter % BLOCK_SIZE:
        raise ValueError(f"hidden and intermediate must be multiples of {BLOCK_SIZE}")
    head_dim = hidden // heads
    kv_dim = kv_heads * head_dim
    names = io_names(style, layers)
    b = Builder(np.random.default_rng(int(cfg["seed"])))

    # Graph inputs ([batch, sequence] ids; cache BNSH with symbolic past length).
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                      ["batch_size", "total_sequence_length"]),
    ]
    if rope == "op":
        inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                                    ["batch_size", "sequence_length"]))
    for k_name, v_name in names["past"]:
        for n in (k_name, v_name):
            inputs.append(helper.make_tensor_value_info(
                n, TensorProto.FLOAT, ["batch_size", kv_heads, "past_sequence_length", head_dim]))

    # Embedding.
    if embed == "gbq":
        table_q, table_s = quantize_q4(b.normal((vocab, hidden), 1.0).T)  # rows = tokens
        data = b.init("model.embed_tokens.weight_Q4", table_q.reshape(vocab, hidden // 2))
        scales = b.init("model.embed_tokens.weight_scales", table_s)
        x = b.node("GatherBlockQuantized", [data, "input_ids", scales], ["embed/output_0"],
                   "model.embed_tokens/GatherBlockQuantized", MS, bits=4, block_size=BLOCK_SIZE,
                   gather_axis=0, quantize_axis=1)[0]
    elif embed == "gather":
        table = b.init("model.embed_tokens.weight", b.normal((vocab, hidden), 1.0))
        x = b.node("Gather", [table, "input_ids"], ["embed/output_0"], "model.embed_tokens/Gather",
                   axis=0)[0]
    else:
        raise ValueError(f"unknown --embed {embed!r}")

    # attention_mask -> seqlens_k (int32 [batch], total - 1) and total_sequence_length (int32 scalar),
    # the genai builder's "attention mask reformatting for GQA".
    one = b.init("constants/int64/1", np.array(1, dtype=np.int64))
    axes1 = b.init("constants/int64/[1]", np.array([1], dtype=np.int64))
    mask_sum = b.node("ReduceSum", ["attention_mask", axes1], ["mask/sum"], "mask/ReduceSum",
                      keepdims=0)[0]
    mask_sub = b.node("Sub", [mask_sum, one], ["mask/sub"], "mask/Sub")[0]
    seqlens_k = b.node("Cast", [mask_sub], ["mask/seqlens_k"], "mask/seqlens_k/Cast",
                       to=TensorProto.INT32)[0]
    mask_shape = b.node("Shape", ["attention_mask"], ["mask/shape"], "mask/Shape")[0]
    total_len64 = b.node("Gather", [mask_shape, one], ["mask/total64"], "mask/Gather", axis=0)[0]
    total_len = b.node("Cast", [total_len64], ["mask/total_seq_len"], "mask/total_seq_len/Cast",
                       to=TensorProto.INT32)[0]

    cos, sin = rope_caches(max_pos, head_dim, theta)
    cos_name = b.init("cos_cache", cos)
    sin_name = b.init("sin_cache", sin)

    residual = x
    pending_skip: str | None = None  # output of the previous block, added to residual by SkipSLN
    outputs_present = []
    for i in range(layers):
        p = f"model.layers.{i}"
        ln_w = b.init(f"{p}.input_layernorm.weight", (1.0 + b.normal((hidden,), 0.1)))
        if pending_skip is None:
            h = b.node("SimplifiedLayerNormalization", [residual, ln_w], [f"{p}/input_layernorm/output_0"],
                       f"{p}/input_layernorm/LayerNorm", axis=-1, epsilon=eps,
                       stash_type=1)[0]
        else:
            h, _, _, residual = b.node(
                "SkipSimplifiedLayerNormalization", [pending_skip, residual, ln_w],
                [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"],
                f"{p}/input_layernorm/SkipLayerNorm", MS, epsilon=eps)

        q = b.matmul_q4(h, hidden, hidden, f"{p}.attn.q_proj")
        k = b.matmul_q4(h, hidden, kv_dim, f"{p}.attn.k_proj")
        v = b.matmul_q4(h, hidden, kv_dim, f"{p}.attn.v_proj")
        q = b.node("Add", [q, b.init(f"{p}.attn.q_proj.bias", b.normal((hidden,), 0.1))],
                   [f"{p}/attn/q_proj/Add/output_0"], f"{p}/attn/q_proj/Add")[0]
        k = b.node("Add", [k, b.init(f"{p}.attn.k_proj.bias", b.normal((kv_dim,), 0.1))],
                   [f"{p}/attn/k_proj/Add/output_0"], f"{p}/attn/k_proj/Add")[0]
        v = b.node("Add", [v, b.init(f"{p}.attn.v_proj.bias", b.normal((kv_dim,), 0.1))],
                   [f"{p}/attn/v_proj/Add/output_0"], f"{p}/attn/v_proj/Add")[0]
        if rope == "op":
            q = b.node("RotaryEmbedding", [q, "position_ids", cos_name, sin_name],
                       [f"{p}/attn/q_rotary/output_0"], f"{p}/attn/q_rotary/RotaryEmbedding", MS,
                       interleaved=0)[0]
            k = b.node("RotaryEmbedding", [k, "position_ids", cos_name, sin_name],
                       [f"{p}/attn/k_rotary/output_0"], f"{p}/attn/k_rotary/RotaryEmbedding", MS,
                       interleaved=0)[0]
            gqa_in = [q, k, v, names["past"][i][0], names["past"][i][1], seqlens_k, total_len]
            gqa_attrs: dict[str, object] = {}
        else:
            gqa_in = [q, k, v, names["past"][i][0], names["past"][i][1], seqlens_k, total_len,
                      cos_name, sin_name]
            gqa_attrs = {"do_rotary": 1, "rotary_interleaved": 0}
        present_k, present_v = names["present"][i]
        attn = b.node("GroupQueryAttention", gqa_in, [f"{p}/attn/GQA/output_0", present_k, present_v],
                      f"{p}/attn/GroupQueryAttention", MS, num_heads=heads, kv_num_heads=kv_heads,
                      **gqa_attrs)[0]
        outputs_present.append((present_k, present_v))
        o = b.matmul_q4(attn, hidden, hidden, f"{p}.attn.o_proj")

        post_w = b.init(f"{p}.post_attention_layernorm.weight", (1.0 + b.normal((hidden,), 0.1)))
        h2, _, _, residual = b.node(
            "SkipSimplifiedLayerNormalization", [o, residual, post_w],
            [f"{p}/post_attention_layernorm/output_0", "", "", f"{p}/post_attention_layernorm/output_3"],
            f"{p}/post_attention_layernorm/SkipLayerNorm", MS, epsilon=eps)
        gate = b.matmul_q4(h2, hidden, inter, f"{p}.mlp.gate_proj")
        up = b.matmul_q4(h2, hidden, inter, f"{p}.mlp.up_proj")
        sig = b.node("Sigmoid", [gate], [f"{p}/mlp/act_fn/Sigmoid/output_0"], f"{p}/mlp/act_fn/Sigmoid")[0]
        silu = b.node("Mul", [gate, sig], [f"{p}/mlp/act_fn/Mul/output_0"], f"{p}/mlp/act_fn/Mul")[0]
        act = b.node("Mul", [silu, up], [f"{p}/mlp/Mul/output_0"], f"{p}/mlp/Mul")[0]
        pending_skip = b.matmul_q4(act, inter, hidden, f"{p}.mlp.down_proj")

    norm_w = b.init("model.norm.weight", (1.0 + b.normal((hidden,), 0.1)))
    final = b.node("SkipSimplifiedLayerNormalization", [pending_skip, residual, norm_w],
                   ["model.norm/output_0"], "model.norm/SkipLayerNorm", MS, epsilon=eps)[0]
    logits_raw = b.matmul_q4(final, hidden, vocab, "lm_head")
    b.node("Identity", [logits_raw], ["logits"], "lm_head/Identity")

    logits_vi = helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                              ["batch_size", "sequence_length", vocab])
    present_vi = []
    for k_name, v_name in outputs_present:
        for n in (k_name, v_name):
            present_vi.append(helper.make_tensor_value_info(
                n, TensorProto.FLOAT, ["batch_size", kv_heads, "total_sequence_length", head_dim]))
    outputs = present_vi + [logits_vi] if style == "alt" else [logits_vi] + present_vi

    graph = helper.make_graph(b.nodes, "qwen2_like_decoder", inputs, outputs, initializer=b.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
        producer_name="webgpu-harness/workloads/ort-decode/make_model.py",
        producer_version="1",
    )
    model.ir_version = 8
    # onnx.checker is not run: it rejects SimplifiedLayerNormalization, an ONNX Runtime op in the
    # ai.onnx domain; loading the model in onnxruntime (greedy_cpu) is the check instead.
    config = {
        "architecture": "Qwen2-like decoder (random weights)",
        "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "intermediate": inter, "vocab": vocab,
        "max_positions": max_pos, "rope": rope, "embed": embed, "io_names": style,
        "rope_theta": theta, "rms_eps": eps, "seed": int(cfg["seed"]),
        "weights": f"MatMulNBits bits=4 block_size={BLOCK_SIZE}, f32 activations",
        "inputs": [vi.name for vi in inputs],
        "outputs": [vi.name for vi in outputs],
        "nodes": len(b.nodes),
    }
    return model, config


def greedy_cpu(model_bytes: bytes, config: dict[str, object], prompt: list[int], tokens: int) -> dict[str, object]:
    """Greedy decode on onnxruntime's CPU EP, the same loop the workload runs in the browser."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    names = io_names(str(config["io_names"]), int(config["layers"]))
    kvh, hd = int(config["kv_heads"]), int(config["head_dim"])
    past = {n: np.zeros((1, kvh, 0, hd), np.float32) for pair in names["past"] for n in pair}
    ids = list(prompt)
    out_tokens: list[int] = []
    total = 0
    for step in range(tokens):
        new = ids if step == 0 else [out_tokens[-1]]
        feeds: dict[str, np.ndarray] = {
            "input_ids": np.array([new], np.int64),
            "attention_mask": np.ones((1, total + len(new)), np.int64),
            **past,
        }
        if "position_ids" in config["inputs"]:
            feeds["position_ids"] = np.arange(total, total + len(new), dtype=np.int64)[None, :]
        res = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        last = res["logits"][0, -1]
        out_tokens.append(int(np.argmax(last)))
        total += len(new)
        for (pk, pv), (nk, nv) in zip(names["past"], names["present"]):
            past[pk], past[pv] = res[nk], res[nv]
    return {"provider": "CPUExecutionProvider", "onnxruntime": ort.__version__,
            "prompt_ids": prompt, "tokens": out_tokens}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=[*PRESETS, "all"],
                    help="a committed fixture (writes models/<preset>/); 'all' rebuilds every one")
    ap.add_argument("--out", type=Path, help="output folder (default models/<preset>)")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--kv-heads", type=int, dest="kv_heads")
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--rope", choices=["op", "gqa"], help="RotaryEmbedding nodes + position_ids, or inside GQA")
    ap.add_argument("--embed", choices=["gbq", "gather"], help="GatherBlockQuantized q4 or f32 Gather")
    ap.add_argument("--io-names", choices=["genai", "alt"], dest="io_names")
    ap.add_argument("--max-positions", type=int, dest="max_positions", default=2048)
    ap.add_argument("--rope-theta", type=float, dest="rope_theta", default=1000000.0)
    ap.add_argument("--rms-eps", type=float, dest="rms_eps", default=1e-6)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--expected-tokens", type=int, default=48,
                    help="greedy tokens to record in expected.json (CPU EP)")
    ap.add_argument("--no-expected", action="store_true", help="skip expected.json (needs onnxruntime)")
    args = ap.parse_args(argv)

    presets = list(PRESETS) if args.preset == "all" else [args.preset]
    if args.preset == "all" and args.out:
        ap.error("--out cannot be used with --preset all")
    for preset in presets:
        cfg: dict[str, object] = dict(PRESETS[preset]) if preset else dict(PRESETS["tiny"])
        for key in ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab", "rope",
                    "embed", "io_names", "max_positions", "rope_theta", "rms_eps", "seed"):
            value = getattr(args, key)
            if value is not None and (args.preset != "all" or key in ("max_positions", "rope_theta", "rms_eps")):
                cfg[key] = value
        out = args.out or (HERE / "models" / (preset or "custom"))
        if preset is None and args.out is None:
            ap.error("give --preset or --out")
        model, config = build(cfg)
        data = model.SerializeToString()
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.onnx").write_bytes(data)
        config["model_bytes"] = len(data)
        config["model_sha256"] = hashlib.sha256(data).hexdigest()
        (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        line = f"{out}: {len(data)} bytes, {config['nodes']} nodes, sha256 {config['model_sha256'][:16]}"
        if not args.no_expected:
            expected = greedy_cpu(data, config, DEFAULT_PROMPT, args.expected_tokens)
            (out / "expected.json").write_text(json.dumps(expected) + "\n")
            line += f", CPU tokens {expected['tokens'][:8]}..."
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

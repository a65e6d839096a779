#!/usr/bin/env python3
"""Build the Transformers.js model folder the test apps load (offline, deterministic).

The ONNX graph is ``workloads/ort-decode/make_model.py``'s ``tiny`` preset, built by importing
that script (same flags, same bytes: the sha256 is checked against the ort-decode fixture, so the
apps and ``python -m harness run -w ort-decode --profile tiny`` run the very same model). Around it
this script writes what Transformers.js (``@huggingface/transformers`` 4.3.2,
``AutoModelForCausalLM.from_pretrained``/``AutoTokenizer.from_pretrained``) reads from a local
model folder:

    models/qwen2-tiny/
      config.json             model_type qwen2 and the dims of the graph (Transformers.js sizes the
                              empty past key/values from num_key_value_heads and head_dim)
      generation_config.json  greedy, no eos (a random-weight model would stop at random)
      tokenizer.json          byte-level BPE with exactly ``vocab`` ids, trained here with the
                              ``tokenizers`` package on a seeded word list (no download)
      tokenizer_config.json   PreTrainedTokenizerFast, no special tokens added to prompts
      onnx/model.onnx         the graph: input_ids, attention_mask, position_ids,
                              past_key_values.N.key/value -> logits, present.N.key/value
                              (the names Transformers.js feeds and reads for decoder-only models)
      expected.json           the prompt, its ids and the greedy tokens of onnxruntime's CPU EP

Re-make (needs onnx, onnxruntime and tokenizers; ``pip install -e '.[fixtures]'``):
    .venv/bin/python tests/apps/make_fixtures.py
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MAKE_MODEL = REPO / "workloads" / "ort-decode" / "make_model.py"
MODEL_DIR = HERE / "models" / "qwen2-tiny"
PROMPT = "the bind group of each dispatch"
#: greedy tokens recorded in expected.json (the apps generate at most this many)
EXPECTED_TOKENS = 64


def load_make_model():
    """Import workloads/ort-decode/make_model.py (its folder name is not a package name)."""
    spec = importlib.util.spec_from_file_location("ort_decode_make_model", MAKE_MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_tokenizer(vocab: int, seed: int = 7):
    """A byte-level BPE of exactly ``vocab`` ids trained on seeded pseudo-words (deterministic)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    rng = np.random.default_rng(seed)
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    weights = np.linspace(2.0, 0.2, len(letters))
    weights /= weights.sum()
    base = ["the", "bind", "group", "of", "each", "dispatch", "token", "buffer", "queue", "submit"]
    words = base + ["".join(rng.choice(letters, size=rng.integers(2, 8), p=weights)) for _ in range(400)]
    lines = [" ".join(rng.choice(words, size=12)) for _ in range(3000)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=1, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(lines, trainer)
    if tok.get_vocab_size() != vocab:
        raise SystemExit(f"make_fixtures: BPE vocab came out {tok.get_vocab_size()} ids, model has {vocab}")
    return tok


def hf_config(cfg: dict) -> dict:
    """config.json in the Hugging Face layout Transformers.js reads for model_type qwen2."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": cfg["hidden"],
        "intermediate_size": cfg["intermediate"],
        "num_hidden_layers": cfg["layers"],
        "num_attention_heads": cfg["heads"],
        "num_key_value_heads": cfg["kv_heads"],
        "head_dim": cfg["head_dim"],
        "vocab_size": cfg["vocab"],
        "max_position_embeddings": cfg["max_positions"],
        "rms_norm_eps": cfg["rms_eps"],
        "rope_theta": cfg["rope_theta"],
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "bos_token_id": None,
        "eos_token_id": None,
        "use_cache": True,
        "transformers.js_config": {"dtype": "fp32"},
        "_note": "random weights: workloads/ort-decode/make_model.py preset tiny, via tests/apps/make_fixtures.py",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=MODEL_DIR)
    args = ap.parse_args(argv)
    mm = load_make_model()
    cfg = dict(mm.PRESETS["tiny"], max_positions=2048, rope_theta=1000000.0, rms_eps=1e-6)
    model, config = mm.build(cfg)
    data = model.SerializeToString()
    sha = hashlib.sha256(data).hexdigest()
    ort_decode = json.loads((MAKE_MODEL.parent / "models" / "tiny" / "config.json").read_text())
    if sha != ort_decode["model_sha256"]:
        raise SystemExit(f"make_fixtures: built model sha256 {sha[:16]} differs from ort-decode's tiny "
                         f"{ort_decode['model_sha256'][:16]}; re-make both fixtures")
    out: Path = args.out
    (out / "onnx").mkdir(parents=True, exist_ok=True)
    (out / "onnx" / "model.onnx").write_bytes(data)
    (out / "config.json").write_text(json.dumps(hf_config(config), indent=2) + "\n")
    (out / "generation_config.json").write_text(json.dumps(
        {"do_sample": False, "num_beams": 1, "bos_token_id": None, "eos_token_id": None}, indent=2) + "\n")
    tok = train_tokenizer(int(config["vocab"]))
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": int(config["max_positions"]),
        "add_bos_token": False, "add_eos_token": False, "clean_up_tokenization_spaces": False,
    }, indent=2) + "\n")
    ids = tok.encode(PROMPT).ids
    expected = mm.greedy_cpu(data, config, ids, EXPECTED_TOKENS)
    expected = {"prompt": PROMPT, **expected, "model_sha256": sha}
    (out / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"{out}: model {len(data)} bytes sha256 {sha[:16]}, prompt ids {ids}, "
          f"CPU tokens {expected['tokens'][:8]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())

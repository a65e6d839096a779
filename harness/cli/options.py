"""The options that shape a cell, defined once for every command that makes cells (``run`` and
``serve``): which workloads, variants and profile, how many tokens, the seed, ``--param`` values
and sweeps, repetitions, real or emulated WebGPU and the emulation's options, the memory budget,
the engine and model of the ort workloads, user workload folders and whether the probes wrap
WebGPU. Each is a Typer option used as a parameter's default (``tokens: int = O.TOKENS``);
:func:`resolve` validates their values into a :class:`harness.plan.CellOptions`.

Options that say how a browser is launched or sampled (``--browser``, ``--headed``,
``--memory-interval-ms``, ``--gc-checkpoints``…) are ``run``'s own: ``serve`` launches none.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from harness.engines import PINNED_ORT
from harness.locations import web_dir, workloads_dir
from harness.npm import places

WORKLOAD = typer.Option(None, "--workload", "-w", help="Workload(s), comma-separated or repeated: the built-in ones (`webgpu-harness doctor` lists them) and those of --workloads-dir. Default: the default suite (decode-loop).")
VARIANT = typer.Option(None, "--variant", "-v", help="Variant(s) of the workload. Default: the manifest's default variants (decode-loop: fresh, reuse).")
PROFILE = typer.Option(None, "--profile", "-p", help="Model profile from the workload's manifest. Default: the manifest's default profile.")
TOKENS = typer.Option(64, "--tokens", "-n", help="Tokens (steps) to run per cell.")
SEED = typer.Option(1, "--seed", help="Seed of the workload's random weights.")
PARAM = typer.Option(None, "--param", help="Workload parameter KEY=VALUE (repeatable); each workload's manifest.json declares its parameters, and an unknown key or bad value is an error naming the valid ones. KEY=A,B,C sweeps a number, bool or enum parameter: one configuration per value, like variants (a list parameter's commas are its items); a run holds at most 1,000 cells (browsers × variants × sweep values × --repeat).")
REPEAT = typer.Option(1, "--repeat", help="Repetitions of every cell (run: a fresh browser context each, round-robin; serve: a URL each).")
NO_PROBES = typer.Option(False, "--no-probes", help="Don't wrap WebGPU calls (timing only; counts recorded as missing).")
WEBGPU = typer.Option("auto", "--webgpu", help="auto: the browser's WebGPU, emulated where it has none (WebKitGTK); real: never emulate (no WebGPU → skipped); emulated: always the JS emulation (modeled native memory).")
EMULATION_BYTES_PER_STAGE = typer.Option(None, "--emulation-bytes-per-stage", help="Emulated WebGPU: modeled native bytes per shader stage with bindings, at least (default: the emulation's, one 16 KiB page; WebKit BindGroup.mm).")
EMULATION_PAGE_BYTES = typer.Option(None, "--emulation-page-bytes", help="Emulated WebGPU: round each stage's argument buffer up to this (0: no rounding; default: the emulation's, 16 KiB).")
EMULATION_OPTION = typer.Option(None, "--emulation-option", help=f"Emulated WebGPU: another installEmulatedWebGPU option KEY=VALUE (repeatable), e.g. reportCostToJs=true, retainWrappersUntilDone=true, completion=microtask. See {web_dir() / 'emulation' / 'webgpu-emulated.js'}.")
MODEL = typer.Option(None, "--model", help="ort-decode: a local ONNX decoder (Transformers.js / onnxruntime-genai layout); ort-run: any local ONNX model. External data beside it. Instead of the built-in fixtures.")
ORT_VERSION = typer.Option(None, "--ort-version", help=f"ort-decode, ort-run: onnxruntime-web version to load from {', '.join(p.label for p in places())} (default: the pinned {PINNED_ORT}).")
ORT_DIST = typer.Option(None, "--ort-dist", help="ort-decode, ort-run: an onnxruntime-web dist/ folder (e.g. a local build's js/web/dist) or the package folder holding it, instead of an installed one.")
WORKLOADS_DIR = typer.Option(None, "--workloads-dir", help=f"A folder of your own workloads (one per subfolder, or one workload itself; manifest contract: {workloads_dir() / 'README.md'}), repeatable. Default: $WEBGPU_HARNESS_WORKLOADS (os.pathsep-separated).")
MEMORY_BUDGET = typer.Option(None, "--memory-budget", help="e.g. 3GB: mark the token at which the content process (RSS + modeled native bytes) would exceed it. Default 2048MB: iOS killed the page at ~2 GB in the onnxruntime field report. 'none': no budget.")

#: The options above as (parameter name, option): the keyword arguments of :func:`resolve`.
CELL_OPTIONS = (("workload", WORKLOAD), ("variant", VARIANT), ("profile", PROFILE), ("tokens", TOKENS), ("seed", SEED),
                ("param", PARAM), ("repeat", REPEAT), ("no_probes", NO_PROBES), ("webgpu", WEBGPU),
                ("emulation_bytes_per_stage", EMULATION_BYTES_PER_STAGE),
                ("emulation_page_bytes", EMULATION_PAGE_BYTES), ("emulation_option", EMULATION_OPTION),
                ("model", MODEL), ("ort_version", ORT_VERSION), ("ort_dist", ORT_DIST),
                ("workloads_dir", WORKLOADS_DIR), ("memory_budget", MEMORY_BUDGET))


def picked(values: dict) -> dict:
    """The cell options among a command's parameter ``values`` (its ``locals()`` on entry)."""
    return {name: values[name] for name, _ in CELL_OPTIONS}


def resolve(*, workload: Optional[List[str]], variant: Optional[List[str]], profile: Optional[str], tokens: int,
            seed: int, param: Optional[List[str]], repeat: int, no_probes: bool, webgpu: str,
            emulation_bytes_per_stage: Optional[int], emulation_page_bytes: Optional[int],
            emulation_option: Optional[List[str]], model: Optional[Path], ort_version: Optional[str],
            ort_dist: Optional[Path], workloads_dir: Optional[List[Path]], memory_budget: Optional[str]):
    """Every cell option's value → :class:`harness.plan.CellOptions` (:func:`harness.plan.resolve_cells`).
    Raises :class:`harness.plan.PlanError`."""
    from harness import plan as P

    return P.resolve_cells(
        workload=workload, variant=variant, profile=profile, tokens=tokens, seed=seed, param=param, repeat=repeat,
        probes=not no_probes, webgpu=webgpu, emulation_overrides={"bytesPerStage": emulation_bytes_per_stage,
                                                                  "pageBytes": emulation_page_bytes},
        emulation_option=emulation_option, model=model, ort_version=ort_version, ort_dist=ort_dist,
        workloads_dir=workloads_dir, memory_budget=memory_budget)

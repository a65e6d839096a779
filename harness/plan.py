"""What a run measures, validated before anything launches.

Flags and config become one :class:`RunPlan` here (tachometer's habit: one fully validated
config before a browser starts). Every check raises :class:`PlanError` with one line naming
what is wrong and the valid choices; only ``harness/cli/`` turns it into exit status 2.

A *cell* (:class:`Cell`) is browser × workload × variant × profile × sweep point ×
repetition; the plan lists them in round-robin order (:meth:`RunPlan.cells`). The module is a
little over 400 lines: every option's validation is here on purpose, in one place.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # harness/workloads.py (pydantic) is imported where a check needs it
    from harness.workloads import Workload


class PlanError(ValueError):
    """Bad input: the message is one line naming the option, the value and the valid choices."""


#: The suite ``run`` measures when no --workload is given.
DEFAULT_WORKLOADS = ["decode-loop"]
#: Cell settings that have options of their own: --param may not set them.
RESERVED_PARAMS = ("workload", "variant", "profile", "profileName", "tokens", "seed", "probes")
#: Default sampling period of the per-process memory probe (s). USS reads every mapping,
#: ~1–5 ms per Chromium process here.
DEFAULT_MEMORY_INTERVAL_S = 0.25

#: What the harness passes to installEmulatedWebGPU (web/emulation/webgpu-emulated.js) unless
#: told otherwise. Only choices that differ from the emulation's own defaults live here (the
#: memory model's bytesPerStage/pageBytes defaults are the JS module's: one source): WebKit's
#: Metal limits on A14+ GPUs (internals.js, HardwareCapabilities.mm), which onnxruntime-web's
#: kernels need (9+ storage buffers per stage).
EMULATION_DEFAULTS: dict[str, Any] = {"limits": "webkit-apple7"}

#: ``--memory-budget`` when none is given: the ~2 GB at which iOS killed the page in the onnxruntime
#: field report (references.md; the same 2,048 MB as harness/report/finding.py FIELD_KILL_BYTES).
DEFAULT_MEMORY_BUDGET = "2048MB"
#: ``--memory-budget`` values that switch the budget off.
NO_MEMORY_BUDGET = ("none", "off")

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def split_names(values: Iterable[str] | None, option: str = "option") -> list[str]:
    """Comma-separated, repeatable option values, de-duplicated in order. An option given but
    naming nothing (``-w ""``) is an error, not "the default". Raises :class:`PlanError`."""
    values = list(values or [])
    out = list(dict.fromkeys(v.strip() for item in values for v in item.split(",") if v.strip()))
    if values and not out:
        raise PlanError(f"{option} names nothing")
    return out


def parse_bytes(text: str, option: str) -> int:
    """``'2048MB'`` → 2_048_000_000 bytes (KB/MB/GB decimal, KiB/MiB/GiB binary; case-insensitive).
    Raises :class:`PlanError`."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text or "")
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        raise PlanError(f"{option} {text!r} is not a size (valid units: B, KB, MB, GB, KiB, MiB, GiB)")
    return int(float(m.group(1)) * _UNITS[unit])


def parse_memory_budget(text: str | None) -> int | None:
    """``--memory-budget`` → bytes, or None for ``none``/``off`` (no budget). None given: the
    default, :data:`DEFAULT_MEMORY_BUDGET`. Raises :class:`PlanError` on a value that is not a
    size or is under 1 MiB."""
    text = DEFAULT_MEMORY_BUDGET if text is None else text
    if text.strip().lower() in NO_MEMORY_BUDGET:
        return None
    budget = parse_bytes(text, "--memory-budget")
    if budget < 1 << 20:
        raise PlanError(f"--memory-budget {text!r} is under 1 MiB; give e.g. 2048MB, or 'none' for no budget")
    return budget


def parse_key_values(values: Iterable[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` items → ``{key: value}`` (strings, last one wins). Raises :class:`PlanError`
    on an item without ``=`` or with an empty key."""
    out: dict[str, str] = {}
    for item in values or []:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise PlanError(f"{option} {item!r} is not KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = v
    return out


def guess_scalar(text: str) -> Any:
    """A CLI string as int, float, bool or str (for options without a declared type).
    Raises :class:`PlanError` on NaN or infinity."""
    try:
        f = float(text)
    except ValueError:
        return {"true": True, "false": False}.get(text.lower(), text)
    if not math.isfinite(f):
        raise PlanError(f"{text!r}: value must be finite")
    try:
        return int(text)
    except ValueError:
        return f


def emulation_options(values: Iterable[str] | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``--emulation-option`` items (plus ``overrides``) over :data:`EMULATION_DEFAULTS`, each
    validated against its declaration (harness/emulation.py: types, presets, limit names, the
    object forms ``limits.NAME=N``, ``argumentBytes.KIND=N``, ``completion.delayMs=N``).
    Raises :class:`PlanError` naming the valid keys or values."""
    from harness.emulation import EmulationOptionError, resolve

    try:
        return resolve(values, EMULATION_DEFAULTS, overrides)
    except EmulationOptionError as exc:
        raise PlanError(str(exc)) from None


def resolve_workloads(workload: Iterable[str] | None, variant: Iterable[str] | None, profile: str | None,
                      workloads_dirs: Iterable[str | Path] | None = None, param_keys: Iterable[str] = ()
                      ) -> tuple[list[Workload], dict[str, list[str]], dict[str, str | None]]:
    """Validate workload, variant and profile names (and ``param_keys``, the ``--param`` keys:
    :func:`check_param_keys`) against the built-in workloads and those of ``workloads_dirs``
    (``--workloads-dir``; default ``$WEBGPU_HARNESS_WORKLOADS``). The names are checked against
    the folders and the manifests' JSON first (harness/workload_names.py), then against the
    manifests' models, so a mistyped one is answered before pydantic loads. Returns
    ``(workloads, variants by workload, profile by workload)``. Raises :class:`PlanError`."""
    from harness import workload_names

    names = split_names(workload, "--workload") or DEFAULT_WORKLOADS
    try:  # the names from the folders first: a mistyped name is answered before pydantic loads
        listed = workload_names.manifests(workloads_dirs)
    except workload_names.WorkloadError as exc:
        raise PlanError(str(exc)) from None
    for n in names:
        if n not in listed:
            if workload_names.user_dirs(workloads_dirs):  # a user's folder may hold a broken manifest: say that first
                from harness.workloads import WorkloadError, discover

                try:
                    discover(workloads_dirs)
                except WorkloadError as exc:
                    raise PlanError(str(exc)) from None
            raise PlanError(f"unknown workload {n!r} (valid: {', '.join(sorted(listed))})")
    wanted = split_names(variant, "--variant")
    keys = list(param_keys)
    sketched = workload_names.sketches(names, listed)
    if sketched is not None:  # the same checks on the manifests' JSON
        check_param_keys(keys, sketched, _choose(sketched, wanted, profile)[1])
    from harness.workloads import WorkloadError, discover

    try:
        all_wl = discover(workloads_dirs)
    except WorkloadError as exc:
        raise PlanError(str(exc)) from None
    wls = [all_wl[n] for n in names]
    variants, profiles = _choose(wls, wanted, profile)
    check_param_keys(keys, wls, profiles)
    return wls, variants, profiles


def check_param_keys(keys: Iterable[str], wls: list, profiles: dict[str, str | None]) -> None:
    """Each ``--param`` key is not reserved and is a parameter or a profile dimension of one of
    ``wls`` (workloads or :class:`harness.workload_names.Sketch` es) with their ``profiles``.
    Raises :class:`PlanError` naming the valid keys (as :func:`resolve_params`)."""
    for key in keys:
        if key in RESERVED_PARAMS:
            raise PlanError(f"--param {key} is set by its own option (--{key.lower()}); reserved: {', '.join(RESERVED_PARAMS)}")
        if not any(key in wl.parameters or key in wl.profiles.get(profiles.get(wl.name) or "", {}) for wl in wls):
            raise _unknown_param(key, wls, profiles)


def _unknown_param(key: str, wls: list, profiles: dict[str, str | None]) -> PlanError:
    valid = sorted({k for wl in wls for k, p in wl.parameters.items() if not p.testing}
                   | {k for wl in wls for k in wl.profiles.get(profiles.get(wl.name) or "", {})})
    return PlanError(f"unknown --param {key!r} for {', '.join(w.name for w in wls)} (valid: {', '.join(valid) or 'none'})")


def _choose(wls: list, wanted: list[str], profile: str | None) -> tuple[dict[str, list[str]], dict[str, str | None]]:
    """``(variants by workload, profile by workload)`` of ``wls`` (workloads or sketches) for the
    ``--variant`` names ``wanted`` and ``--profile``. Raises :class:`PlanError`."""
    variants: dict[str, list[str]] = {}
    profiles: dict[str, str | None] = {}
    # with several workloads a variant applies to those that have it; each must get at least one
    unknown = [v for v in wanted if not any(v in wl.variants for wl in wls)]
    if unknown:
        valid = ", ".join(f"{wl.name}: {', '.join(wl.variants)}" for wl in wls)
        raise PlanError(f"unknown variant {unknown[0]!r} (valid: {valid})")
    for wl in wls:
        if wanted:
            mine = [v for v in wanted if v in wl.variants]
            if not mine:
                raise PlanError(f"--variant {','.join(wanted)} names no variant of workload {wl.name} "
                                f"(valid: {', '.join(wl.variants)})")
            variants[wl.name] = mine
        else:
            variants[wl.name] = wl.variants_to_run()
        if profile:
            if wl.profiles and profile not in wl.profiles:
                raise PlanError(f"unknown profile {profile!r} for workload {wl.name} (valid: {', '.join(wl.profiles)})")
            profiles[wl.name] = profile if wl.profiles else None
        else:
            profiles[wl.name] = wl.default_profile
    return variants, profiles


#: Largest value ``--param`` gives a profile dimension (``max_tokens``, ``hidden``…): 2^31 - 1, the
#: largest signed 32-bit integer. The workloads size typed arrays, WGSL ``u32``/``i32`` values and
#: buffers (GPUSize32 offsets) from them; beyond it a run could only fail in the browser.
MAX_DIMENSION = 2**31 - 1
#: Most cells one run may hold (browsers × workloads × variants × sweep points × repetitions):
#: each cell starts a worker and is a row of every table; a larger matrix is several runs
#: (``webgpu-harness merge`` puts their folders together).
MAX_CELLS = 1_000


def check_cell_count(n_browsers: int, options: Any) -> int:
    """The number of cells ``n_browsers`` browsers × ``options`` (a :class:`CellOptions`, or
    anything with its ``workloads``, ``variants``, ``sweeps`` and ``repeat``) make, counted
    without listing them. Raises :class:`PlanError` above :data:`MAX_CELLS`."""
    per_browser = options.repeat * sum(
        len(options.variants[wl.name]) * math.prod(len(v) for v in options.sweeps.get(wl.name, {}).values())
        for wl in options.workloads)
    n = n_browsers * per_browser
    if n > MAX_CELLS:
        raise PlanError(f"this run would make {n:,} cells ({n_browsers} browser(s) × {per_browser:,} per browser: "
                        f"workloads × variants × --param sweep values × --repeat); at most {MAX_CELLS:,} a run: "
                        f"split it into several runs (webgpu-harness merge puts them together)")
    return n


def resolve_params(raw: dict[str, str], wls: list[Workload], profiles: dict[str, str | None]
                   ) -> dict[str, dict[str, Any]]:
    """``--param`` values → per-workload overrides, each typed by the workload's declaration
    (workloads/README.md, "Parameters") or, for a profile dimension (``max_tokens``…), as a number.

    A key applies to every selected workload that declares it; a key no selected workload
    declares, a reserved key, or a value outside its declaration raises :class:`PlanError`
    naming the valid keys or values."""
    from harness.workloads import ParameterError

    out: dict[str, dict[str, Any]] = {wl.name: {} for wl in wls}
    for key, text in raw.items():
        check_param_keys([key], wls, profiles)  # reserved, or no selected workload's: raises
        for wl in wls:
            dims = wl.profiles.get(profiles.get(wl.name) or "", {})
            if key in wl.parameters:
                try:
                    out[wl.name][key] = wl.parameters[key].coerce(text, f"--param {key}")
                except ParameterError as exc:
                    raise PlanError(f"{exc} for workload {wl.name}") from None
            elif key in dims:
                value = guess_scalar(text)
                whole = isinstance(dims[key], int) and not isinstance(dims[key], bool)
                if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_DIMENSION
                        or (whole and not isinstance(value, int))):
                    raise PlanError(f"--param {key} {text!r} is not a {'whole' if whole else 'non-negative'} number "
                                    f"from 0 to {MAX_DIMENSION:,} (a dimension of profile {profiles[wl.name]} of "
                                    f"{wl.name}, {dims[key]!r} there)")
                out[wl.name][key] = value
    return out


#: Declared parameter types whose ``--param KEY=A,B,C`` is a sweep (a matrix axis). A ``list``
#: parameter's commas separate its items and a ``string``'s are part of it: never a sweep.
SWEEPABLE_TYPES = ("int", "number", "bool", "enum")


def resolve_sweeps(raw: dict[str, str], wls: list[Workload], profiles: dict[str, str | None]
                   ) -> tuple[dict[str, str], dict[str, dict[str, list[Any]]]]:
    """Split ``--param KEY=A,B,C`` sweeps from single values: ``(the other params, {workload:
    {key: [typed values]}})``. A key is swept when its value has a comma and every selected
    workload that declares it declares it ``int``, ``number``, ``bool`` or ``enum`` (or it is a
    profile dimension). Each value is validated like a single one (:func:`resolve_params`);
    a value given twice is an error. Raises :class:`PlanError`."""
    single: dict[str, str] = {}
    sweeps: dict[str, dict[str, list[Any]]] = {wl.name: {} for wl in wls}
    for key, text in raw.items():
        items = [x.strip() for x in text.split(",")]
        declared = [wl.parameters[key] for wl in wls if key in wl.parameters]
        dims = any(key in wl.profiles.get(profiles.get(wl.name) or "", {}) for wl in wls)
        if "," not in text or not (declared or dims) or any(p.type not in SWEEPABLE_TYPES for p in declared):
            single[key] = text
            continue
        if any(not x for x in items) or len(set(items)) != len(items):
            raise PlanError(f"--param {key}={text!r}: a sweep needs distinct values separated by commas, none empty")
        for x in items:
            for name, v in resolve_params({key: x}, wls, profiles).items():
                if key in v:
                    sweeps[name].setdefault(key, []).append(v[key])
    return single, {k: v for k, v in sweeps.items() if v}


def sweep_points(sweeps: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of a workload's swept values, in the order given (``[{}]`` without a sweep)."""
    points: list[dict[str, Any]] = [{}]
    for key, values in sweeps.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def sweep_label(point: dict[str, Any]) -> str:
    """``max_pending_dispatches=16,graph=fused``: a sweep point as text (group labels)."""
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in point.items())


def check_kv_capacity(wls: list[Workload], profiles: dict[str, str | None], tokens: int,
                      params: dict[str, dict[str, Any]]) -> None:
    """Raise :class:`PlanError` when a profile's KV cache (``max_tokens``, after --param
    overrides) cannot hold ``tokens`` positions, instead of failing every cell at that token."""
    for wl in wls:
        prof = wl.profiles.get(profiles.get(wl.name) or "", {})
        mine = {**wl.defaults(), **params.get(wl.name, {})}
        cap = mine.get("max_tokens", prof.get("max_tokens"))
        per_call = mine.get("tokens_per_call") if "tokens_per_call" in wl.parameters else None
        # decode-loop generate calls (tokens_per_call > 0) each start again at position 0
        positions = min(tokens, per_call) if isinstance(per_call, int) and per_call > 0 else tokens
        if isinstance(cap, int) and positions > cap:
            raise PlanError(f"--tokens {positions} exceeds {wl.name} profile {profiles[wl.name]}'s KV capacity "
                            f"max_tokens={cap}; lower --tokens or raise it with --param max_tokens={positions}")


#: Workloads that load onnxruntime-web: they get ``ortDist``/``ortVersion``; ``--model`` applies to them.
ORT_WORKLOADS = ("ort-decode", "ort-run")


def engine_params(wls: list[Workload], profiles: dict[str, str | None], params: dict[str, dict[str, Any]],
                  model: Path | None, ort_version: str | None, ort_dist: Path | None = None) -> dict[str, Path]:
    """For ort-decode and ort-run: the onnxruntime-web install (``--ort-dist``, else
    ``--ort-version`` or the pinned one found by harness/engines.py; ``ortDist``/``ortVersion``/
    ``ortSource`` params) and a ``--model``'s URL and external data (a decoder for ort-decode, any
    ONNX model for ort-run). Updates ``params``/``profiles``; returns the extra server roots (URL
    prefix → folder). Raises :class:`PlanError` for an engine or model that cannot be used."""
    from harness.engines import EngineError, find_ort, user_model

    extra_roots: dict[str, Path] = {}
    ort_wls = [w.name for w in wls if w.name in ORT_WORKLOADS]
    if not ort_wls:
        if model is not None or ort_version is not None or ort_dist is not None:
            raise PlanError("--model, --ort-version and --ort-dist apply to the ort-decode and ort-run workloads "
                            "(add --workload ort-decode or ort-run)")
        return extra_roots
    try:
        ort = find_ort(ort_version, ort_dist)
        um = user_model(model, decoder="ort-decode" in ort_wls) if model is not None else None
    except EngineError as exc:
        raise PlanError(str(exc)) from None
    prefix, folder = ort.root
    extra_roots[prefix] = folder
    for name in ort_wls:
        mine = params.setdefault(name, {})
        mine.setdefault("ortDist", ort.dist_url)
        mine.setdefault("ortVersion", ort.version)
        mine.setdefault("ortSource", f"{ort.source}: {ort.dist}")
        if um is not None:
            extra_roots.update(um.files)  # the model and its external data only, not its folder
            mine.update(model=um.url, externalData=um.external_data_param())
            profiles[name] = "model-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in um.path.stem)
    if isinstance(params.get("ort-run", {}).get("inputs"), str):
        params["ort-run"]["inputs"] = local_inputs(params["ort-run"]["inputs"], extra_roots)
    return extra_roots


def local_inputs(spec: str, extra_roots: dict[str, Path]) -> str:
    """ort-run's ``inputs`` (``NAME=WHERE,...``) with each ``WHERE`` that is a file on this
    machine served under ``/user-inputs/<n>/<file name>`` (added to ``extra_roots``: that file
    only) and replaced by its URL; URLs (``/...`` not a local file, ``http(s)://``) are kept.
    Raises :class:`PlanError` for a path that is not a readable .npy file."""
    out = []
    for i, pair in enumerate(x for x in spec.split(",") if x.strip()):
        name, sep, where = pair.partition("=")
        if not sep or not name.strip() or not where.strip():
            raise PlanError(f"--param inputs: {pair!r} is not NAME=FILE.npy or NAME=URL")
        where = where.strip()
        local = Path(where).expanduser()
        if "://" not in where and local.is_file():
            try:
                magic = local.open("rb").read(6)
            except OSError as exc:
                raise PlanError(f"--param inputs: {where}: {exc.strerror}") from None
            if magic != b"\x93NUMPY":
                raise PlanError(f"--param inputs: {where} is not a .npy file (numpy.save writes one)")
            url = f"user-inputs/{i}/{local.name}"
            extra_roots[url] = local.resolve()
            where = "/" + url
        elif not where.startswith(("/", "http://", "https://")):
            raise PlanError(f"--param inputs: {where}: no such file (give a .npy file or a URL the page can fetch)")
        out.append(f"{name.strip()}={where}")
    return ",".join(out)


def check_browser_names(browser: Iterable[str] | None) -> list[str]:
    """The --browser names (``[]`` when none is given), each a family of
    :data:`harness.drive.registry.BROWSERS`; nothing is located. Raises :class:`PlanError` naming
    the valid browsers."""
    from harness.drive.registry import BROWSERS

    browsers = [] if browser is None else split_names(browser, "--browser")
    for b in browsers:
        if b not in BROWSERS:
            raise PlanError(f"unknown browser {b!r} (valid: {', '.join(BROWSERS)})")
    return browsers


def resolve_browsers(browser: Iterable[str] | None, browser_path: str | None) -> list[str]:
    """Validate --browser names (default: every installed browser). Raises :class:`PlanError`
    naming the valid browsers, or how to install a missing one. A family with
    ``only_when_named`` (dawn: not a browser) is left out of the default; one with
    ``skipped_when_missing`` is kept when named though missing: its cells are skipped with the
    reason at run time."""
    from harness.drive.base import BrowserNotFound
    from harness.drive.registry import BROWSERS

    browsers = check_browser_names(browser)
    if browser_path and len(browsers) != 1:
        raise PlanError("--browser-path needs exactly one --browser (it replaces that browser's executable)")
    if browsers:
        for b in browsers:
            if getattr(BROWSERS[b], "skipped_when_missing", False):
                continue
            try:
                BROWSERS[b]().locate(browser_path)
            except BrowserNotFound as exc:
                raise PlanError(f"{b}: {exc}") from None
        return browsers

    browsers = default_browsers(browser_path)
    if not browsers:
        raise PlanError("no supported browser is installed; run `webgpu-harness doctor` for how to install one")
    return browsers


def default_browsers(browser_path: str | None = None) -> list[str]:
    """The browsers ``run`` and ``app`` measure when no --browser is given: every family found
    installed here (``locate``), in :data:`harness.drive.registry.BROWSERS` order, less those run
    only when named (dawn)."""
    from harness.drive.base import BrowserNotFound
    from harness.drive.registry import BROWSERS

    def available(name: str) -> bool:
        try:
            BROWSERS[name]().locate(browser_path)
            return True
        except BrowserNotFound:
            return False

    return [b for b in BROWSERS if not getattr(BROWSERS[b], "only_when_named", False) and available(b)]


def check_new_run_dir(path: Path, option: str = "--output") -> Path:
    """A folder a new run may be written to: not a file, not under a file, not holding a run.
    Raises :class:`PlanError`."""
    path = Path(path)
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            raise PlanError(f"{option} {path}: {p} is a file; give a folder")
        if p.exists():
            try:  # really try (root passes os.access everywhere; /proc, a read-only mount do not take folders)
                os.rmdir(tempfile.mkdtemp(prefix=".webgpu-harness-", dir=p))
            except OSError as exc:
                raise PlanError(f"{option} {path}: cannot write in {p} ({exc.strerror or exc}); give another folder") from None
            break
    if os.path.lexists(path / "samples.jsonl") or os.path.lexists(path / "manifest.json"):
        if os.path.islink(path / "samples.jsonl") or os.path.islink(path / "manifest.json"):
            _check_outputs(path)
        raise PlanError(f"{path} already holds a run; choose another {option}")
    _check_outputs(path)
    return path


def check_new_file(path: Path, option: str, suffixes: tuple[str, ...]) -> Path:
    """A file the command may write (or overwrite): named with one of ``suffixes``, not a folder,
    in a folder that exists and takes files (tried: a temporary file is made and removed there;
    an existing file is opened for appending). Raises :class:`PlanError` naming what is wrong."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise PlanError(f"{option} {path} is a folder; give a file name in it, e.g. {path / ('bundle' + suffixes[0])}")
    if not path.name.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise PlanError(f"{option} {path}: give a file name ending in {' or '.join(suffixes)}")
    parent = path.parent
    if not parent.is_dir():
        raise PlanError(f"{option} {path}: {parent} is not a folder" if parent.exists()
                        else f"{option} {path}: no folder {parent}")
    try:  # really try (root passes os.access everywhere; a read-only mount does not take files)
        if path.exists():
            with open(path, "ab"):
                pass
        with tempfile.NamedTemporaryFile(prefix=".webgpu-harness-", dir=parent):
            pass
    except OSError as exc:
        raise PlanError(f"{option} {path}: cannot write there ({exc.strerror or exc}); give another file") from None
    return path


def _check_outputs(path: Path) -> None:
    """:func:`harness.store.files.check_outputs` as a :class:`PlanError`: no output name of a
    run may be a link (or a folder, a FIFO) in the folder it will be written to."""
    from harness.store import files

    if path.is_dir():
        try:
            files.check_outputs(path)
        except files.RunFolderError as exc:
            raise PlanError(str(exc)) from None


def _default_limits():
    from harness.store.limits import SampleLimits

    return SampleLimits()


def sample_limits(items: Iterable[str] | None):
    """``--sample-limit KEY=VALUE`` items → :class:`harness.store.limits.SampleLimits`. Raises
    :class:`PlanError` naming the valid keys."""
    from harness.store import limits

    try:
        return limits.parse(list(items or []))
    except ValueError as exc:
        raise PlanError(str(exc)) from None


def check_range(value: float, lo: float, hi: float, option: str) -> None:
    """Raise :class:`PlanError` unless ``lo <= value <= hi`` and ``value`` is finite."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        def num(x: float) -> str:
            return f"{x:,}" if isinstance(x, int) else f"{x:g}"
        raise PlanError(f"{option} must be between {num(lo)} and {num(hi)} (got {value})")


@dataclass
class CellOptions:
    """What shapes the cells of a run, validated (:func:`resolve_cells`): the :class:`RunPlan`
    fields that ``run`` and ``serve`` share (harness/cli/options.py)."""

    workloads: list[Workload]
    variants: dict[str, list[str]]
    profiles: dict[str, str | None]
    tokens: int
    seed: int
    #: --param as given (sweeps as their lists), recorded in the manifest
    params: dict[str, Any]
    workload_params: dict[str, dict[str, Any]]
    sweeps: dict[str, dict[str, list[Any]]]
    extra_roots: dict[str, Path]
    repeat: int
    probes: bool
    webgpu: str
    emulation_options: dict[str, Any]
    memory_budget_bytes: int | None

    def plan_fields(self) -> dict[str, Any]:
        """Keyword arguments of :class:`RunPlan`."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


#: ``--webgpu`` choices: the browser's own WebGPU with the emulation where it has none, never the
#: emulation, always the emulation (web/emulation/webgpu-emulated.js).
WEBGPU_MODES = ("auto", "real", "emulated")


def resolve_cells(*, workload: Iterable[str] | None, variant: Iterable[str] | None, profile: str | None, tokens: int,
                  seed: int = 1, param: Iterable[str] | None = None, repeat: int = 1, probes: bool = True,
                  webgpu: str = "auto", emulation_overrides: dict[str, Any] | None = None,
                  emulation_option: Iterable[str] | None = None, model: Path | None = None,
                  ort_version: str | None = None, ort_dist: Path | None = None,
                  workloads_dir: Iterable[str | Path] | None = None, memory_budget: str | None = None) -> CellOptions:
    """The options that shape a cell → :class:`CellOptions`, checked in this order: numbers
    (``--tokens``, ``--repeat``), ``--webgpu``, the emulation's byte sizes, ``--memory-budget``
    (a size of at least 1 MiB, ``none``/``off``; not given: :data:`DEFAULT_MEMORY_BUDGET`), ``--param`` as KEY=VALUE, workload names (from the folders), workloads/variants/profile, ``--param`` values and sweeps (each
    sweep point's KV capacity), the engine and ``--model``, the emulation options.
    ``emulation_overrides``: ``{"bytesPerStage": N, "pageBytes": N}`` (None: the emulation's).
    Raises :class:`PlanError`."""
    check_range(tokens, 1, 100_000, "--tokens")
    check_range(repeat, 1, 1000, "--repeat")
    check_range(seed, 0, 2**32 - 1, "--seed")  # a uint32: the worker refused others only once the browser ran
    if webgpu not in WEBGPU_MODES:
        raise PlanError(f"unknown --webgpu {webgpu!r} (valid: {', '.join(WEBGPU_MODES)})")
    overrides = dict(emulation_overrides or {})
    for key, option in (("bytesPerStage", "--emulation-bytes-per-stage"), ("pageBytes", "--emulation-page-bytes")):
        v = overrides.get(key)
        if v is not None and v < 0:
            raise PlanError(f"{option} must be >= 0 (got {v})")
    budget_bytes = parse_memory_budget(memory_budget)
    raw = parse_key_values(param, "--param")
    for key, text in raw.items():  # NaN/infinity said before the keys are (a sweep's values are checked one by one later)
        if "," not in text:
            try:
                guess_scalar(text)
            except PlanError as exc:
                raise PlanError(f"--param {key}={text}: {str(exc).split(': ', 1)[-1]}") from None
    wls, variants, profiles = resolve_workloads(workload, variant, profile, workloads_dir, raw)
    single, sweeps = resolve_sweeps(raw, wls, profiles)
    recorded = {k: guess_scalar(v) for k, v in single.items()}  # NaN/infinity are never a value
    recorded.update({k: raw[k] for wl_sweeps in sweeps.values() for k in wl_sweeps})
    workload_params = resolve_params(single, wls, profiles)
    for wl in wls:
        for point in sweep_points(sweeps.get(wl.name, {})):
            check_kv_capacity([wl], profiles, tokens, {wl.name: {**workload_params.get(wl.name, {}), **point}})
    from types import SimpleNamespace

    # per browser (run counts its browsers too), before the engine's files are looked at
    check_cell_count(1, SimpleNamespace(workloads=wls, variants=variants, sweeps=sweeps, repeat=repeat))
    extra_roots = engine_params(wls, profiles, workload_params, model, ort_version, ort_dist)
    from harness.workloads import served_roots  # loaded by resolve_workloads by now

    extra_roots.update(served_roots(wls))  # --workloads-dir workloads at /workloads/<name>/
    emulation = emulation_options(emulation_option, overrides)
    return CellOptions(workloads=wls, variants=variants, profiles=profiles, tokens=tokens, seed=seed, params=recorded,
                       workload_params=workload_params, sweeps=sweeps, extra_roots=extra_roots, repeat=repeat,
                       probes=probes, webgpu=webgpu, emulation_options=emulation, memory_budget_bytes=budget_bytes)


@dataclass
class Cell:
    """One measured combination. ``status``: pending → ok / failed / skipped."""

    cell: str
    browser: str
    workload: str
    variant: str
    profile: str | None
    tokens: int
    repetition: int = 0
    seed: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    browser_version: str = ""
    adapter: str = ""
    webgpu: str = ""
    status: str = "pending"
    reason: str = ""
    #: the swept parameters' values of this cell (``--param KEY=A,B,C``; empty without a sweep)
    sweep: dict[str, Any] = field(default_factory=dict)
    #: provenance: how the browser was driven (``playwright``, ``selenium-webkitgtk``, ``webdriver-remote``,
    #: ``playwright-remote``, ``cdp-remote``, ``manual``), the endpoint it was reached at, the platform it
    #: reported, and what per-process memory could be measured (harness/probe/process_memory.py ``describe``)
    driver: str = ""
    endpoint: str = ""
    platform: str = ""
    memory: str = ""


@dataclass
class RunPlan:
    """What to run. ``variants``/``profiles`` map workload name → chosen names; ``params`` is
    the ``--param`` values as given (recorded in the manifest), ``workload_params`` the typed
    overrides each workload gets (:func:`resolve_params`, plus engine settings)."""

    browsers: list[str]
    workloads: list[Workload]
    variants: dict[str, list[str]]
    profiles: dict[str, str | None]
    tokens: int = 64
    seed: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    workload_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    repeat: int = 1
    headed: bool = False
    browser_path: str | None = None
    browser_args: list[str] = field(default_factory=list)
    #: extra paths the server serves: URL prefix → folder, or URL path → single file (a --model
    #: and its external data files)
    extra_roots: dict[str, Path] = field(default_factory=dict)
    without_browser_args: list[str] = field(default_factory=list)
    memory_interval_s: float = DEFAULT_MEMORY_INTERVAL_S
    heap_interval_s: float = 1.0
    start_timeout_s: float = 90.0
    step_timeout_s: float = 120.0
    probes: bool = True
    webgpu: str = "auto"  # auto | real | emulated
    #: options of installEmulatedWebGPU (web/emulation/webgpu-emulated.js): memory model and limits
    emulation_options: dict[str, Any] = field(default_factory=lambda: dict(EMULATION_DEFAULTS))
    #: bytes; marks the token at which the content process would exceed it (iOS jetsam)
    memory_budget_bytes: int | None = None
    #: force a full collection in the worker every N tokens where the driver can (0 = never;
    #: harness/probe/gc_checkpoints.py)
    gc_checkpoints: int = 0
    #: workload → swept parameter → typed values (:func:`resolve_sweeps`): a matrix axis like variants
    sweeps: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    #: browsers behind an endpoint: label → harness.drive.remote.RemoteTarget (empty: launched here)
    remote: dict[str, Any] = field(default_factory=dict)
    #: where the harness's server binds (loopback unless asked), and the base URL browsers are sent to
    host: str = "127.0.0.1"
    port: int = 0
    public_url: str | None = None
    #: serve over https; (certificate, key) PEM files, or None to use the generated ones (serve/tls.py)
    https: bool = False
    tls_files: tuple[Path, Path] | None = None
    #: what pages may post (harness/store/limits.py; --sample-limit); None: the defaults
    sample_limits: Any = None

    def cells(self) -> list[Cell]:
        """Every cell, per browser in round-robin order: repetition r of every workload × variant
        before repetition r+1 (r0 fresh, r0 reuse, r1 fresh, r1 reuse…), so drift during a
        browser's session hits every variant alike."""
        return [c for browser in self.browsers for rep in range(self.repeat)
                for c in self.repetition_cells(browser, rep)]

    def repetition_cells(self, browser: str, rep: int) -> list[Cell]:
        """Repetition ``rep`` of every workload × variant × sweep point of ``browser`` (a swept
        value is part of the cell id: ``….tiny.max_pending_dispatches-16.r0``)."""
        out = []
        for wl in self.workloads:
            for variant in self.variants[wl.name]:
                for point in sweep_points(self.sweeps.get(wl.name, {})):
                    profile = self.profiles.get(wl.name)
                    axis = "".join(f".{k}-{str(v).lower() if isinstance(v, bool) else v}" for k, v in point.items())
                    cid = f"{browser}.{wl.name}.{variant}.{profile or 'default'}{axis}.r{rep}"
                    out.append(Cell(cid, browser, wl.name, variant, profile, self.tokens, rep, self.seed,
                                    {**wl.defaults(), **self.workload_params.get(wl.name, {}), **point},
                                    sweep=dict(point)))
        return out

    def parameters(self) -> dict[str, Any]:
        """The manifest's ``parameters`` block (RESULTS.md)."""
        return {"browsers": self.browsers, "workloads": [w.name for w in self.workloads], "variants": self.variants,
                "profiles": self.profiles, "tokens": self.tokens, "seed": self.seed,
                # --param as given, and what the harness set for the workloads (engine, --model)
                "params": {**self.params, **{k: v for wp in self.workload_params.values() for k, v in wp.items()}},
                "repeat": self.repeat, "headed": self.headed, "browser_args": self.browser_args,
                "without_browser_args": self.without_browser_args, "probes": self.probes, "webgpu": self.webgpu,
                "emulation_options": self.emulation_options, "memory_budget_bytes": self.memory_budget_bytes,
                "memory_interval_s": self.memory_interval_s, "step_timeout_s": self.step_timeout_s,
                "start_timeout_s": self.start_timeout_s,
                "gc_checkpoints": self.gc_checkpoints, "sweeps": self.sweeps,
                **({"remote": {b: {"kind": t.kind, "url": t.url} for b, t in self.remote.items()}}
                   if self.remote else {}),
                **({"public_url": self.public_url} if self.public_url else {}),
                **({"https": True} if self.https else {}),
                "sample_limits": (self.sample_limits or _default_limits()).to_dict()}

"""``webgpu-harness doctor``: launch each browser once and ask it for a WebGPU adapter."""

from __future__ import annotations

from harness.drive.base import BrowserDriver, Located
from harness.serve.app import ServerThread, create_app
from harness.store.store import SampleStore

#: The default adapter as JSON: ``description`` (one line: vendor, architecture, description, or
#: ``none: <why>``), and where there is one its ``info`` (GPUAdapterInfo's fields), ``features``,
#: ``limits`` (GPUSupportedLimits) and the WGSL language features (WebGPU spec §4.2, §3.6, §4.4).
ADAPTER_JS = """(async () => {
  if (!navigator.gpu) return {description: 'none: navigator.gpu is ' + (navigator.gpu === null ? 'null' : 'undefined')};
  const a = await navigator.gpu.requestAdapter();
  if (!a) return {description: 'none: requestAdapter() returned null'};
  const i = a.info || {};
  const plain = (o) => { const out = {}; for (const k in o) { const v = o[k]; if (typeof v !== 'function') out[k] = v; } return out; };
  return {
    description: [i.vendor, i.architecture, i.description].filter(Boolean).join(' ') || 'adapter (no info)',
    info: plain(i), features: [...a.features].sort(), limits: plain(a.limits),
    wgslLanguageFeatures: [...(navigator.gpu.wgslLanguageFeatures || [])].sort(),
    isFallbackAdapter: a.isFallbackAdapter ?? null,
  };
})()"""


def native_adapters() -> list[tuple[str | None, str]]:
    """Adapters wgpu-native finds outside the browser (``webgpu-harness native``): a list of
    (label, note); one (None, why) row when wgpu is missing or finds none."""
    from harness.native.run import adapter_info, adapter_label, import_wgpu

    wgpu, why = import_wgpu()
    if wgpu is None:
        return [(None, why)]
    try:
        adapters = list(wgpu.gpu.enumerate_adapters_sync())
    except Exception as exc:  # a broken Vulkan loader, say
        return [(None, f"enumerating adapters failed: {exc}")]
    if not adapters:
        return [(None, "no adapter: on Debian install mesa-vulkan-drivers (lavapipe CPU adapter) or a GPU driver")]
    return [(adapter_label(adapter_info(a)), "") for a in adapters]


def evaluate_on_local_page(driver: BrowserDriver, expression: str, located: Located | None = None,
                           extra_args: list[str] | None = None):
    """Launch the browser, open an isolated page of a private harness server (so ``/web/`` and
    ``/workloads/`` modules can be imported) and evaluate ``expression`` (a JS expression, may be
    a promise) there. Returns ``(browser version, JSON result)``; raises on launch failure."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = SampleStore(tmp)
        session = driver.launch(located or driver.locate(), extra_args=extra_args)
        try:
            with ServerThread(create_app(store)) as server:
                session.open(server.url + "/")
                return session.version, session.evaluate(expression)
        finally:
            session.close()
            store.close()


def adapter_details(driver: BrowserDriver, located: Located) -> tuple[str, dict]:
    """Ask the browser for a WebGPU adapter on an isolated local page. Returns (browser version,
    :data:`ADAPTER_JS`'s object: ``description`` always, ``info``/``features``/``limits``/
    ``wgslLanguageFeatures`` when there is an adapter). Raises on launch failure. A family that is
    not a browser (dawn) answers with its own ``probe_adapter`` (a description only)."""
    own = getattr(driver, "probe_adapter", None)
    if own is not None:
        version, description = own(located)
        return version, {"description": description}
    version, adapter = evaluate_on_local_page(driver, ADAPTER_JS, located)
    return version, adapter if isinstance(adapter, dict) else {"description": str(adapter)}


def probe_adapter(driver: BrowserDriver, located: Located) -> tuple[str, str]:
    """Ask the browser for a WebGPU adapter on an isolated local page.

    Returns (browser version, adapter description or ``none: <why>``). Raises on launch failure.
    A family that is not a browser (dawn) answers with its own ``probe_adapter``.
    """
    version, adapter = adapter_details(driver, located)
    return version, str(adapter.get("description"))

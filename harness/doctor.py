"""``webgpu-harness doctor``: launch each browser once and ask it for a WebGPU adapter."""

from __future__ import annotations

from harness.browsers.base import BrowserDriver, Located
from harness.server import ServerThread, create_app
from harness.store import SampleStore

ADAPTER_JS = """(async () => {
  if (!navigator.gpu) return 'none: navigator.gpu is ' + (navigator.gpu === null ? 'null' : 'undefined');
  const a = await navigator.gpu.requestAdapter();
  if (!a) return 'none: requestAdapter() returned null';
  const i = a.info || {};
  return [i.vendor, i.architecture, i.description].filter(Boolean).join(' ') || 'adapter (no info)';
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


def probe_adapter(driver: BrowserDriver, located: Located) -> tuple[str, str]:
    """Launch the browser, open an isolated page on a local server and request an adapter.

    Returns (browser version, adapter description or ``none: <why>``). Raises on launch failure.
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = SampleStore(tmp)
        session = driver.launch(located)
        try:
            with ServerThread(create_app(store)) as server:
                session.open(server.url + "/")
                return session.version, str(session.evaluate(ADAPTER_JS))
        finally:
            session.close()
            store.close()

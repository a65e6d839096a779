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

// Sample transport for injected realms (page, workers): batched POSTs to a same-origin path.
//
// POST <origin>/__webgpu_harness__/samples with {"samples": [...]}; the interceptor (the proxy
// in harness/serve/proxy.py, or the Chromium Fetch interceptor in harness/drive/inject.py)
// answers it, so nothing leaves the browser for the app's own server, COEP does not apply
// (same origin) and a CSP `connect-src 'self'` allows it. Where the POST fails anyway (a CSP
// without 'self', a service worker in the way) the realm relays its batch over a BroadcastChannel
// to the top page, which sends it through a DevTools binding when one exists (Chromium) or its
// own POST. Every sample carries `t_ms` (performance.now() of its realm, ms), `realm` and `n`
// (the realm's sequence number, 1, 2, 3…: the harness drops a second copy of one and counts the
// numbers it never received, harness/serve/realms.py).
//
// Batching: a batch leaves when 32 samples are queued, when 100 ms passed since the last send
// at the time a sample is queued, or 100 ms after the first queued sample (timer); so a decoder
// slower than 100 ms/token sends each step as it ends, a faster one a few batches a second.

export const SAMPLE_PATH = '/__webgpu_harness__/samples';
export const RELAY_CHANNEL = '__webgpu_harness__';
const MAX_BATCH = 32;
const MAX_DELAY_MS = 100;

export class Transport {
  /**
   * @param scope the realm's global object
   * @param realm {id, kind, url, script_type} attached to every sample
   * @param originals functions captured before app code ran ({fetch, setTimeout, BroadcastChannel})
   */
  constructor(scope, realm, originals) {
    this.scope = scope;
    this.realm = realm;
    this.o = originals;
    this.queue = [];
    this.timer = null;
    this.lastSend = 0;
    this.chain = Promise.resolve();
    this.sent = 0;
    this.n = 0;
    this.failed = 0;
    this.relayed = 0;
    // an opaque-origin realm (a sandboxed srcdoc frame: about:srcdoc is no base URL) has no
    // same-origin path: the DevTools binding, else the relay, is all it has
    try {
      this.url = new URL(SAMPLE_PATH, scope.origin && scope.origin !== 'null' ? scope.origin : scope.location.href).href;
    } catch {
      this.url = null;
    }
    this.channel = null;
    this.relayTarget = false;  // the top page forwards relays and never relays itself
  }

  /** Queue one sample object (must have `kind`). */
  post(sample) {
    this.queue.push({ t_ms: this.scope.performance.now(), ...sample, realm: this.realm.id, n: ++this.n });
    const now = this.scope.performance.now();
    if (this.queue.length >= MAX_BATCH || now - this.lastSend >= MAX_DELAY_MS) this.flush();
    else if (this.timer === null) this.timer = this.o.setTimeout.call(this.scope, () => this.flush(), MAX_DELAY_MS);
  }

  /** Send what is queued; resolves when the server answered (or the relay took it). */
  flush() {
    if (this.timer !== null) {
      this.o.clearTimeout.call(this.scope, this.timer);
      this.timer = null;
    }
    if (!this.queue.length) return this.chain;
    const batch = this.queue;
    this.queue = [];
    this.lastSend = this.scope.performance.now();
    const body = JSON.stringify({ token: this.o.token, samples: batch });
    this.chain = this.chain.then(() => this.send(body, batch.length));
    return this.chain;
  }

  async send(body, n) {
    const sender = this.scope.__webgpuHarnessSend;  // DevTools binding (Chromium, page realms)
    if (typeof sender === 'function') {
      try { sender(body); this.sent += n; return; } catch { /* fall through to the POST */ }
    }
    try {
      if (this.url === null) throw new Error('no same-origin URL');
      const r = await this.o.fetch.call(this.scope, this.url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body, keepalive: body.length < 60000,
        credentials: 'omit', cache: 'no-store',
      });
      if (r.ok) { this.sent += n; return; }
    } catch { /* blocked (CSP) or network error: relay */ }
    this.relay(body, n);
  }

  relay(body, n) {
    if (this.relayTarget) { this.failed += n; return; }
    try {
      this.channel ??= new this.o.BroadcastChannel(RELAY_CHANNEL);
      this.channel.postMessage({ webgpuHarnessBatch: body });
      this.relayed += n;
    } catch {
      this.failed += n;
    }
  }

  /** Page realms: forward batches that workers relayed (see relay()). */
  listenForRelays() {
    if (typeof this.o.BroadcastChannel !== 'function') return;
    this.relayTarget = true;
    const ch = new this.o.BroadcastChannel(RELAY_CHANNEL);
    ch.onmessage = (e) => {
      const body = e.data?.webgpuHarnessBatch;
      if (typeof body === 'string') this.chain = this.chain.then(() => this.send(body, 0));
    };
  }
}

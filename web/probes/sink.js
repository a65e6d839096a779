// Sample sink: delivers samples to the harness server at least once, in order, in batches.
//
// POST /api/cells/<cell>/samples with {"src", "queue", "samples": [...]} (harness/serve/samples.py):
//  - every sample gets `n`, this sender's sequence number (1, 2, 3… in the order posted), and
//    `t_ms` (performance.now() when posted); `src` names this sink (one per worker or page load);
//  - samples wait in a bounded queue (MAX_QUEUE); a request carries everything queued when it
//    leaves (at most MAX_BATCH samples, MAX_BATCH_BYTES). It leaves at once when none left in the
//    last COALESCE_MS, else when that time is up (COALESCE_MAX samples, or a sample that ends the
//    cell or says where the worker is — URGENT_KINDS —, or flush() send at once): a decoder's
//    steps cost at most ~10 requests a second, whose work in the browser would otherwise slow the
//    decode being measured on a loaded machine. Up to MAX_IN_FLIGHT requests are out at once, so
//    a slow answer does not hold the next batch back (its delay is one round trip, not the one
//    ahead of it too). Requests of one sink can arrive out of order (each has its own
//    connection): the server holds one that overtook an earlier one until that one was written
//    (harness/serve/app.py), so samples.jsonl keeps the sink's order;
//  - a request that fails (network error, the browser's network process restarting, 5xx, 408,
//    429, 503 from a busy server) is sent again, the same batch, after a back-off of 50 ms doubling
//    to 2 s, until it is answered; the store drops a second copy of an (src, n) it already has;
//  - an answer of 4xx is final: 422 means the store kept the batch but refused some samples (it
//    recorded why); other 4xx (403 wrong token, 404 unknown cell, 413 too big) lose the batch,
//    and the store sees the jump in `n` (a `gap`) when the next batch arrives;
//  - queue full: the sample is dropped but still numbered, so the gap shows in the run.
// A crash of the worker or page loses at most what was not yet answered: the batches in flight
// and the samples queued behind them (each line's `queue` says how many were unanswered — the
// batches in flight, its own and those queued behind it — when its batch left; RESULTS.md).
// `flush()` resolves when everything posted so far was answered; `post()` returns a promise that
// resolves when that sample was (and every sample before it).

/** Most samples in one request (harness/serve/samples.py MAX_SAMPLES_PER_BATCH). */
export const MAX_BATCH = 512;
/** Most bytes in one request, below the server's MAX_BODY_BYTES (1 MiB). */
export const MAX_BATCH_BYTES = 900_000;
/** Most samples held unsent (harness/serve/samples.py MAX_QUEUE). */
export const MAX_QUEUE = 10_000;
/** Most requests in flight at once. Browsers open up to 6 HTTP/1.1 connections per host
 * (Chromium's and WebKit's per-host limit); 3 leaves room for the page's own fetches. */
export const MAX_IN_FLIGHT = 3;
/** A request leaves at most every COALESCE_MS (ms) unless COALESCE_MAX samples wait (as
 * web/inject/transport.js batches an app's samples). */
export const COALESCE_MS = 100;
export const COALESCE_MAX = 64;
/** Kinds that leave at once: where the worker is (the start timeout waits for env) and its end. */
export const URGENT_KINDS = new Set(['env', 'done', 'error', 'skip', 'device_lost']);
/** Back-off before the k-th retry of a batch (ms): 50 · 2^k, at most RETRY_MAX_MS. */
export const RETRY_BASE_MS = 50;
export const RETRY_MAX_MS = 2000;

function randomId(prefix) {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export class SampleSink {
  /**
   * @param {string} cell cell id
   * @param {{base?: string, token?: string|null, prefix?: string, fetchImpl?: Function}} options
   *   base: origin-relative API prefix; token: the run's token (runner page URL); prefix: `w`
   *   (worker) or `p` (page), the start of this sink's `src`.
   */
  constructor(cell, { base = '/api', token = null, prefix = 'w', fetchImpl = null } = {}) {
    this.url = `${base}/cells/${encodeURIComponent(cell)}/samples`;
    this.headers = { 'content-type': 'application/json', ...(token ? { 'x-harness-token': token } : {}) };
    this.fetch = fetchImpl ?? ((...a) => fetch(...a));
    this.src = randomId(prefix);
    this.n = 0; // last number given
    this.acked = 0; // every sample up to this number was answered (or given up)
    this.queue = []; // [{n, json}]
    this.flight = []; // requests in flight, in the order they left: [{last, size, answered}]
    this.scheduled = false;
    this.urgent = false; // a sample queued that leaves at once (URGENT_KINDS, flush())
    this.lastSend = -Infinity; // performance.now() when the last request left
    this.timer = null; // the coalescing timer
    this.waiters = []; // [{n, resolve}]
    this.closed = false;
    this.dropped = 0; // queue full
    this.failures = 0; // batches given up (final 4xx other than 422)
    this.retries = 0;
  }

  /** Take nothing more (an emulated page kill: web/emulation/memory-budget.js); what is already
   * queued (the kill's own error sample) still leaves. */
  close() {
    this.closed = true;
  }

  /** Queue one sample (a plain JSON-able object with a `kind`); resolves when it was answered. */
  post(sample) {
    if (this.closed) return Promise.resolve();
    this.n += 1;
    const n = this.n;
    if (this.queue.length >= MAX_QUEUE) {
      this.dropped += 1; // numbered and lost: the store records the gap
      return Promise.resolve();
    }
    this.queue.push({ n, json: JSON.stringify({ t_ms: performance.now(), ...sample, n }) });
    // the first step leaves at once too: the harness learns the worker began its steps even when
    // the worker then stays busy (a coalescing timer cannot fire while its thread is held)
    if (URGENT_KINDS.has(sample?.kind) || (sample?.kind === 'step' && sample.step === 0)) this.urgent = true;
    this.kick();
    return this.until(n);
  }

  /** Resolves when every sample posted so far was answered (what is queued leaves at once). */
  flush() {
    if (this.queue.length) {
      this.urgent = true;
      this.kick();
    }
    return this.until(this.n);
  }

  until(n) {
    if (this.acked >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  kick() {
    if (this.scheduled) return;
    this.scheduled = true;
    // samples posted in the same task (a step, a device loss) leave together
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  take() {
    const batch = [];
    let bytes = 64;
    while (this.queue.length && batch.length < MAX_BATCH) {
      const next = this.queue[0];
      if (batch.length && bytes + next.json.length + 1 > MAX_BATCH_BYTES) break;
      bytes += next.json.length + 1;
      batch.push(this.queue.shift());
    }
    return batch;
  }

  /** Start requests for what is queued while fewer than MAX_IN_FLIGHT are out (module comment:
   * at most one per COALESCE_MS unless urgent or COALESCE_MAX samples wait). */
  pump() {
    if (!this.queue.length) return;
    const wait = this.lastSend + COALESCE_MS - performance.now();
    if (wait > 0 && !this.urgent && this.queue.length < COALESCE_MAX) {
      if (this.timer === null) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.pump();
        }, wait);
      }
      return;
    }
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.queue.length && this.flight.length < MAX_IN_FLIGHT) {
      this.lastSend = performance.now();
      const batch = this.take();
      // queue: samples unanswered as this batch leaves (in flight, it, those behind it): what a crash now loses
      const unanswered = this.flight.reduce((a, f) => a + f.size, 0) + batch.length + this.queue.length;
      const entry = { last: batch[batch.length - 1].n, size: batch.length, answered: false };
      this.flight.push(entry);
      const body = `{"src":${JSON.stringify(this.src)},"queue":${unanswered},"samples":[${batch.map((s) => s.json).join(',')}]}`;
      this.send(body).then(() => {
        entry.answered = true;
        // answered in order: a later request answered first waits for the ones ahead of it
        while (this.flight.length && this.flight[0].answered) this.acked = this.flight.shift().last;
        if (!this.flight.length && !this.queue.length) this.acked = this.n; // numbers dropped (queue full) too
        this.wake();
        this.pump();
      });
    }
    if (!this.queue.length) this.urgent = false;
  }

  /** POST one batch until it is answered (module comment: what is final, what is retried). */
  async send(body) {
    for (let attempt = 0; ; attempt++) {
      let status = 0;
      try {
        status = (await this.fetch(this.url, { method: 'POST', headers: this.headers, body })).status;
      } catch {
        status = 0; // network error: the request may or may not have arrived
      }
      const final = (status >= 200 && status < 300) || (status >= 400 && status < 500 && ![408, 429].includes(status));
      if (final) {
        if (status >= 400 && status !== 422) this.failures += 1;
        return;
      }
      if (this.closed) return;
      this.retries += 1;
      const wait = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt) * (0.75 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  wake() {
    const still = [];
    for (const w of this.waiters) (w.n <= this.acked ? w.resolve() : still.push(w));
    this.waiters = still;
  }
}

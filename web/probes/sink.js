// Sample sink: streams samples to the harness server as they are produced.
//
// POST /api/cells/<cell>/samples with {"samples": [...]}. Posts are chained so they arrive in
// order; each step's sample leaves at the end of that step (a crash loses at most the step in
// flight). The server appends each batch to samples.jsonl on arrival.

export class SampleSink {
  /** @param {string} cell cell id; @param {string} base origin-relative API prefix */
  constructor(cell, base = '/api') {
    this.url = `${base}/cells/${encodeURIComponent(cell)}/samples`;
    this.chain = Promise.resolve();
    this.failures = 0;
    this.closed = false;
  }

  /** Post nothing more (an emulated page kill: web/emulation/memory-budget.js). */
  close() {
    this.closed = true;
  }

  /** Queue one sample (a plain JSON-able object with a `kind`). */
  post(sample) {
    if (this.closed) return this.chain;
    const body = JSON.stringify({ samples: [{ t_ms: performance.now(), ...sample }] });
    this.chain = this.chain.then(() => fetch(this.url, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body,
    }).then((r) => { if (!r.ok) this.failures += 1; }, () => { this.failures += 1; }));
    return this.chain;
  }

  /** Resolves when every queued sample has been answered by the server. */
  flush() {
    return this.chain;
  }
}

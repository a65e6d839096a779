// memory-budget.js: a page's memory budget inside the emulated WebGPU, and what happens when
// the modeled native memory of its devices reaches it.
//
// What is modeled (/work/shared/references.md, "WebKit memory behaviour that changed across
// versions"): on iOS the page has a memory limit (the field report saw 2,048 MB; WebKit
// engineers quote ~1.5 GB, varying by device) and WebGPU allocations count against it.
//   'lose-device' — WebKit since late 2024: under memory pressure Safari loses every WebGPU
//                   device of the page (each device.lost resolves, reason 'unknown') instead of
//                   letting iOS kill the page.
//   'kill-page'   — before that: the page is killed (jetsam). In the emulation the devices die
//                   silently (their lost promises never resolve: no script is left to observe
//                   them), options.onKillPage(info) is called, and the allocating call throws.
//   'out-of-memory' — a model of an allocation that fails while the page lives on: a createBuffer
//                   that would take the modeled bytes past the budget generates a
//                   GPUOutOfMemoryError (to an 'out-of-memory' error scope, else
//                   `uncapturederror`) and returns an invalid buffer, uncharged; nothing else
//                   happens (WebGPU spec, createBuffer: "if the allocation fails … generate an
//                   out-of-memory error" and the buffer is invalid). An application that does not
//                   check keeps going: every bind group, copy and submit using that buffer then
//                   fails validation and its work never runs — how "gibberish output" reports
//                   arise. Bind groups and encoder records are counted against the budget but
//                   never refused (createBindGroup has no out-of-memory error in the spec).
//
// Counted: every device of one emulated GPU (one page) together, the modeled native bytes of
// its bind groups plus its modeled buffer bytes (buffer sizes, and encoder records when that
// WebKit model is on; memory-model.js, Ledger.modeledBufferBytes). The process's own memory
// (JS heap, the engine) is not known to the emulation and not counted: the budget is a budget
// for modeled GPU memory.
//
// Options (installEmulatedWebGPU / createEmulatedGPU):
//   memoryBudgetBytes  bytes; 0 or absent: no budget
//   atMemoryBudget     'lose-device' (default) | 'kill-page' | 'out-of-memory'
//   onKillPage(info)   called once at the kill, info = {modeledBytes, budgetBytes, message}

export const AT_MEMORY_BUDGET = Object.freeze(['lose-device', 'kill-page', 'out-of-memory']);

/** The budget shared by the devices of one emulated GPU; null when options set none. */
export class MemoryBudget {
  /**
   * @param {object} options installEmulatedWebGPU options (memoryBudgetBytes, atMemoryBudget, onKillPage)
   * @param {(dev: object, reason: string, message: string) => void} loseDevice how a device
   *   native is lost (webgpu-emulated.js), passed in so this module imports nothing
   * @returns {MemoryBudget | null}
   * @throws {TypeError} on a negative or non-integer budget or an unknown atMemoryBudget
   */
  static from(options, loseDevice) {
    const bytes = options.memoryBudgetBytes ?? 0;
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new TypeError(`memoryBudgetBytes must be a non-negative integer (got ${bytes})`);
    const at = options.atMemoryBudget ?? 'lose-device';
    if (!AT_MEMORY_BUDGET.includes(at)) throw new TypeError(`atMemoryBudget must be one of ${AT_MEMORY_BUDGET.join(', ')} (got ${at})`);
    if (options.onKillPage !== undefined && typeof options.onKillPage !== 'function') throw new TypeError('onKillPage must be a function');
    return bytes > 0 ? new MemoryBudget(bytes, at, options.onKillPage ?? null, loseDevice) : null;
  }

  constructor(budgetBytes, atBudget, onKillPage, loseDevice) {
    this.budgetBytes = budgetBytes;
    this.atBudget = atBudget;
    this.onKillPage = onKillPage;
    this.loseDevice = loseDevice;
    this.devices = new Set(); // device natives (never wrappers)
    this.trips = []; // [{modeledBytes, budgetBytes, atBudget, message}]
    this.killed = false;
  }

  register(dev) {
    this.devices.add(dev);
  }

  /** Modeled bytes of every device of the page: bind groups + buffers (+ encoder records). */
  modeledBytes() {
    let total = 0;
    for (const dev of this.devices) total += dev.ledger.modeledNativeBytes + dev.ledger.modeledBufferBytes;
    return total;
  }

  /**
   * Called after each charge to a ledger of `dev`. Over the budget: every device not yet lost
   * is lost ('lose-device'), or the page is killed ('kill-page': throws an Error whose name is
   * 'EmulatedPageKilled' out of the allocating call).
   */
  /**
   * 'out-of-memory' only: would allocating `bytes` more take the page's modeled bytes past the
   * budget? Then the allocation is refused (createBuffer, resources.js): the refusal is
   * recorded as a trip and true is returned; the caller generates the GPUOutOfMemoryError.
   */
  refuses(dev, bytes) {
    if (this.atBudget !== 'out-of-memory') return false;
    const modeled = this.modeledBytes();
    if (modeled + bytes <= this.budgetBytes) return false;
    this.trips.push({ modeledBytes: modeled, budgetBytes: this.budgetBytes, atBudget: this.atBudget,
      message: `createBuffer of ${bytes} bytes refused on ${dev.label || 'a device'}` });
    return true;
  }

  charged(dev) {
    if (this.atBudget === 'out-of-memory') return; // buffers are refused before they are charged (refuses)
    if (this.killed) throw pageKilledError('the page was already killed at its memory budget');
    const modeled = this.modeledBytes();
    if (modeled <= this.budgetBytes) return;
    const live = [...this.devices].filter((d) => !d.lost);
    if (!live.length) return;
    const message = `webgpu-emulated ${this.atBudget} at the memory budget: modeled ${modeled} bytes > ` +
      `${this.budgetBytes} bytes (bind groups + buffers of ${this.devices.size} device(s), on ${dev.label || 'a device'})`;
    const trip = { modeledBytes: modeled, budgetBytes: this.budgetBytes, atBudget: this.atBudget, message };
    this.trips.push(trip);
    if (this.atBudget === 'lose-device') {
      for (const d of live) this.loseDevice(d, 'unknown', message);
      return;
    }
    this.killed = true;
    for (const d of live) this.loseDevice(d, null, message); // reason null: lost promise never resolves
    if (this.onKillPage) this.onKillPage({ ...trip });
    throw pageKilledError(message);
  }

  snapshot() {
    return { budgetBytes: this.budgetBytes, atBudget: this.atBudget, trips: this.trips.length, killed: this.killed };
  }
}

function pageKilledError(message) {
  const e = new Error(message);
  e.name = 'EmulatedPageKilled';
  return e;
}

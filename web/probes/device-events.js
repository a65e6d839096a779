// Device-event probe: device loss and uncaptured errors, as samples, with the step they fell in.
//
// Every GPUDevice a workload (or a library it loads) gets from GPUAdapter.requestDevice is
// watched (WebGPU spec §22 "Errors & Debugging": GPUDevice.lost, the `uncapturederror` event):
//   device_lost      {reason, message, step}        when device.lost resolves with a reason
//                    other than 'destroyed' (the engine lost the device: GPU process crash, out
//                    of memory, WebKit's memory-pressure loss, the emulation's lose-device), and
//                    when a device the workload destroyed with destroy() is used afterwards
//                    (reason 'destroyed', `destroy_step` the step of the destroy() call): a
//                    device destroyed mid-run. A destroy() that nothing follows (a workload
//                    releasing its device at the end, or in its cleanup after an error) is not
//                    a loss and posts nothing.
//   uncaptured_error {message, error_type, step}    each `uncapturederror` event (the first
//                    MAX_ERROR_SAMPLES per cell; then one `log` sample saying the rest are not
//                    recorded).
// `step` is the step open when it happened, else the step most recently begun (null before the
// first). The harness ends a cell with a device_lost sample as `device-lost` (RESULTS.md).

/** uncaptured_error samples recorded per cell at most. */
export const MAX_ERROR_SAMPLES = 100;

/**
 * Install on `scope` (a worker's global). `post(sample)` sends a sample; `step()` returns the
 * current step (number or null). Returns {settle()} : a promise that resolves after two tasks,
 * so a loss the engine has already decided is posted before a workload error that follows it.
 */
export function installDeviceEvents(scope, { post, step }) {
  const destroyedAt = new WeakMap(); // GPUDevice -> step of its destroy() call
  const reported = new WeakSet(); // devices whose loss was posted
  const deviceOfQueue = new WeakMap(); // GPUQueue -> GPUDevice
  let errors = 0;
  let anyDestroyed = false;
  const cut = (text) => String(text ?? '').slice(0, 2000);

  const watch = (device) => {
    if (!device || typeof device !== 'object') return;
    try {
      deviceOfQueue.set(device.queue, device);
    } catch { /* no queue getter: nothing to map */ }
    Promise.resolve(device.lost).then((info) => {
      if (!info || info.reason === 'destroyed' || reported.has(device)) return;
      reported.add(device);
      post({ kind: 'device_lost', reason: String(info.reason ?? 'unknown'), message: cut(info.message), step: step() });
    }, () => {});
    device.addEventListener?.('uncapturederror', (e) => {
      errors += 1;
      if (errors > MAX_ERROR_SAMPLES) {
        if (errors === MAX_ERROR_SAMPLES + 1) post({ kind: 'log', message: `more than ${MAX_ERROR_SAMPLES} uncaptured WebGPU errors: the rest are not recorded` });
        return;
      }
      const err = e.error;
      post({ kind: 'uncaptured_error', message: cut(err?.message ?? err), error_type: err?.constructor?.name ?? 'GPUError', step: step() });
    });
  };

  const usedAfterDestroy = (device, what) => {
    if (!device || !destroyedAt.has(device) || reported.has(device)) return;
    reported.add(device);
    const at = destroyedAt.get(device);
    post({
      kind: 'device_lost', reason: 'destroyed', step: step(), destroy_step: at,
      message: `device.destroy() was called at step ${at}, then the device was used (${what})`,
    });
  };

  const wrapAfter = (iface, method, after) => {
    const proto = scope[iface]?.prototype;
    if (!proto || typeof proto[method] !== 'function' || proto[method].__harnessDeviceEvents) return;
    const original = proto[method];
    const wrapped = function (...args) {
      const result = original.apply(this, args);
      after(this, result);
      return result;
    };
    wrapped.__harnessDeviceEvents = true;
    Object.defineProperty(proto, method, { value: wrapped, writable: true, configurable: true });
  };

  wrapAfter('GPUAdapter', 'requestDevice', (_adapter, promise) => {
    Promise.resolve(promise).then(watch, () => {});
  });
  wrapAfter('GPUDevice', 'destroy', (device) => {
    if (!destroyedAt.has(device)) destroyedAt.set(device, step());
    anyDestroyed = true;
  });
  // uses that mean "the workload was still working on this device"
  for (const method of ['createBuffer', 'createBindGroup', 'createCommandEncoder', 'createShaderModule', 'createComputePipeline']) {
    wrapAfter('GPUDevice', method, (device) => { if (anyDestroyed) usedAfterDestroy(device, `GPUDevice.${method}`); });
  }
  for (const method of ['submit', 'writeBuffer', 'onSubmittedWorkDone']) {
    wrapAfter('GPUQueue', method, (queue) => { if (anyDestroyed) usedAfterDestroy(deviceOfQueue.get(queue), `GPUQueue.${method}`); });
  }

  const task = () => new Promise((resolve) => setTimeout(resolve, 0));
  return { settle: async () => { await task(); await task(); } };
}

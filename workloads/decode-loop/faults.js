// Test-only faults (manifest.json parameters with "testing": true, default -1 = off), for the
// harness's own fault-injection tests: each fires at the start of its step, after beginStep.
//   test_hang_at_step            the worker stops producing steps forever but stays responsive
//                                (awaits a promise that never settles: its event loop still runs)
//   test_busy_at_step            a busy loop that never returns (the worker's thread is stuck)
//   test_destroy_device_at_step  device.destroy() mid-run; the token then fails on the lost device
//   test_throw_at_step           throws an Error

/** Fire the fault set for `step`, if any. Resolves when the step may go on (never, for a hang). */
export async function injectFault(faults, step, device) {
  if (step === faults.throw) throw new Error(`test_throw_at_step=${step}: injected failure`);
  if (step === faults.destroyDevice) device.destroy();
  if (step === faults.busy) {
    for (;;) { /* spin: never returns */ }
  }
  if (step === faults.hang) await new Promise(() => {});
}

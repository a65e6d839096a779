"""Report sections: each module registers its own with ``@harness.report.section`` on import."""

from harness.report_sections import stats  # noqa: F401  statistics, differences, budgets, manifest
from harness.report_sections import dispatch_overhead  # noqa: F401,E402  dispatch overhead per method, phases, fusion
from harness.report_sections import retention  # noqa: F401,E402  bind group retention (Chromium vs WebKit), onnxruntime-web
from harness.report_sections import gc_retention  # noqa: F401,E402  gc-retention calibration: allocation patterns vs retention

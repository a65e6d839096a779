"""harness/report/charts.py ``fig_dict`` puts the charts' plotly template into the layout itself
(plotly copied and validated the template for every chart set through ``update_layout``): the
dict is the one plotly writes when the template is set through it, key order included."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from harness.report.charts import _LAYOUT, TEMPLATE, fig_dict


def _figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[4, 5, 6], name="bind groups"))
    fig.add_hline(y=5, line_dash="dash")
    return fig


def test_template_put_in_equals_template_set_through_plotly():
    old = _figure()
    old.update_layout(template=TEMPLATE, height=420, **_LAYOUT)
    new = _figure()
    new.update_layout(height=420, **_LAYOUT)
    a, b = json.loads(old.to_json()), fig_dict(new)
    assert a == b
    assert json.dumps(a) == json.dumps(b)  # the same order too: the page's JSON is byte for byte the same
    assert b["layout"]["template"]["layout"]["plot_bgcolor"] == "white"


def test_template_none_keeps_the_figures_own():
    fig = _figure()
    assert fig_dict(fig, template=None) == json.loads(fig.to_json())
    assert fig_dict(fig, template=None)["layout"]["template"] != fig_dict(_figure())["layout"]["template"]

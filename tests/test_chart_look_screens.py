"""Zoom, crosshair and smoothing keys on symon, the workspace and the cluster: the focused chart shows each."""

from __future__ import annotations

import pytest

from leet.testing.cluster_demo import make_cluster_demo
from leet.testing.demo import make_demo
from leet.testing.workspace_demo import make_workspace_demo


def demos():
    return {
        "symon": lambda: make_demo(samples=60).app,
        "workspace": lambda: make_workspace_demo().app,
        "cluster": lambda: make_cluster_demo(nodes=4, gpus=2).app,
    }


@pytest.mark.parametrize("screen", ["symon", "workspace", "cluster"])
async def test_keys_zoom_read_out_and_smooth_the_focused_chart(screen):
    app = demos()[screen]()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        grid = app.screen.grid
        grid.focus_chart(0)
        await pilot.pause()
        chart = grid.visible_charts()[0][1]
        full = chart.view.x_range
        await pilot.press("z")
        await pilot.pause()
        lo, hi = chart.view.x_range
        assert hi - lo == pytest.approx((full[1] - full[0]) / 2)
        assert "⌕" in chart.plain_rows()[0]
        await pilot.press("v")
        await pilot.pause()
        assert chart.crosshair is not None
        assert "│" in chart.plain_rows()[1][3:-1]  # the readout's separators inside the frame
        await pilot.press("x", "e")
        await pilot.pause()
        assert chart.view.x_range == full
        title = chart.plain_rows()[0]
        assert "⌕" not in title and "~0.6" in title

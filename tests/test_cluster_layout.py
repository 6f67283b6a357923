"""The width ``leet cluster`` asks its first history for is the width its screen then lays the charts out at."""

from __future__ import annotations

import pytest

from leet.testing.cluster_demo import make_cluster_demo
from leet.ui.views.cluster_layout import chart_cells


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40), (160, 48), (203, 50), (300, 80)])
async def test_the_cli_width_hint_is_the_screens_widest_chart(size):
    demo = make_cluster_demo(nodes=8, gpus=4)
    told: list[int] = []
    demo.source.set_width = told.append
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause(0.2)
    assert told and told[-1] == chart_cells(size[0]), told


def test_the_hint_imports_no_textual():
    import subprocess
    import sys

    code = "import sys; from leet.ui.views.cluster_layout import chart_cells; chart_cells(160); print('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"

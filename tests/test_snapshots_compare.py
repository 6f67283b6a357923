"""A whole-screen snapshot of the compare view (``D`` in the workspace) on the made-up folder of runs.

The workspace demo (``leet.testing.workspace_demo``: fixed runs, fixed clock,
no files, no threads) overlays two runs; ``D`` compares them with the run
under the cursor. The SVG lives in ``tests/__snapshots__/test_snapshots_compare/``;
after a deliberate change to the view, regenerate it with
``python3 -m pytest tests/test_snapshots_compare.py --snapshot-update`` and
look at it before keeping it.
"""

from __future__ import annotations

from leet.testing.workspace_demo import make_workspace_demo

LARGE = (160, 48)


def test_compare_view_sorted_by_the_loss(snap_compare):
    # The cursor goes down to the failed run and joins the comparison; then the columns sort by "loss · last", best first.
    keys = ("down",) * 5 + ("D",) + ("down",) * 5 + ("s",)
    assert snap_compare(make_workspace_demo().app, terminal_size=LARGE, press=keys)

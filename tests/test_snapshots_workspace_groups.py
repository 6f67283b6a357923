"""Whole-screen snapshots of the workspace runs list grouped by W&B group and cut to one job type.

The runs come from ``leet.testing.workspace_demo.make_workspace_demo`` (see
test_workspace_snapshots.py): groups ``sweep``, ``ddp`` and ``vit``, one run
without a group, job types ``train`` and ``eval``, and a shared run written
by four processes. The SVGs live in
``tests/__snapshots__/test_snapshots_workspace_groups/``; regenerate them with
``python3 -m pytest tests/test_snapshots_workspace_groups.py --snapshot-update``
after a deliberate change, and read them before keeping them.
"""

from __future__ import annotations

from leet.testing.workspace_demo import make_workspace_demo

LARGE = (160, 48)
SMALL = (100, 30)


def test_workspace_grouped(snap_compare):
    assert snap_compare(make_workspace_demo().app, terminal_size=LARGE, press=("g",))


def test_workspace_grouped_small_terminal(snap_compare):
    assert snap_compare(make_workspace_demo().app, terminal_size=SMALL, press=("g",))


def test_workspace_grouped_with_the_train_job_type(snap_compare):
    # all → eval → train: the eval run and the run without a job type leave the list.
    assert snap_compare(make_workspace_demo().app, terminal_size=LARGE, press=("g", "j", "j"))

"""Whole-screen snapshots of the monitor on fake GPU boxes.

The SVGs live in ``tests/__snapshots__/test_snapshots_gpu/``. After a
deliberate change to the GPU sidebar, regenerate them with
``python3 -m pytest tests/test_snapshots_gpu.py --snapshot-update`` and read
the SVG text before keeping them (see tests/test_snapshots.py for the
environment they assume).
"""

from __future__ import annotations

from collectors.fake import DEFAULT_START, FakeClock, make_fake_collectors
from leet.config import Config
from leet.model.store import Store
from leet.sources.live import LiveSource
from leet.testing.demo import DEMO_THEME, Demo
from leet.ui.app import LeetApp

INTERVAL = 2.0
SAMPLES = 120
MIG_NOTE = "NVML reports no per-process SM% on MIG-enabled GPUs"


def gpu_demo(
    gpus: int,
    *,
    lost: tuple[int, ...] = (),
    mig: tuple[int, ...] = (),
    notes: tuple[str, ...] = (),
    missing_driver: bool = False,
) -> Demo:
    """``leet.testing.demo.make_demo`` with the fake GPU collector's lost, MIG and note options."""
    clock = FakeClock(DEFAULT_START - (SAMPLES - 1) * INTERVAL)
    collectors = make_fake_collectors(
        clock, gpus=gpus, lost_gpus=lost, mig_gpus=mig, gpu_notes=notes, missing_gpu_driver=missing_driver
    )
    source = LiveSource(Store())
    config = Config(interval=INTERVAL, theme=DEMO_THEME)
    app = LeetApp(source, config, clock=clock, live=False)
    demo = Demo(app, source, clock, collectors, INTERVAL)
    demo.feed(SAMPLES)
    return demo


def test_two_gpus(snap_compare):
    assert snap_compare(gpu_demo(2).app, terminal_size=(120, 36))


def test_eight_gpus_every_utilisation_on_one_screen(snap_compare):
    assert snap_compare(gpu_demo(8).app, terminal_size=(160, 48))


def test_mig_and_lost_gpus_with_a_collector_note(snap_compare):
    app = gpu_demo(4, lost=(3,), mig=(1,), notes=(MIG_NOTE,)).app
    assert snap_compare(app, terminal_size=(120, 36))

"""Shared test settings: the same output on every machine.

Time labels are local time, so the whole session runs in UTC. ``NO_COLOR``
(read when an App is made) would strip colour from snapshots. Textual reads
``TEXTUAL_THEME`` and ``TEXTUAL_ANIMATIONS`` once, at import, which the
snapshot plugin does before this file runs: the demo app sets its theme
explicitly, and CI should still start pytest with both unset.
"""

from __future__ import annotations

import os
import time

import pytest

pytest_plugins = ["wandb_fixtures"]


@pytest.fixture(scope="session", autouse=True)
def utc_time_zone():
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("NO_COLOR", "TEXTUAL_THEME"):
        monkeypatch.delenv(name, raising=False)

"""Reading a run source to the end in the test's own thread (no worker, no screen)."""

from __future__ import annotations

import time

from leet.model.run import RunState
from leet.model.store import Store
from leet.sources.run import RunSource

TIMEOUT = 30.0


def settled(source, timeout: float = TIMEOUT):
    """Step ``source`` until its state is no longer loading; its snapshot then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        source.step()
        snapshot = source.snapshot()
        if snapshot.state is not RunState.LOADING:
            return snapshot
    raise AssertionError("the run did not load")


def load(path, **attributes) -> RunSource:
    """A ``RunSource`` on ``path`` (with these attributes set first), stepped until the whole file is in."""
    source = RunSource(path, Store())
    for name, value in attributes.items():
        setattr(source, name, value)
    deadline = time.monotonic() + TIMEOUT
    while not source.model.loaded:
        source.step()
        assert time.monotonic() < deadline, f"{path} never finished loading"
    return source

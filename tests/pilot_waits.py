"""Waiting in a pilot test for what the user would see, never for a fixed time."""

from __future__ import annotations

import time

WAIT = 20.0


async def until(pilot, condition, what: str, timeout: float = WAIT) -> None:
    """Let the app run until ``condition()`` holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what} after {timeout:.0f} s")
        await pilot.pause(0.02)

"""The walls between the rooms (docs/architecture.md): who may import whom."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# room: the packages of ours it must never import
WALLS = {
    # leet.common is the bottom room: every room may import it, and it imports no other of ours.
    "leet/common": ("leet.alerts", "leet.cli", "leet.commands", "leet.config", "leet.export", "leet.model",
                    "leet.runfile", "leet.sources", "leet.testing", "leet.ui", "widgets", "collectors", "textual"),
    "collectors": ("leet.alerts", "leet.cli", "leet.commands", "leet.config", "leet.export", "leet.model",
                   "leet.runfile", "leet.sources", "leet.testing", "leet.ui", "leet.arenas", "widgets"),
    "widgets": ("leet.alerts", "leet.cli", "leet.commands", "leet.config", "leet.export", "leet.model",
                "leet.runfile", "leet.sources", "leet.testing", "leet.ui", "leet.arenas", "collectors"),
    "leet/runfile": ("leet.model", "leet.sources", "leet.ui", "leet.commands", "leet.testing", "widgets", "collectors"),
    "leet/model": ("leet.sources", "leet.ui", "leet.commands", "leet.testing"),
    "leet/sources": ("leet.ui", "leet.commands", "leet.testing"),
    "leet/ui": ("leet.commands", "leet.testing"),
    # The commands print without Textual: pure view builders (ui/views/health) are fine, screens are not.
    "leet/commands": ("leet.ui.app", "leet.ui.screens", "leet.ui.driver", "leet.testing", "textual"),
    # What leet serve exports: keys, catalog and samples in, Prometheus pages out; no screen, no sources.
    "leet/export": ("leet.sources", "leet.ui", "leet.commands", "leet.testing", "widgets", "textual"),
    # Alerts are judged and sent without a screen: leet watch runs them headless.
    "leet/alerts": ("leet.ui", "leet.commands", "leet.testing", "widgets", "textual"),
}


def imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("room", sorted(WALLS))
def test_a_room_imports_nothing_beyond_its_walls(room):
    forbidden = WALLS[room]
    crossings = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / room).rglob("*.py"))
        for name in imported_modules(path)
        if any(name == wall or name.startswith(wall + ".") for wall in forbidden)
    ]
    assert not crossings, "\n".join(crossings)


def test_only_tests_and_tools_use_the_testing_room():
    users = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "leet").rglob("*.py"))
        if "testing" not in path.parts
        and any(name == "leet.testing" or name.startswith("leet.testing.") for name in imported_modules(path))
    ]
    assert not users, users

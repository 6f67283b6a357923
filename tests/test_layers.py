"""The walls between the rooms and the absence of import cycles (docs/architecture.md).

Every import counts here: at module level, inside a function (a lazy import)
and under ``TYPE_CHECKING``. A lazy import still ties two modules together
for a reader and for the next refactor, so a cycle through one is a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("leet", "collectors", "widgets")

# Every room of leet/ but the bottom one, which any room may import.
_LEET_ROOMS = (
    "leet.alerts",
    "leet.cli",
    "leet.commands",
    "leet.config",
    "leet.discovery",
    "leet.export",
    "leet.model",
    "leet.runfile",
    "leet.sources",
    "leet.testing",
    "leet.ui",
)

# room: the packages of ours (and Textual) it must never import
WALLS = {
    # The bottom room: pure text, units, time and matching helpers that every room may import.
    "leet/common": (*_LEET_ROOMS, "leet.arenas", "widgets", "collectors", "textual"),
    "collectors": (*_LEET_ROOMS, "leet.arenas", "widgets"),
    "widgets": (*_LEET_ROOMS, "leet.arenas", "collectors"),
    "leet/runfile": ("leet.model", "leet.discovery", "leet.sources", "leet.alerts", "leet.ui", "leet.commands",
                     "leet.testing", "leet.config", "widgets", "collectors"),
    "leet/model": ("leet.discovery", "leet.sources", "leet.alerts", "leet.ui", "leet.commands", "leet.testing", "leet.config"),
    # Finding runs on disk and judging them at a glance reads run files (runfile) and judges them (model),
    # and is shared by the threaded sources and headless alerts, so it sits between those and above these.
    "leet/discovery": ("leet.sources", "leet.alerts", "leet.ui", "leet.commands", "leet.testing", "leet.config",
                       "leet.export", "widgets", "collectors", "textual"),
    "leet/sources": ("leet.ui", "leet.commands", "leet.testing"),
    "leet/ui": ("leet.commands", "leet.testing"),
    # The commands print without Textual: pure view builders (ui/views/health) are fine, screens are not.
    "leet/commands": ("leet.ui.app", "leet.ui.screens", "leet.ui.driver", "leet.testing", "textual"),
    # What leet serve exports: keys, catalog and samples in, Prometheus pages out; no screen, no sources.
    "leet/export": ("leet.discovery", "leet.sources", "leet.alerts", "leet.ui", "leet.commands", "leet.testing", "widgets", "textual"),
    # Alerts are judged and sent without a screen, and without the threaded sources: leet watch runs them headless.
    "leet/alerts": ("leet.sources", "leet.ui", "leet.commands", "leet.testing", "widgets", "textual"),
}


def imported_modules(path: Path, *, with_names: bool = False) -> list[str]:
    """The absolute modules ``path`` imports, anywhere in it; ``with_names`` adds ``module.name`` for each from-import."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            if with_names:
                names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def module_files(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every module of ours by dotted name; a package is named by its ``__init__``."""
    found = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module → the modules of ours it imports (``from a import b`` names module ``a.b`` when there is one)."""
    files = module_files(root, packages)

    def owner(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = {owner(name) for name in imported_modules(path, with_names=True)}
        graph[module] = {target for target in targets if target and target != module}
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected parts of ``graph`` with more than one member, each sorted (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return sorted(found)


def room_of(module: str) -> str:
    """``collectors``, ``widgets``, or ``leet.<room>`` (a package or a top-level module of leet).

    ``python -m leet`` is the command line's other door, so ``leet.__main__`` is in ``leet.cli``'s room.
    """
    parts = module.split(".")
    if parts[0] != "leet" or len(parts) == 1:
        return parts[0]
    return "leet.cli" if parts[1] == "__main__" else ".".join(parts[:2])


def room_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = room_of(module)
        rooms.setdefault(here, set()).update(room_of(target) for target in targets if room_of(target) != here)
    return rooms


def describe(parts: list[list[str]], graph: Mapping[str, Iterable[str]]) -> str:
    lines = []
    for part in parts:
        members = set(part)
        lines.append(" ↔ ".join(part))
        lines += [f"    {a} imports {b}" for a in part for b in sorted(set(graph.get(a, ())) & members)]
    return "\n".join(lines)


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


def test_no_module_imports_one_that_imports_it_back():
    graph = import_graph(ROOT)
    found = cycles(graph)
    assert not found, "import cycles:\n" + describe(found, graph)


def test_no_two_rooms_import_each_other():
    graph = room_graph(import_graph(ROOT))
    # The app builds its first screen, and screens reach the app: one room, leet.ui, so no cycle.
    found = cycles(graph)
    assert not found, "rooms that import each other:\n" + describe(found, graph)


def test_no_module_imports_another_modules_private_names():
    reaches = []
    for module, path in module_files(ROOT).items():
        if path.name.endswith("_pb2.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
                reaches += [
                    f"{module} imports {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert not reaches, "\n".join(reaches)


def plant(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_cycle_check_sees_a_cycle_through_a_lazy_or_type_checking_import(tmp_path):
    plant(tmp_path, {
        "leet/__init__.py": "",
        "leet/model/__init__.py": "",
        "leet/model/a.py": "from leet.model.b import B\n",
        "leet/model/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from leet.model import c\n",
        "leet/model/c.py": "def later():\n    from leet.model import a\n",
        "leet/model/d.py": "from leet.model.a import A\n",
    })
    graph = import_graph(tmp_path, ("leet",))
    assert cycles(graph) == [["leet.model.a", "leet.model.b", "leet.model.c"]]
    assert "leet.model.c imports leet.model.a" in describe(cycles(graph), graph)


def test_the_room_check_sees_two_rooms_that_import_each_other(tmp_path):
    plant(tmp_path, {
        "leet/__init__.py": "",
        "leet/alerts/__init__.py": "",
        "leet/alerts/follow.py": "from leet.sources.layout import resolve\n",
        "leet/sources/__init__.py": "",
        "leet/sources/layout.py": "",
        "leet/sources/tail.py": "from leet.alerts.follow import x\n",
    })
    graph = import_graph(tmp_path, ("leet",))
    assert cycles(graph) == []
    assert cycles(room_graph(graph)) == [["leet.alerts", "leet.sources"]]

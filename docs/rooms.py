"""Write the measured parts of docs/architecture.md: each room's size, the walls between rooms, what each imports.

    python3 docs/rooms.py            # print the three tables
    python3 docs/rooms.py --write    # put them into docs/architecture.md, between their markers

The sizes come from the files and the walls from ``tests/test_layers.py``,
so the document cannot drift from either: ``tests/test_architecture_doc.py``
fails when what is written is no longer what this script measures.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
MARKERS = {
    "rooms": ("<!-- rooms: written by docs/rooms.py -->", "<!-- /rooms -->"),
    "walls": ("<!-- walls: written by docs/rooms.py from tests/test_layers.py -->", "<!-- /walls -->"),
    "imports": ("<!-- imports: written by docs/rooms.py from the code -->", "<!-- /imports -->"),
}
GENERATED = "_pb2.py"


def layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("leet_layers", ROOT / "tests" / "test_layers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def room_sizes() -> dict[str, tuple[int, int]]:
    """Room → (modules, lines), generated protobuf modules left out."""
    rooms = layers()
    sizes: dict[str, tuple[int, int]] = {}
    for module, path in sorted(rooms.module_files(ROOT).items()):
        if path.name.endswith(GENERATED):
            continue
        room = rooms.room_of(module)
        count, lines = sizes.get(room, (0, 0))
        sizes[room] = (count + 1, lines + len(path.read_text().splitlines()))
    return sizes


def rooms_table() -> str:
    rows = ["| Room | Modules | Lines |", "|---|---:|---:|"]
    sizes = room_sizes()
    for room, (count, lines) in sizes.items():
        rows.append(f"| `{room}` | {count} | {lines:,} |")
    total_modules = sum(count for count, _ in sizes.values())
    total_lines = sum(lines for _, lines in sizes.values())
    rows.append(f"| all | {total_modules} | {total_lines:,} |")
    return "\n".join(rows)


def walls_table() -> str:
    rows = ["| Room | Never imports |", "|---|---|"]
    for room, forbidden in sorted(layers().WALLS.items()):
        rows.append(f"| `{room}/` | {', '.join(f'`{name}`' for name in forbidden)} |")
    return "\n".join(rows)


def imports_table() -> str:
    """Each room and the rooms of ours it imports (anywhere: module level, in a function, for types)."""
    rooms = layers()
    graph = rooms.room_graph(rooms.import_graph(ROOT))
    rows = ["| Room | Imports (ours) |", "|---|---|"]
    for room, targets in sorted(graph.items()):
        rows.append(f"| `{room}` | {', '.join(f'`{name}`' for name in sorted(targets)) or 'nothing'} |")
    return "\n".join(rows)


def tables() -> dict[str, str]:
    return {"rooms": rooms_table(), "walls": walls_table(), "imports": imports_table()}


def written(doc: str, name: str) -> str:
    begin, end = MARKERS[name]
    start = doc.index(begin) + len(begin)
    return doc[start:doc.index(end, start)].strip("\n")


def rewrite(doc: str) -> str:
    for name, table in tables().items():
        begin, end = MARKERS[name]
        head, _, rest = doc.partition(begin)
        _, _, tail = rest.partition(end)
        doc = f"{head}{begin}\n{table}\n{end}{tail}"
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the tables in docs/architecture.md")
    args = parser.parse_args(argv)
    if args.write:
        DOC.write_text(rewrite(DOC.read_text()))
    else:
        for table in tables().values():
            print(table, end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

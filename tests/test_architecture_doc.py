"""docs/architecture.md stays true: its sizes, its walls and its module lists match the code."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Lines may drift this far between two runs of docs/rooms.py --write; modules may not.
LINE_SLACK = 0.15


def load_rooms():
    spec = importlib.util.spec_from_file_location("leet_doc_rooms", ROOT / "docs" / "rooms.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOMS = load_rooms()
DOC = ROOMS.DOC.read_text()
HINT = "run `python3 docs/rooms.py --write`"


def test_the_walls_written_are_the_walls_tested():
    assert ROOMS.written(DOC, "walls") == ROOMS.walls_table(), HINT


def test_what_each_room_imports_is_written_as_the_code_has_it():
    assert ROOMS.written(DOC, "imports") == ROOMS.imports_table(), HINT


def test_each_rooms_size_is_what_the_files_hold():
    written = {}
    for row in ROOMS.written(DOC, "rooms").splitlines()[2:]:
        cells = [cell.strip(" `") for cell in row.strip("|").split("|")]
        written[cells[0]] = (int(cells[1]), int(cells[2].replace(",", "")))
    measured = ROOMS.room_sizes()
    assert set(written) - {"all"} == set(measured), HINT
    for room, (modules, lines) in measured.items():
        doc_modules, doc_lines = written[room]
        assert doc_modules == modules, f"{room}: {doc_modules} modules written, {modules} found; {HINT}"
        assert abs(doc_lines - lines) <= LINE_SLACK * lines, f"{room}: {doc_lines} lines written, {lines} found; {HINT}"


def test_every_module_is_named_in_the_map():
    named = set(re.findall(r"`([^`]+)`", DOC))
    words = {part for name in named for part in re.split(r"[\s,()+/]+", name.replace(".py", "")) if part}
    missing = []
    for module, path in ROOMS.layers().module_files(ROOT).items():
        base = module.rpartition(".")[2]
        if path.name == "__init__.py" or path.name.endswith(ROOMS.GENERATED):
            continue
        if base not in words and module not in named:
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, "modules docs/architecture.md does not name: " + ", ".join(sorted(missing))

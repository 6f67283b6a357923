"""The vitals sidebar: CPU model and size, meters, and rate lines.

The owner builds a ``VitalsModel`` (plain data) from the latest sample; this
module only draws it, so it knows nothing about metric keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from widgets.chartframe import Row, fit, trim_row
from widgets.lines import StyledLines
from widgets.text import clean

EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass(frozen=True)
class Meter:
    label: str
    fraction: float | None  # 0..1, None when unknown
    text: str  # the reading, e.g. "42%" or "6.2/31 GiB"


@dataclass(frozen=True)
class VitalsModel:
    title: str = ""
    subtitle: str = ""
    meters: tuple[Meter, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()  # (label, text)
    notes: tuple[str, ...] = ()  # warnings such as a missing driver


def meter_bar(fraction: float, width: int) -> tuple[str, str]:
    """Filled and empty parts of a bar ``width`` cells wide, with eighth-cell precision."""
    fraction = min(1.0, max(0.0, fraction))
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (EIGHTHS[part] if part and full < width else "")
    return filled, "·" * (width - len(filled))


def level_style(fraction: float) -> str:
    """Heat colour for a meter: calm when low, loud when nearly full."""
    return f"h{min(7, max(0, int(fraction * 8)))}"


def meter_row(meter: Meter, width: int, label_width: int) -> Row:
    label = fit(clean(meter.label), label_width).ljust(label_width)
    text = fit(meter.text, max(0, width - label_width - 4))
    bar_width = width - label_width - len(text) - 2
    row: Row = [(label, "heading"), (" ", "empty")]
    if bar_width >= 3 and meter.fraction is not None:
        filled, empty = meter_bar(meter.fraction, bar_width)
        row += [(filled, level_style(meter.fraction)), (empty, "muted")]
    else:
        row.append((" " * max(0, bar_width), "empty"))
    row += [(" ", "empty"), (text.rjust(len(text)), "value")]
    return row


def vitals_rows(model: VitalsModel, width: int, height: int) -> list[Row]:
    rows: list[Row] = []
    if model.title:
        rows.append([(fit(clean(model.title), width), "heading")])
    if model.subtitle:
        rows.append([(fit(clean(model.subtitle), width), "muted")])
    label_width = min(8, max([len(m.label) for m in model.meters] + [len(l) for l, _ in model.lines] + [3]))
    for meter in model.meters:
        rows.append(meter_row(meter, width, label_width))
    for label, text in model.lines:
        rows.append([(fit(clean(label), label_width).ljust(label_width), "heading"), (" ", "empty"), (fit(text, width - label_width - 1), "value")])
    for note in model.notes:
        rows.append([(fit("⚠ " + clean(note), width), "warn")])
    rows = rows[:height]
    return [trim_row(row, width) for row in rows] + [[(" " * width, "empty")] for _ in range(height - len(rows))]



class Vitals(StyledLines):
    """Sidebar meters; call ``set_model`` with each new sample."""

    DEFAULT_CSS = """
    Vitals {
        height: auto;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._model = VitalsModel()

    def set_model(self, model: VitalsModel) -> None:
        if model == self._model:
            return
        grew = self._line_count(model) != self._line_count(self._model)
        self._model = model
        if grew:
            self.refresh(layout=True)
        self.relayout()

    @staticmethod
    def _line_count(model: VitalsModel) -> int:
        return bool(model.title) + bool(model.subtitle) + len(model.meters) + len(model.lines) + len(model.notes)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, self._line_count(self._model))

    def build_rows(self, width: int, height: int) -> list[Row]:
        return vitals_rows(self._model, width, height)

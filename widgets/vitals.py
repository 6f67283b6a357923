"""The vitals sidebar: CPU model and size, meters, rate lines, GPUs and other accelerators.

The owner builds a ``VitalsModel`` (plain data) from the latest sample; this
module only draws it, so it knows nothing about metric keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from leet.common.text import clean
from widgets.chartframe import Row, Run, fit, trim_row
from widgets.glyphs import ASCII_BAR_EMPTY, ASCII_BAR_FULL, to_ascii
from widgets.lines import StyledLines

EIGHTHS = " ▏▎▍▌▋▊▉"
MIN_COMPACT_BAR = 6  # cells a one-line GPU meter keeps before details take the rest


@dataclass(frozen=True)
class Meter:
    label: str
    fraction: float | None  # 0..1, None when unknown
    text: str  # the reading, e.g. "42%" or "6.21/31.3 GiB"


@dataclass(frozen=True)
class GpuSlice:
    """One MIG instance under its GPU: profile and memory."""

    label: str  # e.g. "1g.10gb"
    fraction: float | None  # memory used, 0..1
    text: str  # e.g. "3.20/9.80 GiB"


@dataclass(frozen=True)
class GpuRow:
    """One GPU: a utilisation meter (or a message in its place) and details below it."""

    label: str  # e.g. "GPU0"
    reading: str  # "87%" beside the meter, or the message that replaces it
    fraction: float | None = None  # utilisation, 0..1; None with a meter: unknown
    meter: bool = True  # False: ``reading`` is a message such as "lost" or "MIG · …"
    brief: str = ""  # the message when room is short or the section compact, e.g. "MIG"
    reading_style: str = "value"
    details: tuple[tuple[str, str], ...] = ()  # (text, style), most important first
    slices: tuple[GpuSlice, ...] = ()


@dataclass(frozen=True)
class GpuSection:
    heading: str = ""  # e.g. "8 × NVIDIA H100 80GB HBM3"
    rows: tuple[GpuRow, ...] = ()
    note: str = ""  # why there are no GPUs, e.g. "no NVIDIA driver"
    compact: bool = False  # one line per GPU: details beside the meter, as room allows


@dataclass(frozen=True)
class AcceleratorGroup:
    """Accelerators of one vendor and model: a heading, then one line each.

    Collapsed (when the sidebar is short of room), one meter for the whole
    group and a strip of one cell per device take the place of the lines.
    """

    heading: str  # e.g. "4 × Google TPU v6e"
    rows: tuple[GpuRow, ...] = ()
    note: str = ""  # why none of them has figures, said once for all
    tag: str = ""  # the short name rows are labelled with, e.g. "TPU"
    summary: GpuRow | None = None  # the group's mean, when collapsed
    strip: tuple[tuple[int, float | None], ...] = ()  # (device index, utilisation 0..1), when collapsed
    collapsed: bool = False

    @property
    def can_collapse(self) -> bool:
        return self.summary is not None and not self.collapsed


@dataclass(frozen=True)
class VitalsModel:
    title: str = ""
    subtitle: str = ""
    meters: tuple[Meter, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()  # (label, text)
    notes: tuple[str, ...] = ()  # warnings such as a failing collector
    gpu: GpuSection = GpuSection()
    accelerators: tuple[AcceleratorGroup, ...] = ()


def meter_bar(fraction: float, width: int, ascii: bool = False) -> tuple[str, str]:
    """Filled and empty parts of a bar ``width`` cells wide, with eighth-cell precision (whole cells in ``ascii``)."""
    fraction = min(1.0, max(0.0, fraction))
    if ascii:
        full = round(fraction * width)
        return ASCII_BAR_FULL * full, ASCII_BAR_EMPTY * (width - full)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (EIGHTHS[part] if part and full < width else "")
    return filled, "·" * (width - len(filled))


def level_style(fraction: float) -> str:
    """Heat colour for a meter: calm when low, loud when nearly full."""
    return f"h{min(7, max(0, int(fraction * 8)))}"


def meter_row(meter: Meter, width: int, label_width: int, ascii: bool = False) -> Row:
    label = fit(clean(meter.label), label_width).ljust(label_width)
    text = fit(meter.text, max(0, width - label_width - 4))
    bar_width = width - label_width - len(text) - 2
    row: Row = [(label, "heading"), (" ", "empty")]
    if bar_width >= 3 and meter.fraction is not None:
        filled, empty = meter_bar(meter.fraction, bar_width, ascii)
        row += [(filled, level_style(meter.fraction)), (empty, "muted")]
    else:
        row.append((" " * max(0, bar_width), "empty"))
    row += [(" ", "empty"), (text.rjust(len(text)), "value")]
    return row


def _label(text: str, label_width: int) -> Run:
    return (fit(clean(text), label_width).ljust(label_width), "heading")


def _joined(parts: tuple[tuple[str, str], ...], room: int) -> Row:
    """As many ``parts`` as fit in ``room`` cells, in order, one space apart."""
    row: Row = []
    used = 0
    for text, style in parts:
        text = clean(text)
        gap = 1 if row else 0
        if used + gap + len(text) > room:
            break
        if gap:
            row.append((" ", "empty"))
        row.append((text, style))
        used += gap + len(text)
    return row


def _row_width(row: Row) -> int:
    return sum(len(text) for text, _ in row)


def _bar(fraction: float | None, width: int, ascii: bool = False) -> Row:
    if width < 3 or fraction is None:
        return [(" " * max(0, width), "empty")]
    filled, empty = meter_bar(fraction, width, ascii)
    return [(filled, level_style(fraction)), (empty, "muted")]


def gpu_main_row(gpu: GpuRow, width: int, label_width: int, compact: bool, ascii: bool = False) -> Row:
    """The GPU's first line: its label, then the meter and reading, or a message."""
    room = width - label_width - 1
    row: Row = [_label(gpu.label, label_width), (" ", "empty")]
    if not gpu.meter:
        # Compact rows give the room to details when there are any.
        short = len(gpu.reading) > room or (compact and bool(gpu.details))
        message = gpu.brief if short and gpu.brief else gpu.reading
        message = fit(clean(message), room)
        row.append((message, gpu.reading_style))
        extra = _joined(gpu.details, room - len(message) - 1) if compact else []
        return (row + [(" ", "empty")] + extra) if extra else row
    reading = fit(clean(gpu.reading), max(0, room - 4))
    text: Row = [(reading, gpu.reading_style)]
    if compact and gpu.details:
        # Details take what the bar can spare and keep it readable.
        extra = _joined(gpu.details, room - len(reading) - 2 - MIN_COMPACT_BAR)
        if extra:
            text += [(" ", "empty")] + extra
    bar_width = room - 1 - _row_width(text)
    return row + _bar(gpu.fraction, bar_width, ascii) + [(" ", "empty")] + text


def gpu_detail_row(gpu: GpuRow, width: int, label_width: int) -> Row:
    """Memory, temperature and power under the meter, dropping from the end when narrow."""
    indent = label_width + 1
    parts = _joined(gpu.details, width - indent)
    if not parts and gpu.details:
        text, style = gpu.details[0]
        parts = [(fit(clean(text), width - indent), style)]
    return [(" " * indent, "empty")] + parts


def gpu_slice_row(piece: GpuSlice, width: int, indent: int, label_width: int, ascii: bool = False) -> Row:
    text = fit(clean(piece.text), max(0, width - indent - label_width - 2))
    bar_width = width - indent - label_width - 2 - len(text)
    label = (fit(clean(piece.label), label_width).ljust(label_width), "label")
    return [(" " * indent, "empty"), label, (" ", "empty")] + _bar(piece.fraction, bar_width, ascii) + [(" ", "empty"), (text, "value")]


def gpu_rows(section: GpuSection, width: int, label_width: int, ascii: bool = False) -> list[Row]:
    rows: list[Row] = []
    if section.heading:
        rows.append([(fit(clean(section.heading), width), "heading")])
    for gpu in section.rows:
        rows.append(gpu_main_row(gpu, width, label_width, section.compact, ascii))
        if gpu.details and not section.compact:
            rows.append(gpu_detail_row(gpu, width, label_width))
        slice_width = max([len(piece.label) for piece in gpu.slices] + [0])
        for piece in gpu.slices:
            rows.append(gpu_slice_row(piece, width, label_width + 1, slice_width, ascii))
    if section.note and not section.rows:
        rows.append([_label("GPU", label_width), (" ", "empty"), (fit(clean(section.note), width - label_width - 1), "muted")])
    return rows


def gpu_line_count(section: GpuSection) -> int:
    count = bool(section.heading) + (bool(section.note) and not section.rows)
    for gpu in section.rows:
        count += 1 + (bool(gpu.details) and not section.compact) + len(gpu.slices)
    return count


# Devices per line of a collapsed group's strip: 32 NeuronCores in two lines, in the narrowest sidebar.
STRIP_CELLS = 16
STRIP_LEVELS = "▁▂▃▄▅▆▇█"
ASCII_STRIP_LEVELS = "_.-=+*#@"


def _strip_lines(group: AcceleratorGroup) -> list[tuple[tuple[int, float | None], ...]]:
    cells = group.strip
    return [cells[start:start + STRIP_CELLS] for start in range(0, len(cells), STRIP_CELLS)]


def strip_row(tag: str, cells: tuple[tuple[int, float | None], ...], width: int, label_width: int, ascii: bool = False) -> Row:
    """One cell per device, as tall and as hot as it is busy; labelled with the first device's index."""
    levels = ASCII_STRIP_LEVELS if ascii else STRIP_LEVELS
    row: Row = [_label(f"{tag}{cells[0][0]}", label_width), (" ", "empty")]
    for _, fraction in cells[: max(0, width - label_width - 1)]:
        if fraction is None:
            row.append(("·", "muted"))
        else:
            level = min(len(levels) - 1, int(max(0.0, min(1.0, fraction)) * len(levels)))
            row.append((levels[level], level_style(fraction)))
    return row


def accelerator_rows(group: AcceleratorGroup, width: int, label_width: int, ascii: bool = False) -> list[Row]:
    rows: list[Row] = [[(fit(clean(group.heading), width), "heading")]]
    if group.collapsed and group.summary is not None:
        rows.append(gpu_main_row(group.summary, width, label_width, True, ascii))
        rows += [strip_row(group.tag, cells, width, label_width, ascii) for cells in _strip_lines(group)]
        return rows
    rows += [gpu_main_row(row, width, label_width, True, ascii) for row in group.rows]
    if group.note and not group.rows:
        rows.append([_label(group.tag, label_width), (" ", "empty"), (fit(clean(group.note), width - label_width - 1), "muted")])
    return rows


def accelerator_line_count(group: AcceleratorGroup) -> int:
    if group.collapsed and group.summary is not None:
        return 2 + len(_strip_lines(group))
    return 1 + len(group.rows) + (bool(group.note) and not group.rows)


def vitals_line_count(model: VitalsModel) -> int:
    """How many lines ``model`` draws at any width."""
    accelerators = sum(accelerator_line_count(group) for group in model.accelerators)
    return (
        bool(model.title) + bool(model.subtitle) + len(model.meters) + len(model.lines)
        + gpu_line_count(model.gpu) + accelerators + len(model.notes)
    )


def _accelerator_labels(group: AcceleratorGroup) -> list[str]:
    if group.collapsed and group.summary is not None:
        return [group.summary.label] + [f"{group.tag}{cells[0][0]}" for cells in _strip_lines(group)]
    return [row.label for row in group.rows] + ([group.tag] if group.note and not group.rows else [])


def _label_width(model: VitalsModel) -> int:
    labels = [m.label for m in model.meters] + [label for label, _ in model.lines] + [gpu.label for gpu in model.gpu.rows]
    labels += [label for group in model.accelerators for label in _accelerator_labels(group)]
    return min(8, max([len(label) for label in labels] + [3]))


def vitals_rows(model: VitalsModel, width: int, height: int, ascii: bool = False) -> list[Row]:
    """The sidebar's rows; only ASCII with ``ascii``."""
    rows: list[Row] = []
    if model.title:
        rows.append([(fit(clean(model.title), width), "heading")])
    if model.subtitle:
        rows.append([(fit(clean(model.subtitle), width), "muted")])
    label_width = _label_width(model)
    for meter in model.meters:
        rows.append(meter_row(meter, width, label_width, ascii))
    for label, text in model.lines:
        rows.append([(fit(clean(label), label_width).ljust(label_width), "heading"), (" ", "empty"), (fit(text, width - label_width - 1), "value")])
    rows += gpu_rows(model.gpu, width, label_width, ascii)
    for group in model.accelerators:
        rows += accelerator_rows(group, width, label_width, ascii)
    for note in model.notes:
        rows.append([(fit("⚠ " + clean(note), width), "warn")])
    rows = rows[:height]
    if ascii:
        rows = [[(to_ascii(text), style) for text, style in row] for row in rows]
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

    @property
    def model(self) -> VitalsModel:
        return self._model

    @staticmethod
    def _line_count(model: VitalsModel) -> int:
        return vitals_line_count(model)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, vitals_line_count(self._model))

    def build_rows(self, width: int, height: int) -> list[Row]:
        return vitals_rows(self._model, width, height, ascii=self.ascii)

"""The media values of a run file's history rows: ``{key: object}`` by step, read on as the file grows.

The SDK writes a media object as one item per field (``["img", "_type"]``,
``["img", "path"]`` …) or, rarely, as one JSON object; both come back here as
one dict per key. Every record but history is skipped unparsed, and a
history record without ``_type`` in its bytes is not parsed at all.
"""

from __future__ import annotations

import math
import os
from typing import Any

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import json_value, parse
from leet.runfile.decode.bulk import kind_tags
from leet.runfile.reader import RecordReader

OTHER_KINDS = tuple(kind.name for kind in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields if kind.name != "history")
MARK = b"_type"
# The fields of a media object anything shows; the rest (sha256, size, format …) is never decoded.
FIELDS = frozenset({"_type", "path", "caption", "filenames", "captions", "values", "bins", "packedBins", "nrows", "ncols"})


MediaRow = tuple[int, dict[str, dict[str, Any]]]


def media_of(history: Any) -> MediaRow | None:
    """(step, {key: media object}) of one parsed ``History`` message; None when it holds no media."""
    fields: dict[str, dict[str, Any]] = {}
    step: int | None = None
    for item in history.item:
        nested = list(item.nested_key) or [item.key]
        text = item.value_json
        if len(nested) == 1 and nested[0] == "_step":
            number = json_value(text)
            if isinstance(number, (int, float)) and math.isfinite(number):
                step = int(number)
        elif len(nested) > 1:
            if nested[-1] in FIELDS:
                fields.setdefault(".".join(nested[:-1]), {})[nested[-1]] = json_value(text)
        elif text[:1] == "{" and '"_type"' in text:
            value = json_value(text)
            if isinstance(value, dict):
                fields[nested[0]] = value
    media = {key: value for key, value in fields.items() if isinstance(value.get("_type"), str)}
    if not media:
        return None
    return (step if step is not None else history.step.num), media


class MediaRows:
    """Reads on through a run file, returning the media its new history rows logged."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._records = RecordReader(path, live=True, skip_tags=kind_tags(OTHER_KINDS))
        self.at_eof = False

    def read(self, max_records: int = 20_000) -> list[MediaRow]:
        """Media rows of up to ``max_records`` new records; ``at_eof`` says whether the file was read to its end."""
        chunk = self._records.poll(max_records)
        self.at_eof = chunk.at_eof
        rows: list[MediaRow] = []
        for _, payload in chunk.records:
            if MARK not in payload:
                continue
            record = parse(payload)  # None for a damaged payload under a good CRC: its media are lost, nothing else
            if record is None or record.WhichOneof("record_type") != "history":
                continue
            row = media_of(record.history)
            if row is not None:
                rows.append(row)
        return rows

    @property
    def offset(self) -> int:
        return self._records.offset

    def close(self) -> None:
        self._records.close()

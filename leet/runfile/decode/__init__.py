"""Records of a W&B run file decoded into the plain events of ``leet.runfile.events``.

    for event in iter_events("run-abc.wandb"): ...          # a whole file
    reader = EventReader("run-abc.wandb")                    # tailing a live file
    batch = reader.poll()                                    # events new since last time

The package is split by idea: ``json_values`` decodes the JSON values records
carry, ``convert`` turns one parsed record into one event, ``bulk`` reads the
records that make up most of a long run (history and summary) straight from
their bytes, ``summaries`` decodes and merges summary records as cheaply as
it can, ``event_stream`` turns batches of framed records into events, keeping
count of what was lost, and ``event_reader`` tails a file that may still be
growing. The rest of the application imports what it needs from here.

Damage never raises: a payload that does not parse becomes a ``DataLoss``
event, and bytes the framing layer skipped become one too, with the number
of records lost taken from the gap in ``Record.num`` when a record follows.
"""

from __future__ import annotations

from leet.runfile.decode.convert import INTERNAL_CONFIG_KEY, Decoded, decode, item_name, message_fields, parse, to_event
from leet.runfile.decode.event_reader import EventBatch, EventReader
from leet.runfile.decode.event_stream import EventStream, iter_decoded, iter_events
from leet.runfile.decode.json_values import DeepJSON, RawJSON, flatten, json_value
from leet.runfile.decode.summaries import SummaryDecoder

__all__ = [
    "INTERNAL_CONFIG_KEY",
    "Decoded",
    "DeepJSON",
    "EventBatch",
    "EventReader",
    "EventStream",
    "RawJSON",
    "SummaryDecoder",
    "decode",
    "flatten",
    "item_name",
    "iter_decoded",
    "iter_events",
    "json_value",
    "message_fields",
    "parse",
    "to_event",
]

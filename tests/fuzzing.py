"""Mutations of real SDK run files, and everything a person could look at of the result.

Three kinds of damage: to the framing (flipped bits, zeroed or cut stretches,
garbage, bad chunk lengths), to payloads under valid checksums (protobuf
garbage), and to values under valid checksums (what a buggy or hostile writer
could log: deep JSON, extreme numbers and times, escapes, huge text).
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any, Callable

from framer import Framer
from hostile import deep_dict, deep_list

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.reader import read_records

VINTAGE = Path(__file__).parent / "fixtures" / "vintage"
SDK_FILES = sorted(path for path in VINTAGE.glob("*/*/wandb/offline-run-*/run-*.wandb") if path.stat().st_size > 7)

HOSTILE_JSON = [
    deep_list(1000),
    deep_dict(5000),
    deep_list(40),
    "1e308",
    "-1.7e308",
    "5e-324",
    "NaN",
    "Infinity",
    "-Infinity",
    "1" + "0" * 400,
    "-" + "9" * 5000,
    '"' + "x" * 100_000 + '"',
    '"\\u001b]0;title\\u0007\\u001b[2J"',
    '"\\u202eevil\\u202c"',
    "not json at all {",
    "",
    '{"_type": "image-file", "width": 1e308, "height": -1}',
    '{"_type": "histogram", "bins": [1e308, "NaN"], "values": [-1]}',
    "[" + ",".join(["1e308"] * 1000) + "]",
]
HOSTILE_TIMES = [10**12, -(10**12), 2**62, -(2**62), 2**63 - 1, 0, -1]
HOSTILE_KEYS = ["", "\x1b]52;c;ZWNobyBoaQ==\x07", "a" * 10_000, "/l:", "x/l:\x1b[2J", "..", "\u202e", "_step", "_runtime", "system.cpu"]


def framing_mutant(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if len(out) <= 8:
            break
        at = rng.randrange(7, len(out))
        pick = rng.randrange(6)
        if pick == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif pick == 1:
            out[at : at + rng.randint(1, 300)] = bytes(min(300, len(out) - at))
        elif pick == 2:
            del out[at : at + rng.randint(1, 700)]
        elif pick == 3:
            out[at:at] = rng.randbytes(rng.randint(1, 2000))
        elif pick == 4:
            struct.pack_into("<H", out, min(at, len(out) - 2), rng.choice([0, 1, 6, 7, 0x7FFF, 0xFFFF]))
        else:
            del out[at:]
    return bytes(out)


def _reframed(payloads: list[bytes]) -> bytes:
    framer = Framer()
    for payload in payloads:
        framer.add(payload)
    return bytes(framer.data)


def payload_mutant(data: bytes, rng: random.Random, path: Path) -> bytes:
    payloads = [payload for _, payload in read_records(path).records]
    for _ in range(rng.randint(1, 4)):
        if not payloads:
            break
        index = rng.randrange(len(payloads))
        payload = bytearray(payloads[index])
        for _ in range(rng.randint(1, 8)):
            if payload:
                payload[rng.randrange(len(payload))] = rng.randrange(256)
        payloads[index] = bytes(payload)
    return _reframed(payloads)


def _hostile_items(items: Any, rng: random.Random) -> None:
    for item in items:
        if rng.random() < 0.5:
            item.value_json = rng.choice(HOSTILE_JSON)
        if rng.random() < 0.15:
            if getattr(item, "nested_key", None):
                del item.nested_key[:]
            item.key = rng.choice(HOSTILE_KEYS)


def _hostile_time(stamp: Any, rng: random.Random) -> None:
    stamp.seconds = rng.choice(HOSTILE_TIMES)
    stamp.nanos = rng.choice([0, 999_999_999])


def _hostile_record(record: Any, rng: random.Random) -> None:
    kind = record.WhichOneof("record_type")
    body = getattr(record, kind) if kind else None
    if kind == "history":
        _hostile_items(body.item, rng)
        if rng.random() < 0.3:
            body.step.num = rng.choice([2**63 - 1, -(2**63), -1, 2**53 + 1])
    elif kind in ("summary", "config"):
        _hostile_items(body.update, rng)
    elif kind == "stats":
        _hostile_items(body.item, rng)
        if rng.random() < 0.5:
            _hostile_time(body.timestamp, rng)
    elif kind == "run":
        _hostile_items(body.config.update, rng)
        if rng.random() < 0.5:
            _hostile_time(body.start_time, rng)
        if rng.random() < 0.3:
            body.display_name = rng.choice(HOSTILE_KEYS)
    elif kind in ("output_raw", "output"):
        body.line = rng.choice(["\x1b]0;pwned\x07\x1b[2J", "x" * 200_000, "\r" * 1000, "\u202e" * 10])
    elif kind == "exit":
        body.exit_code = rng.choice([-(2**31), 2**31 - 1, 255])
        body.runtime = rng.choice([-(2**31), 2**31 - 1])


def value_mutant(data: bytes, rng: random.Random, path: Path) -> bytes:
    payloads = []
    for _, payload in read_records(path).records:
        record = pb.Record()
        try:
            record.ParseFromString(payload)
        except Exception:  # noqa: BLE001 - a record this build cannot parse stays as it was
            payloads.append(payload)
            continue
        if rng.random() < 0.5:
            _hostile_record(record, rng)
        payloads.append(record.SerializeToString())
    return _reframed(payloads)


MUTATORS: dict[str, Callable[[bytes, random.Random, Path], bytes]] = {
    "framing": lambda data, rng, path: framing_mutant(data, rng),
    "payload": payload_mutant,
    "value": value_mutant,
}


def mutant(seed: int) -> tuple[str, Path, bytes]:
    """(mutation kind, the SDK file it started from, the mutated bytes) for ``seed``."""
    rng = random.Random(seed)
    source = SDK_FILES[rng.randrange(len(SDK_FILES))]
    kind = rng.choice(sorted(MUTATORS))
    return kind, source, MUTATORS[kind](source.read_bytes(), rng, source)

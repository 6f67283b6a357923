"""The checked-in protobuf module: in step with its schema, with the writer's field numbers, importable widely."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from leet.runfile import regenerate
from leet.runfile import wandb_records_pb2 as pb

PROTO = Path(regenerate.PROTO)
MODULE = Path(regenerate.MODULE)

_FIELD = re.compile(r"^\s*(?:repeated\s+|optional\s+)?(?:map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;", re.MULTILINE)
_ENUM_VALUE = re.compile(r"^\s*(\w+)\s*=\s*(\d+)\s*;", re.MULTILINE)


def schema_numbers() -> dict[str, dict[str, int]]:
    """``{"Message.Nested": {field or enum value: number}}`` read from the .proto text."""
    text = re.sub(r"//[^\n]*", "", PROTO.read_text())
    scopes: list[tuple[str, str]] = []
    found: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        opened = re.match(r"\s*(message|enum|oneof)\s+(\w+)\s*\{", line)
        if opened:
            scopes.append((opened.group(1), opened.group(2)))
            continue
        if line.strip() == "}":
            scopes.pop()
            continue
        owners = [name for kind, name in scopes if kind != "oneof"]
        if not owners:
            continue
        pattern = _ENUM_VALUE if scopes[-1][0] == "enum" else _FIELD
        match = pattern.match(line)
        if match:
            found.setdefault(".".join(owners), {})[match.group(1)] = int(match.group(2))
    return found


def descriptor_of(path: str):
    top, *nested = path.split(".")
    descriptor = pb.DESCRIPTOR.message_types_by_name.get(top) or pb.DESCRIPTOR.enum_types_by_name[top]
    for name in nested:
        descriptor = descriptor.nested_types_by_name.get(name) or descriptor.enum_types_by_name[name]
    return descriptor


def test_generated_module_matches_the_schema_text():
    numbers = schema_numbers()
    assert len(numbers) > 40
    for path, declared in numbers.items():
        descriptor = descriptor_of(path)
        if hasattr(descriptor, "fields_by_name"):
            actual = {field.name: field.number for field in descriptor.fields}
        else:
            actual = {value.name: value.number for value in descriptor.values}
        assert actual == declared, path


def test_field_numbers_are_the_writers():
    record = pb.Record.DESCRIPTOR.fields_by_name
    expected = {"num": 1, "history": 2, "summary": 3, "output": 4, "config": 5, "stats": 7, "output_raw": 13, "run": 17, "exit": 18,
                "header": 21, "environment": 26, "info": 200}
    assert {name: record[name].number for name in expected} == expected
    assert pb.HistoryItem.DESCRIPTOR.fields_by_name["value_json"].number == 16
    assert pb.EnvironmentRecord.DESCRIPTOR.fields_by_name["writer_id"].number == 199
    assert pb.StatsItem.DESCRIPTOR.fields_by_name["value_json"].number == 16


def test_unknown_fields_are_ignored():
    known = pb.Record(num=7, exit=pb.RunExitRecord(exit_code=2)).SerializeToString()
    with_extras = known + b"\x9a\x01\x04abcd" + b"\xe0\x12\x05"  # uuid (19), and field 300 that no schema has
    record = pb.Record.FromString(with_extras)
    assert record.num == 7 and record.exit.exit_code == 2


def test_module_is_registered_under_a_name_that_cannot_clash():
    assert pb.DESCRIPTOR.name == "leet/runfile/wandb_records.proto"
    assert pb.DESCRIPTOR.package == "wbrecords"


def test_module_carries_no_runtime_version_check():
    # Generated without ValidateProtobufRuntimeVersion, the module imports on protobuf 4.21 through 7.x.
    source = MODULE.read_text()
    assert "ValidateProtobufRuntimeVersion" not in source
    assert regenerate.generated_by(source) == "5.26.1"


def test_regenerate_without_grpc_tools_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "grpc_tools", None)
    with pytest.raises(SystemExit) as stopped:
        regenerate.main(["--check"])
    assert "grpcio-tools is not installed" in str(stopped.value)
    assert "pip install" in str(stopped.value)

"""Regenerate ``tpu_metric_service_pb2.py`` from ``tpu_metric_service.proto``.

    python -m collectors.tpu_runtime.regenerate           # rewrite the module
    python -m collectors.tpu_runtime.regenerate --check   # exit 1 if the module is out of date

Needs grpcio-tools at build time only (leet never imports it). Use
grpcio-tools 1.64.x: its protoc (26.1) writes code without a runtime version
check, so the module imports on protobuf 4.21 through 7.x. Only messages are
generated; the service client is written by hand in ``__init__.py``, so
neither grpc_tools nor generated gRPC code is needed at run time.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
PROTO = HERE / "tpu_metric_service.proto"
MODULE = HERE / "tpu_metric_service_pb2.py"
RECOMMENDED_TOOLS = "grpcio-tools>=1.64,<1.65"
_VERSION_LINE = re.compile(r"^# Protobuf Python Version: (\S+)$", re.MULTILINE)


def _compile(out_dir: Path) -> Path:
    try:
        from grpc_tools import protoc
    except ImportError:
        raise SystemExit(
            "grpcio-tools is not installed, so protoc is not available.\n"
            f"Install it where you build (not a runtime dependency): pip install '{RECOMMENDED_TOOLS}'"
        ) from None
    relative = PROTO.relative_to(REPO_ROOT)
    # The repository-relative name (collectors/tpu_runtime/...) is what the
    # descriptor pool records; no other protobuf module can own that name.
    status = protoc.main(["protoc", f"-I{REPO_ROOT}", f"--python_out={out_dir}", str(relative)])
    if status != 0:
        raise SystemExit(f"protoc failed on {PROTO} (exit {status})")
    return out_dir / relative.with_name(MODULE.name)


def generated_by(source: str) -> str | None:
    """The protobuf version a generated module says it was made for."""
    match = _VERSION_LINE.search(source)
    return match.group(1) if match else None


def _warn_about_runtime_floor(source: str) -> None:
    if "ValidateProtobufRuntimeVersion" in source:
        print(
            f"warning: this protoc ({generated_by(source)}) writes a runtime version check: the module will refuse "
            f"older protobuf runtimes. For the widest range regenerate with {RECOMMENDED_TOOLS}.",
            file=sys.stderr,
        )


def _check(fresh: str) -> int:
    current = MODULE.read_text(encoding="utf-8") if MODULE.exists() else ""
    if current == fresh:
        print(f"{MODULE.name} is up to date")
        return 0
    if generated_by(current) != generated_by(fresh):
        print(f"{MODULE.name} was made for protobuf {generated_by(current)}, this protoc makes {generated_by(fresh)}", file=sys.stderr)
    print(f"{MODULE.name} differs from what {PROTO.name} compiles to; run: python -m collectors.tpu_runtime.regenerate", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m collectors.tpu_runtime.regenerate", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the checked-in module; exit 1 if it differs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = _compile(Path(tmp)).read_text(encoding="utf-8")
    _warn_about_runtime_floor(fresh)
    if args.check:
        return _check(fresh)
    MODULE.write_text(fresh, encoding="utf-8")
    print(f"wrote {MODULE} (protobuf gencode {generated_by(fresh)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

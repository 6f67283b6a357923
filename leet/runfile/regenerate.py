"""Regenerate ``wandb_records_pb2.py`` from ``wandb_records.proto``.

    python -m leet.runfile.regenerate           # rewrite the module
    python -m leet.runfile.regenerate --check   # exit 1 if the module is out of date

Needs grpcio-tools (a build-time tool only; leet never imports it). Use
grpcio-tools 1.64.x: its protoc (26.1) writes code without a runtime version
check, which imports on protobuf 4.21 through 7.x. Code from later protocs
refuses any protobuf runtime older than the protoc itself.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
PROTO = HERE / "wandb_records.proto"
MODULE = HERE / "wandb_records_pb2.py"
RECOMMENDED_TOOLS = "grpcio-tools>=1.64,<1.65"
_VERSION_LINE = re.compile(r"^# Protobuf Python Version: (\S+)$", re.MULTILINE)


def _protoc(out_dir: Path) -> Path:
    try:
        from grpc_tools import protoc
    except ImportError:
        raise SystemExit(
            "grpcio-tools is not installed, so protoc is not available.\n"
            f"Install it where you build (not a runtime dependency): pip install '{RECOMMENDED_TOOLS}'"
        ) from None
    import importlib.resources

    includes = str(importlib.resources.files("grpc_tools") / "_proto")
    relative = PROTO.relative_to(REPO_ROOT)
    # Compiling by repository-relative path registers the file as leet/runfile/wandb_records.proto,
    # a name no other protobuf module in the process (e.g. wandb's own) can clash with.
    status = protoc.main(["protoc", f"-I{REPO_ROOT}", f"-I{includes}", f"--python_out={out_dir}", str(relative)])
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leet.runfile.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the checked-in module; exit 1 if it differs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = _protoc(Path(tmp)).read_text(encoding="utf-8")
    _warn_about_runtime_floor(fresh)
    if args.check:
        current = MODULE.read_text(encoding="utf-8") if MODULE.exists() else ""
        if current != fresh:
            if generated_by(current) != generated_by(fresh):
                print(f"{MODULE.name} was made for protobuf {generated_by(current)}, this protoc makes {generated_by(fresh)}", file=sys.stderr)
            print(f"{MODULE.name} differs from what {PROTO.name} compiles to; run: python -m leet.runfile.regenerate", file=sys.stderr)
            return 1
        print(f"{MODULE.name} is up to date")
        return 0
    MODULE.write_text(fresh, encoding="utf-8")
    print(f"wrote {MODULE} (protobuf gencode {generated_by(fresh)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

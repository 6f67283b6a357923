"""Small run files made the same way each time, for the shots of screens that read a run's own file.

The records shot lists every common kind of record; the media shot's history
logs images drawn by Pillow into the run's ``files/media/images`` folder; the
peek shot reads the demo workspace's runs through the peek tests' stand-in.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw
from textual.css.query import NoMatches

TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from framer import RunWriter  # noqa: E402  (tests/ is put on the path just above)
from test_workspace_peek import DemoPeekRun, console, system_titles  # noqa: E402

from leet.ui.screens.run_peek import RunPeek  # noqa: E402

IMAGE_SIDE = 48
STEPS = 6


def records_run(root: Path) -> Path:
    """Config, history, summary, console, stats and exit records of a six-step run."""
    writer = RunWriter("screenshot", name="screenshot-run", project="cifar10-resnet")
    writer.config(lr=0.001, model={"depth": 2})
    for step in range(STEPS):
        writer.history(step, {"loss": round(1 / (step + 1), 4), "acc": step / 10})
        writer.summary(loss=round(1 / (step + 1), 4))
        if step == 2:
            writer.console("epoch 1 done")
            writer.stats(1_700_000_010.0, {"cpu": 12.5, "memory_percent": 40.0})
    writer.exit(0, runtime=42)
    return writer.write(root / "run-screenshot.wandb")


def media_run(root: Path) -> Path:
    """A run logging, each step, one ``sample`` image and a ``batch`` of three, all drawn shapes."""
    images = root / "files" / "media" / "images"
    images.mkdir(parents=True)
    writer = RunWriter("screenshot", name="screenshot-media", project="cifar10-resnet")
    for step in range(STEPS):
        sample = image_ref(images, f"sample_{step}.png", drawing(step, 0), f"sample at {step}")
        batch = [image_ref(images, f"batch_{step}_{n}.png", drawing(step, n + 1), f"digit {n}") for n in range(3)]
        writer.history(step, {"loss": round(1 / (step + 1), 4), "sample": sample, "batch": batch_ref(batch)})
    writer.exit(0, runtime=42)
    return writer.write(root / "run-screenshot.wandb")


def drawing(step: int, variant: int) -> Image.Image:
    """Concentric rings and a disc whose colours and place move with the step."""
    image = Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), (20 + 30 * variant, 24, 60 + 25 * step))
    pen = ImageDraw.Draw(image)
    for ring in range(4):
        inset = 4 + ring * 5
        pen.ellipse((inset, inset, IMAGE_SIDE - inset, IMAGE_SIDE - inset), outline=(255 - 40 * ring, 120 + 20 * variant, 40 * step % 255), width=2)
    offset = 6 + 5 * step
    pen.ellipse((offset, 30 - 4 * variant, offset + 12, 42 - 4 * variant), fill=(250, 210 - 30 * variant, 60))
    return image


def image_ref(folder: Path, name: str, image: Image.Image, caption: str) -> dict:
    image.save(folder / name)
    return {"_type": "image-file", "path": f"media/images/{name}", "width": IMAGE_SIDE, "height": IMAGE_SIDE, "format": "png", "caption": caption}


def batch_ref(images: list[dict]) -> dict:
    return {
        "_type": "images/separated",
        "width": IMAGE_SIDE,
        "height": IMAGE_SIDE,
        "format": "png",
        "count": len(images),
        "filenames": [image["path"] for image in images],
        "captions": [image["caption"] for image in images],
    }


def peek_demo_runs(workspace) -> None:
    """The peek panel reads the demo workspace's made-up runs, with fixed system stats and console, instead of run files."""
    RunPeek.opener = staticmethod(lambda key, files, store: DemoPeekRun(workspace.source.source(key), store))


def peek_drawn(app) -> bool:
    """The panel's console and its three system charts are on screen."""
    try:
        return "saved checkpoint" in console(app) and len(system_titles(app)) == 3
    except NoMatches:  # the panel not mounted yet
        return False


STAGED_RUNS: dict[str, Callable[[Path], Path]] = {"records": records_run, "media": media_run}

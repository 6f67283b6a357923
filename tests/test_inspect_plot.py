"""``leet inspect RUN --plot KEY[,KEY…]``: a run's metrics as a text plot, on runs written by the real SDK."""

from __future__ import annotations

import argparse
import io
import math
import os
import re
import subprocess
import sys

import pytest

from leet.cli import main
from leet.commands import inspect_run
from leet.commands.plot import MAX_POINTS, envelope, plot_run

ESCAPE = "\x1b"
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # anything a terminal could act on, newline aside


def plot(capsys, run_dir, *options: str) -> tuple[int, str, str]:
    """``leet inspect RUN_DIR OPTIONS…`` in this process: (exit status, stdout, stderr)."""
    status = main(["inspect", str(run_dir), *options])
    out, err = capsys.readouterr()
    return status, out, err


def in_legend(text: str, name: str) -> bool:
    """Whether ``name`` is a legend entry: two marker characters and the name, inside the plot's frame."""
    return re.search(rf"[┤│] \S\S {re.escape(name)}(?:\s|$)", text, re.MULTILINE) is not None


def step_ticks(text: str) -> list[float]:
    """The numbers under the first plot's x axis."""
    lines = text.splitlines()
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    return [float(number) for number in lines[bottom + 1].split()]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def inspect_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    inspect_run.add_arguments(parser)
    return parser.parse_args(list(argv))


# -- history ---------------------------------------------------------------------------


def test_history_keys_are_in_the_legend_and_the_step_axis_reaches_the_last_step(basic_run, capsys):
    status, out, err = plot(capsys, basic_run.run_dir, "--plot", "loss,acc", "--width", "100", "--height", "25")
    assert status == 0, err
    assert "basic-run · metrics" in out
    assert in_legend(out, "loss") and in_legend(out, "acc") and not in_legend(out, "lr")
    ticks = step_ticks(out)
    last_step = basic_run.steps - 1
    assert ticks[0] == 0 and last_step <= ticks[-1] <= 1.05 * last_step, ticks  # the axis ends at or just past the last step
    assert "step" in out.splitlines()[-1]


def test_nan_and_infinity_are_left_out_not_drawn(basic_run, capsys):
    # loss holds a NaN and an inf: neither may stretch the y axis or show as a label
    status, out, _ = plot(capsys, basic_run.run_dir, "--plot", "loss", "--width", "80", "--height", "20")
    assert status == 0
    assert "inf" not in out.lower() and "nan" not in out.lower()


def test_the_figure_has_the_size_asked_for(basic_run, capsys):
    status, out, _ = plot(capsys, basic_run.run_dir, "--plot", "loss,memory_percent", "--width", "61", "--height", "18")
    assert status == 0
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 18 and max(map(len, lines)) == 61


def test_a_glob_selects_several_keys_in_the_order_asked(basic_run, capsys):
    status, out, _ = plot(capsys, basic_run.run_dir, "--plot", "l*", "--plot", "acc", "--width", "100", "--height", "25")
    assert status == 0
    assert in_legend(out, "loss") and in_legend(out, "lr") and in_legend(out, "acc")
    assert not in_legend(out, "eval.loss")
    assert out.index(" loss") < out.index(" lr") < out.index(" acc")


# -- system metrics --------------------------------------------------------------------


def test_system_keys_are_drawn_against_seconds_below_the_history(basic_run, capsys):
    status, out, err = plot(capsys, basic_run.run_dir, "--plot", "loss,proc.memory.*", "--width", "100", "--height", "40")
    assert status == 0, err
    assert out.index("basic-run · metrics") < out.index("basic-run · system metrics")
    for name in ("proc.memory.rssMB", "proc.memory.percent", "proc.memory.availableMB"):
        assert in_legend(out, name), name
    assert out.rstrip().splitlines()[-1].strip() == "seconds"
    assert step_ticks(out)[0] == 0


def test_one_system_chart_is_titled_with_its_unit(basic_run, capsys):
    status, out, _ = plot(capsys, basic_run.run_dir, "--plot", "memory_percent", "--width", "80", "--height", "20")
    assert status == 0
    assert "basic-run · System Memory (%)" in out


def test_a_shared_run_has_one_series_per_node_label(shared_run, capsys):
    secondary = next(writer for writer in shared_run.writers if not writer.primary)
    status, out, err = plot(capsys, secondary.run_dir, "--plot", "memory_percent,loss", "--width", "100", "--height", "40")
    assert status == 0, err
    for writer in shared_run.writers:
        assert in_legend(out, f"memory_percent {writer.label}"), writer.label
    assert in_legend(out, "loss")  # the history is the primary's, whichever writer was named
    assert "/l:" not in out


# -- output fit for logs ------------------------------------------------------------------


def test_no_escape_codes_off_a_terminal(basic_run, capsys):
    status, out, _ = plot(capsys, basic_run.run_dir, "--plot", "loss,acc,memory_percent", "--width", "90", "--height", "30")
    assert status == 0
    assert ESCAPE not in out
    assert "**" in out and "++" in out  # without colour, series differ by their marker


def test_colour_on_a_terminal_unless_no_color(basic_run, monkeypatch):
    terminal = Terminal()
    assert plot_run(basic_run.wandb_path, inspect_args(str(basic_run.run_dir), "--plot", "loss"), terminal) == 0
    assert ESCAPE in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    assert plot_run(basic_run.wandb_path, inspect_args(str(basic_run.run_dir), "--plot", "loss"), plain) == 0
    assert ESCAPE not in plain.getvalue()


def test_hostile_key_names_are_printed_inert(hostile_run, capsys):
    status, out, err = plot(capsys, hostile_run.run_dir, "--plot", "m/*red*,n?l*", "--width", "120", "--height", "30")
    assert status == 0, err
    assert not CONTROLS.search(out) and "\u202e" not in out
    assert in_legend(out, "m/\\x1b[31mred\\x1b[0m") and in_legend(out, "m/[bold red]x[/]")
    assert in_legend(out, "n\\nl\\rr")
    assert "\\u202eevil" in out  # the run's name, in the title


# -- mistakes ---------------------------------------------------------------------------------


def test_a_key_that_matches_nothing_exits_2_and_names_known_keys(basic_run, capsys):
    status, out, err = plot(capsys, basic_run.run_dir, "--plot", "loss,los")
    assert status == 2 and out == ""
    assert "no metric matches 'los'; known: " in err
    assert "acc" in err and "loss" in err and "lr" in err


def test_an_unknown_hostile_key_is_reported_inert(hostile_run, capsys):
    status, _, err = plot(capsys, hostile_run.run_dir, "--plot", "\x1b[2Jnope")
    assert status == 2
    assert "no metric matches '\\x1b[2Jnope'" in err
    assert not CONTROLS.search(err.rstrip("\n")) and "\u202e" not in err


@pytest.mark.parametrize("other", ["--json", "--follow", "--summary"])
def test_plot_does_not_go_with_streaming_options(basic_run, capsys, other):
    status, out, err = plot(capsys, basic_run.run_dir, "--plot", "loss", other)
    assert status == 2 and out == ""
    assert "--plot" in err and other in err


def test_a_figure_too_small_is_refused(basic_run, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["inspect", str(basic_run.run_dir), "--plot", "loss", "--width", "5"])
    assert exit_.value.code == 2
    assert "at least 30" in capsys.readouterr().err


def test_each_plot_starts_afresh_in_one_process(basic_run, capsys):
    # plotext keeps one global figure: a stacked figure must not leak into the next plot
    first = plot(capsys, basic_run.run_dir, "--plot", "acc", "--width", "80", "--height", "20")[1]
    plot(capsys, basic_run.run_dir, "--plot", "loss,memory_percent", "--width", "100", "--height", "40")
    assert plot(capsys, basic_run.run_dir, "--plot", "acc", "--width", "80", "--height", "20")[1] == first


# -- long series ---------------------------------------------------------------------------


def test_a_long_series_is_thinned_and_keeps_its_spike():
    xs = [float(i) for i in range(200_000)]
    ys = [math.sin(i / 1000) for i in range(200_000)]
    ys[123_457] = 50.0
    kept_x, kept_y = envelope(xs, ys)
    assert len(kept_x) <= MAX_POINTS
    assert max(kept_y) == 50.0 and kept_x[kept_y.index(50.0)] == 123_457
    assert kept_x == sorted(kept_x) and kept_x[0] == 0 and kept_x[-1] >= 199_000


# -- the real command line -----------------------------------------------------------------------


def test_the_command_line_plots_a_run(basic_run):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LEET_CONFIG": ""}
    result = subprocess.run(
        [sys.executable, "-m", "leet", "inspect", str(basic_run.run_dir), "--plot", "loss"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert in_legend(result.stdout, "loss") and ESCAPE not in result.stdout
    lines = result.stdout.rstrip("\n").split("\n")
    assert len(lines) == 25 and max(map(len, lines)) == 100  # no terminal: the default size

from leet.model.run import Console, RunModel, RunState, overwrite
from leet.runfile.events import (
    ConsoleOutput,
    HistoryRow,
    RunExit,
    RunInfo,
    SummaryUpdate,
)


def texts(console):
    return [line.text for line in console.snapshot()]


def test_carriage_returns_leave_the_last_state_of_a_progress_bar():
    console = Console()
    console.feed("stderr", "epoch 1:  10%|#         |\r")
    console.feed("stderr", "epoch 1:  50%|#####     |\r")
    console.feed("stderr", "epoch 1: 100%|##########|\n")
    console.feed("stdout", "done\n")
    assert texts(console) == ["epoch 1: 100%|##########|", "done"]


def test_partial_lines_continue_and_overwrite_is_column_wise():
    console = Console()
    console.feed("stdout", "loss=0.5")
    console.feed("stdout", " acc=0.9\nnext")
    assert texts(console) == ["loss=0.5 acc=0.9", "next"]
    assert overwrite("abcdef", 6, "\rxy") == ("xycdef", 2)


def test_streams_and_labels_keep_their_own_open_line():
    console = Console()
    console.feed("stdout", "a", label="rank0")
    console.feed("stdout", "b", label="rank1")
    console.feed("stdout", "1\n", label="rank0")
    assert [(line.text, line.label) for line in console.snapshot()] == [("a1", "rank0"), ("b", "rank1")]


def test_console_keeps_the_newest_lines():
    console = Console(limit=3)
    console.feed("stdout", "".join(f"{i}\n" for i in range(10)))
    assert texts(console) == ["7", "8", "9"]


def test_model_state_follows_exit_growth_and_staleness():
    model = RunModel()
    assert model.state(now=100.0, crash_after=60) is RunState.LOADING
    model.loaded, model.last_growth = True, 100.0
    assert model.state(now=120.0, crash_after=60) is RunState.UNKNOWN, "no run record yet"
    assert model.state(now=120.0, crash_after=60, size=0) is RunState.UNKNOWN, "an empty file"
    model.apply(RunInfo(run_id="abc"))
    assert model.state(now=120.0, crash_after=60) is RunState.RUNNING
    assert model.state(now=200.0, crash_after=60) is RunState.CRASHED
    model.last_growth = 199.0  # it grew again: revived
    assert model.state(now=200.0, crash_after=60) is RunState.RUNNING
    model.apply(RunExit(exit_code=2))
    assert model.state(now=200.0, crash_after=60) is RunState.FAILED
    model.exit = RunExit(exit_code=0)
    assert model.state(now=200.0, crash_after=60) is RunState.FINISHED


def test_model_folds_summary_config_and_steps():
    model = RunModel()
    model.apply(RunInfo(run_id="abc", config={"lr": 0.1, "model.depth": 12}))
    model.apply(SummaryUpdate({"loss": 1.0, "eval.loss": 2.0}))
    model.apply(SummaryUpdate({"loss": 0.5}, remove=("eval",)))
    model.apply(HistoryRow(step=3, values={"loss": 0.5}))
    model.apply(HistoryRow(step=7, values={"acc": 0.9}))
    assert model.summary == {"loss": 0.5}
    assert model.config == {"lr": 0.1, "model.depth": 12}
    assert model.last_step == 7 and model.history_keys == {"loss", "acc"}
    model.apply(ConsoleOutput("stdout", "hi\n"))
    assert texts(model.console) == ["hi"]


def test_asking_for_no_console_lines_gives_none():
    console = Console()
    console.feed("stdout", "a\nb\n")
    assert console.snapshot(0) == [] and len(console.snapshot(1)) == 1 and len(console.snapshot()) == 2

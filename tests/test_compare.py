"""The compare table (pure): differing config only, best by goal or by name, missing values."""

from __future__ import annotations

from leet.model.compare import MISSING, CompareRun, compare_table, goal_of, loss_like
from leet.model.store import SeriesData


def series(values, steps=None) -> SeriesData:
    steps = list(range(len(values))) if steps is None else steps
    return SeriesData([float(s) for s in steps], list(values), list(values), list(values))


def run(key, config=None, goals=None, **metrics) -> CompareRun:
    return CompareRun(key, f"name-{key}", f"{key}1234567890", "finished", config or {}, goals or {}, frozenset(), {k.replace("__", "/"): v for k, v in metrics.items()})


def cells(table, name):
    row = next(row for row in table.rows if row.name == name)
    return [cell.text for cell in row.cells], [cell.best for cell in row.cells]


def test_only_config_keys_that_differ_are_rows_nested_keys_dotted_and_missing_ones_dashed():
    a = run("a", {"lr": 0.1, "model": {"depth": 12, "width": 64}, "seed": 1, "_wandb": {"x": 1}})
    b = run("b", {"lr": 0.01, "model": {"depth": 12, "width": 128}, "seed": 1})
    c = run("c", {"lr": 0.001, "model": {"depth": 12}, "seed": 1})
    table = compare_table([a, b, c])
    assert [row.name for row in table.rows if row.kind == "config"] == ["lr", "model.width"]
    texts, best = cells(table, "model.width")
    assert texts == ["64", "128", MISSING] and not any(best)


def test_best_follows_the_declared_goal_and_else_the_name():
    a = run("a", goals={"val/*": "maximize"}, val__loss=series([0.9, 0.2, 0.5]), acc=series([0.1, 0.7]), train__loss=series([3.0, 1.0]))
    b = run("b", val__loss=series([0.8, 0.6]), acc=series([0.2, 0.9, 0.8]), train__loss=series([2.0, 1.5]))
    table = compare_table([a, b])
    texts, best = cells(table, "val/loss · best")
    assert texts == ["0.9 @ 0", "0.8 @ 0"] and best == [True, False], "the glob's maximize beats the loss-like name"
    texts, best = cells(table, "train/loss · best")
    assert texts == ["1 @ 1", "1.5 @ 1"] and best == [True, False], "loss-like: the lowest"
    texts, best = cells(table, "acc · best")
    assert texts == ["0.7 @ 1", "0.9 @ 1"] and best == [False, True], "anything else: the highest"
    texts, best = cells(table, "acc · last")
    assert texts == ["0.7", "0.8"] and best == [False, True]


def test_loss_like_names():
    assert all(loss_like(name) for name in ("loss", "val/loss", "train_loss", "eval.error", "valloss", "ppl", "test/WER", "mse"))
    assert not any(loss_like(name) for name in ("acc", "accuracy", "lr", "bleu", "f1", "glossary"))
    assert goal_of("val/loss", [run("a", goals={"val/loss": "maximize"})]) == "max"


def test_a_run_without_a_metric_shows_a_dash_and_nan_is_skipped():
    a = run("a", loss=series([float("nan"), 0.5, float("nan")]))
    b = run("b", acc=series([0.5]))
    table = compare_table([a, b])
    assert cells(table, "loss · last") == (["0.5", MISSING], [False, False]), "one run has it: nothing to beat"
    assert cells(table, "loss · best")[0] == ["0.5 @ 1", MISSING]


def test_columns_sort_by_a_row_best_first_and_reversed_with_missing_last():
    a, b, c = run("a", {"lr": 0.1}, loss=series([0.3])), run("b", {"lr": 0.01}, loss=series([0.1])), run("c", {}, acc=series([1.0]))
    table = compare_table([a, b, c])
    assert [r.key for r in table.sorted_by("loss · last").runs] == ["b", "a", "c"]
    assert [r.key for r in table.sorted_by("loss · last", reverse=True).runs] == ["a", "b", "c"]
    assert [r.key for r in table.sorted_by("lr").runs] == ["b", "a", "c"]
    assert cells(table.sorted_by("lr"), "lr")[0] == ["0.01", "0.1", MISSING]


def test_the_filter_keeps_rows_by_name():
    table = compare_table([run("a", {"lr": 1}, loss=series([1.0])), run("b", {"lr": 2}, loss=series([2.0]))])
    assert [row.name for row in table.filtered("loss").rows] == ["loss · last", "loss · best"]

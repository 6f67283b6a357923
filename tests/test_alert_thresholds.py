"""Threshold rules over metric samples: when they fire, how often, and what the alert says."""

from __future__ import annotations

import time

from leet.alerts.events import ERROR, THRESHOLD, WARNING
from leet.alerts.rules import parse_rule, parse_rules
from leet.alerts.thresholds import MATCH_CACHE_LIMIT, Scope, ThresholdWatch

HOST = Scope("host")
RUN = Scope("/runs/run-20240101_000000-abc123", "abc123", "bright-sun-7")
T0 = 1_700_000_000.0


def watch(*rules: str) -> ThresholdWatch:
    return ThresholdWatch(parse_rules(rules))


def feed(w: ThresholdWatch, samples, scope: Scope = HOST, running: bool = True) -> list:
    """``samples``: (seconds after T0, {key: value}); every alert, in order."""
    alerts = []
    for dt, values in samples:
        alerts.extend(w.observe(scope, T0 + dt, values, running=running))
    return alerts


def temps(*pairs) -> list:
    return [(dt, {"gpu.0.temp": value}) for dt, value in pairs]


def test_fires_only_once_held_for_the_whole_duration():
    w = watch("gpu.*.temp > 85 for 2m")
    assert feed(w, temps((0, 90), (60, 91), (119, 92))) == []
    [alert] = w.observe(HOST, T0 + 120, {"gpu.0.temp": 93.0})
    assert alert.time == T0 + 120
    assert alert.value == 93.0


def test_a_dip_starts_the_wait_again():
    w = watch("gpu.*.temp > 85 for 2m")
    assert feed(w, temps((0, 90), (60, 80), (90, 90), (180, 91))) == []
    [alert] = feed(w, temps((210, 92)))
    assert alert.time == T0 + 210
    assert alert.text == "gpu.0.temp has been 92 (above 85) for 2m"


def test_without_for_the_first_sample_that_holds_fires():
    w = watch("memory_percent > 95")
    [alert] = w.observe(HOST, T0, {"memory_percent": 97.0, "cpu": 12.0})
    assert alert.text == "memory_percent is 97 (above 95)"


def test_fires_once_per_episode_and_rearms_after_a_sample_that_does_not_hold():
    w = watch("gpu.*.temp > 85")
    alerts = feed(w, temps((0, 90), (10, 91), (20, 92), (30, 70), (40, 95), (50, 96)))
    assert [a.time for a in alerts] == [T0, T0 + 40]
    assert alerts[0].ident != alerts[1].ident


def test_keys_missing_from_a_sample_keep_their_state():
    w = watch("gpu.*.temp > 85 for 1m")
    samples = [(0, {"gpu.0.temp": 90.0}), (30, {"cpu": 5.0}), (60, {"gpu.0.temp": 91.0}), (70, {"cpu": 5.0}), (80, {"gpu.0.temp": 92.0})]
    assert [a.time for a in feed(w, samples)] == [T0 + 60]


def test_cooldown_holds_back_a_new_episode_until_it_has_passed():
    w = watch("loss != 0 cooldown 10m level error")
    samples = [(0, 1.0), (60, 0.0), (120, 2.0), (300, 0.0), (400, 3.0), (599, 3.0), (600, 4.0), (660, 0.0), (700, 5.0)]
    alerts = feed(w, [(dt, {"loss": value}) for dt, value in samples])
    # 120 and 400 come inside the cooldown; the episode from 400 fires once it is over, at 600; 700 is again too soon.
    assert [a.time for a in alerts] == [T0, T0 + 600]
    assert [a.level for a in alerts] == [ERROR, ERROR]
    assert alerts[1].text == "loss has been 4 (not 0) for 3m 20s"


def test_while_running_holds_only_while_the_run_runs():
    w = watch("gpu.*.gpu < 5 for 10m while running")
    idle = [(dt, {"gpu.0.gpu": 1.0}) for dt in range(0, 1300, 100)]
    assert feed(w, idle, running=False) == []
    # the run starts at 1300: the ten minutes count from there, not from the idle samples before it
    alerts = feed(w, [(dt, {"gpu.0.gpu": 1.0}) for dt in range(1300, 2000, 100)])
    assert [a.time for a in alerts] == [T0 + 1900]
    # a sample after the run ended ends the episode; the next run's idle GPU is a new one
    assert feed(w, [(2000, {"gpu.0.gpu": 1.0})], running=False) == []
    again = feed(w, [(dt, {"gpu.0.gpu": 1.0}) for dt in range(2100, 2800, 100)])
    assert [a.time for a in again] == [T0 + 2700]


def test_a_rule_without_while_running_ignores_whether_the_run_runs():
    w = watch("gpu.*.temp > 85")
    assert len(w.observe(HOST, T0, {"gpu.0.temp": 90.0}, running=False)) == 1


def test_a_glob_over_gpu_indices_judges_each_gpu_on_its_own():
    w = watch("gpu.*.temp > 85 for 1m")
    samples = [(dt, {f"gpu.{i}.temp": (90.0 if i in (1, 6) else 60.0) for i in range(8)} | {"gpu.0.powerWatts": 300.0}) for dt in (0, 30, 60, 90)]
    alerts = feed(w, samples)
    assert sorted(a.key for a in alerts) == ["gpu.1.temp", "gpu.6.temp"]
    assert len({a.ident for a in alerts}) == 2


def test_three_nodes_one_hot_gives_one_alert_naming_that_node():
    w = watch("gpu.*.temp/l:node-* >= 90 for 30s")
    scope = Scope("http://prometheus:9090")
    samples = [(dt, {f"gpu.0.temp/l:node-{n}": (95.0 if n == 2 else 70.0) for n in (1, 2, 3)}) for dt in (0, 15, 30)]
    [alert] = feed(w, samples, scope)
    assert (alert.key, alert.label, alert.value) == ("gpu.0.temp", "node-2", 95.0)
    assert alert.title == "gpu.0.temp >= 90 for 30s · node-2"
    assert alert.text == "gpu.0.temp has been 95 (at or above 90) for 30s"
    assert alert.source == "http://prometheus:9090"


def test_a_label_glob_leaves_unlabelled_keys_alone_and_a_plain_glob_takes_both():
    labelled, plain = watch("gpu.*.temp/l:node-* > 85"), watch("gpu.*.temp > 85")
    sample = {"gpu.0.temp": 90.0, "gpu.0.temp/l:node-1": 90.0, "gpu.0.temp/l:rank0": 90.0}
    assert [a.label for a in labelled.observe(HOST, T0, sample)] == ["node-1"]
    assert sorted(a.label for a in plain.observe(HOST, T0, sample)) == ["", "node-1", "rank0"]


def test_nan_never_holds_and_ends_the_episode():
    w = watch("gpu.*.temp > 85 for 1m", "loss != 0")
    assert feed(w, [(0, {"loss": float("nan")})]) == []
    assert feed(w, temps((0, 90), (30, float("nan")), (60, 90), (90, 90))) == []
    [alert] = feed(w, temps((120, 90)))
    assert alert.text == "gpu.0.temp has been 90 (above 85) for 1m"


def test_infinity_is_a_value_like_any_other():
    [alert] = watch("loss > 3").observe(RUN, T0, {"loss": float("inf")})
    assert alert.text == "loss is inf (above 3)"
    assert alert.as_json()["value"] == "inf"


def test_values_that_are_not_numbers_are_passed_over():
    w = watch("* > 1")
    alerts = w.observe(HOST, T0, {"name": "gpt", "loss": None, "lr": 2.0})
    assert [a.key for a in alerts] == ["lr"]


def test_scopes_keep_separate_state():
    w = watch("gpu.*.temp > 85 for 1m")
    a, b = Scope("/runs/a", "a"), Scope("/runs/b", "b")
    assert w.observe(a, T0, {"gpu.0.temp": 90.0}) == []
    assert w.observe(b, T0 + 30, {"gpu.0.temp": 90.0}) == []
    assert w.observe(b, T0 + 40, {"gpu.0.temp": 50.0}) == []  # b cools down; a does not care
    [alert] = w.observe(a, T0 + 60, {"gpu.0.temp": 90.0})
    assert alert.run_id == "a"
    assert w.observe(b, T0 + 100, {"gpu.0.temp": 90.0}) == []


def test_forget_drops_a_scope():
    w = watch("gpu.*.temp > 85 for 1m")
    w.observe(RUN, T0, {"gpu.0.temp": 90.0})
    w.forget(RUN)
    assert w.observe(RUN, T0 + 60, {"gpu.0.temp": 90.0}) == []
    assert len(w.observe(RUN, T0 + 120, {"gpu.0.temp": 90.0})) == 1
    w.forget(Scope("never seen"))


def test_a_replay_gives_the_same_idents_and_a_new_episode_a_new_one():
    samples = temps((0, 90), (60, 91), (120, 92), (130, 60), (140, 90), (300, 95))
    first = feed(watch("gpu.*.temp > 85 for 2m"), samples, RUN)
    again = feed(watch("gpu.*.temp > 85 for 2m"), samples, RUN)
    assert [a.ident for a in first] == [a.ident for a in again]
    assert len(first) == 2 and first[0].ident != first[1].ident
    other_source = feed(watch("gpu.*.temp > 85 for 2m"), samples, Scope("/runs/elsewhere", "abc123", "bright-sun-7"))
    other_rule = feed(watch("gpu.*.temp > 85 for 120s"), samples, RUN)
    assert not {a.ident for a in first} & {a.ident for a in other_source + other_rule}


def test_the_alert_says_what_crossed_where_and_for_how_long():
    w = watch("gpu.*.temp > 85 for 2m")
    samples = [(dt, {"gpu.3.temp/l:node-2": 91.5}) for dt in (0, 65, 130)]
    [alert] = feed(w, samples, RUN)
    assert alert.kind == THRESHOLD
    assert alert.level == WARNING
    assert alert.title == "bright-sun-7: gpu.3.temp > 85 for 2m · node-2"
    assert alert.text == "gpu.3.temp has been 91.5 (above 85) for 2m 10s"
    assert (alert.key, alert.label, alert.value, alert.rule) == ("gpu.3.temp", "node-2", 91.5, "gpu.*.temp > 85 for 2m")
    assert (alert.source, alert.run_id, alert.run_name, alert.time) == (RUN.source, "abc123", "bright-sun-7", T0 + 130)


def test_the_title_names_the_run_by_id_when_it_has_no_name_and_nothing_on_a_host():
    [by_id] = watch("loss > 3").observe(Scope("/runs/x", "x9"), T0, {"loss": 4.0})
    [host] = watch("loss > 3").observe(HOST, T0, {"loss": 4.0})
    assert by_id.title == "x9: loss > 3"
    assert host.title == "loss > 3"


def test_wording_per_operator_and_four_significant_digits():
    cases = [
        ("x > 85", 123.456789, "x is 123.5 (above 85)"),
        ("x >= 85", 85.0, "x is 85 (at or above 85)"),
        ("x < 5", 0.000123456, "x is 0.0001235 (below 5)"),
        ("x <= 5", 5.0, "x is 5 (at or below 5)"),
        ("x == 1", 1.0, "x is 1 (at 1)"),
        ("x != 0", -2.5e9, "x is -2.5e+09 (not 0)"),
        ("x > 95%", 97.25, "x is 97.25% (above 95%)"),
        ("x > 85", 85.00001, "x is 85.00001 (above 85)"),  # never "85 (above 85)"
    ]
    for rule, value, text in cases:
        [alert] = watch(rule).observe(HOST, T0, {"x": value})
        assert alert.text == text, rule


def test_each_matching_rule_fires_on_its_own():
    w = watch("gpu.*.temp > 85", "gpu.0.temp > 90 level error")
    alerts = w.observe(HOST, T0, {"gpu.0.temp": 95.0, "gpu.1.temp": 95.0})
    assert sorted((a.key, a.level) for a in alerts) == [("gpu.0.temp", ERROR), ("gpu.0.temp", WARNING), ("gpu.1.temp", WARNING)]


def test_state_is_kept_only_for_keys_a_rule_matches_and_the_match_cache_is_bounded():
    w = watch("gpu.*.temp > 85")
    w.observe(HOST, T0, {f"custom.metric.{i}": 1.0 for i in range(1000)} | {"gpu.0.temp": 90.0})
    assert sum(len(episodes) for episodes in w._episodes.values()) == 1
    for start in range(0, MATCH_CACHE_LIMIT + 5000, 5000):
        w.observe(HOST, T0, {f"k{i}": 1.0 for i in range(start, start + 5000)})
    assert len(w._matching) <= MATCH_CACHE_LIMIT


def test_a_thousand_keys_across_three_hundred_scopes_is_cheap():
    rules = ["gpu.*.temp > 85 for 2m", "gpu.*.gpu < 5 for 10m while running", "memory_percent > 95 for 30s", "disk./.usagePercent > 95", "loss != 0", "gpu.*.temp/l:node-* >= 90"]
    w = watch(*rules)
    values = {f"train/metric_{i}": float(i) for i in range(960)} | {f"gpu.{g}.{m}": 50.0 for g in range(8) for m in ("temp", "gpu", "powerWatts", "memory")}
    scopes = [Scope(f"/runs/run-{n}", f"id{n}") for n in range(300)]
    for scope in scopes:  # the first sweep works out which rules match each key
        w.observe(scope, T0, values)
    began = time.perf_counter()
    for scope in scopes:
        w.observe(scope, T0 + 1, values)
    spent = time.perf_counter() - began
    # 300,000 values; a generous bound for a shared, loaded machine (about 0.015 s on an idle one)
    assert spent < 2.0, spent


def test_an_episode_carried_over_a_restart_is_not_told_again_until_it_ends():
    rule = parse_rule("gpu.*.temp > 85")
    watch = ThresholdWatch([rule])
    scope = Scope("host")
    watch.carried = {("host", rule.text, "gpu.0.temp")}
    assert watch.observe(scope, 10.0, {"gpu.0.temp": 90.0, "gpu.1.temp": 91.0})[0].key == "gpu.1.temp"  # gpu.0 was told before
    assert watch.open_episodes() == {("host", rule.text, "gpu.0.temp"), ("host", rule.text, "gpu.1.temp")}
    assert watch.observe(scope, 20.0, {"gpu.0.temp": 70.0}) == []  # it ended
    (again,) = watch.observe(scope, 30.0, {"gpu.0.temp": 95.0})  # a new episode: news
    assert again.key == "gpu.0.temp" and watch.carried == set()

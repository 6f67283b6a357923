"""The run filter language (``leet.model.run_query``): every form, precedence, and errors that say where."""

from __future__ import annotations

import pytest

from leet.model.run_query import AllOf, AnyOf, Not, QueryError, RunFields, Word, compare, lookup, parse

RUNS = {
    "wide": RunFields(
        words=("wide-head", "abc123", "vision", "sweep-1", "train"), state="running", tags=("big model", "ablation"),
        notes="Try the wide head", config={"lr": 1e-3, "opt": {"name": "adam", "beta": 0.9}, "flag": True, "layers.count": 12},
        summary={"val/loss": 0.25, "acc": 0.91, "_wandb.runtime": 3},
    ),
    "small": RunFields(
        words=("small", "def456", "vision", "sweep-1", "eval"), state="failed", tags=("baseline",),
        config={"lr": 0.1, "opt": {"name": "sgd"}, "flag": False, "batch": "auto"}, summary={"val/loss": 0.4},
    ),
    "bare": RunFields(words=("bare", "ghi789", "nlp"), state="finished"),
}


def matching(text: str) -> list[str]:
    query = parse(text)
    return [name for name, run in RUNS.items() if query.matches(run)]


def error_of(text: str) -> str:
    with pytest.raises(QueryError) as raised:
        parse(text)
    return str(raised.value)


# -- the forms ----------------------------------------------------------------------------------


def test_an_empty_query_matches_every_run():
    assert matching("") == matching("   ") == ["wide", "small", "bare"]


def test_a_bare_word_is_a_case_insensitive_substring_of_the_run_words():
    assert matching("VISION") == ["wide", "small"]
    assert matching("def4") == ["small"]
    assert matching("nothing-like-it") == []


def test_tags_by_substring_or_whole_and_quotes_hold_spaces():
    assert matching('tag:"big model"') == ["wide"]
    assert matching("tag:big") == ["wide"]
    assert matching("tag=big") == [], "= wants the whole tag"
    assert matching("tag=Baseline") == ["small"]
    assert matching("tag!=baseline") == ["wide"], "a run without tags has no tag to differ"


def test_notes_by_substring():
    assert matching("note:wide") == ["wide"]
    assert matching('note:"the wide"') == ["wide"]


def test_state_is_the_word_the_list_shows_and_a_prefix_will_do():
    assert matching("state:failed") == ["small"]
    assert matching("state:fin") == ["bare"]
    assert matching("state=running") == ["wide"]
    assert matching("state!=running") == ["small", "bare"]


def test_config_values_compare_as_numbers_or_as_text():
    assert matching("cfg.lr>=1e-3") == ["wide", "small"]
    assert matching("cfg.lr<0.01") == ["wide"]
    assert matching("cfg.lr=0.001") == ["wide"], "numbers compare by value, not by how they are written"
    assert matching("cfg.lr!=0.001") == ["small"]
    assert matching("cfg.lr>0.001") == ["small"]
    assert matching("cfg.lr<=0.1") == ["wide", "small"]
    assert matching("cfg.opt.name=adam") == ["wide"], "dotted keys reach into nested config"
    assert matching("cfg.opt.name:AD") == ["wide"], ": is a case-insensitive substring"
    assert matching("cfg.opt.name<b") == ["wide"], "text against text"
    assert matching("cfg.layers.count=12") == ["wide"], "a key holding a dot as written"
    assert matching("cfg.flag=true") == ["wide"]
    assert matching("config.batch=auto") == ["small"]
    assert matching("cfg.lr >= 1e-3") == ["wide", "small"], "spaces around the operator"


def test_summary_keys_may_hold_slashes():
    assert matching("summary.val/loss<0.3") == ["wide"]
    assert matching("summary.val/loss>=0.3") == ["small"]
    assert matching("summary._wandb.runtime=3") == ["wide"]


def test_a_missing_key_does_not_match_and_its_negation_does():
    assert matching("cfg.x>1") == []
    assert matching("cfg.x!=1") == [], "!= too wants the key"
    assert matching("-cfg.x>1") == ["wide", "small", "bare"]


def test_a_value_of_another_kind_does_not_match_rather_than_fail():
    assert matching("cfg.batch<3") == [], "text against a number"
    assert matching("cfg.lr<abc") == [], "a number against text"
    assert matching("cfg.opt>1") == [], "a mapping against a number"
    assert matching("cfg.flag>0") == [], "a bool is not a number"
    assert compare(float("nan"), "<", "1") is False
    assert compare(float("nan"), "!=", "1") is True


def test_lookup_walks_nested_mappings_after_a_whole_key():
    assert lookup({"a.b": 1, "a": {"b": 2}}, "a.b") == (True, 1)
    assert lookup({"a": {"b": {"c": 3}}}, "a.b.c") == (True, 3)
    assert lookup({"a": {"b": 2}}, "a.c") == (False, None)
    assert lookup({"a": 5}, "a.b") == (False, None)


# -- combining ---------------------------------------------------------------------------------


def test_minus_negates_and_juxtaposition_ands():
    assert matching("-vision") == ["bare"]
    assert matching("vision -state:failed") == ["wide"]
    assert matching("--vision") == ["wide", "small"]
    assert matching("ddp-r50") == [], "a minus inside a word is part of it"


def test_and_binds_tighter_than_or():
    assert parse("a | b c").root == AnyOf((Word("a"), AllOf((Word("b"), Word("c")))))
    assert parse("a b | c").root == AnyOf((AllOf((Word("a"), Word("b"))), Word("c")))
    assert matching("bare | vision tag:big") == ["wide", "bare"]


def test_parentheses_group():
    assert parse("(a | b) c").root == AllOf((AnyOf((Word("a"), Word("b"))), Word("c")))
    assert parse("-(a | b)").root == Not(AnyOf((Word("a"), Word("b"))))
    assert matching("(bare | small) -state:failed") == ["bare"]
    assert matching("-(tag:big | tag:baseline)") == ["bare"]


def test_what_a_query_reads_beyond_the_listing():
    assert parse("vision tag:x").reads == frozenset()
    assert parse("a | -(cfg.lr>1 summary.acc<2)").reads == {"config", "summary"}


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("cfg.lr>=", "column 8: a value after >="),
        ("cfg.lr>= ", "column 9: a value after >="),
        ("tag:", "column 4: a value after :"),
        ("(tag:a", "column 6: ')' to close the '(' at column 1"),
        ("a)", "column 2: a '(' before this ')'"),
        ("()", "column 2: a term inside ( )"),
        ("(", "column 1: a term inside ( )"),
        ("a (", "column 3: a term inside ( )"),
        ("a -(", "column 4: a term inside ( )"),
        ("a |", "column 3: a term after |"),
        ("a | | b", "column 5: a term after |"),
        ("| a", "column 1: a term, not '|'"),
        ("a -", "column 3: a term after -"),
        ("- a", "column 2: a term after -"),
        ('tag:"big', "column 8: a '\"' to close the one at column 5"),
        ("cfg.>1", "column 5: a key after cfg. (as in cfg.lr)"),
        ("cfg>1", "column 4: a key after cfg. (as in cfg.lr)"),
        ("tag<3", "column 4: ':', '=' or '!=' after tag, not <"),
        ("state>1", "column 6: ':', '=' or '!=' after state, not >"),
        ("state:runnin5", "column 7: a state: running, finished, failed, crashed, loading, unknown, unreadable"),
        ("lr>1", "column 1: a known field (tag, note, state, cfg.KEY or summary.KEY) before >, not 'lr'"),
        ("a!b", "column 2: '!=' (a '!' alone is not an operator)"),
        (":x", "column 1: a field before : (tag, note, state, cfg.KEY or summary.KEY)"),
    ],
)
def test_an_invalid_query_says_at_which_column_and_what_was_expected(text, error):
    assert error_of(text) == error


def test_the_error_keeps_its_column_and_expectation_apart():
    with pytest.raises(QueryError) as raised:
        parse("cfg.lr>=")
    assert (raised.value.column, raised.value.expected) == (8, "a value after >=")


def test_every_prefix_typed_on_the_way_to_a_query_parses_or_says_why():
    text = '(tag:"big model" | -state:fail) cfg.opt.name!=sgd summary.val/loss<=0.3 | "wide head"'
    for end in range(len(text) + 1):
        try:
            parse(text[:end])
        except QueryError as error:
            assert 1 <= error.column <= max(1, end)

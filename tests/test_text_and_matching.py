from leet.common.matching import compile_filter, is_regex
from leet.common.text import clean


def test_clean_removes_escape_sequences_and_controls():
    assert clean("\x1b[31mred\x1b[0m") == "red"
    assert clean("a\x1b]0;title\x07b") == "ab"
    assert clean("tab\there\nnew\rline\x00") == "tab here new line"
    assert clean("[bold]not markup[/bold]") == "[bold]not markup[/bold]"


def test_filter_regex_then_substring():
    assert compile_filter("")("anything")
    assert compile_filter("NET")("Network Rx")
    assert compile_filter("^gpu \\d")("GPU 3")
    assert not compile_filter("^gpu \\d")("Process GPU 3")
    broken = compile_filter("gpu[")
    assert broken("gpu[0]") and not broken("gpu0")
    assert is_regex("a.*b") and not is_regex("plain") and not is_regex("gpu[")

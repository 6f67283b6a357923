from leet.common.matching import compile_filter, is_regex
from leet.common.text import clean, escaped, escaped_lines, replaced


def test_clean_removes_escape_sequences_and_controls():
    assert clean("\x1b[31mred\x1b[0m") == "red"
    assert clean("a\x1b]0;title\x07b") == "ab"
    assert clean("tab\there\nnew\rline\x00") == "tab here new line"
    assert clean("[bold]not markup[/bold]") == "[bold]not markup[/bold]"


def test_line_and_paragraph_separators_never_pass_as_they_are():
    assert clean("one\u2028two\u2029three") == "onetwothree"
    assert escaped("one\u2028two\u2029three") == "one\\u2028two\\u2029three"
    assert escaped("a\u2028b\nc", keep_newlines=True) == "a\\u2028b\nc"


def test_escaped_lines_keeps_lines_and_tabs_and_writes_out_the_rest():
    assert escaped_lines("line one\n\u202eevil\tcol") == "line one\n\\u202eevil\tcol"
    assert escaped_lines("a\r\nb\rc\fd\u2028e\u2029f\x85g") == "a\nb\nc\nd\ne\nf\ng", "every line break is one newline"
    assert escaped_lines("red\x1b[31m\x00\u200b") == "red\\x1b[31m\\x00\\u200b"
    assert escaped_lines("trailing\n") == "trailing" and escaped_lines("") == ""


def test_filter_regex_then_substring():
    assert compile_filter("")("anything")
    assert compile_filter("NET")("Network Rx")
    assert compile_filter("^gpu \\d")("GPU 3")
    assert not compile_filter("^gpu \\d")("Process GPU 3")
    broken = compile_filter("gpu[")
    assert broken("gpu[0]") and not broken("gpu0")
    assert is_regex("a.*b") and not is_regex("plain") and not is_regex("gpu[")


def test_replaced_marks_each_unsafe_character_in_place():
    assert replaced("gpu\x1b[2J.temp") == "gpu\ufffd[2J.temp"
    assert replaced("a\nb\x9fc") == "a\ufffdb\ufffdc"
    assert replaced("evil\u202etxt.exe\u200b") == "evil\ufffdtxt.exe\ufffd"  # bidi and zero-width too
    assert replaced("Core 2 · rank0 [bold]") == "Core 2 · rank0 [bold]"

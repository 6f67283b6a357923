"""Panels measure their rows without Rich's cache, and must agree with Rich (and so with Textual) cell for cell."""

from rich.cells import cell_len

from widgets.lines import cells


def test_every_character_measured_by_length_is_one_cell_to_rich():
    for code in range(0x20, 0x3000):
        char = chr(code)
        assert cells(char) == cell_len(char), hex(code)


def test_rows_with_wide_or_combining_characters_fall_back_to_rich():
    for text in ("⣿⣿ CPU 42%", "日本語 run", "e\u0301te", "◽◾", "⚠ hot", "", "a\tb"):
        assert cells(text) == cell_len(text), text

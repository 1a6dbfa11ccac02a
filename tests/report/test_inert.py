"""Text from package code is inert: every control, line separator and bidi control escaped."""

from __future__ import annotations

import pytest

from sandboxverify.report import inert


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\r::error::forged", "\\r::error::forged"),
        ("\x1b[2K\rPASSED", "\\x1b[2K\\rPASSED"),
        ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", None),
        ("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07", None),
        ("abc\u202edef\u2066x\u2069", "abc\\u202edef\\u2066x\\u2069"),
        ("nul\x00 del\x7f csi\x9b nel\x85 ls\u2028 ps\u2029", None),
        ("one\ntwo\tthree", "one\\ntwo\\tthree"),
        ("plain text, ünïcödé and עברית", "plain text, ünïcödé and עברית"),
    ],
)
def test_one_line_of_text_keeps_nothing_a_terminal_would_obey(text: str, shown: str | None) -> None:
    result = inert(text)
    if shown is not None:
        assert result == shown
    assert result.isprintable()  # no control, separator or format character is left


def test_a_block_keeps_its_lines_and_tabs_only() -> None:
    text = "Traceback:\r\n\tFile x\r\x1b[2KPASSED\n\u202eevil"
    assert inert(text, lines=True) == "Traceback:\n\tFile x\\r\\x1b[2KPASSED\n\\u202eevil"
    assert all(
        line.replace("\t", " ").isprintable() for line in inert(text, lines=True).split("\n")
    )


def test_anything_is_shown_as_its_text() -> None:
    assert inert(None) == "None"
    assert inert(3) == "3"

"""The spans of a message that were pasted, kept through edits (core/pasted.py): conservative
where it matters (typing inside a paste does not make it the user's words) and exact at the
edges (words typed before or after a paste stay typed)."""

from __future__ import annotations

from jarvis_tui.core.pasted import deleted, inserted, shifted, tidy, typed_text


def test_tidy_sorts_cuts_and_merges():
    assert tidy([(8, 12), (0, 3), (2, 5), (5, 6), (20, 30)], 25) == ((0, 6), (8, 12), (20, 25))
    assert tidy([(3, 3), (-4, 2)], 10) == ((0, 2),)


def test_tidy_leaves_out_what_is_not_a_span():
    assert tidy([[1, 2], "ab", (1,), (True, 4), (1.5, 3), None, [4, 6]], 10) == ((1, 2), (4, 6))


def test_a_paste_is_a_span_and_typing_at_its_edges_stays_typed():
    spans = inserted((), 6, 10, pasted=True)  # "typed " then ten pasted characters
    assert spans == ((6, 16),)
    assert inserted(spans, 6, 3) == ((9, 19),)  # typed just before it: moved, not joined
    assert inserted(spans, 16, 3) == ((6, 16),)  # typed just after it: not part of it


def test_typing_inside_a_paste_is_still_the_paste():
    assert inserted(((6, 16),), 10, 4) == ((6, 20),)


def test_a_paste_next_to_another_is_one_span():
    assert inserted(((0, 5),), 5, 3, pasted=True) == ((0, 8),)


def test_deleting_cuts_spans_and_moves_those_after():
    spans = ((2, 6), (10, 14))
    assert deleted(spans, 0, 2) == ((0, 4), (8, 12))
    assert deleted(spans, 4, 11) == ((2, 4), (4, 7))
    assert deleted(spans, 2, 6) == ((6, 10),)  # the whole paste taken out: nothing is left
    assert deleted(spans, 0, 20) == ()


def test_replacing_a_paste_by_typing_makes_it_typed():
    spans = ((0, 10),)
    assert inserted(deleted(spans, 0, 10), 0, 4) == ()


def test_shifted():
    assert shifted(((1, 2),), 5) == ((6, 7),)


def test_typed_text_puts_a_line_break_where_each_paste_was():
    text = "Answer in Chinese. PASTED DOC Thanks."
    assert typed_text(text, ((19, 30),)) == "Answer in Chinese. \nThanks."
    assert typed_text(text, ()) == text
    assert typed_text(text, ((0, len(text)),)) == "\n"

"""Label keys as data: digits in order, a free first letter, skip on s and 0."""

from __future__ import annotations

from curator.tui.keys import describe, key_for, label_keys


def test_commit_labels_get_digits_p_and_skip() -> None:
    keys = label_keys(["perf", "non-perf", "skip"])
    assert key_for(keys, "1") == key_for(keys, "p") == "perf"
    assert key_for(keys, "2") == "non-perf"
    assert key_for(keys, "n") is None  # n writes a note
    assert key_for(keys, "s") == key_for(keys, "0") == "skip"
    assert describe(keys) == [("1 p", "vote perf"), ("2", "vote non-perf"), ("s 0", "vote skip")]


def test_kernel_labels_use_k_for_keep_and_never_steal_screen_keys() -> None:
    keys = label_keys(["keep", "reject"])
    assert key_for(keys, "k") == "keep"
    assert key_for(keys, "r") is None
    screen_keys = set("ucnfbdq/")
    assert not screen_keys & {k.key for k in keys}


def test_at_most_nine_labels_get_digits() -> None:
    keys = label_keys([f"l{i}" for i in range(12)])
    digits = [k.key for k in keys if k.key.isdigit() and k.key != "0"]
    assert digits == [str(i) for i in range(1, 10)]


def test_a_label_never_takes_a_digit_or_a_symbol_that_means_something_else() -> None:
    keys = label_keys(["?huh", "3x", "0day", "/path", "alpha", "gamma"])
    assert key_for(keys, "?") is None
    assert key_for(keys, "/") is None
    assert key_for(keys, "3") == "0day"  # labels take digits by position only
    assert key_for(keys, "6") == "gamma"
    assert key_for(keys, "0") == "skip"
    assert [k.key for k in keys].count("3") == 1

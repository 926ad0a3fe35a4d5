"""Long texts are tokenized by their heads: the same ids as the whole texts, with less
work; texts a head cannot stand for (too few tokens in it, no whitespace, a tokenizer
without a pre-tokenizer) are read whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.labelers.student.infer import load_tokenizer, tokenize
from engines.labelers.student.pipeline import Encoder
from engines.labelers.student.text_heads import cuts_safely, encode_heads, head
from tests.tiny_student import save_tiny_student


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return load_tokenizer(save_tiny_student(tmp_path_factory.mktemp("heads") / "student"))


def whole_ids(tokenizer, texts: list[str], max_length: int) -> list[list[int]]:  # type: ignore[no-untyped-def]
    encoded = tokenizer(texts, truncation=True, max_length=max_length, padding=False)
    return [list(x) for x in encoded["input_ids"]]


def test_a_head_ends_at_the_last_whitespace_before_the_budget() -> None:
    assert head("short text", 64) == "short text"
    assert head("alpha beta\tgamma\ndelta epsilon", 20) == "alpha beta\tgamma"
    assert head("x" * 100, 20) == "x" * 100  # no whitespace before the budget: whole
    assert head(" " + "x" * 100, 20) == " " + "x" * 100  # only a leading space: whole


WORD = st.one_of(
    st.sampled_from(
        ["speed", "up", "the", "parser", "x", "++", "==", "(", "){", "é", "日本", "🙂"]
    ),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30),
)
GAP = st.sampled_from([" ", "  ", "\n", "\t", "\n+    ", " \n-"])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.tuples(WORD, GAP), min_size=0, max_size=200),
    max_length=st.sampled_from([4, 8, 16, 64]),
)
def test_heads_give_the_ids_of_the_whole_texts(tokenizer, parts, max_length: int) -> None:  # type: ignore[no-untyped-def]
    text = "".join(w + g for w, g in parts)
    # a word over WordPiece's 100 characters is one [UNK] whole, but pieces when cut
    texts = [text, text[: len(text) // 2], "fix " * 300 + text, "x " + "a" * 150 + " " + text]
    want = whole_ids(tokenizer, texts, max_length)
    assert tokenize(tokenizer, texts, max_length) == want
    assert [list(x) for x in Encoder(tokenizer, max_length)(texts)] == want


def test_a_head_with_too_few_tokens_is_read_again_whole(tokenizer) -> None:  # type: ignore[no-untyped-def]
    # the head is "Speed" and a run of spaces: one token, where the text has many
    text = "Speed" + " " * 2000 + "up the parser by caching the lookup table " * 20
    seen: list[list[str]] = []

    def encode(batch: list[str]) -> list[list[int]]:
        seen.append(batch)
        return whole_ids(tokenizer, batch, 32)

    assert encode_heads(encode, [text], 32) == whole_ids(tokenizer, [text], 32)
    assert [len(b[0]) for b in seen] == [32 * 8 - 1, len(text)]


def test_long_texts_are_read_by_their_heads(tokenizer) -> None:  # type: ignore[no-untyped-def]
    texts = ["Cache the parsed header\n\n" + "+ int x = y;\n" * 5000, "short message"]
    seen: list[list[str]] = []

    def encode(batch: list[str]) -> list[list[int]]:
        seen.append(batch)
        return whole_ids(tokenizer, batch, 128)

    assert encode_heads(encode, texts, 128) == whole_ids(tokenizer, texts, 128)
    assert len(seen) == 1 and len(seen[0][0]) <= 128 * 8 < len(texts[0])
    assert seen[0][1] == "short message"


def test_a_tokenizer_without_a_pre_tokenizer_is_never_cut(tmp_path: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    wrapped = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
    assert not cuts_safely(wrapped)
    assert cuts_safely(load_tokenizer(save_tiny_student(tmp_path / "student")))

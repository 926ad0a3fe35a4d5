"""Cut long texts before tokenizing them.

A student reads only the first ``max_length`` tokens of a text, yet a tokenizer reads the
whole text before it truncates: a 50 KB diff costs fifty times the work of the 1 KB that
its first 128 tokens come from. So each text longer than a character budget is cut at its
last space, newline or tab before the budget, and tokenized as that head.

The ids are the ones the whole text gives. Every tokenizer with a pre-tokenizer (BERT's
WordPiece, byte-level BPE, SentencePiece's Metaspace) splits words at whitespace, so the
head's tokens are the first tokens of the whole text; a head that gives fewer than
``max_length`` ids (it lost tokens the whole text would keep) is tokenized again in full.
Tokenizers without a pre-tokenizer, and texts with no whitespace before the budget, are
never cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

CHARS_PER_TOKEN = 8  # a head this long holds max_length tokens of any text seen so far


def cuts_safely(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` (a Hugging Face one) splits words at whitespace first."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    return backend is not None and getattr(backend, "pre_tokenizer", None) is not None


def head(text: str, budget: int) -> str:
    """``text`` up to its last whitespace before ``budget`` characters (all of it when it
    is short or has no whitespace there)."""
    if len(text) <= budget:
        return text
    cut = max(text.rfind(" ", 0, budget), text.rfind("\n", 0, budget), text.rfind("\t", 0, budget))
    return text[:cut] if cut > 0 else text


def encode_heads(
    encode: Callable[[list[str]], list[list[int]]], texts: Sequence[str], max_length: int
) -> list[list[int]]:
    """``encode(texts)`` (ids truncated to ``max_length``), reading only the heads of
    long texts; the same ids as encoding the whole texts."""
    budget = max_length * CHARS_PER_TOKEN
    heads = [head(t, budget) for t in texts]
    ids = list(encode(heads))
    short = [
        i
        for i, (h, t, x) in enumerate(zip(heads, texts, ids, strict=True))
        if len(h) < len(t) and len(x) < max_length
    ]
    if short:
        for i, again in zip(short, encode([texts[i] for i in short]), strict=True):
            ids[i] = again
    return ids

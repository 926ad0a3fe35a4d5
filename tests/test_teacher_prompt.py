"""Reading teacher replies, building requests, and cutting the input like the student."""

from __future__ import annotations

import pytest

from engines.labelers.base import NON_PERF, PERF
from engines.labelers.teacher import Teacher, TeacherConfig, cut_text
from engines.labelers.teacher.prompt import (
    ReplyError,
    label_messages,
    parse_category_reply,
    parse_label_reply,
)


@pytest.mark.parametrize(
    ("reply", "label", "confidence"),
    [
        ('{"label": "Perf", "confidence": 90}', PERF, 90.0),
        ('{"label": "Non-perf", "confidence": "85%"}', NON_PERF, 85.0),
        ('Sure.\n```json\n{"label": "non_perf", "confidence": 12.5}\n```', NON_PERF, 12.5),
        ('The answer: {"label": "PERF", "confidence": 0} as asked.', PERF, 0.0),
    ],
)
def test_label_replies_in_several_forms(reply: str, label: str, confidence: float) -> None:
    answer = parse_label_reply(reply)
    assert (answer.label, answer.confidence) == (label, confidence)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "empty"),
        ("Perf, 90", "malformed"),
        ('{"label": "Perf"}', "malformed"),
        ('{"label": "Perf", "confidence": 140}', "malformed"),
        ('{"label": "Perf", "confidence": true}', "malformed"),
        ('{"label": "unclear", "confidence": 50}', "unknown-label"),
        ("I cannot help with classifying this.", "refusal"),
        ('["Perf", 90]', "malformed"),
    ],
)
def test_bad_label_replies_name_their_reason(reply: str, reason: str) -> None:
    with pytest.raises(ReplyError) as info:
        parse_label_reply(reply)
    assert info.value.reason == reason


def test_category_reply_accepts_a_display_name_but_not_an_unknown_slug() -> None:
    allowed = ["memory-inefficiency", "memory-inefficiency/memory-leak"]
    answer = parse_category_reply(
        '{"reasoning": "frees it", "category": "Memory Inefficiency / Memory Leak",'
        ' "confidence": 70}',
        allowed,
    )
    assert answer.label == "memory-inefficiency/memory-leak" and answer.reasoning == "frees it"
    with pytest.raises(ReplyError) as info:
        parse_category_reply('{"category": "io/slow", "confidence": 70}', allowed)
    assert info.value.reason == "unknown-category"


def test_prompt_holds_the_task_labels_definitions_and_ambiguity_rule() -> None:
    system, user = label_messages("Speed up the loop")
    text = system["content"]
    for needed in ("Perf", "Non-perf", "confidence", "ambiguous", "JSON"):
        assert needed in text
    assert "Speed up the loop" in user["content"]


@pytest.mark.parametrize(
    ("endpoint", "api", "url"),
    [
        ("http://h:11434", "ollama", "http://h:11434/api/chat"),
        ("http://h:11434/", "ollama", "http://h:11434/api/chat"),
        ("http://h:11434/api", "ollama", "http://h:11434/api/chat"),
        ("http://h:8000", "openai", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1", "openai", "http://h:8000/v1/chat/completions"),
        ("https://api.x/v1/chat/completions", "openai", "https://api.x/v1/chat/completions"),
    ],
)
def test_urls_per_api(endpoint: str, api: str, url: str) -> None:
    assert TeacherConfig(endpoint=endpoint, model="m", api=api).url == url


def test_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="api"):
        TeacherConfig(endpoint="http://h", model="m", api="grpc")
    with pytest.raises(ValueError, match="categories"):
        TeacherConfig(endpoint="http://h", model="m", task="category")


def test_cut_text_uses_the_students_counter() -> None:
    text = "aa bb\ncc dd\nee ff\n"
    assert cut_text(text, 0) == text
    assert cut_text(text, 3) == "aa bb\ncc"
    # A counter that sees two tokens per line keeps whole lines that fit.
    assert cut_text(text, 5, lambda line: len(line.split())) == "aa bb\ncc dd\n"


def test_request_bodies_pin_temperature_zero() -> None:
    for api in ("ollama", "openai"):
        with Teacher(TeacherConfig(endpoint="http://h", model="m", api=api)) as teacher:
            body = teacher.body(teacher.messages("x"))
        temperature = body["options"]["temperature"] if api == "ollama" else body["temperature"]
        assert temperature == 0 and body["stream"] is False

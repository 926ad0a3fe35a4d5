"""The LLM teacher: an OpenAI-compatible or Ollama endpoint asked for a label (or category)
and a confidence per commit.

This package is the front door (it re-exports the client); the work lives in its modules:

* :mod:`engines.labelers.teacher.client`: the HTTP client, retries and thread pool;
* :mod:`engines.labelers.teacher.prompt`: the prompts and the parsing of replies;
* :mod:`engines.labelers.teacher.run`: a teaching run over stored commits;
* :mod:`engines.labelers.teacher.window`: cutting a text where a student's tokenizer would.
"""

from __future__ import annotations

from engines.labelers.teacher.client import (
    APIS,
    RAW_LIMIT,
    TASKS,
    Failure,
    Reply,
    Teacher,
    TeacherConfig,
    TeacherError,
    TokenCounter,
    cut_text,
)

__all__ = [
    "APIS",
    "RAW_LIMIT",
    "TASKS",
    "Failure",
    "Reply",
    "Teacher",
    "TeacherConfig",
    "TeacherError",
    "TokenCounter",
    "cut_text",
]

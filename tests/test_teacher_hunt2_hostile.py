"""``curator teach`` against a real server on 127.0.0.1 that sends hostile bodies: JSON
nested past Python's recursion limit, a number past the integer-digit cap, a body that
does not match its ``Content-Encoding``. Each is one failure of its item; the run goes on,
the other items are stored. Also: an endpoint whose host no resolver can encode, a model
name with a control character, an endpoint with a query string, and the URL a run that
gave up names (without its secrets)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from store import open_store
from tests import raw_sql

DEEP = 100_000  # far past sys.getrecursionlimit()
GOOD = json.dumps({"label": "Perf", "confidence": 90})


def _body(marker: str, path: str) -> tuple[bytes, dict[str, str]]:
    """The raw answer to a commit holding ``marker``, in the shape of the API at ``path``."""

    def chat(content: str) -> bytes:
        message = {"role": "assistant", "content": content}
        if path.startswith("/v1/"):
            return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
        return json.dumps({"message": message}).encode()

    if marker == "DEEPBODY":  # the API's JSON itself nested too deep
        return b"[" * DEEP, {}
    if marker == "DEEPREPLY":  # well-formed API JSON; the model's reply nested too deep
        return chat('{"a":' * DEEP), {}
    if marker == "BIGNUM":  # a confidence with more digits than int() accepts
        return chat('{"label": "Perf", "confidence": ' + "9" * 5000 + "}"), {}
    if marker == "BADGZIP":  # says gzip, is not
        return b"plain bytes", {"Content-Encoding": "gzip"}
    return chat(GOOD), {}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        if self.path.partition("?")[0] not in ("/api/chat", "/v1/chat/completions"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        text = body["messages"][-1]["content"]
        marker = next((m for m in ("DEEPBODY", "DEEPREPLY", "BIGNUM", "BADGZIP") if m in text), "")
        payload, headers = _body(marker, self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    paths: list[str]


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.paths = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def hostile(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


def _import(cli, tmp_path: Path, messages: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pool.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": k, "repo": f"r/{k}", "message": m, "diff": "@@ -1 +1 @@\n-a\n+b\n"})
            + "\n"
            for k, m in messages.items()
        )
    )
    assert cli("import", "items", str(path), "--set", "pool", "--no-prelabel").exit_code == 0


def _stored(tmp_path: Path) -> dict[str, str]:
    with open_store(tmp_path / "cli.db") as store:
        rows = raw_sql.query(
            store,
            "SELECT i.key, p.label FROM predictions AS p JOIN items AS i ON i.id = p.item_id"
            " WHERE p.labeler = 'teacher:m'",
            (),
        )
    return {key: label for key, label in rows}


def test_hostile_bodies_fail_their_item_and_the_run_goes_on(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, hostile: str
) -> None:
    _import(
        cli,
        tmp_path,
        {
            "deep-body": "DEEPBODY",
            "deep-reply": "DEEPREPLY",
            "big": "BIGNUM",
            "gzip": "BADGZIP",
            "ok": "make it faster",
        },
    )
    result = cli(
        "teach", "pool", "--model", "m", "--endpoint", hostile, "--retries", "0",
        "--backoff", "0", "--concurrency", "1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.find("{\n") :])
    assert summary["asked"] == 5 and summary["stored"] == 1
    assert summary["failures"] == {"bad-response": 2, "malformed": 2}
    reasons = {f["reason"] for f in summary["failed_items"]}
    assert reasons == {"bad-response", "malformed"}
    assert any("decoded" in f["detail"] for f in summary["failed_items"])
    assert _stored(tmp_path) == {"ok": "perf"}


@pytest.mark.parametrize(
    "endpoint", ["http://a..b:11434", "http://xn--/", f"http://{'a' * 64}.org"]
)
def test_an_endpoint_host_no_resolver_takes_is_a_usage_error(
    cli, tmp_path: Path, endpoint: str
) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {"a": "faster"})
    result = cli("teach", "pool", "--model", "m", "--endpoint", endpoint)
    assert result.exit_code == 2, result.output
    assert "unexpected" not in result.output
    assert f"endpoint {endpoint!r}" in result.output


@pytest.mark.parametrize("model", ["m\x1b[31mred", "two\nlines", "tab\tbed"])
def test_a_model_name_with_a_control_character_is_refused(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, hostile: str, model: str
) -> None:
    _import(cli, tmp_path, {"a": "faster"})
    result = cli("teach", "pool", "--model", model, "--endpoint", hostile)
    assert result.exit_code == 2, result.output
    assert "control character" in result.output
    with open_store(tmp_path / "cli.db") as store:
        assert raw_sql.query(store, "SELECT labeler FROM predictions", ()) == []


@pytest.mark.parametrize(
    ("api", "suffix", "path"),
    [
        ("openai", "/v1?api-version=2024-06-01", "/v1/chat/completions?api-version=2024-06-01"),
        ("ollama", "/?key=1#part", "/api/chat?key=1"),
    ],
)
def test_an_endpoint_query_string_stays_after_the_api_path(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, server: _Server, hostile: str, api: str, suffix: str, path: str
) -> None:
    _import(cli, tmp_path, {"a": "faster"})
    result = cli("teach", "pool", "--model", "m", "--api", api, "--endpoint", hostile + suffix)
    assert result.exit_code == 0, result.output
    assert server.paths == [path]


def test_a_run_that_gives_up_names_the_url_it_asked_without_secrets(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, hostile: str
) -> None:
    _import(cli, tmp_path, {f"k{i}": f"commit {i}" for i in range(12)})
    host = hostile.removeprefix("http://")
    endpoint = f"http://user:s3cret@{host}/nowhere?key=s3cret"
    result = cli("teach", "pool", "--model", "m", "--endpoint", endpoint, "--json")
    assert result.exit_code == 1, result.output
    summary = json.loads(result.output[result.output.find("{\n") :])
    assert f"at http://{host}/nowhere/api/chat;" in summary["stopped"]
    assert "s3cret" not in result.output

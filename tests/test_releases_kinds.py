"""Kernel and IR records: mined by the real engines (PoCL, clang, llvmlite), exported,
validated, checked against what the store holds, and round-tripped through a store."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.releases.import_release import import_release
from curator.releases.validate import validate_release
from store import open_store
from store.ir import ir_module
from store.kernels import kernel_ids_by_name
from store.sets import NewSet, create_set
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.ir_samples import SAMPLES as IR_SAMPLES
from tests.ir_samples import hash_of

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "sample_data" / "kernels"


def run(db: Path, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two kernels (one refused by the compiler, one checked on PoCL), the
    vecops IR modules, and a kernel set both people labeled."""
    root = tmp_path_factory.mktemp("kinds")
    sources = root / "kernels"
    sources.mkdir()
    for name in ("saxpy.cl", "compile_error.cl"):
        shutil.copy(KERNELS / name, sources / name)
    db = root / "mined.db"
    run(db, "mine", "kernels", str(sources))
    run(db, "check", "kernels", "--unchecked", "--timeout", "2")
    run(db, "mine", "ir", "--build", str(IR_SAMPLES / "vecops"))
    with open_store(db) as store:
        ids = [*kernel_ids_by_name(store, "saxpy"), *kernel_ids_by_name(store, "broken")]
        gt = create_set(store, NewSet("kernels-gt", "kernel", ["keep", "reject"]), ids)
        append_votes(
            store,
            [
                VoteRow(ids[0], who, "keep", set_id=gt.id) for who in ("ann", "ben")
            ] + [VoteRow(ids[1], who, "reject", set_id=gt.id) for who in ("ann", "ben")],
        )  # fmt: skip
    return db


def records(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r.get("kernel_name") or r["path"]: r for r in rows}


def test_kernel_and_ir_records_carry_sources_verdicts_hashes(mined: Path, tmp_path: Path) -> None:
    run(mined, "export", "v1", "--out", str(tmp_path))
    release = tmp_path / "v1"
    assert validate_release(release).ok
    kernels = records(release / "kernel.jsonl")
    broken, saxpy = kernels["broken"], kernels["saxpy"]
    assert broken["filter_status"] == "rejected" and broken["verdict"] == "compile-error"
    assert "undeclared_helper" in broken["compiler_message"] and broken["normalized_source"] is None
    assert saxpy["verdict"] == "useful" and saxpy["check_details"]["transfer_bytes"] > 0
    assert saxpy["features"]["mem"] == 3 and saxpy["normalized_source"].startswith("typedef")
    assert saxpy["label"] == "keep" and {v["annotator"] for v in saxpy["votes"]} == {"ann", "ben"}
    assert broken["label"] == "reject" and broken["provenance"]["line"] > 0

    modules = records(release / "ir.jsonl")
    assert len(modules) == 2
    with open_store(mined) as store:
        for module in modules.values():
            bitcode = base64.b64decode(module["bitcode_base64"])
            stored = ir_module(store, raw_sql.scalar(store,
                "SELECT id FROM items WHERE kind = 'ir' AND key = ?", (module["key"],)
            ))  # fmt: skip
            assert stored is not None and bytes(stored["bitcode"]) == bitcode
            assert module["structural_hash"] == module["key"] == hash_of(bitcode)
            assert module["license"] == stored["license"] and module["opcodes"]
            assert module["input_sha256"] and module["provenance"]["project"] == "vecops"
    sheet = (release / "DATASHEET.md").read_text()
    assert "### ir" in sheet and "| license | records | share |" in sheet
    assert "compile-error 1" in sheet


def test_kernels_and_ir_round_trip_through_another_store(mined: Path, tmp_path: Path) -> None:
    kernel_args = ("--labels", "adjudicated", "--kind", "kernel")
    run(mined, "export", "v1", *kernel_args, "--out", str(tmp_path / "a"))
    run(mined, "export", "v2", "--kind", "ir", "--gzip", "--out", str(tmp_path / "a"))
    other = tmp_path / "other.db"
    with open_store(other) as store:
        for version in ("v1", "v2"):
            result = import_release(store, tmp_path / "a" / version)
            assert list(result.outcomes.values()) == [{"stored": 2}]
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_inputs WHERE status = 'stored'") == 2
    run(other, "export", "v1", *kernel_args, "--out", str(tmp_path / "b"))
    run(other, "export", "v2", "--kind", "ir", "--gzip", "--out", str(tmp_path / "b"))
    for name in ("v1/kernel.jsonl", "v2/ir.jsonl.gz", "v2/schema/ir.schema.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def reseal(release: Path) -> None:
    """Rewrite the manifest's sizes and checksums to match the files as they are now."""
    manifest = json.loads((release / "manifest.json").read_text())
    for name, entry in manifest["files"].items():
        data = (release / name).read_bytes()
        entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (release / "manifest.json").write_text(json.dumps(manifest))


def test_a_record_the_store_refuses_is_named_and_nothing_is_imported(
    mined: Path, tmp_path: Path
) -> None:
    run(mined, "export", "v1", "--kind", "ir", "--kind", "kernel", "--out", str(tmp_path))
    release = tmp_path / "v1"
    lines = (release / "ir.jsonl").read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["bitcode_base64"] = "not base64 at all"
    lines[1] = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
    (release / "ir.jsonl").write_text("".join(lines))
    reseal(release)
    assert validate_release(release).ok  # well formed, so only the store can refuse it
    other = tmp_path / "other.db"
    result = CliRunner().invoke(app, ["import", "release", str(release), "--db", str(other)])
    assert result.exit_code == 1
    shown = " ".join(result.stderr.split())
    assert f"{release}/ir.jsonl:2: cannot be stored" in shown and "nothing was stored" in shown
    with open_store(other) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM releases") == 0


def rounded(value: object) -> object:
    """``value`` with every float rounded to 12 significant digits: Arrow's JSON reader
    may give a timing such as 1.954 back as 1.9540000000000002."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def test_each_kind_is_a_config_of_the_hugging_face_dataset(mined: Path, tmp_path: Path) -> None:
    """Kernels and IR load with ``datasets`` too, one config per kind, none sharing a split."""
    from datasets import load_dataset

    run(mined, "export", "hf", "--out", str(tmp_path))
    release = tmp_path / "hf"
    cache = str(tmp_path / "hf-cache")
    default = load_dataset(str(release), cache_dir=cache)  # the first kind, alphabetically
    assert rounded(list(default["train"])) == rounded(list(records(release / "ir.jsonl").values()))
    kernels = load_dataset(str(release), "kernel", cache_dir=cache)
    loaded = rounded(list(kernels["train"]))
    assert loaded == rounded(list(records(release / "kernel.jsonl").values()))

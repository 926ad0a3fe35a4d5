"""``curator mine kernels --refilter``: kernels an older Curator refused are filtered
again as this one filters them (a type looked up in the tree's headers), from the tree
they were mined from. A re-mine alone never does it: an unchanged kernel is ``known``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.kernels.checker import KernelWorker
from engines.kernels.pipeline import mine_kernels, refilter_kernels
from engines.kernels.rewrite import source_hash
from engines.kernels.scrape import candidate_keys, scrape_text
from engines.reporting import SilentReporter
from store import Store, open_store
from store.kernel_records import KernelCheck, KernelRow
from store.kernels import kernel_row, save_checks, save_kernel_batch
from store.votes import VoteRow, append_votes, vote_history
from tests import raw_sql

# the host prepends the header to every kernel: the kernels never include it
SHAPE_HEADER = """\
#pragma once
typedef struct Shape_t {
    int n;
    int stride;
    float scale;
} Shape;
"""
SCALE = """\
kernel void scale(global float *out, const Shape s, global const float *in) {
    int i = get_global_id(0);
    if (i < s.n) out[i * s.stride] = s.scale * in[i];
}
"""
# the same kernel as the rewriter writes it, whatever its names
RENAMED = (
    SCALE.replace("scale(", "stretch(")
    .replace("out", "dst")
    .replace("in[", "src[")
    .replace("*in)", "*src)")
)
ADD = """\
kernel void add(global float *out, global const float *in) {
    int i = get_global_id(0);
    out[i] = in[i] + 1.0f;
}
"""
# what a Curator without the type lookup stored: Shape guessed as a float, refused
OLD_MESSAGE = (
    "error: kernel.cl:3:15: member reference base type 'Shape' (aka 'float') is not a"
    " structure or union"
)


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


def _tree(root: Path, *kernel_files: str) -> Path:
    (root / "include").mkdir(parents=True)
    (root / "include" / "shape.h").write_text(SHAPE_HEADER)
    (root / "kernels").mkdir()
    for i, name in enumerate(kernel_files):
        text = SCALE if i == 0 else RENAMED.replace("dst", f"dst{i}")
        (root / "kernels" / name).write_text(text)
    (root / "kernels" / "add.cl").write_text(ADD)
    return root.resolve()


def _store_as_old_curator(store: Store, root: Path, rel: str) -> int:
    """The row an older Curator stored for ``rel``'s kernel: refused, the struct guessed."""
    text = (root / rel).read_text()
    scraped = scrape_text(text, rel, root / rel, root, None)
    (cand,), (key,) = scraped.candidates, candidate_keys(scraped.candidates)
    source = str(root)
    row = KernelRow(
        source=source,
        key=f"{source}::{key}",
        source_file=cand.file,
        kernel_name=cand.name,
        origin=cand.origin,
        original_source=cand.source,
        normalized_source=None,
        normalized_hash=source_hash(cand.source),
        shim_needed=False,
        shim_names=[],
        accepted=False,
        instructions=None,
        message=OLD_MESSAGE,
        verdict="compile-error",
        provenance={
            "line": cand.line,
            "includes": [],
            "assumed": [{"name": "Shape", "line": "typedef float Shape;", "origin": "guess"}],
        },
    )
    (saved,) = save_kernel_batch(store, [row])
    assert saved.status == "stored"
    return saved.item_id


def _mine(store: Store, root: Path, worker: KernelWorker) -> None:
    (summary,) = mine_kernels(store, [str(root)], worker=worker)
    assert summary.failed is None


def test_a_rerun_alone_leaves_an_old_refusal_and_refilter_accepts_it(
    tmp_path: Path, worker: KernelWorker
) -> None:
    root = _tree(tmp_path / "tree", "scale.cl")
    with open_store(tmp_path / "k.db") as store:
        old = _store_as_old_curator(store, root, "kernels/scale.cl")
        _mine(store, root, worker)  # stores add.cl's kernel; scale is known: skipped
        assert kernel_row(store, old)["filter_status"] == "rejected"  # type: ignore[index]
        append_votes(store, [VoteRow(old, "alice", "useful")])

        reporter = SilentReporter()
        (dry,) = refilter_kernels(store, [str(root)], worker=worker, dry_run=True)
        assert (dry.refiltered, dry.now_accepted, dry.skipped) == (1, 1, 1)
        assert kernel_row(store, old)["filter_status"] == "rejected"  # type: ignore[index]

        (summary,) = refilter_kernels(store, [str(root)], reporter=reporter, worker=worker)
        assert (summary.refiltered, summary.now_accepted, summary.skipped) == (1, 1, 1)
        assert not summary.still_refused and not reporter.problems
        row = kernel_row(store, old)
        assert row is not None
        assert row["filter_status"] == "accepted" and row["verdict"] is None
        assert row["message"] is None
        # the struct comes from the header, not a guess
        assert "} Shape;" in str(row["normalized_source"])
        assert row["normalized_hash"] == source_hash(str(row["normalized_source"]))
        provenance = json.loads(
            str(raw_sql.scalar(store, "SELECT provenance FROM items WHERE id = ?", (old,)))
        )
        # the guess an older Curator made is gone; the struct came from the header
        assert all(a.get("origin") != "guess" for a in provenance.get("assumed", []))
        assert "refusal" not in provenance and provenance["line"] == 1
        assert [v["label"] for v in vote_history(store, old)] == ["useful"]

        # nothing refused is left: a second run re-filters nothing
        (again,) = refilter_kernels(store, [str(root)], worker=worker)
        assert (again.refiltered, again.skipped) == (0, 2)


def test_one_that_now_repeats_another_is_merged_unless_it_has_votes(
    tmp_path: Path, worker: KernelWorker
) -> None:
    root = _tree(tmp_path / "tree", "a.cl", "b.cl", "c.cl")
    with open_store(tmp_path / "k.db") as store:
        b = _store_as_old_curator(store, root, "kernels/b.cl")
        c = _store_as_old_curator(store, root, "kernels/c.cl")
        _mine(store, root, worker)  # a.cl's copy is stored and accepted today
        a = int(
            raw_sql.scalar(  # type: ignore[arg-type]
                store, "SELECT item_id FROM kernels WHERE source_file = 'kernels/a.cl'"
            )
        )
        append_votes(store, [VoteRow(c, "bob", "useful")])

        (summary,) = refilter_kernels(store, [str(root)], worker=worker)
        assert (summary.refiltered, summary.now_accepted, summary.merged) == (2, 2, 1)
        # b had nothing hanging on it: it is now a duplicate of a, as a mine would link it
        assert kernel_row(store, b) is None
        linked = raw_sql.query(
            store,
            "SELECT key, original_item_id, matched_on FROM duplicates WHERE key LIKE ?",
            ("%kernels/b.cl%",),
        )
        assert [(r[1], r[2]) for r in linked] == [(a, "normalized_hash")]
        # c has a vote: kept, accepted, its vote with it, and named
        assert kernel_row(store, c)["filter_status"] == "accepted"  # type: ignore[index]
        assert [v["label"] for v in vote_history(store, c)] == ["useful"]
        assert len(summary.kept) == 1 and f"#{c}" in summary.kept[0]
        assert "votes" in summary.kept[0] and f"#{a}" in summary.kept[0]


def test_cli_refilter_prints_one_line_and_dry_run_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _tree(tmp_path / "tree", "scale.cl")
    assert cli("mine", "kernels", str(root)).exit_code == 0
    with open_store(tmp_path / "cli.db") as store:
        item = int(raw_sql.scalar(store, "SELECT item_id FROM kernels WHERE kernel_name = 'scale'"))  # type: ignore[arg-type]
        raw_sql.connection(store).execute(
            "UPDATE kernels SET filter_status = 'rejected', verdict = 'compile-error',"
            " message = ?, normalized_source = NULL WHERE item_id = ?",
            (OLD_MESSAGE, item),
        )
        raw_sql.connection(store).commit()
    (tmp_path / "tree" / "kernels" / "broken.cl").write_text(
        "kernel void broken(global Nope *x) { x[0].v = 1; }\n"
    )
    # a struct found nowhere: mined (refused) so that it is stored and seen again
    assert cli("mine", "kernels", str(root)).exit_code == 0

    dry = cli("mine", "kernels", "--refilter", "--dry-run", str(root))
    assert dry.exit_code == 0, dry.output
    lines = [line for line in dry.output.splitlines() if "re-filtered" in line]
    assert len(lines) == 1
    assert "2 re-filtered: 1 now accepted, 1 still refused" in lines[0]
    assert "still refused (unknown-type 1)" in lines[0]
    assert "dry run, nothing written" in lines[0]
    # the kernel still refused is named on a line of its own
    assert "kernels/broken.cl::broken: type Nope is used as a struct" in dry.output
    with open_store(tmp_path / "cli.db") as store:
        assert kernel_row(store, item)["filter_status"] == "rejected"  # type: ignore[index]

    done = cli("mine", "kernels", "--refilter", "--json", str(root))
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["refiltered"] == 2 and report["now_accepted"] == 1
    (source,) = report["sources"]
    assert source["skipped_accepted"] == 1 and sum(source["still_refused"].values()) == 1
    assert report["written"] is True
    with open_store(tmp_path / "cli.db") as store:
        assert kernel_row(store, item)["filter_status"] == "accepted"  # type: ignore[index]


def test_cli_refilter_flags_go_together(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("mine", "kernels", "--dry-run", str(tmp_path))
    assert result.exit_code == 2
    assert "--dry-run goes with --refilter" in result.output


def test_all_refilters_accepted_kernels_and_keeps_a_check_that_still_holds(
    tmp_path: Path, worker: KernelWorker
) -> None:
    root = _tree(tmp_path / "tree", "scale.cl")
    with open_store(tmp_path / "k.db") as store:
        _mine(store, root, worker)
        ids = [int(r[0]) for r in raw_sql.query(store, "SELECT item_id FROM kernels")]
        save_checks(store, [KernelCheck(i, "useful", {"payload_policy": "clgen"}, {}) for i in ids])

        (summary,) = refilter_kernels(store, [str(root)], worker=worker, everything=True)
        assert (summary.refiltered, summary.still_accepted, summary.unchanged) == (2, 2, 2)
        for item_id in ids:
            row = kernel_row(store, item_id)
            assert row is not None and row["verdict"] == "useful" and row["checked_at"]

        # a kernel stored as accepted with another normalised source (an older rewriter)
        # is written anew and unchecked again
        raw_sql.connection(store).execute(
            "UPDATE kernels SET normalized_source = 'old', normalized_hash = 'old'"
            " WHERE item_id = ?",
            (ids[0],),
        )
        raw_sql.connection(store).commit()
        (again,) = refilter_kernels(store, [str(root)], worker=worker, everything=True)
        assert (again.refiltered, again.unchanged) == (2, 1)
        row = kernel_row(store, ids[0])
        assert row is not None and row["normalized_source"] != "old"
        assert row["verdict"] is None and row["checked_at"] is None

"""``curator.training.run_training`` as a UI drives it: progress reports, then a cancel
that stops training and registers nothing."""

from __future__ import annotations

import threading
from pathlib import Path

from annotation.importing import import_items_file, import_votes_file
from curator.training import TrainRequest, run_training
from engines.commits.representation import model_input
from engines.labelers.student import TrainConfig, TrainProgress
from store import Store
from store.models import list_models
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"


def test_cancel_stops_training_and_registers_nothing(store: Store, tmp_path: Path) -> None:
    import_items_file(store, SAMPLE / "items.jsonl", "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")
    cancel = threading.Event()
    seen: list[TrainProgress] = []

    def progress(report: TrainProgress) -> None:
        seen.append(report)
        if report.step >= 2:
            cancel.set()  # as a Cancel button would, from another thread

    config = TrainConfig(epochs=3, batch_size=4, max_length=32)
    outcome = run_training(
        store, TrainRequest(vote_sets=("gt-sample",), config=config), progress, cancel
    )
    assert outcome.cancelled and outcome.model is None
    assert [r.step for r in seen] == [1, 2]
    assert all(r.epoch == 1 and r.epochs == 3 and r.loss is not None for r in seen)
    assert seen[0].steps == 3 * -(-outcome.counts["train_total"] // 4)
    assert list_models(store) == []
    assert [p.name for p in (tmp_path / "models").iterdir()] == []  # staging removed


def test_a_cancel_during_a_tfidf_fit_registers_nothing(store: Store, tmp_path: Path) -> None:
    """A TF-IDF fit checks no cancel flag while it runs; a cancel that came meanwhile is
    honoured before the model is registered (the app's esc registered it anyway)."""
    import_items_file(store, SAMPLE / "items.jsonl", "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")
    cancel = threading.Event()
    cancel.set()  # pressed while the fit ran
    outcome = run_training(
        store,
        TrainRequest(kind="tfidf-lr", vote_sets=("gt-sample",), config=TrainConfig()),
        lambda _: None,
        cancel,
    )
    assert outcome.cancelled and outcome.model is None
    assert list_models(store) == []
    assert [p.name for p in (tmp_path / "models").iterdir()] == []


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(
    store: Store, tmp_path: Path
) -> None:
    """A training child killed from the app left its staged weights (90 MB) for good."""
    import subprocess

    from engines.abandoned import host_name

    import_items_file(store, SAMPLE / "items.jsonl", "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")
    gone = subprocess.Popen(["true"])
    gone.wait()
    models = tmp_path / "models"
    left = models / f".staging-{host_name()}+{gone.pid}+a1b2"
    elsewhere = models / f".staging-other-machine+{gone.pid}+c3d4"
    for folder in (left, elsewhere):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"\0" * 64)
    outcome = run_training(
        store,
        TrainRequest(kind="tfidf-lr", vote_sets=("gt-sample",), config=TrainConfig()),
        lambda _: None,
    )
    assert outcome.model is not None
    assert not left.exists() and elsewhere.exists()  # another machine's run may be alive
    assert sorted(p.name for p in models.iterdir()) == [elsewhere.name, outcome.model.name]

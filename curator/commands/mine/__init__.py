"""``curator mine``: the one place the group is built from its commands, each
imported only when it runs (mining commits never loads the kernel or IR engines)."""

from __future__ import annotations

import typer

from curator.lazy_group import Lazy, LazyGroup

M = "curator.commands.mine"


class MineGroup(LazyGroup):
    """``mine commits|kernels|ir|reread``."""

    LAZY = (
        Lazy(
            "commits",
            f"{M}.commits:mine_commits_command",
            "Mine single-file, single-function commits and pre-label them with keywords (and"
            " any --labeler), in this process or on a Dask cluster.",
        ),
        Lazy(
            "kernels",
            f"{M}.kernels:mine_kernels_command",
            "Scrape OpenCL kernels, filter, normalise, featurise and store them.",
        ),
        Lazy(
            "ir",
            f"{M}.ir:mine_ir_command",
            "Ingest LLVM IR modules: structural-hash dedup, provenance, license, statistics.",
        ),
        Lazy(
            "reread",
            f"{M}.reread:mine_reread_command",
            "Write the model input of stored commits again, as this Curator makes it.",
        ),
    )


app = typer.Typer(cls=MineGroup, help="Mine candidates into the store.", no_args_is_help=True)

"""The item detail screen's action bar: commands that engines contribute per item kind.

An action runs in a thread worker with a progress callback and a cancel flag, and
returns a one-line result for the status bar. The app builds one
:class:`ActionRegistry` and registers its actions where it is built
(``curator/tui/app.py``); the detail screen lists the actions for the kind on screen and
binds their keys.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from curator.tui.service import CurationService


@dataclass
class ActionContext:
    """What an action gets: the service, the item, and ways to report and stop."""

    service: CurationService
    item_id: int
    progress: Callable[[float, str], None]
    copy: Callable[[str], None]
    cancelled: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class ItemAction:
    key: str
    label: str
    kinds: frozenset[str]
    run: Callable[[ActionContext], str]
    changes_item: bool = False


class ActionRegistry:
    """The actions of one app, in the order they were registered."""

    def __init__(self, actions: Iterable[ItemAction] = ()) -> None:
        self._actions: list[ItemAction] = []
        for action in actions:
            self.register(action)

    def register(self, action: ItemAction) -> ItemAction:
        """Add an action; a later registration with the same key and kind replaces it."""
        self._actions = [
            a for a in self._actions if not (a.key == action.key and a.kinds & action.kinds)
        ]
        self._actions.append(action)
        return action

    def for_kind(self, kind: str) -> list[ItemAction]:
        return [a for a in self._actions if kind in a.kinds]


def _copy_key(ctx: ActionContext) -> str:
    view = ctx.service.item(None, ctx.item_id)
    if view is None:
        return f"item #{ctx.item_id} no longer exists"
    ctx.copy(view.key)
    return f"copied {view.key} to the clipboard"


COPY_KEY = ItemAction(
    key="y",
    label="copy key",
    kinds=frozenset({"commit", "kernel", "ir"}),
    run=_copy_key,
)

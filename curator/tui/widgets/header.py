"""The screens' header: Textual's Header, whose title update survives a screen that is
left as soon as it opens."""

from __future__ import annotations

import contextlib

from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderTitle


class TitleHeader(Header):
    """:class:`Header` that shows the app's and the screen's titles as they change.

    Textual's Header puts the title in through a callback that runs just after it is
    mounted; on a screen left at once (esc typed right after enter) the title widget
    is already removed by then, and the update raised NoMatches, which closed the app.
    Here an update with nothing left to update does nothing."""

    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # Header's own watchers, whose update raises

        async def set_title() -> None:
            with contextlib.suppress(NoScreen):
                for title in self.query(HeaderTitle):
                    title.update(self.format_title())

        for node in (self.app, self.screen):
            self.watch(node, "title", set_title)
            self.watch(node, "sub_title", set_title)

"""The Curator app: screens over one database for one annotator."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from curator.presentation.text import one_line
from curator.tui import STYLES
from curator.tui.actions import COPY_KEY, ActionRegistry
from curator.tui.kernel_actions import CHECK_KERNEL
from curator.tui.screens.help import HelpScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.service import CurationService


class CuratorApp(App[None]):
    """Keyboard-first annotation: home, label, review, audit, agreement, item detail."""

    TITLE = "Curator"
    ENABLE_COMMAND_PALETTE = False
    CSS_PATH: ClassVar[list[str | PurePath]] = [STYLES / "app.tcss", STYLES / "item_panel.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Keys", key_display="?"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+t", "flip_theme", "Light/dark", show=False),
    ]

    def __init__(
        self,
        db_path: Path,
        annotator: str,
        open_set: str | None = None,
        theme: str | None = None,
        kernel_memory_mb: int | None = None,
        opencl_device: str | None = None,
        lease_minutes: int = 10,
        cache: Path | None = None,
    ) -> None:
        super().__init__()
        if theme:
            self.theme = theme
        self.service: CurationService = CurationService(
            db_path, annotator, kernel_memory_mb, opencl_device, lease_minutes, cache
        )
        # The item detail screen's actions, registered here (engines contribute some).
        self.item_actions = ActionRegistry([COPY_KEY, CHECK_KERNEL])
        self.annotator = annotator
        self.open_set = open_set
        self.sub_title = f"{annotator} · {Path(db_path).name}"

    def on_mount(self) -> None:
        self.push_screen(HomeScreen(open_set=self.open_set))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_flip_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def say(self, message: str, error: bool = False, warning: bool = False) -> None:
        """A notification whose text is shown literally (it may quote user input).

        A warning (something the annotator's key press changed besides what they
        meant, such as a vote lost elsewhere) stays longest: it is read after the next
        item is already on screen."""
        severity = "error" if error else "warning" if warning else "information"
        self.notify(
            one_line(message, 300).plain,
            severity=severity,
            timeout={"error": 6.0, "warning": 12.0}.get(severity, 3.0),
            markup=False,
        )

    def on_unmount(self) -> None:
        self.service.close()

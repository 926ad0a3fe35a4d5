"""Keys in the order typed, each for the screen it was typed on.

Textual runs a key's binding only once the key has bubbled up to the app, after the
keys already queued behind it have reached the screen, and then looks the binding up
on whatever screen is shown at that moment. Two keys typed fast (one terminal read, or
keys queued while the app was busy) were thus both delivered to one screen, and the
second ran on the screen the first had opened or gone back to: ``q`` ``q`` on a
sub-screen went back, then quit the app from the home screen.

:func:`keys_in_order` is what every Curator screen's ``on_key`` does: a key reaching a
shown screen runs its binding there and then (as the app would, only sooner), and a
key reaching a screen that has since been closed does nothing, since it was typed for
that screen. Quitting thus takes a ``q`` typed on the home screen; two deliberate
presses (the second once home is shown) go back, then quit. A key reaching a screen
another screen has been opened over (``d`` then esc: the detail screen opened over the
label screen) goes on to the app and acts on the new screen, as before; if that screen
has not composed its widgets yet, its actions do nothing (:func:`ready`, which each
screen's ``check_action`` answers with) rather than fail to find them.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import Screen


def closed(screen: Screen[Any]) -> bool:
    """Whether ``screen`` has left the app's stack (popped or dismissed)."""
    try:
        return screen not in screen.app.screen_stack
    except Exception:  # no app any more: the app is closing
        return True


def ready(screen: Screen[Any]) -> bool:
    """Whether ``screen`` has composed and mounted its widgets, so that its actions can
    run: a key typed right behind the one that opened it (``/`` then ``ctrl+o``) can
    reach the app while the new screen is still empty."""
    return screen.is_mounted


async def run_binding_now(screen: Screen[Any], event: events.Key) -> bool:
    """Run the key's binding now, as the app would once the key reached it (later,
    after keys typed after it); whether there was one."""
    active = screen.active_bindings.get(event.key)
    if active is None or active.binding.priority or not active.enabled:
        return False
    event.stop()
    event.prevent_default()
    await screen.app.run_action(active.binding.action, active.node)
    return True


async def keys_in_order(screen: Screen[Any], event: events.Key) -> None:
    """Handle a key that has reached ``screen`` (its ``on_key``): see the module."""
    if closed(screen):
        event.stop()
        event.prevent_default()
        return
    if screen.is_active:
        await run_binding_now(screen, event)

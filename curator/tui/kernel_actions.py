"""The kernel engine's commands on the item detail screen.

``r`` runs the dynamic checker (CLgen's four-run test) on the kernel on screen, in the
same worker child the headless ``curator check kernels`` uses, and stores the verdict
with its details and dynamic features (:meth:`CurationService.check_kernel`). Esc kills
the child; nothing is stored then. The app registers :data:`CHECK_KERNEL`.
"""

from __future__ import annotations

from curator.tui.actions import ActionContext, ItemAction


def run_dynamic_check(ctx: ActionContext) -> str:
    return ctx.service.check_kernel(ctx.item_id, ctx.progress, ctx.cancelled)


CHECK_KERNEL = ItemAction(
    key="r",
    label="run dynamic check",
    kinds=frozenset({"kernel"}),
    run=run_dynamic_check,
    changes_item=True,
)

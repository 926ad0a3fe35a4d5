"""The kernel engine's commands on the item detail screen.

``r`` runs the dynamic checker (CLgen's four-run test) on the kernel on screen, in the
same worker child the headless ``curator check kernels`` uses, and stores the verdict
with its details and dynamic features. Esc kills the child; nothing is stored then.
"""

from __future__ import annotations

import threading

from curator.tui.actions import ActionContext, ItemAction, register
from store.kernels import get_kernel, save_checks


class _Cancelled(Exception):
    pass


def run_dynamic_check(ctx: ActionContext) -> str:
    # Imported here: numpy and the checker stay out of the app's start-up.
    from engines.kernels.checker import KernelWorker
    from engines.kernels.pipeline import CheckSettings, check_one

    kernel = ctx.service.slow(lambda store: get_kernel(store, ctx.item_id))
    if kernel is None:
        return f"item #{ctx.item_id} is not a stored kernel"
    if not kernel.accepted:
        return (
            f"{kernel.kernel_name} was refused by the rejection filter "
            f"({kernel.verdict}): nothing to run"
        )
    ctx.progress(0.0, f"checking {kernel.kernel_name}: starting the OpenCL worker")
    worker = KernelWorker()
    finished = threading.Event()

    def watch() -> None:
        # The checker waits on the child for seconds at a time; esc must not.
        while not finished.wait(0.05):
            if ctx.cancelled.is_set():
                worker.interrupt()
                return

    def stage(name: str, fraction: float) -> None:
        if ctx.cancelled.is_set():
            raise _Cancelled
        ctx.progress(fraction, f"checking {kernel.kernel_name}: {name}")

    watcher = threading.Thread(target=watch, name="kernel-check-cancel", daemon=True)
    watcher.start()
    try:
        result = check_one(worker, kernel, CheckSettings(), on_stage=stage)
    except _Cancelled:
        result = None
    finally:
        finished.set()
        worker.close()
        watcher.join()
    if result is None or ctx.cancelled.is_set():
        return f"check of {kernel.kernel_name} cancelled; its stored verdict is unchanged"
    ctx.service.quick(lambda store: save_checks(store, [result]))
    ctx.progress(1.0, f"checked {kernel.kernel_name}: {result.verdict}")
    message = result.details.get("message") or result.details.get("reason") or ""
    tail = f" ({message})" if message else ""
    return f"{kernel.kernel_name}: {result.verdict}{tail}"


CHECK_KERNEL = register(
    ItemAction(
        key="r",
        label="run dynamic check",
        kinds=frozenset({"kernel"}),
        run=run_dynamic_check,
        changes_item=True,
    )
)

"""Kernel checks from the item detail screen: CLgen's four-run dynamic test on one
stored kernel, in the same worker child the headless ``curator check kernels`` uses,
with its verdict, details and dynamic features stored. (A kernel's or an IR module's
stored detail reaches the screen through :meth:`QueueService.item`.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from curator.tui.service.lanes import ServiceBase
from store.kernel_records import KernelCheck, StoredKernel
from store.kernels import get_kernel, save_checks


class _Cancelled(Exception):
    pass


class KernelService(ServiceBase):
    """Stored kernels and their dynamic check."""

    def kernel(self, item_id: int) -> StoredKernel | None:
        return self._slow(lambda s: get_kernel(s, item_id))

    def save_kernel_check(self, check: KernelCheck) -> None:
        self._quick(lambda s: save_checks(s, [check]))

    def check_kernel(
        self,
        item_id: int,
        progress: Callable[[float, str], None],
        cancelled: threading.Event,
    ) -> str:
        """Run the dynamic check on one kernel and store its verdict; a one-line result.
        Call from a worker; setting ``cancelled`` kills the child and stores nothing."""
        # Imported here: numpy and the checker stay out of the app's start-up.
        from engines.kernels.checker import KernelWorker
        from engines.kernels.pipeline import CheckSettings, check_one

        kernel = self.kernel(item_id)
        if kernel is None:
            return f"item #{item_id} is not a stored kernel"
        if not kernel.accepted:
            return (
                f"{kernel.kernel_name} was refused by the rejection filter "
                f"({kernel.verdict}): nothing to run"
            )
        progress(0.0, f"checking {kernel.kernel_name}: starting the OpenCL worker")
        worker = (
            KernelWorker(device=self.opencl_device)
            if self.kernel_memory_mb is None
            else KernelWorker(memory_mb=self.kernel_memory_mb, device=self.opencl_device)
        )
        finished = threading.Event()

        def watch() -> None:
            # The checker waits on the child for seconds at a time; esc must not.
            while not finished.wait(0.05):
                if cancelled.is_set():
                    worker.interrupt()
                    return

        def stage(name: str, fraction: float) -> None:
            if cancelled.is_set():
                raise _Cancelled
            progress(fraction, f"checking {kernel.kernel_name}: {name}")

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
        if result is None or cancelled.is_set():
            return f"check of {kernel.kernel_name} cancelled; its stored verdict is unchanged"
        self.save_kernel_check(result)
        progress(1.0, f"checked {kernel.kernel_name}: {result.verdict}")
        message = result.details.get("message") or result.details.get("reason") or ""
        tail = f" ({message})" if message else ""
        return f"{kernel.kernel_name}: {result.verdict}{tail}"

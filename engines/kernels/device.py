"""OpenCL through pyopencl: pick a working device, build programs, run kernels.

Only the worker child process imports this module: a kernel that hangs or crashes
the runtime then takes down the child, never the application.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.cltypes as cltypes

from engines.kernels.payload import ArgSpec, Payload, resolve_type, typedefs

BUILD_OPTIONS = ["-cl-kernel-arg-info"]
PROBE = "__kernel void probe(__global float* a) { a[get_global_id(0)] *= 2.0f; }"
_ADDRESS = {
    cl.kernel_arg_address_qualifier.GLOBAL: "global",
    cl.kernel_arg_address_qualifier.LOCAL: "local",
    cl.kernel_arg_address_qualifier.CONSTANT: "constant",
    cl.kernel_arg_address_qualifier.PRIVATE: "private",
}


_TEMP_FILE = re.compile(r"[^\s:]*tempfile_\w+\.cl")


class DeviceError(Exception):
    """No OpenCL device here can build a trivial kernel."""


@dataclass
class Runtime:
    context: Any
    queue: Any
    device: Any
    description: str


@dataclass
class Built:
    ok: bool
    message: str
    kernels: list[str] = field(default_factory=list)
    program: Any = None


_runtime: Runtime | None = None


def runtime(wanted: str = "") -> Runtime:
    """The first device whose "platform / device" name contains ``wanted`` (any when
    empty) that builds and runs a probe kernel; some installed platforms cannot compile
    for the host CPU. The first call picks; later calls get the same device."""
    global _runtime
    if _runtime is not None:
        return _runtime
    wanted = wanted.lower()
    problems = []
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            description = f"{platform.name} / {device.name}"
            if wanted and wanted not in description.lower():
                continue
            try:
                context = cl.Context([device])
                queue = cl.CommandQueue(context)
                program = cl.Program(context, PROBE).build()
                data = np.ones(4, dtype=np.float32)
                buf = cl.Buffer(
                    context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data
                )
                program.probe(queue, (4,), None, buf)
                cl.enqueue_copy(queue, data, buf)
                queue.finish()
                if not np.allclose(data, 2.0):
                    raise DeviceError("probe kernel computed a wrong result")
            except Exception as exc:  # any failure just rules this device out
                problems.append(f"{description}: {first_line(str(exc))}")
                continue
            _runtime = Runtime(context, queue, device, description)
            return _runtime
    raise DeviceError("no usable OpenCL device (" + "; ".join(problems or ["none found"]) + ")")


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or [""])[-1][:300]


def compiler_message(exc: Exception) -> str:
    """The compiler's diagnostics from a failed build, without pyopencl's wrapping."""
    text = str(exc)
    m = re.search(r"Build on <[^\n]*>:\n(.*?)(?:\n\(options:|\Z)", text, re.DOTALL)
    body = m.group(1) if m else text
    lines = [
        ln
        for ln in body.strip().splitlines()
        if not ln.startswith("Device ") or "failed to build" not in ln
    ]
    message = "\n".join(lines).strip() or first_line(text)
    return _TEMP_FILE.sub("kernel.cl", message)


def build(source: str) -> Built:
    rt = runtime()
    try:
        program = cl.Program(rt.context, source).build(options=BUILD_OPTIONS)
    except cl.RuntimeError as exc:
        return Built(False, compiler_message(exc))
    except cl.Error as exc:
        return Built(False, first_line(str(exc)))
    names = [k.function_name for k in program.all_kernels()]
    return Built(True, "", names, program)


def arg_specs(kernel: Any) -> list[ArgSpec]:
    specs = []
    for i in range(kernel.num_args):
        address = _ADDRESS.get(kernel.get_arg_info(i, cl.kernel_arg_info.ADDRESS_QUALIFIER))
        type_name = kernel.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME)
        qualifier = kernel.get_arg_info(i, cl.kernel_arg_info.TYPE_QUALIFIER)
        name = kernel.get_arg_info(i, cl.kernel_arg_info.NAME)
        const = bool(qualifier & cl.kernel_arg_type_qualifier.CONST)
        specs.append(ArgSpec(name, address or "private", type_name, const))
    return specs


def local_size_for(kernel: Any, global_size: int, wanted: int) -> int:
    """The requested work-group size, lowered to what the kernel allows and to a
    divisor of the global size."""
    return local_shape_for(kernel, (global_size,), wanted)[0]


def local_shape_for(kernel: Any, shape: tuple[int, ...], wanted: int) -> tuple[int, ...]:
    """A work-group shape for the range ``shape``: the kernel's required size when it
    names one, else ``wanted`` work-items in 1-D, 16 x 16 in 2-D, 8 x 8 x 8 in 3-D,
    each side a divisor of the range's side, the product within the kernel's limit."""
    rt = runtime()
    required = kernel.get_work_group_info(
        cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, rt.device
    )
    if required and required[0]:
        return tuple(int(r) for r in list(required)[: len(shape)])
    limit = int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, rt.device))
    side = {1: wanted, 2: 16}.get(len(shape), 8)  # 16 x 16 matches the usual tile
    sizes = []
    budget = max(1, limit)
    for extent in shape:
        size = max(1, min(side, extent, budget))
        while extent % size:
            size -= 1
        sizes.append(size)
        budget = max(1, budget // size)
    return tuple(sizes)


def padded_range(shape: tuple[int, ...], local: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` rounded up to whole work-groups (a required size need not divide it)."""
    return tuple(-(-g // lo) * lo for g, lo in zip(shape, local, strict=True))


def _scalar(value: np.ndarray) -> Any:
    if value.dtype.names is not None:  # a struct by value: its bytes, as laid out
        return value
    if value.ndim == 0:
        return value.dtype.type(value)
    vec = cltypes.vec_types[(value.dtype, value.shape[0])]
    out = np.zeros((), dtype=vec)
    for i in range(value.shape[0]):
        out[f"s{i:x}"] = value[i]
    return out


def execute(
    kernel: Any,
    payload: Payload,
    global_size: int | tuple[int, ...],
    local_size: int | tuple[int, ...],
) -> list[np.ndarray]:
    """Run one kernel on one payload over a 1-, 2- or 3-D range; returns every global
    buffer (guard included) after the run."""
    shape = global_size if isinstance(global_size, tuple) else (global_size,)
    local = local_size if isinstance(local_size, tuple) else (local_size,)
    rt = runtime()
    args: list[Any] = []
    buffers: dict[int, Any] = {}
    flags = cl.mem_flags
    for i, (spec, value) in enumerate(zip(payload.specs, payload.values, strict=True)):
        if spec.is_pointer and spec.address == "local":
            args.append(cl.LocalMemory(int(value)))
        elif spec.is_pointer:
            buffers[i] = cl.Buffer(
                rt.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=value
            )
            args.append(buffers[i])
        else:
            args.append(_scalar(value))
    kernel.set_args(*args)
    cl.enqueue_nd_range_kernel(rt.queue, kernel, padded_range(shape, local), local)
    rt.queue.finish()
    outputs = []
    for i in payload.global_indices():
        result = np.empty_like(payload.values[i])
        cl.enqueue_copy(rt.queue, result, buffers[i])
        outputs.append(result)
    rt.queue.finish()
    return outputs


def prepare(program: Any, kernel_name: str | None, source: str) -> tuple[Any, list[ArgSpec]]:
    """The kernel to run (the only one when no name is given) and its arguments, with
    typedef'd argument types resolved through the source's typedefs."""
    kernels = program.all_kernels()
    if kernel_name is None:
        if len(kernels) != 1:
            raise ValueError(f"expected one kernel, the program has {len(kernels)}")
        kernel = kernels[0]
    else:
        kernel = cl.Kernel(program, kernel_name)
    aliases = typedefs(source)
    specs = [
        ArgSpec(s.name, s.address, resolve_type(s.type_name, aliases), s.const)
        for s in arg_specs(kernel)
    ]
    return kernel, specs

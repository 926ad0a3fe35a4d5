"""The OpenCL worker child: ``python -m engines.kernels.worker``.

It reads length-prefixed pickled requests on stdin and answers on the original stdout
(stray output of the OpenCL runtime goes to stderr instead). Requests:

- ``{"op": "build", "source"}`` -> ``{"ok", "message", "kernels", "device"}``
- ``{"op": "sandbox"}`` -> ``{"sandbox": {"applied", "missing"}}``: how it is confined
- ``{"op": "probe", "what", "path"}`` -> ``{"probe": outcome}``: tests of the sandbox
- ``{"op": "run", "source", "kernel", "global_size", "local_size", "seeds", "policy"}``
  -> a ``built`` frame, then one ``ran`` frame per seed (inputs and outputs of the
  payload part of every global buffer, and the buffers whose guard a run wrote into),
  with ``"probe": true`` a ``probe`` frame (A's payload again with other guard values,
  and the outputs of one more run of A as it was, the ``control``), then ``done``; the
  parent times each frame separately.
"""

from __future__ import annotations

import os
import pickle
import resource
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

MEMORY_ENV = "CURATOR_WORKER_MEMORY_MB"
DEVICE_ENV = "CURATOR_OPENCL_DEVICE"  # both set by the parent (KernelWorker) for this child
SCRATCH_ENV = "CURATOR_WORKER_SCRATCH"  # set: confine the child to it (engines.kernels.sandbox)


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> Any:
    """One frame, or None at end of stream. Works on unbuffered streams, which the
    parent needs so that ``select`` sees every frame not yet read."""
    header = _read_exact(stream, 4)
    if header is None:
        return None
    (size,) = struct.unpack("<I", header)
    body = _read_exact(stream, size)
    return None if body is None else pickle.loads(body)


def write_frame(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def _cap_memory() -> None:
    megabytes = int(os.environ.get(MEMORY_ENV, "0") or 0)
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _device() -> Any:
    """The device module, its device picked by the name the parent passed."""
    from engines.kernels import device

    device.runtime(os.environ.get(DEVICE_ENV, ""))
    return device


def _build(request: dict[str, Any]) -> dict[str, Any]:
    device = _device()

    built = device.build(request["source"])
    return {
        "ok": built.ok,
        "message": built.message,
        "kernels": built.kernels,
        "device": device.runtime().description,
    }


def _plain(value: Any) -> Any:
    """A scalar argument's value as JSON holds it: a struct's fields by name."""
    if value.dtype.names is not None:
        return {name: value[name].tolist() for name in value.dtype.names}
    return value.item()


def _run(request: dict[str, Any], out: BinaryIO) -> None:
    from engines.kernels.payload import (
        POLICIES,
        PROBE_GUARD_SEED,
        UnsupportedArgument,
        dimensions,
        geometry,
        make_payload,
    )
    from engines.kernels.structs import StructTable

    device = _device()
    built = device.build(request["source"])
    if not built.ok:
        write_frame(out, {"stage": "built", "ok": False, "message": built.message})
        return
    policy = POLICIES[request.get("policy", "clgen")]
    size = request["global_size"]
    try:
        kernel, specs = device.prepare(built.program, request.get("kernel"), request["source"])
        name = kernel.function_name
        dims = dimensions(request["source"]) if policy.shaped else 1
        shape = geometry(size, dims)
        names = request.get("role_names")
        structs = StructTable(request["source"])
        payloads = [
            make_payload(specs, size, seed, policy, shape, role_names=names, structs=structs)
            for seed in request["seeds"]
        ]
        local = device.local_shape_for(kernel, shape, request["local_size"])
    except (UnsupportedArgument, ValueError, AttributeError) as exc:
        write_frame(out, {"stage": "built", "ok": True, "unsupported": str(exc)})
        return
    write_frame(
        out,
        {
            "stage": "built",
            "ok": True,
            "kernel": name,
            "args": [vars(s) for s in specs],
            "local_size": local[0] if len(local) == 1 else list(local),
            "range": list(shape),
            "scalars": {
                s.name: _plain(payloads[0].values[i])
                for i, s in enumerate(specs)
                if not s.is_pointer and payloads[0].values[i].ndim == 0
            },
            "transfer_bytes": payloads[0].transfer_bytes(),
        },
    )
    for index, payload in enumerate(payloads):
        buffers = payload.global_indices()
        inputs = [payload.data(i).copy() for i in buffers]
        try:
            outputs = device.execute(kernel, payload, shape, local)
        except Exception as exc:  # the runtime refused the launch: report it, stay alive
            write_frame(out, {"stage": "ran", "index": index, "error": device.first_line(str(exc))})
            return
        spilled = [
            specs[i].name
            for i, o in zip(buffers, outputs, strict=True)
            if payload.guard_changed(i, o)
        ]
        outputs = [payload.data(i, o) for i, o in zip(buffers, outputs, strict=True)]
        write_frame(
            out,
            {"stage": "ran", "index": index, "inputs": inputs, "outputs": outputs, "oob": spilled},
        )
    if request.get("probe") and request["seeds"]:
        probe = make_payload(
            specs, size, request["seeds"][0], policy, shape, PROBE_GUARD_SEED, names, structs
        )
        try:
            outputs = device.execute(kernel, probe, shape, local)
        except Exception as exc:  # reported as the probe's failure; the verdict stands
            write_frame(out, {"stage": "probe", "error": device.first_line(str(exc))})
            return
        buffers = probe.global_indices()
        frame: dict[str, Any] = {
            "stage": "probe",
            "outputs": [probe.data(i, o) for i, o in zip(buffers, outputs, strict=True)],
        }
        # A's payload once more, as it was: a kernel whose outputs vary from run to run
        # (and happened to repeat in A1 and A2) differs here too, and is not taken for
        # one that reads past a buffer.
        try:
            again = device.execute(kernel, payloads[0], shape, local)
            frame["control"] = [payloads[0].data(i, o) for i, o in zip(buffers, again, strict=True)]
        except Exception:  # without a control the probe alone decides
            pass
        write_frame(out, frame)
    write_frame(out, {"stage": "done"})


def main() -> int:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything the runtime prints must not corrupt the frames
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    _cap_memory()
    sandbox: dict[str, Any] = {"applied": [], "missing": ["not asked for"]}
    if os.environ.get(SCRATCH_ENV):
        from engines.kernels.sandbox import enter

        report = enter(Path(os.environ[SCRATCH_ENV]))
        sandbox = {"applied": report.applied, "missing": report.missing}
    while True:
        request = read_frame(stdin)
        if request is None or request.get("op") == "exit":
            return 0
        op = request.get("op")
        try:
            if op == "build":
                write_frame(out, _build(request))
            elif op == "run":
                _run(request, out)
            elif op == "sandbox":
                write_frame(out, {"sandbox": sandbox})
            elif op == "probe":  # tests: what the confined child can and cannot do
                from engines.kernels.sandbox import probe

                write_frame(out, {"probe": probe(request["what"], request.get("path", ""))})
            elif op == "ping":
                write_frame(out, {"ok": True, "device": _device().runtime().description})
            else:
                write_frame(out, {"error": f"unknown request {op!r}"})
        except Exception as exc:  # a failure of ours: answer with it, keep serving
            write_frame(out, {"stage": "failed", "error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    sys.exit(main())

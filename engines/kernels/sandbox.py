"""The kernel worker's sandbox: what an untrusted OpenCL kernel can reach from its child.

A kernel runs on PoCL's CPU device inside the worker process, so whatever it does (an
out-of-bounds write, a miscompiled loop) happens with that process's rights. The worker
calls :func:`enter` first thing, while it is still single-threaded, and gives up:

- the network: a new, empty network namespace (no interface but a downed loopback), and
  a seccomp filter refusing ``socket()`` for every family but AF_UNIX;
- the file system: a new mount namespace in which every mount is read-only except the
  worker's scratch directory (PoCL's cache and temporary files go there);
- copies of itself: seccomp refuses ``fork``, ``vfork`` and every ``clone`` that does
  not share the address space, so the worker cannot fork (threads stay allowed: PoCL
  runs work-groups on them). Starting a program is not refused: PoCL's CPU driver runs
  the system linker (``posix_spawn``, a ``clone(CLONE_VM|CLONE_VFORK)`` then ``execve``)
  for every kernel it compiles; whatever starts inherits every restriction here (no
  network, read-only but scratch, no new privileges, no fork);
- privileges and leftovers: ``PR_SET_NO_NEW_PRIVS``, no core dumps, a cap on file size.

Each step that the system refuses (no user namespaces, another architecture, an old
kernel) is listed in :attr:`SandboxReport.missing` and the worker runs on as before; the
caller says so once. The namespaces come from ``unshare(2)`` with a user namespace, so no
privilege is needed; seccomp is a hand-written classic BPF program (x86-64 and AArch64).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import struct
from dataclasses import dataclass, field
from pathlib import Path

FILE_SIZE_LIMIT = 512 * 1024 * 1024

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_VM = 0x00000100
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442  # the same number on x86-64 and AArch64
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AF_UNIX = 1

# syscall numbers and audit architecture per machine
_ARCH = {
    "x86_64": {
        "audit": 0xC000003E,
        "socket": 41,
        "clone": 56,
        "fork": 57,
        "vfork": 58,
        "clone3": 435,
    },
    "aarch64": {
        "audit": 0xC00000B7,
        "socket": 198,
        "clone": 220,
        "clone3": 435,
    },
}

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000


@dataclass
class SandboxReport:
    applied: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _mount_setattr(libc: ctypes.CDLL, path: str, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    result = libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(-100),  # AT_FDCWD
        ctypes.c_char_p(path.encode()),
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(result, f"mount_setattr {path}")


def _namespaces(libc: ctypes.CDLL, scratch: Path) -> None:
    """No network, and a read-only view of every mount but ``scratch``."""
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    where = str(scratch).encode()
    _check(libc.mount(where, where, None, MS_BIND | MS_REC, None), "bind scratch")
    _mount_setattr(libc, "/", MOUNT_ATTR_RDONLY, 0)
    _mount_setattr(libc, str(scratch), 0, MOUNT_ATTR_RDONLY)


def _instruction(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str) -> bytes:
    """The BPF program: deny fork (a clone without CLONE_VM) and non-AF_UNIX sockets."""
    nr = _ARCH[machine]
    ld_w, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    deny = _RET_ERRNO | errno.EPERM
    no_such = _RET_ERRNO | errno.ENOSYS  # clone3: glibc then falls back to clone
    blocked = [nr[n] for n in ("fork", "vfork") if n in nr]
    prog = [
        _instruction(ld_w, 0, 0, 4),  # arch
        _instruction(jeq, 1, 0, nr["audit"]),
        _instruction(ret, 0, 0, deny),
        _instruction(ld_w, 0, 0, 0),  # syscall number
        _instruction(0x35, 0, 1, 0x40000000),  # x32 numbers (x86-64): refused
        _instruction(ret, 0, 0, deny),
    ]
    for number in blocked:
        prog += [_instruction(jeq, 0, 1, number), _instruction(ret, 0, 0, deny)]
    prog += [
        _instruction(jeq, 0, 1, nr["clone3"]),
        _instruction(ret, 0, 0, no_such),
        _instruction(jeq, 0, 3, nr["clone"]),
        _instruction(ld_w, 0, 0, 16),  # args[0]: clone flags (low word)
        _instruction(jset, 5, 0, CLONE_VM),  # a thread, or posix_spawn: allow
        _instruction(ret, 0, 0, deny),
        _instruction(jeq, 0, 3, nr["socket"]),
        _instruction(ld_w, 0, 0, 16),  # args[0]: address family
        _instruction(jeq, 1, 0, AF_UNIX),
        _instruction(ret, 0, 0, deny),
        _instruction(ret, 0, 0, _RET_ALLOW),
    ]
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _seccomp(libc: ctypes.CDLL) -> None:
    machine = platform.machine()
    if machine not in _ARCH:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}")
    program = seccomp_program(machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0),
        "seccomp",
    )


def enter(scratch: Path) -> SandboxReport:
    """Confine this process (see the module docstring); call it single-threaded."""
    report = SandboxReport()
    if not hasattr(os, "unshare") and platform.system() != "Linux":
        report.missing.append(f"every step (no sandbox on {platform.system()})")
        return report
    libc = _libc()
    try:
        _namespaces(libc, scratch.resolve())
        report.applied.append("network and mount namespaces: no network, read-only but scratch")
    except OSError as exc:
        report.missing.append(f"namespaces ({exc.strerror or exc})")
    for limit, value, what in (
        (resource.RLIMIT_CORE, 0, "no core dumps"),
        (resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT, "file size cap"),
    ):
        try:
            resource.setrlimit(limit, (value, value))
            report.applied.append(what)
        except (OSError, ValueError) as exc:
            report.missing.append(f"{what} ({exc})")
    try:
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        report.applied.append("no new privileges")
        _seccomp(libc)
        report.applied.append("seccomp: no fork, no network sockets")
    except OSError as exc:
        report.missing.append(f"seccomp ({exc.strerror or exc})")
    return report


def probe(what: str, path: str = "") -> str:
    """Try one thing the sandbox forbids; ``"allowed"`` or the error that stopped it.
    The worker answers ``probe`` requests with this, so tests ask the real child."""
    import socket
    import subprocess

    try:
        if what == "socket":
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        elif what == "connect":
            with socket.create_connection(("127.0.0.1", int(path)), timeout=2):
                pass
        elif what == "write":
            Path(path).write_text("written by a kernel worker\n")
        elif what == "fork":
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        elif what == "subprocess":
            subprocess.run(["/bin/true"], check=True)
        elif what == "spawn":  # as PoCL starts its linker; what it starts is confined too
            pid = os.posix_spawn("/bin/sh", ["sh", "-c", path], dict(os.environ))
            return f"started, exit status {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}"
        else:
            return f"unknown probe {what!r}"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "allowed"

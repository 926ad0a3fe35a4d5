"""One settings object for the whole app, read once.

Each value comes from the first of these that sets it (highest first):

1. a command-line flag (``--db``, ``--annotator``; see ``Settings.with_flags``),
2. an environment variable (``CURATOR_DB``...; an empty one counts as unset),
3. ``./curator.toml`` in the current directory,
4. the user's config file, ``$XDG_CONFIG_HOME/curator/config.toml``
   (``~/.config/curator/config.toml`` by default),
5. the default.

Every value remembers where it came from (``Settings.source``), which is what
``curator config show`` prints. Only the composition root (``curator/``) reads
settings; it hands plain values down to ``engines`` and ``store`` as arguments.

Stdlib only: this module is imported on the way to every command, and start-up time
matters (see docs/configuration.md).
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

DEFAULT = "default"
FLAG = "flag"


class SettingsError(Exception):
    """A config file cannot be read, is not valid TOML, or holds a bad value."""


@dataclass(frozen=True)
class Key:
    """One setting: its field, environment variable, TOML key (dotted) and value type."""

    name: str
    env: str
    toml: str
    kind: str  # "path", "str" or "int"
    help: str
    secret: bool = False
    bounds: tuple[int, int] | None = None  # an int's lowest and highest value


MAX_KERNEL_MEMORY_MB = 1 << 24  # 16 TiB: more than any machine, and it fits an rlimit
MAX_LEASE_MINUTES = 525_600  # a year

KEYS: tuple[Key, ...] = (
    Key("db", "CURATOR_DB", "db", "path", "the SQLite database"),
    Key("annotator", "CURATOR_ANNOTATOR", "annotator", "str", "who votes and labels"),
    Key("theme", "CURATOR_THEME", "theme", "str", "the app's Textual theme"),
    Key("cache", "CURATOR_CACHE", "cache", "path", "cache folder (clones under repos/)"),
    Key(
        "opencl_device",
        "CURATOR_OPENCL_DEVICE",
        "kernels.device",
        "str",
        "OpenCL device for kernel checks (part of 'platform / device')",
    ),
    Key(
        "kernel_memory_mb",
        "CURATOR_WORKER_MEMORY_MB",
        "kernels.memory_mb",
        "int",
        "memory cap of the kernel-check child process in MB (0: none)",
        bounds=(0, MAX_KERNEL_MEMORY_MB),
    ),
    Key(
        "lease_minutes",
        "CURATOR_LEASE_MINUTES",
        "annotation.lease_minutes",
        "int",
        "minutes a routed item stays claimed by the annotator it was served to",
        bounds=(1, MAX_LEASE_MINUTES),
    ),
    Key(
        "teacher_api_key",
        "CURATOR_TEACHER_API_KEY",
        "teacher.api_key",
        "str",
        "bearer token for the teacher endpoint",
        secret=True,
    ),
)
KEYS_BY_NAME = {k.name: k for k in KEYS}
DEFAULT_KERNEL_MEMORY_MB = 4096  # engines.kernels.checker.DEFAULT_MEMORY_MB (a test checks)


# CURATOR_* variables that are no setting: switches and paths read where they act
OTHER_VARIABLES = (
    "CURATOR_DEBUG",  # curator.cli_guard
    "CURATOR_KERNEL_SANDBOX",  # engines.kernels
    "CURATOR_WORKER_SCRATCH",  # engines.kernels.worker, set for its child
    "CURATOR_PERF_PRIOR",  # engines.labelers.student.prior
    "CURATOR_HOSTILE_EXAMPLES",  # tests
)


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One line per set ``CURATOR_*`` variable Curator does not read (a misspelt
    ``CURATOR_DB``), with the nearest known name: a typo there passed silently."""
    from difflib import get_close_matches

    known = [k.env for k in KEYS] + list(OTHER_VARIABLES)
    lines = []
    for name in sorted(env):
        if name.startswith("CURATOR_") and name not in known and env[name].strip():
            # compared without the prefix all share, which makes every name look alike
            near = get_close_matches(name[8:], [k[8:] for k in known], n=1, cutoff=0.6)
            hint = f"; did you mean $CURATOR_{near[0]}?" if near else ""
            lines.append(f"${name} is not a variable Curator reads, and is ignored{hint}")
    return lines


def _xdg_home(env: Mapping[str, str], name: str, fallback: str) -> Path:
    """``$name``, else ``~/fallback``. A relative value (``"~/.config"`` quoted in an
    env file, ``config``) is ignored, as the XDG spec asks: it would name a folder under
    whichever folder the command runs in."""
    value = env.get(name, "")
    return Path(value) if os.path.isabs(value) else Path.home() / fallback


def default_cache(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/curator``, else ``~/.cache/curator``."""
    return _xdg_home(env, "XDG_CACHE_HOME", ".cache") / "curator"


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/curator/config.toml``, else ``~/.config/curator/config.toml``."""
    env = os.environ if env is None else env
    return _xdg_home(env, "XDG_CONFIG_HOME", ".config") / "curator" / "config.toml"


def working_folder() -> Path:
    """The current folder; SettingsError when it was deleted or moved away under the
    shell (``os.getcwd`` fails with a bare "No such file or directory")."""
    try:
        return Path.cwd()
    except OSError as exc:
        raise SettingsError(
            f"the current folder cannot be read ({exc.strerror or exc}): it was deleted or"
            " moved; cd to a folder that exists"
        ) from None


PROJECT_CONFIG = Path("curator.toml")


@dataclass(frozen=True)
class Settings:
    """The resolved settings; ``sources`` maps a field name to where its value came from
    (``default``, ``flag --db``, ``env CURATOR_DB`` or a config file's path)."""

    db: Path = Path("curator.db")
    annotator: str | None = None
    theme: str | None = None
    cache: Path = field(default_factory=lambda: default_cache(os.environ))
    opencl_device: str | None = None
    kernel_memory_mb: int = DEFAULT_KERNEL_MEMORY_MB
    lease_minutes: int = 10
    teacher_api_key: str | None = None
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def source(self, name: str) -> str:
        return self.sources.get(name, DEFAULT)

    @property
    def clone_dir(self) -> Path:
        """Where git URLs are cloned: ``<cache>/repos``."""
        return self.cache / "repos"

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with each flag that was given (not None, not empty) on top."""
        changes: dict[str, Any] = {}
        sources = dict(self.sources)
        for name, value in flags.items():
            key = KEYS_BY_NAME[name]
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            changes[name] = _convert(key, value, f"--{name.replace('_', '-')}")
            sources[name] = f"{FLAG} --{name.replace('_', '-')}"
        if not changes:
            return self
        return replace(self, **changes, sources=MappingProxyType(sources))

    def shown(self) -> list[dict[str, str]]:
        """Each setting as text for ``curator config show`` (secrets masked)."""
        rows = []
        for key in KEYS:
            value = getattr(self, key.name)
            rows.append(
                {
                    "key": key.toml,
                    "env": key.env,
                    "value": _mask(value) if key.secret else ("" if value is None else str(value)),
                    "source": self.source(key.name),
                }
            )
        return rows


def _mask(value: str | None) -> str:
    if not value:
        return ""
    return "****" + value[-4:] if len(value) >= 12 else "****"


def _convert(key: Key, value: Any, where: str, base: Path | None = None) -> Any:
    """``value`` as the key's type; raises SettingsError naming ``where``."""
    if key.kind == "int":
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            # int() would take true as 1 and cut 1.5 to 1 without a word
            raise SettingsError(f"{where}: {key.toml} must be a whole number, not {value!r}")
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: inf in TOML
            raise SettingsError(
                f"{where}: {key.toml} must be a whole number, not {value!r}"
            ) from None
        if key.bounds is not None and not key.bounds[0] <= number <= key.bounds[1]:
            low, high = key.bounds
            raise SettingsError(f"{where}: {key.toml} must be from {low} to {high}, not {number}")
        return number
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise SettingsError(f"{where}: {key.toml} must be a string, not {value!r}")
    value = value.strip()
    if "\x00" in value:  # TOML's "\u0000": no path, name or key holds one
        raise SettingsError(f"{where}: {key.toml} holds a NUL character: {value!a}")
    if key.name == "annotator" and value:
        from annotation.labels import annotator_problem  # stdlib only, like this module

        problem = annotator_problem(value)
        if problem is not None:
            raise SettingsError(f"{where}: {problem}")
    if key.kind == "path":
        if not value:  # Path("") is the folder "."; a config file's "" its own folder
            raise SettingsError(f"{where}: {key.toml} is empty: give a path, or leave it out")
        try:
            path = Path(value).expanduser()
        except RuntimeError:  # "~someone/..." for a user this machine does not know
            raise SettingsError(
                f"{where}: {key.toml} {value!r} starts with a home folder this machine"
                " does not know"
            ) from None
        path = base / path if base is not None and not path.is_absolute() else path
        if key.name == "db" and path.is_dir():
            raise SettingsError(
                f"{where}: db {str(path)!r} is a folder: name the database file, e.g."
                f" {str(path / 'curator.db')!r}"
            )
        if key.name == "cache" and path.exists() and not path.is_dir():
            raise SettingsError(
                f"{where}: cache {str(path)!r} is a file: name a folder (clones go under"
                " its repos/)"
            )
        return path
    return value


# tomllib's "Invalid value (at line 2, column 6)", or "(at end of document)"
_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)")


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in data.items():
        dotted = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


_TABLE = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ASSIGN = re.compile(r"\s*([^=#]+?)\s*=")


def _key_path(text: str) -> str:
    """A TOML key as written (``a . "b"``) as a dotted name (``a.b``)."""
    return ".".join(part.strip().strip("\"'") for part in text.split("."))


def _line_of(text: str, dotted: str) -> int | None:
    """The line that sets ``dotted``: ``key = ...`` under its ``[table]``, or a dotted
    ``table.key = ...``; else the first line setting a key of that last name."""
    table, fallback = "", None
    last = dotted.rsplit(".", 1)[-1]
    for number, line in enumerate(text.splitlines(), 1):
        header = _TABLE.match(line)
        if header:
            table = _key_path(header.group(1))
            continue
        assign = _ASSIGN.match(line)
        if not assign:
            continue
        key = _key_path(assign.group(1))
        if (f"{table}.{key}" if table else key) == dotted:
            return number
        if fallback is None and key.rsplit(".", 1)[-1] == last:
            fallback = number
    if fallback is None:  # inside an inline table: kernels = {memroy_mb = 3}
        inline = re.compile(rf"[{{,]\s*[\"']?{re.escape(last)}[\"']?\s*=")
        fallback = next(
            (n for n, line in enumerate(text.splitlines(), 1) if inline.search(line)), None
        )
    if fallback is None:  # an array of tables, [[kernels]]: the line naming its table
        first = re.compile(rf"\s*\[\[?\s*[\"']?{re.escape(dotted.split('.', 1)[0])}\b")
        fallback = next(
            (n for n, line in enumerate(text.splitlines(), 1) if first.match(line)), None
        )
    return fallback


def _read_text(path: Path) -> str | None:
    """The file's text (a BOM some editors write is no error); None when it is absent.
    Raises SettingsError naming the file, and the line of a byte that is not UTF-8."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise SettingsError(f"{path}: is a folder, not a config file")
        if not stat.S_ISREG(mode):  # reading a pipe would wait for a writer forever
            raise SettingsError(
                f"{path}: is not a regular file (a pipe, a device or a socket), not a config file"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        if path.is_symlink():  # a link left behind is a mistake, not "no config"
            raise SettingsError(
                f"{path}: is a link to {os.readlink(path)}, which does not exist"
            ) from None
        return None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise SettingsError(
                f"{path}: the file is UTF-16 text; save it as UTF-8 (TOML files are UTF-8)"
            ) from None
        line = data.count(b"\n", 0, exc.start) + 1
        raise SettingsError(
            f"{path}:{line}: byte 0x{data[exc.start]:02x} is not UTF-8 text;"
            " save the file as UTF-8 (TOML files are UTF-8)"
        ) from None


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file sets, keyed by field name; {} when the file is absent.
    Relative paths in the file are relative to its folder."""
    text = _read_text(path)
    if text is None:
        return {}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _AT.search(str(exc))
        if found and found.group(1):
            line = f":{found.group(1)}"
        else:  # found only at the end: an unclosed bracket or string, told at the last line
            line = f":{max(1, len(text.splitlines()))}" if found else ""
        column = f" (column {found.group(2)})" if found and found.group(2) else ""
        reason = _AT.sub("", str(exc)).strip()
        raise SettingsError(f"{path}{line}: invalid TOML: {reason}{column}") from None
    by_toml = {k.toml: k for k in KEYS}
    values: dict[str, Any] = {}
    for dotted, value in _flatten(data).items():
        line = _line_of(text, dotted)
        where = f"{path}:{line}" if line else str(path)
        key = by_toml.get(dotted)
        if key is None:
            known = ", ".join(k.toml for k in KEYS)
            raise SettingsError(f"{where}: unknown key {dotted!r} (known: {known})")
        values[key.name] = _convert(key, value, where, path.parent)
    return values


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Resolve every setting once: flags, environment, ./curator.toml, user config,
    defaults. Raises :class:`SettingsError` with a one-line message."""
    env = os.environ if env is None else env
    project = (cwd or working_folder()) / PROJECT_CONFIG
    user = user_config_path(env)
    layers: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        (str(user), lambda: read_config_file(user)),
        (str(PROJECT_CONFIG if cwd is None else project), lambda: read_config_file(project)),
    ]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for label, read in layers:  # lowest first: later layers win
        for name, value in read().items():
            values[name], sources[name] = value, label
    for key in KEYS:
        raw = env.get(key.env, "")
        if raw.strip():
            values[key.name] = _convert(key, raw, f"${key.env}")
            sources[key.name] = f"env {key.env}"
    if "cache" not in values:
        values["cache"] = default_cache(env)
    settings = Settings(**values, sources=MappingProxyType(sources))
    return settings.with_flags(**(flags or {}))


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The database path: the explicit one, else ``$CURATOR_DB``, else the config files,
    else ``./curator.db``."""
    return load_settings({"db": explicit or None}).db

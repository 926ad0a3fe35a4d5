"""Ed25519 signatures over a release's ``manifest.json``.

The manifest holds the sha256 and size of every other file of the release, so a valid
signature over its exact bytes, together with a release that validates, proves every
byte of the release is what the key's holder exported. The signature lies beside the
manifest in ``manifest.json.sig`` (JSON: algorithm, the key's id, the signature in
base64); it is the one file the manifest cannot list.

Keys are PEM files: ``release.key`` (PKCS #8, private, mode 0600) and ``release.pub``
(SubjectPublicKeyInfo), made by ``curator keys generate DIR``. ``cryptography`` is
imported only when a key is made, loaded or checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.releases.manifest import MANIFEST, SIGNATURE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

PRIVATE_NAME = "release.key"
PUBLIC_NAME = "release.pub"
ALGORITHM = "ed25519"


class SigningError(ValueError):
    """A key that cannot be made or read, or a signature that does not hold; one line."""


@dataclass(frozen=True)
class KeyPair:
    private: Path
    public: Path
    key_id: str


def key_id(public: Ed25519PublicKey) -> str:
    """A short name for a public key: the first 16 hex digits of its raw bytes' sha256."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Write a file that must not exist yet, synced, with ``mode`` from the start."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def generate_keys(directory: Path) -> KeyPair:
    """A new key pair in ``directory`` (created if needed); existing keys are never
    overwritten."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    private_path, public_path = directory / PRIVATE_NAME, directory / PUBLIC_NAME
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise SigningError(f"{path}: already exists; keys are never overwritten")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        key = Ed25519PrivateKey.generate()
        public = key.public_key()
        _write_new(
            private_path,
            key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()),
            0o600,
        )
        _write_new(
            public_path,
            public.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo),
            0o644,
        )
    except OSError as exc:
        raise SigningError(f"{directory}: cannot write keys ({exc.strerror or exc})") from None
    return KeyPair(private_path, public_path, key_id(public))


def _read_key_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SigningError(f"{path}: cannot read the key ({exc.strerror or exc})") from None


def load_private_key(path: Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(_read_key_file(path), password=None)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path}: not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(_read_key_file(path))
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"{path}: not an Ed25519 public key")
    return key


def signature_document(manifest: bytes, key: Ed25519PrivateKey) -> bytes:
    """The contents of ``manifest.json.sig`` for these exact manifest bytes."""
    document = {
        "algorithm": ALGORITHM,
        "key_id": key_id(key.public_key()),
        "signed": "manifest.json",
        "signature": base64.b64encode(key.sign(manifest)).decode("ascii"),
    }
    return (json.dumps(document, sort_keys=True, indent=2) + "\n").encode("ascii")


def _read_signature(path: Path) -> dict[str, Any]:
    if path.is_symlink():
        raise SigningError(f"{path}: a symbolic link (a release holds regular files only)")
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise SigningError(f"{path}: missing: the release is not signed") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise SigningError(f"{path}: not a signature file ({exc})") from None
    if not isinstance(document, dict) or document.get("algorithm") != ALGORITHM:
        raise SigningError(f"{path}: not an {ALGORITHM} signature file")
    if not isinstance(document.get("signature"), str):
        raise SigningError(f"{path}: no 'signature'")
    return document


def verify_release(release: Path, public_key: Path) -> str:
    """Check ``manifest.json.sig`` against ``manifest.json`` with the public key at
    ``public_key``; the key's id when it holds, else :class:`SigningError` saying why
    (unsigned, signed by another key, or manifest changed since it was signed)."""
    from cryptography.exceptions import InvalidSignature

    key = load_public_key(public_key)
    expected = key_id(key)
    path = release / SIGNATURE
    document = _read_signature(path)
    try:
        signature = base64.b64decode(document["signature"], validate=True)
        manifest = (release / MANIFEST).read_bytes()
    except ValueError:
        raise SigningError(f"{path}: the signature is not base64") from None
    except OSError as exc:
        raise SigningError(f"{release / MANIFEST}: cannot be read ({exc})") from None
    try:
        key.verify(signature, manifest)
    except InvalidSignature:
        said = document.get("key_id")
        if isinstance(said, str) and said != expected:
            raise SigningError(
                f"{path}: signed by key {said[:16]!r}, not by the key given ({expected})"
            ) from None
        raise SigningError(
            f"{path}: the signature does not match manifest.json (changed since it was signed)"
        ) from None
    return expected

"""Signing verdict records with the user's ssh key, as git signs commits (``ssh-keygen -Y``).

The signature covers a verdict's canonical line without its ``signature`` field, in the
``okstra-verdict`` namespace, so a signature made for a commit or a tag cannot be replayed
as a verdict. The pre-push hook imports :func:`verify_signature`: this module stays lean
(subprocess and temporary files, nothing else imported).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Protocol

from ..core.errors import BadInput
from ..core.values import Value

NAMESPACE = "okstra-verdict"
_KEY_PREFIX = "key::"


class Signed(Protocol):
    """What carries a signature: a verdict record."""

    signature: str | None

    def signed_payload(self) -> bytes: ...


class SignatureCheck(Value):
    """The outcome of checking one signature."""

    good: bool
    """The signature verifies over the payload."""
    principal: str | None
    """Who signed, from the allowed signers file; None when unchecked against one."""
    detail: str
    """What ssh-keygen said, for a human."""


def sign(payload: bytes, signing_key: str) -> str:
    """An armored ssh signature of ``payload`` made with git's ``user.signingKey``.

    The key is a private key file, a public key file whose private half is in ssh-agent, or
    a literal public key (``key::ssh-ed25519 AAAA…`` or ``ssh-ed25519 AAAA…``), as git allows.
    """
    with tempfile.TemporaryDirectory(prefix="okstra-sign-") as tmp:
        key_file = _key_file(signing_key, tmp)
        proc = _ssh_keygen(["-Y", "sign", "-n", NAMESPACE, "-f", key_file], payload)
    if proc.returncode != 0 or b"BEGIN SSH SIGNATURE" not in proc.stdout:
        raise BadInput(
            f"ssh-keygen could not sign with user.signingKey {signing_key!r}: "
            f"{_said(proc)}; check the key (and ssh-agent for a public key)"
        )
    return proc.stdout.decode("ascii")


def verify_signature(verdict: Signed, allowed_signers_path: str) -> bool:
    """True only when the verdict is signed by a key listed in ``allowed_signers_path``."""
    if not verdict.signature:
        return False
    return check(verdict.signed_payload(), verdict.signature, allowed_signers_path).good


def check(payload: bytes, signature: str, allowed_signers_path: str | None) -> SignatureCheck:
    """Check a signature against an ``allowed_signers`` file, or — with none — only that it is
    intact (``check-novalidate``: any key, so it says nothing about who signed)."""
    with tempfile.TemporaryDirectory(prefix="okstra-verify-") as tmp:
        sig_file = os.path.join(tmp, "verdict.sig")
        with open(sig_file, "w", encoding="ascii", errors="replace") as fh:
            fh.write(signature)
        if allowed_signers_path is None:
            proc = _ssh_keygen(["-Y", "check-novalidate", "-n", NAMESPACE, "-s", sig_file], payload)
            return SignatureCheck(proc.returncode == 0, None, _said(proc))
        found = _ssh_keygen(
            ["-Y", "find-principals", "-s", sig_file, "-f", allowed_signers_path], b""
        )
        principals = (
            found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
        )
        if not principals:
            return SignatureCheck(False, None, "no key in the allowed signers file made it")
        for principal in principals:
            proc = _ssh_keygen(
                [
                    "-Y", "verify", "-n", NAMESPACE, "-f", allowed_signers_path,
                    "-I", principal, "-s", sig_file,
                ],
                payload,
            )  # fmt: skip
            if proc.returncode == 0:
                return SignatureCheck(True, principal, _said(proc))
        return SignatureCheck(False, None, _said(proc))


def _key_file(signing_key: str, tmp: str) -> str:
    literal = signing_key.removeprefix(_KEY_PREFIX)
    if signing_key.startswith(_KEY_PREFIX) or literal.startswith(("ssh-", "ecdsa-", "sk-")):
        path = os.path.join(tmp, "signing_key.pub")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(literal.strip() + "\n")
        return path
    path = os.path.expanduser(signing_key)
    if not os.path.isfile(path):
        raise BadInput(
            f"user.signingKey names {path}, which is not a file; set it to your ssh key: "
            "git config user.signingKey ~/.ssh/id_ed25519"
        )
    return path


def _ssh_keygen(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["ssh-keygen", *args], input=stdin, capture_output=True)
    except FileNotFoundError as exc:
        raise BadInput("ssh-keygen is not on PATH; install OpenSSH 8.2 or newer") from exc


def _said(proc: subprocess.CompletedProcess[bytes]) -> str:
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("Signing data")]
    return "; ".join(lines) or f"exit {proc.returncode}"

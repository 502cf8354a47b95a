"""Errors of the vrlog reader. Every one names the file and, where there is
one, the byte offset and what was expected there."""

from __future__ import annotations


class VrlogError(Exception):
    """Base of every error this package raises."""


class NotVrlogError(VrlogError):
    """The file does not start with the vrlog magic."""


class NotRegularError(VrlogError):
    """The path names a FIFO, pipe, socket, device or directory: a log is
    read with random access (the index at its end, chunks in time order),
    so it must be a regular file."""


class UnsupportedVersionError(VrlogError):
    """The file's major version is newer than this reader."""


class CorruptionError(VrlogError):
    """Damage at a byte offset of a file: a bad CRC, a malformed structure.

    A torn tail (the file simply ends inside a block: an interrupted
    recording) is not an error; ``Log.torn_tail`` reports it.
    """

    def __init__(self, file: str, offset: int, what: str):
        super().__init__(f"{file}: offset {offset}: {what}")
        self.file, self.offset, self.what = file, offset, what


class DecodeError(VrlogError):
    """A payload that does not decode as its schema: the schema, the field
    and the byte offset where decoding failed, and the kind of problem
    (truncated, bad magic, unsupported version, invalid value, trailing
    bytes)."""

    def __init__(self, schema: str, field: str, offset: int, kind: str, detail: str = ""):
        msg = f"{schema}: {field} at byte {offset}: {kind}"
        super().__init__(msg + (f": {detail}" if detail else ""))
        self.schema, self.field, self.offset, self.kind = schema, field, offset, kind

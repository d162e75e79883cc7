"""The exception classes of mrcodecs."""

__all__ = ["DecodeError", "EncodeError"]


class DecodeError(ValueError):
    """Raised for input that is not a valid mrcodecs record.

    The message says what was expected, what was found, and at which byte
    offset of the *escaped* input (the bytes as they travel on the wire)
    the problem was found.
    """


class EncodeError(ValueError):
    """Raised for a key or value that the wire format cannot represent
    (a key that is not a :class:`uuid.UUID`, a NaN or infinite weight, ...)."""

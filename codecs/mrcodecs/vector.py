"""SparseVector: a sparse vector over UUIDs, held as two numpy arrays.

This module lies below the twin seam (:mod:`mrcodecs._impl`): both twins
build :class:`SparseVector` objects, and the pure-Python one imports this
module at its top, so nothing here may import the seam.
"""
import uuid

import numpy as np

from .errors import EncodeError

__all__ = ["SparseVector", "ID_DTYPE", "WEIGHT_DTYPES"]

#: ids are the 16 big-endian bytes of each UUID; numpy compares ``S16`` values
#: as unsigned bytes, so sorting them sorts by UUID.
ID_DTYPE = np.dtype("S16")
#: the weight dtypes the wire format carries (little-endian IEEE 754).
WEIGHT_DTYPES = (np.dtype("<f8"), np.dtype("<f4"))

_UUID = uuid.UUID
_UUID_new = object.__new__
_setattr = object.__setattr__
_SAFE = uuid.SafeUUID.unknown


def uuid_of(b):
    """``uuid.UUID(bytes=b)`` for exactly 16 ``bytes``, without its checks
    (the caller slices them from an ``S16`` array)."""
    u = _UUID_new(_UUID)
    _setattr(u, "int", int.from_bytes(b, "big"))
    _setattr(u, "is_safe", _SAFE)
    return u


def _weight_dtype(dtype):
    dt = np.dtype(dtype).newbyteorder("<")
    if dt not in WEIGHT_DTYPES:
        raise EncodeError(
            "weights must be float64 or float32, found dtype %s" % np.dtype(dtype)
        )
    return dt


def _as_ids(ids):
    """Coerce UUIDs, 16-byte strings or an ``S16``/``V16`` array to an ``S16`` array."""
    if isinstance(ids, np.ndarray):
        if ids.dtype == ID_DTYPE or (ids.dtype.kind == "V" and ids.dtype.itemsize == 16):
            return np.ascontiguousarray(ids).view(ID_DTYPE).reshape(-1)
        if ids.dtype == np.uint8 and ids.ndim == 2 and ids.shape[1] == 16:
            return np.ascontiguousarray(ids).view(ID_DTYPE).reshape(-1)
        raise EncodeError(
            "ids must be an S16 array (16 UUID bytes each), found dtype %s shape %s"
            % (ids.dtype, ids.shape)
        )
    parts = []
    for i, u in enumerate(ids):
        if isinstance(u, _UUID):
            parts.append(u.bytes)
        elif isinstance(u, (bytes, bytearray)) and len(u) == 16:
            parts.append(bytes(u))
        else:
            raise EncodeError(
                "ids[%d]: expected a uuid.UUID or 16 bytes, found %s %.60r"
                % (i, type(u).__name__, u)
            )
    return np.frombuffer(b"".join(parts), ID_DTYPE)


class SparseVector:
    """A sparse vector whose indices are UUIDs.

    Parameters
    ----------
    ids : array_like
        The vector's ids: an ``S16`` numpy array of the UUIDs' 16 big-endian
        bytes, or a sequence of :class:`uuid.UUID` or 16-byte strings.
    weights : array_like
        One weight per id, float64 (default) or float32.
    dtype : numpy dtype, optional
        Weight dtype: ``float64`` (default, or the dtype of a float32 array)
        or ``float32``.
    merge : bool, default False
        If False, ids must be sorted ascending and unique (checked). If True,
        ids are sorted and the weights of repeated ids are summed.
    allow_nonfinite : bool, default False
        Accept NaN and infinite weights.

    Raises
    ------
    EncodeError
        ids not sorted/unique (without ``merge``), lengths differ, weights not
        finite, or ids/weights of the wrong type.

    Examples
    --------
    >>> import uuid
    >>> a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    >>> v = SparseVector([b, a], [2.0, 1.0], merge=True)
    >>> v.to_dict() == {a: 1.0, b: 2.0}
    True
    >>> len(v), v.weights.dtype.name
    (2, 'float64')
    """

    __slots__ = ("ids", "weights")

    def __init__(self, ids, weights, dtype=None, merge=False, allow_nonfinite=False):
        ids = _as_ids(ids)
        if dtype is None:
            dtype = getattr(weights, "dtype", np.float64)
            if dtype not in (np.float32, np.float64):
                dtype = np.float64
        dt = _weight_dtype(dtype)
        try:
            w = np.ascontiguousarray(weights, dtype=dt).reshape(-1)
        except (TypeError, ValueError) as e:
            raise EncodeError("weights: cannot convert to %s: %s" % (dt.name, e)) from None
        if w.shape[0] != ids.shape[0]:
            raise EncodeError(
                "ids and weights differ in length: %d ids, %d weights"
                % (ids.shape[0], w.shape[0])
            )
        if not allow_nonfinite and not np.isfinite(w).all():
            i = int(np.flatnonzero(~np.isfinite(w))[0])
            raise EncodeError(
                "weights must be finite, found %r at position %d (id %s)"
                % (float(w[i]), i, uuid.UUID(bytes=ids[i : i + 1].tobytes()))
            )
        if merge:
            ids, w = _merge(ids, w)
        elif ids.shape[0] > 1 and not (ids[1:] > ids[:-1]).all():
            i = int(np.flatnonzero(ids[1:] <= ids[:-1])[0])
            raise EncodeError(
                "ids must be sorted ascending and unique (or pass merge=True), "
                "found %s after %s at position %d"
                % (
                    uuid.UUID(bytes=ids[i + 1 : i + 2].tobytes()),
                    uuid.UUID(bytes=ids[i : i + 1].tobytes()),
                    i + 1,
                )
            )
        self.ids = ids
        self.weights = w

    @classmethod
    def _trusted(cls, ids, weights):
        """Build without checks, from an ``S16`` array and a weight array."""
        v = _UUID_new(cls)
        v.ids = ids
        v.weights = weights
        return v

    @classmethod
    def empty(cls, dtype=np.float64):
        """The vector with no entries."""
        return cls._trusted(np.empty(0, ID_DTYPE), np.empty(0, _weight_dtype(dtype)))

    @classmethod
    def from_dict(cls, mapping, dtype=np.float64, allow_nonfinite=False):
        """Build from ``{uuid.UUID: weight}`` (any order).

        Examples
        --------
        >>> import uuid
        >>> SparseVector.from_dict({uuid.UUID(int=7): 0.5}).weights.tolist()
        [0.5]
        """
        if not mapping:
            return cls.empty(dtype)
        ids = _as_ids(list(mapping.keys()))
        weights = list(mapping.values())
        order = np.argsort(ids, kind="stable")
        return cls(
            ids[order],
            np.asarray(weights, dtype=_weight_dtype(dtype))[order],
            allow_nonfinite=allow_nonfinite,
        )

    def to_dict(self):
        """Return ``{uuid.UUID: float}``."""
        buf = self.ids.tobytes()
        return {
            uuid_of(buf[16 * i : 16 * i + 16]): w
            for i, w in enumerate(self.weights.tolist())
        }

    def uuids(self):
        """The ids as a list of :class:`uuid.UUID`."""
        buf = self.ids.tobytes()
        return [uuid_of(buf[i : i + 16]) for i in range(0, len(buf), 16)]

    def astype(self, dtype):
        """A copy with weights of another dtype (float64 or float32)."""
        return self._trusted(self.ids, self.weights.astype(_weight_dtype(dtype)))

    def dot(self, other):
        """The dot product with another SparseVector (float64)."""
        _, i, j = np.intersect1d(self.ids, other.ids, assume_unique=True, return_indices=True)
        return float(np.dot(self.weights[i].astype(np.float64), other.weights[j].astype(np.float64)))

    def __len__(self):
        return self.ids.shape[0]

    def __eq__(self, other):
        if not isinstance(other, SparseVector):
            return NotImplemented
        return (
            self.weights.dtype == other.weights.dtype
            and np.array_equal(self.ids, other.ids)
            and np.array_equal(self.weights, other.weights, equal_nan=True)
        )

    __hash__ = None

    def __repr__(self):
        items = ", ".join(
            "%s: %r" % (u, w) for u, w in list(self.to_dict().items())[:3]
        )
        more = ", ..." if len(self) > 3 else ""
        return "SparseVector({%s%s}, nnz=%d, dtype=%s)" % (
            items, more, len(self), self.weights.dtype.name)


def _merge(ids, weights):
    """Sort ids and sum the weights of repeated ids."""
    if ids.shape[0] == 0:
        return ids, weights
    uniq, inverse = np.unique(ids, return_inverse=True)
    if uniq.shape[0] == ids.shape[0]:
        return uniq, weights[np.argsort(ids, kind="stable")]
    summed = np.bincount(inverse.reshape(-1), weights=weights, minlength=uniq.shape[0])
    return uniq, summed.astype(weights.dtype)

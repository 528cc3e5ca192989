"""Meshes and named shardings: how an array is laid out over a grid of devices.

`Mesh(devices, axis_names)` names the axes of an n-d array of devices; `PartitionSpec` (alias `P`)
says, per array dimension, which mesh axes split it (None: not split; a tuple: split over several
axes, the first one major); `NamedSharding(mesh, spec)` is the pair. Mesh axes a spec does not name
replicate the array along them. These are engine data (pure Python): shard_map (transforms/shard_map.py)
reads them to stage per-shard bodies, the backend turns them into its own sharding descriptions.
Everything is validated when made or applied, with errors naming what is wrong.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .api_util import box, to_raw
from .backend import backend
from .core import Tracer, get_aval
from .pytree import broadcast_prefix, tree_unflatten


class Mesh:
    """An n-d grid of devices with a name per axis: `Mesh(np.array(devices).reshape(2, 4), ('i', 'j'))`.
    Attributes: devices (the object array), axis_names, shape ({name: size}), size, device_ids (row-major).

    Parameters: devices (array-like of Device): one dimension per axis name, each device once.
        axis_names (str or tuple of hashables): distinct names, one per dimension.
    Returns: Mesh.
    Raises: ValueError: if the dimensions and names disagree in number, a name or a device repeats, or
        devices is a scalar or empty. TypeError: if a name is unhashable or an entry is not a device.

    >>> m = Mesh(np.array(devices()[:1]).reshape(1, 1), ("data", "model"))
    >>> m, m.size
    (Mesh({'data': 1, 'model': 1}, device_ids=[0]), 1)
    """
    __slots__ = ("devices", "axis_names", "shape", "_key")

    def __init__(self, devices, axis_names):
        devs = np.array(devices, dtype=object)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devs.ndim == 0:
            raise ValueError("Mesh: devices must be an array of devices with one axis per axis name, got a scalar")
        if devs.ndim != len(names):
            raise ValueError(f"Mesh: devices has {devs.ndim} dimension(s) {devs.shape} but axis_names "
                             f"{names} names {len(names)}")
        for nm in names:
            try:
                hash(nm)
            except TypeError:
                raise TypeError(f"Mesh: axis names must be hashable, got {type(nm).__name__}") from None
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis_names {names} repeats a name")
        ids = [getattr(d, "id", None) for d in devs.flat]
        if any(i is None for i in ids):
            raise TypeError("Mesh: every entry of devices must be a device (from transforms.devices())")
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh: a device appears more than once (device ids {ids})")
        if devs.size == 0:
            raise ValueError("Mesh: devices is empty")
        self.devices, self.axis_names = devs, names
        self.shape = dict(zip(names, devs.shape))
        self._key = (names, devs.shape, tuple(ids))

    @property
    def size(self):
        return int(self.devices.size)

    @property
    def device_ids(self):
        """The devices' ids in row-major (partition) order."""
        return self._key[2]

    def axis_size(self, names):
        return math.prod(self.shape[n] for n in names)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({{{axes}}}, device_ids={list(self.device_ids)})"

    def __enter__(self):   # accepted for JAX users' `with mesh:`; the mesh is always passed explicitly here
        return self

    def __exit__(self, *exc):
        return False


def make_mesh(axis_shapes, axis_names, devices=None):
    """A Mesh of the first prod(axis_shapes) devices (default: the backend's local devices), row-major.

    Parameters: axis_shapes (sequence of int): the mesh's shape. axis_names (str or tuple): one name per
        axis. devices (sequence of Device): the devices to take them from (default: local_devices()).
    Returns: Mesh.
    Raises: ValueError: if the mesh needs more devices than there are, or as Mesh raises.

    >>> make_mesh((1,), ("i",))
    Mesh({'i': 1}, device_ids=[0])
    """
    shape = tuple(int(s) for s in axis_shapes)
    n = math.prod(shape)
    devs = list(backend.local_devices() if devices is None else devices)
    if n > len(devs):
        raise ValueError(f"make_mesh: a mesh of shape {shape} needs {n} devices, only {len(devs)} are available")
    return Mesh(np.array(devs[:n], dtype=object).reshape(shape), axis_names)


class PartitionSpec(tuple):
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names (split over all of
    them, the first major). Trailing dimensions not listed are not split. `P` is the same class.

    Parameters: *entries (None, a hashable name, or a tuple/list of names): one per leading dimension;
        a one-name tuple is that name, an empty one None.
    Returns: PartitionSpec (a tuple).
    Raises: nothing here; a spec is checked against a mesh where it is used (NamedSharding, shard_map:
        ValueError if it names an axis the mesh lacks, or one twice).

    >>> P("i", None, ("j", "k")), P(["i"]) == P("i")
    (P('i', None, ('j', 'k')), True)
    """

    def __new__(cls, *entries):
        out = []
        for e in entries:
            if isinstance(e, list):
                e = tuple(e)
            if isinstance(e, tuple):
                e = tuple(e) if len(e) != 1 else e[0]
                if e == ():
                    e = None
            out.append(e)
        return super().__new__(cls, out)

    def axes_of(self, dim):
        """The mesh axes splitting dimension `dim`, major first (() if none)."""
        if dim >= len(self):
            return ()
        e = self[dim]
        return () if e is None else (e if isinstance(e, tuple) else (e,))

    def names(self):
        return tuple(itertools.chain.from_iterable(self.axes_of(d) for d in range(len(self))))

    def __repr__(self):
        return "P(" + ", ".join(repr(e) for e in self) + ")"


P = PartitionSpec


def check_spec(mesh, spec, what):
    """A PartitionSpec valid on `mesh`: every name an axis of it, none used twice (ValueError naming both)."""
    if not isinstance(spec, PartitionSpec):
        if isinstance(spec, (tuple, list)) or spec is None:
            spec = PartitionSpec(*(spec or ()))
        else:
            raise TypeError(f"{what}: expected a PartitionSpec, got {type(spec).__name__}")
    names = spec.names()
    for nm in names:
        if nm not in mesh.shape:
            raise ValueError(f"{what}: {spec!r} names mesh axis {nm!r}, which the mesh does not have (its axes: "
                             f"{list(mesh.axis_names)})")
    dup = sorted({repr(n) for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{what}: {spec!r} uses mesh axis {', '.join(dup)} more than once")
    return spec


def check_shape(mesh, spec, shape, what):
    """That an array of `shape` can be laid out by `spec` on `mesh` (ValueError naming the dimension, its
    size, the axes and their size otherwise); returns the per-shard shape."""
    shape = tuple(shape)
    if len(spec) > len(shape):
        raise ValueError(f"{what}: {spec!r} has {len(spec)} entries, more than the {len(shape)} dimension(s) of an "
                         f"array of shape {shape}")
    out = []
    for d, size in enumerate(shape):
        axes = spec.axes_of(d)
        k = mesh.axis_size(axes)
        if size % k:
            raise ValueError(f"{what}: dimension {d} of an array of shape {shape} has size {size}, not divisible by "
                             f"the size {k} of mesh axis {' x '.join(repr(a) for a in axes)} that {spec!r} splits it "
                             "over")
        out.append(size // k)
    return tuple(out)


def global_shape(mesh, spec, shard_shape):
    """The whole array's shape from one shard's shape (each split dimension times its axes' size)."""
    return tuple(s * mesh.axis_size(spec.axes_of(d)) for d, s in enumerate(shard_shape))


def shard_index(mesh, spec, shape, coords):
    """The slices of an array of `shape` held by the device at mesh coordinates `coords` ({axis: index})."""
    out = []
    for d, size in enumerate(shape):
        axes = spec.axes_of(d)
        k, pos = 1, 0
        for a in axes:
            pos, k = pos * mesh.shape[a] + coords[a], k * mesh.shape[a]
        b = size // k
        out.append(slice(pos * b, (pos + 1) * b))
    return tuple(out)


class NamedSharding:
    """An array laid out over `mesh` as `spec` says: `NamedSharding(mesh, P('i', None))`. Mesh axes the
    spec does not name replicate the array along them.

    Parameters: mesh (Mesh): the devices. spec (PartitionSpec, tuple or None): which mesh axes split each
        dimension (default P(): replicated on every device).
    Returns: NamedSharding; shard_shape(shape) is one device's block shape, devices_indices_map(shape)
        each device's slices.
    Raises: TypeError: if mesh is not a Mesh or spec not a PartitionSpec. ValueError: if spec names an
        axis the mesh lacks or one twice (and shard_shape, if a dimension does not divide).

    >>> s = NamedSharding(make_mesh((1,), ("i",)), P("i"))
    >>> s.spec, s.shard_shape((4, 2))
    (P('i'), (4, 2))
    """
    __slots__ = ("mesh", "spec")

    def __init__(self, mesh, spec=PartitionSpec()):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}")
        self.mesh, self.spec = mesh, check_spec(mesh, spec, "NamedSharding")

    def shard_shape(self, shape, what="NamedSharding"):
        return check_shape(self.mesh, self.spec, shape, what)

    def devices_indices_map(self, shape):
        """{device: the slices of an array of `shape` it holds}, in row-major mesh order."""
        self.shard_shape(shape)
        out = {}
        for pos in itertools.product(*(range(s) for s in self.mesh.devices.shape)):
            coords = dict(zip(self.mesh.axis_names, pos))
            out[self.mesh.devices[pos]] = shard_index(self.mesh, self.spec, shape, coords)
        return out

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and (self.mesh, _trim(self.spec)) == (other.mesh, _trim(other.spec))

    def __hash__(self):
        return hash((self.mesh, _trim(self.spec)))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def _trim(spec):
    s = list(spec)
    while s and s[-1] is None:
        s.pop()
    return tuple(s)


def _check_leaf(s, what):
    if s is not None and not isinstance(s, NamedSharding):
        raise TypeError(f"{what}: each entry must be a NamedSharding or None, got {type(s).__name__}")
    return s


def _no_bare_specs(tree, what):
    if isinstance(tree, PartitionSpec):
        raise TypeError(f"{what}: each entry must be a NamedSharding or None, got P{tuple(tree)!r} (a PartitionSpec "
                        "needs its mesh: NamedSharding(mesh, spec))")
    if isinstance(tree, (tuple, list)):
        for t in tree:
            _no_bare_specs(t, what)
    elif isinstance(tree, dict):
        for t in tree.values():
            _no_bare_specs(t, what)


def flat_shardings(in_shardings, out_shardings, in_tree, n_consts, out_tree, n_extra_out, name):
    """jit's in_shardings (a pytree prefix of the dynamic positional arguments) and out_shardings (of the
    output) as one entry per flat input (constants first, replicated; keyword arguments replicated) and per
    flat output (None: as the partitioner chooses)."""
    _no_bare_specs(in_shardings, f"jit({name}) in_shardings")
    _no_bare_specs(out_shardings, f"jit({name}) out_shardings")
    dyn, kw = tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    n_kw = in_tree.num_leaves - len(broadcast_prefix(None, dyn))
    ins = broadcast_prefix(in_shardings, dyn, f"jit({name}) in_shardings") if in_shardings is not None else \
        [None] * (in_tree.num_leaves - n_kw)
    outs_obj = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    outs = broadcast_prefix(out_shardings, outs_obj, f"jit({name}) out_shardings") if out_shardings is not None \
        else [None] * out_tree.num_leaves
    ins = [None] * n_consts + [_check_leaf(s, f"jit({name}) in_shardings") for s in ins] + [None] * n_kw
    outs = [_check_leaf(s, f"jit({name}) out_shardings") for s in outs] + [None] * n_extra_out
    return tuple(ins), tuple(outs)


def _runtime_device(d):
    """A device argument as the backend's device: one of devices(), or an object wrapping one (the
    namespace's Device, an array's .device, exposes it as `runtime_device`)."""
    d = getattr(d, "runtime_device", d)
    if d not in backend.devices():
        raise TypeError(f"device_put: device_or_sharding must be a NamedSharding, a device (one of "
                        f"transforms.devices(), or an array's .device) or None, got {d!r}")
    return d


def device_put(x, device_or_sharding=None):
    """x as an array over `device_or_sharding`: a NamedSharding lays it out over its mesh (each device
    holding its block); a device (or None, the default device) puts it whole on that device. Under a
    transform it returns x as it is (after checking the sharding fits its shape).

    Parameters: x (Array, NumPy array or Python scalar): the value. device_or_sharding (NamedSharding,
        Device from transforms.devices(), or None).
    Returns: Array: its `sharding` is the NamedSharding given.
    Raises: ValueError: if x's shape does not fit the sharding (a dimension not divisible by its axes'
        size, more spec entries than dimensions). TypeError: if x is not an array or scalar.

    >>> y = device_put(xp.arange(4.), NamedSharding(make_mesh((1,), ("i",)), P("i")))
    >>> y, y.sharding.spec
    (Array([0., 1., 2., 3.]), P('i'))
    """
    raw = to_raw(x, "device_put argument")
    if device_or_sharding is not None and not isinstance(device_or_sharding, NamedSharding):
        device_or_sharding = _runtime_device(device_or_sharding)
    if isinstance(raw, Tracer):   # under a transform: the value as it is (layouts are the program's business)
        if isinstance(device_or_sharding, NamedSharding):
            device_or_sharding.shard_shape(get_aval(raw).shape, "device_put")
        return x
    if isinstance(device_or_sharding, NamedSharding):
        device_or_sharding.shard_shape(get_aval(raw).shape, "device_put")
        return box(backend.put_sharded(raw, device_or_sharding))
    return box(backend.put_sharded(raw, device_or_sharding))


__all__ = ["Mesh", "make_mesh", "PartitionSpec", "P", "NamedSharding", "device_put"]

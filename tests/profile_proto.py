"""A small protobuf wire-format reader for the files the profiler writes, independent of jaxlib.

Why: the tests must check that `save_device_memory_profile` writes what `pprof` reads and that a
trace's `.xplane.pb` is an XSpace -- with an oracle that is not the library that wrote them. No
pprof/go binary is available here, so this decodes the wire format (varint, 64-bit, length-delimited,
32-bit fields) and maps the field numbers of pprof's profile.proto and tsl's xplane.proto.
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass, field


def _varint(buf, i):
    out = shift = 0
    while True:
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return out, i


def fields(buf):
    """[(field_number, wire_type, value)]: ints for varint/fixed fields, bytes for length-delimited."""
    out, i, n = [], 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 2:
            ln, i = _varint(buf, i)
            v, i = bytes(buf[i:i + ln]), i + ln
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"unsupported wire type {wt} (field {num}) at byte {i}")
        if num == 0:
            raise ValueError("field number 0: not a protobuf message")
        out.append((num, wt, v))
    if i != n:
        raise ValueError("truncated protobuf message")
    return out


def _ints(entries, num):
    """A repeated integer field, packed (one length-delimited run) or not."""
    out = []
    for f, wt, v in entries:
        if f == num:
            if wt == 2:
                j = 0
                while j < len(v):
                    x, j = _varint(v, j)
                    out.append(x)
            else:
                out.append(v)
    return out


def _int(entries, num, default=0):
    vals = _ints(entries, num)
    return vals[-1] if vals else default


def _msgs(entries, num):
    return [fields(v) for f, wt, v in entries if f == num and wt == 2]


# ------------------------------------------------------------------ pprof (profile.proto)

@dataclass
class Sample:
    values: list           # one per sample type
    labels: dict           # key -> str value
    frames: list = field(default_factory=list)   # [(function name, filename, line)], innermost first


@dataclass
class Profile:
    sample_types: list     # [(type, unit)]
    samples: list


def read_pprof(data: bytes) -> Profile:
    """Decode a pprof Profile (gzip-compressed or not)."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    top = fields(data)
    strings = [v.decode() for f, wt, v in top if f == 6]
    functions = {}
    for m in _msgs(top, 5):   # Function: id=1 name=2 system_name=3 filename=4 start_line=5
        functions[_int(m, 1)] = (strings[_int(m, 2)], strings[_int(m, 4)])
    locations = {}
    for m in _msgs(top, 4):   # Location: id=1 ... line=4 (Line: function_id=1 line=2)
        lines = [(*functions[_int(ln, 1)], _int(ln, 2)) for ln in _msgs(m, 4)]
        locations[_int(m, 1)] = lines
    types = [(strings[_int(m, 1)], strings[_int(m, 2)]) for m in _msgs(top, 1)]
    samples = []
    for m in _msgs(top, 2):   # Sample: location_id=1 value=2 label=3 (Label: key=1 str=2 num=3)
        labels = {strings[_int(lb, 1)]: strings[_int(lb, 2)] for lb in _msgs(m, 3)}
        frames = [fr for loc in _ints(m, 1) for fr in locations[loc]]
        samples.append(Sample(_ints(m, 2), labels, frames))
    return Profile(types, samples)


# ------------------------------------------------------------------ XSpace (tsl/profiler/protobuf/xplane.proto)

def read_xspace(data: bytes) -> dict:
    """{plane name: {"events": {event name: occurrences}}} of an XSpace (planes=1; XPlane name=2,
    lines=3, event_metadata=4 (map id -> XEventMetadata name=2); XLine events=4; XEvent metadata_id=1)."""
    planes = {}
    for p in _msgs(fields(data), 1):
        name = next((v.decode() for f, wt, v in p if f == 2), "")
        meta = {}
        for entry in _msgs(p, 4):   # map entry: key=1, value=2
            md = _msgs(entry, 2)
            if md:
                meta[_int(entry, 1)] = next((v.decode() for f, wt, v in md[0] if f == 2), "")
        counts = {}
        for line in _msgs(p, 3):
            for ev in _msgs(line, 4):
                n = meta.get(_int(ev, 1), f"<metadata {_int(ev, 1)}>")
                counts[n] = counts.get(n, 0) + 1
        planes[name] = {"events": counts}
    return planes

"""pandas DataFrames of a log (Log.to_pandas). Needs pandas.

Column names follow `vrlog export --format csv`: ``recv_wall_ns``,
``recv_mono_ns``, ``t_ns``, ``seq``, ``position.x`` ... Nanosecond columns
are int64; stamps a record does not have are <NA> (pandas' nullable
integers), never a float.
"""

from __future__ import annotations

import numpy as np

from . import wire

_VEC = {"position": "xyz", "orientation": "xyzw", "linear_velocity": "xyz", "angular_velocity": "xyz"}


def _pd():
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover
        raise ImportError("to_pandas needs pandas: pip install 'vrlog[pandas]'") from e
    return pd


def _names(log):
    return {c.id: c.name for c in log.channels}


def _nullable(pd, values, present, dtype):
    """A nullable integer array: <NA> where present is false."""
    return pd.arrays.IntegerArray(np.asarray(values, dtype=dtype), ~np.asarray(present, dtype=bool))


def timing(log, channels, start_ns, end_ns, clock):
    """One row per record: channel (name, categorical), channel_id,
    recv_wall_ns, recv_mono_ns, t_ns and seq (<NA> without a capture stamp),
    publisher_sn (<NA> without one), header_len, payload_len."""
    pd = _pd()
    t = log.timing(channels, start_ns, end_ns, clock=clock)
    names = _names(log)
    ids = list(t["channel"])
    df = pd.DataFrame({
        "channel": pd.Categorical([names[i] for i in ids], categories=[c.name for c in log.channels]),
        "channel_id": pd.array(t["channel"], dtype="uint16"),
        "recv_wall_ns": pd.array(t["recv_wall_ns"], dtype="int64"),
        "recv_mono_ns": pd.array(t["recv_mono_ns"], dtype="int64"),
    })
    df["t_ns"] = _nullable(pd, t["capture_ns"], t["has_stamp"], "int64")
    df["seq"] = _nullable(pd, t["seq"], t["has_stamp"], "uint64")
    df["publisher_sn"] = _nullable(pd, t["publisher_sn"], t["has_publisher_sn"], "uint64")
    df["header_len"] = pd.array(t["header_len"], dtype="int64")
    df["payload_len"] = pd.array(t["payload_len"], dtype="int64")
    return df


_FIXED = [("magic", "S4"), ("version", "<u2"), ("sensor_count", "<u2"), ("seq", "<u8"), ("t_ns", "<i8"),
          ("estimate_t_ns", "<i8")] + [(f"{v}.{a}", "<f8") for v, axes in _VEC.items() for a in axes]


def _state_dtype(n: int):
    return np.dtype(_FIXED + [(f"s{i}{k}", t) for i in range(n) for k, t in (("id", "<u4"), ("res", "<u4"), ("t", "<i8"))])


def states(log, channels, start_ns, end_ns, clock, epoch_ns):
    """One row per state record: channel, recv_wall_ns, recv_mono_ns,
    decoded (False for a payload that is not a valid state: its fields are
    <NA> or NaN), seq, t_ns, elapsed (from epoch_ns; default the session
    epoch), estimate_t_ns, position.x ... angular_velocity.z, sensor_count,
    sensors.<i>.id and sensors.<i>.t_ns (<NA> past a state's sensors).

    Decoded with numpy a block of equal-sized payloads at a time, with the
    checks of wire.decode_state (magic, version, size, reserved fields)."""
    pd = _pd()
    epoch_ns = log._epoch(epoch_ns)
    if channels is None:
        channels = [c.id for c in log.channels if c.schema == wire.SCHEMA_STATE]
    want = set(log.select(channels)) if channels else set()
    parts = []
    if want:
        for cols, _, blocks in log._groups(want, *log._window(start_ns, end_ns, clock), True):
            parts.append(_decode_states(cols, blocks))
    names = {c.id: c.name for c in log.channels}
    nsens = max((p["nsens"] for p in parts), default=0)
    cat = lambda k, dt: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, dtype=dt)  # noqa: E731
    ok = cat("decoded", bool)
    ids = cat("channel", np.int64)
    df = pd.DataFrame({
        "channel": pd.Categorical([names[i] for i in ids.tolist()], categories=sorted({names[i] for i in want})),
        "recv_wall_ns": cat("recv_wall_ns", np.int64), "recv_mono_ns": cat("recv_mono_ns", np.int64), "decoded": ok})
    df["seq"] = pd.arrays.IntegerArray(cat("seq", np.uint64), ~ok)
    t = cat("t_ns", np.int64)
    df["t_ns"] = pd.arrays.IntegerArray(t, ~ok)
    df["elapsed"] = np.where(ok, (t - epoch_ns).astype(np.float64) / 1e9, np.nan)
    df["estimate_t_ns"] = pd.arrays.IntegerArray(cat("estimate_t_ns", np.int64), ~ok)
    for name, _ in _FIXED[6:]:
        df[name] = np.where(ok, cat(name, np.float64), np.nan)
    count = cat("sensor_count", np.int64)
    df["sensor_count"] = pd.arrays.IntegerArray(count, ~ok)
    for i in range(nsens):
        present = ok & (count > i)
        for k, dt, col in (("id", np.uint32, "id"), ("t", np.int64, "t_ns")):
            v = np.concatenate([p["sensors"][i][k] if i < p["nsens"] else np.zeros(len(p["decoded"]), dtype=dt) for p in parts])
            df[f"sensors.{i}.{col}"] = pd.arrays.IntegerArray(v.astype(dt), ~present)
    df.attrs["epoch_ns"] = epoch_ns
    return df


def _decode_states(cols, blocks) -> dict:
    """One group's state payloads, decoded in blocks of one size."""
    n = len(cols["mono"])
    out = {"channel": np.asarray(cols["channel"], dtype=np.int64), "recv_wall_ns": np.asarray(cols["wall"], dtype=np.int64),
           "recv_mono_ns": np.asarray(cols["mono"], dtype=np.int64), "decoded": np.zeros(n, dtype=bool),
           "seq": np.zeros(n, dtype=np.uint64), "t_ns": np.zeros(n, dtype=np.int64),
           "estimate_t_ns": np.zeros(n, dtype=np.int64), "sensor_count": np.zeros(n, dtype=np.int64)}
    for name, _ in _FIXED[6:]:
        out[name] = np.full(n, np.nan)
    start = np.asarray(cols["off"], dtype=np.int64) + np.asarray(cols["hlen"], dtype=np.int64)
    plen = np.asarray(cols["plen"], dtype=np.int64)
    block = np.asarray(cols["block"], dtype=np.int64)
    sensors: dict[int, dict] = {}
    nsens = 0
    for b in np.unique(block).tolist():
        raw = np.frombuffer(blocks[b], dtype=np.uint8)
        for size in np.unique(plen[block == b]).tolist():
            rows = np.flatnonzero((block == b) & (plen == size))
            ns, rem = divmod(size - 136, 16)
            if size < 136 or rem:
                continue  # not a state's size: decoded stays False
            rec = raw[start[rows, None] + np.arange(size)].view(_state_dtype(ns)).ravel()
            good = (rec["magic"] == b"VRST") & (rec["version"] == 1) & (rec["sensor_count"] == ns)
            for i in range(ns):
                good &= rec[f"s{i}res"] == 0
            rows, rec = rows[good], rec[good]
            out["decoded"][rows] = True
            for k in ("seq", "t_ns", "estimate_t_ns"):
                out[k][rows] = rec[k]
            out["sensor_count"][rows] = ns
            for name, _ in _FIXED[6:]:
                out[name][rows] = rec[name]
            for i in range(ns):
                s = sensors.setdefault(i, {"id": np.zeros(n, dtype=np.uint32), "t": np.zeros(n, dtype=np.int64)})
                s["id"][rows], s["t"][rows] = rec[f"s{i}id"], rec[f"s{i}t"]
            nsens = max(nsens, ns)
    out["sensors"] = [sensors[i] for i in range(nsens)]
    out["nsens"] = nsens
    return out

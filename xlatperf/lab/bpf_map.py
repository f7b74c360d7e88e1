# SPDX-License-Identifier: BSD-3-Clause
"""Filling the map of a tc-BPF program the lab attached, through the bpf(2) system call.

A table too large to compile into a program (the lwAFTR's binding table of up to 65,536
softwires: the verifier gives up on a search over it) is a hash map the lab fills after `tc`
loaded the program. `tc filter add ... obj` loads the object once per filter, so each attached
program has its own copy of the map: each is filled. One BPF_MAP_UPDATE_BATCH call per map
stores the whole table (milliseconds for 65,536 entries), with no tool beyond tc: bpftool is
not among the lab's packages, and a command per entry would take seconds.

The maps are found through the programs: `tc -j filter show` names each filter's program id,
the program's info lists its maps' ids, and the map of the wanted name is opened by id. Program
and map ids are global, so this works from any network namespace."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import platform
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache

from .shell import LabError, run

# bpf(2)'s number differs by architecture (the kernel's syscall tables).
_SYSCALL_BPF = {"x86_64": 321, "aarch64": 280, "arm64": 280}

# enum bpf_cmd (linux/bpf.h)
_PROG_GET_FD_BY_ID, _MAP_GET_FD_BY_ID, _OBJ_GET_INFO_BY_FD, _MAP_UPDATE_BATCH = 13, 14, 15, 26
_OBJ_NAME_LEN = 16


# The members of union bpf_attr used here; the kernel zero-fills the rest of the union.
class _IdAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("next_id", ctypes.c_uint32), ("open_flags", ctypes.c_uint32)]


class _InfoAttr(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32), ("info", ctypes.c_uint64)]


class _BatchAttr(ctypes.Structure):
    _fields_ = [("in_batch", ctypes.c_uint64), ("out_batch", ctypes.c_uint64), ("keys", ctypes.c_uint64),
                ("values", ctypes.c_uint64), ("count", ctypes.c_uint32), ("map_fd", ctypes.c_uint32),
                ("elem_flags", ctypes.c_uint64), ("flags", ctypes.c_uint64)]


# The leading fields of struct bpf_prog_info and struct bpf_map_info: the kernel fills only
# info_len bytes, so the fields after the ones needed are left out.
class _ProgInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("id", ctypes.c_uint32), ("tag", ctypes.c_uint8 * 8),
                ("jited_prog_len", ctypes.c_uint32), ("xlated_prog_len", ctypes.c_uint32),
                ("jited_prog_insns", ctypes.c_uint64), ("xlated_prog_insns", ctypes.c_uint64),
                ("load_time", ctypes.c_uint64), ("created_by_uid", ctypes.c_uint32),
                ("nr_map_ids", ctypes.c_uint32), ("map_ids", ctypes.c_uint64)]


class _MapInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("id", ctypes.c_uint32), ("key_size", ctypes.c_uint32),
                ("value_size", ctypes.c_uint32), ("max_entries", ctypes.c_uint32),
                ("map_flags", ctypes.c_uint32), ("name", ctypes.c_char * _OBJ_NAME_LEN)]


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _bpf(cmd: int, attr: ctypes.Structure, what: str) -> int:
    number = _SYSCALL_BPF.get(platform.machine())
    if number is None:
        raise LabError(f"filling a BPF map: no bpf(2) system call number known for {platform.machine()}")
    result = _libc().syscall(ctypes.c_long(number), ctypes.c_int(cmd), ctypes.byref(attr),
                             ctypes.c_uint(ctypes.sizeof(attr)))
    if result < 0:
        error = ctypes.get_errno()
        raise LabError(f"filling a BPF map: {what}: {os.strerror(error)}")
    return result


@contextmanager
def _fd_by_id(cmd: int, object_id: int, what: str) -> Iterator[int]:
    fd = _bpf(cmd, _IdAttr(id=object_id), f"opening {what} {object_id}")
    try:
        yield fd
    finally:
        os.close(fd)


def _info(fd: int, info: ctypes.Structure, what: str) -> None:
    _bpf(_OBJ_GET_INFO_BY_FD, _InfoAttr(bpf_fd=fd, info_len=ctypes.sizeof(info),
                                        info=ctypes.addressof(info)), f"reading {what}'s info")


def _map_ids(prog_id: int) -> list[int]:
    with _fd_by_id(_PROG_GET_FD_BY_ID, prog_id, "BPF program") as fd:
        info = _ProgInfo()
        _info(fd, info, f"BPF program {prog_id}")
        ids = (ctypes.c_uint32 * info.nr_map_ids)()
        info = _ProgInfo(nr_map_ids=len(ids), map_ids=ctypes.addressof(ids))
        _info(fd, info, f"BPF program {prog_id}")
        return list(ids)[:info.nr_map_ids]


def filter_program_ids(tc_json: str) -> list[int]:
    """The ids of the BPF programs in `tc -j filter show` output (one per bpf filter)."""
    return [f["options"]["prog"]["id"] for f in json.loads(tc_json or "[]")
            if f.get("kind") == "bpf" and "prog" in f.get("options", {})]


def attached_program_ids(ns: str, dev: str, hook: str) -> list[int]:
    """The ids of the BPF programs attached to `dev`'s tc `hook` ("ingress", "egress") in `ns`."""
    return filter_program_ids(run(["tc", "-j", "filter", "show", "dev", dev, hook], ns=ns))


def pack_entries(keys: Sequence[bytes], values: Sequence[bytes]) -> tuple[bytes, bytes, int, int]:
    """The entries as BPF_MAP_UPDATE_BATCH takes them: all keys back to back, all values back
    to back (each key, each value of one size); with those sizes."""
    if len(keys) != len(values) or not keys:
        raise ValueError(f"{len(keys)} keys and {len(values)} values: need as many, at least one")
    key_size, value_size = len(keys[0]), len(values[0])
    if any(len(k) != key_size for k in keys) or any(len(v) != value_size for v in values):
        raise ValueError("keys (or values) of different sizes")
    return b"".join(keys), b"".join(values), key_size, value_size


def fill_program_maps(ns: str, attachments: Sequence[tuple[str, str]], map_name: str,
                      keys: Sequence[bytes], values: Sequence[bytes]) -> int:
    """Stores the entries (keys[i] -> values[i]) in the map `map_name` of every BPF program
    attached at the (interface, hook)s `attachments` in namespace `ns`; returns the number of
    maps filled. A map of other key or value size, or too small for the entries, is an error."""
    key_bytes, value_bytes, key_size, value_size = pack_entries(keys, values)
    count = len(keys)
    filled = 0
    for dev, hook in attachments:
        programs = attached_program_ids(ns, dev, hook)
        if not programs:
            raise LabError(f"filling BPF map {map_name!r}: no BPF program on {dev} {hook} in {ns}")
        for prog_id in programs:
            found = False
            for map_id in _map_ids(prog_id):
                with _fd_by_id(_MAP_GET_FD_BY_ID, map_id, "BPF map") as fd:
                    info = _MapInfo()
                    _info(fd, info, f"BPF map {map_id}")
                    if info.name.decode() != map_name:
                        continue
                    if (info.key_size, info.value_size) != (key_size, value_size) or info.max_entries < count:
                        raise LabError(
                            f"BPF map {map_name!r} ({map_id}) has {info.key_size}-byte keys, {info.value_size}-byte "
                            f"values and room for {info.max_entries}: cannot take {count} entries of "
                            f"{key_size} and {value_size} bytes")
                    _update_batch(fd, key_bytes, value_bytes, count, map_name)
                    found = True
            if not found:
                raise LabError(f"BPF program {prog_id} on {dev} {hook} has no map {map_name!r}")
            filled += 1
    return filled


def _update_batch(fd: int, key_bytes: bytes, value_bytes: bytes, count: int, map_name: str) -> None:
    keys = ctypes.create_string_buffer(key_bytes, len(key_bytes))
    values = ctypes.create_string_buffer(value_bytes, len(value_bytes))
    attr = _BatchAttr(keys=ctypes.addressof(keys), values=ctypes.addressof(values), count=count, map_fd=fd)
    _bpf(_MAP_UPDATE_BATCH, attr, f"storing {count} entries in {map_name!r}")
    if attr.count != count:  # the kernel reports how many it stored
        raise LabError(f"filling BPF map {map_name!r}: {attr.count} of {count} entries stored")

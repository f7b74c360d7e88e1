# SPDX-License-Identifier: BSD-3-Clause
"""Reading and writing the files of results and configurations: atomic writes (temporary file,
fsync, rename), tolerant JSON / JSON-lines reading, TOML with errors that name the file."""

import datetime
import json
import os
import tomllib
from pathlib import Path

from .errors import ConfigError


def utc_timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def write_atomically(path: Path, text: str | bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    binary = isinstance(text, bytes)
    with open(temporary, "wb" if binary else "w", encoding=None if binary else "utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def read_lines(path: Path) -> list[str]:
    """The complete JSON lines of a file (a torn or corrupt line is dropped); [] if absent."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except FileNotFoundError:
        return []
    lines = []
    for line in text.splitlines():
        try:
            if isinstance(json.loads(line), dict):
                lines.append(line)
        except json.JSONDecodeError:
            pass
    return lines


def read_json(path: Path) -> dict | None:
    """A JSON file's content, None when it is missing or unreadable (being written, torn)."""
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in read_lines(path)]



def read_toml(path, what: str = "file") -> dict:
    """A TOML file's content; ConfigError naming the file (`what` it is when it is missing)."""
    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def toml_value(value) -> str:
    """A value as TOML writes it: booleans, numbers, lists of these, and strings (a JSON
    string is a valid TOML basic string). For the config files the lab and the importer write."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))

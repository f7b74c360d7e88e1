# SPDX-License-Identifier: BSD-3-Clause
"""Typed, read-only views of a validated configuration.

validate() (xlatperf/config/loading.py) returns a Config: one frozen dataclass per section,
generated from SCHEMA, so every consumer reads `config.trial.duration` or
`config.side("left").dut_mac`, and a misspelt key is an AttributeError at the line that reads
it, not a silent default. Lists become tuples and tables read-only mappings, so nothing
downstream can change the configuration a measurement was started with. A changed
configuration (the learning trial's, a single direction's, resolved DUT MACs) is a new Config
from `config.changed({...})`, validated again by the schema's rules.
"""

import types
from dataclasses import fields, make_dataclass
from typing import Any, Callable, Mapping

SIDES = ("left", "right")


def _freeze(value):
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return types.MappingProxyType({k: _freeze(v) for k, v in value.items()})
    return value


def _thaw(value):
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    return value


class Section:
    """One [section] of the configuration; attributes are its keys (docs/config.md)."""

    def to_dict(self) -> dict:
        return {f.name: _thaw(getattr(self, f.name)) for f in fields(self)}


def _section_class(section: str, keys: dict) -> type:
    name = "".join(part.title() for part in section.split("_")) + "Section"
    return make_dataclass(name, [(key, type(spec.default)) for key, spec in keys.items()],
                          bases=(Section,), frozen=True)


class ConfigBase:
    """The whole configuration; attributes are its sections."""
    _sections: tuple[str, ...] = ()
    _validate: Callable[[dict], "ConfigBase"]

    def side(self, name: str) -> Section:
        """The [left] or [right] section."""
        if name not in SIDES:
            raise ValueError(f"side {name!r}: must be one of {', '.join(SIDES)}")
        return getattr(self, name)

    def section(self, name: str) -> Section:
        """A section by name, for code that loops over sections or takes a "section.key"."""
        if name not in self._sections:
            raise KeyError(name)
        return getattr(self, name)

    def value(self, dotted: str):
        """The value of a "section.key" name."""
        section, key = dotted.split(".")
        return getattr(self.section(section), key)

    def to_dict(self) -> dict:
        """The plain nested dict (summary.json's "config", TOML and JSON writers)."""
        return {section: getattr(self, section).to_dict() for section in self._sections}

    def changed(self, assignments: Mapping[str, Any]) -> "ConfigBase":
        """A new Config with {"section.key": value, ...} applied and every rule checked again."""
        raw = self.to_dict()
        for dotted, value in assignments.items():
            section, key = dotted.split(".")
            raw[section][key] = value
        return type(self)._validate(raw)


def config_class(schema: Mapping[str, Mapping[str, Any]],
                 validate: Callable[[dict], ConfigBase]) -> type:
    """The Config dataclass of a schema (section -> key -> Key with a default); `validate`
    turns a raw nested dict into a Config (for changed())."""
    sections = {section: _section_class(section, keys) for section, keys in schema.items()}
    return make_dataclass("Config", list(sections.items()), bases=(ConfigBase,), frozen=True,
                          namespace={"_sections": tuple(sections),
                                     "_validate": staticmethod(validate)})


def make_config(cls: type, values: Mapping[str, Mapping[str, Any]]) -> ConfigBase:
    """A `cls` (from config_class) from a complete nested dict of plain values."""
    return cls(**{f.name: f.type(**{key: _freeze(value)
                                    for key, value in values[f.name].items()})
                  for f in fields(cls)})

# SPDX-License-Identifier: BSD-3-Clause
"""Configuration: loading a TOML file, --set overrides and validation against the key table.

`load_config(path, overrides)` returns the *effective configuration*: a plain dict
{section: {key: value}} with every key present, values normalised (lower-case MACs, full PCI
addresses, floats for seconds), ready to be dumped to JSON into the results. Every problem is a
ConfigError whose message names the key, the value and what is allowed.
"""

import copy
import tomllib
from typing import Iterable

from ..util.errors import ConfigError, key_error, show_value
from ..util.files import read_toml
from .checkers import VARIABLE_NAME, dut_variable
from .crosscheck import cross_check
from .schema import SCHEMA, VARIABLE_SECTION, Key
from .views import ConfigBase, config_class, make_config

def _defaults() -> dict:
    return {section: {key: copy.deepcopy(spec.default) for key, spec in keys.items()}
            for section, keys in SCHEMA.items()}


def default_config() -> ConfigBase:
    """The effective configuration when the file is empty."""
    return validate({})


def is_variable(section: str, key: str) -> bool:
    """Whether section.key names a DUT variable (not a setting)."""
    return section == VARIABLE_SECTION and key not in SCHEMA[section] and \
        bool(VARIABLE_NAME.match(key))


def is_key(dotted: str) -> bool:
    """Whether `dotted` may be assigned: a configuration key or a DUT variable."""
    section, _, key = dotted.partition(".")
    return section in SCHEMA and (key in SCHEMA[section] or is_variable(section, key))


def _split_key(dotted: str) -> tuple[str, str]:
    section, _, key = dotted.partition(".")
    if section not in SCHEMA:
        raise ConfigError(f"{dotted}: unknown section [{section}] (sections: {', '.join(SCHEMA)})")
    if key not in SCHEMA[section] and not is_variable(section, key):
        raise ConfigError(f"{dotted}: unknown key in [{section}] "
                          f"(keys: {', '.join(SCHEMA[section])})")
    return section, key


def parse_override_value(text: str, section: str, key: str):
    """A --set value is parsed as TOML (10, 1.5, true, [1, 2], "x"), falling back to the text
    itself; for keys that take strings the text is always kept (so lcores=0 stays "0")."""
    try:
        document = tomllib.loads(f"value = {text}")
        parsed = document["value"] if len(document) == 1 else text
    except tomllib.TOMLDecodeError:
        parsed = text
    if key in SCHEMA[section] and isinstance(SCHEMA[section][key].default, str) and \
            not isinstance(parsed, str) and not _accepts(SCHEMA[section][key], parsed):
        return text
    return parsed


def _accepts(spec: Key, value) -> bool:
    """Whether a key takes `value` as it is (dut.hops = 2 besides "auto")."""
    try:
        spec.check(value)
    except ValueError:
        return False
    return True


def apply_override(raw: dict, assignment: str) -> None:
    """Apply one `section.key=value` assignment to a raw (unvalidated) config dict."""
    dotted, sep, text = assignment.partition("=")
    dotted = dotted.strip()
    if not sep or "." not in dotted:
        raise ConfigError(f"--set {assignment}: expected SECTION.KEY=VALUE, e.g. trial.duration=10")
    section, key = _split_key(dotted)
    raw.setdefault(section, {})[key] = parse_override_value(text.strip(), section, key)


def load_config(path: str | None, overrides: Iterable[str] = ()) -> ConfigBase:
    """Read a TOML file (None: defaults only), apply --set overrides, validate.

    Returns the effective configuration, a typed read-only Config (xlatperf/config/views.py).
    """
    raw: dict = read_toml(path, "configuration file") if path is not None else {}
    for assignment in overrides:
        apply_override(raw, assignment)
    return validate(raw)


def validate(raw: dict) -> ConfigBase:
    """Check every key of a raw config dict against the schema, fill in defaults, then run the
    checks that involve several keys. Returns the effective configuration as a Config."""
    config = partial_config(raw)
    cross_check(config)
    return config


def partial_config(raw: dict) -> ConfigBase:
    """The defaults with every key of `raw` checked, but not the rules that involve several
    keys: for reasoning about a configuration still being assembled (the siitperf import)."""
    checked = _defaults()
    for section, values in raw.items():
        if section not in SCHEMA:
            raise ConfigError(f"[{section}]: unknown section (sections: {', '.join(SCHEMA)})")
        if not isinstance(values, dict):
            raise ConfigError(f"{section} = {show_value(values)}: must be a table [{section}]")
        variables = {}
        for key, value in values.items():
            _split_key(f"{section}.{key}")
            try:
                if is_variable(section, key):
                    variables[key] = dut_variable(value)
                else:
                    checked[section][key] = SCHEMA[section][key].check(value)
            except ValueError as exc:
                raise key_error(f"{section}.{key}", value, str(exc)) from None
        if variables:
            both = sorted(set(variables) & set(checked[section]["variables"]))
            if both:
                raise key_error(f"{section}.{both[0]}", variables[both[0]],
                                f"is set twice: also in {section}.variables")
            checked[section]["variables"] = {**checked[section]["variables"], **variables}
    return make_config(Config, checked)


# The typed view of the key table: validate() returns one, Config.changed() validates again.
Config = config_class(SCHEMA, validate)

# SPDX-License-Identifier: BSD-3-Clause
"""Hook command templates: `{section.key}` is replaced by the value of that configuration key
of the measurement (a campaign point's value when it is swept), `{dut.NAME}` by a DUT variable
(docs/campaigns.md, "DUT hooks"), and `{{` / `}}` are literal braces, as in Python's
str.format. Anything else in braces is an error, so a shell command's own braces
(`awk '{print $1}'`, `${HOME}`) must be written doubled: `awk '{{print $1}}'`, `${{HOME}}`.

    render("taskset -c 0-{dut.last_core} ...", lookup)

The configuration's validation (crosscheck.py) parses every hook command, so an unknown
placeholder stops a measurement or a campaign before its first trial; rendering happens when
the hook runs (xlatperf/measure/hooks.py)."""

import json
import re
from typing import Any, Callable

from .schema import SCHEMA, VARIABLE_SECTION

# section.key: the names of docs/config.md (lower case, digits, '_').
NAME = re.compile(r"[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*")
BRACES_HINT = "write {{ and }} for literal braces"


class TemplateError(ValueError):
    """A malformed template; the text says where and what is allowed."""


def parse(template: str) -> list[tuple[str, str]]:
    """The template as [("text", literal) | ("name", "section.key")], braces unescaped."""
    parts: list[tuple[str, str]] = []
    text: list[str] = []
    i, n = 0, len(template)
    while i < n:
        char = template[i]
        if char in "{}" and template[i + 1:i + 2] == char:  # {{ or }}: a literal brace
            text.append(char)
            i += 2
            continue
        if char == "}":
            raise TemplateError(f"a single '}}' at character {i + 1}: {BRACES_HINT}")
        if char != "{":
            text.append(char)
            i += 1
            continue
        end = template.find("}", i + 1)
        if end < 0:
            raise TemplateError(f"'{{' at character {i + 1} is never closed: {BRACES_HINT}")
        name = template[i + 1:end]
        if not NAME.fullmatch(name):
            raise TemplateError(f"{{{name}}} is not a placeholder: placeholders are "
                                f"configuration keys such as {{traffic.frame_size}} or DUT "
                                f"variables such as {{dut.cores}}; {BRACES_HINT}")
        if text:
            parts.append(("text", "".join(text)))
            text = []
        parts.append(("name", name))
        i = end + 1
    if text:
        parts.append(("text", "".join(text)))
    return parts


def placeholders(template: str) -> list[str]:
    """The names a template uses, in order of first use."""
    names: list[str] = []
    for kind, value in parse(template):
        if kind == "name" and value not in names:
            names.append(value)
    return names


def format_value(value: Any) -> str:
    """A value as it goes into a command: strings as they are, booleans as TOML writes them,
    numbers without a trailing .0 for whole floats, lists and tables as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, ".15g")
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, default=lambda v: dict(v) if hasattr(v, "items") else list(v),
                      separators=(",", ":"))


def render(template: str, lookup: Callable[[str], Any]) -> str:
    """The command with every placeholder replaced by format_value(lookup(name)); lookup
    raises KeyError for a name it does not know."""
    return "".join(value if kind == "text" else format_value(lookup(value))
                   for kind, value in parse(template))


def template_value(config, name: str):
    """The value of a hook placeholder: a configuration key or a DUT variable {dut.NAME};
    KeyError otherwise."""
    section, _, key = name.partition(".")
    if section == VARIABLE_SECTION and key in config.dut.variables:
        return config.dut.variables[key]
    if section in SCHEMA and key in SCHEMA[section] and (section, key) != ("dut", "variables"):
        return config.value(name)
    raise KeyError(name)

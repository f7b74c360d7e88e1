# SPDX-License-Identifier: BSD-3-Clause
"""The front end's layering (docs/architecture.md): each subpackage imports only from its own
layer and the layers below it, the module graph has no cycle (imports inside functions count:
a lazy import only hides a cycle), and no module imports another module's private names."""

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "xlatperf"

# Bottom to top. The package's own __init__ and __main__ are the facade above everything.
LAYERS = ["util", "frames", "config", "lab", "engine", "traffic", "measure", "procedures", "report",
          "run", "ui"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(imported module, imported names, line) of every import in the file, at any depth,
    with relative imports resolved."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.append((target, [alias.name for alias in node.names], node.lineno))
    return found


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return None  # the package facade (xlatperf, xlatperf.__main__)
    return LAYERS.index(parts[1])


def _edges() -> dict[str, set[str]]:
    """Module -> the xlatperf modules it imports (a `from package import module` names the
    module, else the package)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for target, names, _ in _imports(path):
            if not target or not target.startswith("xlatperf"):
                continue
            for imported in names or [None]:
                candidate = f"{target}.{imported}" if imported else target
                graph[name].add(candidate if candidate in modules else target)
    return graph


def test_every_module_belongs_to_a_layer():
    stray = [name for name in _modules()
             if _layer(name) is None and name not in ("xlatperf", "xlatperf.__main__")]
    assert stray == [], f"modules outside the layers {LAYERS}: {stray}"


def test_layers_import_only_downwards():
    upward = []
    for name, targets in _edges().items():
        layer = _layer(name)
        if layer is None:
            continue
        for target in targets:
            target_layer = _layer(target)
            if target_layer is not None and target_layer > layer:
                upward.append(f"{name} ({LAYERS[layer]}) imports {target} "
                              f"({LAYERS[target_layer]})")
    assert upward == []


def test_no_import_cycle():
    graph = _edges()
    # Tarjan's strongly connected components; a component of more than one module (or a
    # module importing itself) is a cycle.
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    # A package's __init__ importing its own submodules is not a cycle unless a submodule
    # imports the package back (then the component holds both and is reported).
    assert cycles == []


def test_no_private_names_imported_from_other_modules():
    private = []
    for name, path in _modules().items():
        for target, names, line in _imports(path):
            if target and target.startswith("xlatperf") and target != name:
                private += [f"{path.relative_to(PACKAGE.parent)}:{line} imports {n} from {target}"
                            for n in names if n.startswith("_") and not n.startswith("__")]
    assert private == []


def test_the_checks_see_a_cycle_and_an_upward_import(tmp_path, monkeypatch):
    """The checks above are only worth something if they can fail: a miniature package with an
    upward import and a cycle must be caught."""
    fake = tmp_path / "xlatperf"
    for layer in ("util", "ui"):
        (fake / layer).mkdir(parents=True)
        (fake / layer / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "util" / "a.py").write_text("from ..ui import b\n")
    (fake / "ui" / "b.py").write_text("def f():\n    from ..util import a\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    with pytest.raises(AssertionError, match="util.a"):
        test_layers_import_only_downwards()
    with pytest.raises(AssertionError, match="ui.b"):
        test_no_import_cycle()


def test_test_modules_have_unique_names():
    """pytest imports test modules by basename (rootdir-relative, no packages), so two
    test_x.py in tests/ and tests/e2e/ stop the whole collection — which a unit run that
    ignores tests/e2e never notices. CI failed that way on 2026-11-23 (fixed in 61f75ef)."""
    tests = Path(__file__).resolve().parent
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted(tests.rglob("*.py")):
        if path.name in seen and path.name != "conftest.py":
            clashes.append(f"{seen[path.name].relative_to(tests)} and {path.relative_to(tests)}")
        seen.setdefault(path.name, path)
    assert not clashes, "same module name twice: " + "; ".join(clashes)


# The engine's source folders, bottom to top (docs/architecture.md, "The engine's layers");
# engine.{hpp,cpp} and main.cpp at the top of engine/src.
ENGINE = PACKAGE.parent / "engine" / "src"
ENGINE_LAYERS = ["core", "emulation", "protocol", "ports", "dataplane", ""]


def _engine_upward_includes(src: Path) -> list[str]:
    """`file -> include` for every include of a higher layer's header, or of one outside the
    folders, in the engine's sources under `src`."""
    wrong = []
    for path in sorted(src.rglob("*.[ch]pp")):
        layer = "" if path.parent == src else path.relative_to(src).parts[0]  # core/layers/ is core
        for included in re.findall(r'#include "([^"]+)"', path.read_text()):
            folder = included.split("/")[0] if "/" in included else ""
            if folder not in ENGINE_LAYERS or ENGINE_LAYERS.index(folder) > ENGINE_LAYERS.index(layer):
                wrong.append(f"{path.relative_to(src)} -> {included}")
    return wrong


def test_engine_folders_include_only_downwards():
    assert {p.name for p in ENGINE.iterdir() if p.is_dir()} == set(ENGINE_LAYERS) - {""}
    assert _engine_upward_includes(ENGINE) == []


def test_the_engine_check_sees_an_upward_include(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "frame.hpp").write_text('#include "dataplane/runtime.hpp"\n')
    assert _engine_upward_includes(tmp_path) == ["core/frame.hpp -> dataplane/runtime.hpp"]

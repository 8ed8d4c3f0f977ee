"""The house rules, read from the source with ``ast``: imports follow the data flow
(transport -> pipeline -> nlu | logs -> runtime, shared records below them all) and no module
reaches into another module's private names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "edge_agent"

# part of edge_agent -> the parts it may import. The composition layer (app, engines, hotswap,
# cli, commands, demo, __main__) may import anything; no part below imports it.
ALLOWED: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "records": frozenset({"errors"}),
    "security": frozenset({"errors"}),
    "sdnotify": frozenset(),
    # how the agent's own log lines look (console or JSON); masks credentials with security's processor
    "logsetup": frozenset({"security"}),
    "store": frozenset({"errors"}),
    "messages": frozenset({"errors", "records"}),
    "runtime": frozenset({"errors", "records", "security"}),
    "nlu": frozenset({"errors", "records", "runtime"}),
    "logs": frozenset({"errors", "records", "messages", "store", "runtime"}),
    "transport": frozenset({"errors", "security", "config"}),
    "pipeline": frozenset({"errors", "records", "messages", "store", "transport", "config", "nlu", "logs"}),
    "bridges": frozenset({"errors", "records", "messages", "store", "pipeline", "nlu"}),
    # the config root holds one model per section; the sections live with their parts (and the
    # home section checks its domains against nlu.home's list)
    "config": frozenset({"errors", "bridges", "logs", "runtime", "store", "nlu"}),
}
COMPOSITION = frozenset(
    {"app", "engines", "hotswap", "custom_intents", "cli", "commands", "demo", "__main__", "__init__"}
)
# private names of third-party APIs we must use (argparse's subparser type, flatbuffers' table,
# wyoming's HomeAssistantZeroconf, whose AsyncZeroconf has no public handle to close it by, and
# paho's wake-up socket pair, which its loop_start replaces with no public handle to keep it by)
FOREIGN_PRIVATE = frozenset({"_SubParsersAction", "_tab", "_aiozc", "_sockpairR", "_sockpairW"})


def _modules() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"))


def _part(module: str) -> str:
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else "__init__"


def _imports(tree: ast.Module) -> Iterator[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of ours."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("edge_agent"):
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("edge_agent"):
                    yield alias.name, [], node.lineno


def test_imports_follow_the_flow() -> None:
    wrong: list[str] = []
    for name, path, tree in _modules():
        part = _part(name)
        if part in COMPOSITION:
            continue
        assert part in ALLOWED, f"{path}: part {part!r} has no rule in ALLOWED; add one"
        for module, names, line in _imports(tree):
            targets = [f"{module}.{n}" for n in names] if module == "edge_agent" else [module]
            for target in targets:
                other = _part(target)
                if other != part and other not in ALLOWED[part]:
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} {part} imports {other}")
    assert not wrong, "imports against the flow:\n" + "\n".join(wrong)


def test_nothing_below_the_composition_root_imports_it() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for name, path, tree in _modules()
        if _part(name) not in COMPOSITION
        for module, _names, line in _imports(tree)
        if _part(module) in COMPOSITION - {"__init__"}
    ]
    assert not wrong, "\n".join(wrong)


def _defined_privates(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, assignments, attributes of self/cls."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return {n for n in out if n.startswith("_")}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_reaches_into_another_modules_private_names() -> None:
    wrong: list[str] = []
    for _name, path, tree in _modules():
        where = path.relative_to(PACKAGE.parent)
        for module, names, line in _imports(tree):
            wrong += [f"{where}:{line} imports {module}.{n}" for n in names if _is_private(n)]
        own = _defined_privates(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr not in own and node.attr not in FOREIGN_PRIVATE:
                wrong.append(f"{where}:{node.lineno} reads {ast.unparse(node)}")
    assert not wrong, "private names used outside their module:\n" + "\n".join(wrong)


def test_the_rules_see_a_violation() -> None:
    """The checks above would fail on the patterns they exist for."""
    bad = ast.parse("from edge_agent.runtime.install import _check_outputs\nx = intents._lock\n")
    imports = list(_imports(bad))
    assert imports == [("edge_agent.runtime.install", ["_check_outputs"], 1)]
    assert _is_private(imports[0][1][0])
    assert "_lock" not in _defined_privates(bad)
    assert _part("edge_agent.nlu.tokenizer") == "nlu" and "nlu" not in ALLOWED["runtime"]


def _run_time_imports(tree: ast.Module) -> Iterator[tuple[str, list[str], int]]:
    """:func:`_imports` without those under ``if TYPE_CHECKING:`` (annotations only)."""
    hidden = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in hidden]
    yield from _imports(ast.Module(body=found, type_ignores=[]))


def import_graph(modules: list[tuple[str, ast.Module]]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, at any depth (a function-level import counts:
    it runs too), ``from pkg import mod`` resolved to the submodule."""
    names = {name for name, _ in modules}
    graph: dict[str, set[str]] = {}
    for name, tree in modules:
        edges: set[str] = set()
        for module, taken, _line in _run_time_imports(tree):
            subs = [f"{module}.{n}" for n in taken if f"{module}.{n}" in names]
            edges.update(subs or ([module] if module in names else []))
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        reach[start] = seen
    groups = {frozenset({m} | {o for o in reach[m] if m in reach[o]}) for m in graph if m in reach[m]}
    return sorted(sorted(g) for g in groups)


def test_no_import_cycles() -> None:
    """No module of ours imports one that imports it back, even lazily (a function-level import
    that closes a circle works only by the order modules happen to load in)."""
    graph = import_graph([(name, tree) for name, _path, tree in _modules()])
    assert not cycles(graph), f"import cycles: {cycles(graph)}"


def test_the_cycle_check_sees_a_lazy_circle() -> None:
    a = ast.parse("from edge_agent.b import thing\n")
    lazy = ast.parse("def f():\n    from edge_agent.a import other\n")
    hidden = ast.parse("if TYPE_CHECKING:\n    from edge_agent.a import x\n")
    found = cycles(import_graph([("edge_agent.a", a), ("edge_agent.b", lazy)]))
    assert found == [["edge_agent.a", "edge_agent.b"]]
    assert cycles(import_graph([("edge_agent.a", a), ("edge_agent.b", hidden)])) == []

"""The source tree's seams, measured (issue 41: "Measure and report, before and after"). Reads
the code as text and syntax trees; runs nothing of it but `lint-imports`.

Prints:
- the 15 largest functions and classes of jarvis_tui (lines, with their file);
- the layout's bounds: core/engine/engine.py's lines (<= 700), the Engine class's (<= 500),
  the files at core/'s root (<= 12);
- the Protocols of core/engine (what restates the Engine lives there);
- duck-typed getattrs: `getattr(x, "name", default)` in jarvis_tui;
- the command line's imports of core.store and core.engine;
- the import-linter contracts kept and broken;
- bench/: files per folder, and its import circles (across its folders).

    python bench/dev/layout.py
    python bench/dev/layout.py --quick     all but lint-imports (tests/core/test_layers.py runs it)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "jarvis_tui"
LARGEST = 15
BOUNDS = {"engine.py lines": 700, "Engine class lines": 500, "files at core/'s root": 12}


def trees(folder: Path) -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"), str(p)))
            for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def largest(modules: list[tuple[Path, ast.Module]]) -> list[tuple[int, str, str]]:
    found = []
    for path, tree in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                kind = "class" if isinstance(node, ast.ClassDef) else "def"
                found.append((node.end_lineno - node.lineno + 1, f"{kind} {node.name}",
                              rel(path)))
    return sorted(found, reverse=True)[:LARGEST]


def protocols(modules: list[tuple[Path, ast.Module]]) -> list[str]:
    out = []
    for path, tree in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(b).endswith("Protocol") for b in node.bases):
                out.append(f"{rel(path)}: {node.name}")
    return out


def duck_getattrs(modules: list[tuple[Path, ast.Module]]) -> list[str]:
    out = []
    for path, tree in modules:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "getattr" and len(node.args) == 3
                    and isinstance(node.args[1], ast.Constant)):
                out.append(f"{rel(path)}:{node.lineno}: {ast.unparse(node)}")
    return out


def imports_of(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def cli_reaches(modules: list[tuple[Path, ast.Module]]) -> list[str]:
    out = []
    for path, tree in modules:
        if path.parent == PACKAGE and path.stem.startswith("cli"):
            for name in sorted(imports_of(tree)):
                if name.startswith(("jarvis_tui.core.store", "jarvis_tui.core.engine")):
                    out.append(f"{rel(path)}: {name}")
    return out


def contracts() -> tuple[int, int, str]:
    run = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=ROOT,
                         capture_output=True, text=True)
    line = next((x for x in run.stdout.splitlines() if "kept" in x and "broken" in x), "")
    words = line.replace(",", "").split()
    kept = int(words[words.index("kept") - 1]) if "kept" in words else 0
    broken = int(words[words.index("broken") - 1]) if "broken" in words else 0
    return kept, broken, line.strip() or run.stdout.strip()[-200:]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def bench_modules(folder: Path) -> dict[str, Path]:
    """The bench's modules by their dotted names, its packages' empty __init__.py left out."""
    return {module_name(p): p for p in sorted(folder.rglob("*.py"))
            if "__pycache__" not in p.parts and p.name != "__init__.py"}


def circles(folder: Path) -> list[list[str]]:
    """Import cycles among the modules of `folder`, across its subfolders (by dotted names
    relative to the root; `from bench.part import module` counts as importing the module)."""
    names = bench_modules(folder)
    edges = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = set(imports_of(tree))
        targets |= {f"{n.module}.{a.name}" for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and n.module and not n.level
                    for a in n.names}
        edges[name] = targets & set(names) - {name}
    found, seen = [], set()

    def visit(node: str, trail: list[str]) -> None:
        for nxt in sorted(edges[node]):
            if nxt in trail:
                cycle = trail[trail.index(nxt):]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    found.append([*cycle, nxt])
            elif len(trail) < 8:
                visit(nxt, [*trail, nxt])

    for start in sorted(edges):
        visit(start, [start])
    return found


def main(quick: bool) -> None:
    modules = trees(PACKAGE)
    print(f"The {LARGEST} largest functions and classes of jarvis_tui:")
    for lines, name, path in largest(modules):
        print(f"  {lines:>5}  {name:<40} {path}")
    engine = PACKAGE / "core" / "engine" / "engine.py"
    engine_tree = ast.parse(engine.read_text(encoding="utf-8"))
    engine_class = next((n for n in engine_tree.body
                         if isinstance(n, ast.ClassDef) and n.name == "Engine"), None)
    figures = {
        "engine.py lines": len(engine.read_text(encoding="utf-8").splitlines()),
        "Engine class lines": (engine_class.end_lineno - engine_class.lineno + 1
                               if engine_class else 0),
        "files at core/'s root": sum(1 for p in (PACKAGE / "core").glob("*.py")),
    }
    print("\nThe layout's bounds:")
    for name, value in figures.items():
        mark = "kept" if value <= BOUNDS[name] else "over"
        print(f"  {name:<24}{value:>6}  (bound {BOUNDS[name]}: {mark})")
    found = protocols([m for m in modules if "engine" in m[0].parts])
    print(f"\nProtocols in core/engine: {len(found)}")
    for line in found:
        print(f"  {line}")
    ducks = duck_getattrs(modules)
    print(f"\nDuck-typed getattrs (a constant name and a default): {len(ducks)}")
    for line in ducks:
        print(f"  {line}")
    reaches = cli_reaches(modules)
    print(f"\nThe command line's imports of core.store and core.engine: {len(reaches)}")
    for line in reaches:
        print(f"  {line}")
    if quick:
        print("\nimport-linter contracts: not run (--quick)")
    else:
        kept, broken, said = contracts()
        print(f"\nimport-linter contracts: {kept} kept, {broken} broken ({said})")
    bench = ROOT / "bench"
    per = Counter(rel(p.parent) for p in bench_modules(bench).values())
    print(f"\nbench/: {sum(per.values())} files (without the packages' __init__.py)")
    for folder, n in sorted(per.items()):
        print(f"  {folder:<24}{n:>4}")
    loops = circles(bench)
    print(f"bench/'s import circles: {len(loops)}")
    for loop in loops:
        print(f"  {' -> '.join(loop)}")
    print("\nThe developers' loop: python bench/dev/test_loop.py (minutes; not run here)")


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])

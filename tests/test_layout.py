"""The package's shape, as docs/architecture.md draws it: folders by concern, each import
pointing down the layers below (never up, never across), modules a newcomer can read at a
sitting."""

import ast
from pathlib import Path

import supervisor

PACKAGE = Path(supervisor.__file__).resolve().parent
# Lowest first. "profiles" is what supervise knows of each agent CLI, in plain functions over
# data that need nothing else of ours; "base" is the modules at the top of the package
# (settings, paths, errors, plain text, secret masks, the loop-recorder channel) that every
# folder uses.
LAYERS = [
    {"profiles"},
    {"base"},
    {"store", "terminal", "detection"},
    {"recording", "giveback", "status"},
    {"contexts", "telemetry"},
    {"memory"},
    {"agent"},
    {"run", "doctor"},
    {"cli"},
]
MAX_LINES = 400


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def folder(module: str, known: dict[str, Path]) -> str:
    parts = module.split(".")
    if module == "supervisor.__main__":
        return "top"
    if len(parts) == 2 and known[module].name != "__init__.py":
        return "base"
    return parts[1] if len(parts) > 1 else "top"


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of ours `module` imports, at its top or inside a function."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "supervisor":
                found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "supervisor"}
    return found - {module, "supervisor"}


def test_every_import_points_down_the_layers():
    known = modules()
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    folders = {folder(m, known) for m in known} - {"top"}
    assert folders == set(layer), f"folders not in a layer (or layers with no folder): {folders ^ set(layer)}"
    wrong = []
    for module, path in known.items():
        here = folder(module, known)
        for target in imports(module, path, known):
            there = folder(target, known)
            if here != "top" and there != "top" and here != there and layer[there] >= layer[here]:
                wrong.append(f"{module} ({here}) imports {target} ({there})")
    assert not wrong, "imports that point up or across:\n" + "\n".join(sorted(wrong))


def test_each_folder_says_what_it_owns_and_each_module_reads_at_a_sitting():
    known = modules()
    for module, path in known.items():
        if path.name == "__init__.py" and module != "supervisor":
            doc = ast.get_docstring(ast.parse(path.read_text()))
            assert doc and "\n" not in doc.split("\n\n")[0], f"{path}: the folder's __init__ says what it owns, in one line first"
    long = {str(p.relative_to(PACKAGE.parent)): n for p in known.values() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_every_folder_of_the_package_is_installed():
    """A folder left out of pyproject's package list is missing from the wheel, and its
    modules with it (an editable install hides that)."""
    checkout = Path(__file__).resolve().parent.parent / "supervisor"
    folders = {p.parent.relative_to(checkout) for p in checkout.rglob("__init__.py") if "__pycache__" not in p.parts}
    missing = sorted(str(f) for f in folders if not (PACKAGE / f / "__init__.py").exists())
    assert not missing, f"not installed (add them to [tool.setuptools] packages in pyproject.toml): {missing}"

"""Find LanceDB filter strings built by pasting values instead of through the escaping helpers.

A *sink* is a call that takes a SQL filter: ``.where(x)``, ``.delete(x)``, ``.count_rows(x)``,
or a ``where=``/``filter=`` keyword. Its filter must be *safe*: a string constant; an f-string,
``+`` concatenation or ``"sep".join(...)`` whose pasted parts are all safe values; a call to
``build_where`` or to a SQLAlchemy column operator (``in_``: bound parameters); or a name whose every assignment (and ``.append``) in the function is safe. A
name that is a parameter is safe when every call of that function passes a safe argument.
Safe values are constants and calls to the escaping helpers (``sql_str``, ``sql_ids``,
``_like``) or to ``int``/``float``. Anything else (``%`` or ``.format`` formatting, a pasted
variable, an attribute) is reported with its file and line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SINK_METHODS = {"where", "delete", "count_rows"}
SINK_KEYWORDS = {"where", "filter"}
NOT_TABLES = {"np", "numpy", "pc"}  # numpy.where / pyarrow.compute take arrays, not SQL
ESCAPERS = {"sql_str", "sql_ids", "_like", "int", "float"}
BUILDERS = {"build_where"}
CLAUSES = {"in_"}  # SQLAlchemy column operators: their values go as bound parameters, never pasted


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: filter not built from escaped values: {self.code}"


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class _Module:
    def __init__(self, path: Path, tree: ast.Module):
        self.path = path
        self.tree = tree
        self.functions: dict[str, ast.FunctionDef] = {}
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node

    def scope(self, node: ast.AST) -> ast.AST:
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return node
        return self.tree


class Scanner:
    """Scans a set of Python files; ``findings`` lists every unsafe filter."""

    def __init__(self, files: list[Path], root: Path):
        self.root = root
        self.modules = []
        for path in files:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            self.modules.append(_Module(path, tree))

    def findings(self) -> list[Finding]:
        out = []
        for module in self.modules:
            for node in ast.walk(module.tree):
                if not isinstance(node, ast.Call):
                    continue
                args = []
                if isinstance(node.func, ast.Attribute) and node.func.attr in SINK_METHODS and node.args \
                        and not (isinstance(node.func.value, ast.Name) and node.func.value.id in NOT_TABLES):
                    args.append(node.args[0])
                args.extend(k.value for k in node.keywords if k.arg in SINK_KEYWORDS)
                for arg in args:
                    if not self.safe(arg, module, module.scope(node), depth=0):
                        out.append(Finding(str(module.path.relative_to(self.root)), node.lineno, ast.unparse(arg)))
        return out

    def safe_value(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        return isinstance(node, ast.Call) and _name(node.func) in ESCAPERS

    def safe(self, node: ast.expr, module: _Module, scope: ast.AST, depth: int) -> bool:
        if depth > 6:
            return False
        if isinstance(node, ast.Constant):
            return node.value is None or isinstance(node.value, str)
        if isinstance(node, ast.JoinedStr):
            return all(self.safe_value(v.value) for v in node.values if isinstance(v, ast.FormattedValue))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return all(self.safe(side, module, scope, depth + 1) or self.safe_value(side)
                       for side in (node.left, node.right))
        if isinstance(node, ast.IfExp):
            return self.safe(node.body, module, scope, depth + 1) and self.safe(node.orelse, module, scope, depth + 1)
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in BUILDERS or name in CLAUSES or name in ESCAPERS - {"int", "float"}:
                return True
            if (name == "join" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Constant)
                    and len(node.args) == 1):
                items = node.args[0]
                if isinstance(items, (ast.GeneratorExp, ast.ListComp)):
                    return self.safe(items.elt, module, scope, depth + 1) or self.safe_value(items.elt)
                return self.safe(items, module, scope, depth + 1)
            return False
        if isinstance(node, ast.Name):
            return self.safe_name(node.id, module, scope, depth)
        return False

    def safe_name(self, name: str, module: _Module, scope: ast.AST, depth: int) -> bool:
        assigned = []
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                assigned.append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                assigned.append(node.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args:
                assigned.append(node.args[0])
        if assigned:
            return all(
                (isinstance(v, ast.List) and all(self.safe(e, module, scope, depth + 1) for e in v.elts))
                or self.safe(v, module, scope, depth + 1) for v in assigned)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [a.arg for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs]
            if name in params:
                return self.safe_parameter(scope, params.index(name), name, depth)
        return False

    def safe_parameter(self, function: ast.FunctionDef, position: int, name: str, depth: int) -> bool:
        """Every call of ``function`` in the scanned files passes a safe filter (or none)."""
        calls = 0
        for module in self.modules:
            for node in ast.walk(module.tree):
                if not isinstance(node, ast.Call) or _name(node.func) != function.name:
                    continue
                calls += 1
                given = [k.value for k in node.keywords if k.arg == name]
                if not given and len(node.args) > position:
                    given = [node.args[position]]
                if given and not self.safe(given[0], module, module.scope(node), depth + 1):
                    return False
        return calls > 0


def scan(paths: list[Path], root: Path) -> list[Finding]:
    """Unsafe filters in every ``.py`` file under ``paths``."""
    files = sorted(f for p in paths for f in (p.rglob("*.py") if p.is_dir() else [p]))
    return Scanner(files, root).findings()

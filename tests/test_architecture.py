"""The declared architecture holds: import-linter's contracts (setup.cfg) and no import cycles."""
from __future__ import annotations

import subprocess

import grimp

from conftest import ROOT, child_env, script


def test_import_linter_contracts_are_kept():
    result = subprocess.run([script("lint-imports")], cwd=ROOT, capture_output=True, text=True, env=child_env(),
                            timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def test_no_import_cycles():
    graph = grimp.build_graph("evalpipe")
    # a package's __init__ re-exporting its own submodules is not a cycle between modules
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.startswith(module + "."):
                graph.remove_import(importer=module, imported=imported)
    assert _cycles(graph) == []


def test_evaluators_shows_plugins_and_four_rooms():
    """evaluators/ at a glance: the metric plugins (each an entry point) and sacrebleu_api at the top, the rest
    in kernels/ (each C source beside its Python facade and reference), formulas/, realign/ and neural/ (COMET
    models on torch)."""
    from importlib.metadata import entry_points

    top = ROOT / "evaluators"
    plugins = {ep.value.split(":")[0].rsplit(".", 1)[1] for ep in entry_points(group="evalpipe.metrics")
               if ep.value.startswith("evalpipe.evaluators.")}
    assert {p.stem for p in top.glob("*.py")} == plugins | {"__init__", "sacrebleu_api"}
    assert {p.name for p in top.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == \
        {"kernels", "formulas", "realign", "neural"}
    assert not [p for room in ("", "formulas", "realign", "neural") for p in (top / room).glob("*.c")]
    for source in (top / "kernels").glob("*.c"):
        assert (top / "kernels" / f"{source.stem}.py").exists(), source

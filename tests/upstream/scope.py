"""Which of MXNet's unit tests are in scope for hybridserve — decided mechanically from the source.

THE RULE. A test function (`def test_*` at module level, or a `test_*` method of a `Test*` class)
is OUT of scope when its own source, or the source of any module-level function/class of the same
file that it references (followed transitively), contains one of these markers:

  autograd   names/attributes `autograd`, `record`, `backward`, `attach_grad`, `grad`, `_grad`,
             `mark_variables`, `zero_grad`, the gradient checkers `check_numeric_gradient`,
             `check_symbolic_backward`, `check_consistency`, `numeric_grad`, or a call of
             `check_gluon_hybridize_consistency` without `test_grad=False`
  training   `Trainer`, `optimizer`, `Optimizer`, `kvstore`, `KVStore`, `lr_scheduler`
  gpu        `gpu`, `num_gpus`, `gpu_device`, `assert_raises_cudnn_not_satisfied`,
             `assert_raises_cuda_not_satisfied`
  legacy     the legacy array API: `mx.nd`, `mx.ndarray`, a bare name `nd`, sparse storage
             (`sparse`, `tostype`, `stype`, `row_sparse`, `csr`, `csr_matrix`, `row_sparse_array`;
             keyword argument names count, as in `Parameter(..., stype='row_sparse')`)
  download   a call of `download(...)` (`gluon.utils.download`, `test_utils.download`) outside a
             function decorated with `mock.patch` (such a test mocks the network and is in scope),
             or a construction of MXNet's downloading data sets `MNIST`, `FashionMNIST`,
             `CIFAR10`, `CIFAR100`: they fetch the standard files from MXNet's servers when these
             are not under `root`, and MXNet's tests build them on an empty or the default root;
             nothing can be downloaded here (hybridserve reads those files when they are present)
  skipped    a decorator `pytest.mark.skip(...)`, `unittest.skip(...)` (upstream disabled it), or
             `pytest.mark.remote_required` (needs the network)

`record` counts only as `autograd.record` or a call `record(...)`, not as a variable of that name
(`record = mx.recordio.MXIndexedRecordIO(...)`). A test's parameters that name a module-level
function of its file (a pytest fixture such as `prepare_record`) are followed like the helpers.

Everything else is IN scope. Tests that upstream skips at run time (`skipif`, `pytest.skip`) are
reported in their own column, neither passed nor failed.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

MARKERS = {
    "autograd": {"autograd", "record", "backward", "attach_grad", "grad", "_grad",
                 "mark_variables", "zero_grad", "check_numeric_gradient", "check_symbolic_backward",
                 "check_consistency", "numeric_grad"},
    "training": {"Trainer", "optimizer", "Optimizer", "kvstore", "KVStore", "lr_scheduler"},
    "gpu": {"gpu", "num_gpus", "gpu_device", "assert_raises_cudnn_not_satisfied",
            "assert_raises_cuda_not_satisfied"},
    "legacy": {"nd", "sparse", "tostype", "stype", "row_sparse", "csr", "csr_matrix",
               "row_sparse_array"},
    "download": {"download", "MNIST", "FashionMNIST", "CIFAR10", "CIFAR100"},
}
_SKIP_DECORATORS = {"skip", "remote_required"}


@dataclass(frozen=True)
class Verdict:
    in_scope: bool
    reason: str = ""          # the category that put it out of scope


def _words(node: ast.AST) -> set[str]:
    """Every identifier used in `node`: bare names, attribute names, `mx.ndarray` as `nd`."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id != "record":
            out.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "record":
            out.add("record")
        elif isinstance(n, ast.Attribute):
            out.add("nd" if n.attr == "ndarray" and isinstance(n.value, ast.Name)
                    and n.value.id == "mx" else n.attr)
        elif isinstance(n, ast.keyword) and n.arg in MARKERS["legacy"]:
            out.add(n.arg)
        if isinstance(n, ast.Call) and _is_named(n.func, "check_gluon_hybridize_consistency"):
            if not any(k.arg == "test_grad" and isinstance(k.value, ast.Constant)
                       and k.value.value is False for k in n.keywords):
                out.add("grad")
    if _has_decorator(node, "patch"):      # the network is mocked: not a download
        out.discard("download")
    return out


def _is_named(f: ast.AST, name: str) -> bool:
    return (isinstance(f, ast.Name) and f.id == name) or (
        isinstance(f, ast.Attribute) and f.attr == name)


def _has_decorator(fn: ast.AST, *attrs: str) -> bool:
    for d in getattr(fn, "decorator_list", []):
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr in attrs:
            return True
    return False


def _skipped(fn: ast.AST) -> bool:
    return _has_decorator(fn, *_SKIP_DECORATORS)


class Module:
    """A parsed upstream test file: classify its tests by the rule above."""

    def __init__(self, source: str):
        self.tree = ast.parse(source)
        self.defs = {n.name: n for n in self.tree.body
                     if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}

    def tests(self) -> list[str]:
        names = []
        for n in self.tree.body:
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test"):
                names.append(n.name)
            elif isinstance(n, ast.ClassDef) and n.name.startswith("Test"):
                names += [f"{n.name}::{m.name}" for m in n.body
                          if isinstance(m, ast.FunctionDef) and m.name.startswith("test")]
        return names

    def _node(self, test: str) -> ast.AST:
        if "::" in test:
            cls, meth = test.split("::")
            return next(m for m in self.defs[cls].body
                        if isinstance(m, ast.FunctionDef) and m.name == meth)
        return self.defs[test]

    def classify(self, test: str) -> Verdict:
        node = self._node(test)
        if _skipped(node) or ("::" in test and _skipped(self.defs[test.split("::")[0]])):
            return Verdict(False, "skipped")
        words, seen, todo = set(), {test.split("::")[0]}, [node]
        words |= {a.arg for a in node.args.args} & set(self.defs)    # fixtures of this file
        while todo:
            w = _words(todo.pop())
            words |= w
            for name in w & set(self.defs) - seen:   # helpers of this file, transitively
                seen.add(name)
                todo.append(self.defs[name])
        for reason, markers in MARKERS.items():
            if words & markers:
                return Verdict(False, reason)
        return Verdict(True)

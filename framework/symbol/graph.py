"""The graph: `Node`s joined by entries `(node, output_index)`, and `Symbol`, a list of output entries.

A traced HybridBlock, a graph loaded from an MXNet `-symbol.json` and the graph an export writes are
the same objects. Lists MXNet derives from a graph (inputs, arguments, auxiliary states, outputs,
internals) follow MXNet's order: a post-order DFS from the heads, inputs left to right.
"""
from __future__ import annotations

import itertools
from typing import Iterable, Iterator

from ..base import GraphFormatError, NotImplementedForSymbol
from ..io.dtypes import dtype_flag
from ..ops.attrs import Attrs
from ..ops.registry import OpDef, get_op
from .backends import get_backend

Entry = tuple  # (Node, output index)
_node_ids = itertools.count()


class Node:
    __slots__ = ("opname", "op", "name", "attrs", "inputs", "control_deps", "_subgraphs",
                 "_parsed", "__weakref__")

    def __init__(self, opname: str, name: str, attrs: dict | None = None,
                 inputs: Iterable[Entry] = (), op: OpDef | None = None):
        self.opname = opname                       # 'null' for a variable
        self.op = op if op is not None or opname == "null" else get_op(opname, name)
        self.name = name
        self.attrs: dict[str, str] = dict(attrs or {})
        self.inputs: list[Entry] = list(inputs)
        self.control_deps: list[Node] = []
        self._subgraphs: list = []
        self._parsed: Attrs | None = None

    @property
    def subgraphs(self) -> list:
        return self._subgraphs

    @subgraphs.setter
    def subgraphs(self, value: list) -> None:
        self._subgraphs = value
        if self.op is not None and self.op.subgraph_attrs is not None:
            self._parsed = None         # a fused op's attrs come from its subgraph: parse again

    @property
    def is_var(self) -> bool:
        return self.opname == "null"

    @property
    def parsed(self) -> Attrs:
        if self._parsed is None:
            self._parsed = self.op.parse_attrs(self.attrs, node=self.name) if self.op else Attrs()
            if self.op is not None and self.op.subgraph_attrs is not None:
                self.op.subgraph_attrs(self._parsed, self.subgraphs)
        return self._parsed

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.n_outputs(self.parsed)

    def num_visible(self) -> int:
        return 1 if self.op is None else self.op.n_visible(self.parsed)

    def output_name(self, i: int) -> str:
        if self.op is None:
            return self.name
        base = self.op.output_name(self.parsed, i)
        return f"{self.name}_{base}" if self.name else base

    def __repr__(self) -> str:
        return f"Node({self.opname}, {self.name!r})"


def new_node_name() -> str:
    """MXNet 2.x names traced op nodes `node_<k>` with a process-wide counter."""
    return f"node_{next(_node_ids)}"


def bfloat16_vars(sym: "Symbol") -> set[str]:
    """Names of the variables typed bfloat16 (`__dtype__` flag 12): saved as bfloat16."""
    return {n.name for n in sym.topo() if n.is_var and n.attrs.get("__dtype__") == "12"}


def topo_order(heads: Iterable[Entry]) -> list[Node]:
    """Post-order DFS from the heads (inputs left→right, then control deps), iterative."""
    order: list[Node] = []
    done: set[int] = set()
    onstack: set[int] = set()
    for head, _ in heads:
        if id(head) in done:
            continue
        stack = [(head, iter(_preds(head)))]
        onstack.add(id(head))
        while stack:
            node, it = stack[-1]
            for child in it:
                if id(child) in done:
                    continue
                if id(child) in onstack:
                    raise GraphFormatError(f"graph has a cycle through node '{child.name}'")
                onstack.add(id(child))
                stack.append((child, iter(_preds(child))))
                break
            else:
                stack.pop()
                onstack.discard(id(node))
                done.add(id(node))
                order.append(node)
    return order


def _preds(node: Node) -> list[Node]:
    return [e[0] for e in node.inputs] + list(node.control_deps)


class Symbol:
    """A list of output entries of a graph (MXNet's legacy `Symbol`; `_Symbol` is the numpy one).

    The two classes behave the same here; the class only decides the repr and what `type()`
    shows, as in MXNet: traced graphs, `export(None)` and `SymbolBlock.imports` give `_Symbol`,
    while `mx.sym.load`, `get_internals()`, indexing and `Group` give `Symbol`.
    """

    def __init__(self, outputs: list[Entry]):
        self._outputs = list(outputs)

    # -- structure ----------------------------------------------------------------------------
    @property
    def outputs(self) -> list[Entry]:
        return self._outputs

    def topo(self) -> list[Node]:
        return topo_order(self._outputs)

    @property
    def name(self) -> str | None:
        return self._outputs[0][0].name if len(self._outputs) == 1 else None

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator["Symbol"]:
        return (Symbol([e]) for e in self._outputs)

    def num_outputs(self) -> int:
        return len(self._outputs)

    def _vars(self) -> list[Node]:
        return [n for n in self.topo() if n.is_var]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._vars()]

    def _aux_ids(self, nodes: list[Node]) -> set[int]:
        aux = set()
        for n in nodes:
            if n.op is not None and n.op.aux:
                for pos in n.op.aux_of(n.parsed):
                    if pos < len(n.inputs) and n.inputs[pos][0].is_var:
                        aux.add(id(n.inputs[pos][0]))
        return aux

    def list_arguments(self) -> list[str]:
        nodes = self.topo()
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.is_var and id(n) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        nodes = self.topo()
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.is_var and id(n) in aux]

    def list_outputs(self) -> list[str]:
        return [n.output_name(i) for n, i in self._outputs]

    def get_internals(self) -> "Symbol":
        ents = []
        for n in self.topo():
            ents.extend((n, i) for i in range(n.num_visible()))
        return Symbol(ents)            # legacy Symbol even for a numpy _Symbol (as MXNet)

    def get_children(self) -> "Symbol | None":
        heads = list({id(n): n for n, _ in self._outputs}.values())   # a node's outputs share inputs
        ents = [e for n in heads for e in n.inputs]
        return Symbol(ents) if ents else None

    def __getitem__(self, key) -> "Symbol":
        if isinstance(key, str):
            names = self.list_outputs()
            hits = [i for i, nm in enumerate(names) if nm == key]
            if not hits:
                raise ValueError(f"There is no output named {key!r}; outputs are {names[:20]}"
                                 + (" ..." if len(names) > 20 else ""))
            return Symbol([self._outputs[hits[0]]])
        if isinstance(key, slice):
            return Symbol(self._outputs[key])
        return Symbol([self._outputs[key]])

    # -- attributes ---------------------------------------------------------------------------
    def attr(self, key: str):
        if len(self._outputs) != 1:
            return None
        n = self._outputs[0][0]
        return n.attrs.get(key, n.attrs.get(f"__{key}__"))

    def list_attr(self) -> dict:
        return dict(self._outputs[0][0].attrs) if len(self._outputs) == 1 else {}

    def attr_dict(self) -> dict:
        return {n.name: dict(n.attrs) for n in self.topo() if n.attrs}

    # -- numpy-flavour no-ops (one symbol type here) -------------------------------------------
    def as_np_ndarray(self) -> "_Symbol":
        return _Symbol(self._outputs)

    def as_nd_ndarray(self) -> "Symbol":
        return Symbol(self._outputs)

    def has_dynamic_shape_op(self) -> bool:
        return False

    def __copy__(self) -> "Symbol":
        return self.copy()

    def __deepcopy__(self, memo) -> "Symbol":
        return self.copy()

    def __bool__(self):
        raise NotImplementedForSymbol("the truth value of a Symbol is not defined (it holds no values)")

    def optimize_for(self, backend: str, args=None, aux=None, device=None, **kwargs) -> "Symbol":
        return get_backend(backend)(self, args=args, aux=aux, **kwargs)

    def copy(self) -> "Symbol":
        """A copy with its own nodes (renaming or re-attributing it leaves the original)."""
        return rename_vars(self, {})

    def __repr__(self) -> str:
        cls = self.__class__.__name__
        if len(self._outputs) == 1:
            return f"<{cls} {self.name}>"
        return f"<{cls} group [{', '.join(n.name for n, _ in self._outputs)}]>"


class _Symbol(Symbol):
    """MXNet's numpy-flavoured symbol (`mxnet.symbol.numpy._Symbol`)."""


def var(name: str, attr: dict | None = None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
        init=None, stype=None, **kwargs) -> Symbol:
    """A variable (input or parameter) symbol with MXNet's hidden `__attr__`s."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    attrs = dict(attr or {})
    attrs.setdefault("__profiler_scope__", "<unk>:")
    if shape is not None:
        attrs["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(dtype_flag(dtype))
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}[stype])
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__")
    return Symbol([(Node("null", name, attrs), 0)])


Variable = var


def Group(symbols: list[Symbol]) -> Symbol:
    """One symbol with the outputs of several."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    return Symbol([e for s in symbols for e in s.outputs])


def rename_vars(sym: Symbol, mapping: dict[str, str]) -> Symbol:
    """A copy of `sym` whose variables are renamed by `mapping` (op nodes are copied too)."""
    new: dict[int, Node] = {}
    for n in sym.topo():
        c = Node(n.opname, mapping.get(n.name, n.name) if n.is_var else n.name, n.attrs, op=n.op)
        c.inputs = [(new[id(src)], i) for src, i in n.inputs]
        c.control_deps = [new[id(d)] for d in n.control_deps]
        c.subgraphs = n.subgraphs
        c._parsed = n._parsed
        new[id(n)] = c
    return type(sym)([(new[id(n)], i) for n, i in sym.outputs])

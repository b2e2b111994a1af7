"""`HybridBlock.export`: the traced graph with structural parameter names, plus its parameters."""
from __future__ import annotations

import warnings

from ..compiler.passes.partition import expand
from ..io.atomic import write_atomic
from ..io.params_file import save_params
from ..io.dtypes import narrow_bfloat16
from ..symbol.graph import bfloat16_vars, rename_vars
from ..symbol.json_io import _strip_amp_cast


def export(block, path: str | None, epoch: int = 0, remove_amp_cast: bool = True):
    """MXNet 2.x export: `(symbol file, params file or None)`, or `(symbol, arg_dict)` for None.

    Variables are renamed from their internal (uuid) names to structural names; a shared
    Parameter keeps the last name it has in `collect_params()` order. Parameters come from the
    cached op's inputs, so ones invented by `optimize_for` backends are exported too.
    """
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this "
                           "block at least once before calling export.")
    collected = block.collect_params()
    last_name = {id(p): name for name, p in collected.items()}
    sym = rename_vars(expand(block._cached_graph[1]),     # subgraph nodes: their MXNet ops
                      {p.var_name(): last_name[id(p)] for p in collected.values()})
    if remove_amp_cast:
        sym = _strip_amp_cast(sym)
    arg_names, aux_names = set(sym.list_arguments()), set(sym.list_auxiliary_states())
    arg_dict = {}
    for is_data, name, param in block._cached_op_args:
        if is_data:
            continue
        if name in arg_names:
            arg_dict[f"arg:{name}"] = param._reduce()
        elif name in aux_names:
            arg_dict[f"aux:{name}"] = param._reduce()
        else:
            warnings.warn(f'Parameter "{name}" is not found in the graph. ', stacklevel=3)
    if path is None:
        return sym, arg_dict
    sym_file = f"{path}-symbol.json"
    write_atomic(sym_file, sym.tojson(remove_amp_cast=False).encode("utf-8"))
    params_file = f"{path}-{epoch:04d}.params"
    save_params(params_file, narrow_bfloat16({k: v._data for k, v in arg_dict.items()},
                                             bfloat16_vars(sym)), format="npz")
    return sym_file, (params_file if arg_dict else None)

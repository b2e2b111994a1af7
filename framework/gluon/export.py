"""`HybridBlock.export`: the traced graph with structural parameter names, plus its parameters."""
from __future__ import annotations

from ..symbol.graph import rename_vars

_FORMATS = ("2.x", "1.x")


def export(block, path: str | None, epoch: int = 0, remove_amp_cast: bool = True,
           format: str = "2.x"):
    if format not in _FORMATS:
        raise ValueError(f"export format must be one of {_FORMATS}, got {format!r}")
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this "
                           "block at least once before calling export.")
    sym = block._cached_graph[1]
    params = dict(block.collect_params())
    params.update(getattr(block, "_backend_params", {}))             # invented by optimize_for
    structural = {id(p): name for name, p in params.items()}        # last name wins (dedup)
    by_var = {p.var_name(): p for p in params.values()}
    sym = rename_vars(sym, {v: structural[id(p)] for v, p in by_var.items()})
    args, aux = set(sym.list_arguments()), set(sym.list_auxiliary_states())
    arg_dict = {}
    data_names = {s.name for s in block._cached_graph[0]}
    for name in sym.list_inputs():
        if name in data_names:
            continue
        p = next(q for q in params.values() if structural[id(q)] == name)
        key = ("arg:" if name in args else "aux:") + name
        arg_dict[key] = p._reduce()
    if format == "1.x":
        from ..symbol.legacy_export import to_legacy
        sym = to_legacy(sym)
    if path is None:
        return sym, arg_dict
    from ..io.atomic import write_atomic
    from ..io.params_file import save_params
    from ..symbol.json_io import to_json
    sym_file = f"{path}-symbol.json"
    if format == "1.x":
        text = to_json(sym, remove_amp_cast=remove_amp_cast, version=10901, np_shape=False)
    else:
        text = to_json(sym, remove_amp_cast=remove_amp_cast)
    write_atomic(sym_file, text.encode("utf-8"))
    params_file = f"{path}-{epoch:04d}.params"
    save_params(params_file, {k: v._data for k, v in arg_dict.items()},
                format="legacy" if format == "1.x" else "npz")
    return sym_file, (params_file if arg_dict else None)

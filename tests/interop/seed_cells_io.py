"""Behaviour checks "semantics.*" (GLUON_SEMANTICS.md / MXNET_FORMATS.md), second part:
initializers, export/imports, input and output errors, parameter sharing, save/load."""
from seed_recorder import PREAMBLE, Notebook


# --------------------------------------------------------------------------
# Extra behaviour checks (GLUON_SEMANTICS.md / MXNET_FORMATS.md)
# --------------------------------------------------------------------------
FRESH_EXPORT = r'''
import json, os, sys, tempfile, zipfile, warnings
import mxnet as mx
from mxnet import np, npx
from mxnet.gluon import nn, HybridBlock
npx.set_np()
mx.random.seed(42)

class MLP_Hybrid(HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Dense(256, activation='relu')
        self.dense2 = nn.Dense(128, activation='relu')
        self.dense3 = nn.Dense(2)

    def forward(self, x):
        layer1 = self.dense1(x)
        layer2 = self.dense2(layer1)
        layer3 = self.dense3(layer2)
        return layer3

_tmp = tempfile.TemporaryDirectory()
os.chdir(_tmp.name)
x_bench = np.random.normal(size=(1, 512))
net_hybrid = MLP_Hybrid()
net_hybrid.initialize()
net_hybrid.hybridize()
net_hybrid(x_bench)
ret = net_hybrid.export('MLP_hybrid')
second = MLP_Hybrid(); second.initialize(); second.hybridize(); second(x_bench)
s2, _ = second.export(None)
out = {
    "export_return": list(ret),
    "symbol_json_text": open('MLP_hybrid-symbol.json').read(),  # noqa: SIM115
    "params_npz_members": [i.filename for i in zipfile.ZipFile('MLP_hybrid-0000.params').infolist()],
    "params_local_header_flags": [i.flag_bits for i in zipfile.ZipFile('MLP_hybrid-0000.params').infolist()],
    "params_compress_types": [i.compress_type for i in zipfile.ZipFile('MLP_hybrid-0000.params').infolist()],
    "second_export_internals": s2.get_internals().list_outputs(),
}
print(json.dumps(out))
os.chdir('/')
_tmp.cleanup()
'''


def semantics_io(workdir):
    def nb():
        return Notebook("GLUON_SEMANTICS.md", PREAMBLE)

    nb().step("semantics.initializer_dumps", """
        inits = {
            'Uniform()': lambda: mx.init.Uniform(),
            'Uniform(0.5)': lambda: mx.init.Uniform(0.5),
            'Normal()': lambda: mx.init.Normal(),
            'Normal(0.5)': lambda: mx.init.Normal(0.5),
            'Xavier()': lambda: mx.init.Xavier(),
            'Xavier(gaussian,in,2)': lambda: mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2),
            'MSRAPrelu()': lambda: mx.init.MSRAPrelu(),
            'Zero()': lambda: mx.init.Zero(),
            'One()': lambda: mx.init.One(),
            'Constant(3)': lambda: mx.init.Constant(3),
            'Orthogonal()': lambda: mx.init.Orthogonal(),
            'Bilinear()': lambda: mx.init.Bilinear(),
        }
        for k, f in inits.items():
            try:
                i = f()
                record[k] = {'dumps': i.dumps(), 'repr': repr(i), 'str': str(i)}
            except Exception as e:
                record[k] = {'error': type(e).__name__ + ': ' + str(e)}
        record['create_zeros'] = repr(mx.init.create('zeros'))
        """)

    nb().step("semantics.default_uniform_range", """
        mx.random.seed(0)
        d = nn.Dense(1000, in_units=1000)
        d.initialize()
        w = d.weight.data()
        record['min'] = float(w.min())
        record['max'] = float(w.max())
        record['mean_abs'] = float(abs(w).mean())
        record['bias_all_zero'] = bool(float(abs(d.bias.data()).max()) == 0.0)
        p = Parameter('bias', shape=(5,))
        p.initialize()
        record['bare_bias_param_all_zero'] = bool(float(abs(p.data()).max()) == 0.0)
        record['bare_bias_param_abs_max_le_0.07'] = bool(float(abs(p.data()).max()) <= 0.07)
        d2 = nn.Dense(4, in_units=4)
        d2.initialize(mx.init.Normal(1.0))
        record['normal_init_bias_all_zero'] = bool(float(abs(d2.bias.data()).max()) == 0.0)
        """)

    nb().step("semantics.export_two_inputs", """
        class Two(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.d = nn.Dense(2)

            def forward(self, a, b):
                return self.d(a) + b

        net = Two()
        net.initialize()
        net.hybridize()
        net(np.ones((3, 4)), np.ones((3, 2)))
        ret = net.export('two')
        record['export_return'] = ret
        record['symbol_json_text'] = __import__('pathlib').Path('two-symbol.json').read_text()
        sym = mx.sym.load('two-symbol.json')
        record['list_inputs'] = sym.list_inputs()
        record['list_outputs'] = sym.list_outputs()
        """, extra=["__import__('zipfile').ZipFile('two-0000.params').namelist()"])

    nb().step("semantics.export_none_return_types", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3, activation='relu'), nn.BatchNorm(), nn.Dense(2))
        net.initialize()
        net.hybridize()
        net(np.ones((2, 5)))
        sym, args = net.export(None)
        record['sym_type'] = type(sym).__module__ + '.' + type(sym).__name__
        record['args_type'] = type(args).__module__ + '.' + type(args).__name__
        record['arg_keys'] = list(args)
        record['arg_value_types'] = sorted({type(v).__module__ + '.' + type(v).__name__ for v in args.values()})
        record['arg_shapes'] = [(k, v.shape, str(v.dtype)) for k, v in args.items()]
        record['list_inputs'] = sym.list_inputs()
        record['list_arguments'] = sym.list_arguments()
        record['list_auxiliary_states'] = sym.list_auxiliary_states()
        record['list_outputs'] = sym.list_outputs()
        record['internals'] = sym.get_internals().list_outputs()
        record['tojson'] = sym.tojson()
        ret = net.export('bn_net', epoch=7)
        record['export_return_with_path'] = ret
        record['npz_members'] = __import__('zipfile').ZipFile(ret[1]).namelist()
        """)

    nb().step("semantics.export_no_params_return", """
        class NoParams(nn.HybridBlock):
            def forward(self, x):
                return mx.npx.relu(x) * 2

        net = NoParams()
        net.hybridize()
        net(np.ones((2, 2)))
        ret = net.export('noparams')
        record['export_return'] = ret
        record['files'] = sorted(f for f in __import__('os').listdir('.') if f.startswith('noparams'))
        record['symbol_json_text'] = __import__('pathlib').Path('noparams-symbol.json').read_text()
        """)

    fresh = nb()
    fresh.ns["FRESH_EXPORT"] = FRESH_EXPORT
    fresh.step("semantics.export_mlp_hybrid_fresh_process", """
        import subprocess, sys, json
        res = subprocess.run([sys.executable, '-c', FRESH_EXPORT], capture_output=True, text=True, timeout=300)
        record['returncode'] = res.returncode
        out = json.loads(res.stdout.strip().splitlines()[-1])
        record.update(out)
        """, note="Seed MLP_Hybrid exported in a fresh process (node counter starts fresh); "
                  "then a second export(None) in the same process.")

    nb().step("semantics.legacy_ndarray_input_error", """
        d = nn.Dense(2)
        d.initialize()
        d(mx.nd.ones((2, 3)))
        """)

    nb().step("semantics.none_input_error", """
        d = nn.Dense(2)
        d.initialize()
        d(None)
        """)

    nb().step("semantics.legacy_output_error", """
        class Legacy(nn.Block):
            def forward(self, x):
                return mx.nd.ones((1,))

        Legacy()(np.ones((1,)))
        """)

    nb().step("semantics.unused_input_warning", """
        class UnusedInput(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.d = nn.Dense(2)

            def forward(self, x, y):
                return self.d(x)

        net = UnusedInput()
        net.initialize()
        net.hybridize()
        net(np.ones((2, 3)), np.ones((2, 3)))
        """)

    nb().step("semantics.unused_param_warning", """
        class UnusedParam(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.d = nn.Dense(2, in_units=3)
                self.e = nn.Dense(2, in_units=3)

            def forward(self, x):
                return self.d(x)

        net = UnusedParam()
        net.initialize()
        net.hybridize()
        net(np.ones((2, 3)))
        """, note="Parameter names in the message are internal (uuid-based) variable names, "
                  "normalised to <uuid>_name. They come from a set of uuid strings, so their order "
                  "varies run to run even with PYTHONHASHSEED=0.")

    nb().step("semantics.input_format_mismatch", """
        class Add(nn.HybridBlock):
            def forward(self, x, y):
                if isinstance(y, (list, tuple)):
                    y = y[0]
                return x + y

        net = Add()
        net.hybridize()
        net(np.ones((2,)), np.ones((2,)))
        net(np.ones((2,)), [np.ones((2,))])
        """)

    nb().step("semantics.infer_shape_unknown_error", """
        class Unknown(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.weight = Parameter('weight', shape=(-1, 3), allow_deferred_init=True)

            def forward(self, x):
                return np.dot(x, self.weight.data())

        net = Unknown()
        net.initialize()
        net(np.ones((2, 4)))
        """)

    nb().step("semantics.weak_child_gone", """
        import gc

        class W(nn.Block):
            def __init__(self):
                super().__init__()
                self.register_child(nn.Dense(3))

            def forward(self, x):
                return x

        w = W()
        gc.collect()
        w.collect_params()
        """)

    nb().step("semantics.setattr_type_change_error", """
        d = nn.Dense(2)
        d.bias = None
        """)

    nb().step("semantics.unregistered_container_warning", """
        class Holder(nn.Block):
            def __init__(self):
                super().__init__()
                self.layers = [nn.Dense(2), nn.Dense(3)]

            def forward(self, x):
                return x

        h = Holder()
        list(h.collect_params())
        """)

    nb().step("semantics.structural_param_key_is_attr_name", """
        class P(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.w = Parameter('myweight', shape=(2,))

            def forward(self, x):
                return x * self.w.data()

        p = P()
        record['keys'] = list(p.collect_params())
        record['name'] = p.w.name
        p.initialize()
        p.hybridize()
        p(np.ones((2,)))
        sym, args = p.export(None)
        record['export_none_arg_keys'] = list(args)
        record['internals'] = sym.get_internals().list_outputs()
        """)

    nb().step("semantics.share_parameters", """
        a = nn.Dense(2, in_units=3)
        b = nn.Dense(2, in_units=3)
        b.share_parameters(a.collect_params())
        record['same_weight'] = b.weight is a.weight
        c = nn.Dense(2, in_units=3)
        c.share_parameters({'weight': a.weight, 'extra': a.bias})
        """)

    nb().step("semantics.share_parameters_type_error", """
        a = nn.Dense(2, in_units=3)
        a.share_parameters([1, 2])
        """)

    nb().step("semantics.save_dedup_and_load_errors", """
        class S(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.d = nn.Dense(2, in_units=3)
                self.e = nn.Dense(2, in_units=3)
                self.e.share_parameters(self.d.collect_params())

            def forward(self, x):
                return self.e(self.d(x))

        s = S()
        s.initialize()
        s.save_parameters('s_all.params')
        s.save_parameters('s_dedup.params', deduplicate=True)
        zf = __import__('zipfile').ZipFile
        record['all_members'] = zf('s_all.params').namelist()
        record['dedup_members'] = zf('s_dedup.params').namelist()
        t = S()
        t.load_parameters('s_dedup.params')
        record['load_dedup_ok'] = True
        d = nn.Dense(2, in_units=3)
        try:
            d.load_parameters('s_all.params')
        except Exception as e:
            record['load_missing_error'] = [type(e).__name__, str(e)]
        big = nn.HybridSequential()
        big.add(nn.Dense(2, in_units=3))
        big.initialize()
        big.save_parameters('big.params')
        d2 = nn.Dense(2, in_units=3)
        try:
            d2.load_parameters('big.params')
        except Exception as e:
            record['load_missing_error_2'] = [type(e).__name__, str(e)]
        d3 = nn.Dense(2, in_units=3)
        d3.initialize()
        d3.save_parameters('d3.params')
        big2 = nn.HybridSequential()
        big2.add(nn.Dense(2, in_units=3))
        try:
            big2.load_parameters('d3.params')
        except Exception as e:
            record['load_missing_error_3'] = [type(e).__name__, str(e)]
        x = nn.Dense(2, in_units=4)
        try:
            x.load_parameters('d3.params')
        except Exception as e:
            record['load_shape_error'] = [type(e).__name__, str(e)]
        d3.save_parameters('d3_extra.params')
        y = nn.Dense(2, in_units=3, use_bias=False)
        try:
            y.load_parameters('d3_extra.params')
        except Exception as e:
            record['load_extra_error'] = [type(e).__name__, str(e)]
        """)

    nb().step("semantics.reset_device_after_hybridize", """
        d = nn.Dense(2)
        d.initialize()
        d.hybridize()
        d(np.ones((1, 3)))
        d.reset_device(mx.cpu())
        """)

    nb().step("semantics.symbolblock_repr_and_imports_warning", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3, activation='relu'), nn.Dense(2))
        net.initialize()
        net.hybridize()
        net(np.ones((1, 4)))
        net.export('sb')
        sb = nn.SymbolBlock.imports('sb-symbol.json', ['data'], 'sb-0000.params')
        record['repr'] = repr(sb)
        record['params'] = [(k, v.shape, str(v.dtype)) for k, v in sb.collect_params().items()]
        sb(np.ones((1, 4)))
        record['params_after_forward'] = [(k, v.shape) for k, v in sb.collect_params().items()]
        sb2 = nn.SymbolBlock.imports('sb-symbol.json', 'data')
        record['no_param_file_params'] = [(k, v.shape, str(v.dtype)) for k, v in sb2.collect_params().items()]
        """)

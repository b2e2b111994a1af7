"""Cells of the two seed documents (HybridBlock deep dive, ids "hybridblock.*"; Gluon crash
course, ids "tutorial.*"), in document order; run by `seed_examples_mx2.py`."""
import os

from seed_recorder import Notebook, npz_members, npz_summary, timing_filter


# Seed 000: HybridBlock deep dive
# --------------------------------------------------------------------------
def seed_hybrid(workdir):
    nb = Notebook("seeds/000_7df3512d7d404845.txt")

    nb.step("hybridblock.model_minimal", """
        import mxnet as mx
        from mxnet.gluon import HybridBlock, nn

        class Model(HybridBlock):
            def __init__(self, **kwargs):
                super(Model, self).__init__(**kwargs)
                self.dense0 = nn.Dense(20)
                self.dense1 = nn.Dense(20)

            def forward(self, x):
                x = mx.npx.relu(self.dense0(x))
                return mx.npx.relu(self.dense1(x))

        model = Model()
        model.initialize(device=mx.cpu(0))
        model.hybridize()
        model(mx.np.zeros((10, 10), device=mx.cpu(0)))
        """, extra=["model", "sorted(model.collect_params().keys())",
                    "float(abs(model(mx.np.zeros((10, 10), device=mx.cpu(0)))).sum())"])

    nb.step("hybridblock.hybridize_signature", """
        import inspect
        str(inspect.signature(HybridBlock.hybridize))
        """, note="The seed shows the signature as text; recorded via inspect.")

    nb.step("hybridblock.hybridsequential", """
        from mxnet.gluon import nn
        net = nn.HybridSequential()
        net.add(nn.Dense(10, activation='relu'))
        net.add(nn.Dense(20))
        net.hybridize()
        """, extra=["net", "len(net)", "net[0]", "net[:1]", "net._active", "net[0]._active",
                    "net[0].act._active"])

    nb.step("hybridblock.export_imports_resnet18", """
        from mxnet import gluon
        net1 = gluon.model_zoo.vision.resnet18_v1(pretrained=False)
        net1.initialize()
        net1.hybridize()
        x = mx.nd.random.normal(shape=(1, 3, 32, 32))
        out1 = net1(x)
        net1.export('net1', epoch=1)
        net2 = gluon.SymbolBlock.imports('net1-symbol.json', ['data'], 'net1-0001.params')
        out2 = net2(x)
        """, note="pretrained=True replaced by pretrained=False + initialize() (no weights "
                  "download). Faithful otherwise: the legacy mx.nd input is rejected in 2.x numpy mode.")

    nb.step("hybridblock.export_imports_resnet18_np", """
        import os
        net1 = gluon.model_zoo.vision.resnet18_v1(pretrained=False)
        net1.initialize()
        net1.hybridize()
        x = mx.np.random.normal(size=(1, 3, 32, 32))
        out1 = net1(x)
        r = net1.export('net1', epoch=1)
        net2 = gluon.SymbolBlock.imports('net1-symbol.json', ['data'], 'net1-0001.params')
        out2 = net2(x)
        record['export_return'] = r
        record['out1'] = out1
        record['out2'] = out2
        record['allclose'] = bool(mx.np.allclose(out1, out2, rtol=1e-4, atol=1e-5))
        record['files'] = sorted(os.listdir('.'))
        record['n_params_imported'] = len(net2.collect_params())
        record['first_imported_param_names'] = list(net2.collect_params().keys())[:6]
        """, note="Variant of the previous cell with an mx.np input (pretrained=False).",
        extra=[])

    nb.step("hybridblock.alexnet_feature_extraction", """
        alexnet = gluon.model_zoo.vision.alexnet(pretrained=False, device=mx.cpu())
        alexnet.initialize()
        inputs = mx.sym.var('data')
        out = alexnet(inputs)
        internals = out.get_internals()
        outputs = [internals['features_9_act_fwd_output'], internals['features_11_act_fwd_output']]
        feat_model = gluon.SymbolBlock(outputs, inputs, params=alexnet.collect_params())
        """, note="pretrained=True -> False + initialize(). 1.x-style feature extraction; "
                  "see MXNET_FORMATS.md §7 for the 2.x failure.")

    nb.step("hybridblock.alexnet_feature_extraction_2x_recipe", """
        alexnet.hybridize()
        img = mx.np.random.uniform(size=(1, 3, 224, 224))
        alexnet(img)
        sym, arg = alexnet.export(None)
        internals = sym.get_internals()
        names = internals.list_outputs()
        record['internals'] = names
        # features.9 / features.11 are Dense(4096, activation='relu'): variable
        # bias, then the FullyConnected output, then the Activation output.
        act9 = names[names.index('features.9.bias') + 2]
        act11 = names[names.index('features.11.bias') + 2]
        record['act9_act11'] = [act9, act11]
        data = mx.sym.var('data').as_np_ndarray()
        feat_model = gluon.SymbolBlock([internals[act9], internals[act11]], data)
        feat_model.load_dict(arg, ignore_extra=True)
        record['feat_out'] = feat_model(img)
        record['feat_model_repr'] = repr(feat_model)
        """, note="Working 2.x recipe from MXNET_FORMATS.md §7 (export(None) -> get_internals).")

    nb.step("hybridblock.alexnet_symbolblock_all_params_error", """
        sub_out = internals[act9]
        gluon.SymbolBlock(sub_out, data, params=alexnet.collect_params())
        """, note="SymbolBlock over a truncated 2.x graph with all collect_params(). "
                  "The message prints a Python set (order depends on PYTHONHASHSEED; 0 here).")

    nb.step("hybridblock.alexnet_symbolblock_used_params_error", """
        used = set(sub_out.list_inputs())
        p = {k: v for k, v in alexnet.collect_params().items() if k in used}
        record['used_param_names'] = sorted(p)
        fm = gluon.SymbolBlock(sub_out, data, params=p)
        fm(img)
        """, note="Passing only the used subset of Parameters (they keep internal var names). "
                  "Which name is reported first comes from set iteration (PYTHONHASHSEED=0 here).")


# --------------------------------------------------------------------------
# Seed 004: crash course, create a neural network
# --------------------------------------------------------------------------
def seed_tutorial(workdir):
    nb = Notebook("seeds/004_2b7c6da5378ea6ae.txt")

    nb.step("tutorial.imports", """
        from mxnet import np, npx
        from mxnet.gluon import nn
        npx.set_np()  # Change MXNet to the numpy-like mode.
        """)

    nb.step("tutorial.dense_repr", """
        layer = nn.Dense(5)
        layer
        """, extra=["layer.weight", "layer.weight.shape", "layer.bias", "layer.act"])

    nb.step("tutorial.dense_in_units_repr", """
        layer = nn.Dense(5, in_units=3)
        layer
        """, extra=["layer.weight.shape"])

    nb.step("tutorial.dense_activation", """
        layer = nn.Dense(5, in_units=3, activation='relu')
        """, extra=["layer", "layer.act", "str(layer)"])

    nb.step("tutorial.initialize", """
        layer.initialize()
        w = layer.weight.data()
        record['weight_abs_max'] = float(abs(w).max())
        record['weight_within_0.07'] = bool(float(abs(w).max()) <= 0.07)
        record['bias_all_zero'] = bool(float(abs(layer.bias.data()).max()) == 0.0)
        del w
        """, note="The seed says the default init draws from [-0.7, 0.7]; real default is Uniform(0.07).")

    nb.step("tutorial.forward", """
        x = np.random.uniform(-1, 1, (10, 3))
        layer(x)
        """, extra=["x"])

    nb.step("tutorial.layer_params", """
        layer.params
        """, extra=["type(layer.params)", "list(layer.params)"])

    nb.step("tutorial.weight_data", """
        layer.weight.data()
        """, extra=["layer.bias.data()", "layer.weight.data().device"])

    nb.step("tutorial.sequential_mlp", """
        net = nn.Sequential()

        net.add(nn.Dense(5, in_units=3, activation='relu'),
                nn.Dense(25, activation='relu'),
                nn.Dense(2))

        net
        """, extra=["len(net)"])

    nb.step("tutorial.sequential_getitem", """
        net[1]
        """, extra=["net[0]", "net[-1]", "net[0:2]"])

    nb.step("tutorial.net_block_skeleton", """
        class Net(nn.Block):
            def __init__(self):
                super().__init__()

            def forward(self, x):
                return x
        """, extra=["Net()", "Net()(np.ones((2, 3)))"])

    nb.step("tutorial.mlp_block", """
        class MLP(nn.Block):
            def __init__(self):
                super().__init__()
                self.dense1 = nn.Dense(5, activation='relu')
                self.dense2 = nn.Dense(25, activation='relu')
                self.dense3 = nn.Dense(2)

            def forward(self, x):
                layer1 = self.dense1(x)
                layer2 = self.dense2(layer1)
                layer3 = self.dense3(layer2)
                return layer3

        net = MLP()
        net
        """, extra=["list(net.collect_params())"])

    nb.step("tutorial.mlp_dense1_params", """
        net.dense1.params
        """)

    nb.step("tutorial.custom_parameters", """
        from mxnet.gluon import Parameter

        weight = Parameter("custom_parameter_weight", shape=(5, -1))
        bias = Parameter("custom_parameter_bias", shape=(5, -1))

        weight, bias
        """, extra=["weight.name", "weight.grad_req", "weight.dtype", "weight.shape"])

    nb.step("tutorial.custom_layer_def", """
        class custom_layer(nn.Block):
            def __init__(self, out_units, in_units=0):
                super().__init__()
                self.weight = Parameter("weight", shape=(in_units, out_units), allow_deferred_init=True)
                self.bias = Parameter("bias", shape=(out_units,), allow_deferred_init=True)

            def forward(self, x):
                return np.dot(x, self.weight.data()) + self.bias.data()
        """)

    nb.step("tutorial.custom_layer_forward", """
        dense = custom_layer(3, in_units=5)
        dense.initialize()
        dense(np.random.uniform(size=(4, 5)))
        """, extra=["dense", "dense.params"])

    nb.step("tutorial.lenet_def", """
        class LeNet(nn.Block):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2D(channels=6, kernel_size=3, activation='relu')
                self.pool1 = nn.MaxPool2D(pool_size=2, strides=2)
                self.conv2 = nn.Conv2D(channels=16, kernel_size=3, activation='relu')
                self.pool2 = nn.MaxPool2D(pool_size=2, strides=2)
                self.dense1 = nn.Dense(120, activation="relu")
                self.dense2 = nn.Dense(84, activation="relu")
                self.dense3 = nn.Dense(10)

            def forward(self, x):
                x = self.conv1(x)
                x = self.pool1(x)
                x = self.conv2(x)
                x = self.pool2(x)
                x = self.dense1(x)
                x = self.dense2(x)
                x = self.dense3(x)
                return x

        lenet = LeNet()
        """, extra=["lenet"])

    nb.step("tutorial.lenet_custom_def", """
        class LeNet_custom(nn.Block):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2D(channels=6, kernel_size=3, activation='relu')
                self.pool1 = nn.MaxPool2D(pool_size=2, strides=2)
                self.conv2 = nn.Conv2D(channels=16, kernel_size=3, activation='relu')
                self.pool2 = nn.MaxPool2D(pool_size=2, strides=2)
                self.dense1 = nn.Dense(120, activation="relu")
                self.dense2 = nn.Dense(84, activation="relu")
                self.dense3 = custom_layer(10, 84)

            def forward(self, x):
                x = self.conv1(x)
                x = self.pool1(x)
                x = self.conv2(x)
                x = self.pool2(x)
                x = self.dense1(x)
                x = self.dense2(x)
                x = self.dense3(x)
                return x

        lenet_custom = LeNet_custom()
        """, extra=["lenet_custom"])

    nb.step("tutorial.lenet_forward", """
        image_data = np.random.uniform(-1, 1, (1, 1, 28, 28))

        lenet.initialize()
        lenet_custom.initialize()

        print("Lenet:")
        print(lenet(image_data))

        print("Custom Lenet:")
        print(lenet_custom(image_data))
        """, extra=["lenet", "lenet_custom.dense3.weight.shape"])

    nb.step("tutorial.lenet_param_shapes", """
        lenet.conv1.weight.data().shape, lenet.dense1.bias.data().shape
        """, extra=["list(lenet.collect_params())",
                    "[(k, v.shape) for k, v in lenet.collect_params().items()]"])

    nb.step("tutorial.model_zoo_resnet50_v2", """
        from mxnet.gluon import model_zoo

        net = model_zoo.vision.resnet50_v2(pretrained=False)
        net.initialize()
        net.hybridize()

        dummy_input = np.ones(shape=(1, 3, 224, 224))
        output = net(dummy_input)
        output.shape
        """, note="pretrained=True replaced by pretrained=False + initialize() (no weights download).")

    nb.step("tutorial.net_hybrid_seq_repr", """
        net_hybrid_seq = nn.HybridSequential()

        net_hybrid_seq.add(nn.Dense(5, in_units=3, activation='relu'),
                           nn.Dense(25, activation='relu'),
                           nn.Dense(2))

        net_hybrid_seq
        """)

    nb.step("tutorial.net_hybrid_seq_hybridize", """
        net_hybrid_seq.hybridize()
        """, extra=["net_hybrid_seq._active", "net_hybrid_seq._flags",
                    "[c()._active for c in net_hybrid_seq._children.values()]"])

    nb.step("tutorial.custom_hybrid_layer", """
        class CustomLayer(nn.HybridBlock):
            def __init__(self, out_units, in_units=-1):
                super().__init__()
                self.weight = Parameter("weight", shape=(in_units, out_units), allow_deferred_init=True)
                self.bias = Parameter("bias", shape=(out_units,), allow_deferred_init=True)

            def forward(self, x):
                print(self.weight.shape, self.bias.shape)
                return np.dot(x, self.weight.data()) + self.bias.data()

            def infer_shape(self, x):
                print(self.weight.shape, x.shape)
                self.weight.shape = (x.shape[-1], self.weight.shape[1])

        dense = CustomLayer(3)
        dense.initialize()
        dense(np.random.uniform(size=(4, 5)))
        """, extra=["dense", "dense.weight"])

    nb.step("tutorial.custom_hybrid_layer_hybridized", """
        dense2 = CustomLayer(3)
        dense2.initialize()
        dense2.hybridize()
        print('first call')
        y1 = dense2(np.random.uniform(size=(4, 5)))
        print('second call')
        y2 = dense2(np.random.uniform(size=(4, 5)))
        y2
        """, note="Extra (not in the seed): the same CustomLayer hybridized, to show when "
                  "forward's print runs (only during graph capture).")

    nb.step("tutorial.benchmark_hybrid_seq", """
        from time import time

        def benchmark(net, x):
            y = net(x)
            start = time()
            for i in range(1, 1000):
                y = net(x)
            return time() - start

        x_bench = np.random.normal(size=(1, 512))

        net_hybrid_seq = nn.HybridSequential()

        net_hybrid_seq.add(nn.Dense(256, activation='relu'),
                           nn.Dense(128, activation='relu'),
                           nn.Dense(2))
        net_hybrid_seq.initialize()

        print('Before hybridizing: %.4f sec'%(benchmark(net_hybrid_seq, x_bench)))
        net_hybrid_seq.hybridize()
        print('After hybridizing: %.4f sec'%(benchmark(net_hybrid_seq, x_bench)))
        """, stdout_filter=timing_filter, extra=["net_hybrid_seq"],
        note="Timings replaced by <t>.")

    nb.step("tutorial.mlp_hybrid_benchmark", """
        from mxnet.gluon import HybridBlock

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

        net_hybrid = MLP_Hybrid()
        net_hybrid.initialize()

        print('Before hybridizing: %.4f sec'%(benchmark(net_hybrid, x_bench)))
        net_hybrid.hybridize()
        print('After hybridizing: %.4f sec'%(benchmark(net_hybrid, x_bench)))
        """, stdout_filter=timing_filter, extra=["net_hybrid", "list(net_hybrid.collect_params())"],
        note="Timings replaced by <t>.")

    nb.step("tutorial.save_parameters", """
        file_name = 'layer.params'
        layer.save_parameters(file_name)
        """, extra=["__import__('zipfile').ZipFile('layer.params').namelist()",
                    "__import__('pathlib').Path('layer.params').read_bytes()[:4]"])

    nb.step("tutorial.build_model", """
        def build_model():
            layer = nn.Dense(5, in_units=3, activation='relu')
            return layer

        layer_new = build_model()
        """, extra=["layer_new"])

    nb.step("tutorial.load_parameters", """
        layer_new.load_parameters('layer.params')
        """, extra=["bool((layer_new.weight.data() == layer.weight.data()).all())",
                    "bool((layer_new.bias.data() == layer.bias.data()).all())",
                    "layer_new"])

    rec = nb.step("tutorial.export_mlp_hybrid", """
        net_hybrid.export('MLP_hybrid')
        """)
    if rec["error"] is None:
        with open("MLP_hybrid-symbol.json") as f:
            sym_text = f.read()
        rec.setdefault("values", {})["symbol_json_text"] = sym_text
        rec["values"]["params_npz_members"] = npz_members("MLP_hybrid-0000.params")
        rec["values"]["params_npz_summary"] = npz_summary("MLP_hybrid-0000.params")
        rec["values"]["files"] = sorted(os.listdir("."))
        rec["note"] = ("Op node names node_k use a process-wide counter; see "
                       "semantics.export_mlp_hybrid_fresh_process for a fresh-process export.")

    nb.step("tutorial.export_mlp_hybrid_symbol_lists", """
        import mxnet as mx
        sym = mx.sym.load('MLP_hybrid-symbol.json')
        record['type'] = type(sym).__module__ + '.' + type(sym).__name__
        record['list_inputs'] = sym.list_inputs()
        record['list_arguments'] = sym.list_arguments()
        record['list_auxiliary_states'] = sym.list_auxiliary_states()
        record['list_outputs'] = sym.list_outputs()
        record['internals_list_outputs'] = sym.get_internals().list_outputs()
        record['repr'] = repr(sym)
        sym2, args2 = net_hybrid.export(None)
        record['export_none_list_outputs'] = sym2.list_outputs()
        record['export_none_internals'] = sym2.get_internals().list_outputs()
        record['export_none_arg_keys'] = list(args2)
        """, note="Extra: symbol listing of the exported seed MLP_Hybrid.")

    nb.step("tutorial.symbolblock_imports", """
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net_loaded = nn.SymbolBlock.imports("MLP_hybrid-symbol.json", ['data'], "MLP_hybrid-0000.params", device=None)
        """, extra=["net_loaded", "list(net_loaded.collect_params())",
                    "[(k, v.shape, v.dtype) for k, v in net_loaded.collect_params().items()]"])

    nb.step("tutorial.symbolblock_imports_unsuppressed", """
        net_loaded_w = nn.SymbolBlock.imports("MLP_hybrid-symbol.json", ['data'], "MLP_hybrid-0000.params", device=None)
        """, note="Extra: the same imports without suppressing warnings, to record what the seed hides.")

    nb.step("tutorial.net_loaded_forward", """
        net_loaded(x_bench)
        """, extra=["bool(np.allclose(net_loaded(x_bench), net_hybrid(x_bench), rtol=1e-5, atol=1e-6))",
                    "[(k, v.shape) for k, v in net_loaded.collect_params().items()]"])

    nb.step("tutorial.layer_summary", """
        layer.summary(x)
        """)

    nb.step("tutorial.lenet_summary", """
        lenet.summary(image_data)
        """)

    nb.step("tutorial.net_hybrid_summary_error", """
        net_hybrid.summary(x_bench)
        """)

    nb.step("tutorial.net_hybrid_summary_flow", """
        net_hybrid_summary = MLP_Hybrid()

        net_hybrid_summary.initialize()

        net_hybrid_summary.summary(x_bench)

        net_hybrid_summary.hybridize()
        """, extra=["net_hybrid_summary._active", "net_hybrid_summary(x_bench).shape"])


# --------------------------------------------------------------------------
# Extra behaviour checks (GLUON_SEMANTICS.md / MXNET_FORMATS.md)

"""Behaviour checks "semantics.*" (GLUON_SEMANTICS.md), first part: arrays, blocks, hooks,
parameters, containers, summaries and layer reprs. Each check runs in a fresh namespace."""
from seed_recorder import PREAMBLE, Notebook


def semantics_blocks(workdir):
    def nb():
        return Notebook("GLUON_SEMANTICS.md", PREAMBLE)

    nb().step("semantics.ndarray_repr", """
        record['zeros_2x3'] = repr(np.zeros((2, 3)))
        record['int32'] = repr(np.array([1, 2], dtype='int32'))
        record['scalar'] = repr(np.ones(()))
        record['float64'] = repr(np.array([0.5, 1.5], dtype='float64'))
        record['legacy_nd'] = repr(mx.nd.ones((2, 2)))
        record['str_zeros_2x3'] = str(np.zeros((2, 3)))
        record['default_dtype'] = str(np.ones((2,)).dtype)
        record['uniform_default_dtype'] = str(np.random.uniform(size=(2,)).dtype)
        record['device'] = str(np.ones((2,)).device)
        """)

    nb().step("semantics.hybrid_forward_class_construction", """
        class OldStyle(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(2)

            def hybrid_forward(self, F, x):
                return self.dense(x)

        OldStyle()
        """)

    nb().step("semantics.hybridblock_without_forward", """
        class NoForward(nn.HybridBlock):
            pass

        b = NoForward()
        b(np.ones((2, 2)))
        """)

    nb().step("semantics.sequential_hybridize_all_hybrid_warning", """
        net = nn.Sequential()
        net.add(nn.Dense(3, activation='relu'), nn.Dense(2))
        net.hybridize()
        """, extra=["net[0]._active"])

    nb().step("semantics.sequential_hybridize_mixed_children_no_warning", """
        class Plain(nn.Block):
            def forward(self, x):
                return x

        net = nn.Sequential()
        net.add(nn.Dense(3), Plain())
        net.hybridize()
        empty = nn.Sequential()
        empty.hybridize()
        """)

    nb().step("semantics.hybridsequential_add_after_hybridize_warning", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3))
        net.initialize()
        net.hybridize()
        net(np.ones((2, 4)))
        net.add(nn.Dense(2))
        record['active_after_add'] = net._active
        record['child0_active_after_add'] = net[0]._active
        """)

    nb().step("semantics.hybridblock_setattr_child_after_hybridize", """
        class Two(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.a = nn.Dense(2)

            def forward(self, x):
                return self.a(x)

        t = Two()
        t.hybridize()
        t.b = nn.Dense(3)
        record['active_after_setattr'] = t._active
        """)

    nb().step("semantics.cast_warning", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3, activation='relu'), nn.Dense(2))
        net.initialize()
        net.hybridize()
        net(np.ones((2, 4)))
        net.cast('float64')
        record['active_after_cast'] = net._active
        record['dtypes'] = [(k, str(p.dtype)) for k, p in net.collect_params().items()]
        record['out_dtype'] = str(net(np.ones((2, 4), dtype='float64')).dtype)
        """)

    nb().step("semantics.cast_not_hybridized_no_warning", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3))
        net.initialize()
        net.cast('float16')
        record['dtypes'] = [(k, str(p.dtype)) for k, p in net.collect_params().items()]
        """)

    nb().step("semantics.hook_hybridize_warning", """
        d = nn.Dense(2)
        h = d.register_forward_hook(lambda blk, inp, out: None)
        d.hybridize()
        record['handle_type'] = type(h).__module__ + '.' + type(h).__name__
        """)

    nb().step("semantics.pre_hook_hybridize_inactive_warning", """
        d = nn.Dense(2)
        d.register_forward_pre_hook(lambda blk, inp: None)
        d.hybridize(active=False)
        """)

    nb().step("semantics.forward_hook_inactive_no_warning", """
        d = nn.Dense(2)
        d.register_forward_hook(lambda blk, inp, out: None)
        d.hybridize(active=False)
        """)

    nb().step("semantics.hooks_call_args_and_hybridized_calls", """
        d = nn.Dense(2)
        d.initialize()
        calls = []
        d.register_forward_pre_hook(lambda blk, inp: calls.append(['pre', type(inp).__name__, len(inp)]))
        d.register_forward_hook(lambda blk, inp, out: calls.append(['post', type(inp).__name__, type(out).__name__]))
        d(np.ones((1, 3)))
        d(np.ones((1, 3)))
        record['imperative_calls'] = list(calls)
        calls.clear()
        d.hybridize()
        d(np.ones((1, 3)))
        d(np.ones((1, 3)))
        d(np.ones((1, 3)))
        record['hybridized_calls'] = list(calls)
        """)

    for monitor_all in (False, True):
        nb().step(f"semantics.op_hook_monitor_all_{str(monitor_all).lower()}", f"""
            net = nn.HybridSequential()
            net.add(nn.Dense(4, activation='relu'), nn.Dense(2))
            net.initialize()
            net.hybridize()
            calls = []

            def cb(name, op_name, arr):
                calls.append([name, op_name, type(arr).__module__ + '.' + type(arr).__name__, list(arr.shape)])

            net.register_op_hook(cb, monitor_all={monitor_all})
            x = np.ones((3, 5))
            import warnings
            with warnings.catch_warnings(record=True) as w1:
                warnings.simplefilter('always')
                net(x)
            record['calls_first_call'] = list(calls)
            record['warnings_first_call'] = [str(w.message) for w in w1]
            calls.clear()
            with warnings.catch_warnings(record=True) as w2:
                warnings.simplefilter('always')
                net(x)
            record['calls_second_call'] = list(calls)
            record['warnings_second_call'] = [str(w.message) for w in w2]
            record['children_have_callback'] = [c()._callback is not None for c in net._children.values()]
            record['grandchild_act_has_callback'] = net[0].act._callback is not None
            """)

    nb().step("semantics.op_hook_before_hybridize", """
        net = nn.HybridSequential()
        net.add(nn.Dense(4, activation='relu'), nn.Dense(2))
        net.initialize()
        calls = []
        net.register_op_hook(lambda n, o, a: calls.append([n, o]))
        net(np.ones((3, 5)))
        record['calls_not_hybridized'] = list(calls)
        net.hybridize()
        net(np.ones((3, 5)))
        record['calls_after_hybridize'] = list(calls)
        """)

    nb().step("semantics.export_before_forward", """
        net = nn.HybridSequential()
        net.add(nn.Dense(2))
        net.initialize()
        net.hybridize()
        net.export('never')
        """)

    nb().step("semantics.export_not_hybridized", """
        net = nn.HybridSequential()
        net.add(nn.Dense(2))
        net.initialize()
        net(np.ones((1, 3)))
        net.export('never')
        """)

    nb().step("semantics.data_before_initialize", """
        layer = nn.Dense(3, in_units=2)
        layer.weight.data()
        """)

    nb().step("semantics.list_device_before_initialize", """
        layer = nn.Dense(3, in_units=2)
        layer.weight.list_device()
        """)

    nb().step("semantics.deferred_init_error", """
        layer = nn.Dense(3)
        layer.initialize()
        layer.weight.data()
        """)

    nb().step("semantics.forward_uninitialized_error", """
        layer = nn.Dense(3)
        layer(np.ones((2, 4)))
        """)

    nb().step("semantics.param_shape_incompatible", """
        p = Parameter('weight', shape=(5, 3))
        p.shape = (5, 4)
        """)

    nb().step("semantics.param_shape_unknown_dims_fill", """
        p = Parameter('weight', shape=(5, -1))
        p.shape = (5, 4)
        record['after'] = p.shape
        q = Parameter('w0', shape=(5, 0))
        record['zero_dim_shown_as'] = q.shape
        """)

    nb().step("semantics.dense_in_units_mismatch", """
        layer = nn.Dense(5, in_units=3)
        layer.initialize()
        layer(np.ones((2, 4)))
        """)

    nb().step("semantics.param_invalid_shape_initialize", """
        p = Parameter('w', shape=(2, -1))
        p.initialize()
        """)

    nb().step("semantics.param_already_initialized_warning", """
        layer = nn.Dense(3, in_units=2)
        layer.initialize()
        layer.initialize()
        """)

    nb().step("semantics.param_grad_req_invalid", """
        p = Parameter('w', shape=(2,))
        p.grad_req = 'sometimes'
        """)

    nb().step("semantics.parameter_reprs", """
        record['default_dtype'] = repr(Parameter('w', shape=(2, -1)))
        record['no_shape'] = repr(Parameter('w'))
        record['int_shape'] = repr(Parameter('w', shape=3))
        record['str_dtype'] = repr(Parameter('w', shape=(2, 3), dtype='float16'))
        c = gluon.Constant(np.ones((2, 2)))
        record['constant'] = repr(c)
        record['constant_name'] = c.name
        record['constant_grad_req'] = c.grad_req
        record['dense_weight'] = repr(nn.Dense(2).weight)
        """)

    nb().step("semantics.hybridsequential_register_block_error", """
        class Plain(nn.Block):
            def forward(self, x):
                return x

        net = nn.HybridSequential()
        net.add(Plain())
        """)

    nb().step("semantics.hybridsequential_register_sequential_error", """
        net = nn.HybridSequential()
        net.add(nn.Sequential())
        """)

    nb().step("semantics.collect_params_nested", """
        class Inner(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.w = Parameter('myweight', shape=(2,))
                self.a = nn.Dense(2, in_units=3)
                self.features = nn.HybridSequential()
                self.features.add(nn.Conv2D(4, 3, in_channels=1), nn.BatchNorm(), nn.Dense(3))

            def forward(self, x):
                return x

        outer = nn.HybridSequential()
        inner = nn.HybridSequential()
        inner.add(nn.Dense(2))
        outer.add(inner, nn.Dense(1), Inner())
        params = outer.collect_params()
        record['type'] = type(params).__module__ + '.' + type(params).__name__
        record['keys'] = list(params)
        record['select_2'] = list(outer.collect_params('2'))
        record['select_dotstar_weight'] = list(outer.collect_params('.*weight'))
        record['select_weight'] = list(outer.collect_params('weight'))
        record['select_2_features'] = list(outer.collect_params('2.features.1'))
        record['select_alt'] = list(outer.collect_params('.*(bias|running_mean)'))
        record['inner_params_own'] = list(outer[2].params)
        record['inner_w_name'] = outer[2].w.name
        """)

    nb().step("semantics.block_repr_nested", """
        class Inner(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.w = Parameter('myweight', shape=(2,))
                self.a = nn.Dense(2, in_units=3)
                self.features = nn.HybridSequential()
                self.features.add(nn.Conv2D(4, 3, in_channels=1), nn.BatchNorm())
                self.register_child(nn.Dense(7), 'hidden')

            def forward(self, x):
                return x

        outer = nn.HybridSequential()
        inner = nn.HybridSequential()
        inner.add(nn.Dense(2))
        outer.add(inner, nn.Dense(1))
        record['outer'] = repr(outer)
        record['inner_custom'] = repr(Inner())
        record['empty_block'] = repr(nn.Block())
        record['empty_hybridblock'] = repr(nn.HybridBlock())
        record['empty_sequential'] = repr(nn.Sequential())
        record['empty_hybridsequential'] = repr(nn.HybridSequential())
        """)

    nb().step("semantics.summary_conv_bn", """
        net = nn.HybridSequential()
        net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation('relu'), nn.Flatten(), nn.Dense(5))
        net.initialize()
        net.summary(np.ones((2, 3, 8, 8)))
        """)

    nb().step("semantics.summary_shared_params", """
        class Shared(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.d1 = nn.Dense(3, in_units=3)
                self.d2 = nn.Dense(3, in_units=3)
                self.d2.share_parameters(self.d1.collect_params())

            def forward(self, x):
                return self.d2(self.d1(x))

        net = Shared()
        net.initialize()
        net.summary(np.ones((2, 3)))
        """, extra=["list(net.collect_params())"])

    nb().step("semantics.summary_tuple_output_and_custom_block", """
        class TwoOut(nn.HybridBlock):
            def __init__(self):
                super().__init__()
                self.a = nn.Dense(3)
                self.b = nn.Dense(2)

            def forward(self, x):
                return self.a(x), self.b(x)

        net = TwoOut()
        net.initialize()
        net.summary(np.ones((1, 4)))
        """)

    nb().step("semantics.summary_hybridized_sequential_message", """
        net = nn.HybridSequential()
        net.add(nn.Dense(3), nn.Dense(2))
        net.initialize()
        net.hybridize()
        net.summary(np.ones((1, 4)))
        """)

    nb().step("semantics.layer_reprs", r"""
        def double(x):
            return x * 2

        layers = {
            'Dense(5)': lambda: nn.Dense(5),
            'Dense(5,in_units=3,relu)': lambda: nn.Dense(5, in_units=3, activation='relu'),
            'Dense(5,use_bias=False,flatten=False,sigmoid)': lambda: nn.Dense(5, use_bias=False, flatten=False, activation='sigmoid'),
            'Conv2D(16,3)': lambda: nn.Conv2D(16, 3),
            'Conv2D(16,3,strides=2,padding=1,dilation=2,groups=2,use_bias=False,relu,in_channels=4)':
                lambda: nn.Conv2D(16, 3, strides=2, padding=1, dilation=2, groups=2, use_bias=False,
                                  activation='relu', in_channels=4),
            'Conv2D(6,kernel_size=3,relu)': lambda: nn.Conv2D(channels=6, kernel_size=3, activation='relu'),
            'Conv2D(8,(3,5),layout=NHWC)': lambda: nn.Conv2D(8, (3, 5), layout='NHWC'),
            'Conv1D(4,3)': lambda: nn.Conv1D(4, 3),
            'Conv3D(4,3)': lambda: nn.Conv3D(4, 3),
            'Conv2DTranspose(8,3)': lambda: nn.Conv2DTranspose(8, 3),
            'Conv2DTranspose(8,3,strides=2,output_padding=1)': lambda: nn.Conv2DTranspose(8, 3, strides=2, output_padding=1),
            'MaxPool2D()': lambda: nn.MaxPool2D(),
            'MaxPool2D(pool_size=2,strides=2)': lambda: nn.MaxPool2D(pool_size=2, strides=2),
            'MaxPool2D(3,2,1,ceil_mode=True)': lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True),
            'MaxPool1D()': lambda: nn.MaxPool1D(),
            'AvgPool2D()': lambda: nn.AvgPool2D(),
            'GlobalAvgPool2D()': lambda: nn.GlobalAvgPool2D(),
            'GlobalMaxPool2D()': lambda: nn.GlobalMaxPool2D(),
            'BatchNorm()': lambda: nn.BatchNorm(),
            'BatchNorm(in_channels=4,scale=False)': lambda: nn.BatchNorm(in_channels=4, scale=False),
            'Dropout(0.5)': lambda: nn.Dropout(0.5),
            'Dropout(0.2,axes=(1,))': lambda: nn.Dropout(0.2, axes=(1,)),
            'Flatten()': lambda: nn.Flatten(),
            'Embedding(10,4)': lambda: nn.Embedding(10, 4),
            'LayerNorm()': lambda: nn.LayerNorm(),
            'LayerNorm(in_channels=8)': lambda: nn.LayerNorm(in_channels=8),
            'InstanceNorm()': lambda: nn.InstanceNorm(),
            'GroupNorm()': lambda: nn.GroupNorm(),
            'Activation(relu)': lambda: nn.Activation('relu'),
            'Activation(sigmoid)': lambda: nn.Activation('sigmoid'),
            'LeakyReLU(0.1)': lambda: nn.LeakyReLU(0.1),
            'PReLU()': lambda: nn.PReLU(),
            'ELU()': lambda: nn.ELU(),
            'SELU()': lambda: nn.SELU(),
            'GELU()': lambda: nn.GELU(),
            'SiLU()': lambda: nn.SiLU(),
            'Swish()': lambda: nn.Swish(),
            'Identity()': lambda: nn.Identity(),
            'Lambda(double)': lambda: nn.Lambda(double),
            'Lambda(lambda)': lambda: nn.Lambda(lambda x: x),
            'Lambda("tanh")': lambda: nn.Lambda('tanh'),
            'HybridLambda(double)': lambda: nn.HybridLambda(double),
            'HybridLambda("tanh")': lambda: nn.HybridLambda('tanh'),
            'HybridConcatenate()': lambda: nn.HybridConcatenate(),
        }
        for k, f in layers.items():
            try:
                record[k] = repr(f())
            except Exception as e:
                record[k] = {'error': type(e).__name__ + ': ' + str(e)}
        """)

    nb().step("semantics.layer_reprs_after_forward", """
        def run(layer, shape):
            layer.initialize()
            layer(np.ones(shape))
            return repr(layer)

        record['Dense(5) on (2,3,4)'] = run(nn.Dense(5), (2, 3, 4))
        record['Dense(5,flatten=False) on (2,3,4)'] = run(nn.Dense(5, flatten=False), (2, 3, 4))
        record['Conv2D(16,3,strides=2,padding=1,dilation=2,groups=2,no bias,relu,in_channels=4) on (1,4,9,9)'] = run(
            nn.Conv2D(16, 3, strides=2, padding=1, dilation=2, groups=2, use_bias=False, activation='relu', in_channels=4),
            (1, 4, 9, 9))
        record['Conv2DTranspose(8,3) on (1,5,4,4)'] = run(nn.Conv2DTranspose(8, 3), (1, 5, 4, 4))
        record['BatchNorm() on (2,3,4,4)'] = run(nn.BatchNorm(), (2, 3, 4, 4))
        record['LayerNorm() on (2,6)'] = run(nn.LayerNorm(), (2, 6))
        e = nn.Embedding(10, 4)
        e.initialize()
        e(np.array([1, 2]))
        record['Embedding(10,4) after forward'] = repr(e)
        """)

    nb().step("semantics.dense_repr_after_3d_input", """
        d = nn.Dense(5)
        d.initialize()
        y = d(np.ones((2, 3, 4)))
        record['out_shape'] = y.shape
        record['weight_shape'] = d.weight.shape
        d
        """)

"""Block.summary (GLUON_SEMANTICS §6)."""
import pytest

from framework import np
from framework.gluon import nn

_HEAD = ("-" * 80 + "\n        Layer (type)                                Output Shape         Param #\n"
         + "=" * 80 + "\n")


def _rows(out):
    return out.split("=" * 80 + "\n")[1].splitlines()


def test_conv_bn_table(capsys):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(), nn.Dense(5))
    net.initialize()
    net.summary(np.ones((2, 3, 8, 8)))
    out = capsys.readouterr().out
    assert out.startswith(_HEAD)
    assert _rows(out) == [
        "               Input                                (2, 3, 8, 8)               0",
        "            Conv2D-1                                (2, 4, 6, 6)             112",
        "         BatchNorm-2                                (2, 4, 6, 6)              16",
        "        Activation-3                                (2, 4, 6, 6)               0",
        "           Flatten-4                                    (2, 144)               0",
        "             Dense-5                                      (2, 5)             725"]
    assert out.endswith("   Non-trainable params: 8\nShared params in forward computation graph: 0\n"
                        "Unique parameters in model: 853\n" + "-" * 80 + "\n")
    assert all(not b._forward_hooks for b in [net] + [net[i] for i in range(5)])   # hooks removed


def test_nested_block_rows_complete_children_first(capsys):
    class Wrap(nn.Block):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential()
            self.body.add(nn.Dense(3, activation="relu"))
            self.head = nn.Dense(2)

        def forward(self, x):
            return self.head(self.body(x)), x

    net = Wrap()
    net.initialize()
    net.summary(np.ones((1, 4)))
    rows = [r.split()[0] for r in _rows(capsys.readouterr().out)]
    assert rows == ["Input", "Activation-1", "Dense-2", "Dense-3", "Wrap-4"]


def test_hybridized_child_is_rejected_and_state_restored():
    net = nn.HybridSequential()
    net.add(nn.Dense(3), nn.Dense(2))
    net.initialize()
    net.hybridize()
    with pytest.raises(AssertionError, match='"Dense" must not be hybridized to print summary.'):
        net.summary(np.ones((1, 4)))
    assert all(not net[i]._forward_hooks for i in range(2))


def test_imported_symbol_block_counts_elements_not_arrays(capsys, tmp_path):
    """A 2.x SymbolBlock's parameters keep shape None after imports; the counts come from the
    loaded data, as MXNet's summary counts `p.data().size`."""
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    x = np.ones((1, 3))
    net.hybridize()
    net(x)
    sym_file, params_file = net.export(str(tmp_path / "m"))
    sb = nn.SymbolBlock.imports(sym_file, ["data"], params_file)
    sb.summary(x)
    out = capsys.readouterr().out
    assert "   Total params: 26" in out.splitlines()     # 3·4 + 4 + 4·2 + 2
    row = next(line for line in out.splitlines() if "SymbolBlock-1" in line)
    assert row.split()[-1] == "26" and "Unique parameters in model: 26" in out

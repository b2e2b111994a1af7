"""The upstream-suite runner on a tiny synthetic "MXNet source tree" written here: the scope rule
(autograd, training, GPU, legacy, skipped — followed through helper functions) and the table."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import runner  # noqa: E402
from scope import Module  # noqa: E402

FAKE = textwrap.dedent('''
    import pytest
    import mxnet as mx
    from mxnet import np, autograd
    from mxnet.test_utils import assert_almost_equal

    def _helper_with_grad(x):
        with autograd.record():
            y = x * 2
        y.backward()

    def test_add_passes():
        import warnings
        with warnings.catch_warnings(record=True):     # `record` as a keyword: not autograd
            assert_almost_equal(np.ones((2,)) + 1, np.full((2,), 2.0))

    @pytest.mark.parametrize("n", [1, 2])
    def test_param_cases(n):
        assert np.zeros((n,)).shape == (n,)

    def test_fails():
        assert np.ones((2,)).sum() == 3

    def test_uses_autograd():
        x = np.ones((2,))
        x.attach_grad()

    def test_through_helper():
        _helper_with_grad(np.ones((2,)))

    def test_legacy():
        mx.nd.ones((2,))

    def test_sparse_keyword():
        mx.gluon.Parameter("w", stype="row_sparse")

    def test_trainer():
        mx.gluon.Trainer({}, "sgd")

    def test_gpu():
        mx.gpu(0)

    @pytest.mark.skip(reason="disabled upstream")
    def test_disabled():
        assert False

    def test_skips_at_run_time():
        pytest.skip("no reason")

    class TestGroup:
        def test_method(self):
            assert np.arange(3).shape == (3,)
''')


@pytest.fixture
def fake_tree(tmp_path: Path) -> Path:
    d = tmp_path / "tests" / "python" / "unittest"
    d.mkdir(parents=True)
    (d / "test_fake.py").write_text(FAKE)
    (d / "test_broken.py").write_text("import mxnet.does_not_exist\n\ndef test_a():\n    pass\n")
    return tmp_path


def test_scope_rule_classifies_by_source():
    mod = Module(FAKE)
    verdicts = {t: mod.classify(t) for t in mod.tests()}
    assert {t for t, v in verdicts.items() if v.in_scope} == {
        "test_add_passes", "test_param_cases", "test_fails", "test_skips_at_run_time",
        "TestGroup::test_method"}
    reasons = {t: v.reason for t, v in verdicts.items() if not v.in_scope}
    assert reasons == {"test_uses_autograd": "autograd", "test_through_helper": "autograd",
                       "test_legacy": "legacy", "test_sparse_keyword": "legacy",
                       "test_trainer": "training", "test_gpu": "gpu",
                       "test_disabled": "skipped"}


def test_gluon_hybridize_consistency_counts_as_gradient_unless_disabled():
    mod = Module("def test_a():\n    check_gluon_hybridize_consistency(f, [x])\n"
                 "def test_b():\n    check_gluon_hybridize_consistency(f, [x], test_grad=False)\n")
    assert mod.classify("test_a").reason == "autograd"
    assert mod.classify("test_b").in_scope


def test_runner_prints_the_table(fake_tree: Path, capsys, tmp_path: Path):
    out_json = tmp_path / "rows.json"
    assert runner.main([str(fake_tree), "test_fake.py", "test_broken.py", "--timeout", "60",
                        "--json", str(out_json)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| file | in-scope passed / total")
    # 5 in-scope cases: add, two parametrized, the method pass; test_fails fails; one run-time skip
    assert "| test_fake.py | 4 / 5 | 80 % | 1 | 7 |" in table
    # a file that cannot import: each in-scope test function counts as one failed case
    assert "| test_broken.py | 0 / 1 | 0 % | 0 | 0 |" in table
    import json
    rows = {r["file"]: r for r in json.loads(out_json.read_text())}
    assert rows["test_fake.py"]["failed_tests"] == ["test_fails"]


def test_runner_rejects_a_tree_without_unit_tests(tmp_path: Path):
    assert runner.main([str(tmp_path)]) == 2


def test_runner_takes_files_outside_unittest(fake_tree: Path, capsys):
    q = fake_tree / "tests" / "python" / "quantization"
    q.mkdir()
    (q / "test_q.py").write_text("import mxnet as mx\n\ndef test_one():\n"
                                 "    assert mx.np.ones((1,)).shape == (1,)\n")
    assert runner.main([str(fake_tree), "quantization/test_q.py", "--timeout", "60"]) == 0
    assert "| test_q.py | 1 / 1 | 100 % | 0 | 0 |" in capsys.readouterr().out.splitlines()


DOWNLOADS = textwrap.dedent('''
    import pytest
    from unittest import mock
    import mxnet as mx

    @pytest.fixture(scope="session")
    def prepare_record(tmpdir_factory):
        mx.gluon.utils.download("https://example.invalid/images.tar.gz", "x.tar.gz")
        record = mx.recordio.MXIndexedRecordIO("a.idx", "a.rec", "w")
        return record

    def test_needs_fixture_download(prepare_record):
        assert prepare_record

    def test_default_root():
        mx.gluon.data.vision.MNIST(train=False)

    def test_empty_root(tmpdir):
        mx.gluon.data.vision.CIFAR10(root=str(tmpdir))

    @mock.patch("requests.get", mock.Mock(side_effect=ConnectionError))
    def test_mocked_network():
        mx.gluon.utils.download("http://doesnotexist.notfound")

    @mock.patch("requests.get", mock.Mock())
    def _mocked_helper(path):
        mx.gluon.utils.download("https://example.invalid/README.md", path=path)

    def test_through_mocked_helper(tmpdir):
        _mocked_helper(str(tmpdir))

    def test_record_variable_is_not_autograd():
        record = mx.recordio.MXRecordIO("a.rec", "w")
        record.close()

    def test_record_call_is_autograd():
        with record():
            pass
''')


def test_tests_that_download_are_out_of_scope():
    mod = Module(DOWNLOADS)
    verdicts = {t: mod.classify(t) for t in mod.tests()}
    assert {t: v.reason for t, v in verdicts.items() if not v.in_scope} == {
        "test_needs_fixture_download": "download", "test_default_root": "download",
        "test_empty_root": "download", "test_record_call_is_autograd": "autograd"}
    assert {t for t, v in verdicts.items() if v.in_scope} == {
        "test_mocked_network", "test_through_mocked_helper", "test_record_variable_is_not_autograd"}

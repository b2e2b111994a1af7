"""bf16 detection for the OpenVINO engine: the CPU's /proc/cpuinfo flags (avx512_bf16, amx_bf16)
beside OpenVINO's capabilities, and the fallback reason naming what was seen."""
from __future__ import annotations

from framework.onnx import openvino as ov_engine


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile\n")
    assert ov_engine.cpu_bf16_flags(str(info)) == {"avx512_bf16"}
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 amx_bf16 amx_tile\n")
    assert ov_engine.cpu_bf16_flags(str(info)) == {"amx_bf16"}
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2\n")
    assert ov_engine.cpu_bf16_flags(str(info)) == set()
    assert ov_engine.cpu_bf16_flags(str(tmp_path / "missing")) is None


def test_fallback_reason_names_the_cpu_flags():
    import openvino  # noqa: F401  (the test extra installs it)
    why = ov_engine.bf16_support()
    flags = ov_engine.cpu_bf16_flags()
    if why is None:
        assert ov_engine.effective_precision("bf16") == ("bf16", "")
        return
    assert "no native bf16" in why or "cannot report" in why
    if flags == set():
        assert "neither avx512_bf16 nor amx_bf16" in why
    assert ov_engine.effective_precision("bf16") == ("f32", why)

"""The registry fills itself once, on first lookup, and every thread sees it whole.

`import framework` makes the first lookup itself (np / npx are built from the table), so the test
empties the table again, with the op family modules, before eight threads look up at once."""
import json
import subprocess
import sys
import textwrap


def test_first_lookups_from_many_threads_see_the_whole_table():
    code = textwrap.dedent("""
        import threading
        import sys
        from framework.ops import registry
        assert registry._loaded
        registry._OPS.clear(); registry._FRONT.clear(); registry._loaded = False
        import framework.ops as pkg
        for m in [m for m in sys.modules if m.startswith("framework.ops.")
                  and m not in ("framework.ops.registry", "framework.ops.attrs")]:
            del sys.modules[m]
            pkg.__dict__.pop(m.rpartition(".")[2], None)
        start = threading.Barrier(8)
        sizes = []
        def look():
            start.wait()
            sizes.append(len(registry.all_ops()))
        threads = [threading.Thread(target=look) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(json.dumps([sizes, len(registry.all_ops())]))
    """)
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True,
                         text=True, check=True).stdout
    sizes, total = json.loads(out)
    assert total > 300 and sizes == [total] * 8

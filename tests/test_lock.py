"""The dependency locks (scripts/lock.sh) agree with pyproject.toml and are hash-pinned."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import lockfile  # noqa: E402


def _dev_extras() -> list[str]:
    line = next(l for l in (ROOT / "scripts/dev_extras.sh").read_text().splitlines()
                if l.startswith("HYBRIDSERVE_DEV_EXTRAS="))
    return line.split("=", 1)[1].split(",")


def test_locks_satisfy_pyproject():
    # a dependency added or bumped in pyproject.toml without rerunning scripts/lock.sh fails here
    assert lockfile.missing(_dev_extras()) == []


def test_every_pin_is_exact_and_hashed():
    for lock in lockfile.LOCKS:
        found = lockfile.entries(lock)
        assert found, lock
        for name, version, text in found:
            assert "--hash=sha256:" in text, (lock.name, name)
            assert version[0].isdigit(), (lock.name, name, version)


def test_test_lock_adds_only_what_runtime_lacks():
    runtime = lockfile.pins(lockfile.LOCKS[0])
    test = lockfile.pins(lockfile.LOCKS[1])
    assert not set(runtime) & set(test)
    # no test tool in the runtime closure (the image installs exactly requirements.lock)
    assert not {"pytest", "hypothesis", "tritonclient", "schemathesis", "playwright"} & set(runtime)


def test_lockfile_check_names_a_missing_requirement(tmp_path):
    lock = tmp_path / "r.lock"
    lock.write_text("numpy==1.0 \\\n    --hash=sha256:00\n")
    bad = lockfile.missing([], locks=(lock,))
    assert any(b.startswith("numpy>=") and "numpy==1.0" in b for b in bad)
    assert any("fastapi" in b and "not in the lock" in b for b in bad)

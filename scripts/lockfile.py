"""The dependency locks (requirements.lock, requirements-test.lock, written by scripts/lock.sh):
read their pins, and say whether they still satisfy pyproject.toml.

  python3 scripts/lockfile.py check [EXTRA,...]    exit 1 naming each requirement the locks miss
  python3 scripts/lockfile.py pins LOCK...         `name==version` lines without hashes (constraints)
  python3 scripts/lockfile.py subtract ALL BASE    the entries of ALL whose package BASE lacks

Stdlib plus pip's vendored `packaging`, so it runs with any python3 that has pip, before a venv exists.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCKS = (ROOT / "requirements.lock", ROOT / "requirements-test.lock")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")


def entries(path: Path) -> list[tuple[str, str, str]]:
    """(canonical name, version, the entry's full text) for each pin, hashes included."""
    out: list[tuple[str, str, str]] = []
    block: list[str] = []
    for line in path.read_text().splitlines() + [""]:
        if block and not line.startswith((" ", "\t")):
            m = _PIN.match(block[0])
            if m is None:
                raise SystemExit(f"{path}: not a pinned requirement: {block[0]!r}")
            out.append((canonicalize_name(m.group(1)), m.group(3), "\n".join(block)))
            block = []
        if line.strip() and not line.startswith("#") and not (block == [] and line[0] in " \t"):
            block.append(line)
        elif block and line.startswith((" ", "\t")):
            block.append(line)
    return out


def pins(*paths: Path) -> dict[str, str]:
    """canonical name -> pinned version, over the given lock files."""
    return {name: ver for p in paths for name, ver, _ in entries(p)}


def missing(extras: list[str], locks: tuple[Path, ...] = LOCKS) -> list[str]:
    """The requirements of pyproject.toml (dependencies + `extras`) that the locks do not satisfy."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project.get("dependencies", []))
    for e in extras:
        if e not in project.get("optional-dependencies", {}):
            return [f"extra [{e}] is not in pyproject.toml"]
        reqs += project["optional-dependencies"][e]
    have = pins(*[p for p in locks if p.exists()])
    bad = []
    for text in reqs:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name == "hybridserve":  # an extra naming another of ours
            continue
        if name not in have:
            bad.append(f"{text} (not in the lock)")
        elif not req.specifier.contains(have[name], prereleases=True):
            bad.append(f"{text} (the lock pins {name}=={have[name]})")
    return bad


def main(argv: list[str]) -> int:
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "check":
        extras = [e for e in (args[0].split(",") if args else []) if e]
        bad = missing(extras)
        for b in bad:
            print(f"lock out of date: pyproject.toml requires {b}", file=sys.stderr)
        if bad:
            print("run `bash scripts/lock.sh` and commit requirements*.lock", file=sys.stderr)
        return 1 if bad else 0
    if cmd == "pins" and args:
        for name, ver in sorted(pins(*map(Path, args)).items()):
            print(f"{name}=={ver}")
        return 0
    if cmd == "subtract" and len(args) == 2:
        base = pins(Path(args[1]))
        for name, _, text in entries(Path(args[0])):
            if name not in base:
                print(text)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

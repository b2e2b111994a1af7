"""Run deploy/nginx.conf outside Docker: point its upstream at local replicas, wrap it in a main
config whose pid/log/temp paths live in a temp dir (no root paths needed), and check/run it.

Used by tests/deploy (nginx -t) and tests/cluster (a real balancer in front of two servers)."""
from __future__ import annotations

import grp
import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPLOY_NGINX = ROOT / "deploy" / "nginx.conf"
# Debian installs nginx in /usr/sbin, which is not on a non-root user's PATH
NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)
SKIP_REASON = ("nginx is not installed (Debian: `apt-get install nginx-light`, or run "
               "scripts/install_system_deps.sh as root)")

_SERVER_RE = re.compile(r"^(?P<indent>[ \t]*)server[ \t]+(?P<addr>[^\s;]+)(?P<params>[^;]*);",
                        re.M)
_LISTEN_RE = re.compile(r"^([ \t]*)listen[ \t]+[^;]+;", re.M)


def upstream_servers(conf: str) -> list[str]:
    """`host:port` of every `server` line inside the `upstream` block(s)."""
    out = []
    for block in re.findall(r"upstream\s+\S+\s*\{(.*?)\}", conf, re.S):
        out += [m["addr"] for m in _SERVER_RE.finditer(block)]
    return out


def site_for(upstreams: list[str], listen: str, conf: str | None = None) -> str:
    """deploy/nginx.conf with its upstream servers replaced by `upstreams` (each keeps the
    first original line's parameters, e.g. max_fails/fail_timeout) and `listen` rewritten."""
    conf = DEPLOY_NGINX.read_text() if conf is None else conf
    m = re.search(r"(upstream\s+\S+\s*\{)(.*?)(\})", conf, re.S)
    assert m, "no upstream block in deploy/nginx.conf"
    body = m.group(2)
    servers = list(_SERVER_RE.finditer(body))
    assert servers, "no server lines in the upstream block"
    indent, params = servers[0]["indent"], servers[0]["params"]
    ours = "".join(f"{indent}server {u}{params};\n" for u in upstreams)
    body = _SERVER_RE.sub("", body, count=0)
    body = "\n" + ours + body.lstrip("\n")
    conf = conf[: m.start(2)] + body + conf[m.end(2):]
    conf, n = _LISTEN_RE.subn(lambda mm: f"{mm.group(1)}listen {listen};", conf)
    assert n == 1, f"expected exactly one listen directive, found {n}"
    return conf


def write_main_conf(tmp: Path, site: str) -> Path:
    """A complete nginx.conf in `tmp` including `site`; every path nginx writes is in `tmp`."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "site.conf").write_text(site)
    # As root, nginx workers would switch to `nobody`, who cannot enter pytest's 0700 temp
    # dirs (request bodies are buffered there): keep them as the current user.
    user = ""
    if os.geteuid() == 0:
        user = f"user {pwd.getpwuid(os.getuid()).pw_name} {grp.getgrgid(os.getgid()).gr_name};"
    temps = "\n".join(f"    {d}_temp_path {tmp}/{d}_temp;"
                      for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = tmp / "nginx.conf"
    conf.write_text(f"""{user}
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
{temps}
    include {tmp}/site.conf;
}}
""")
    return conf


def nginx_cmd(conf: Path, *extra: str) -> list[str]:
    # -e: the startup error log before the config is read (the compiled-in one is under /var)
    return [NGINX, "-e", "stderr", "-p", str(conf.parent), "-c", str(conf), *extra]


def nginx_test(conf: Path) -> subprocess.CompletedProcess:
    return subprocess.run(nginx_cmd(conf, "-t"), capture_output=True, text=True, timeout=30)

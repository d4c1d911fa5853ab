"""The inkling-server .deb: contents, control fields, the conffile, the hardened systemd unit
(checked by systemd-analyze) and the shipped configuration file (read by the server itself)."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, SERVER

HARDENING = ["DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=inkling-server", "NoNewPrivileges=yes",
             "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes", "CapabilityBoundingSet=",
             "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "SystemCallFilter=@system-service",
             "MemoryDenyWriteExecute=yes", "LoadCredential=upstream-key:/etc/inkling/upstream-key"]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    env = dict(os.environ, OUT_DIR=str(out), BIN_DIR=os.path.dirname(SERVER), DEB_COMPRESSION="gzip")
    subprocess.run(["bash", os.path.join(REPO, "scripts", "deb-build-server.sh")], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    debs = [name for name in os.listdir(out) if name.startswith("inkling-server_") and name.endswith(".deb")]
    assert len(debs) == 1
    root = out / "root"
    subprocess.run(["dpkg-deb", "-x", str(out / debs[0]), str(root)], check=True)
    control = subprocess.run(["dpkg-deb", "-f", str(out / debs[0])], check=True, stdout=subprocess.PIPE).stdout.decode()
    conffiles = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(out / debs[0])], check=True,
                               stdout=subprocess.PIPE).stdout
    return root, control, conffiles


def test_contents_and_control(package):
    root, control, conffiles = package
    for path in ["usr/bin/inkling-server", "lib/systemd/system/inkling-server.service", "etc/inkling/server.conf",
                 "usr/share/doc/inkling-server/copyright"]:
        assert (root / path).is_file(), path
    assert re.search(r"^Package: inkling-server$", control, re.M)
    depends = re.search(r"^Depends: (.*)$", control, re.M).group(1)
    for library in ["libmicrohttpd12", "libargon2-1", "libpq5", "libsqlite3-0", "libcurl4"]:
        assert library in depends
    assert b"./conffiles" in conffiles


def test_unit_is_hardened(package):
    root, _, _ = package
    unit = (root / "lib/systemd/system/inkling-server.service").read_text()
    for line in HARDENING:
        assert line in unit.splitlines(), line
    if shutil.which("systemd-analyze"):
        result = subprocess.run(["systemd-analyze", "security", "--offline=true", "--threshold=20",
                                 str(root / "lib/systemd/system/inkling-server.service")],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert result.returncode == 0, result.stdout.decode()[-2000:]


def test_shipped_configuration_is_read_by_the_server(package, tmp_path):
    root, _, _ = package
    text = (root / "etc/inkling/server.conf").read_text()
    database = tmp_path / "inkling.db"
    text = text.replace("#url=/var/lib/inkling-server/inkling.db", "url=%s" % database)
    config = tmp_path / "server.conf"
    config.write_text(text)
    result = subprocess.run([SERVER, "--config", str(config), "migrate"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert result.returncode == 0, result.stdout
    assert database.exists()

#!/usr/bin/python3
"""Peer "Fabric 2" (Debian's python3-fabric): one fabric.Connection per host (one SSH connection,
reused), the steps run sequentially on it with Connection.run (a new session channel per step),
one thread per host so hosts run in parallel. Output captured in memory (hide=True) and checked.
paramiko negotiates curve25519-sha256 (it has no sntrup761).

    fabric_run.py HOSTS STEPS MODE      MODE: true | echo
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import paramiko
from fabric import Config, Connection

T = os.environ.get("BENCH_TMP", "/tmp/ratchet-bench")
SSH_CFG, KNOWN, KEY = T + "/ssh_config", T + "/known_hosts", T + "/client_ed25519"


def run_host(host, n, mode):
    c = Connection(host, config=Config(runtime_ssh_path=SSH_CFG), connect_kwargs={
        "key_filename": [KEY], "look_for_keys": False, "allow_agent": False})
    c.client.load_host_keys(KNOWN)
    c.client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        for i in range(1, n + 1):
            r = c.run("true" if mode == "true" else "echo %d" % i, hide=True, in_stream=False, warn=False)
            if mode == "echo" and r.stdout.strip() != str(i):
                raise SystemExit("%s step %d: got %r" % (host, i, r.stdout))
    finally:
        c.close()


def main():
    h, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    with ThreadPoolExecutor(max_workers=h) as ex:
        for f in [ex.submit(run_host, "h%d" % j, n, mode) for j in range(1, h + 1)]:
            f.result()


if __name__ == "__main__":
    main()

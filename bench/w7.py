#!/usr/bin/env python3
"""W7: W1 (1 host x 20 steps of `true`) and W3 (H hosts x 20 steps) through a delay proxy.

One loopback sshd (tests/lab/sshd-host.sh), and in front of it a TCP proxy on 127.0.0.1 that
delays each direction by ONE_WAY ms (default 10): every chunk read is written ONE_WAY ms later,
in order, so a round trip costs 2 x ONE_WAY. Tools, alternating per repetition:
ratchet --transport channel, ratchet --transport session, the OpenSSH ControlMaster loop
(one master, then `ssh -S` per step) and Fabric (one Connection, c.run per step; skipped when
not installed). Prints the median wall time of N runs (default 5) per tool and workload.

  sudo bench/w7.py                      # RATCHET=build-ci/ratchet ONE_WAY=10 N=5 H=3 STEPS=20
  RATCHET_BEFORE=old/ratchet PEERS=0 bench/w7.py   # paired before/after, ratchet alone
Run as root (sshd-host.sh uses a mount namespace). Everything lives in /tmp/ratchet-w7.*
and is stopped on exit, also on failure (the sshd by its PID, the proxy is this process).
"""
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATCHET = os.environ.get("RATCHET", os.path.join(REPO, "build-ci", "ratchet"))
RATCHET_BEFORE = os.environ.get("RATCHET_BEFORE", "")  # a second binary, paired (its session and channel rows)
PEERS = os.environ.get("PEERS", "1") == "1"  # 0: ratchet alone
ONE_WAY = float(os.environ.get("ONE_WAY", "10")) / 1000.0
N = int(os.environ.get("N", "5"))
H = int(os.environ.get("H", "3"))
STEPS = int(os.environ.get("STEPS", "20"))


def free_port():
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        if p != 2024:
            return p


# ---- the delay proxy ---------------------------------------------------------------------------
async def pipe(reader, writer):
    """Copies reader to writer, each chunk ONE_WAY s after it was read, in order."""
    q = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await q.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except OSError:
            pass

    task = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            q.put_nowait((time.monotonic() + ONE_WAY, data if data else None))
            if not data:
                break
    except OSError:
        q.put_nowait((0, None))
    try:
        await task
    except OSError:
        pass


async def serve(listen_port, target_port, ready):
    async def client(r, w):
        try:
            ur, uw = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            w.close()
            return
        for s in (w.get_extra_info("socket"), uw.get_extra_info("socket")):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(r, uw), pipe(ur, w))
        w.close()
        uw.close()

    server = await asyncio.start_server(client, "127.0.0.1", listen_port)
    ready.set()
    async with server:
        await server.serve_forever()


def start_proxy(listen_port, target_port):
    ready = threading.Event()
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=lambda: loop.run_until_complete(serve(listen_port, target_port, ready)), daemon=True)
    t.start()
    ready.wait(5)


# ---- the tools ---------------------------------------------------------------------------------
def write_files(d, port, key, kh):
    inv = os.path.join(d, "inventory.toml")
    with open(inv, "w") as f:
        for j in range(1, H + 1):
            f.write('[hosts.h%d]\naddress = "127.0.0.1"\nport = %d\nuser = "root"\nidentity = "%s"\nknown_hosts = "%s"\n'
                    % (j, port, key, kh))
        f.write('[groups]\nw1 = ["h1"]\nw3 = [%s]\n' % ",".join('"h%d"' % j for j in range(1, H + 1)))
    pbs = {}
    for wl, group, steps in (("W1", "w1", STEPS), ("W3", "w3", STEPS), ("W1-1", "w1", 1)):
        p = os.path.join(d, wl + ".toml")
        with open(p, "w") as f:
            f.write('name = "%s"\ntargets = ["%s"]\n' % (wl.lower(), group))
            for i in range(1, steps + 1):
                f.write('[[step]]\nid = "s%d"\nkind = "run"\ncommand = "true"\n' % i)
        pbs[wl] = p
    return inv, pbs


def ratchet(mode, inv, pb, d, binary=None):
    return [binary or RATCHET, "run", pb, "-i", inv, "-F", "none", "--transport", mode,
            "--transcript", os.path.join(d, "t-%s.jsonl" % mode)]


def cm_script(d, port, key, kh, hosts):
    """The ControlMaster loop as one bash script (bench/peers/cm.sh, inlined for one port)."""
    o = "-F none -p %d -i %s -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR" % (
        port, key, kh)
    return ("set -e; run(){ s=%s/cm.$1; ssh -n %s -M -N -f -o ControlPersist=yes -S $s root@127.0.0.1; "
            "for i in $(seq %d); do ssh -n %s -S $s root@127.0.0.1 true; done; ssh %s -S $s -O exit x 2>/dev/null; }; "
            "for h in $(seq %d); do run $h & done; wait") % (d, o, STEPS, o, o, hosts)


FABRIC = """
import sys, threading
from fabric import Connection
port, key, kh, hosts, steps = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def one():
    c = Connection("127.0.0.1", user="root", port=port, connect_kwargs={"key_filename": key})
    c.client.load_host_keys(kh)
    for _ in range(steps):
        c.run("true", hide=True)
    c.close()
ts = [threading.Thread(target=one) for _ in range(hosts)]
[t.start() for t in ts]; [t.join() for t in ts]
"""


def timed(cmd, shell=False):
    t0 = time.monotonic()
    r = subprocess.run(cmd, shell=shell, capture_output=True, text=True, executable="/bin/bash" if shell else None)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        print("FAILED (%d): %s\n%s%s" % (r.returncode, cmd if shell else " ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]),
              file=sys.stderr)
        return None
    return dt


def sh_true_ms():
    """One `sh -c true` on the host (every host is this machine): the mean of 200, ms."""
    t0 = time.monotonic()
    subprocess.run(["/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do /bin/sh -c true; i=$((i+1)); done"], check=True)
    return (time.monotonic() - t0) * 1000 / 200


def main():
    d = tempfile.mkdtemp(prefix="ratchet-w7.", dir="/tmp")
    lab = os.path.join(d, "sshd")
    sport, pport = free_port(), free_port()
    host = os.path.join(REPO, "tests", "lab", "sshd-host.sh")
    subprocess.run([host, "start", lab, str(sport)], check=True, capture_output=True)
    try:
        key = os.path.join(lab, "client_key")
        kh = os.path.join(d, "known_hosts")
        with open(os.path.join(lab, "known_hosts")) as f, open(kh, "w") as g:
            g.write(f.read().replace("]:%d " % sport, "]:%d " % pport))
        start_proxy(pport, sport)
        inv, pbs = write_files(d, pport, key, kh)
        try:
            import fabric  # noqa: F401
            has_fabric = True
        except ImportError:
            has_fabric = False
        print("W7: one-way delay %.0f ms, %d steps, W3 = %d hosts, N = %d%s" % (
            ONE_WAY * 1000, STEPS, H, N, "" if has_fabric else " (Fabric not installed: left out)"))
        for wl, hosts in (("W1", 1), ("W3", H)):
            tools = [("ratchet --transport channel", lambda: timed(ratchet("channel", inv, pbs[wl], d))),
                     ("ratchet --transport session", lambda: timed(ratchet("session", inv, pbs[wl], d)))]
            if RATCHET_BEFORE:
                tools += [("before --transport channel",
                           lambda: timed(ratchet("channel", inv, pbs[wl], d, RATCHET_BEFORE))),
                          ("before --transport session",
                           lambda: timed(ratchet("session", inv, pbs[wl], d, RATCHET_BEFORE)))]
            if PEERS:
                tools.append(("ControlMaster loop", lambda: timed(cm_script(d, pport, key, kh, hosts), shell=True)))
            if has_fabric and PEERS:
                tools.append(("Fabric", lambda: timed([sys.executable, "-c", FABRIC, str(pport), key, kh, str(hosts),
                                                        str(STEPS)])))
            times = {name: [] for name, _ in tools}
            for _ in range(N):
                for name, f in tools:
                    t = f()
                    if t is not None:
                        times[name].append(t)
            if wl == "W1":  # the cost of a step: W1 against the same host with 1 step, paired
                one = {"channel": [], "session": []}
                for _ in range(N):
                    for mode in one:
                        t = timed(ratchet(mode, inv, pbs["W1-1"], d))
                        if t is not None:
                            one[mode].append(t)
                floor = 2 * ONE_WAY * 1000 + sh_true_ms()
                for mode, ts in one.items():
                    many = times["ratchet --transport " + mode]
                    if ts and many:
                        per = (statistics.median(many) - statistics.median(ts)) * 1000 / (STEPS - 1)
                        print("W1 per step, ratchet --transport %-8s %5.1f ms  (1 step: %.3f s; floor = one round "
                              "trip %.0f ms + sh -c true: %.1f ms; %.2f x the floor)" % (
                                  mode, per, statistics.median(ts), 2 * ONE_WAY * 1000, floor, per / floor))
            for name, _ in tools:
                ts = times[name]
                if ts:
                    print("%s %-30s median %6.3f s  min %6.3f s  (%d runs)  %.1f ms/step" % (
                        wl, name, statistics.median(ts), min(ts), len(ts), statistics.median(ts) * 1000 / STEPS))
                else:
                    print("%s %-30s failed" % (wl, name))
    finally:
        subprocess.run([host, "stop", lab], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The scene of issue 6 on a real GPU: a hand-started CUDA "inference server" and the
worker it orphaned, both holding /dev/nvidia*. Started by run-on-gpu.sh as the test user.

  holder.py server RUNDIR   initialise CUDA through PyTorch (a 256 MiB tensor), start a
                            worker the way daemonising servers do (double fork + setsid:
                            its parent exits at once, so it is no descendant of the
                            server and not in its session), wait until the worker holds
                            the GPU, write RUNDIR/server.ready, then sleep
  holder.py worker RUNDIR   ignore SIGTERM (so only KILL frees it), initialise CUDA the
                            same way, write its PID to RUNDIR/worker.pid, then sleep
  holder.py bystander DIR   hold the GPU the same way, write DIR/bystander.pid, sleep: run as
                            root beside the scene, it is the process that is not ours, which
                            the runbook must leave alone

Both exit by themselves after HOLDER_LIFETIME seconds (default 240), so nothing outlives
the test even when everything else fails. HOLDER_FAKE_DEVICES="F1 F2 ..." opens those
files instead of CUDA: the local stand-in run, on a machine without a GPU.
"""
import os
import signal
import subprocess
import sys
import time


def hold():
    fake = os.environ.get("HOLDER_FAKE_DEVICES")
    if fake:
        return [open(p, "rb") for p in fake.split()]
    import torch

    x = torch.empty(64 << 20, dtype=torch.float32, device="cuda")  # 256 MiB on the GPU
    x.fill_(1.0)
    torch.cuda.synchronize()
    return x


def put(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main():
    role, run = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + float(os.environ.get("HOLDER_LIFETIME", "240"))
    if role == "worker":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        held = hold()
        put(os.path.join(run, "worker.pid"), f"{os.getpid()}\n")
        print(f"worker {os.getpid()} holds the GPU; ignores SIGTERM", flush=True)
    elif role == "bystander":
        held = hold()
        put(os.path.join(run, "bystander.pid"), f"{os.getpid()}\n")
        print(f"bystander {os.getpid()} holds the GPU", flush=True)
    elif role == "server":
        held = hold()
        print(f"server {os.getpid()} holds the GPU; starting the worker", flush=True)
        # sh backgrounds the worker and exits: the worker is orphaned (re-parented to
        # PID 1 or a subreaper) and setsid gives it its own session.
        subprocess.run(
            ["/bin/sh", "-c", 'setsid "$0" "$1" worker "$2" </dev/null >>"$2/worker.log" 2>&1 &',
             sys.executable, os.path.abspath(__file__), run],
            check=True)
        wp = os.path.join(run, "worker.pid")
        while not os.path.exists(wp):
            if time.monotonic() > deadline:
                sys.exit("server: the worker never wrote its PID")
            time.sleep(0.2)
        put(os.path.join(run, "server.ready"), f"{os.getpid()}\n")
        print("server ready", flush=True)
    else:
        sys.exit(f"usage: {sys.argv[0]} server|worker|bystander DIR")
    while time.monotonic() < deadline:
        time.sleep(0.5)
    print(f"{role} {os.getpid()}: lifetime over, exiting", flush=True)
    del held


if __name__ == "__main__":
    main()

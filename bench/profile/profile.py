#!/usr/bin/python3
"""Where ratchet's time goes (started by bench/profile.sh, which starts and stops the hosts).

Writes OUT/profile/*.txt|json:
  floor.json      per-command time on ONE open connection, same libssh client (channel_floor.c):
                  `true` as is vs. `true` inside ratchet's deadline wrapper (the exact `sent`
                  string from ratchet's transcript); the same through an OpenSSH ControlMaster
  spawn.json      the host side alone (no SSH): bash -c CMD until exit and EOF on stdout/stderr,
                  CMD = true | exec /bin/sh -c true | ratchet's wrapper | coreutils timeout;
                  isolated (0.3 s apart) and back to back (what a runbook does)
  perf-stat-*.txt machine-wide forks, execs, context switches and CPU for W1 (20 x `true`):
                  ratchet vs. the ControlMaster loop vs. channel_floor with the wrapper
  perf-comm.txt   machine-wide CPU by process name during ratchet W2 (perf record -a)
  perf-ratchet.txt  ratchet's own hottest symbols (perf record -g on the client alone)
  callgrind.txt   instructions by function in ratchet on W2 (valgrind --tool=callgrind), if present
  steps.json      channel time per command vs. step time, from ratchet's W1 transcript
  transcript.json W2 with the transcript in a file vs. /dev/null, paired runs
  scaling.json    ratchet vs. the ControlMaster loop (curve25519): 1 host x {1,5,20,80} steps,
                  {1,10,50} targets x 5 steps; medians of R alternating runs
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench as B  # noqa: E402  (same environment: BENCH_TMP, RATCHET, INVENTORY, SSH_CFG, OUT)

P = os.path.join(B.OUT, "profile")
os.makedirs(P, exist_ok=True)
R = int(os.environ.get("R", "3"))
FLOOR = os.path.join(B.T, "bin/channel_floor")
KEY = os.path.join(B.T, "client_ed25519")
KNOWN = os.path.join(B.T, "known_hosts")
PORT1 = int(os.environ.get("BASE_PORT", "23300")) + 1
HAVE_PERF = subprocess.run(["sh", "-c", "command -v perf"], capture_output=True).returncode == 0
HAVE_VG = subprocess.run(["sh", "-c", "command -v valgrind"], capture_output=True).returncode == 0


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


LIB = open(os.path.join(B.REPO, "src/steps/lib/ratchet.sh")).read()


def sent_for(command):
    """The exact string ratchet sends for COMMAND (transcript `sent`)."""
    pb = os.path.join(B.PB_DIR, "probe-sent.toml")
    with open(pb, "w") as f:
        f.write('name = "sent"\ntargets = ["w1"]\n[[step]]\nid = "s1"\nkind = "run"\ncommand = %s\n' % json.dumps(command))
    tr = os.path.join(B.TR_DIR, "probe-sent.jsonl")
    if os.path.exists(tr):
        os.unlink(tr)
    subprocess.run(B.ratchet_cmd(pb, 1) + ["--transcript", tr], stdout=subprocess.DEVNULL, check=True)
    for e in B.read_events(tr):
        if e.get("event") == "command":
            return e["sent"]
    raise SystemExit("no command event")


def floor(cmd, steps=40):
    r = subprocess.run([FLOOR, str(PORT1), KEY, KNOWN, str(steps), cmd], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def cm_loop(cmd, steps=40):
    """Per-command ms through one OpenSSH ControlMaster (the ssh client process included)."""
    sock = os.path.join(B.T, "prof-cm.sock")
    ssh = ["ssh", "-n", "-F", B.SSH_CFG, "-o", "KexAlgorithms=curve25519-sha256"]
    subprocess.run(ssh + ["-M", "-N", "-f", "-o", "ControlPersist=yes", "-S", sock, "h1"], check=True)
    try:
        script = 'for i in $(seq %d); do ssh -n -F "$0" -S "$1" h1 "$2" || exit 1; done' % steps
        t0 = time.perf_counter()
        subprocess.run(["bash", "-c", script, B.SSH_CFG, sock, cmd], check=True)
        return (time.perf_counter() - t0) * 1e3 / steps
    finally:
        subprocess.run(["ssh", "-F", B.SSH_CFG, "-S", sock, "-O", "exit", "h1"], stderr=subprocess.DEVNULL)


def spawn(cmd, n, gap):
    r = []
    for _ in range(n):
        t0 = time.perf_counter()
        p = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        p.communicate()  # exit and EOF on both pipes: what sshd waits for before it closes the channel
        r.append((time.perf_counter() - t0) * 1e3)
        time.sleep(gap)
    return dict(median_ms=round(statistics.median(r), 2), min_ms=round(min(r), 2), n=n, gap_s=gap)


def perf_stat(name, cmd):
    if not HAVE_PERF:
        return
    out = os.path.join(P, "perf-stat-%s.txt" % name)
    subprocess.run(["perf", "stat", "-a", "-o", out, "-e",
                    "task-clock,context-switches,sched:sched_process_fork,sched:sched_process_exec"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    B.log("profile: hosts up; load %s" % open("/proc/loadavg").read().strip())
    wire_true = sent_for("true")
    with open(os.path.join(P, "sent-true.txt"), "w") as f:
        f.write(wire_true + "\n")

    # 1. per-command floor on one open connection, alternating
    fl = {"libssh true": [], "libssh wrapper(true)": [], "cm true": [], "cm wrapper(true)": []}
    for _ in range(R):
        fl["libssh true"].append(floor("true"))
        fl["libssh wrapper(true)"].append(floor(wire_true))
        fl["cm true"].append(cm_loop("true"))
        fl["cm wrapper(true)"].append(cm_loop(wire_true))
        time.sleep(0.5)
    res = {}
    for k, v in fl.items():
        if k.startswith("libssh"):
            res[k] = dict(median_ms=round(statistics.median(x["median_ms"] for x in v), 2),
                          mean_ms=round(statistics.median(x["mean_ms"] for x in v), 2),
                          connect_ms=round(statistics.median(x["connect_ms"] for x in v), 1))
        else:
            res[k] = dict(mean_ms=round(statistics.median(v), 2))
    json.dump(res, open(os.path.join(P, "floor.json"), "w"), indent=1)
    B.log("floor: " + json.dumps(res))

    # 2. host side alone
    variants = {
        "bash -c true": "true",
        "bash -c 'exec /bin/sh -c true'": "exec /bin/sh -c true",
        "ratchet wrapper(true)": wire_true,
        # the wrapper's critical path alone: the double fork, a watchdog that does nothing
        "double fork, idle watchdog": "exec /bin/sh -c '( ( exec </dev/null >/dev/null 2>&1 ) & ); exec /bin/sh -c true'",
        "exec timeout -k 1 60 /bin/sh -c true": "exec timeout -k 1 60 /bin/sh -c true",
        # what a host-library step pays on top: sh parses the 16 KiB library sent with each command
        "exec /bin/sh -c '<host library>; true'": "exec /bin/sh -c " + shq(LIB + "\ntrue"),
    }
    sp = {}
    for k, v in variants.items():
        sp[k] = {"isolated": spawn(v, 20, 0.3), "back_to_back": spawn(v, 40, 0.0)}
    json.dump(sp, open(os.path.join(P, "spawn.json"), "w"), indent=1)
    B.log("spawn: " + json.dumps(sp))

    # 3. machine-wide counts for 20 steps
    pb1 = B.playbook("prof-w1", "w1", 20, "true")
    pb2 = B.playbook("prof-w2", "w1", 20, "echo")
    perf_stat("ratchet-w1", B.ratchet_cmd(pb1, 1) + ["--transcript", "/dev/null"])
    time.sleep(0.5)
    perf_stat("cm-w1", [os.path.join(B.PEERS, "cm.sh"), "1", "20", "true"])
    time.sleep(0.5)
    perf_stat("libssh-wrapper-w1", [FLOOR, str(PORT1), KEY, KNOWN, "20", wire_true])
    time.sleep(0.5)
    perf_stat("libssh-true-w1", [FLOOR, str(PORT1), KEY, KNOWN, "20", "true"])
    time.sleep(0.5)

    # 4. CPU by process name (machine-wide) and ratchet's own symbols
    if HAVE_PERF:
        data = os.path.join(B.T, "perf-a.data")
        subprocess.run(["perf", "record", "-a", "-F", "997", "-g", "-o", data, "--"] + B.ratchet_cmd(pb2, 1) +
                       ["--transcript", os.path.join(B.T, "prof.jsonl")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(P, "perf-comm.txt"), "w") as f:
            subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "comm",
                            "-g", "none", "--percent-limit", "0.5"], stdout=f, stderr=subprocess.DEVNULL)
        # the same at fleet scale: 50 targets x 5 steps (all "hosts" share this machine's 2 CPUs)
        pb50 = B.playbook("prof-h50", "w4", 5, "true")
        subprocess.run(["perf", "record", "-a", "-F", "499", "-o", data, "--"] + B.ratchet_cmd(pb50, B.A) +
                       ["--transcript", "/dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(P, "perf-comm-h50.txt"), "w") as f:
            subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "comm",
                            "--percent-limit", "0.5"], stdout=f, stderr=subprocess.DEVNULL)
        time.sleep(2)
        perf_stat("ratchet-h50x5", B.ratchet_cmd(pb50, B.A) + ["--transcript", "/dev/null"])
        time.sleep(2)
        perf_stat("fabric-h50x5", [os.path.join(B.PEERS, "fabric_run.py"), str(B.A), "5", "true"])
        time.sleep(2)
        data2 = os.path.join(B.T, "perf-r.data")
        subprocess.run(["perf", "record", "-F", "4999", "--call-graph", "dwarf", "-o", data2, "--"] +
                       B.ratchet_cmd(pb2, 1) + ["--transcript", os.path.join(B.T, "prof.jsonl")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(P, "perf-ratchet.txt"), "w") as f:
            subprocess.run(["perf", "report", "-i", data2, "--stdio", "--no-children", "--sort", "dso,sym",
                            "-g", "none", "--percent-limit", "1"], stdout=f, stderr=subprocess.DEVNULL)
        for d in (data, data2, data + ".old", data2 + ".old"):
            if os.path.exists(d):
                os.unlink(d)
    if HAVE_VG:
        cg = os.path.join(B.T, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg] + B.ratchet_cmd(pb2, 1) +
                       ["--transcript", os.path.join(B.T, "prof-cg.jsonl")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, extra in (("callgrind-inclusive.txt", ["--inclusive=yes"]), ("callgrind-self.txt", [])):
            r = subprocess.run(["callgrind_annotate", "--auto=no"] + extra + [cg], capture_output=True, text=True)
            with open(os.path.join(P, name), "w") as f:  # the summary and the top 60 functions
                f.write("\n".join(l[:220] for l in r.stdout.splitlines()[:85]) + "\n")

    # 5. step vs. channel time from a transcript (W1, 20 steps)
    tr = os.path.join(B.T, "prof-steps.jsonl")
    if os.path.exists(tr):
        os.unlink(tr)
    t0 = time.perf_counter()
    subprocess.run(B.ratchet_cmd(pb1, 1) + ["--transcript", tr], stdout=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - t0) * 1e3
    ev = B.read_events(tr)
    ch = [e["ms"] for e in ev if e.get("event") == "exit"]
    st = [e["ms"] for e in ev if e.get("event") == "step_end"]
    cn = [e["ms"] for e in ev if e.get("event") == "connect"]
    steps = dict(wall_ms=round(wall, 1), connect_ms=cn, channel_ms_median=statistics.median(ch),
                 channel_ms_sum=sum(ch), step_ms_sum=sum(st), transcript_bytes=os.path.getsize(tr),
                 events=len(ev))
    json.dump(steps, open(os.path.join(P, "steps.json"), "w"), indent=1)
    B.log("steps: " + json.dumps(steps))

    # 6. transcript cost, paired: W2 recording to a file vs. to /dev/null, alternating
    pbw2 = B.playbook("prof-w2t", "w1", 20, "echo")
    tf = B.Cell("T-w2", "transcript file", B.ratchet_cmd(pbw2, 1), 2 * R + 4, transcript="file")
    tn = B.Cell("T-w2", "transcript /dev/null", B.ratchet_cmd(pbw2, 1), 2 * R + 4, transcript="/dev/null")
    for rep in range(2 * R + 4):
        for c in ((tf, tn) if rep % 2 == 0 else (tn, tf)):
            B.run_once(c, rep)
    tc = {}
    for c in (tf, tn):
        st = B.stats(c)
        tc[c.tool] = dict(median_s=st["med"], min_s=st["mn"], max_s=st["mx"], client_cpu_s=st["cpu"], runs=st["n"])
    json.dump(tc, open(os.path.join(P, "transcript.json"), "w"), indent=1)
    B.log("transcript: " + json.dumps(tc))

    # 7. scaling
    sc = {}
    cells = []
    for n in (1, 5, 20, 80):
        pb = B.playbook("scale-s%d" % n, "w1", n, "true")
        cells.append(("steps", n, B.Cell("S-steps%d" % n, "ratchet", B.ratchet_cmd(pb, 1), R, transcript="/dev/null")))
        cells.append(("steps", n, B.Cell("S-steps%d" % n, "cm-c25519", [os.path.join(B.PEERS, "cm.sh"), "1", str(n), "true"],
                                         R, env={"KEX": B.C25519})))
    for h, g in ((1, "w1"), (10, "w3"), (B.A, "w4")):
        pb = B.playbook("scale-h%d" % h, g, 5, "true")
        cells.append(("hosts", h, B.Cell("S-hosts%d" % h, "ratchet", B.ratchet_cmd(pb, h), R, transcript="/dev/null")))
        cells.append(("hosts", h, B.Cell("S-hosts%d" % h, "cm-c25519", [os.path.join(B.PEERS, "cm.sh"), str(h), "5", "true"],
                                         R, env={"KEX": B.C25519})))
    for rep in range(R):
        for _, _, c in cells:
            B.run_once(c, rep)
    for kind, x, c in cells:
        s = B.stats(c)
        sc.setdefault(kind, []).append(dict(x=x, tool=c.tool, median_s=s["med"], min_s=s["mn"], max_s=s["mx"],
                                            rss_mib=s["rss"], machine_cpu_s=s["mcpu"]))
    json.dump(sc, open(os.path.join(P, "scaling.json"), "w"), indent=1)
    for kind, rows in sc.items():
        for r in rows:
            B.log("scaling %s=%s %-10s median %.3f s  machine CPU %.2f s" % (kind, r["x"], r["tool"], r["median_s"] or -1,
                                                                       r["machine_cpu_s"] or -1))
    B.log("profile done; load %s; files in %s" % (open("/proc/loadavg").read().strip(), P))


if __name__ == "__main__":
    main()

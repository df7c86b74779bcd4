#!/usr/bin/python3
"""The bench driver (started by bench/run.sh, which starts and stops the hosts).

Runs W1..W6 with ratchet and the peers, the tools of one workload alternating within each
repetition (the order rotates every repetition), each run wrapped in /usr/bin/time for the
peak RSS of the orchestrating process, and writes OUT/results.json and OUT/table.md.

Environment: BENCH_TMP, RATCHET, INVENTORY, SSH_CFG (from lib.sh); OUT (results dir);
N (repetitions, default 5); N_SLOW (ansible on W1/W2, default min(N,2)); N_HEAVY (ansible on
W3/W4, default 1); N_W4 (W4 tools, default min(N,3)); N_W6 (default min(N,3)); QUICK=1 (tiny sizes, N=1);
ONLY="W1 W2 ..." (workloads to run; QUICK leaves W6 out unless named); ANSIBLE=0 (leave ansible out); K, A (instances, aliases).
"""
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
T = os.environ.get("BENCH_TMP", "/tmp/ratchet-bench")
RATCHET = os.environ.get("RATCHET", os.path.join(REPO, "build/ratchet"))
INV = os.environ.get("INVENTORY", os.path.join(T, "inventory.toml"))
SSH_CFG = os.environ.get("SSH_CFG", os.path.join(T, "ssh_config"))
OUT = os.environ.get("OUT", os.path.join(T, "results"))
QUICK = os.environ.get("QUICK", "0") == "1"
N = int(os.environ.get("N", "1" if QUICK else "5"))
N_SLOW = int(os.environ.get("N_SLOW", str(min(N, 2))))
N_HEAVY = int(os.environ.get("N_HEAVY", "1"))
N_W4 = int(os.environ.get("N_W4", str(min(N, 3))))
N_W6 = int(os.environ.get("N_W6", str(min(N, 3))))
ANSIBLE = os.environ.get("ANSIBLE", "1") == "1"
# A paired before/after comparison: RATCHET_BEFORE=PATH adds a "ratchet-before" cell beside every
# ratchet cell (the same command with that binary), alternating with it in every repetition;
# RATCHET_ONLY=1 leaves the peers out.
RATCHET_BEFORE = os.environ.get("RATCHET_BEFORE", "")
RATCHET_ONLY = os.environ.get("RATCHET_ONLY", "0") == "1"
ONLY = os.environ.get("ONLY", "W1 W2 W3 W4 W5 W8" if QUICK else "W1 W2 W3 W4 W5 W6 W8").split()
K = int(os.environ.get("K", "3" if QUICK else "10"))
A = int(os.environ.get("A", "5" if QUICK else "50"))
PEERS = os.path.join(BENCH_DIR, "peers")
C25519 = "curve25519-sha256"
MiB = 1 << 20

A8 = int(os.environ.get("A8", "20" if QUICK else "200"))  # W8's hosts (hosts.sh's group w8)
if QUICK:
    SIZES = dict(W1=(1, 3), W2=(1, 3), W3=(min(K, 3), 3), W4=(A, 2))
    BIG = [1 * MiB, 2 * MiB]
else:
    SIZES = dict(W1=(1, 20), W2=(1, 20), W3=(10, 20), W4=(A, 10))
    BIG = [16 * MiB, 64 * MiB, 256 * MiB]
SIZES["W8"] = (A8, 1)

os.makedirs(OUT, exist_ok=True)
PB_DIR = os.path.join(T, "playbooks")
TR_DIR = os.path.join(T, "transcripts")
LOG_DIR = os.path.join(OUT, "logs")
for d in (PB_DIR, TR_DIR, LOG_DIR):
    os.makedirs(d, exist_ok=True)


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


def load1():
    return float(open("/proc/loadavg").read().split()[0])


def cpu_busy():
    """Machine-wide busy CPU seconds so far (all processes: client, sshd, remote shells)."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + f[4]
    return (sum(f[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# ---- playbooks -------------------------------------------------------------------------------

def step_cmd(mode, i, big=0):
    if mode == "true":
        return "true"
    if mode == "echo":
        return "echo %d" % i
    line = ("0123456789" * 10)[:99]
    return "yes %s | head -c %d" % (line, big)


def playbook(name, group, steps, mode, big=0):
    p = os.path.join(PB_DIR, name + ".toml")
    with open(p, "w") as f:
        f.write('name = "%s"\ntargets = ["%s"]\n' % (name, group))
        for i in range(1, steps + 1):
            f.write('[[step]]\nid = "s%d"\nkind = "run"\ncommand = %s\n' % (i, json.dumps(step_cmd(mode, i, big))))
    return p


# ---- one timed run -----------------------------------------------------------------------------

class Cell:
    def __init__(self, wl, tool, cmd, reps, kex="", env=None, after=None, check=None, transcript=None,
                 timeout=900, note=""):
        self.wl, self.tool, self.cmd, self.reps, self.kex = wl, tool, cmd, reps, kex
        self.env, self.after, self.check, self.transcript = env or {}, after, check, transcript
        self.timeout, self.note = timeout, note
        self.runs = []  # dicts: wall, rss_kib, user, sys, cpu_machine, load1, rc

    @property
    def id(self):
        return "%s-%s" % (self.wl, self.tool)

    @property
    def fid(self):  # for file names
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.id).strip("_")


def run_once(c, rep):
    memf = os.path.join(LOG_DIR, "%s.time" % c.fid)
    logf = os.path.join(LOG_DIR, "%s.log" % c.fid)
    env = dict(os.environ, **c.env)
    cmd = list(c.cmd)
    if c.transcript:
        tr = c.transcript if c.transcript == "/dev/null" else os.path.join(TR_DIR, "%s-%d.jsonl" % (c.fid, rep))
        if tr != "/dev/null" and os.path.exists(tr):
            os.unlink(tr)
        cmd += ["--transcript", tr]
    full = ["/usr/bin/time", "-o", memf, "-f", "%M %e %U %S"] + cmd
    l1 = load1()
    c0 = cpu_busy()
    t0 = time.perf_counter()
    with open(logf, "a") as lf:
        lf.write("\n=== rep %d: %s\n" % (rep, " ".join(shlex.quote(x) for x in cmd)))
        lf.flush()
        p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=lf, env=env, start_new_session=True)
        # A blocking wait: Popen.wait(timeout=) polls with sleeps of up to 50 ms, which
        # rounded every wall time up to the next 50 ms. The timeout is a timer beside it.
        timed_out = threading.Event()

        def on_timeout():
            timed_out.set()
            os.killpg(p.pid, signal.SIGTERM)  # the run's own process group (started above)
            if not done.wait(10):
                os.killpg(p.pid, signal.SIGKILL)

        done = threading.Event()
        timer = threading.Timer(c.timeout, on_timeout)
        timer.start()
        rc = p.wait()
        wall = time.perf_counter() - t0
        done.set()
        timer.cancel()
        if timed_out.is_set():
            rc = 124
    cpu = cpu_busy() - c0
    rss = user = sys_ = None
    try:
        last = [l for l in open(memf).read().split("\n") if re.match(r"^\d+ ", l)][-1].split()
        rss, user, sys_ = int(last[0]), float(last[2]), float(last[3])
    except (OSError, IndexError, ValueError):
        pass
    r = dict(rep=rep, wall=wall, rss_kib=rss, user=user, sys=sys_, cpu_machine=cpu, load1=l1, rc=rc)
    if c.after:
        c.after()
    if rc == 0 and c.check and rep == 0:
        err = c.check(tr if c.transcript else None)
        if err:
            r["rc"] = -1
            r["check"] = err
    c.runs.append(r)
    flag = "" if r["rc"] == 0 else "  FAILED rc=%s %s (see %s)" % (r["rc"], r.get("check", ""), logf)
    log("  %-28s %7.3f s  rss %6.1f MiB  load %.2f%s" % (c.id, wall, (rss or 0) / 1024.0, l1, flag))
    time.sleep(0.5)  # let sessions of this run end (ratchet's host-side watchdogs poll every 0.2 s)
    return r


def run_cells(cells):
    reps = max(c.reps for c in cells)
    for rep in range(reps):
        k = rep % len(cells)
        for c in cells[k:] + cells[:k]:  # rotate the order every repetition
            if rep < c.reps:
                run_once(c, rep)


# ---- checks on ratchet's transcript (untimed) ----------------------------------------------------

def read_events(path):
    ev = []
    for line in open(path):
        try:
            ev.append(json.loads(line))
        except ValueError:
            pass
    return ev


def check_steps(hosts, steps, echo=False):
    def f(path):
        if not path or path == "/dev/null":
            return None
        ev = read_events(path)
        ends = [e for e in ev if e.get("event") == "step_end"]
        if len(ends) != hosts * steps or any(e["status"] != "changed" for e in ends):
            return "transcript: %d step_end (want %d all changed)" % (len(ends), hosts * steps)
        if echo:
            outs = {(e["host"], e["step"]): e.get("data", "") for e in ev if e.get("event") == "output"}
            for (h, s), d in outs.items():
                if d.strip() != s[1:]:
                    return "transcript: %s %s printed %r" % (h, s, d)
            if len(outs) != hosts * steps:
                return "transcript: %d outputs" % len(outs)
        return None
    return f


def check_big(nbytes):
    def f(path):
        ev = read_events(path)
        outs = [e for e in ev if e.get("event") == "output" and e.get("stream") == "stdout"]
        if len(outs) != 1 or outs[0].get("bytes") != nbytes:
            return "transcript: stdout bytes %s, want %d" % ([o.get("bytes") for o in outs], nbytes)
        return None
    return f


def ansible_cleanup():
    subprocess.run([os.path.join(PEERS, "ansible-cleanup.sh")], check=False)


# ---- workloads -----------------------------------------------------------------------------------

def ratchet_cmd(pb, forks, strategy=None):
    c = [RATCHET, "run", pb, "-i", INV, "-F", "none", "--forks", str(forks)]
    if strategy:
        c += ["--strategy", strategy]
    return c


def fleet_cells(wl, group, mode, extra_ratchet=()):
    h, n = SIZES[wl]
    pb = playbook(wl.lower(), group, n, mode)
    echo = mode == "echo"
    slow = wl in ("W1", "W2")
    reps = N_W4 if wl == "W4" else N
    cells = [Cell(wl, "ratchet", ratchet_cmd(pb, h), reps, kex="ratchet", transcript="file",
                  check=check_steps(h, n, echo))]
    if RATCHET_BEFORE:
        cells.append(Cell(wl, "ratchet-before", [RATCHET_BEFORE] + ratchet_cmd(pb, h)[1:], reps, kex="ratchet",
                          transcript="file", check=check_steps(h, n, echo)))
    if RATCHET_ONLY:
        return cells
    for tool, cmd, tr in extra_ratchet:
        cells.append(Cell(wl, tool, cmd(pb, h), reps, kex="ratchet", transcript=tr))
    cells.append(Cell(wl, "openssh-cm", [os.path.join(PEERS, "cm.sh"), str(h), str(n), mode], reps, kex="ssh"))
    if slow or QUICK:
        cells.append(Cell(wl, "openssh-cm-c25519", [os.path.join(PEERS, "cm.sh"), str(h), str(n), mode], reps,
                          kex="ssh-c25519", env={"KEX": C25519}))
    cells.append(Cell(wl, "fabric", [os.path.join(PEERS, "fabric_run.py"), str(h), str(n), mode], reps, kex="fabric"))
    if ANSIBLE:
        cells.append(Cell(wl, "ansible", [os.path.join(PEERS, "ansible.sh"), str(h), str(n), mode],
                          N_SLOW if slow else N_HEAVY, kex="ansible", after=ansible_cleanup, timeout=1200))
    return cells


def w5_cells(size):
    mb = size // MiB
    wl = "W5-%dMiB" % mb
    pb = playbook("w5-%dm" % mb, "w1", 1, "big", size)
    env = {"BIG_BYTES": str(size)}
    mine = [Cell(wl, "ratchet", ratchet_cmd(pb, 1), N, kex="ratchet", transcript="file", check=check_big(size))]
    if RATCHET_BEFORE:
        mine.append(Cell(wl, "ratchet-before", [RATCHET_BEFORE] + ratchet_cmd(pb, 1)[1:], N, kex="ratchet",
                         transcript="file", check=check_big(size)))
    if RATCHET_ONLY:
        return mine
    return mine + [
        Cell(wl, "ssh>/dev/null", [os.path.join(PEERS, "ssh_big.sh")], N, kex="ssh", env=env),
        Cell(wl, "ssh-c25519>/dev/null", [os.path.join(PEERS, "ssh_big.sh")], N, kex="ssh-c25519",
             env=dict(env, KEX=C25519)),
    ]


# ---- W6: gpu-release on the systemd lab host -------------------------------------------------

LAB = os.path.join(REPO, "tests/lab/systemd-host.sh")
W6_STATE = os.path.join(T, "w6-host")


def free_port(start):
    import socket
    for p in range(start, start + 200):
        if p == 2024:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            continue
        finally:
            s.close()
    raise SystemExit("no free port")


def w6():
    if not os.path.exists("/var/cache/ratchet-lab/rootfs/etc/ratchet-lab-rootfs"):
        log("W6: no lab rootfs (tests/lab/systemd-host.sh ensure); skipped")
        return [], {"skipped": "no lab rootfs"}
    port = free_port(int(os.environ.get("BASE_PORT", "23300")) + 100)
    t0 = time.perf_counter()
    r = subprocess.run([LAB, "start", W6_STATE, str(port)], capture_output=True, text=True)
    if r.returncode != 0:
        log("W6: lab host did not start: " + r.stderr[-500:])
        return [], {"skipped": "lab host did not start"}
    info = {"boot_s": round(time.perf_counter() - t0, 2), "port": port}
    inv = os.path.join(W6_STATE, "inventory.toml")
    with open(inv, "w") as f:
        f.write('[hosts.lab]\naddress = "127.0.0.1"\nport = %d\nuser = "root"\nidentity = "%s/client_key"\n'
                'known_hosts = "%s/known_hosts"\n[groups]\ngpu = ["lab"]\n' % (port, W6_STATE, W6_STATE))
    stage_script = os.path.join(REPO, "tests/lab/stage-inference.sh")
    pb = os.path.join(REPO, "playbooks/gpu-release.toml")
    glob = {}

    def stage():
        with open(stage_script) as s:
            out = subprocess.run([LAB, "ssh", W6_STATE, "bash -s"], stdin=s, capture_output=True, text=True)
        m = re.search(r"^DEVICE_GLOB=(.*)$", out.stdout, re.M)
        if not m:
            raise SystemExit("W6: staging failed: " + out.stderr[-800:])
        glob["g"] = m.group(1)

    # the first run on a fresh host installs the unit file: warm up once, untimed
    stage()
    first = subprocess.run([RATCHET, "run", pb, "-i", inv, "-F", "none", "-e", 'devices=["%s"]' % glob["g"],
                            "--transcript", os.path.join(TR_DIR, "W6-warmup.jsonl")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    info["warmup_rc"] = first.returncode

    class Dyn(list):  # the device glob changes with each staging
        def __iter__(self):
            return iter([RATCHET, "run", pb, "-i", inv, "-F", "none", "-e", 'devices=["%s"]' % glob["g"]])

    held = Cell("W6", "ratchet (GPUs held)", Dyn(), N_W6, kex="ratchet", transcript="file",
                note="fresh staging before each run (untimed)")
    again = Cell("W6", "ratchet (second run)", Dyn(), N_W6, kex="ratchet", transcript="file",
                 note="right after the first: nothing to kill, no rung fires")
    for rep in range(N_W6):
        stage()
        time.sleep(0.5)
        run_once(held, rep)
        run_once(again, rep)
    return [held, again], info


def stop_w6():
    if os.path.exists(os.path.join(W6_STATE, "launcher.pid")):
        subprocess.run([LAB, "stop", W6_STATE], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if os.path.isdir(W6_STATE) and not os.path.exists(os.path.join(W6_STATE, "launcher.pid")):
        shutil.rmtree(W6_STATE, ignore_errors=True)  # stopped: the next run boots a fresh instance


def w6_breakdown(cell):
    """Seconds in remote commands vs. waiting (settle, delay, kill waits) per run, from transcripts."""
    rows = []
    for r in cell.runs:
        path = os.path.join(TR_DIR, "%s-%d.jsonl" % (cell.fid, r["rep"]))
        if not os.path.exists(path):
            continue
        ev = read_events(path)
        cmds = [e for e in ev if e.get("event") == "exit"]
        steps = [e for e in ev if e.get("event") == "step_end"]
        conn = [e.get("ms", 0) for e in ev if e.get("event") == "connect"]
        rows.append(dict(commands=len(cmds), cmd_s=sum(e.get("ms", 0) for e in cmds) / 1e3,
                         step_s=sum(e.get("ms", 0) for e in steps) / 1e3, connect_s=sum(conn) / 1e3,
                         statuses=[e["status"] for e in steps]))
    return rows


# ---- key exchange probe (untimed) ----------------------------------------------------------------

def kex_probe():
    logp = os.path.join(T, "sshd/probe/sshd.log")

    def probe(cmd, env=None):
        n0 = len(open(logp).read().splitlines())
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **(env or {})),
                       timeout=120)
        time.sleep(0.3)
        lines = open(logp).read().splitlines()[n0:]
        kex = [l.split("kex: algorithm: ")[1].split()[0] for l in lines if "kex: algorithm: " in l]
        ciph = [l.split("server->client cipher: ")[1].split()[0] for l in lines if "server->client cipher: " in l]
        return "%s / %s" % (kex[0] if kex else "?", ciph[0] if ciph else "?")

    pk = os.path.join(T, "kexprobe.py")
    with open(pk, "w") as f:
        f.write("import paramiko\nfrom fabric import Config, Connection\n"
                "c = Connection('probe', config=Config(runtime_ssh_path=%r), connect_kwargs={'key_filename': [%r],"
                " 'look_for_keys': False, 'allow_agent': False})\nc.client.load_host_keys(%r)\n"
                "c.client.set_missing_host_key_policy(paramiko.RejectPolicy())\nc.run('true', hide=True)\n"
                % (SSH_CFG, os.path.join(T, "client_ed25519"), os.path.join(T, "known_hosts")))
    ssh = ["ssh", "-n", "-F", SSH_CFG]
    res = {
        "ratchet": probe([RATCHET, "exec", "probe", "-i", INV, "-F", "none", "--", "true"]),
        "ssh": probe(ssh + ["probe", "true"]),
        "ssh-c25519": probe(ssh + ["-o", "KexAlgorithms=" + C25519, "probe", "true"]),
        "fabric": probe(["/usr/bin/python3", pk]),
    }
    res["ansible"] = res["ssh"] + " (its ssh)"
    return res


# ---- table -------------------------------------------------------------------------------------

def stats(c):
    ok = [r for r in c.runs if r["rc"] == 0]
    w = [r["wall"] for r in ok]
    rss = [r["rss_kib"] for r in ok if r["rss_kib"]]
    cpu = [r["user"] + r["sys"] for r in ok if r["user"] is not None]
    mc = [r["cpu_machine"] for r in ok]
    return dict(n=len(ok), fails=len(c.runs) - len(ok),
                med=statistics.median(w) if w else None, mn=min(w) if w else None, mx=max(w) if w else None,
                rss=max(rss) / 1024.0 if rss else None, cpu=statistics.median(cpu) if cpu else None,
                mcpu=statistics.median(mc) if mc else None,
                load=statistics.median([r["load1"] for r in c.runs]) if c.runs else None)


def short_kex(s):
    s = s.replace("@openssh.com", "").replace("@libssh.org", "").replace("x25519-sha512", "x25519")
    return s.replace("curve25519-sha256", "curve25519")


def table(cells, kex):
    kex = {k: short_kex(v) for k, v in kex.items()}
    out = ["| workload | tool | key exchange / cipher | runs | median s | min–max s | ratchet ÷ tool | "
           "peak RSS MiB | client CPU s | machine CPU s | load |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    by_wl = {}
    for c in cells:
        by_wl.setdefault(c.wl, []).append(c)
    for wl, cs in by_wl.items():
        base = stats(cs[0]) if cs[0].tool.startswith("ratchet") else None
        for c in cs:
            s = stats(c)
            ratio = "-"
            if base and base["med"] and s["med"] and c is not cs[0] and not (wl == "W6"):
                ratio = "%.2f" % (base["med"] / s["med"])
            fails = " (%d failed)" % s["fails"] if s["fails"] else ""
            f = lambda x, nd=2: "-" if x is None else "%.*f" % (nd, x)
            out.append("| %s | %s%s | %s | %d | %s | %s–%s | %s | %s | %s | %s | %s |" % (
                wl, c.tool, fails, short_kex(kex.get(c.kex, c.kex)), s["n"], f(s["med"], 3), f(s["mn"], 2), f(s["mx"], 2),
                ratio, f(s["rss"], 1), f(s["cpu"], 2), f(s["mcpu"], 2), f(s["load"], 1)))
    return "\n".join(out)


def w6_text(info):
    lines = ["W6 (from the transcripts): lab host boot %s s" % info.get("boot_s", "?")]
    for tool, rows in info.items():
        if not isinstance(rows, list) or not rows:
            continue
        med = lambda k: statistics.median(r[k] for r in rows)
        lines.append("- %s: %d remote commands, %.2f s inside them, %.2f s in steps outside commands "
                     "(settle/delay sleeps), connect %.2f s; steps: %s" % (
                         tool, rows[0]["commands"], med("cmd_s"), med("step_s") - med("cmd_s"), med("connect_s"),
                         " ".join(rows[0]["statuses"])))
    if "skipped" in info:
        lines.append("- skipped: " + info["skipped"])
    return "\n".join(lines)


def w8_cells():
    """W8: A8 hosts x 1 step `true`: connection set-up dominates. ratchet (both transports) and Fabric."""
    h, n = SIZES["W8"]
    pb = playbook("w8", "w8", n, "true")
    cells = [Cell("W8", "ratchet", ratchet_cmd(pb, h), N, kex="ratchet", transcript="file",
                  check=check_steps(h, n))]
    if RATCHET_BEFORE:
        cells.append(Cell("W8", "ratchet-before", [RATCHET_BEFORE] + ratchet_cmd(pb, h)[1:], N, kex="ratchet",
                          transcript="file", check=check_steps(h, n)))
    cells.append(Cell("W8", "ratchet --transport channel", ratchet_cmd(pb, h) + ["--transport", "channel"], N,
                      kex="ratchet", transcript="file", check=check_steps(h, n)))
    if not RATCHET_ONLY:
        cells.append(Cell("W8", "fabric", [os.path.join(PEERS, "fabric_run.py"), str(h), str(n), "true"], N,
                          kex="fabric"))
    return cells


def w8_text(cells):
    """Where W8's time goes: per host, and (from ratchet's transcripts) connect vs the step."""
    h = SIZES["W8"][0]
    lines = ["W8 per host (%d hosts x 1 step; medians):" % h]
    for c in cells:
        s = stats(c)
        if not s["med"]:
            continue
        line = "- %s: wall %.1f ms/host, client CPU %.1f ms/host, machine CPU %.1f ms/host, peak RSS %.1f MiB" % (
            c.tool, 1000 * s["med"] / h, 1000 * (s["cpu"] or 0) / h, 1000 * (s["mcpu"] or 0) / h, s["rss"] or 0)
        if c.transcript == "file":
            tr = os.path.join(TR_DIR, "%s-0.jsonl" % c.fid)
            try:
                ev = read_events(tr)
                conn = sorted(e.get("ms", 0) for e in ev if e.get("event") == "connect")
                cmds = sorted(e.get("ms", 0) for e in ev if e.get("event") == "exit")
                if conn:
                    line += "; connect median %d ms (max %d)" % (conn[len(conn) // 2], conn[-1])
                if cmds:
                    line += ", the step's command median %d ms" % cmds[len(cmds) // 2]
            except OSError:
                pass
        lines.append(line)
    return "\n".join(lines)


def floor_per_step():
    """The floor of one step on these hosts (every host is this machine): one round trip on
    127.0.0.1 (a TCP ping-pong, median of 200) plus one `sh -c true` (fork and exec of /bin/sh,
    the mean of 200 run by one shell). Milliseconds."""
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname())
    con, _ = srv.accept()
    for s in (cli, con):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rtts = []
    for _ in range(200):
        t0 = time.perf_counter()
        cli.sendall(b"x")
        con.recv(1)
        con.sendall(b"y")
        cli.recv(1)
        rtts.append(time.perf_counter() - t0)
    for s in (cli, con, srv):
        s.close()
    t0 = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do /bin/sh -c true; i=$((i+1)); done"], check=True)
    sh = (time.perf_counter() - t0) / 200
    return dict(rtt_ms=round(statistics.median(rtts) * 1000, 3), sh_true_ms=round(sh * 1000, 3),
                floor_ms=round((statistics.median(rtts) + sh) * 1000, 3))


def main():
    t_start = time.time()
    fl = floor_per_step()
    log("floor per step: %s" % json.dumps(fl))
    env = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(), "load_at_start": open("/proc/loadavg").read().strip(),
        "quick": QUICK, "N": N, "N_SLOW": N_SLOW, "N_HEAVY": N_HEAVY, "N_W4": N_W4, "N_W6": N_W6,
        "kernel": os.uname().release,
        "floor_per_step_ms": "%.2f (127.0.0.1 round trip %.3f + sh -c true %.2f)" % (
            fl["floor_ms"], fl["rtt_ms"], fl["sh_true_ms"]),
        "ratchet": subprocess.run([RATCHET, "--version"], capture_output=True, text=True).stdout.strip(),
        "openssh": subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip(),
        "libssh": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libssh-4"], capture_output=True,
                                 text=True).stdout,
        "fabric": subprocess.run(["/usr/bin/python3", "-c", "import fabric, paramiko; print(fabric.__version__, "
                                  "'paramiko', paramiko.__version__)"], capture_output=True, text=True).stdout.strip(),
        "ansible": subprocess.run(["ansible-playbook", "--version"], capture_output=True,
                                  text=True).stdout.split("\n")[0] if ANSIBLE else "not run",
    }
    kex = kex_probe()
    log("key exchange per tool: " + json.dumps(kex))
    cells = []
    w6_info = {}
    try:
        if "W1" in ONLY or "W2" in ONLY:  # warm caches (binaries, python modules) once, untimed
            log("warm-up (untimed)")
            for c in fleet_cells("W1", "w1", "true"):
                c.reps = 1
                run_once(c, 0)
        for wl, group, mode in (("W1", "w1", "true"), ("W2", "w1", "echo"), ("W3", "w3", "true"),
                                ("W4", "w4", "true")):
            if wl not in ONLY:
                continue
            h, n = SIZES[wl]
            log("%s: %d host(s) x %d steps `%s`" % (wl, h, n, step_cmd(mode, 1)))
            # "before": the one-channel-per-command path (v0.2's only transport), in the same run
            extra = [("ratchet --transport channel",
                      lambda pb, h: ratchet_cmd(pb, h) + ["--transport", "channel"], "file")]
            if wl == "W2":  # transcript cost: the same run recording to /dev/null
                extra.append(("ratchet --transcript /dev/null", lambda pb, h: ratchet_cmd(pb, h), "/dev/null"))
            if wl == "W4":
                extra.append(("ratchet --strategy free", lambda pb, h: ratchet_cmd(pb, h, "free"), "file"))
            cs = fleet_cells(wl, group, mode, extra)
            run_cells(cs)
            cells += cs
        w8 = []
        if "W8" in ONLY:
            log("W8: %d hosts x 1 step `true`" % SIZES["W8"][0])
            w8 = w8_cells()
            run_cells(w8)
            cells += w8
        if "W5" in ONLY:
            for size in BIG:
                log("W5: 1 step printing %d MiB" % (size // MiB))
                cs = w5_cells(size)
                run_cells(cs)
                cells += cs
        if "W6" in ONLY:
            log("W6: playbooks/gpu-release.toml on a systemd lab host")
            try:
                cs, w6_info = w6()
            finally:
                stop_w6()
            cells += cs
            for c in cs:
                w6_info[c.tool] = w6_breakdown(c)
    finally:
        env["load_at_end"] = open("/proc/loadavg").read().strip()
        env["wall_s"] = round(time.time() - t_start, 1)
        res = dict(env=env, kex=kex, w6=w6_info,
                   cells=[dict(id=c.id, wl=c.wl, tool=c.tool, kex=kex.get(c.kex, c.kex), note=c.note,
                               cmd=" ".join(c.cmd), runs=c.runs, stats=stats(c)) for c in cells])
        with open(os.path.join(OUT, "results.json"), "w") as f:
            json.dump(res, f, indent=1)
        md = table(cells, kex)
        with open(os.path.join(OUT, "table.md"), "w") as f:
            f.write("```\n" + "\n".join("%s: %s" % kv for kv in env.items()) + "\n```\n\n" + md + "\n")
            if w6_info:
                f.write("\n" + w6_text(w6_info) + "\n")
        print()
        print(md)
        if w8:
            print("\n" + w8_text(w8))
            with open(os.path.join(OUT, "table.md"), "a") as f:
                f.write("\n" + w8_text(w8) + "\n")
        if w6_info:
            print("\n" + w6_text(w6_info))
        print("\nload at start %s, at end %s; %.0f s; results in %s" % (env["load_at_start"], env["load_at_end"],
                                                                     env["wall_s"], OUT))
    failed = [c.id for c in cells if stats(c)["fails"]]
    if failed:
        print("FAILED cells: " + ", ".join(failed))
        sys.exit(1)


def retable(path):
    """bench.py --table RESULTS.json: print the table of an earlier run again."""
    res = json.load(open(path))
    cells = []
    for d in res["cells"]:
        c = Cell(d["wl"], d["tool"], d["cmd"].split(), 0, kex=d["tool"])
        c.runs = d["runs"]
        c.kex = d["kex"]
        cells.append(c)
    print("```\n" + "\n".join("%s: %s" % kv for kv in res["env"].items()) + "\n```\n")
    print(table(cells, {}))
    if res.get("w6"):
        print("\n" + w6_text(res["w6"]))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        retable(sys.argv[2])
    else:
        main()

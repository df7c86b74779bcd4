#!/usr/bin/env python3
"""Asserts, from the transcripts of run-on-gpu.sh's two runs of gpu-release-cuda, that
ratchet touched only what the test started, and prints what happened.

First run:
  - it ended ok (exit 0);
  - every process ratchet signalled (each `signalled` evidence entry and each
    `signalled` line of a kill's output) belonged to the test user and was the server
    or the worker that the test started; every holder any check reported was the
    test user's (the selectors are filtered by that user), and the bystander (a root
    process holding the GPU beside the scene) never appears;
  - kill_server signalled the server by its PID file, not the orphaned worker;
  - gpus_free (verify gpus_idle: ratchet_gpus_idle) found the worker through ratchet's own
    /proc scan (no command anywhere calls fuser or lsof), each holder with its owner
    (unit, container, pod, session or none, from /proc/PID/cgroup), and, where nvidia-smi lists CUDA
    processes (--smi true), in the driver's view too; escalated, and names the rung that
    freed it; its last check found every GPU idle: no process of the test user listed or
    holding a device file, memory (less the bystander's) at most max_memory_used;
  - the bystander is in the per-GPU evidence (the kernel's view, and the driver's with
    --smi true), marked not selected, and in no holders or signalled list;
  - the notes were written.
Second run: ended ok, signalled nothing, every step found its state already held.
"""
import argparse
import json
import sys

ok = True


def fail(msg):
    global ok
    ok = False
    print(f"FAIL: {msg}")


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def step_end(events, step):
    ends = [e for e in events if e["event"] == "step_end" and e.get("step") == step]
    return ends[-1] if ends else {}


def signalled(events):
    """(step, rung, pid, user, cmdline) for every process a kill action signalled."""
    out = []
    for e in events:
        if e["event"] == "evidence" and "signalled" in e:
            for p in e["signalled"]:
                out.append((e["step"], e.get("rung", 0), p["pid"], p["user"], p.get("cmdline", ""), "evidence"))
        if e["event"] == "output" and e.get("stream") == "stdout" and "data" in e:
            for line in e["data"].splitlines():
                f = line.split("\t")
                if f[0] == "signalled" and len(f) > 3:
                    out.append((e["step"], e.get("rung", 0), int(f[1]), f[2], f[6] if len(f) > 6 else "", "output"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--user", required=True)
    ap.add_argument("--server", type=int, required=True)
    ap.add_argument("--worker", type=int, required=True)
    ap.add_argument("--bystander", type=int, required=True)
    ap.add_argument("--smi", choices=["true", "false"], required=True)
    ap.add_argument("--first", required=True)
    ap.add_argument("--second", required=True)
    a = ap.parse_args()
    ours = {a.server: "server", a.worker: "worker"}

    ev = load(a.first)
    end = [e for e in ev if e["event"] == "run_end"]
    if not end or end[-1].get("exit_code") != 0:
        fail(f"first run did not end ok: {end[-1] if end else 'no run_end'}")

    sig = signalled(ev)
    print(f"first run: {len({(s, r, p) for s, r, p, *_ in sig})} signal(s) sent")
    for step, rung, pid, user, cmd, src in sig:
        if src != "evidence":
            continue
        print(f"  {step} rung {rung}: PID {pid} ({ours.get(pid, 'NOT OURS')}) user {user}: {cmd}")
    for step, rung, pid, user, cmd, src in sig:
        if user != a.user:
            fail(f"{step} rung {rung} signalled PID {pid} of user {user}, not {a.user} ({src})")
        if pid not in ours:
            fail(f"{step} rung {rung} signalled PID {pid}, which the test did not start ({src})")
    for e in ev:
        if e["event"] == "evidence":
            for h in e.get("holders", []):
                if h["user"] != a.user:
                    fail(f"{e['step']} reported holder {h['pid']} of user {h['user']}")
        if e["event"] == "command":
            if any(tool in e["command"].split() for tool in ("fuser", "lsof")):
                fail(f"{e['step']} calls fuser/lsof: {e['command']}")

    mentioned = set()
    for e in ev:
        if e["event"] == "evidence":
            mentioned |= {p["pid"] for p in e.get("holders", []) + e.get("signalled", [])}
    if a.bystander in mentioned:
        fail(f"the bystander {a.bystander} (root, holds the GPU) was selected or reported")
    else:
        print(f"bystander {a.bystander} (root, holds the GPU): in no holders or signalled list")

    ks = {p for s, r, p, *_ in sig if s == "kill_server"}
    if a.server not in ks:
        fail("kill_server did not signal the server")
    if a.worker in ks:
        fail("kill_server reached the worker: it was meant to be outside the server's tree")
    print(f"kill_server: {step_end(ev, 'kill_server').get('status')}")

    checks = [e for e in ev if e["event"] == "command" and e.get("step") == "gpus_free" and e["role"] == "check"]
    if not checks or not checks[0]["command"].startswith("ratchet_gpus_idle "):
        fail("gpus_free's check is not ratchet_gpus_idle")
    else:
        print(f"gpus_free check: {checks[0]['command']}")
    first = next((e for e in ev if e["event"] == "evidence" and e.get("step") == "gpus_free" and e["role"] == "check"), None)
    found = {h["pid"]: h for h in (first or {}).get("holders", [])}
    if a.worker not in found:
        fail(f"gpus_free's first check did not find the worker {a.worker}: {sorted(found)}")
    for pid, h in sorted(found.items()):
        print(f"  holder found by the /proc scan: PID {pid} ({ours.get(pid, 'NOT OURS')}) user {h['user']}, "
              f"{len(h['files'])} file(s): {' '.join(h['files'])}")
        o = h.get("owner")
        if not isinstance(o, dict) or not o.get("kind"):
            fail(f"gpus_free's first check gives holder {pid} no owner: {o!r}")
        else:
            print(f"    owner: {o['kind']}" + "".join(f" {k}={o[k]}" for k in ("name", "id", "restart") if o.get(k))
                  + f"; state {h.get('state', '?')}")
    caps = [f for h in found.values() for f in h["files"] if "/nvidia-caps/" in f]
    print(f"  held beneath the matched directory nvidia-caps/: {' '.join(sorted(set(caps))) or 'nothing'}")
    ge = step_end(ev, "gpus_free")
    if ge.get("status") != "escalated":
        fail(f"gpus_free did not escalate: {ge}")
    rung_sig = {}
    for s, r, p, *_ in sig:
        if s == "gpus_free":
            rung_sig.setdefault(r, set()).add(p)
    names = {1: "TERM", 2: "KILL"}
    print(f"gpus_free: {ge.get('status')}, freed after rung {ge.get('rung')} ({names.get(ge.get('rung'), '?')}); "
          + "; ".join(f"rung {r} signalled {sorted(ps)}" for r, ps in sorted(rung_sig.items())))

    gchecks = [e for e in ev if e["event"] == "evidence" and e.get("step") == "gpus_free" and e["role"] == "check"]
    if not gchecks or not all("gpus" in e for e in gchecks):
        fail("gpus_free's checks carry no per-GPU evidence")
    else:
        print("per-GPU evidence, before (first check) and after (last check):")
        for label, e in (("before", gchecks[0]), ("after", gchecks[-1])):
            for g in e["gpus"]:
                procs = "; ".join(f"PID {p['pid']} {p.get('user', '?')} {p.get('used_memory_mib')} MiB"
                                  + ("" if p.get("selected") else f" (left out: {p.get('left_out', 'not visible')})")
                                  for p in g["processes"]) or "none"
                holds = "; ".join(f"PID {h['pid']} {h['user']}" + ("" if h.get("selected") else " (left out)")
                                  for h in g["holders"]) or "none"
                print(f"  {label}: GPU {g['index']} {g['name']} {g['uuid']}: {g['memory_used_mib']} / "
                      f"{g['memory_total_mib']} MiB, {g['utilization_pct']} %, unexplained {g.get('memory_unexplained_mib')} MiB;"
                      f" driver: {procs}; kernel: {holds}; {'idle' if g['idle'] else 'busy: ' + ', '.join(g['reasons'])}")
                for d in g["disagreements"]:
                    print(f"    disagree: {d}")
        first_gpus = gchecks[0]["gpus"]
        if not any(h["pid"] == a.worker for g in first_gpus for h in g["holders"]):
            fail(f"the first check's per-GPU holders (the kernel's view) lack the worker {a.worker}")
        if a.smi == "true" and not any(p["pid"] == a.worker for g in first_gpus for p in g["processes"]):
            fail(f"nvidia-smi listed the worker {a.worker} before the run, but the first check's driver view lacks it")
        by_seen = False
        for e in gchecks:
            for g in e["gpus"]:
                for x in g["processes"] + g["holders"]:
                    if x["pid"] == a.bystander:
                        by_seen = True
                        if x.get("selected"):
                            fail(f"the bystander {a.bystander} was selected on GPU {g['index']}")
        if not by_seen:
            fail(f"the bystander {a.bystander} (holds the GPU) is in no per-GPU evidence")
        else:
            print(f"bystander {a.bystander}: listed in the per-GPU evidence, never selected")
        last = gchecks[-1]
        if not last.get("holds"):
            fail(f"gpus_free's last check did not hold: {last.get('note')}")
        for g in last["gpus"]:
            if not g["idle"]:
                fail(f"GPU {g['index']} not idle at the last check: {g['reasons']}")
            for p in g["processes"]:
                if p.get("user") == a.user or p["pid"] in ours:
                    fail(f"GPU {g['index']}: the driver still lists PID {p['pid']} ({p.get('user')}) at the last check")
    if step_end(ev, "notes").get("status") not in ("changed", "ok"):
        fail(f"notes: {step_end(ev, 'notes')}")

    ev2 = load(a.second)
    end2 = [e for e in ev2 if e["event"] == "run_end"]
    if not end2 or end2[-1].get("exit_code") != 0:
        fail(f"second run did not end ok: {end2[-1] if end2 else 'no run_end'}")
    sig2 = signalled(ev2)
    if sig2:
        fail(f"second run signalled {sorted({p for _, _, p, *_ in sig2})}")
    for step in ("kill_server", "gpus_free"):
        st = step_end(ev2, step)
        if st.get("status") != "ok" or st.get("rung") != 0:
            fail(f"second run: {step} {st.get('status')} rung {st.get('rung')}, expected ok at rung 0")
    print("second run: " + ", ".join(f"{e['step']} {e['status']}" for e in ev2 if e["event"] == "step_end")
          + f"; {len(sig2)} signal(s)")
    print("transcript check: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

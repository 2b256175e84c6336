#!/usr/bin/env python3
"""A harness loop against a running tenon daemon (standard library only).

N agents run at once, each replaying one workflow of a trajectory file
(`tenon trace import agentcgroup DIR -o FILE`) in order, as a
mini-swe-agent-style loop would: a model call, then the action, and so on.

- Model calls go through the daemon's model proxy (so the daemon sees every
  model wait) to a fake OpenAI-compatible upstream started here, which
  streams its answer after the trace's recorded model time (wait_s).
- Actions run through TenonEnvironment.execute({"command": ...}). A traced
  command cannot run outside its task's image, so, as `tenon replay` does,
  the action replays its recorded memory burst with `tenon tool mem` (peak,
  ramp, hold, files) instead.
- An action killed for memory (exception_info from the daemon) is retried
  up to --retries times; then the agent fails.

Times (model waits, the burst's ramp and hold) are multiplied by
--time-scale. Start the daemon with --upstream http://127.0.0.1:PORT/v1
and pass the same --upstream-port. Prints a summary; --json writes it.

    tenon serve --budget 1GiB --upstream http://127.0.0.1:18080/v1 &
    harness.py --trajectory haiku.jsonl --agents 8 --upstream-port 18080 \\
        --time-scale 0.2
"""

import argparse
import http.server
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
from tenon_client import TenonClient, TenonEnvironment  # noqa: E402


class FakeUpstream(http.server.BaseHTTPRequestHandler):
    """POST /v1/chat/completions: waits metadata.delay_s, then streams a
    short answer as server-sent events (or one JSON body without stream)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        time.sleep(float((body.get("metadata") or {}).get("delay_s", 0)))
        words = ["ok", " next", " action"]
        if not body.get("stream"):
            out = json.dumps({"id": "fake", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "".join(words)}, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunks = [{"id": "fake", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": w}}]} for w in words]
        for c in chunks:
            self._chunk(b"data: " + json.dumps(c).encode() + b"\n\n")
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def start_upstream(port):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), FakeUpstream)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def mem_command(tenon, mem, scale):
    """The `tenon tool mem` command replaying an action's memory burst."""
    fmt = lambda v: ("%.6f" % v).rstrip("0").rstrip(".") or "0"  # noqa: E731
    args = [tenon, "tool", "mem", "--peak", fmt(max(mem.get("peak_mib", 1), 1)) + "MiB",
            "--ramp", fmt(mem.get("ramp_s", 0) * scale) + "s", "--hold", fmt(mem.get("hold_s", 0) * scale) + "s"]
    if mem.get("files_mib"):
        args += ["--files", fmt(mem["files_mib"]) + "MiB"]
    return " ".join(args) + " >/dev/null"


class Agent(threading.Thread):
    def __init__(self, client, wf, args, t0):
        super().__init__(daemon=True)
        self.client, self.wf, self.args, self.t0 = client, wf, args, t0
        self.ooms = self.timeouts = self.actions = 0
        self.done = False
        self.error = ""
        self.end = None

    def model_call(self, env, delay):
        body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "next"}],
                "metadata": {"delay_s": "%.3f" % delay}}
        # The proxy streams the answer back; read all of it as a harness would.
        self.client._request("POST", self.client._agent(env.agent_id) + "/openai/v1/chat/completions",
                             json.dumps(body).encode(), "application/json", raw=True)

    def run(self):
        env = None
        try:
            env = TenonEnvironment(client=self.client)
            acts = self.wf["actions"][: self.args.max_actions or None]
            for a in acts:
                self.model_call(env, a.get("wait_s", 0) * self.args.time_scale)
                cmd = mem_command(self.args.tenon, a.get("mem") or {}, self.args.time_scale)
                for attempt in range(self.args.retries + 1):
                    out = env.execute({"command": cmd}, timeout=self.args.action_timeout)
                    kind = (out.get("extra") or {}).get("tenon", {}).get("failure", "")
                    if kind == "oom":
                        self.ooms += 1
                    elif kind == "timeout":
                        self.timeouts += 1
                    if not kind:
                        break
                else:
                    self.error = "action %d: %s" % (self.actions, out["exception_info"][:200])
                    return
                if out["returncode"] != 0:
                    self.error = "action %d exited %d: %s" % (self.actions, out["returncode"], out["output"][:200])
                    return
                self.actions += 1
            self.done = True
        except Exception as e:  # a daemon error ends this agent, not the run
            self.error = "%s: %s" % (type(e).__name__, e)
        finally:
            self.end = time.monotonic() - self.t0
            if env is not None:
                try:
                    env.cleanup()
                except Exception:
                    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", default=os.environ.get("TENON_SOCKET", "/run/tenon/tenon.sock"))
    ap.add_argument("--trajectory", required=True, help="trajectory JSONL (tenon trace import agentcgroup)")
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--skip", type=int, default=0, help="start at this workflow of the file")
    ap.add_argument("--max-actions", type=int, default=0, help="replay at most this many actions per agent (0: all)")
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--upstream-port", type=int, required=True)
    ap.add_argument("--tenon", default="/usr/local/bin/tenon", help="the tenon binary inside a sandbox (the process backend mounts the daemon's there)")
    ap.add_argument("--retries", type=int, default=2, help="retries of an OOM-killed or timed-out action")
    ap.add_argument("--action-timeout", type=float, default=300)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()

    with open(args.trajectory) as f:
        wfs = [json.loads(line) for line in f if line.strip()]
    wfs = [w for w in wfs if w.get("actions")][args.skip: args.skip + args.agents]
    if len(wfs) < args.agents:
        sys.exit("harness: %s has %d workflows with actions from %d, want %d" % (args.trajectory, len(wfs), args.skip, args.agents))
    up = start_upstream(args.upstream_port)
    client = TenonClient(socket_path=args.socket)
    t0 = time.monotonic()
    agents = [Agent(client, w, args, t0) for w in wfs]
    for a in agents:
        a.start()
    for a in agents:
        a.join()
    makespan = time.monotonic() - t0
    up.shutdown()
    done = [a for a in agents if a.done]
    summary = {
        "label": args.label, "agents": len(agents), "completed": len(done),
        "oom_kills": sum(a.ooms for a in agents), "timeouts": sum(a.timeouts for a in agents),
        "actions": sum(a.actions for a in agents), "makespan_s": round(makespan, 2),
        "p50_s": round(statistics.median(a.end for a in done), 2) if done else None,
        "failed": {a.wf["id"]: a.error for a in agents if not a.done},
    }
    print("%s agents %d completed %d oom_kills %d timeouts %d actions %d makespan %.1f s p50 %s s" % (
        args.label or "harness", summary["agents"], summary["completed"], summary["oom_kills"], summary["timeouts"],
        summary["actions"], makespan, summary["p50_s"]))
    for wid, err in summary["failed"].items():
        print("  failed %s: %s" % (wid, err))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()

"""Unit tests of tenon_client against a fake daemon on a unix socket.

Run: cd clients/python && python3 -m unittest test_tenon_client
"""

import http.server
import json
import os
import socketserver
import subprocess
import tempfile
import threading
import unittest

import tenon_client
from tenon_client import TenonClient, TenonEnvironment, TenonOOMKilled, TenonRequestTimeout, TenonTimeout, action_error

OOM = {
    "exit_code": -1, "stdout": "collecting...\n", "stderr": "", "peak_bytes": 812 << 20, "oom": True,
    "failure": "oom", "message": "out of memory: the command was killed by the kernel's OOM killer at a peak of 812.0 MiB",
    "budget_bytes": 1 << 30, "others": [{"agent": "ag-000000000002", "sandbox": "s2", "mem_bytes": 600 << 20, "running": True}],
}
TIMEOUT = {
    "exit_code": -1, "stdout": "", "stderr": "partial\n", "timed_out": True, "failure": "timeout",
    "message": "timed out: the command ran longer than its timeout of 2s",
}
OK = {"exit_code": 3, "stdout": "out\n", "stderr": "err\n"}


class FakeDaemon(http.server.BaseHTTPRequestHandler):
    """Answers create and exec; exec answers by command: oom, timeout, hang
    (no answer until release is set), else OK."""

    requests = []
    release = threading.Event()

    def log_message(self, *args):
        pass

    def _reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        FakeDaemon.requests.append((self.path, req))
        if self.path == "/v1/agents":
            return self._reply(201, {"id": "ag-000000000001"})
        if self.path.endswith("/exec"):
            if req["command"] == "hang":
                FakeDaemon.release.wait(10)
                return  # the client gave up long ago
            return self._reply(200, {"oom": OOM, "timeout": TIMEOUT}.get(req["command"], OK))
        if self.path.endswith("/chat/completions"):
            return self._reply(200, {"choices": []})
        self._reply(404, {"error": "api: no such agent"})

    def do_DELETE(self):
        self.send_response(204)
        self.end_headers()


class DaemonTest(unittest.TestCase):
    """Runs a FakeDaemon on a unix socket; each test gets an environment."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.sock = os.path.join(cls.dir.name, "s.sock")
        cls.srv = socketserver.ThreadingUnixStreamServer(cls.sock, FakeDaemon)
        threading.Thread(target=cls.srv.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.shutdown()
        cls.srv.server_close()
        cls.dir.cleanup()

    def setUp(self):
        FakeDaemon.requests = []
        FakeDaemon.release.clear()
        self.env = TenonEnvironment(client=TenonClient(socket_path=self.sock), timeout=7)

    def tearDown(self):
        FakeDaemon.release.set()
        self.env.cleanup()


class ClientTest(DaemonTest):
    def test_dict_form(self):
        cases = [
            ("ok", OK, 3, "", None),
            ("oom", OOM, -1, "out of memory", "TenonOOMKilled"),
            ("timeout", TIMEOUT, -1, "timed out", "TenonTimeout"),
        ]
        for command, resp, code, info, exc in cases:
            with self.subTest(command=command):
                out = self.env.execute({"command": command})
                self.assertEqual(out["output"], resp["stdout"] + resp["stderr"])
                self.assertEqual(out["returncode"], code)
                self.assertIn(info, out["exception_info"])
                if exc is None:
                    self.assertEqual(out["exception_info"], "")
                    self.assertNotIn("extra", out)
                else:
                    self.assertEqual(out["extra"]["exception_type"], exc)
                    self.assertEqual(out["extra"]["tenon"]["failure"], resp["failure"])

    def test_string_form(self):
        self.assertEqual(self.env.execute("ok"), {"output": "out\nerr\n", "returncode": 3})
        with self.assertRaises(TenonOOMKilled) as cm:
            self.env.execute("oom")
        self.assertIn("812.0 MiB", str(cm.exception))
        self.assertEqual(cm.exception.result["others"][0]["agent"], "ag-000000000002")
        self.assertEqual(cm.exception.output, "collecting...\n")
        # older mini-swe-agent catches subprocess.TimeoutExpired for timeouts
        with self.assertRaises(subprocess.TimeoutExpired) as cm:
            self.env.execute("timeout", timeout=2)
        self.assertIsInstance(cm.exception, TenonTimeout)
        self.assertEqual((cm.exception.cmd, cm.exception.timeout, cm.exception.output), ("timeout", 2, "partial\n"))
        self.assertIn("timed out", str(cm.exception))

    def test_request_carries_command_cwd_timeout(self):
        self.env.execute({"command": "ok"}, cwd="/work", timeout=3)
        path, req = FakeDaemon.requests[-1]
        self.assertEqual(path, "/v1/agents/ag-000000000001/exec")
        self.assertEqual(req, {"command": "ok", "cwd": "/work", "timeout_s": 3.0})
        self.env.execute("ok")
        self.assertEqual(FakeDaemon.requests[-1][1]["timeout_s"], 7.0)

    def test_action_error_from_flags_alone(self):
        # a daemon older than the failure field still sets oom / timed_out
        self.assertIsInstance(action_error({"oom": True}), TenonOOMKilled)
        self.assertIsInstance(action_error({"timed_out": True}), TenonTimeout)
        self.assertIsNone(action_error({"exit_code": 137}))


class RecordingConnection(tenon_client.UnixHTTPConnection):
    """A UnixHTTPConnection that records the timeout of each connection."""

    timeouts = []

    def __init__(self, path, timeout=None):
        super().__init__(path, timeout=timeout)
        RecordingConnection.timeouts.append(timeout)


class TimeoutTest(DaemonTest):
    """The client's request timeouts: finite by default, derived for exec
    from the action's timeout, overridable, and reported when they expire."""

    def setUp(self):
        super().setUp()
        self._orig = tenon_client.UnixHTTPConnection
        tenon_client.UnixHTTPConnection = RecordingConnection
        RecordingConnection.timeouts = []

    def tearDown(self):
        tenon_client.UnixHTTPConnection = self._orig
        super().tearDown()

    def test_defaults_are_finite(self):
        c = TenonClient(socket_path=self.sock)
        self.assertEqual(c.timeout, tenon_client.DEFAULT_TIMEOUT)
        # no action timeout: the daemon's default (600 s) plus the slack
        self.assertEqual(c.exec_timeout(), 600 + 360)
        self.assertEqual(c.exec_timeout(5), 5 + 360)
        env = TenonEnvironment(client=c)
        env.execute("ok")
        env.execute({"command": "ok"}, timeout=30)
        c.chat_completions(env.agent_id, {"model": "m", "messages": []})
        env.cleanup()
        # create, exec (default action timeout), exec (30 s), chat, delete
        self.assertEqual(RecordingConnection.timeouts, [60, 960, 390, 600, 60])

    def test_overrides(self):
        c = TenonClient(socket_path=self.sock, timeout=5, exec_slack=1, model_timeout=9)
        c.exec("ag-1", "ok", timeout=2)
        c.exec("ag-1", "ok", request_timeout=4)
        c.exec("ag-1", "ok", request_timeout=None)  # waits as long as it takes
        c.chat_completions("ag-1", {})
        self.assertEqual(RecordingConnection.timeouts, [3, 4, None, 9])
        self.assertIsNone(TenonClient(socket_path=self.sock, exec_slack=None).exec_timeout(5))

    def test_no_answer_in_time(self):
        c = TenonClient(socket_path=self.sock, exec_slack=0.2)
        env = TenonEnvironment(client=c)
        # the older string form raises what timed-out commands raise
        with self.assertRaises(subprocess.TimeoutExpired) as cm:
            env.execute("hang", timeout=0.1)
        e = cm.exception
        self.assertIsInstance(e, TenonRequestTimeout)
        self.assertIsInstance(e, TimeoutError)
        self.assertEqual((e.cmd, e.method), ("hang", "POST"))
        self.assertAlmostEqual(e.timeout, 0.3)
        self.assertIn("no answer to POST /v1/agents/ag-000000000001/exec within 0.3 s", str(e))
        # the dict form reports it
        out = env.execute({"command": "hang"}, timeout=0.1)
        self.assertEqual(out["returncode"], -1)
        self.assertIn("no answer", out["exception_info"])
        self.assertEqual(out["extra"]["exception_type"], "TenonRequestTimeout")
        FakeDaemon.release.set()
        env.cleanup()


if __name__ == "__main__":
    unittest.main()

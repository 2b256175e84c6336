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
from tenon_client import TenonClient, TenonEnvironment, TenonOOMKilled, TenonTimeout, action_error

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
    """Answers create and exec; exec answers by command: oom, timeout, else OK."""

    requests = []

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
            return self._reply(200, {"oom": OOM, "timeout": TIMEOUT}.get(req["command"], OK))
        self._reply(404, {"error": "api: no such agent"})

    def do_DELETE(self):
        self.send_response(204)
        self.end_headers()


class ClientTest(unittest.TestCase):
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
        self.env = TenonEnvironment(client=TenonClient(socket_path=self.sock), timeout=7)

    def tearDown(self):
        self.env.cleanup()

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


if __name__ == "__main__":
    unittest.main()

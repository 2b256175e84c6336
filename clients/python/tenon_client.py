"""tenon_client: a standard-library client for the tenon daemon's HTTP API.

Connect over the daemon's unix socket (the default, /run/tenon/tenon.sock)
or over TCP with a bearer token:

    from tenon_client import TenonClient, TenonEnvironment
    c = TenonClient()                                   # unix socket
    c = TenonClient(address="127.0.0.1:7878", token="...")  # TCP

TenonEnvironment matches mini-swe-agent's environment interface, so a
harness switches to tenon by changing the line that builds its environment:

    env = TenonEnvironment(image="host")
    env.execute({"command": "ls -la"})  # -> {"output": ..., "returncode": 0, "exception_info": ""}
    env.execute("ls -la")               # older form -> {"output": ..., "returncode": 0}

An action the daemon killed for memory (OOM) or time comes back, in the
dict form, with exception_info saying so in words (and "extra" naming the
exception); in the older string form it raises TenonOOMKilled or
TenonTimeout (a subprocess.TimeoutExpired, which older mini-swe-agent
agents report as a timeout).

No request waits forever. An exec waits for its answer at most the
action's timeout (the daemon's default, 600 s, when none is given) plus
exec_slack (DEFAULT_EXEC_SLACK: the daemon's default queue timeout, 300 s,
for the action's admission, and 60 s for making or restoring its sandbox);
a model call through the proxy waits at most model_timeout (600 s); every
other request at most timeout (60 s). These bound each wait for the
daemon (connecting, each send, each receive), not the transfer of a large
body as a whole. A request that runs past its bound raises
TenonRequestTimeout (a subprocess.TimeoutExpired and a TimeoutError); the
daemon then sees the client hang up and kills the action, keeping the
sandbox. A daemon started with a longer --queue-timeout wants a larger
exec_slack; TenonClient(timeout=None, ...) turns a bound off.
"""

import http.client
import json
import os
import socket
import subprocess
import urllib.parse

DEFAULT_SOCKET = "/run/tenon/tenon.sock"

# Request timeouts, in seconds (see the module documentation).
DEFAULT_TIMEOUT = 60.0
DEFAULT_ACTION_TIMEOUT = 600.0  # the daemon's action timeout when a request gives none
DEFAULT_EXEC_SLACK = 300.0 + 60.0  # the daemon's default --queue-timeout, and sandbox (re)creation
DEFAULT_MODEL_TIMEOUT = 600.0

__all__ = [
    "TenonClient", "TenonEnvironment", "TenonError", "TenonActionError", "TenonOOMKilled", "TenonTimeout",
    "TenonRequestTimeout", "action_error", "DEFAULT_SOCKET", "DEFAULT_TIMEOUT", "DEFAULT_ACTION_TIMEOUT",
    "DEFAULT_EXEC_SLACK", "DEFAULT_MODEL_TIMEOUT",
]


class TenonError(Exception):
    """A non-2xx answer from the daemon."""

    def __init__(self, status, message):
        super().__init__("tenon: %d %s" % (status, message))
        self.status = status
        self.message = message


class TenonActionError(Exception):
    """An action the daemon killed (for memory or time). result is the
    daemon's ExecResponse dict; str() is its message in words."""

    def __init__(self, result):
        Exception.__init__(self, result.get("message") or "tenon: action failed: %s" % result.get("failure", "?"))
        self.result = result
        self.output = _output(result)


class TenonOOMKilled(TenonActionError):
    """The action was OOM-killed; its sandbox was replaced (workspace kept)."""


class TenonTimeout(TenonActionError, subprocess.TimeoutExpired):
    """The action ran past its timeout and was killed; the sandbox is kept.
    It is a subprocess.TimeoutExpired, so harnesses that catch that see it."""

    def __init__(self, result, cmd="", timeout=None):
        TenonActionError.__init__(self, result)
        self.cmd, self.timeout, self.stderr = cmd, timeout, None

    def __str__(self):
        return TenonActionError.__str__(self)


class TenonRequestTimeout(subprocess.TimeoutExpired, TimeoutError):
    """The daemon did not answer a request within its timeout; the client
    gave up and hung up (the daemon then kills the action, keeping the
    sandbox). It is a subprocess.TimeoutExpired, so harnesses that catch
    that for timed-out commands see it, and a TimeoutError."""

    def __init__(self, method, path, timeout, cmd=""):
        TimeoutError.__init__(self, "tenon: no answer to %s %s within %g s" % (method, path, timeout))
        self.method, self.path = method, path
        self.cmd, self.timeout, self.output, self.stderr = cmd, timeout, None, None

    def __str__(self):
        return "tenon: no answer to %s %s within %g s (the client's request timeout; the daemon kills the action)" % (
            self.method, self.path, self.timeout)


def action_error(result, cmd="", timeout=None):
    """The exception for a killed action's ExecResponse dict, or None."""
    failure = result.get("failure") or ("oom" if result.get("oom") else "timeout" if result.get("timed_out") else "")
    if failure == "oom":
        return TenonOOMKilled(result)
    if failure == "timeout":
        return TenonTimeout(result, cmd, timeout)
    return None


_DEFAULT = object()  # "not given", where None means "no timeout"


def _output(result):
    return result.get("stdout", "") + result.get("stderr", "")


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTPConnection over a unix stream socket."""

    def __init__(self, path, timeout=None):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class TenonClient:
    """Typed calls for every endpoint of the tenon API.

    timeout bounds every request but exec and model calls; an exec waits
    at most its action's timeout plus exec_slack; a model call
    model_timeout (seconds; None: no bound). See the module documentation.
    """

    def __init__(self, socket_path=None, address=None, token=None, timeout=DEFAULT_TIMEOUT,
                 exec_slack=DEFAULT_EXEC_SLACK, model_timeout=DEFAULT_MODEL_TIMEOUT):
        self.socket_path = socket_path or os.environ.get("TENON_SOCKET", DEFAULT_SOCKET)
        self.address = address
        self.token = token if token is not None else os.environ.get("TENON_TOKEN", "")
        self.timeout = timeout
        self.exec_slack = exec_slack
        self.model_timeout = model_timeout
        if address and not self.token:
            raise ValueError("a TCP address needs a token (token= or TENON_TOKEN)")

    def exec_timeout(self, timeout=None):
        """The request timeout of an exec whose action timeout is timeout
        (None or 0: the daemon's default): the action's timeout plus
        exec_slack, or None when exec_slack is None."""
        if self.exec_slack is None:
            return None
        return float(timeout or DEFAULT_ACTION_TIMEOUT) + self.exec_slack

    def _conn(self, timeout):
        if self.address:
            host, _, port = self.address.rpartition(":")
            return http.client.HTTPConnection(host, int(port), timeout=timeout)
        return UnixHTTPConnection(self.socket_path, timeout=timeout)

    def _request(self, method, path, body=None, content_type=None, raw=False, timeout=_DEFAULT, cmd=""):
        if timeout is _DEFAULT:
            timeout = self.timeout
        headers = {}
        if content_type:
            headers["Content-Type"] = content_type
        if self.token and self.address:
            headers["Authorization"] = "Bearer " + self.token
        conn = self._conn(timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except socket.timeout:  # TimeoutError
            raise TenonRequestTimeout(method, path, timeout, cmd) from None
        finally:
            conn.close()
        if resp.status // 100 != 2:
            try:
                msg = json.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                msg = data.decode("utf-8", "replace").strip()
            raise TenonError(resp.status, msg)
        if raw:
            return data
        if not data:
            return None
        return json.loads(data)

    def _json(self, method, path, obj, **kw):
        return self._request(method, path, json.dumps(obj).encode(), "application/json", **kw)

    @staticmethod
    def _agent(agent_id):
        return "/v1/agents/" + urllib.parse.quote(agent_id, safe="")

    def create_agent(self, image="", files=None, env=None, labels=None, backend="", tar=None):
        """Create a logical agent; returns its id. tar is bytes of a tar archive."""
        req = {}
        if backend:
            req["backend"] = backend
        if image:
            req["image"] = image
        if files:
            req["files"] = files
        if env:
            req["env"] = ["%s=%s" % kv for kv in env.items()] if isinstance(env, dict) else list(env)
        if labels:
            req["labels"] = labels
        if tar:
            import base64
            req["tar"] = base64.b64encode(tar).decode()
        return self._json("POST", "/v1/agents", req)["id"]

    def list_agents(self):
        return self._request("GET", "/v1/agents")

    def get_agent(self, agent_id):
        return self._request("GET", self._agent(agent_id))

    def delete_agent(self, agent_id):
        self._request("DELETE", self._agent(agent_id))

    def exec(self, agent_id, command, cwd="", env=None, timeout=None, cls="", mem_hint_bytes=0, request_timeout=_DEFAULT):
        """Run a shell command in the agent's sandbox; returns the ExecResponse dict.

        timeout is the action's (the daemon kills it past that);
        request_timeout how long the client waits for the answer (default
        exec_timeout(timeout); None: forever)."""
        if request_timeout is _DEFAULT:
            request_timeout = self.exec_timeout(timeout)
        req = {"command": command}
        if cwd:
            req["cwd"] = cwd
        if env:
            req["env"] = ["%s=%s" % kv for kv in env.items()] if isinstance(env, dict) else list(env)
        if timeout:
            req["timeout_s"] = float(timeout)
        if cls:
            req["class"] = cls
        if mem_hint_bytes:
            req["mem_hint_bytes"] = int(mem_hint_bytes)
        return self._json("POST", self._agent(agent_id) + "/exec", req, timeout=request_timeout, cmd=command)

    def wait(self, agent_id, begin):
        """Announce the begin (True) or end (False) of a model wait."""
        self._json("POST", self._agent(agent_id) + "/wait", {"state": "begin" if begin else "end"})

    def _file(self, agent_id, path):
        return self._agent(agent_id) + "/files/" + urllib.parse.quote(path, safe="").replace(".", "%2E")

    def put_file(self, agent_id, path, data):
        if isinstance(data, str):
            data = data.encode()
        self._request("PUT", self._file(agent_id, path), data, "application/octet-stream")

    def get_file(self, agent_id, path):
        return self._request("GET", self._file(agent_id, path), raw=True)

    def status(self):
        return self._request("GET", "/v1/status")

    def metrics(self):
        return self._request("GET", "/metrics", raw=True).decode()

    def chat_completions(self, agent_id, body):
        """Send an OpenAI chat-completions body through the agent's model proxy."""
        return self._json("POST", self._agent(agent_id) + "/openai/v1/chat/completions", body, timeout=self.model_timeout)


class TenonEnvironment:
    """mini-swe-agent compatible environment backed by one tenon agent.

    Both forms of mini-swe-agent's execute are supported:

    execute({"command": str}, cwd="", *, timeout=None)
        -> {"output": str, "returncode": int, "exception_info": str[, "extra": {...}]}
        A killed action (OOM, timeout) returns returncode -1 and says why in
        exception_info; extra holds exception_type, exception and the
        daemon's response.
    execute(command, cwd="", *, timeout=None) -> {"output": str, "returncode": int}
        A killed action raises TenonOOMKilled or TenonTimeout.

    timeout is the action's; the client waits for the daemon's answer at
    most that plus the client's exec_slack (TenonClient.exec_timeout). A
    daemon that does not answer in time is, in the dict form, returncode
    -1 with exception_info saying so; in the string form it raises
    TenonRequestTimeout.
    """

    def __init__(self, image="", cwd="", env=None, timeout=None, files=None, client=None, **client_kwargs):
        self.client = client or TenonClient(**client_kwargs)
        self.cwd = cwd
        self.timeout = timeout
        self.agent_id = self.client.create_agent(image=image, env=env, files=files)

    def execute(self, action, cwd="", *, timeout=None):
        as_dict = isinstance(action, dict)
        command = action.get("command", "") if as_dict else action
        timeout = timeout or self.timeout
        try:
            res = self.client.exec(self.agent_id, command, cwd=cwd or self.cwd, timeout=timeout)
        except TenonRequestTimeout as e:
            if not as_dict:
                raise
            return {"output": "", "returncode": -1,
                    "exception_info": "An error occurred while executing the command: %s" % e,
                    "extra": {"exception_type": type(e).__name__, "exception": str(e)}}
        err = action_error(res, command, timeout)
        if not as_dict:
            if err is not None:
                raise err
            return {"output": _output(res), "returncode": res["exit_code"]}
        out = {"output": _output(res), "returncode": res["exit_code"], "exception_info": ""}
        if err is not None:
            out["returncode"] = -1
            out["exception_info"] = "An error occurred while executing the command: %s" % err
            out["extra"] = {"exception_type": type(err).__name__, "exception": str(err), "tenon": res}
        return out

    def get_template_vars(self):
        return {"agent_id": self.agent_id}

    def cleanup(self):
        if self.agent_id:
            try:
                self.client.delete_agent(self.agent_id)
            finally:
                self.agent_id = None

    def __del__(self):
        try:
            self.cleanup()
        except Exception:
            pass

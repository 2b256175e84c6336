#!/usr/bin/env python3
"""Drive a tenon daemon from Python: create an agent, run actions, move files.

Usage: python3 example.py [SOCKET]   (default $TENON_SOCKET or /run/tenon/tenon.sock)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))

from tenon_client import TenonClient, TenonEnvironment, TenonError  # noqa: E402


def main():
    sock = sys.argv[1] if len(sys.argv) > 1 else None
    client = TenonClient(socket_path=sock)

    # The mini-swe-agent style environment: one line in a harness.
    env = TenonEnvironment(client=client, files={"hello.txt": "hello from python\n"})
    out = env.execute("true")
    assert out["returncode"] == 0, out
    out = env.execute("exit 3")
    assert out["returncode"] == 3, out
    out = env.execute({"command": "exit 3"})  # newer mini-swe-agent form
    assert out == {"output": "", "returncode": 3, "exception_info": ""}, out
    print("execute:", out)

    client.put_file(env.agent_id, "data/input.txt", "42")
    assert client.get_file(env.agent_id, "data/input.txt") == b"42"
    assert client.get_file(env.agent_id, "hello.txt") == b"hello from python\n"
    try:
        client.get_file(env.agent_id, "../etc/passwd")
        raise SystemExit("traversal was not refused")
    except TenonError as e:
        assert e.status in (400, 404), e

    client.wait(env.agent_id, True)
    client.wait(env.agent_id, False)
    st = client.status()
    print("status: policy=%s pressure=%s agents=%d" % (st["policy"], st["pressure"], len(st["agents"])))
    assert any(a["id"] == env.agent_id for a in st["agents"])
    assert "tenon_action_duration_seconds" in client.metrics()

    env.cleanup()
    assert all(a["id"] != env.agent_id for a in client.list_agents())
    print("OK")


if __name__ == "__main__":
    main()

"""`tdm mcp` driven by the official MCP Python SDK client (PyPI `mcp`), over stdio and Streamable
HTTP, in its default `auto` mode (it probes `server/discover` and speaks the stateless revision
2026-07-28) and in `legacy` mode (the `initialize` handshake, 2025-11-25): list the tools (the
declared schemas as inputSchema and outputSchema), call one, see a refused call and a schema
refusal come back as tool errors, cancel a call (the server ends it `cancelled`, not at its
deadline), hear of a revoke in another shell (`notifications/tools/list_changed`: on a
`subscriptions/listen` stream in 2026-07-28, on the session in 2025-11-25), set the log level;
then record a call with `--record-dir` and replay it with `tdm replay`. Run by `make mcp-python`
(part of `make test`) as: python mcp_client.py TDM REPO; it builds its own workspace (echo and a
spinning plugin approved, a third only installed) in a temporary folder. Exits non-zero on any
mismatch.
"""

import asyncio
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

# The SDK warns that logging/setLevel and ping are deprecated by the 2026-07-28 revision; this
# server speaks the handshake revisions, where both are current.
warnings.filterwarnings("ignore", message=".*(deprecated|removed) as of 2026-07-28.*")

SPIN = """(module (memory (export "memory") 1)
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (loop (br 0)) i32.const 0))"""


# echo's `greet` declares its params and its result (a TOML table each).
SCHEMAS = (
    'params = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }\n'
    'result = { type = "object", required = ["name"] }\n'
)
PARAMS_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def tdm_json(tdm: str, ws: str, *args: str) -> dict:
    """`tdm ARGS --json` in `ws`, its JSON."""
    out = subprocess.run([tdm, *args, "--json"], capture_output=True, env=dict(os.environ, TDM_WORKSPACE=ws))
    return json.loads(out.stdout)


def last_call(tdm: str, ws: str, plugin: str) -> dict:
    """The workspace's record of `plugin`'s last call."""
    status = tdm_json(tdm, ws, "workspace", "status")
    return next(p for p in status["plugins"] if p["id"] == plugin).get("lastCall") or {}


def workspace(tdm: str, repo: str, root: str) -> str:
    """A workspace under `root` with echo and spin approved and `pending` only installed."""
    ws = os.path.join(root, "ws")
    echo = open(os.path.join(repo, "examples/echo/echo.wat"), encoding="utf-8").read()
    plugins = [
        ("echo", echo, "greet", "Returns its params.", True),
        ("spin", SPIN, "spin", "Never ends.", True),
        ("pending", echo, "greet", "Not approved.", False),
    ]
    for plugin, module, intent, description, approved in plugins:
        package = os.path.join(root, plugin + "-pkg")
        os.makedirs(os.path.join(package, "dist"))
        with open(os.path.join(package, "dist/plugin.wat"), "w", encoding="utf-8") as f:
            f.write(module)
        digest = hashlib.sha256(module.encode()).hexdigest()
        with open(os.path.join(package, "plugin.toml"), "w", encoding="utf-8") as f:
            f.write(
                f'id = "{plugin}"\nversion = "1.0.0"\nname = "{plugin}"\ndescription = "test plugin"\n'
                f'module = "dist/plugin.wat"\nsha256 = "{digest}"\npermissions = []\n\n'
                f'[[intents]]\nname = "{intent}"\ndescription = "{description}"\n'
                + (SCHEMAS if plugin == "echo" else "")
            )
        env = dict(os.environ, TDM_WORKSPACE=ws)
        subprocess.run([tdm, "install", "--allow-unsigned", package], check=True, capture_output=True, env=env)
        if approved:
            subprocess.run([tdm, "approve", plugin, "--yes"], check=True, capture_output=True, env=env)
    return ws


async def session(server, mode: str, tdm: str, ws: str) -> None:
    """One session with `server` (stdio parameters or an HTTP URL) in `mode`."""
    changes: list[str] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append("tools")

    async with Client(server, mode=mode, read_timeout_seconds=30, message_handler=on_message) as client:
        version = client.protocol_version
        # `auto` probes server/discover and takes the stateless revision; `legacy` handshakes.
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert version == expected, f"{mode}: negotiated {version}"
        tools = await client.list_tools()
        names = sorted(tool.name for tool in tools.tools)
        assert names == ["echo__greet", "spin__spin"], f"{mode}: {names}"
        greet = next(tool for tool in tools.tools if tool.name == "echo__greet")
        assert greet.description == "Returns its params.", greet
        assert greet.input_schema == PARAMS_SCHEMA, greet.input_schema
        assert greet.output_schema == {"type": "object", "required": ["name"]}, greet.output_schema

        result = await client.call_tool("echo__greet", {"name": "Ada"})
        assert not result.is_error, result
        assert result.structured_content == {"name": "Ada"}, result
        assert result.content[0].type == "text", result

        refused = await client.call_tool("pending__greet", {})
        assert refused.is_error, refused
        assert refused.structured_content["blockedReason"] == "not_approved", refused

        mismatched = await client.call_tool("echo__greet", {"name": 7})
        assert mismatched.is_error, mismatched
        assert mismatched.structured_content["blockedReason"] == "invalid_params", mismatched
        assert "/name" in mismatched.structured_content["message"], mismatched

        # A call the client gives up on is cancelled on the server: `cancelled`, long before
        # spin's 5 s deadline would end it as `deadline_exceeded`.
        # (Over HTTP at 2026-07-28 the client cancels by closing the request's stream.)
        before = last_call(tdm, ws, "spin")
        with anyio.move_on_after(0.5):
            await client.call_tool("spin__spin", {})
        deadline = time.monotonic() + 4
        while (now := last_call(tdm, ws, "spin")) == before or now.get("blockedReason") != "cancelled":
            assert time.monotonic() < deadline, f"{mode}: spin was not cancelled: {now}"
            await anyio.sleep(0.05)

        # A revoke in another shell is heard within a second or so.
        env = dict(os.environ, TDM_WORKSPACE=ws)
        if mode == "auto":
            async with client.listen(tools_list_changed=True) as subscription:
                subprocess.run([tdm, "revoke", "spin"], check=True, capture_output=True, env=env)
                with anyio.fail_after(5):
                    event = await subscription.__anext__()
                assert "ToolsListChanged" in type(event).__name__, event
        else:
            subprocess.run([tdm, "revoke", "spin"], check=True, capture_output=True, env=env)
            with anyio.fail_after(5):
                while not changes:
                    await anyio.sleep(0.05)
        subprocess.run([tdm, "approve", "spin", "--yes"], check=True, capture_output=True, env=env)
        listed = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert listed == ["echo__greet", "spin__spin"], listed

        if mode == "legacy":
            # Both are handshake-era methods (2026-07-28 puts the log level in each request).
            await client.set_logging_level("debug")
            await client.send_ping()
        where = "http" if isinstance(server, str) else "stdio"
        print(f"{where} {mode}: connected at {version}, {len(names)} tools; call, refusals, cancel, list change as expected")


async def recorded(tdm: str, ws: str, traces: str) -> None:
    """A call recorded by `tdm mcp --record-dir`, replayed bit for bit by `tdm replay`."""
    server = StdioServerParameters(command=tdm, args=["mcp", "--record-dir", traces], env={"TDM_WORKSPACE": ws})
    async with Client(server, read_timeout_seconds=30) as client:
        result = await client.call_tool("echo__greet", {"name": "Grace"})
        assert not result.is_error, result
    [trace] = glob.glob(os.path.join(traces, "*echo__greet.trace"))
    replay = tdm_json(tdm, ws, "replay", trace)
    assert replay.get("identical") is True and replay.get("intents") == 1, replay
    print(f"stdio: the recorded call replayed identical (digest {replay['digest'][:16]})")


def http_server(tdm: str, workspace: str) -> tuple[subprocess.Popen, str]:
    """`tdm mcp --http` on a free loopback port; the process and its endpoint's URL."""
    process = subprocess.Popen(
        [tdm, "mcp", "--http", "127.0.0.1:0"],
        env=dict(os.environ, TDM_WORKSPACE=workspace),
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stderr.readline()
    url = line.split(" at ")[-1].strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line
    return process, url


def main() -> None:
    tdm, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as root:
        ws = workspace(tdm, repo, root)
        stdio = StdioServerParameters(command=tdm, args=["mcp"], env={"TDM_WORKSPACE": ws})
        for mode in ("auto", "legacy"):
            asyncio.run(session(stdio, mode, tdm, ws))
        process, url = http_server(tdm, ws)
        try:
            for mode in ("auto", "legacy"):
                asyncio.run(session(url, mode, tdm, ws))
        finally:
            process.terminate()
            code = process.wait(timeout=30)
        assert code == 0, f"SIGTERM should end tdm mcp --http with 0, not {code}"
        asyncio.run(recorded(tdm, ws, os.path.join(root, "traces")))


if __name__ == "__main__":
    main()

"""`tdm mcp` driven by the official MCP Python SDK client (PyPI `mcp`), over stdio and Streamable
HTTP, in its
default `auto` mode (it probes `server/discover` and speaks the stateless revision
2026-07-28) and in `legacy` mode (the `initialize` handshake, 2025-11-25): list the tools, call one, see a refused call and a schema
refusal come back as tool errors, and see the client's log level set. Run by `make mcp-python`
(part of `make test`) as: python mcp_client.py TDM REPO; it builds its own workspace (echo and a
spinning plugin approved, a third only installed) in a temporary folder. Exits non-zero on any
mismatch.
"""

import asyncio
import hashlib
import os
import subprocess
import sys
import tempfile
import warnings

from mcp import Client, StdioServerParameters

# The SDK warns that logging/setLevel and ping are deprecated by the 2026-07-28 revision; this
# server speaks the handshake revisions, where both are current.
warnings.filterwarnings("ignore", message=".*(deprecated|removed) as of 2026-07-28.*")

SPIN = """(module (memory (export "memory") 1)
    (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
    (func (export "tdm_free") (param i32 i32))
    (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) (loop (br 0)) i32.const 0))"""


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
            )
        env = dict(os.environ, TDM_WORKSPACE=ws)
        subprocess.run([tdm, "install", package], check=True, capture_output=True, env=env)
        if approved:
            subprocess.run([tdm, "approve", plugin, "--yes"], check=True, capture_output=True, env=env)
    return ws


async def session(server, mode: str) -> None:
    """One session with `server` (stdio parameters or an HTTP URL) in `mode`."""
    async with Client(server, mode=mode, read_timeout_seconds=30) as client:
        version = client.protocol_version
        # `auto` probes server/discover and takes the stateless revision; `legacy` handshakes.
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert version == expected, f"{mode}: negotiated {version}"
        tools = await client.list_tools()
        names = sorted(tool.name for tool in tools.tools)
        assert names == ["echo__greet", "spin__spin"], f"{mode}: {names}"
        greet = next(tool for tool in tools.tools if tool.name == "echo__greet")
        assert greet.description == "Returns its params.", greet
        assert greet.input_schema == {"type": "object"}, greet.input_schema

        result = await client.call_tool("echo__greet", {"name": "Ada"})
        assert not result.is_error, result
        assert result.structured_content == {"name": "Ada"}, result
        assert result.content[0].type == "text", result

        refused = await client.call_tool("pending__greet", {})
        assert refused.is_error, refused
        assert refused.structured_content["blockedReason"] == "not_approved", refused

        if mode == "legacy":
            # Both are handshake-era methods (2026-07-28 puts the log level in each request).
            await client.set_logging_level("debug")
            await client.send_ping()
        where = "http" if isinstance(server, str) else "stdio"
        print(f"{where} {mode}: connected at {version}, {len(names)} tools, call and refusal as expected")


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
            asyncio.run(session(stdio, mode))
        process, url = http_server(tdm, ws)
        try:
            for mode in ("auto", "legacy"):
                asyncio.run(session(url, mode))
        finally:
            process.terminate()
            code = process.wait(timeout=30)
        assert code == 0, f"SIGTERM should end tdm mcp --http with 0, not {code}"


if __name__ == "__main__":
    main()

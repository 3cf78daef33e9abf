# `tdm mcp` driven by the official MCP Python SDK client (PyPI `mcp`, pinned), over stdio and
# Streamable HTTP, in its `auto` and `legacy` modes (std-host/tdm/tests/python/mcp_client.py);
# part of `make test`. The client lives in a virtual environment under target/ that this target
# creates.
.PHONY: mcp-python

MCP_VENV ?= target/mcp-venv
MCP_PYTHON_SDK ?= mcp==2.3.0
# The debug build `make test` already has (a release build would add minutes to CI for nothing
# these checks measure).
MCP_TDM := target/debug/tdm

$(MCP_VENV)/.installed:
	@python3 -m venv $(MCP_VENV) 2>/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv && python3 -m venv $(MCP_VENV))
	$(MCP_VENV)/bin/pip install -q '$(MCP_PYTHON_SDK)'
	@touch $@

mcp-python: $(MCP_VENV)/.installed
	$(CARGO) build -q -p tdm
	$(MCP_VENV)/bin/python std-host/tdm/tests/python/mcp_client.py $(MCP_TDM) $(CURDIR)

test: mcp-python

# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned) against
# `tdm mcp --http`, with the scenarios a tools-only server cannot pass listed, each with why, in
# conformance/mcp-baseline.yml. The suite needs Node 22; npm's node-linux-* package brings it
# into target/ (the machine's node is left alone). About 5 s, so it is part of `make test`.
.PHONY: mcp-conformance
MCP_CONFORMANCE_DIR ?= target/mcp-conformance
MCP_CONFORMANCE ?= @modelcontextprotocol/conformance@0.1.16
MCP_NODE ?= node-linux-$(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x64)@22

$(MCP_CONFORMANCE_DIR)/.installed:
	@command -v npm >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y npm)
	mkdir -p $(MCP_CONFORMANCE_DIR)
	cd $(MCP_CONFORMANCE_DIR) && npm install --no-audit --no-fund --silent '$(MCP_CONFORMANCE)' '$(MCP_NODE)'
	@touch $@

mcp-conformance: $(MCP_CONFORMANCE_DIR)/.installed
	$(CARGO) build -q -p tdm
	bash mk/mcp-conformance.sh $(MCP_TDM) $(MCP_CONFORMANCE_DIR)

test: mcp-conformance

# `tdm mcp` driven by the official MCP Python SDK client (PyPI `mcp`, pinned), over stdio, in
# its `auto` and `legacy` modes (std-host/tdm/tests/python/mcp_client.py); part of `make test`.
# The client lives in a virtual environment under target/ that this target creates.
.PHONY: mcp-python

MCP_VENV ?= target/mcp-venv
MCP_PYTHON_SDK ?= mcp==2.3.0

$(MCP_VENV)/.installed:
	@python3 -m venv $(MCP_VENV) 2>/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv && python3 -m venv $(MCP_VENV))
	$(MCP_VENV)/bin/pip install -q '$(MCP_PYTHON_SDK)'
	@touch $@

mcp-python: build $(MCP_VENV)/.installed
	$(MCP_VENV)/bin/python std-host/tdm/tests/python/mcp_client.py $(TDM) $(CURDIR)

test: mcp-python

"""The MCP front end: one turn's tools offered over the Model Context Protocol (stdio or streamable HTTP).

It sits on the top floor beside ``api`` and ``cli``: it takes a turn bound by the registry and runs each
call through the host's :func:`skillhouse.host.calls.run_call`, as ``POST /v1/turns/{id}/calls`` does.
"""

"""Python apps compiled into WebAssembly components (staged top-level by :mod:`skillhouse.host.wasm_build`)."""

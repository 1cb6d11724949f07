"""Git hook shims: template, install/uninstall, the queue and its drainer."""

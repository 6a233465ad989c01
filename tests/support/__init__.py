"""What the tests share: the one project driver (project.py), the loopback servers (loopback.py),
the record builders (records.py, view_builders.py) and the real components a test needs
(components.py decides skip-or-fail; docker.py, browser.py, ray_cluster.py).

Tests import them as `tests.support.<module>`: pyproject's pytest `pythonpath = ["."]` puts the
checkout's root on sys.path, so no test edits sys.path itself.
"""

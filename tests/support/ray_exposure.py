"""What a test cluster (ray_cluster.py) shows to a caller beyond loopback, looked at from inside
the network namespace it runs in (`python -m tests.support.ray_exposure`, run under
`components.outward_namespace`, where the machine has an outward address as a laptop has).

It starts a two-node cluster, joins it with a driver holding the token that keeps an actor on
each node (so the workers' own servers listen too), and prints one JSON object: every socket the
cluster's processes and the driver listen on, what each of the Ray runtime-env agents' HTTP
ports answers without the token, and how a driver without the token fares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from tests.support.ray_cluster import listening_sockets, processes_naming, start_cluster

#: A driver that joins, puts a worker on each node (`node2` is the second node's resource), says
#: so, and holds them until killed.
DRIVER = """
import sys, time, ray
ray.init(address=sys.argv[1], log_to_driver=False)
@ray.remote(num_cpus=0)
class Held:
    def ready(self):
        return 1
held = [Held.remote(), Held.options(resources={"node2": 0.01}).remote()]
ray.get([h.ready.remote() for h in held])
print("ready", flush=True)
time.sleep(120)
"""

JOIN = "import sys, ray; ray.init(address=sys.argv[1], log_to_driver=False); print('joined')"


def _status_without_token(address: str, port: int) -> int | str:
    """The HTTP status a request without the token gets (a runtime-env agent's own route)."""
    url = f"http://{address}:{port}/get_or_create_runtime_env"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=b""), timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)
    except OSError as exc:
        return type(exc).__name__


def main() -> None:
    cluster = start_cluster(nodes=2)
    driver = None
    try:
        driver = subprocess.Popen([sys.executable, "-c", DRIVER, cluster.address], env=cluster.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert driver.stdout is not None
        ready = driver.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        sockets = listening_sockets(processes_naming(str(cluster.temp_dir), [driver.pid]), os.getpid())
        agents = {f"{address}:{port}": _status_without_token(address, port)
                  for name, address, port in sockets if name.startswith("ray::RuntimeEnv")}
        with tempfile.TemporaryDirectory() as home:  # no ~/.ray/auth_token of the user's either
            stranger = {key: value for key, value in cluster.env.items() if not key.startswith("RAY_AUTH")}
            stranger.update({"HOME": home, "RAY_NUM_REDIS_GET_RETRIES": "1"})
            joined = subprocess.run([sys.executable, "-c", JOIN, cluster.address], env=stranger,
                                    capture_output=True, text=True, timeout=120)
        print(json.dumps({
            "ready": ready,
            "listening": sorted(sockets),
            "agents_without_token": agents,
            "stranger": {"returncode": joined.returncode, "stdout": joined.stdout, "stderr": joined.stderr[-2000:]},
        }))
    finally:
        if driver is not None:
            driver.kill()
            driver.wait()
        cluster.stop()


if __name__ == "__main__":
    main()

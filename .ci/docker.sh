#!/usr/bin/env bash
# Docker for the sandbox tests (sandbox.md, "Tests and CI"). Sourced by .ci/run, or run directly.
#
#   niceeval_docker_up       as root with no daemon answering: install docker.io and busybox-static
#                            if missing, start dockerd in the background, wait for `docker info`.
#   niceeval_test_images     build the test images locally FROM scratch — never pulled:
#                              niceeval-test/busybox  busybox-static as /bin/sh and its applets
#                              niceeval-test/python   the same plus the host's Python (binary, shared
#                                                     libraries found by ldd, stdlib, pytest)
#                              niceeval-example/coding-agent  the python image plus
#                                                     examples/coding_agent/_agent.py as coding-agent
#
# Outside CI nothing here is required: tests that need Docker skip with the reason.

NICEEVAL_SHELL_IMAGE="${NICEEVAL_TEST_SHELL_IMAGE:-niceeval-test/busybox}"
NICEEVAL_PYTHON_IMAGE="${NICEEVAL_TEST_PYTHON_IMAGE:-niceeval-test/python}"
NICEEVAL_EXAMPLE_IMAGE="${NICEEVAL_EXAMPLE_IMAGE:-niceeval-example/coding-agent}"
NICEEVAL_REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NICEEVAL_DOCKERD_LOG="${NICEEVAL_DOCKERD_LOG:-/tmp/niceeval-dockerd.log}"
NICEEVAL_DOCKERD_PIDFILE="${NICEEVAL_DOCKERD_PIDFILE:-/tmp/niceeval-dockerd.pid}"

niceeval_docker_up() {
  if docker info >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker.sh: no Docker daemon answers and this is not root: Docker tests will not run" >&2
    return 1
  fi
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  [ -x /bin/busybox ] || missing+=(busybox-static)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "docker.sh: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || {
        echo "docker.sh: could not install ${missing[*]}" >&2
        return 1
      }
  fi
  echo "docker.sh: starting dockerd (log: $NICEEVAL_DOCKERD_LOG)" >&2
  nohup dockerd >"$NICEEVAL_DOCKERD_LOG" 2>&1 &
  echo $! >"$NICEEVAL_DOCKERD_PIDFILE"
  local waited=0
  until docker info >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$NICEEVAL_DOCKERD_PIDFILE")" 2>/dev/null; then
      echo "docker.sh: dockerd exited; its log:" >&2
      tail -n 20 "$NICEEVAL_DOCKERD_LOG" >&2
      return 1
    fi
    if [ "$waited" -ge 60 ]; then
      echo "docker.sh: dockerd did not answer within 60 s" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
}

# A root filesystem with busybox as /bin/sh and every applet linked beside it.
_niceeval_busybox_root() {
  local root="$1"
  mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/tmp" "$root/workspace" "$root/etc"
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  local applet
  for applet in $("$root/bin/busybox" --list-full); do  # at their usual paths: /usr/bin/env for shebangs
    [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
  echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
}

_niceeval_build() {
  local tag="$1" context="$2"
  printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nWORKDIR /workspace\nCMD ["/bin/sh"]\n' \
    >"$context/Dockerfile"
  if ! docker build -q -t "$tag" "$context" >"$context/build.log" 2>&1; then
    echo "docker.sh: building $tag failed:" >&2
    tail -n 20 "$context/build.log" >&2
    return 1
  fi
}

# Copy a file, links dereferenced, to the same absolute path under $root (the loader looks there).
_niceeval_copy_path() {
  local root="$1" path="$2"
  mkdir -p "$root$(dirname "$path")"
  cp -L "$path" "$root$path"
}

_niceeval_python_root() {
  local root="$1" python="$2"
  local prefix version stdlib
  prefix="$("$python" -c 'import sys; print(sys.base_prefix)')"
  version="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
  stdlib="$prefix/lib/python$version"
  local binary
  binary="$(readlink -f "$("$python" -c 'import sys; print(sys.executable)')")"
  _niceeval_copy_path "$root" "$binary"
  mkdir -p "$root/usr/local/bin"
  ln -sf "$binary" "$root/usr/local/bin/python"
  ln -sf "$binary" "$root/usr/local/bin/python3"
  mkdir -p "$root$stdlib"
  (cd "$stdlib" && tar -cf - --exclude=./site-packages --exclude=./test --exclude=./idlelib \
      --exclude=./tkinter --exclude=./turtledemo --exclude=./ensurepip --exclude=./lib2to3 \
      --exclude='./config-*' --exclude=__pycache__ .) | (cd "$root$stdlib" && tar -xf -)
  local site="$stdlib/site-packages"
  mkdir -p "$root$site"
  local package
  for package in pytest _pytest pluggy iniconfig packaging pygments py.py; do
    [ -e "$site/$package" ] && cp -a "$site/$package" "$root$site/"
  done
  cp -a "$site"/pytest-*.dist-info "$site"/pluggy-*.dist-info "$site"/iniconfig-*.dist-info \
    "$site"/packaging-*.dist-info "$site"/pygments-*.dist-info "$root$site/" 2>/dev/null || true
  # The shared libraries of the interpreter and of its extension modules.
  local lib
  for lib in $( { ldd "$binary"; find "$stdlib/lib-dynload" -name '*.so' -exec ldd {} \; ; } 2>/dev/null |
      awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }' | sort -u); do
    _niceeval_copy_path "$root" "$lib"
  done
}

niceeval_test_images() {
  local python="${1:-$(command -v python3)}"
  local context
  context="$(mktemp -d /tmp/niceeval-images.XXXXXX)"
  # shellcheck disable=SC2064
  trap "rm -rf '$context'" RETURN
  if ! docker image inspect "$NICEEVAL_SHELL_IMAGE" >/dev/null 2>&1; then
    _niceeval_busybox_root "$context/shell/rootfs"
    _niceeval_build "$NICEEVAL_SHELL_IMAGE" "$context/shell" || return 1
    echo "docker.sh: built $NICEEVAL_SHELL_IMAGE" >&2
  fi
  if ! docker image inspect "$NICEEVAL_PYTHON_IMAGE" >/dev/null 2>&1; then
    _niceeval_busybox_root "$context/python/rootfs"
    _niceeval_python_root "$context/python/rootfs" "$(readlink -f "$python")"
    _niceeval_build "$NICEEVAL_PYTHON_IMAGE" "$context/python" || return 1
    docker run --rm --network none "$NICEEVAL_PYTHON_IMAGE" python -c 'import pytest, sqlite3, ssl' || {
      echo "docker.sh: the python image does not run python; removed it" >&2
      docker image rm -f "$NICEEVAL_PYTHON_IMAGE" >/dev/null
      return 1
    }
    echo "docker.sh: built $NICEEVAL_PYTHON_IMAGE" >&2
  fi
  # The example's agent changes with the repository: always rebuilt (a second, cached, build is quick).
  mkdir -p "$context/example"
  cp "$NICEEVAL_REPO_DIR/examples/coding_agent/_agent.py" "$context/example/coding-agent"
  chmod 755 "$context/example/coding-agent"
  printf 'FROM %s\nCOPY coding-agent /usr/local/bin/coding-agent\n' "$NICEEVAL_PYTHON_IMAGE" \
    >"$context/example/Dockerfile"
  if ! docker build -q -t "$NICEEVAL_EXAMPLE_IMAGE" "$context/example" >"$context/example.log" 2>&1; then
    echo "docker.sh: building $NICEEVAL_EXAMPLE_IMAGE failed:" >&2
    tail -n 20 "$context/example.log" >&2
    return 1
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  niceeval_docker_up
  niceeval_test_images "$@"
fi

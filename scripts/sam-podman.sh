#!/usr/bin/env bash
# sam-podman.sh - run `sam local invoke` on rootful podman instead of a Docker engine.
#
#   scripts/sam-podman.sh setup          install podman/runc/busybox-static, write containers.conf,
#                                        build the local Lambda image SAM looks for (idempotent)
#   scripts/sam-podman.sh start          start the podman API service (Docker-compatible socket),
#                                        let containers reach the host's loopback; prints exports
#   scripts/sam-podman.sh stop           stop the service started by `start`
#   scripts/sam-podman.sh env            print the export lines (DOCKER_HOST, CONTAINERS_CONF, ...)
#   scripts/sam-podman.sh x86-template [SRC] [OUT]
#                                        write a copy of the SAM template with every function
#                                        switched to x86_64 (for local builds/invokes only)
#
# Typical use (as root, non-interactive):
#   scripts/sam-podman.sh setup
#   eval "$(scripts/sam-podman.sh start)"
#   sam local invoke Fn -e event.json --skip-pull-image --env-vars env.json
#
# Why it looks like this:
# - No registry is reachable, so SAM can neither pull public.ecr.aws/lambda/provided:al2023-x86_64
#   nor build its "rapid" image from it. We pre-build, under the exact name SAM 1.170 looks for
#   (samcli/local/docker/lambda_image.py: "<repo>:<al2023>-rapid-<arch>"), a tiny image made of
#   busybox-static + the host's glibc + SAM's own Runtime Interface Emulator. Always pass
#   --skip-pull-image to sam local commands.
# - Only x86_64 can run here (no binfmt/qemu): arm64 functions must be built for x86_64 for local
#   runs (see `x86-template`).
# - crun refuses this machine's hybrid cgroup layout, hence runc; podman's default ulimits exceed
#   the hard limits here, hence default_ulimits.
# - Reaching the host's 127.0.0.1 from a function: SAM 1.170 ignores `--docker-network host`
#   (container.py only *connects* named networks; it never sets network_mode), so containers stay
#   on podman's bridge. `start` therefore DNATs TCP sent to the bridge gateway (which podman puts
#   in every container's /etc/hosts as host.containers.internal) to the host's 127.0.0.1, same port.
#   Inside a function use e.g. http://host.containers.internal:8000 for a server listening on the
#   host's 127.0.0.1:8000.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
TOOLS_DIR="${SAM_PODMAN_DIR:-$REPO_ROOT/.tools/podman}"
CONF="$TOOLS_DIR/containers.conf"
SOCK="$TOOLS_DIR/podman.sock"
PIDFILE="$TOOLS_DIR/service.pid"
LOGFILE="$TOOLS_DIR/service.log"

IMAGE_REPO="public.ecr.aws/lambda/provided"
BASE_IMAGE="$IMAGE_REPO:al2023-x86_64"        # what SAM would pull and build FROM
RAPID_IMAGE="$IMAGE_REPO:al2023-rapid-x86_64"  # what SAM actually runs (provided.al2023, x86_64)
LABEL_BASE="io.seatclaim.sam-podman.base-sha256"
LABEL_RIE="io.seatclaim.sam-podman.rie-sha256"
NAT_COMMENT="sam-podman-host-loopback"
APT_PACKAGES=(podman runc busybox-static iptables)
# libpthread/libdl/librt/libutil: cargo-lambda targets glibc 2.26 for x86_64, so its binaries still
# NEED these (empty stubs since glibc 2.34, but the loader insists on finding them).
GLIBC_LIBS=(libc.so.6 libm.so.6 libgcc_s.so.1 ld-linux-x86-64.so.2 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1)

CLEANUP=()
cleanup() { [[ ${#CLEANUP[@]} -eq 0 ]] || rm -rf "${CLEANUP[@]}"; }
trap cleanup EXIT
OLD_BASE_ID=""

log() { printf 'sam-podman: %s\n' "$*" >&2; }
die() { printf 'sam-podman: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit "${1:-2}"
}

require_root() {
  [[ $EUID -eq 0 ]] || die "'$1' must run as root (rootful podman: CNI bridge, iptables, apt-get)."
}

require_x86_64() {
  [[ "$(uname -m)" == x86_64 ]] || die "only x86_64 hosts are supported (found $(uname -m))."
}

podman_() { CONTAINERS_CONF="$CONF" podman "$@"; }

print_env() {
  cat <<EOF
export DOCKER_HOST=unix://$SOCK
export CONTAINERS_CONF=$CONF
export SAM_CLI_TELEMETRY=0
# from inside a function, the host's 127.0.0.1:<port> is host.containers.internal:<port>
EOF
}

# ---------------------------------------------------------------- setup ---

apt_install() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != installed ]]; then
      missing+=("$p")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "apt packages present: ${APT_PACKAGES[*]}"
    return
  fi
  command -v apt-get >/dev/null || die "apt-get not found; install manually: ${missing[*]}"
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q -o Dpkg::Use-Pty=0 >&2 || die "apt-get update failed"
  apt-get install -y -q --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
}

write_conf() {
  local hard new
  hard="$(ulimit -Hn)"
  [[ "$hard" == unlimited ]] && hard=1048576
  [[ "$hard" =~ ^[0-9]+$ ]] || die "cannot read the hard nofile limit (ulimit -Hn gave '$hard')"
  mkdir -p "$TOOLS_DIR"
  new="$(cat <<EOF
# generated by scripts/sam-podman.sh - do not edit
[containers]
default_ulimits = ["nofile=$hard:$hard", "nproc=32768:32768"]

[engine]
runtime = "runc"
EOF
)"
  if [[ -f "$CONF" && "$(cat "$CONF")" == "$new" ]]; then
    log "containers.conf up to date: $CONF"
    return
  fi
  printf '%s\n' "$new" >"$CONF.tmp"
  mv -f "$CONF.tmp" "$CONF"
  log "wrote $CONF"
  if service_alive; then
    log "NOTE: the podman service is running with the old config; run '$0 stop' and '$0 start'."
  fi
}

# Python that has samcli installed: python3 first, else the interpreter of the `sam` script.
samcli_python() {
  local py sam_bin shebang
  for py in python3 python; do
    if command -v "$py" >/dev/null && "$py" -c 'import samcli' 2>/dev/null; then
      echo "$py"; return
    fi
  done
  if sam_bin="$(command -v sam)"; then
    shebang="$(head -n1 "$sam_bin")"
    py="${shebang#\#!}"; py="${py%% *}"
    if [[ -x "$py" ]] && "$py" -c 'import samcli' 2>/dev/null; then
      echo "$py"; return
    fi
  fi
  die "no python with the samcli package found (pip install aws-sam-cli)"
}

find_rie() {
  local py rie
  if [[ -n "${SAM_RIE_PATH:-}" ]]; then
    [[ -f "$SAM_RIE_PATH" ]] || die "SAM_RIE_PATH=$SAM_RIE_PATH does not exist"
    echo "$SAM_RIE_PATH"; return
  fi
  py="$(samcli_python)"
  rie="$("$py" -c 'import os, samcli; print(os.path.join(os.path.dirname(samcli.__file__), "local", "rapid", "aws-lambda-rie-x86_64"))')"
  [[ -f "$rie" ]] || die "Runtime Interface Emulator not found at $rie (SAM CLI layout changed?)"
  echo "$rie"
}

find_lib() {
  local name=$1 p
  p="$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n && /x86-64/ { print $NF; exit }')"
  if [[ -z "$p" ]]; then
    for p in "/lib/x86_64-linux-gnu/$name" "/usr/lib/x86_64-linux-gnu/$name" "/lib64/$name" "/usr/lib64/$name"; do
      [[ -e "$p" ]] && break
      p=""
    done
  fi
  [[ -n "$p" && -e "$p" ]] || die "host library $name not found"
  readlink -f "$p"
}

image_label() { # image label -> value or empty
  podman_ image inspect --format "{{ index .Labels \"$2\" }}" "$1" 2>/dev/null | sed 's/^<no value>$//' || true
}

build_base_image() {
  local force=$1 busybox=/bin/busybox libs=() l sum tmp
  [[ -x "$busybox" ]] || die "$busybox not found; install busybox-static"
  if ldd "$busybox" >/dev/null 2>&1; then
    die "$busybox is dynamically linked; install busybox-static (it replaces Debian's busybox)"
  fi
  for l in "${GLIBC_LIBS[@]}"; do libs+=("$(find_lib "$l")"); done
  sum="$(cat "$busybox" "${libs[@]}" | sha256sum | cut -c1-64)"

  if [[ "$force" != 1 ]] && podman_ image exists "$BASE_IMAGE" \
     && [[ "$(image_label "$BASE_IMAGE" "$LABEL_BASE")" == "$sum" ]]; then
    log "base image up to date: $BASE_IMAGE"
    return
  fi
  log "building base image $BASE_IMAGE (busybox + host glibc)"
  tmp="$(mktemp -d)"
  CLEANUP+=("$tmp")
  local r="$tmp/rootfs"
  mkdir -p "$r"/{bin,lib64,lib/x86_64-linux-gnu,usr/bin,usr/local/bin,etc,tmp,var/task,var/runtime,var/rapid,opt,proc,sys,dev,root}
  ln -s ../lib64 "$r/usr/lib64"
  cp "$busybox" "$r/bin/busybox"
  chmod 0755 "$r/bin/busybox"
  local applet
  for applet in $("$r/bin/busybox" --list); do
    [[ "$applet" == busybox || -e "$r/bin/$applet" ]] || ln -s busybox "$r/bin/$applet"
  done
  local i
  for i in "${!GLIBC_LIBS[@]}"; do
    cp -L "${libs[$i]}" "$r/lib/x86_64-linux-gnu/${GLIBC_LIBS[$i]}"
    ln -s "../lib/x86_64-linux-gnu/${GLIBC_LIBS[$i]}" "$r/lib64/${GLIBC_LIBS[$i]}"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
  echo 'hosts: files dns' >"$r/etc/nsswitch.conf"
  # CA bundle (optional): lets TLS clients that load native roots start up.
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    mkdir -p "$r/etc/ssl/certs" "$r/etc/pki/tls/certs"
    cp -L /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/ca-certificates.crt"
    ln -s ../../../ssl/certs/ca-certificates.crt "$r/etc/pki/tls/certs/ca-bundle.crt"
  fi
  chmod 1777 "$r/tmp"

  OLD_BASE_ID="$(podman_ image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || true)"
  tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$tmp/rootfs.tar" .
  podman_ import \
    --change "ENV PATH=/usr/local/bin:/usr/bin:/bin:/opt/bin" \
    --change "ENV LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib" \
    --change "ENV LAMBDA_TASK_ROOT=/var/task" \
    --change "ENV LAMBDA_RUNTIME_DIR=/var/runtime" \
    --change "ENV LANG=en_US.UTF-8" \
    --change "ENV TZ=:/etc/localtime" \
    --change "WORKDIR /var/task" \
    --change "LABEL $LABEL_BASE=$sum" \
    "$tmp/rootfs.tar" "$BASE_IMAGE" >/dev/null || die "podman import failed"
  FORCE_RAPID=1   # a new base always needs a new rapid image
}

build_rapid_image() {
  local force=$1 rie sum tmp old_id
  rie="$(find_rie)"
  sum="$(sha256sum "$rie" | cut -c1-64)"
  if [[ "$force" != 1 ]] && podman_ image exists "$RAPID_IMAGE" \
     && [[ "$(image_label "$RAPID_IMAGE" "$LABEL_RIE")" == "$sum" ]]; then
    log "rapid image up to date: $RAPID_IMAGE"
    return
  fi
  log "building $RAPID_IMAGE (RIE from $rie)"
  tmp="$(mktemp -d)"
  CLEANUP+=("$tmp")
  cp "$rie" "$tmp/aws-lambda-rie"
  chmod 0755 "$tmp/aws-lambda-rie"
  cat >"$tmp/Containerfile" <<EOF
FROM $BASE_IMAGE
COPY aws-lambda-rie /var/rapid/aws-lambda-rie
LABEL $LABEL_RIE=$sum
ENTRYPOINT ["/var/rapid/aws-lambda-rie"]
EOF
  old_id="$(podman_ image inspect --format '{{.Id}}' "$RAPID_IMAGE" 2>/dev/null || true)"
  podman_ build --pull=never --quiet -t "$RAPID_IMAGE" -f "$tmp/Containerfile" "$tmp" >/dev/null \
    || die "podman build of $RAPID_IMAGE failed"
  # drop the superseded images (fails harmlessly if still tagged or in use)
  local id
  for id in "$old_id" "$OLD_BASE_ID"; do
    [[ -n "$id" ]] && podman_ rmi "$id" >/dev/null 2>&1 || true
  done
}

cmd_setup() {
  local force=0
  case "${1:-}" in
    "") ;;
    --force) force=1 ;;
    *) die "setup: unknown option '$1' (only --force)";;
  esac
  require_root setup
  require_x86_64
  apt_install
  write_conf
  FORCE_RAPID=$force
  build_base_image "$force"
  build_rapid_image "$FORCE_RAPID"
  # smoke test: the image starts with runc and our ulimits
  podman_ run --rm --network none --entrypoint /bin/sh "$RAPID_IMAGE" -c 'test -x /var/rapid/aws-lambda-rie' \
    || die "smoke test of $RAPID_IMAGE failed (see podman output above)"
  log "setup done. Next: eval \"\$($0 start)\""
}

# ---------------------------------------------------------------- service ---

service_alive() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'system service'
}

ping_socket() {
  [[ -S "$SOCK" ]] || return 1
  python3 - "$SOCK" <<'EOF' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(sys.argv[1])
s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.exit(0 if data.startswith(b"HTTP/1.") and b" 200 " in data.split(b"\r\n", 1)[0] else 1)
EOF
}

# Make TCP to the bridge gateway (host.containers.internal) land on the host's 127.0.0.1.
setup_host_loopback() {
  local gw ifname
  gw="$(podman_ network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}' 2>/dev/null || true)"
  ifname="$(podman_ network inspect podman --format '{{.NetworkInterface}}' 2>/dev/null || true)"
  [[ -n "$gw" && -n "$ifname" ]] || die "cannot read the default podman network (podman network inspect podman)"
  if [[ ! -e "/proc/sys/net/ipv4/conf/$ifname" ]]; then
    # the bridge appears with the first container on it
    podman_ run --rm --network podman --entrypoint /bin/true "$BASE_IMAGE" >/dev/null \
      || die "could not start a container on the podman bridge"
  fi
  [[ -e "/proc/sys/net/ipv4/conf/$ifname" ]] || die "bridge $ifname did not appear"
  echo 1 >"/proc/sys/net/ipv4/conf/$ifname/route_localnet" \
    || die "cannot set net.ipv4.conf.$ifname.route_localnet=1"
  local rule=(PREROUTING -i "$ifname" -d "$gw/32" -p tcp -m comment --comment "$NAT_COMMENT"
              -j DNAT --to-destination 127.0.0.1)
  if ! iptables -w -t nat -C "${rule[@]}" 2>/dev/null; then
    iptables -w -t nat -I "${rule[@]}" || die "iptables DNAT rule for host loopback failed"
  fi
  log "host loopback: container -> host.containers.internal ($gw) -> host 127.0.0.1"
}

remove_host_loopback() {
  local line
  command -v iptables >/dev/null || return 0
  while read -r line; do
    [[ -n "$line" ]] || continue
    # shellcheck disable=SC2086
    eval "iptables -w -t nat ${line/-A /-D }" || true
  done < <(iptables -w -t nat -S PREROUTING 2>/dev/null | grep -- "$NAT_COMMENT" || true)
}

# Lambda containers a killed run left running (SAM removes its own when it
# stops): each keeps a port of SAM's range mapped, and a new container SAM
# gave the same port was never reached (seen after a restart: 40 left, and
# one function's calls timed out twice). No service runs, so none is in use.
remove_stale_containers() {
  local stale
  stale="$(podman_ ps --all --quiet --filter "ancestor=$RAPID_IMAGE" 2>/dev/null || true)"
  [[ -n "$stale" ]] || return 0
  log "removing $(wc -l <<<"$stale") Lambda container(s) left by an earlier run"
  # shellcheck disable=SC2086
  podman_ rm --force $stale >/dev/null || true
}

cmd_start() {
  require_root start
  [[ -f "$CONF" ]] || die "$CONF missing; run '$0 setup' first"
  command -v podman >/dev/null || die "podman not installed; run '$0 setup' first"
  podman_ image exists "$RAPID_IMAGE" || die "image $RAPID_IMAGE missing; run '$0 setup' first"
  if service_alive && ping_socket; then
    setup_host_loopback
    print_env
    return
  fi
  if service_alive; then
    die "service (pid $(cat "$PIDFILE")) runs but $SOCK does not answer; run '$0 stop' first"
  fi
  (( ${#SOCK} < 100 )) || die "socket path too long for a unix socket: $SOCK (set SAM_PODMAN_DIR)"
  remove_stale_containers
  mkdir -p "$TOOLS_DIR"
  rm -f "$SOCK" "$PIDFILE"
  : >>"$LOGFILE"
  CONTAINERS_CONF="$CONF" setsid nohup podman system service --time=0 "unix://$SOCK" \
    >>"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local i
  for ((i = 0; i < 150; i++)); do
    ping_socket && break
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
      tail -n 20 "$LOGFILE" >&2 || true
      die "podman system service exited (log: $LOGFILE)"
    fi
    sleep 0.2
  done
  ping_socket || die "podman service did not answer on $SOCK within 30 s (log: $LOGFILE)"
  log "podman service running (pid $(cat "$PIDFILE"), socket $SOCK)"
  setup_host_loopback
  print_env
}

cmd_stop() {
  require_root stop
  if service_alive; then
    local pid i
    pid="$(cat "$PIDFILE")"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      log "service did not stop on SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped podman service (pid $pid)"
  else
    log "podman service not running"
  fi
  rm -f "$PIDFILE" "$SOCK"
  remove_host_loopback
}

# ---------------------------------------------------------------- template ---

cmd_x86_template() {
  local src="${1:-$REPO_ROOT/template.yaml}" out="${2:-$TOOLS_DIR/template.x86_64.yaml}" py
  [[ -f "$src" ]] || die "template not found: $src"
  py="$(samcli_python)"
  mkdir -p "$(dirname "$out")"
  "$py" - "$src" "$out" <<'EOF'
import os, sys
from samcli.yamlhelper import yaml_parse, yaml_dump

src, out = sys.argv[1], sys.argv[2]
src_dir = os.path.dirname(os.path.abspath(src))
with open(src) as f:
    t = yaml_parse(f.read())

def local_path(v):
    return isinstance(v, str) and v and not v.startswith("s3://") and not os.path.isabs(v)

changed = []
fn_globals = t.get("Globals", {}).get("Function")
if isinstance(fn_globals, dict):
    if "Architectures" in fn_globals:
        fn_globals["Architectures"] = ["x86_64"]
        changed.append("Globals.Function.Architectures")
    if local_path(fn_globals.get("CodeUri")):
        fn_globals["CodeUri"] = os.path.join(src_dir, fn_globals["CodeUri"])

path_keys = {
    "AWS::Serverless::Function": ["CodeUri"],
    "AWS::Serverless::LayerVersion": ["ContentUri"],
    "AWS::Serverless::Api": ["DefinitionUri"],
    "AWS::Serverless::HttpApi": ["DefinitionUri"],
    "AWS::Serverless::StateMachine": ["DefinitionUri"],
    "AWS::Lambda::Function": ["Code"],
    "AWS::Lambda::LayerVersion": ["Content"],
}
for name, res in (t.get("Resources") or {}).items():
    if not isinstance(res, dict):
        continue
    rtype = res.get("Type")
    props = res.get("Properties")
    if not isinstance(props, dict):
        continue
    for key in path_keys.get(rtype, []):
        if local_path(props.get(key)):
            props[key] = os.path.join(src_dir, props[key])
    if rtype in ("AWS::Serverless::Function", "AWS::Lambda::Function"):
        if "Architectures" in props:
            props["Architectures"] = ["x86_64"]
            changed.append(f"{name}.Architectures")
        elif not (isinstance(fn_globals, dict) and "Architectures" in fn_globals):
            pass  # default is already x86_64
    if rtype == "AWS::Serverless::LayerVersion" and "CompatibleArchitectures" in props:
        props["CompatibleArchitectures"] = ["x86_64"]
        changed.append(f"{name}.CompatibleArchitectures")

header = f"# GENERATED by scripts/sam-podman.sh x86-template from {os.path.abspath(src)}\n# for local builds/invokes only - never deploy this file.\n"
with open(out + ".tmp", "w") as f:
    f.write(header + yaml_dump(t))
os.replace(out + ".tmp", out)
print(f"sam-podman: wrote {out} (x86_64: {', '.join(changed) or 'already x86_64'})", file=sys.stderr)
EOF
  echo "$out"
}

# ---------------------------------------------------------------- main ---

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    setup) cmd_setup "$@" ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) print_env ;;
    x86-template) cmd_x86_template "$@" ;;
    -h|--help|help) usage 0 ;;
    *) usage 2 ;;
  esac
}

main "$@"

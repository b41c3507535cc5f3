#!/usr/bin/env bash
# s3-read.sh - requests and bytes of a single-row `sstkit read` from object storage.
#
#   bench/s3-read.sh [SSTABLE_DIR]
#   bench/s3-read.sh /tmp/sstkit-bench/nb_one_partition     # from make-bench-data.sh (default)
#   SSTKIT=target/debug/sstkit bench/s3-read.sh              # IO counts do not depend on the build
#
# Starts a local S3-compatible server (the `moto` server from .ci/requirements.txt, run by
# $SSTKIT_PYTHON, else .ci/venv/bin/python, else python3) on a free 127.0.0.1 port, uploads
# the sstable (its directory's files) and reads one row of its largest partition through
# s3://, in N rows picked at random among the promoted-index blocks' first clusterings:
#   cold   a new process: `read --key-hex K --from R --to R` (open + first lookup);
#   warm   the same process, the same lookup again (index pages and blocks cached).
# For each it prints the requests the server logged (GET, HEAD, LIST), the bytes the GETs
# returned (sstkit's --io-stats), and sstkit's reads per component. The cold count is the
# whole process: the LIST of the sstable's components (it stands for TOC.txt), the GETs of
# Statistics, Filter, Summary, CompressionInfo, the index and the data.
#
# sstkit's object storage defaults apply (--io-unit 1MiB --max-io 8MiB); EXTRA='--io-unit 4KiB
# --max-io 128KiB' measures the local ones.
#
# Environment: N (default 5), SEED (default 42), SSTKIT (a prebuilt binary; default: cargo
# build --release, then target/release/sstkit), EXTRA (more flags for every read).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SST="${1:-/tmp/sstkit-bench/nb_one_partition}"
N="${N:-5}"
SEED="${SEED:-42}"
EXTRA="${EXTRA:-}"

# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
SSTKIT="$(sstkit_binary s3-read.sh 1)"
[[ -d "$SST" ]] || { echo "s3-read.sh: no sstable directory at $SST (run bench/make-bench-data.sh?)" >&2; exit 2; }
PY="${SSTKIT_PYTHON:-}"
[[ -n "$PY" ]] || { [[ -x "$REPO/.ci/venv/bin/python" ]] && PY="$REPO/.ci/venv/bin/python"; } || true
[[ -n "$PY" ]] || PY=python3
"$PY" -c 'import moto.server, boto3' 2>/dev/null || {
  echo "s3-read.sh: $PY lacks moto[server]/boto3 (pip install -r .ci/requirements.txt)" >&2; exit 2; }

exec "$PY" - "$SSTKIT" "$SST" "$N" "$SEED" "$EXTRA" <<'PY'
import json, os, random, re, shlex, socket, subprocess, sys, tempfile, time

sstkit, sst, n, seed, extra = sys.argv[1:6]
n, seed, extra = int(n), int(seed), shlex.split(extra)

s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
log = tempfile.NamedTemporaryFile("w+", prefix="sstkit-moto-", suffix=".log", delete=False)
server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                          stdout=log, stderr=log)
try:
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close(); break
        except OSError:
            time.sleep(0.1)
    import boto3
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id="bench", aws_secret_access_key="bench")
    s3.create_bucket(Bucket="bench")
    for f in sorted(os.listdir(sst)):
        s3.upload_file(os.path.join(sst, f), "bench", f"one/{f}")
    data = next(f for f in sorted(os.listdir(sst)) if f.endswith("-Data.db"))
    url = f"s3://bench/one/{data}"
    env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_REGION="us-east-1")

    def run(args, remote=True):
        cmd = [sstkit] + (["--s3-endpoint", endpoint] if remote else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"sstkit {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return r

    def logged():
        log.flush()
        with open(log.name) as f:
            return [m.group(1, 2) for m in re.finditer(r'(GET|HEAD|PUT|POST) (\S+) HTTP', f.read())]

    local = os.path.join(sst, data)
    entries = [json.loads(l) for l in
               run(["dump-index", "--promoted-index", "-o", "ndjson", local], False).stdout.splitlines()]
    entry = max(entries, key=lambda e: (e.get("promoted_index") or {}).get("blocks", 0))
    key = entry["key"]["raw"]
    blocks = (entry.get("promoted_index") or {}).get("entries", [])
    rows = [b["first"]["value"] for b in blocks if b["first"]["kind"] == "CLUSTERING"] or [None]
    rng = random.Random(seed)
    picks = [rng.choice(rows) for _ in range(n)]

    def kind(method, path):
        if method == "GET" and "list-type=2" in path:
            return "LIST"
        return method

    results = []
    for r in picks:
        bound = ["--from", r, "--to", r] if r is not None else []
        before = len(logged())
        out = run(["read", "-o", "ndjson", "--io-stats=json", "--key-hex", key, "--key-hex", key]
                  + bound + extra + [url])
        reqs = logged()[before:]
        ops = [json.loads(l) for l in out.stderr.splitlines() if l.startswith("{")]
        gets = [(m, p) for m, p in reqs if kind(m, p) == "GET"]
        results.append((r, reqs, ops, gets))

    def reads(op):
        return {c: (v["reads"], v["bytes"]) for c, v in op["components"].items() if v["reads"]}

    print(f"sstable   {url} (from {sst}); partition 0x{key}, {len(blocks)} promoted-index blocks; "
          f"{n} random rows (seed {seed}) {' '.join(extra)}")
    for r, reqs, ops, gets in results:
        count = lambda k: sum(1 for m, p in reqs if kind(m, p) == k)
        open_, cold, warm = ops[0], ops[1], ops[2]
        cold_reads = sum(v["reads"] for v in open_["components"].values()) + \
            sum(v["reads"] for v in cold["components"].values())
        cold_bytes = sum(v["bytes"] for v in open_["components"].values()) + \
            sum(v["bytes"] for v in cold["components"].values())
        warm_reads = sum(v["reads"] for v in warm["components"].values())
        warm_bytes = sum(v["bytes"] for v in warm["components"].values())
        print(f"row {r}: server log: {count('LIST')} LIST, {count('HEAD')} HEAD, {count('GET')} GET "
              f"for the process; sstkit: cold {cold_reads} GETs {cold_bytes} B, "
              f"warm {warm_reads} GETs {warm_bytes} B")
        print(f"  open {reads(open_)}")
        print(f"  cold {reads(cold)}")
        print(f"  warm {reads(warm)}")
        if count("GET") != cold_reads + warm_reads:
            print(f"  (server GETs {count('GET')} != sstkit reads {cold_reads + warm_reads})")
finally:
    server.terminate()
    server.wait()
    os.unlink(log.name)
PY

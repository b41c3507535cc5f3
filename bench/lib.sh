# lib.sh - shell functions shared by the bench scripts (sourced, not run).

# sstkit_binary NAME BUILD: print the sstkit binary to use. $SSTKIT when set; else, when
# BUILD is 1, `cargo build --release` first; then CARGO_TARGET_DIR (or ./target)/release/sstkit.
# Exits 2 (naming the script NAME) when there is no binary.
sstkit_binary() {
  local name="$1" build="$2" root target bin
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [[ -n "${SSTKIT:-}" ]]; then
    bin="$SSTKIT"
  else
    target="${CARGO_TARGET_DIR:-$root/target}"
    if [[ "$build" -eq 1 ]]; then
      echo "building: cargo build --release -p sstkit (target dir $target)" >&2
      (cd "$root" && cargo build --release -q -p sstkit) >&2
    fi
    bin="$target/release/sstkit"
  fi
  [[ -x "$bin" ]] || { echo "$name: no binary at $bin (build first)" >&2; exit 2; }
  echo "$bin"
}

# data_file NAME SSTABLE: print the Data.db of SSTABLE (a Data.db path, or a folder holding
# exactly one sstable). Exits 2 (naming the script NAME) otherwise.
data_file() {
  local name="$1" sst="$2" found
  if [[ -d "$sst" ]]; then
    mapfile -t found < <(find "$sst" -maxdepth 1 -name '*-Data.db' | sort)
    if [[ ${#found[@]} -ne 1 ]]; then
      echo "$name: expected one *-Data.db in $sst, found ${#found[@]} (run bench/make-bench-data.sh?)" >&2
      exit 2
    fi
    sst="${found[0]}"
  fi
  [[ -f "$sst" ]] || { echo "$name: no such file: $sst (run bench/make-bench-data.sh?)" >&2; exit 2; }
  echo "$sst"
}

# make_compare_data BIN DIR: make, once, the data of compare-builds.sh and threads.sh in DIR
# with BIN's `write` (sstkit's own writer, so no node is needed; remove DIR to make it again):
#   wide/   one partition of 1,000,000 rows (int clustering, text + bigint), nb, LZ4:
#           86 MB of uncompressed Data.db
#   many/   1,000,000 partitions of one row (make-many-partitions.sh), nb
#   merge/  4 sstables of the same 250,000 partitions with other timestamps and values:
#           every row is reconciled from 4 versions
#   merge8/ the same with 8 sstables (8 versions of every row)
make_compare_data() {
  local bin="$1" data="$2" here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  mkdir -p "$data"
  if [[ ! -d "$data/wide" ]]; then
    echo 'CREATE TABLE bench.wide (pk int, ck int, v text, v2 bigint, PRIMARY KEY (pk, ck));' \
      >"$data/wide.cql"
    awk -v n=1000000 'BEGIN {
      printf("{\"key\":{\"raw\":\"00000001\"},\"clustering_elements\":[")
      for (i = 0; i < n; i++) {
        if (i) printf(",")
        printf("{\"type\":\"clustering-row\",\"key\":{\"raw\":\"0004%08x\"},\"marker\":{\"timestamp\":%d},\"columns\":{\"v\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"value number %d of the wide bench partition, some text\"},\"v2\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"%d\"}}}", i, 1700000000000000 + i, 1700000000000000 + i, i, 1700000000000000 + i, i * 7)
      }
      printf("]}\n")
    }' | "$bin" write --from - --schema "$data/wide.cql" --format-version nb \
      --output-dir "$data/wide" -o json >/dev/null
  fi
  if [[ ! -d "$data/many" ]]; then
    SSTKIT="$bin" "$here/make-many-partitions.sh" 1000000 "$data/many-set" >/dev/null 2>&1
    mv "$data/many-set/nb" "$data/many"
    rm -rf "$data/many-set"
  fi
  make_merge_set "$bin" "$data" merge 4
  make_merge_set "$bin" "$data" merge8 8
}

# make_merge_set BIN DATA NAME N: N sstables of the same 250,000 partitions in DATA/NAME,
# sstable j's timestamps and values shifted by j (once; remove DATA/NAME to make it again).
make_merge_set() {
  local bin="$1" data="$2" name="$3" n="$4" j
  [[ -d "$data/$name" ]] && return
  echo 'CREATE TABLE bench.many (pk bigint PRIMARY KEY, v int);' >"$data/merge.cql"
  for ((j = 1; j <= n; j++)); do
    awk -v n=250000 -v j="$j" 'BEGIN {
      for (i = 0; i < n; i++)
        printf("{\"key\":{\"raw\":\"%016x\"},\"clustering_elements\":[{\"type\":\"clustering-row\",\"key\":{\"raw\":\"\"},\"columns\":{\"v\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"%d\"}}}]}\n", i, 1700000000000000 + j * ((i * 7 + j) % 5), (i + j) % 1000)
    }' | "$bin" write --from - --schema "$data/merge.cql" \
      --partitioner ByteOrderedPartitioner --format-version nb \
      --output-dir "$data/$name" -o json >/dev/null
  done
}

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

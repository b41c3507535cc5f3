#!/usr/bin/env bash
# make-many-partitions.sh - write sstables of many small partitions with sstkit's own writer
# (NOT committed data), for memory measurements that scale with the partition count.
#
#   bench/make-many-partitions.sh N DIR        # N partitions, one row each
#
# Output: DIR/nb (BIG) and DIR/da (BTI), one sstable each, of the table in
# DIR/many.cql (pk bigint PRIMARY KEY, v int), ByteOrderedPartitioner (so keys 0..N-1
# written as big-endian hex are already in partition order), LZ4. The NDJSON records
# (`dump-data -o ndjson` shape) are generated on the fly and piped into `sstkit write`.
# SSTKIT: the binary (default: target/release/sstkit, see lib.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
n="${1:?usage: make-many-partitions.sh N DIR}"
dir="${2:?usage: make-many-partitions.sh N DIR}"
bin="$(sstkit_binary make-many-partitions 0)"
mkdir -p "$dir"
echo 'CREATE TABLE bench.many (pk bigint PRIMARY KEY, v int);' >"$dir/many.cql"
records() {
  awk -v n="$n" 'BEGIN {
    for (i = 0; i < n; i++)
      printf("{\"key\":{\"raw\":\"%016x\"},\"clustering_elements\":[{\"type\":\"clustering-row\",\"key\":{\"raw\":\"\"},\"columns\":{\"v\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":1700000000000000,\"value\":\"%d\"}}}]}\n", i, i % 1000)
  }'
}
for v in nb da; do
  rm -rf "${dir:?}/$v"
  records | "$bin" write --from - --schema "$dir/many.cql" --partitioner ByteOrderedPartitioner \
    --format-version "$v" --output-dir "$dir/$v" -o json >"$dir/$v.write.json"
  echo "$dir/$v: $(du -sh "$dir/$v" | cut -f1)" >&2
done

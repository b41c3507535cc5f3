#!/usr/bin/env bash
# Build the fuzz seed corpora under fuzz/seeds/<target>/ (ignored by git)
# from the project's fixtures and, when present, the shared corpus of real
# sstables (read in place, never copied into the project):
#   fuzz/seeds.sh [CORPUS_DIR]     (default: $SSTKIT_CORPUS, else ../shared/corpus
#                                   beside the repo, as for the tests)
# Seeds are at most 64 KiB (the -max_len of the runs): larger streamed files
# (Index.db, uncompressed Data.db) are cut to their first 64 KiB, others are
# skipped. Two-file targets (bti, checksums, data_header, scrub_open) take a big-endian
# u32 length, the first file, then the second (`validate::fuzz::split`).
# No pipefail: `head -c` cutting a file short ends its writer with SIGPIPE.
set -eu
cd "$(dirname "$0")"
repo=$(cd .. && pwd)
corpus=${1:-${SSTKIT_CORPUS:-$repo/../shared/corpus}}
out=seeds
max=65536
rm -rf "$out"
for t in toc summary index_entry promoted_index statistics compression_info data scylla \
    filter clustering legacy_data bti hll value checksums data_header scrub_open; do
    mkdir -p "$out/$t"
done

n=0
# put TARGET NAME FILE...: the files concatenated, cut to $max bytes.
put() {
    local t=$1 name=$2
    shift 2
    n=$((n + 1))
    cat "$@" | head -c "$max" >"$out/$t/$n-$name"
}
size() { stat -c %s "$1"; }
be32() {
    local v=$1
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((v >> 24 & 255)) $((v >> 16 & 255)) \
        $((v >> 8 & 255)) $((v & 255)))"
}
# join TARGET NAME FIRST SECOND: a two-file seed (skipped when FIRST is too
# big, since its tail matters; SECOND is cut).
join() {
    local t=$1 name=$2 a=$3 b=$4
    [ "$(size "$a")" -le $((max - 4)) ] || return 0
    n=$((n + 1))
    { be32 "$(size "$a")"; cat "$a" "$b"; } | head -c "$max" >"$out/$t/$n-$name"
}
# u32 FILE OFFSET: the big-endian u32 there.
u32() { echo $((16#$(od -An -tx1 -j "$2" -N4 "$1" | tr -d ' \n'))); }
# hll FILE: the cardinality estimator of a `ma`+ Statistics.db (COMPACTION,
# metadata type 1: a length-prefixed byte array), as a seed.
hll() {
    local f=$1 name=$2 crc=$3 count i at typ off len
    count=$(u32 "$f" 0)
    [ "$count" -ge 1 ] && [ "$count" -le 8 ] || return 0
    at=$((4 + 4 * crc))
    for ((i = 0; i < count; i++)); do
        typ=$(u32 "$f" $((at + 8 * i)))
        off=$(u32 "$f" $((at + 8 * i + 4)))
        if [ "$typ" = 1 ] && [ $((off + 4)) -le "$(size "$f")" ]; then
            len=$(u32 "$f" "$off")
            [ "$len" -le $max ] || return 0
            n=$((n + 1))
            tail -c +$((off + 5)) "$f" | head -c "$len" >"$out/hll/$n-$name"
        fi
    done
}

version_of() { # an sstable file name's format version (both naming schemes)
    local tok
    for tok in ${1//-/ }; do
        case $tok in jb | ka | la | lb | ma | mb | mc | md | me | ms | mt | na | nb | nc | oa | da)
            echo "$tok"
            return
            ;;
        esac
    done
}

dirs=("$repo"/fixtures/cassandra/*/)
if [ -d "$corpus" ]; then
    dirs+=("$corpus"/*/*/)
else
    echo "seeds: $corpus is absent, fixtures only" >&2
fi
for d in "${dirs[@]}"; do
    set_name=$(basename "$d")
    for data in "$d"*Data.db; do
        [ -f "$data" ] || continue
        p=${data%Data.db}
        v=$(version_of "$(basename "$data")")
        [ -n "$v" ] || continue
        id="$set_name-$(basename "$p")"
        small() { [ -f "$1" ] && [ "$(size "$1")" -le $max ]; }
        small "${p}TOC.txt" && put toc "$id" "${p}TOC.txt"
        small "${p}Summary.db" && put summary "$id" "${p}Summary.db"
        if [ -f "${p}Index.db" ]; then
            put index_entry "$id" "${p}Index.db"
            put promoted_index "$id" "${p}Index.db"
        fi
        if small "${p}Statistics.db"; then
            put statistics "$id" "${p}Statistics.db"
            case $v in
            ma | mb | mc | md | me | ms | mt) hll "${p}Statistics.db" "$id" 0 ;;
            na | nb | nc | oa | da) hll "${p}Statistics.db" "$id" 1 ;;
            esac
        fi
        small "${p}CompressionInfo.db" && put compression_info "$id" "${p}CompressionInfo.db"
        small "${p}Filter.db" && put filter "$id" "${p}Filter.db"
        small "${p}Scylla.db" && put scylla "$id" "${p}Scylla.db"
        if [ ! -f "${p}CompressionInfo.db" ]; then
            case $v in
            jb | ka | la | lb) put legacy_data "$id" "$data" ;;
            *)
                put data "$id" "$data"
                [ -f "${p}Statistics.db" ] && join data_header "$id" "${p}Statistics.db" "$data"
                [ -f "${p}Statistics.db" ] && join scrub_open "$id" "${p}Statistics.db" "$data"
                ;;
            esac
            if [ -f "${p}CRC.db" ]; then
                join checksums "$id-crc" "${p}CRC.db" "$data"
                for dg in "${p}"Digest.*; do
                    [ -f "$dg" ] && join checksums "$id-digest" "$dg" "$data"
                done
            fi
        fi
        if [ -f "${p}Partitions.db" ]; then
            rows="${p}Rows.db"
            [ -f "$rows" ] || rows=/dev/null
            join bti "$id" "${p}Partitions.db" "$rows"
        fi
    done
done
for t in "$out"/*/; do
    printf '%s %s\n' "$(basename "$t")" "$(find "$t" -type f | wc -l)"
done | column -t >&2

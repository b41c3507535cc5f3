//! Metadata that disagrees with Data.db: scrub writes no partition it
//! cannot vouch for. The cases are the campaign's, made from the fixtures.

use super::{component, copy_of, fixture_copy, invented, partitions, scrub_skip};
use crate::util::{fixtures, sstkit};
use serde_json::Value;

/// Compressed fixtures of each BIG and BTI version with counters (the
/// campaign's phantoms were in counter tables) and clustering rows.
const COMPRESSED: [&str; 4] = ["nb_counters", "oa_counters", "da_counters", "nb_clustering"];

/// CompressionInfo.db deleted (TOC.txt still lists it): scrub used to scan
/// the compressed bytes as an uncompressed Data.db and wrote a phantom
/// partition (`oa_counters`, `da_counters`). Whatever it writes now is a
/// partition of the intact sstable, and with nothing written it says why
/// (it now rebuilds CompressionInfo.db: `compression_info_lost`).
#[test]
fn compression_info_deleted_is_never_read_as_raw() {
    for case in COMPRESSED {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        std::fs::remove_file(component(&dir, "CompressionInfo.db")).unwrap();
        let (r, written, _) = scrub_skip(&dir);
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case}: partitions not in the intact sstable: {bad:?}"
        );
        if written.is_empty() {
            assert_eq!(r.code, 3, "{case}: {}", r.stderr);
            assert!(
                r.stderr.contains("CompressionInfo.db"),
                "{case}: the error names the missing component: {}",
                r.stderr
            );
        }
    }
}

/// TOC.txt replaced by an uncompressed sstable's (it lists CRC.db, not
/// CompressionInfo.db): scrub used to read the compressed Data.db as raw
/// bytes; CompressionInfo.db beside it is used, and every partition is
/// written as it was.
#[test]
fn foreign_toc_does_not_hide_compression_info() {
    let foreign = component(&fixtures().join("nb_clustering_nocompress"), "TOC.txt");
    for case in COMPRESSED {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        std::fs::copy(&foreign, component(&dir, "TOC.txt")).unwrap();
        let (r, written, _) = scrub_skip(&dir);
        assert!(matches!(r.code, 0 | 1), "{case}: {}", r.stderr);
        assert_eq!(written, intact, "{case}: {}", r.stdout);
    }
}

/// Statistics.db replaced by another table's, whose serialization header
/// decodes the same bytes to the same lengths: scrub wrote the partitions
/// with the other table's types. A key or a value that does not fit its
/// type (text that is not UTF-8, a counter that is not a counter context)
/// now makes the partition lost instead.
#[test]
fn foreign_statistics_is_never_trusted() {
    let mut cases: Vec<(std::path::PathBuf, std::path::PathBuf)> = vec![(
        fixtures().join("nb_collections"),
        fixtures().join("nb_all_types"),
    )];
    match crate::util::corpus() {
        // The campaign's cases: same layout, text against counter values.
        Some(c) => {
            for v in ["na", "mc", "oa", "da"] {
                for (a, b) in [
                    ("simple", "simple_counter"),
                    ("simple_counter", "simple"),
                    ("clust", "clust_counter"),
                    ("clust_counter", "clust"),
                ] {
                    let set = |t: &str| c.join(format!("cassandra/legacy_{v}_{t}"));
                    cases.push((set(a), set(b)));
                }
            }
            // Campaign seed 41: the same counts and types, compact storage
            // or not (`legacy_me_clust_counter`, `legacy_md_clust_compact`:
            // 5 partitions written altered each).
            // bench/foreign-statistics.py: ScyllaDB's `mc` files of one
            // schema, told apart by their timestamps alone (the first has
            // neither CRC.db nor compression: its digest vouches for it).
            // The last two share their timestamps exactly: only their
            // local deletion times tell them apart.
            for (a, b) in [
                ("write_shadowable_deletion", "write_deleted_row"),
                ("simple", "deleted_cells"),
                (
                    "large_subset_of_columns_dense",
                    "large_subset_of_columns_sparse",
                ),
                (
                    "write_non_adjacent_range_tombstones",
                    "write_overlapped_range_tombstones",
                ),
                (
                    "write_overlapped_range_tombstones",
                    "write_non_adjacent_range_tombstones",
                ),
            ] {
                let set = |t: &str| c.join(format!("scylladb/3.x-uncompressed-{t}"));
                cases.push((set(a), set(b)));
            }
            // Seed 44: `ma` (no metadata checksum, a compression ratio of
            // -1 even when compressed): only the timestamps tell them apart.
            for v in ["ma", "mc", "md", "me", "na"] {
                for (a, b) in [
                    ("clust_counter", "clust_counter_compact"),
                    ("clust_counter_compact", "clust_counter"),
                    ("clust_compact", "clust"),
                    ("clust", "clust_compact"),
                ] {
                    let set = |t: &str| c.join(format!("cassandra/legacy_{v}_{t}"));
                    cases.push((set(a), set(b)));
                }
            }
        }
        None => eprintln!("foreign_statistics_is_never_trusted: corpus cases skipped"),
    }
    for (target, donor) in cases {
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        let intact = partitions(&target);
        let dir = copy_of(&target, &name);
        std::fs::copy(
            component(&donor, "Statistics.db"),
            component(&dir, "Statistics.db"),
        )
        .unwrap();
        let (r, written, _) = scrub_skip(&dir);
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{name} with {}'s Statistics.db: {} partitions written altered: {}",
            donor.display(),
            bad.len(),
            r.stdout
        );
    }
}

/// Swap compressed chunks `i` and `i + 1` of the sstable in `dir` and
/// point CompressionInfo.db at the moved chunk: both still pass their
/// checksums, only the whole-file digest fails.
fn swap_chunks(dir: &std::path::Path, i: usize) {
    let ci_path = component(dir, "CompressionInfo.db");
    let data_path = component(dir, "Data.db");
    let mut ci = std::fs::read(&ci_path).unwrap();
    let mut data = std::fs::read(&data_path).unwrap();
    let sst = sstkit_format::Sstable::open_path(&data_path).unwrap();
    let info = sstkit_format::compression::CompressionInfo::parse(&ci, &sst.features()).unwrap();
    let offs = &info.chunk_offsets;
    let (a, b) = (offs[i] as usize, offs[i + 1] as usize);
    let c = offs.get(i + 2).map_or(data.len(), |o| *o as usize);
    let first = data[a..b].to_vec();
    let second = data[b..c].to_vec();
    data[a..a + second.len()].copy_from_slice(&second);
    data[a + second.len()..c].copy_from_slice(&first);
    // The chunk offsets are the last 8-byte fields of the file.
    let at = ci.len() - 8 * (offs.len() - (i + 1));
    ci[at..at + 8].copy_from_slice(&((a + second.len()) as i64).to_be_bytes());
    std::fs::write(&ci_path, ci).unwrap();
    std::fs::write(&data_path, data).unwrap();
}

/// Two compressed chunks swapped: each passes its checksum, the digest
/// fails. Scrub took the first partition's garbage for a truth the index
/// contradicted, stopped trusting the index and wrote two altered
/// partitions (`nb_counters`, chunks 0 and 1). On guard, every partition
/// written agrees with the index.
#[test]
fn swapped_chunks_put_scrub_on_guard() {
    for (case, i) in [("nb_counters", 0), ("nb_counters", 1), ("da_counters", 0)] {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        swap_chunks(&dir, i);
        let (r, written, _) = scrub_skip(&dir);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        assert!(
            r.stdout.contains("digest_mismatch"),
            "{case} {i}: the failed digest is a finding: {}",
            r.stdout
        );
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case} {i}: altered partitions written: {bad:?}"
        );
        assert!(
            !written.is_empty(),
            "{case} {i}: the intact chunks are salvaged"
        );
    }
}

/// A chunk offset of CompressionInfo.db with a byte set to 0xFF: the
/// chunks it moved failed their checksums and the partitions in them were
/// lost, though Data.db was intact (the campaign's compressed `na` counter
/// tables). The offsets are found again by walking Data.db (each chunk is
/// followed by the checksum of its bytes), and every partition is written.
#[test]
fn damaged_chunk_offsets_are_found_again() {
    for (case, chunk) in [("nb_counters", 1), ("nb_counters", 2), ("da_clustering", 3)] {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        let ci_path = component(&dir, "CompressionInfo.db");
        let mut ci = std::fs::read(&ci_path).unwrap();
        let count = {
            let sst = sstkit_format::Sstable::open_path(&component(&dir, "Data.db")).unwrap();
            sstkit_format::compression::CompressionInfo::parse(&ci, &sst.features())
                .unwrap()
                .chunk_count()
        };
        // The low byte of the chunk's 8-byte offset (the offsets end the file).
        let at = ci.len() - 8 * (count - chunk) + 7;
        ci[at] = 0xff;
        std::fs::write(&ci_path, ci).unwrap();
        let (r, written, out) = scrub_skip(&dir);
        assert_eq!(r.code, 1, "{case} chunk {chunk}: {}", r.stderr);
        assert!(r.stdout.contains("corrupt_metadata"), "{}", r.stdout);
        assert_eq!(written, intact, "{case} chunk {chunk}");
        let data = component(out.path(), "Data.db");
        let v = crate::util::sstkit(["validate", data.to_str().unwrap()]);
        assert_eq!(v.code, 0, "{case}: the output is valid: {}", v.stdout);
    }
}

/// Statistics.db replaced by another table's whose header decodes a
/// partition of the target cleanly: `nb_wide_desc` with `nb_deletes`'
/// Statistics.db (campaign seed 38). Six partitions fail to decode; the
/// seventh, a static row of the same type in both tables, decoded with the
/// other sstable's timestamp base and was written with shifted timestamps.
/// A Statistics.db that passes its checksums but counts other partitions
/// than the index that agrees with Data.db is another sstable's: that is a
/// finding, and nothing decoded with its header is written.
#[test]
fn statistics_of_another_sstable_decodes_nothing() {
    // The same table written twice (`nb_clustering_zstd` and `nb_clustering`,
    // campaign seed 41): same types and partition count, deletion times 3 s
    // apart; 165 partitions were written with their tombstones' times shifted.
    for (case, donor) in [
        ("nb_wide_desc", "nb_deletes"),
        ("da_wide_desc", "da_deletes"),
        ("nb_clustering_zstd", "nb_clustering"),
        ("nb_clustering", "nb_clustering_zstd"),
        ("nb_clustering_snappy", "nb_clustering_deflate"),
        ("nb_udt", "nb_collections"),
        ("oa_deletes", "oa_wide_desc"),
        ("da_clustering", "da_clustering_nocompress"),
    ] {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        std::fs::copy(
            component(&fixtures().join(donor), "Statistics.db"),
            component(&dir, "Statistics.db"),
        )
        .unwrap();
        let (r, written, _) = scrub_skip(&dir);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let findings = report["sstables"]
            .as_object()
            .and_then(|m| m.values().next())
            .map(|s| s["findings"].clone())
            .unwrap();
        assert!(
            findings.as_array().unwrap().iter().any(|f| {
                f["class"] == "metadata_mismatch" && f["component"] == "Statistics.db"
            }),
            "{case} with {donor}'s Statistics.db: the foreign file is a finding: {findings}"
        );
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case} with {donor}'s Statistics.db: partitions written altered: {bad:?}"
        );
    }
}

/// Data.db replaced by another sstable's with chunks of the same length
/// (campaign seed 41: `legacy_md_clust_counter` with the Data.db of
/// `legacy_md_clust_counter_compact`). Its chunk offsets were found again
/// by walking it, every chunk passed and the digest failed: on guard. When
/// no indexed partition decoded, scrub stopped trusting the index, found
/// the other table's partitions by scanning and wrote three of them. On
/// guard, only partitions that agree with the index are written.
#[test]
fn foreign_data_on_guard_writes_only_what_the_index_vouches_for() {
    let Some(c) = crate::util::corpus() else {
        eprintln!(
            "foreign_data_on_guard_writes_only_what_the_index_vouches_for: no corpus, skipped"
        );
        return;
    };
    for v in ["ma", "mb", "mc", "md", "me", "na"] {
        for (a, b) in [
            ("clust_counter", "clust_counter_compact"),
            ("clust_counter_compact", "clust_counter"),
            ("clust", "clust_compact"),
        ] {
            let set = |t: &str| c.join(format!("cassandra/legacy_{v}_{t}"));
            let (target, donor) = (set(a), set(b));
            let name = format!("legacy_{v}_{a}");
            let intact = partitions(&target);
            let dir = copy_of(&target, &name);
            std::fs::copy(component(&donor, "Data.db"), component(&dir, "Data.db")).unwrap();
            let (r, written, _) = scrub_skip(&dir);
            let bad = invented(&written, &intact);
            assert!(
                bad.is_empty(),
                "{name} with the Data.db of legacy_{v}_{b}: {} partitions written altered: {}",
                bad.len(),
                r.stdout
            );
        }
    }
}

/// One bit flipped in the serialization header of `nb_clustering_zstd`'s
/// Statistics.db (byte 5628, campaign seed 41): the header fails its
/// checksum, yet scrub decoded with it and wrote 149 partitions with their
/// deletion times shifted. A header that fails its checksum decodes
/// nothing that is written.
#[test]
fn header_failing_its_checksum_decodes_nothing() {
    let case = "nb_clustering_zstd";
    let intact = partitions(&fixtures().join(case));
    let dir = fixture_copy(case, "header_checksum");
    let path = component(&dir, "Statistics.db");
    let mut b = std::fs::read(&path).unwrap();
    b[5628] ^= 1 << 2;
    std::fs::write(&path, b).unwrap();
    let (r, written, _) = scrub_skip(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("fails its checksum; no partition"),
        "the untrusted header is a finding: {}",
        r.stdout
    );
    let bad = invented(&written, &intact);
    assert!(
        bad.is_empty(),
        "{} partitions written altered: {bad:?}",
        bad.len()
    );
}

/// Data.db replaced by a larger uncompressed one (campaign seed 41:
/// `oa_wide_desc` with the Data.db of `oa_wide`): CRC.db has checksums for
/// the first 4 of its 8 chunks, and those fail. Past them, where nothing
/// checks the bytes, scrub found the other table's partition 2 by scanning
/// and wrote it. Bytes CRC.db has no checksum for are not salvaged when
/// the digest fails.
#[test]
fn bytes_past_crc_coverage_are_not_vouched_for() {
    let intact = partitions(&fixtures().join("oa_wide_desc"));
    let dir = fixture_copy("oa_wide_desc", "past_crc");
    std::fs::copy(
        component(&fixtures().join("oa_wide"), "Data.db"),
        component(&dir, "Data.db"),
    )
    .unwrap();
    let (r, written, _) = scrub_skip(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("have no checksum in CRC.db"),
        "the unchecked bytes are a finding: {}",
        r.stdout
    );
    let bad = invented(&written, &intact);
    assert!(bad.is_empty(), "partitions written altered: {bad:?}");
}

/// The 8-byte big-endian `value` in `bytes`, replaced by `value + 1`.
fn bump_i64(bytes: &mut [u8], value: i64) {
    let at = bytes
        .windows(8)
        .position(|w| w == value.to_be_bytes())
        .unwrap_or_else(|| panic!("{value} not found"));
    bytes[at..at + 8].copy_from_slice(&(value + 1).to_be_bytes());
}

/// Statistics.db records the smallest and largest timestamp of Data.db;
/// in `ma`..`me` no checksum covers them. Every partition decodes within
/// the range when its largest timestamp is one more than Data.db's, so
/// only the end of the scan shows that the file does not describe Data.db
/// (as another table's Statistics.db whose range holds every shifted
/// timestamp would): what was salvaged is withdrawn, from sstables and
/// NDJSON alike, and the counts say every partition is lost.
#[test]
fn a_recorded_timestamp_range_not_met_withdraws_the_salvage() {
    let Some(c) = crate::util::corpus() else {
        eprintln!("a_recorded_timestamp_range_not_met_withdraws_the_salvage: no corpus, skipped");
        return;
    };
    let target = c.join("cassandra/legacy_ma_clust_compact");
    let dir = copy_of(&target, "ma_max_timestamp");
    let st_path = component(&dir, "Statistics.db");
    let mut st = std::fs::read(&st_path).unwrap();
    // Its max_timestamp (dump-statistics).
    bump_i64(&mut st, 1_453_241_792_974_000);
    std::fs::write(&st_path, st).unwrap();

    let (r, written, _) = scrub_skip(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(written.is_empty(), "nothing is salvaged: {written:?}");
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let s = report["sstables"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(s["withdrawn"], 5, "{s}");
    assert_eq!(s["salvaged"], 0, "{s}");
    assert_eq!(s["lost_partitions"], 5, "{s}");
    assert_eq!(s["index_partitions"], 5, "{s}");
    assert_eq!(s["lost_bytes"], s["data_len"], "{s}");
    let finding = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "metadata_mismatch")
        .unwrap_or_else(|| panic!("a metadata_mismatch finding: {s}"));
    let msg = finding["message"].as_str().unwrap();
    assert!(
        msg.contains("1453241792974001") && msg.contains("5 withdrawn"),
        "{msg}"
    );

    let out = crate::util::scratch_dir("regression", "ma_max_timestamp_ndjson");
    let r = sstkit([
        "scrub",
        "--mode",
        "skip",
        "--salvage-format",
        "ndjson",
        "-o",
        "json",
        "--output-dir",
        out.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let salvaged = component(&out, "-salvaged.ndjson");
    assert_eq!(std::fs::read(&salvaged).unwrap().len(), 0, "{}", r.stdout);
    let lost = std::fs::read_to_string(component(&out, "-lost.ndjson")).unwrap();
    assert!(
        lost.contains(r#""lost":{"end":336070,"start":0}"#)
            || lost.contains(r#""lost":{"start":0,"end":336070}"#),
        "the whole of Data.db is listed lost: {lost}"
    );
}

/// Campaign seed 45: one bit flipped in a type name of an `ma` or `mc`
/// Statistics.db (no checksum). The `e` of `CounterColumnType` (the last
/// byte of `legacy_ma_clust_counter`'s) made the counter column a custom
/// type of an unknown class, the `o` of the partition key's
/// `org.apache...UTF8Type` (`legacy_mc_simple_counter_compact`) a custom
/// key type of another package: both were written as blobs. A class of
/// Cassandra's marshal package that Cassandra does not have, or one of its
/// classes under another package, is a damaged header: nothing decoded
/// with it is written.
#[test]
fn a_damaged_type_name_decodes_nothing() {
    let Some(c) = crate::util::corpus() else {
        eprintln!("a_damaged_type_name_decodes_nothing: no corpus, skipped");
        return;
    };
    // (sstable, where in Statistics.db to flip bit 0, the class it names then)
    type Flip = fn(&[u8]) -> usize;
    let cases: [(&str, Flip, &str); 2] = [
        (
            "legacy_ma_clust_counter",
            |b| b.len() - 1,
            "CounterColumnTypd",
        ),
        (
            "legacy_mc_simple_counter_compact",
            |b| {
                let name = b"org.apache.cassandra.db.marshal.UTF8Type";
                b.windows(name.len()).position(|w| w == name).unwrap()
            },
            "nrg.apache.cassandra.db.marshal.UTF8Type",
        ),
    ];
    for (case, at, named) in cases {
        let target = c.join("cassandra").join(case);
        let intact = partitions(&target);
        let dir = copy_of(&target, case);
        let st_path = component(&dir, "Statistics.db");
        let mut st = std::fs::read(&st_path).unwrap();
        let i = at(&st);
        st[i] ^= 1;
        std::fs::write(&st_path, st).unwrap();
        let (r, written, _) = scrub_skip(&dir);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case}: partitions written altered: {bad:?}"
        );
        assert!(
            r.stdout
                .contains(&format!("{named}, which Cassandra does not have")),
            "{case}: {}",
            r.stdout
        );
    }
}

//! Metadata that disagrees with Data.db: scrub writes no partition it
//! cannot vouch for. The cases are the campaign's, made from the fixtures.

use super::{component, fixture_copy, invented, partitions, scrub_skip};
use crate::util::fixtures;

/// Compressed fixtures of each BIG and BTI version with counters (the
/// campaign's phantoms were in counter tables) and clustering rows.
const COMPRESSED: [&str; 4] = ["nb_counters", "oa_counters", "da_counters", "nb_clustering"];

/// CompressionInfo.db deleted (TOC.txt still lists it): scrub used to scan
/// the compressed bytes as an uncompressed Data.db and wrote a phantom
/// partition (`oa_counters`, `da_counters`). Whatever it writes now is a
/// partition of the intact sstable, and with nothing written it says why.
#[test]
fn compression_info_deleted_is_never_read_as_raw() {
    for case in COMPRESSED {
        let intact = partitions(&fixtures().join(case));
        let dir = fixture_copy(case, case);
        std::fs::remove_file(component(&dir, "CompressionInfo.db")).unwrap();
        let (r, written) = scrub_skip(&dir);
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
        let (r, written) = scrub_skip(&dir);
        assert!(matches!(r.code, 0 | 1), "{case}: {}", r.stderr);
        assert_eq!(written, intact, "{case}: {}", r.stdout);
    }
}

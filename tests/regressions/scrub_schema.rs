//! `scrub --schema` on row-format sstables: the CREATE TABLE gives back the
//! types of a serialization header whose type names are damaged, and is
//! never trusted over a header that checks out.

use super::{component, copy_of, fixture_copy, invented, partitions, scrub_skip, scrub_skip_with};
use crate::util::{fixtures, scratch_dir, sstkit};

/// Flip bit 0 of the last byte of the first `name` in `dir`'s Statistics.db.
fn damage_type_name(dir: &std::path::Path, name: &str) {
    let path = component(dir, "Statistics.db");
    let mut b = std::fs::read(&path).unwrap();
    let at = (b.windows(name.len()).position(|w| w == name.as_bytes()))
        .unwrap_or_else(|| panic!("{}: no {name}", path.display()));
    b[at + name.len() - 1] ^= 1;
    std::fs::write(&path, b).unwrap();
}

/// `nb`: a type name of the header with a flipped bit fails the header's
/// checksum, and scrub writes nothing. With the table's CREATE TABLE the
/// header serializes to the bytes of its checksum again: every partition
/// is salvaged as it was, into an sstable with the right types.
#[test]
fn a_checksummed_header_is_repaired_from_the_create_table() {
    let case = "nb_clustering_zstd";
    let intact = partitions(&fixtures().join(case));
    let dir = fixture_copy(case, "schema_repair");
    damage_type_name(&dir, "marshal.DoubleType");
    let (r, written, _) = scrub_skip(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(written.is_empty(), "written without --schema: {written:?}");

    let schema = fixtures().join(case).join("schema.cql");
    let (r, written, out) = scrub_skip_with(&dir, &["--schema", schema.to_str().unwrap()]);
    assert_eq!(r.code, 1, "a damaged header is a finding: {}", r.stderr);
    assert!(
        r.stdout.contains("with --schema's it passes its checksum"),
        "{}",
        r.stdout
    );
    assert_eq!(written, intact, "every partition, as it was");
    let v = sstkit(["validate", "-o", "json", out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "the salvage validates: {}", v.stdout);
    let st = sstkit(["dump-statistics", "-o", "json", out.to_str().unwrap()]);
    assert!(st.stdout.contains("marshal.DoubleType"), "{}", st.stdout);
}

/// A CREATE TABLE with other types than a header that passes its checksum
/// is the operator's mistake: a finding, and the header decodes.
#[test]
fn a_header_that_checks_out_wins_over_the_create_table() {
    let case = "nb_clustering_zstd";
    let intact = partitions(&fixtures().join(case));
    let cql = std::fs::read_to_string(fixtures().join(case).join("schema.cql")).unwrap();
    let tmp = scratch_dir("regression", "schema_wrong");
    let wrong = tmp.join("schema.cql");
    std::fs::write(&wrong, cql.replace("v3 double", "v3 float")).unwrap();
    let dir = fixtures().join(case);
    let (r, written, _) = scrub_skip_with(&dir, &["--schema", wrong.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("--schema is not this table's; decoded with the header's"),
        "{}",
        r.stdout
    );
    assert_eq!(written, intact);
}

/// The CREATE TABLE of another table (columns the header has are not in
/// it): neither can be trusted, nothing is written.
#[test]
fn the_create_table_of_another_table_decodes_nothing() {
    let other = fixtures().join("nb_collections").join("schema.cql");
    let dir = fixture_copy("nb_clustering_zstd", "schema_other");
    damage_type_name(&dir, "marshal.DoubleType");
    let (r, written, _) = scrub_skip_with(&dir, &["--schema", other.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("which the CREATE TABLE of --schema lacks"),
        "{}",
        r.stdout
    );
    assert!(written.is_empty(), "{written:?}");
}

/// `ma` (no metadata checksum), campaign seed 45: `CounterColumnType`
/// became `CounterColumnTypd`, and scrub writes nothing. The CREATE TABLE
/// gives the type back; the data checks (keys, index, timestamps) still
/// stand guard, and every partition is salvaged as it was.
#[test]
fn an_unchecksummed_header_takes_the_create_table_types() {
    let Some(c) = crate::util::corpus() else {
        eprintln!("an_unchecksummed_header_takes_the_create_table_types: no corpus, skipped");
        return;
    };
    let case = "legacy_ma_clust_counter";
    let target = c.join("cassandra").join(case);
    let intact = partitions(&target);
    let dir = copy_of(&target, case);
    damage_type_name(&dir, "CounterColumnType");
    let tmp = scratch_dir("regression", "schema_ma");
    let schema = tmp.join("schema.cql");
    std::fs::write(
        &schema,
        "CREATE TABLE legacy_tables.legacy_ma_clust_counter (pk text, ck text, val counter, \
         PRIMARY KEY (pk, ck));",
    )
    .unwrap();
    let (r, written, _) = scrub_skip_with(&dir, &["--schema", schema.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("decoded with --schema's"), "{}", r.stdout);
    assert!(invented(&written, &intact).is_empty());
    assert_eq!(written.len(), intact.len(), "{}", r.stdout);
}

/// Overwrite the serialization header of `dir`'s Statistics.db (its body,
/// not its checksum) with 0xFF bytes: a length that cannot be, so the
/// header does not decode.
fn destroy_header(dir: &std::path::Path) {
    use sstkit_format::statistics::{MetadataKind, Statistics};
    let path = component(dir, "Statistics.db");
    let mut b = std::fs::read(&path).unwrap();
    let version = sstkit_format::descriptor::Descriptor::from_path(&path)
        .unwrap()
        .0
        .version;
    let st = Statistics::parse(&b, version.features()).unwrap();
    let h = (st.components.iter())
        .find(|c| c.kind == Some(MetadataKind::Header))
        .unwrap();
    let start = h.offset as usize;
    b[start..start + h.len as usize].fill(0xFF);
    std::fs::write(&path, b).unwrap();
}

/// A header that does not decode at all: scrub cannot open Data.db without
/// one (exit 3). With the CREATE TABLE, the columns and types are its, and
/// the encoding bases the smallest timestamp and local deletion time
/// Statistics.db records, as Cassandra's flushes write them; a salvage
/// stands only if all of Data.db decodes to exactly the recorded ranges.
/// On every single-sstable `nb` fixture Cassandra wrote: each is salvaged
/// exactly, or (counters, whose timestamp base is below the smallest
/// timestamp; TTLs, whose base no component records) nothing is written.
#[test]
fn a_lost_header_is_stood_in_for_by_the_create_table() {
    let root = fixtures();
    let mut exact = Vec::new();
    let mut refused = Vec::new();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let case = e.file_name().to_string_lossy().into_owned();
        let schema = e.path().join("schema.cql");
        if !case.starts_with("nb_") || !schema.is_file() {
            continue;
        }
        if crate::util::data_files(&e.path()).len() != 1 {
            continue;
        }
        let intact = partitions(&e.path());
        let dir = fixture_copy(&case, "schema_lost");
        destroy_header(&dir);
        let (r, written, _) = scrub_skip(&dir);
        assert_eq!(r.code, 3, "{case}: without --schema: {}", r.stderr);
        assert!(written.is_empty());
        let (r, written, _) = scrub_skip_with(&dir, &["--schema", schema.to_str().unwrap()]);
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case}: partitions written altered: {bad:?}"
        );
        if written == intact {
            assert_eq!(r.code, 1, "{case}: {}", r.stderr);
            assert!(
                r.stdout
                    .contains("holds no serialization header that decodes"),
                "{case}"
            );
            exact.push(case);
        } else {
            assert!(
                written.is_empty(),
                "{case}: {} of {}",
                written.len(),
                intact.len()
            );
            refused.push(case);
        }
    }
    assert!(
        exact.len() >= 15 && exact.contains(&"nb_clustering".to_string()),
        "salvaged exactly: {exact:?}; refused: {refused:?}"
    );
    assert!(
        refused.contains(&"nb_counters".to_string()),
        "a counter table's timestamp base is not its smallest timestamp: {refused:?}"
    );
}

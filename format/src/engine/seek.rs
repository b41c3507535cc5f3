//! Seek by token: where in Data.db a read of a token range starts (and
//! ends), found through the partition index instead of by decompressing
//! Data.db from its first byte.
//!
//! * BIG: the Summary.db samples searched by token, then Index.db read
//!   forward from the sample's entry ([`BigIndex::ceiling`]); without
//!   Summary.db, Index.db from its start (still far fewer bytes than
//!   Data.db).
//! * BTI: a ceiling search in the Partitions.db trie for the
//!   byte-comparable prefix of the token ([`BtiIndex::ceiling`]).
//!
//! The key the index gives is checked against Data.db at the position (one
//! small read, which the scan that follows reads again), so a damaged
//! index is an error here, and a caller that cannot seek scans from the
//! start as before: a seek may cost a read, never a partition.

use crate::component::Component;
use crate::data::{DataPos, DataSource};
use crate::error::{Error, ErrorKind};
use crate::io::ReadKind;
use crate::lookup::TokenBound;
use crate::read::{BigIndex, BtiIndex};
use crate::Sstable;

use super::Table;

/// The Data.db position of the first partition at or after `bound` (the
/// end of the data when every partition is before it); `None` when the
/// sstable has no index to search (no Index.db, or no Partitions.db), or
/// its partitioner has no token order known here (LocalPartitioner), or
/// `bound` is another partitioner's token.
///
/// Errors (a damaged index, or one that disagrees with Data.db) name the
/// file, component and offset.
pub fn ceiling(sst: &Sstable, t: &Table<'_>, bound: &TokenBound) -> crate::Result<Option<DataPos>> {
    let p = &t.partitioner;
    if !p.has_known_order() || p.token(&[]).partial_cmp(&bound.token).is_none() {
        return Ok(None);
    }
    let found = if sst.features().trie_index {
        if !sst.has(Component::Partitions) {
            return Ok(None);
        }
        if token_prefix_unsupported(&bound.token) {
            return Ok(None);
        }
        BtiIndex::open_without_filter(sst, p.clone(), &t.header.clustering_types)?.ceiling(bound)?
    } else {
        if !sst.has(Component::Index) {
            return Ok(None);
        }
        BigIndex::open_without_filter(sst, p.clone(), &t.header.clustering_fixed_lens())?
            .ceiling(bound)?
    };
    let mut data = DataSource::open(sst)?;
    data.set_read_kind(ReadKind::Point);
    let Some(c) = found else {
        return Ok(Some(DataPos(data.data_len())));
    };
    if c.in_data {
        return Ok(Some(c.position));
    }
    // The index's word is checked against Data.db: a partition of that
    // key must start there.
    let at = data.key_at(c.position)?;
    if at.as_deref() != Some(&c.key[..]) {
        return Err(Error::at(
            ErrorKind::BadValue(format!(
                "the index places the first partition from token {} at {}, \
                 but no partition of its key starts there",
                bound.token, c.position.0
            )),
            Component::Data,
            c.position.0,
            "token seek",
        )
        .in_file(&sst.data_path()));
    }
    Ok(Some(c.position))
}

/// Tokens whose byte-comparable form the trie search does not build.
fn token_prefix_unsupported(t: &crate::token::Token) -> bool {
    crate::bti::comparable::token_prefix(t).is_none()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::data::{Fragment, ScanReader};
    use crate::engine::{self, Selection, Shape, Sink};
    use crate::test_support as corpus;
    use crate::token::Token;

    /// Every bundled fixture's Data.db.
    fn fixtures() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
        let mut v: Vec<PathBuf> = std::fs::read_dir(root)
            .unwrap()
            .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with("-Data.db"))
            .collect();
        v.sort();
        v
    }

    /// The partitions of a whole scan: start, key and token; `None` when
    /// the sstable does not scan (a corrupt one).
    fn scan(sst: &Sstable, t: &Table<'_>) -> Option<Vec<(u64, Vec<u8>, Token)>> {
        let mut r = ScanReader::new(sst, t.header).ok()?;
        let mut v = Vec::new();
        loop {
            let at = r.next_position();
            match r.next_fragment().ok()? {
                None => return Some(v),
                Some(Fragment::PartitionStart { key, .. }) => {
                    let tok = t.partitioner.token(key);
                    v.push((at.0, key.to_vec(), tok));
                    r.skip_partition().ok()?;
                }
                Some(_) => return None,
            }
        }
    }

    /// Tokens just before and after `t` (the same token where there is none).
    fn around(t: &Token) -> [Token; 2] {
        match t {
            Token::Murmur3(v) => [
                Token::Murmur3(v.saturating_sub(1)),
                Token::Murmur3(v.saturating_add(1)),
            ],
            Token::Random(v) => [
                Token::Random(v.and_then(|v| v.checked_sub(1))),
                Token::Random(Some(v.map_or(0, |v| v.saturating_add(1)))),
            ],
            Token::ByteOrdered(k) => {
                let mut lo = k.clone();
                match lo.last_mut() {
                    Some(b) if *b > 0 => *b -= 1,
                    _ => {}
                }
                let mut hi = k.clone();
                hi.push(0);
                [Token::ByteOrdered(lo), Token::ByteOrdered(hi)]
            }
            other => [other.clone(), other.clone()],
        }
    }

    /// The least and greatest tokens of a partitioner's ring.
    fn ends(t: &Token) -> Vec<Token> {
        match t {
            Token::Murmur3(_) => vec![Token::Murmur3(i64::MIN), Token::Murmur3(i64::MAX)],
            Token::Random(_) => vec![Token::Random(None), Token::Random(Some(1 << 127))],
            Token::ByteOrdered(_) => vec![
                Token::ByteOrdered(Vec::new()),
                Token::ByteOrdered(vec![0xFF; 40]),
            ],
            _ => Vec::new(),
        }
    }

    /// What a seek found across the sstables checked.
    #[derive(Default, Debug)]
    struct Tally {
        sstables: usize,
        big: usize,
        bti: usize,
        seeks: usize,
        skipped: Vec<String>,
    }

    /// For tokens around every (sampled) partition and at the ring's ends,
    /// inclusive and exclusive: the seek lands on the first partition of a
    /// whole scan that is not before the bound.
    fn check_seeks(path: &Path, corrupt: bool, tally: &mut Tally) {
        let name = path.display().to_string();
        let Ok(sst) = Sstable::open_path(path) else {
            tally.skipped.push(format!("{name}: does not open"));
            return;
        };
        let Ok(b) = engine::bind(&sst) else {
            tally.skipped.push(format!("{name}: does not bind"));
            return;
        };
        let t = Table::new(&b.header, b.partitioner.clone(), 0);
        let Some(parts) = scan(&sst, &t) else {
            tally.skipped.push(format!("{name}: does not scan"));
            return;
        };
        let Some(first) = parts.first() else {
            return;
        };
        let data_len = DataSource::open(&sst).unwrap().data_len();
        let step = (parts.len() / 60).max(1);
        let mut tokens = ends(&first.2);
        for (_, _, tok) in parts.iter().step_by(step).chain(parts.last()) {
            tokens.push(tok.clone());
            tokens.extend(around(tok));
        }
        let mut seeked = false;
        for token in tokens {
            for exclusive in [false, true] {
                let bound = TokenBound {
                    token: token.clone(),
                    exclusive,
                };
                let want = parts
                    .iter()
                    .find(|p| bound.is_before(&p.2) == Some(false))
                    .map_or(data_len, |p| p.0);
                match ceiling(&sst, &t, &bound) {
                    Ok(Some(got)) => {
                        assert_eq!(got.0, want, "{name}: {bound:?}");
                        tally.seeks += 1;
                        seeked = true;
                    }
                    Ok(None) => {}
                    Err(e) => assert!(corrupt, "{name}: {bound:?}: {e}"),
                }
            }
        }
        tally.sstables += 1;
        if seeked {
            if sst.features().trie_index {
                tally.bti += 1;
            } else {
                tally.big += 1;
            }
        } else {
            tally
                .skipped
                .push(format!("{name}: no seek ({})", t.partitioner.name()));
        }
    }

    #[test]
    fn seeks_land_on_the_first_partition_of_fixtures() {
        let mut tally = Tally::default();
        for p in fixtures() {
            check_seeks(&p, false, &mut tally);
        }
        assert!(tally.skipped.is_empty(), "{:#?}", tally.skipped);
        assert!(tally.big > 30 && tally.bti > 10, "{tally:?}");
    }

    #[test]
    fn seeks_land_on_the_first_partition_of_corpus() {
        let files = corpus::files(|c| c == "Data.db");
        if files.is_empty() {
            return;
        }
        let mut tally = Tally::default();
        for f in &files {
            check_seeks(&f.path, f.is_corrupt(), &mut tally);
        }
        eprintln!(
            "seeks: {} sstables, {} BIG, {} BTI, {} seeks",
            tally.sstables, tally.big, tally.bti, tally.seeks
        );
        assert!(tally.big > 50 && tally.bti >= 4, "{tally:?}");
    }

    /// Where the fragments a run hands its sink start, grouped by
    /// partition (the fragments themselves come from the same decoder
    /// either way; the CLI tests compare rendered bytes).
    #[derive(Default)]
    struct Log(Vec<(Vec<u8>, Vec<String>)>);

    impl Sink for Log {
        fn partition_start(
            &mut self,
            _t: &Table<'_>,
            key: &[u8],
            d: &crate::deletion::DeletionTime,
            header_end: u64,
        ) -> std::io::Result<()> {
            self.0
                .push((key.to_vec(), vec![format!("start {d:?} {header_end}")]));
            Ok(())
        }
        fn static_row(
            &mut self,
            _t: &Table<'_>,
            r: &crate::data::Row<'_>,
            at: u64,
        ) -> std::io::Result<()> {
            self.push(format!("static {at} {}", r.position.0))
        }
        fn row(&mut self, _t: &Table<'_>, r: &crate::data::Row<'_>) -> std::io::Result<()> {
            self.push(format!("row {}", r.position.0))
        }
        fn marker(
            &mut self,
            _t: &Table<'_>,
            m: &crate::data::RangeTombstoneMarker<'_>,
        ) -> std::io::Result<()> {
            self.push(format!("marker {}", m.position.0))
        }
        fn partition_end(&mut self, _t: &Table<'_>) -> std::io::Result<()> {
            self.push("end".into())
        }
    }

    impl Log {
        fn push(&mut self, s: String) -> std::io::Result<()> {
            match self.0.last_mut() {
                Some(p) => p.1.push(s),
                None => panic!("a fragment outside a partition: {s}"),
            }
            Ok(())
        }
    }

    /// Token ranges over a scan's partitions: inside, from and to the
    /// ring's ends, just around partitions, and wrapping.
    fn ranges(parts: &[(u64, Vec<u8>, Token)], few: bool) -> Vec<(Token, Token)> {
        let n = parts.len();
        let tok = |i: usize| parts[i.min(n - 1)].2.clone();
        let mut v = Vec::new();
        let e = ends(&parts[0].2);
        let picks = if few {
            vec![0, n / 2, n - 1]
        } else {
            vec![0, n / 3, (2 * n) / 3, n.saturating_sub(2), n - 1]
        };
        for &a in &picks {
            for &b in &picks {
                if a < b {
                    v.push((tok(a), tok(b)));
                    v.push((around(&tok(a))[0].clone(), around(&tok(b))[1].clone()));
                    v.push((around(&tok(a))[1].clone(), around(&tok(b))[0].clone()));
                    // Wrapping: the ring after b, then up to a.
                    v.push((tok(b), tok(a)));
                }
            }
            if let [lo, hi] = &e[..] {
                v.push((lo.clone(), tok(a)));
                v.push((tok(a), hi.clone()));
            }
        }
        v
    }

    /// A token-range read through the engine gives the partitions, and
    /// their fragments, of a whole scan filtered by the range.
    fn check_ranges(path: &Path, few: bool, checked: &mut usize) {
        let Ok(sst) = Sstable::open_path(path) else {
            return;
        };
        let Ok(b) = engine::bind(&sst) else {
            return;
        };
        let t = Table::new(&b.header, b.partitioner.clone(), 0);
        let Some(parts) = scan(&sst, &t) else {
            return;
        };
        if parts.is_empty() || ends(&parts[0].2).is_empty() {
            return;
        }
        let mut whole = Log::default();
        if engine::run(
            &sst,
            &t,
            &Selection::all(),
            &Shape::default(),
            &mut whole,
            &mut |_| {},
        )
        .is_err()
        {
            return;
        }
        for (s, e) in ranges(&parts, few) {
            let sel = Selection::new(&t, None, [], Some((s.clone(), e.clone())));
            let want: Vec<_> = whole.0.iter().filter(|p| sel.wants(&t, &p.0)).collect();
            let mut got = Log::default();
            engine::run(&sst, &t, &sel, &Shape::default(), &mut got, &mut |_| {}).unwrap();
            let got: Vec<_> = got.0.iter().collect();
            assert!(
                got == want,
                "{}: range ({s}, {e}]: {} partitions, want {}",
                path.display(),
                got.len(),
                want.len()
            );
        }
        *checked += 1;
    }

    #[test]
    fn token_range_reads_equal_filtered_scans_of_fixtures() {
        let mut checked = 0;
        for p in fixtures() {
            check_ranges(&p, false, &mut checked);
        }
        assert!(checked > 60, "{checked}");
    }

    #[test]
    fn token_range_reads_equal_filtered_scans_of_corpus() {
        let files = corpus::files(|c| c == "Data.db");
        let mut checked = 0;
        for f in files.iter().filter(|f| !f.is_corrupt()) {
            check_ranges(&f.path, true, &mut checked);
        }
        eprintln!("token-range reads checked on {checked} corpus sstables");
    }

    /// The Data.db bytes a run of `sel` reads.
    fn data_bytes(path: &Path, range: Option<(usize, usize)>) -> (u64, usize) {
        let sst = Sstable::open_path(path).unwrap();
        let b = engine::bind(&sst).unwrap();
        let t = Table::new(&b.header, b.partitioner.clone(), 0);
        let sel = match range {
            None => Selection::all(),
            Some((a, z)) => {
                let parts = scan(&Sstable::open_path(path).unwrap(), &t).unwrap();
                let r = (parts[a].2.clone(), parts[z].2.clone());
                Selection::new(&t, None, [], Some(r))
            }
        };
        let mut log = Log::default();
        engine::run(&sst, &t, &sel, &Shape::default(), &mut log, &mut |_| {}).unwrap();
        (sst.io.stats().get(Component::Data).bytes, log.0.len())
    }

    /// A small token range near the end of a multi-chunk sstable reads a
    /// small part of Data.db, not all of it.
    #[test]
    fn a_range_near_the_end_reads_little_of_data_db() {
        for case in ["nb_clustering", "da_clustering", "nb_clustering_nocompress"] {
            let path = crate::test_support::fixture_data(case).unwrap();
            let (full, n) = data_bytes(&path, None);
            let (part, m) = data_bytes(&path, Some((n - 3, n - 1)));
            assert_eq!(m, 2, "{case}");
            eprintln!("{case}: {part} of {full}");
            assert!(
                part * 4 < full,
                "{case}: {part} bytes of Data.db read for 2 partitions, {full} for all {n}"
            );
        }
    }

    /// Damaged Summary.db, Index.db and Partitions.db: a seek returns a
    /// position, nothing, or an error naming the file, never panics; and a
    /// token-range read still runs (falling back to a scan from the start).
    #[test]
    fn damaged_indexes_never_panic() {
        let mut runs = 0;
        for (case, comp) in [
            ("nb_clustering", "Summary.db"),
            ("nb_clustering", "Index.db"),
            ("oa_wide", "Index.db"),
            ("da_clustering", "Partitions.db"),
            ("da_wide", "Partitions.db"),
        ] {
            let src = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/cassandra")
                .join(case);
            let clean = fixtures()
                .into_iter()
                .find(|p| p.starts_with(&src))
                .unwrap();
            let (parts, first) = {
                let sst = Sstable::open_path(&clean).unwrap();
                let b = engine::bind(&sst).unwrap();
                let t = Table::new(&b.header, b.partitioner.clone(), 0);
                let parts = scan(&sst, &t).unwrap();
                let first = parts[0].2.clone();
                (parts, first)
            };
            let len = std::fs::read_dir(&src)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().ends_with(comp))
                .map(|p| std::fs::metadata(p).unwrap().len())
                .unwrap();
            let mut cuts: Vec<u64> = (0..12).map(|i| len * i / 12).collect();
            cuts.push(len.saturating_sub(3));
            for (i, at) in cuts.into_iter().enumerate() {
                let dir = corpus::scratch("seek-damage");
                for e in std::fs::read_dir(&src).unwrap() {
                    let p = e.unwrap().path();
                    let to = dir.path().join(p.file_name().unwrap());
                    let mut b = std::fs::read(&p).unwrap();
                    if p.to_string_lossy().ends_with(comp) {
                        if i % 3 == 2 {
                            // Cut short.
                            b.truncate(at as usize);
                        } else {
                            // Bytes overwritten.
                            let end = (at as usize + 8).min(b.len());
                            for x in &mut b[at as usize..end] {
                                *x ^= if i % 3 == 0 { 0xFF } else { 0x5A };
                            }
                        }
                    }
                    std::fs::write(to, b).unwrap();
                }
                let data = dir.path().join(clean.file_name().unwrap());
                let Ok(sst) = Sstable::open_path(&data) else {
                    continue;
                };
                let Ok(b) = engine::bind(&sst) else {
                    continue;
                };
                let t = Table::new(&b.header, b.partitioner.clone(), 0);
                let mut tokens = ends(&first);
                for p in parts.iter().step_by((parts.len() / 8).max(1)) {
                    tokens.push(p.2.clone());
                }
                for token in &tokens {
                    let bound = TokenBound {
                        token: token.clone(),
                        exclusive: true,
                    };
                    if let Err(e) = ceiling(&sst, &t, &bound) {
                        let m = e.to_string();
                        assert!(m.contains(".db"), "{case} {comp} @{at}: {m}");
                    }
                    let sel = Selection::new(
                        &t,
                        None,
                        [],
                        Some((token.clone(), ends(&first)[1].clone())),
                    );
                    let mut log = Log::default();
                    let _ = engine::run(&sst, &t, &sel, &Shape::default(), &mut log, &mut |_| {});
                    runs += 1;
                }
            }
        }
        assert!(runs > 100, "{runs}");
    }

    /// A merged token-range read gives the merged partitions of a whole
    /// merged read filtered by the range (each sstable seeks on its own).
    #[test]
    fn merged_token_range_reads_equal_filtered_merges() {
        let mut checked = 0;
        for set in [
            "nb_merge_range",
            "da_merge_range",
            "oa_merge_overwrite",
            "da_deletes_merge",
        ] {
            let paths: Vec<PathBuf> = fixtures()
                .into_iter()
                .filter(|p| {
                    let dir = p.parent().unwrap().file_name().unwrap().to_string_lossy();
                    dir.starts_with(&format!("{set}_"))
                })
                .collect();
            assert!(paths.len() >= 2, "{set}");
            let opened = paths.iter().map(|p| {
                let sst = Sstable::open_path(p)?;
                let b = engine::bind(&sst)?;
                Ok::<_, crate::Error>((sst, b))
            });
            let inputs =
                engine::MergeInputs::new(opened.map(|r| r.map_err(engine::Error::from))).unwrap();
            let t = Table::new(&inputs.schema.header, inputs.partitioner.clone(), 0);
            let mut whole = Log::default();
            inputs
                .dump(
                    &t,
                    &Selection::all(),
                    &Shape::default(),
                    &mut whole,
                    &mut |_| {},
                )
                .unwrap();
            let parts: Vec<(u64, Vec<u8>, Token)> = whole
                .0
                .iter()
                .map(|p| (0, p.0.clone(), t.partitioner.token(&p.0)))
                .collect();
            for (s, e) in ranges(&parts, false) {
                let sel = Selection::new(&t, None, [], Some((s.clone(), e.clone())));
                let want: Vec<_> = whole.0.iter().filter(|p| sel.wants(&t, &p.0)).collect();
                let mut got = Log::default();
                inputs
                    .dump(&t, &sel, &Shape::default(), &mut got, &mut |_| {})
                    .unwrap();
                let got: Vec<_> = got.0.iter().collect();
                assert!(
                    got == want,
                    "{set}: ({s}, {e}]: {} vs {}",
                    got.len(),
                    want.len()
                );
                checked += 1;
            }
        }
        assert!(checked > 40, "{checked}");
    }
}

//! The streamed index (cursor and samples) and the capped list answer every
//! query as the former whole-index sorted list did, in any query order, on
//! the fixtures and the corpus (BIG and BTI, corrupt sets included).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;
use crate::bti::partitions::for_each_entry;
use crate::bti::IoSource;
use crate::statistics::Statistics;
use crate::validate::partitioner_of;

/// A position, its key (Index.db, Rows.db) and its hash byte (BTI leaf).
type OldEntry = (u64, Option<Vec<u8>>, Option<u8>);

/// The former implementation: every entry in memory, sorted by position,
/// keys from a heap copy of Index.db or kept from Rows.db.
struct Old {
    entries: Vec<OldEntry>,
    trusted: bool,
}

impl Old {
    fn read(sst: &Sstable, partitioner: &Partitioner, data_len: u64) -> Option<Old> {
        let mut entries = Vec::new();
        let mut trusted = true;
        if sst.features().trie_index {
            if !sst.has(Component::Partitions) {
                return None;
            }
            let footer = read_footer(&sst.io).ok()?;
            let mut src = IoSource::new(&sst.io, Component::Partitions).ok()?;
            let mut rows = if sst.has(Component::Rows) {
                IoSource::new(&sst.io, Component::Rows).ok()
            } else {
                None
            };
            let flavor = flavor_of(sst);
            let walked = for_each_entry(&mut src, footer.root, &mut |e| {
                match e.payload.position {
                    PartitionPosition::Data(p) => entries.push((p, None, e.payload.hash)),
                    PartitionPosition::Rows(off) => {
                        match rows
                            .as_mut()
                            .and_then(|r| RowsEntry::read(r, off, flavor).ok())
                        {
                            Some(re) => entries.push((re.data_position, Some(re.key), None)),
                            None => trusted = false,
                        }
                    }
                }
                Ok(true)
            });
            trusted &= walked.is_ok();
        } else {
            if !sst.has(Component::Index) {
                return None;
            }
            let index = sst.read_component(Component::Index).ok()?;
            let mut r = IndexReader::new(&index, sst.features());
            let mut last: Option<&[u8]> = None;
            loop {
                match r.next() {
                    Ok(Some(e)) => {
                        if let Some(l) = last {
                            trusted &= partitioner.compare_decorated(l, e.key) == Ordering::Less;
                        }
                        last = Some(e.key);
                        entries.push((e.position, Some(e.key.to_vec()), None));
                    }
                    Ok(None) => break,
                    Err(_) => {
                        trusted = false;
                        break;
                    }
                }
            }
        }
        let increasing = entries.windows(2).all(|w| w[0].0 < w[1].0);
        let inside = entries.iter().all(|e| e.0 < data_len);
        let from_zero = entries.first().is_none_or(|e| e.0 == 0);
        trusted &= increasing && inside && from_zero && data_len > 0;
        entries.sort_unstable_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        Some(Old { entries, trusted })
    }

    fn next_at_or_after(&self, from: u64) -> Option<u64> {
        let i = self.entries.partition_point(|e| e.0 < from);
        self.entries.get(i).map(|e| e.0)
    }

    fn get(&self, pos: u64) -> Option<&OldEntry> {
        let i = self.entries.binary_search_by_key(&pos, |e| e.0).ok()?;
        self.entries.get(i)
    }

    fn key_agrees(&self, pos: u64, key: &[u8]) -> bool {
        match self.get(pos) {
            None => true,
            Some((_, Some(k), _)) => k == key,
            Some((_, None, Some(h))) => crate::bti::comparable::hash_byte(key) == *h,
            Some(_) => true,
        }
    }

    fn keys_in(&self, range: &Range<u64>, max: usize) -> Vec<Vec<u8>> {
        let i = self.entries.partition_point(|e| e.0 < range.start);
        self.entries[i..]
            .iter()
            .take_while(|e| e.0 < range.end)
            .take(max)
            .filter_map(|e| e.1.clone())
            .collect()
    }
}

/// A deterministic shuffle (no dependency on a random crate).
fn shuffled(v: &[u64], seed: u64) -> Vec<u64> {
    let mut v = v.to_vec();
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

/// Ask `new` and `old` the same queries in the orders scrub uses them
/// (forward) and in orders it may (backward, random); panic on the first
/// difference. Returns the number of queries.
fn compare(new: &Starts<'_>, old: &Old, data_len: u64, what: &str) -> usize {
    assert_eq!(new.trusted, old.trusted, "{what}: trusted");
    let mut points: Vec<u64> = vec![0, 1, data_len, data_len + 1, u64::MAX / 2];
    // At most about 64 entries (evenly spread), each with its neighbours.
    let stride = old.entries.len() / 64 + 1;
    for e in old.entries.iter().step_by(stride) {
        points.extend([e.0.saturating_sub(1), e.0, e.0 + 1]);
    }
    points.sort_unstable();
    points.dedup();
    let sorted = points.clone();
    let mut orders = vec![points.clone()];
    orders.push(points.iter().rev().copied().collect());
    orders.push(shuffled(&points, 0x9e37_79b9));
    orders.push(shuffled(&points, 42));
    let mut n = 0;
    for order in &orders {
        for (i, &q) in order.iter().enumerate() {
            n += 1;
            assert_eq!(
                new.next_at_or_after(q),
                old.next_at_or_after(q),
                "{what}: next_at_or_after({q})"
            );
            assert_eq!(
                new.is_start(q),
                old.get(q).is_some(),
                "{what}: is_start({q})"
            );
            let key = old.get(q).and_then(|e| e.1.clone()).unwrap_or_default();
            for k in [key.as_slice(), b"\0\x03abc".as_slice()] {
                assert_eq!(
                    new.key_agrees(q, k),
                    old.key_agrees(q, k),
                    "{what}: key_agrees({q}, {k:?})"
                );
            }
            // A range over a few points after `q`.
            let at = sorted.partition_point(|&p| p < q);
            let end = sorted[(at + 1 + i % 9).min(sorted.len() - 1)].max(q);
            for max in [1, 3, 1000] {
                assert_eq!(
                    new.keys_in(&(q..end), max),
                    old.keys_in(&(q..end), max),
                    "{what}: keys_in({q}..{end}, {max})"
                );
            }
        }
    }
    n
}

/// Every sstable (its Data.db path) of the fixtures and the corpus.
fn sstables() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
    let mut out = Vec::new();
    for case in std::fs::read_dir(fixtures).unwrap().flatten() {
        for f in std::fs::read_dir(case.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if f.file_name().to_string_lossy().ends_with("-Data.db") {
                out.push(f.path());
            }
        }
    }
    out.extend(
        crate::test_support::files(|c| c == "Data.db")
            .into_iter()
            .map(|f| f.path),
    );
    out.sort();
    out
}

fn data_len(sst: &Sstable) -> Option<u64> {
    Some(crate::data::DataSource::open(sst).ok()?.data_len())
}

fn partitioner(sst: &Sstable) -> Partitioner {
    sst.read_component(Component::Statistics)
        .ok()
        .and_then(|b| Statistics::parse_lenient(&b, sst.features()).ok())
        .map_or(Partitioner::Murmur3, |st| partitioner_of(&st))
}

const SMALL: Tuning = Tuning {
    sample_every: 3,
    window: 16,
    max_listed: usize::MAX,
    force_list: false,
};

#[test]
fn streamed_and_listed_answer_as_the_sorted_list() {
    let (mut big, mut bti, mut corrupt, mut queries) = (0, 0, 0, 0);
    for path in sstables() {
        let Ok(sst) = Sstable::open_path(&path) else {
            continue;
        };
        let Some(data_len) = data_len(&sst) else {
            continue;
        };
        let p = partitioner(&sst);
        let Some(old) = Old::read(&sst, &p, data_len) else {
            assert!(Starts::read(&sst, &p, data_len, None).is_none(), "{path:?}");
            continue;
        };
        let tunings = [
            TUNING,
            SMALL,
            Tuning {
                sample_every: 1,
                window: 7,
                ..SMALL
            },
            Tuning {
                force_list: true,
                ..SMALL
            },
        ];
        let started = std::time::Instant::now();
        for t in tunings {
            let new =
                Starts::read_with(&sst, &p, data_len, t, None).expect("an index the old read");
            assert_eq!(new.unlisted, 0);
            let what = format!("{} ({t:?})", path.display());
            queries += compare(&new, &old, data_len, &what);
        }
        let took = started.elapsed();
        if took.as_secs() >= 2 {
            eprintln!(
                "{}: {} entries, {took:?}",
                path.display(),
                old.entries.len()
            );
        }
        if sst.features().trie_index {
            bti += 1;
        } else {
            big += 1;
        }
        if !old.trusted {
            corrupt += 1;
        }
    }
    eprintln!("{big} BIG and {bti} BTI sstables ({corrupt} untrusted indexes), {queries} queries");
    assert!(big > 0 && bti > 0, "fixtures missing");
}

/// The `nb_clustering` fixture: its sstable, Data.db's length and its partitioner.
fn clustering() -> (Sstable, u64, Partitioner) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/cassandra/nb_clustering/nb-1-big-Data.db");
    let sst = Sstable::open_path(&path).unwrap();
    let data_len = data_len(&sst).unwrap();
    let p = partitioner(&sst);
    (sst, data_len, p)
}

#[test]
fn a_listed_index_beyond_the_cap_keeps_its_first_entries() {
    let (sst, data_len, p) = clustering();
    let old = Old::read(&sst, &p, data_len).unwrap();
    let n = old.entries.len();
    assert!(n > 3, "fixture has {n} partitions");
    let t = Tuning {
        max_listed: 2,
        force_list: true,
        ..SMALL
    };
    let new = Starts::read_with(&sst, &p, data_len, t, None).unwrap();
    assert_eq!(new.unlisted, n as u64 - 2);
    // The first two entries in index order are Data.db's first two.
    assert_eq!(new.next_at_or_after(0), Some(old.entries[0].0));
    let second = old.entries[1].0;
    assert_eq!(new.next_at_or_after(old.entries[0].0 + 1), Some(second));
    assert_eq!(new.next_at_or_after(second + 1), None);
    assert!(!new.is_start(old.entries[2].0));
}

#[test]
fn the_cursor_resumes_backward_at_the_nearest_sample() {
    let (sst, data_len, p) = clustering();
    let new = Starts::read_with(&sst, &p, data_len, SMALL, None).unwrap();
    let Kind::Stream(s) = &new.kind else {
        panic!("an index in order is streamed");
    };
    let last = s.samples.last().unwrap().0;
    assert!(s.samples.len() > 1, "fixture too small for samples");
    assert_eq!(new.next_at_or_after(last + 1).is_some(), s.count % 3 != 1);
    let at = s.cursor.borrow().at;
    assert!(at >= (s.samples.len() as u64 - 1) * 3);
    // Back to the first partition: from sample 0, not by reading forward.
    assert_eq!(new.next_at_or_after(0), Some(0));
    assert_eq!(s.cursor.borrow().at, 0);
    assert_eq!(s.cursor.borrow().behind, None);
}

#[test]
fn the_partition_just_read_is_answered_without_going_back() {
    let (sst, data_len, p) = clustering();
    let old = Old::read(&sst, &p, data_len).unwrap();
    let new = Starts::read_with(&sst, &p, data_len, SMALL, None).unwrap();
    let Kind::Stream(s) = &new.kind else {
        panic!("an index in order is streamed");
    };
    assert!(old.entries.len() > 4, "fixture too small");
    // As the walk asks: the next partition's start, then the one just read.
    for (i, e) in old.entries.iter().enumerate() {
        let next = old.entries.get(i + 1).map(|n| n.0);
        assert_eq!(new.next_at_or_after(e.0 + 1), next);
        let at = s.cursor.borrow().at;
        assert!(new.is_start(e.0));
        assert!(!new.is_start(e.0 + 1) || next == Some(e.0 + 1));
        let key = e.1.clone().unwrap();
        assert!(new.key_agrees(e.0, &key));
        assert!(!new.key_agrees(e.0, b"\0\x03abc"));
        assert_eq!(s.cursor.borrow().at, at, "entry {i}: the cursor moved");
    }
}

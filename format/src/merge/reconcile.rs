//! Cassandra 5.0's reconciliation rules for two versions of the same thing
//! (a cell, a row marker, a deletion), as pure functions.
//!
//! C\* `o.a.c/db/rows/Cells.java` (`reconcile`, `resolveRegular`,
//! `resolveCounter`), `o.a.c/db/LivenessInfo.java` (`supersedes`),
//! `o.a.c/db/DeletionTime.java` (`supersedes`, `deletes`),
//! `o.a.c/db/rows/Row.java` (`Deletion.isShadowedBy`),
//! `o.a.c/db/context/CounterContext.java` (`merge`).

use std::cmp::Ordering;

use crate::component::Component;
use crate::cur::Cur;
use crate::data::LivenessInfo;
use crate::deletion::DeletionTime;
use crate::value::{decode_counter, CounterShard, ShardKind};

use super::MCell;

/// `DeletionTime.supersedes`: a later timestamp, or the same timestamp and
/// a later local deletion time.
pub fn supersedes(a: &DeletionTime, b: &DeletionTime) -> bool {
    a.marked_for_delete_at > b.marked_for_delete_at
        || (a.marked_for_delete_at == b.marked_for_delete_at
            && a.local_deletion_time > b.local_deletion_time)
}

/// The larger of two deletions (`a` on a tie).
pub fn max_deletion(a: DeletionTime, b: DeletionTime) -> DeletionTime {
    if supersedes(&b, &a) {
        b
    } else {
        a
    }
}

/// `DeletionTime.deletes(timestamp)`: data written at or before the
/// deletion's timestamp is shadowed.
pub fn deletes(d: &DeletionTime, timestamp: i64) -> bool {
    timestamp <= d.marked_for_delete_at
}

fn is_expiring(l: &LivenessInfo) -> bool {
    l.ttl.is_some() || l.expired
}

/// `LivenessInfo.supersedes`: the later timestamp; on a tie an expired
/// marker wins, then (both expiring or both not) the later expiration, else
/// the expiring one.
pub fn liveness_supersedes(a: &LivenessInfo, b: &LivenessInfo) -> bool {
    if a.timestamp != b.timestamp {
        return a.timestamp > b.timestamp;
    }
    if a.expired != b.expired {
        return a.expired;
    }
    if is_expiring(a) == is_expiring(b) {
        let ea = a.local_expiration_time.unwrap_or(i64::MAX);
        let eb = b.local_expiration_time.unwrap_or(i64::MAX);
        return ea > eb;
    }
    is_expiring(a)
}

/// The rule [`liveness_supersedes`] used to pick row marker `winner` over
/// `loser` when their timestamps are equal, in words (`--explain`).
pub fn marker_tie_break_rule(winner: &LivenessInfo, loser: &LivenessInfo) -> &'static str {
    if winner.expired != loser.expired {
        "an expired marker wins"
    } else if is_expiring(winner) != is_expiring(loser) {
        "an expiring marker beats a non-expiring one"
    } else if winner.local_expiration_time != loser.local_expiration_time {
        "the later expiration wins"
    } else {
        "identical versions"
    }
}

/// Which of two cells of the same column (and path) wins.
pub fn reconcile_cells(left: &MCell, right: &MCell) -> Winner {
    if (left.counter_column && !left.is_deleted()) || (right.counter_column && !right.is_deleted())
    {
        return resolve_counter(left, right);
    }
    if resolve_regular(left, right) {
        Winner::Left
    } else {
        Winner::Right
    }
}

/// The outcome of [`reconcile_cells`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Winner {
    /// The first cell.
    Left,
    /// The second cell.
    Right,
    /// Neither: counter contexts merged shard by shard into this value, with
    /// the larger timestamp.
    Merged {
        /// The merged counter context.
        value: Vec<u8>,
        /// The larger of the two timestamps.
        timestamp: i64,
    },
}

/// `Cells.resolveRegular`; true when `left` wins.
fn resolve_regular(left: &MCell, right: &MCell) -> bool {
    regular_left_wins(&Version::of_owned(left), &Version::of_owned(right))
}

/// What [`regular_left_wins`] reads of a cell, owned ([`MCell`]) or borrowed
/// ([`crate::data::Cell`]).
pub(crate) struct Version<'v> {
    timestamp: i64,
    local_deletion_time: Option<i64>,
    expiring: bool,
    value: &'v [u8],
}

impl<'v> Version<'v> {
    fn of_owned(c: &'v MCell) -> Self {
        Version {
            timestamp: c.timestamp,
            local_deletion_time: c.local_deletion_time,
            expiring: c.is_expiring(),
            value: &c.value,
        }
    }

    pub(crate) fn of(c: &crate::data::Cell<'v>) -> Self {
        Version {
            timestamp: c.timestamp,
            local_deletion_time: c.local_deletion_time,
            expiring: c.flags & crate::data::model::cell_flags::IS_EXPIRING != 0,
            value: c.value,
        }
    }
}

/// `Cells.resolveRegular` of two versions of a cell that is not a counter;
/// true when `left` (from the earlier source) wins.
pub(crate) fn regular_left_wins(left: &Version<'_>, right: &Version<'_>) -> bool {
    if left.timestamp != right.timestamp {
        return left.timestamp > right.timestamp;
    }
    let (ll, rl) = (left.local_deletion_time, right.local_deletion_time);
    if ll.is_some() || rl.is_some() {
        // A tombstone or expiring cell beats a live one of the same
        // timestamp, whatever the clock says (CASSANDRA-14592).
        if ll.is_some() != rl.is_some() {
            return ll.is_some();
        }
        // Then a tombstone beats an expiring cell; then the later local
        // deletion (expiration) time.
        let (lt, rt) = (!left.expiring, !right.expiring);
        if lt != rt {
            return lt;
        }
        if ll != rl {
            return ll > rl;
        }
    }
    // The greater value (unsigned bytes); `left` on equality.
    left.value.cmp(right.value) != Ordering::Less
}

/// `Cells.resolveCounter`: a tombstone always wins (CASSANDRA-7346); live
/// counter contexts merge shard by shard.
fn resolve_counter(left: &MCell, right: &MCell) -> Winner {
    let pick = |l: bool| if l { Winner::Left } else { Winner::Right };
    let (lt, rt) = (left.is_deleted(), right.is_deleted());
    if lt || rt {
        if lt != rt {
            return pick(lt);
        }
        return pick(resolve_regular(left, right));
    }
    let (le, re) = (left.value.is_empty(), right.value.is_empty());
    if le || re {
        if le != re {
            return pick(le);
        }
        return pick(left.timestamp > right.timestamp);
    }
    let timestamp = left.timestamp.max(right.timestamp);
    match merge_counter_contexts(&left.value, &right.value) {
        Some(value) => {
            if value == left.value && timestamp == left.timestamp {
                Winner::Left
            } else if value == right.value && timestamp == right.timestamp {
                Winner::Right
            } else {
                Winner::Merged { value, timestamp }
            }
        }
        // A context that does not decode: the later write wins.
        None => pick(left.timestamp >= right.timestamp),
    }
}

/// `CounterContext.merge`: the union of the shards by counter id; for one
/// id in both, a global shard beats the others and two global (or two
/// remote) shards keep the higher clock (the higher count on a tie), two
/// local shards add up. `None` when a context does not decode.
pub fn merge_counter_contexts(a: &[u8], b: &[u8]) -> Option<Vec<u8>> {
    let ca = decode_counter(&mut Cur::new(a, Component::Data, 0)).ok()?;
    let cb = decode_counter(&mut Cur::new(b, Component::Data, 0)).ok()?;
    let mut x = ca.shards;
    let mut y = cb.shards;
    x.sort_by_key(|p| p.counter_id.0);
    y.sort_by_key(|p| p.counter_id.0);
    let mut out: Vec<CounterShard> = Vec::with_capacity(x.len() + y.len());
    let (mut i, mut j) = (0, 0);
    while i < x.len() || j < y.len() {
        let ord = match (x.get(i), y.get(j)) {
            (Some(p), Some(q)) => p.counter_id.0.cmp(&q.counter_id.0),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match ord {
            Ordering::Less => {
                out.push(x[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(y[j]);
                j += 1;
            }
            Ordering::Equal => {
                out.push(merge_shard(x[i], y[j]));
                i += 1;
                j += 1;
            }
        }
    }
    Some(encode_counter(&out))
}

fn merge_shard(l: CounterShard, r: CounterShard) -> CounterShard {
    let by_clock = |l: CounterShard, r: CounterShard| {
        if l.clock == r.clock {
            if l.count >= r.count {
                l
            } else {
                r
            }
        } else if l.clock > r.clock {
            l
        } else {
            r
        }
    };
    match (l.kind, r.kind) {
        (ShardKind::Global, ShardKind::Global) => by_clock(l, r),
        (ShardKind::Global, _) => l,
        (_, ShardKind::Global) => r,
        (ShardKind::Local, ShardKind::Local) => CounterShard {
            clock: l.clock.wrapping_add(r.clock),
            count: l.count.wrapping_add(r.count),
            ..l
        },
        (ShardKind::Local, _) => l,
        (_, ShardKind::Local) => r,
        _ => by_clock(l, r),
    }
}

/// Serialize shards (sorted by counter id) as a counter context: the header
/// lists local shards by index and global ones by `i16::MIN + index` (§3.13).
pub fn encode_counter(shards: &[CounterShard]) -> Vec<u8> {
    let header: Vec<i16> = shards
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s.kind {
            ShardKind::Local => Some(i as i16),
            ShardKind::Global => Some(i16::MIN.wrapping_add(i as i16)),
            ShardKind::Remote => None,
        })
        .collect();
    let mut out = Vec::with_capacity(2 + 2 * header.len() + 32 * shards.len());
    out.extend_from_slice(&(header.len() as i16).to_be_bytes());
    for h in &header {
        out.extend_from_slice(&h.to_be_bytes());
    }
    for s in shards {
        out.extend_from_slice(&s.counter_id.0);
        out.extend_from_slice(&s.clock.to_be_bytes());
        out.extend_from_slice(&s.count.to_be_bytes());
    }
    out
}

/// The rule [`reconcile_cells`] used to pick `winner` over `loser` when
/// their timestamps are equal, in words (`--explain`).
pub fn tie_break_rule(winner: &MCell, loser: &MCell) -> &'static str {
    if winner.counter_column && (winner.is_deleted() != loser.is_deleted()) {
        return "a counter tombstone always wins";
    }
    let (wl, ll) = (winner.local_deletion_time, loser.local_deletion_time);
    if wl.is_some() != ll.is_some() {
        return if winner.is_deleted() {
            "a tombstone beats a live cell"
        } else {
            "an expiring cell beats a live one"
        };
    }
    if wl.is_some() && winner.is_expiring() != loser.is_expiring() {
        return "a tombstone beats an expiring cell";
    }
    if wl != ll {
        return "the later local deletion time wins";
    }
    if winner.value == loser.value {
        "identical versions"
    } else {
        "the greater value wins"
    }
}

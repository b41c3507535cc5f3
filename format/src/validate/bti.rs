//! The BTI partition index (Partitions.db, and the Rows.db entries it
//! points to), read to its end: a cut or damaged file is a finding, as a
//! cut Index.db is for the BIG format. The tries' contents are not yet
//! checked against Data.db.

use crate::bti::index::flavor_of;
use crate::bti::partitions::for_each_entry;
use crate::bti::{PartitionPosition, PartitionsFooter, RowsEntry, SliceSource};
use crate::component::Component;
use crate::error::{Error, ErrorKind};
use crate::sstable::Sstable;

use super::problem::{Problem, ProblemClass};
use super::{read_optional, Cuts, Report};

/// Check Partitions.db and Rows.db of `sst`: the footer decodes, every
/// entry of the trie is reached, each Rows.db entry a partition points to
/// decodes, and the entries are as many as the footer counts.
pub(super) fn check(sst: &Sstable, report: &mut Report, mut cuts: Option<&mut Cuts>) {
    let Some(part) = read_optional(sst, Component::Partitions, report, "index") else {
        return;
    };
    let footer = match PartitionsFooter::decode(&part, part.len() as u64) {
        Ok(f) => f,
        Err(e) => {
            report
                .problems
                .push(Problem::from_error(&e, Component::Partitions, 0));
            report.check("index", false, Some("Partitions.db does not decode".into()));
            return;
        }
    };
    let rows = if sst.has(Component::Rows) {
        read_optional(sst, Component::Rows, report, "index")
    } else {
        None
    };
    let flavor = flavor_of(sst);
    let mut src = SliceSource::new(&part, Component::Partitions);
    let mut rows_src = rows
        .as_deref()
        .map(|r| SliceSource::new(r, Component::Rows));
    let mut count = 0u64;
    let walked = for_each_entry(&mut src, footer.root, &mut |e| {
        count += 1;
        let at = match e.payload.position {
            PartitionPosition::Data(pos) => pos,
            PartitionPosition::Rows(off) => {
                let Some(rs) = rows_src.as_mut() else {
                    return Err(Error::at(
                        ErrorKind::MissingComponent,
                        Component::Rows,
                        off,
                        "row index entry",
                    ));
                };
                RowsEntry::read(rs, off, flavor)?.data_position
            }
        };
        if let Some(c) = cuts.as_deref_mut() {
            c.partition(at, None);
        }
        Ok(true)
    });
    let mut ok = true;
    if let Err(e) = walked {
        report
            .problems
            .push(Problem::from_error(&e, Component::Partitions, 0));
        ok = false;
    } else if count != footer.key_count {
        report.problems.push(Problem::new(
            ProblemClass::IndexMismatch,
            Component::Partitions,
            footer.root,
            format!(
                "the trie holds {count} partitions, its footer counts {}",
                footer.key_count
            ),
        ));
        ok = false;
    }
    report.check(
        "index",
        ok,
        Some("Partitions.db and Rows.db read to their ends; not checked against Data.db".into()),
    );
}

//! Streaming Index.db through the sstable's IO layer, entry by entry, in
//! bounded reads.

use super::{IndexEntry, IndexReader};
use crate::component::Component;
use crate::error::{Error, ErrorKind};
use crate::io::ReadKind;
use crate::sstable::Sstable;

/// Index.db bytes per read.
const READ_SIZE: u64 = 1 << 20;

/// Stream every Index.db entry through `f`, reading `READ_SIZE` bytes at a
/// time and re-reading from the last complete entry when one straddles a
/// read boundary.
pub fn for_each_entry<E: From<Error>>(
    sst: &Sstable,
    mut f: impl FnMut(&IndexEntry<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    sst.require(Component::Index)?;
    let path = sst.path(Component::Index);
    let len = sst.io.len(Component::Index).map_err(|e| e.in_file(&path))?;
    // Every sstable has a partition, so an empty Index.db was cut short.
    if len == 0 {
        return Err(Error::at(
            ErrorKind::UnexpectedEof { need: 1, have: 0 },
            Component::Index,
            0,
            "index entry",
        )
        .in_file(&path)
        .into());
    }
    let mut base = 0u64;
    let mut want = READ_SIZE;
    while base < len {
        let n = want.min(len - base);
        let buf = sst
            .io
            .read(Component::Index, base, n as usize, ReadKind::Scan)
            .map_err(|e| e.in_file(&path))?;
        let at_end = base + n == len;
        let mut r = IndexReader::at(&buf, base, sst.features());
        let mut next = base;
        loop {
            match r.next() {
                Ok(Some(e)) => {
                    next = e.offset + e.len;
                    f(&e)?;
                }
                Ok(None) => break,
                // An entry straddles the end of this read: read again from it.
                Err(e) if !at_end && is_truncation(&e.kind) => break,
                Err(e) => return Err(e.in_file(&path).into()),
            }
        }
        if at_end {
            break;
        }
        if next == base {
            // One entry larger than the read: grow the read (bounded by the file).
            want = want.saturating_mul(2);
        } else {
            base = next;
            want = READ_SIZE;
        }
    }
    Ok(())
}

/// True for a decode error that more bytes could resolve (an entry cut by
/// the end of a read).
pub(crate) fn is_truncation(k: &ErrorKind) -> bool {
    matches!(
        k,
        ErrorKind::UnexpectedEof { .. } | ErrorKind::LengthOutOfRange { .. }
    )
}

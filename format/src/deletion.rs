//! `DeletionTime`: the partition-level (and promoted-index) tombstone.
//!
//! Two serializers (`shared/docs/sstable-format.md` §3.2; C\*
//! `o.a.c/db/DeletionTime.java` `LegacySerializer` / `Serializer`):
//!
//! Legacy (`< oa`, and every Scylla version's Data.db / Index.db) — 12 bytes:
//!
//! | offset | field | type | notes |
//! |---|---|---|---|
//! | 0 | local_deletion_time | i32 | seconds since epoch; `0x7FFFFFFF` = none |
//! | 4 | marked_for_delete_at | i64 | microseconds; `i64::MIN` = none |
//!
//! LIVE = `7F FF FF FF 80 00 00 00 00 00 00 00`.
//!
//! `oa`+ (`hasUIntDeletionTime`) — 1 or 12 bytes:
//!
//! | first byte | layout |
//! |---|---|
//! | `0x80` | LIVE (1 byte) |
//! | other values with bit 7 set | corrupt |
//! | bit 7 clear | `marked_for_delete_at:i64` (first byte is its top byte), `local_deletion_time:u32` |
//!
//! Note the swapped field order and the unsigned LDT in `oa`.

use crate::cur::Cur;
use crate::error::Result;
use crate::version::Features;

/// A deletion time (tombstone) as stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeletionTime {
    /// Timestamp (by convention microseconds) at or before which data is
    /// deleted; `i64::MIN` when nothing is deleted.
    pub marked_for_delete_at: i64,
    /// Seconds since the epoch when the tombstone was written, widened to i64:
    /// legacy values are sign-extended i32 (negative values exist only in
    /// corrupt or overflowed files), `oa` values are zero-extended u32.
    /// [`DeletionTime::NO_LOCAL_DELETION_TIME`] for LIVE.
    pub local_deletion_time: i64,
}

/// `live`, or `deleted at <timestamp> (local deletion time <seconds>)`.
impl std::fmt::Display for DeletionTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_live() {
            write!(f, "live")
        } else {
            write!(
                f,
                "deleted at {} (local deletion time {})",
                self.marked_for_delete_at, self.local_deletion_time
            )
        }
    }
}

impl DeletionTime {
    /// The local deletion time of LIVE (C\* 5.0 `Cell.NO_DELETION_TIME`).
    pub const NO_LOCAL_DELETION_TIME: i64 = i64::MAX;

    /// "No deletion" (C\* `DeletionTime.LIVE`).
    pub const LIVE: DeletionTime = DeletionTime {
        marked_for_delete_at: i64::MIN,
        local_deletion_time: Self::NO_LOCAL_DELETION_TIME,
    };

    /// Legacy serialized size.
    pub const LEGACY_SIZE: usize = 12;

    /// True when this deletes nothing.
    pub fn is_live(&self) -> bool {
        *self == Self::LIVE
    }

    /// Decode with the serializer `features` select.
    pub fn decode(cur: &mut Cur<'_>, features: &Features) -> Result<DeletionTime> {
        if features.uint_deletion_time {
            Self::decode_oa(cur)
        } else {
            Self::decode_legacy(cur)
        }
    }

    /// Decode the 12-byte legacy form: `ldt:i32 mfda:i64`.
    pub fn decode_legacy(cur: &mut Cur<'_>) -> Result<DeletionTime> {
        let ldt = cur.i32("deletion time (local deletion time)")?;
        let mfda = cur.i64("deletion time (marked for delete at)")?;
        if mfda == i64::MIN && ldt == i32::MAX {
            return Ok(Self::LIVE);
        }
        Ok(DeletionTime {
            marked_for_delete_at: mfda,
            local_deletion_time: ldt as i64,
        })
    }

    /// Decode the `oa` form: `0x80`, or `mfda:i64 ldt:u32` with bit 7 clear.
    pub fn decode_oa(cur: &mut Cur<'_>) -> Result<DeletionTime> {
        let flags = cur.peek_u8("deletion time")?;
        if flags & 0x80 != 0 {
            if flags != 0x80 {
                // NOTE: C* throws "Invalid flags found deserializing DeletionTime" (§3.2).
                return Err(cur.bad(
                    "deletion time",
                    format!("invalid deletion flags {flags:#04x}"),
                ));
            }
            cur.skip(1, "deletion time")?;
            return Ok(Self::LIVE);
        }
        let mfda = cur.i64("deletion time (marked for delete at)")?;
        let ldt = cur.u32("deletion time (local deletion time)")?;
        Ok(DeletionTime {
            marked_for_delete_at: mfda,
            local_deletion_time: ldt as i64,
        })
    }

    /// Bytes this value takes with the serializer `features` select.
    pub fn serialized_size(&self, features: &Features) -> usize {
        match (features.uint_deletion_time, self.is_live()) {
            (true, true) => 1,
            _ => Self::LEGACY_SIZE,
        }
    }

    /// Append the legacy encoding. LDTs outside i32 are clamped; unlike C\*
    /// (which writes at most `i32::MAX - 1` for a real tombstone) a decoded
    /// value is written back byte for byte.
    pub fn encode_legacy(&self, out: &mut Vec<u8>) {
        let ldt = if self.local_deletion_time == Self::NO_LOCAL_DELETION_TIME {
            i32::MAX
        } else {
            self.local_deletion_time
                .clamp(i32::MIN as i64, i32::MAX as i64 - 1) as i32
        };
        out.extend_from_slice(&ldt.to_be_bytes());
        out.extend_from_slice(&self.marked_for_delete_at.to_be_bytes());
    }

    /// Append the `oa` encoding. A negative `marked_for_delete_at` cannot be
    /// represented (its sign bit is the LIVE flag); it is written as is, as C\*
    /// would, and reads back as corrupt.
    pub fn encode_oa(&self, out: &mut Vec<u8>) {
        if self.is_live() {
            out.push(0x80);
            return;
        }
        out.extend_from_slice(&self.marked_for_delete_at.to_be_bytes());
        let ldt = self.local_deletion_time.clamp(0, u32::MAX as i64) as u32;
        out.extend_from_slice(&ldt.to_be_bytes());
    }

    /// Append the encoding `features` select.
    pub fn encode(&self, features: &Features, out: &mut Vec<u8>) {
        if features.uint_deletion_time {
            self.encode_oa(out)
        } else {
            self.encode_legacy(out)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::component::Component;
    use crate::version::Version;
    use proptest::prelude::*;

    proptest! {
        /// Random bytes decode or fail cleanly; what decodes re-encodes to the
        /// same bytes (both serializers).
        #[test]
        fn random_bytes_roundtrip_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            for v in ["nb", "oa"] {
                let f = feats(v);
                let mut c = Cur::new(&bytes, Component::Data, 0);
                if let Ok(dt) = DeletionTime::decode(&mut c, &f) {
                    let mut out = Vec::new();
                    dt.encode(&f, &mut out);
                    prop_assert_eq!(&out[..], &bytes[..c.pos()]);
                }
            }
        }
    }

    fn feats(v: &str) -> Features {
        Version::parse(v)
            .map(|v| v.features())
            .unwrap_or_else(|_| unreachable!())
    }

    #[test]
    fn legacy_live_and_value() {
        let live = [0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0];
        let mut c = Cur::new(&live, Component::Data, 0);
        assert!(DeletionTime::decode_legacy(&mut c).unwrap().is_live());
        assert!(c.is_empty());
        let mut out = Vec::new();
        DeletionTime::LIVE.encode_legacy(&mut out);
        assert_eq!(out, live);

        let dt = DeletionTime {
            marked_for_delete_at: 1_500_000,
            local_deletion_time: -5,
        };
        let mut out = Vec::new();
        dt.encode_legacy(&mut out);
        let mut c = Cur::new(&out, Component::Data, 0);
        assert_eq!(DeletionTime::decode(&mut c, &feats("nb")).unwrap(), dt);
    }

    #[test]
    fn oa_live_value_and_corrupt() {
        let f = feats("oa");
        let mut c = Cur::new(&[0x80, 0xAA], Component::Data, 0);
        assert!(DeletionTime::decode(&mut c, &f).unwrap().is_live());
        assert_eq!(c.remaining(), 1);

        let dt = DeletionTime {
            marked_for_delete_at: 42,
            local_deletion_time: 0xFFFF_FFF0,
        };
        let mut out = Vec::new();
        dt.encode(&f, &mut out);
        assert_eq!(out.len(), 12);
        assert_eq!(dt.serialized_size(&f), 12);
        assert_eq!(DeletionTime::LIVE.serialized_size(&f), 1);
        let mut c = Cur::new(&out, Component::Data, 0);
        assert_eq!(DeletionTime::decode(&mut c, &f).unwrap(), dt);

        let mut c = Cur::new(
            &[0xC0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            Component::Index,
            7,
        );
        let e = DeletionTime::decode(&mut c, &f).unwrap_err();
        assert_eq!(e.offset, Some(7));
        let mut c = Cur::new(&[0x00, 0, 0], Component::Index, 0);
        assert!(DeletionTime::decode(&mut c, &f).is_err());
    }
}

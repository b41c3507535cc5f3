//! Export's output columns: the CQL columns of a table in `SELECT *` order
//! (and the `--tombstones` stream's), and their Arrow schema.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::types::{CqlType, Native};

use crate::arrow::{arrow_field, Decimals};
use crate::sink::cql::key_types;

/// One output column.
#[derive(Debug, Clone)]
pub(super) struct OutCol {
    pub(super) name: String,
    /// The type its values decode as (counters: bigint, their total).
    pub(super) ty: CqlType,
}

/// The output columns of a table, in `SELECT *` order.
#[derive(Clone)]
pub(super) struct Plan {
    pub(super) cols: Vec<OutCol>,
    pub(super) n_ck: usize,
    /// Names of the static columns (output order), then of the regulars.
    pub(super) statics: Vec<String>,
    pub(super) regulars: Vec<String>,
    /// `--with-metadata`: the static then regular slots (statics first,
    /// regulars after them) with `writetime(c)` and `ttl(c)` columns.
    pub(super) meta: Vec<usize>,
}

impl Plan {
    /// The columns of the table whose (union) header is `h`, named after
    /// `schema` when it is this table's.
    pub(super) fn new(
        h: &SerializationHeader,
        schema: Option<&sstkit_format::schema::TableSchema>,
        with_metadata: bool,
    ) -> Plan {
        let pk_types = key_types(&h.partition_key_type);
        let fits = schema.filter(|s| {
            s.clustering.len() == h.clustering_types.len()
                && s.partition_key.len() == pk_types.len()
        });
        let mut cols = Vec::new();
        for (i, t) in pk_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.partition_key.get(i))
                .map_or_else(|| format!("pk{i}"), |c| c.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        for (i, t) in h.clustering_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.clustering.get(i))
                .map_or_else(|| format!("ck{i}"), |c| c.0.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        let group = |cols: &mut Vec<OutCol>, defs: &[sstkit_format::statistics::ColumnDef]| {
            let mut v: Vec<OutCol> = defs
                .iter()
                .map(|c| OutCol {
                    name: c.name.clone(),
                    ty: if c.ty.is_counter() {
                        CqlType::Native(Native::Bigint)
                    } else {
                        c.ty.unreversed().clone()
                    },
                })
                .collect();
            v.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            v.dedup_by(|a, b| a.name == b.name);
            let names = v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
            cols.extend(v);
            names
        };
        let n_ck = h.clustering_types.len();
        let statics = group(&mut cols, &h.static_columns);
        let first_value = cols.len() - statics.len();
        let regulars = group(&mut cols, &h.regular_columns);
        let mut meta = Vec::new();
        if with_metadata {
            // CQL has writetime() and ttl() of simple (frozen included), non-counter columns.
            let simple: Vec<(usize, OutCol)> = cols[first_value..]
                .iter()
                .cloned()
                .enumerate()
                .filter(|(_, c)| {
                    let def = h
                        .static_columns
                        .iter()
                        .chain(&h.regular_columns)
                        .find(|d| d.name == c.name);
                    def.is_some_and(|d| !d.ty.is_multi_cell() && !d.ty.is_counter())
                })
                .collect();
            for (slot, c) in simple {
                meta.push(slot);
                cols.push(OutCol {
                    name: format!("writetime({})", c.name),
                    ty: CqlType::Native(Native::Bigint),
                });
                cols.push(OutCol {
                    name: format!("ttl({})", c.name),
                    ty: CqlType::Native(Native::Int),
                });
            }
        }
        Plan {
            cols,
            n_ck,
            statics,
            regulars,
            meta,
        }
    }

    /// The columns of the `--tombstones` stream: kind, the partition key
    /// columns, the clustering range (CQL text of each bound, and whether it
    /// is inclusive), the column of a cell or collection deletion, and the
    /// deletion time.
    pub(super) fn tombstones(data: &Plan, n_pk: usize) -> Plan {
        let text = || CqlType::Native(Native::Text);
        let boolean = || CqlType::Native(Native::Boolean);
        let col = |name: &str, ty: CqlType| OutCol {
            name: name.into(),
            ty,
        };
        let mut cols = vec![col("kind", text())];
        cols.extend(data.cols[..n_pk].iter().cloned());
        cols.extend([
            col("start", text()),
            col("start_inclusive", boolean()),
            col("end", text()),
            col("end_inclusive", boolean()),
            col("column", text()),
            col("marked_for_delete_at", CqlType::Native(Native::Bigint)),
            col("local_deletion_time", CqlType::Native(Native::Timestamp)),
        ]);
        Plan {
            cols,
            n_ck: 0,
            statics: vec![],
            regulars: vec![],
            meta: vec![],
        }
    }

    pub(super) fn schema(&self, d: Decimals) -> SchemaRef {
        Arc::new(Schema::new(
            self.cols
                .iter()
                .map(|c| arrow_field(&c.name, &c.ty, d))
                .collect::<Vec<_>>(),
        ))
    }
}

//! Unit tests for value decoding (its renderings are tested in `commands`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn depth_is_bounded() {
    // 100 nested lists of one element each (built directly: the type-string
    // parser has its own depth limit).
    let mut parsed = CqlType::Native(Native::Int);
    let mut bytes = 1i32.to_be_bytes().to_vec();
    for _ in 0..100 {
        parsed = CqlType::List(Box::new(parsed));
        let mut b = vec![0, 0, 0, 1];
        b.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        b.extend_from_slice(&bytes);
        bytes = b;
    }
    let e = decode(&parsed, &bytes).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

/// The bytes of a frozen collection body: the count, then each value with
/// its `i32` length (`None`: a null, length -1).
fn body(count: i32, values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = count.to_be_bytes().to_vec();
    for v in values {
        match v {
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    b
}

#[test]
fn view_elements_walk_in_place() {
    use view::Item;
    let list = CqlType::parse("ListType(Int32Type)").unwrap();
    let b = body(3, &[Some(&[0, 0, 0, 1]), None, Some(&[0, 0, 0, 2])]);
    let mut e = Item::new(&list, &b).elements().unwrap();
    let got: Vec<_> = e.by_ref().map(|i| i.b).collect();
    assert_eq!(
        got,
        [Some(&[0, 0, 0, 1][..]), None, Some(&[0, 0, 0, 2][..])]
    );
    assert!(!e.truncated());
    // Truncated anywhere: the walk says so, and the view is `Invalid`.
    for cut in 1..b.len() {
        match Item::new(&list, &b[..cut]).elements() {
            None => assert!(cut < 4, "{cut}"),
            Some(mut e) => {
                assert!(e.by_ref().count() < 3, "{cut}");
                assert!(e.truncated(), "{cut}");
            }
        }
        assert!(matches!(
            Item::new(&list, &b[..cut]).view(),
            View::Scalar(view::Scalar::Invalid)
        ));
    }
    // A negative count reads as empty; bytes after the last element are
    // ignored; an empty value has no elements (its view is `Empty`).
    let neg = body(-5, &[]);
    assert_eq!(Item::new(&list, &neg).elements().unwrap().count(), 0);
    let mut extra = body(1, &[Some(&[0, 0, 0, 9])]);
    extra.push(7);
    assert_eq!(Item::new(&list, &extra).elements().unwrap().count(), 1);
    assert!(Item::new(&list, &[]).elements().is_none());
    assert!(matches!(
        Item::new(&list, &[]).view(),
        View::Scalar(view::Scalar::Empty)
    ));
    // Maps alternate key and value types; other types have no elements.
    let map = CqlType::parse("MapType(UTF8Type,Int32Type)").unwrap();
    let b = body(1, &[Some(b"k"), Some(&[0, 0, 0, 3])]);
    let tys: Vec<_> = Item::new(&map, &b)
        .elements()
        .unwrap()
        .map(|i| i.ty.clone())
        .collect();
    assert_eq!(
        tys,
        [CqlType::Native(Native::Text), CqlType::Native(Native::Int)]
    );
    let int = CqlType::Native(Native::Int);
    assert!(Item::new(&int, &[0, 0, 0, 1]).elements().is_none());
}

#[test]
fn view_tuple_fields_and_composites() {
    use view::{CompositeParts, Item};
    let tt = CqlType::parse("TupleType(Int32Type,UTF8Type,Int32Type)").unwrap();
    // The second field's length runs past the end: cut short; the third is
    // absent (two bytes cannot hold a length).
    let mut b = Vec::new();
    b.extend_from_slice(&4i32.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 1]);
    b.extend_from_slice(&9i32.to_be_bytes());
    b.extend_from_slice(b"ab");
    let View::Tuple { fields, present } = Item::new(&tt, &b).view() else {
        panic!("not a tuple");
    };
    assert_eq!(present, 2);
    let got: Vec<_> = fields.iter().map(|f| f.b).collect();
    assert_eq!(got, [Some(&[0, 0, 0, 1][..]), Some(&b"ab"[..]), None]);
    // A partition key splits only when it frames exactly.
    let key = [0, 1, b'a', 0, 0, 2, b'b', b'c', 0];
    assert_eq!(
        CompositeParts::exactly(&key, 2).unwrap(),
        [&b"a"[..], &b"bc"[..]]
    );
    assert!(CompositeParts::exactly(&key, 3).is_none());
    assert!(CompositeParts::exactly(&key[..8], 2).is_none());
    let mut long = key.to_vec();
    long.push(0);
    assert!(CompositeParts::exactly(&long, 2).is_none());
}

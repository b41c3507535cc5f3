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

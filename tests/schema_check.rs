//! A checker for the subset of JSON Schema that `docs/schemas/*.schema.json`
//! use, so that the output contracts are tested without a dependency: type,
//! enum, const, required, properties, additionalProperties (false or a
//! schema), items, minItems, maxItems, minimum, minLength, oneOf, anyOf,
//! allOf, and $ref to `#/$defs/...` or to another file of `docs/schemas`.

use serde_json::Value;

use crate::util::repo;

/// A schema of `docs/schemas` by file name.
pub fn load(name: &str) -> Value {
    let p = repo().join("docs/schemas").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The errors of `v` against schema `s` (`root`: the document `s` is part of,
/// for local `$ref`s), each located by a JSON path from `at`.
pub fn check(v: &Value, s: &Value, root: &Value, at: &str, errs: &mut Vec<String>) {
    if let Some(r) = s["$ref"].as_str() {
        match r.strip_prefix("#/$defs/") {
            Some(name) => check(v, &root["$defs"][name], root, at, errs),
            None => {
                let other = load(r);
                check(v, &other, &other, at, errs);
            }
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(x) => vec![x.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            other => panic!("schema type {other} not handled"),
        });
        if !ok {
            errs.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = s["enum"].as_array() {
        if !e.contains(v) {
            errs.push(format!("{at}: {v} not in the enum"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            errs.push(format!("{at}: {v} is not {c}"));
        }
    }
    if let (Some(m), Some(n)) = (s["minimum"].as_u64(), v.as_i64()) {
        if n < m as i64 {
            errs.push(format!("{at}: {n} < {m}"));
        }
    }
    if let (Some(m), Some(x)) = (s["minLength"].as_u64(), v.as_str()) {
        if (x.chars().count() as u64) < m {
            errs.push(format!("{at}: shorter than {m}"));
        }
    }
    if let Some(o) = v.as_object() {
        for k in s["required"].as_array().into_iter().flatten() {
            let k = k.as_str().expect("required name");
            if !o.contains_key(k) {
                errs.push(format!("{at}: no {k:?}"));
            }
        }
        let props = s["properties"].as_object();
        for (k, x) in o {
            match (props.and_then(|p| p.get(k)), &s["additionalProperties"]) {
                (Some(ps), _) => check(x, ps, root, &format!("{at}.{k}"), errs),
                (None, Value::Bool(false)) => errs.push(format!("{at}: unexpected {k:?}")),
                (None, extra @ Value::Object(_)) => {
                    check(x, extra, root, &format!("{at}.{k}"), errs)
                }
                (None, _) => {}
            }
        }
    }
    if let Some(a) = v.as_array() {
        if s["minItems"].as_u64().is_some_and(|m| (a.len() as u64) < m)
            || s["maxItems"].as_u64().is_some_and(|m| (a.len() as u64) > m)
        {
            errs.push(format!("{at}: {} items", a.len()));
        }
        if let Some(is) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                check(x, is, root, &format!("{at}[{i}]"), errs);
            }
        }
    }
    for x in s["allOf"].as_array().into_iter().flatten() {
        check(v, x, root, at, errs);
    }
    let matching = |alts: &Vec<Value>| {
        alts.iter()
            .filter(|x| {
                let mut e = Vec::new();
                check(v, x, root, at, &mut e);
                e.is_empty()
            })
            .count()
    };
    if let Some(one) = s["oneOf"].as_array() {
        let n = matching(one);
        if n != 1 {
            errs.push(format!("{at}: {v} matches {n} of oneOf"));
        }
    }
    if let Some(any) = s["anyOf"].as_array() {
        if matching(any) == 0 {
            errs.push(format!("{at}: {v} matches none of anyOf"));
        }
    }
}

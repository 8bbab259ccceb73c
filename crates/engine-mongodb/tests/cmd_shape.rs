//! The exact shape of the key-value requests, as YCSB 0.17.0's MongoDB binding and the
//! MongoDB Java driver send them: a point read's, update's and delete's filter is
//! `{_id: <string>}` and nothing else, the one shape FerretDB v1's SQLite backend pushes
//! down as `WHERE _id = ?` (its `collection.Query` only looks at a one-key filter whose
//! `_id` is a string or ObjectID); a point read asks `limit: 1, singleBatch: true` (the
//! driver's `first()`); a scan keeps its `$gte` filter, `_id` sort and limit.

use bson::raw::{RawDocument, RawDocumentBuf};
use bson::spec::ElementType;
use dbdelta_engine_mongodb::cmd::Commands;
use dbdelta_engine_mongodb::spec::{WriteConcern, W};

const KEY: &[u8] = b"user6284781860667377211";

fn commands() -> Commands {
    let wc = WriteConcern {
        w: Some(W::Nodes(1)),
        j: None,
        wtimeout_ms: None,
    };
    Commands::new("ycsb", "usertable", &wc, "primary")
}

/// The filter is one key, `_id`, a string equal to the record's key.
fn assert_id_equality(filter: &RawDocument) {
    let keys: Vec<&str> = filter
        .iter()
        .map(|e| e.expect("a well-formed filter").0.as_str())
        .collect();
    assert_eq!(
        keys,
        ["_id"],
        "a filter FerretDB can push down has _id alone"
    );
    let id = filter.get("_id").expect("readable").expect("_id present");
    assert_eq!(id.element_type(), ElementType::String, "_id is a string");
    assert_eq!(id.as_str(), std::str::from_utf8(KEY).ok());
}

#[test]
fn point_read_is_id_equality_limit_one_single_batch() {
    let d = commands().read(KEY, &[2, 5]).expect("a text key");
    assert_eq!(d.get_str("find").ok(), Some("usertable"));
    assert_id_equality(d.get_document("filter").expect("filter"));
    assert_eq!(d.get_i64("limit").ok(), Some(1));
    assert_eq!(d.get_bool("singleBatch").ok(), Some(true));
    assert!(
        d.get("sort").expect("readable").is_none(),
        "no sort on a read"
    );
    assert!(
        d.get("skip").expect("readable").is_none(),
        "no skip on a read"
    );
    let p = d.get_document("projection").expect("projection");
    let names: Vec<&str> = p.iter().map(|e| e.expect("ok").0.as_str()).collect();
    assert_eq!(names, ["field2", "field5"]);
    assert_eq!(d.get_str("$db").ok(), Some("ycsb"));
    // The primary read preference is the default: nothing is sent for it.
    assert!(d.get("$readPreference").expect("readable").is_none());
}

#[test]
fn update_and_delete_filters_are_id_equality() {
    let mut c = commands();
    let (_, update) = c
        .update(KEY, &[1], &[b"value".as_slice()])
        .expect("an update");
    let update = RawDocumentBuf::from_bytes(update).expect("one update statement");
    assert_id_equality(update.get_document("q").expect("q"));
    let (_, delete) = c.delete(KEY).expect("a delete");
    let delete = RawDocumentBuf::from_bytes(delete).expect("one delete statement");
    assert_id_equality(delete.get_document("q").expect("q"));
    assert_eq!(delete.get_i32("limit").ok(), Some(1));
}

#[test]
fn scan_keeps_gte_sort_and_limit() {
    let d = commands().scan(KEY, &[], 37).expect("a text key");
    let gte = d
        .get_document("filter")
        .expect("filter")
        .get_document("_id")
        .expect("_id condition");
    assert_eq!(gte.get_str("$gte").ok(), std::str::from_utf8(KEY).ok());
    assert_eq!(
        d.get_document("sort").expect("sort").get_i32("_id").ok(),
        Some(1)
    );
    assert_eq!(d.get_i64("limit").ok(), Some(37));
}

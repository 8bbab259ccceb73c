//! TPC-C's consistency conditions 1–4 (clause 3.3.2.1–3.3.2.4), each one query that counts
//! the warehouses or districts violating it. They hold after the load and after any run of
//! correct transactions on a correct engine; a violation means one of them is wrong.

use dbdelta_engine::{Connection, EngineError};

/// The four conditions: what each says, and the query counting its violations.
pub const CONDITIONS: [(&str, &str); 4] = [
    (
        "W_YTD = sum(D_YTD) per warehouse",
        "SELECT count(*) FROM warehouse w WHERE abs(w.w_ytd - (SELECT sum(d.d_ytd) FROM district d WHERE d.d_w_id = w.w_id)) > 0.005",
    ),
    (
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
        "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(o.o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) OR d.d_next_o_id - 1 <> coalesce((SELECT max(n.no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id), d.d_next_o_id - 1)",
    ),
    (
        "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
        "SELECT count(*) FROM (SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) v",
    ),
    (
        "sum(O_OL_CNT) = rows in ORDER-LINE per district",
        "SELECT count(*) FROM district d WHERE coalesce((SELECT sum(o.o_ol_cnt) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0) <> (SELECT count(*) FROM order_line l WHERE l.ol_w_id = d.d_w_id AND l.ol_d_id = d.d_id)",
    ),
];

/// One condition's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// 1–4.
    pub condition: u8,
    /// What the condition says.
    pub description: &'static str,
    /// Warehouses (1) or districts (2–4) violating it; 0 = it holds.
    pub count: u64,
}

/// Checks the four conditions; one entry per condition, in order.
pub fn check(conn: &mut dyn Connection) -> Result<Vec<Violation>, EngineError> {
    let mut out = Vec::with_capacity(CONDITIONS.len());
    for (i, (description, sql)) in CONDITIONS.iter().enumerate() {
        let v = conn.query_scalar(sql)?;
        let count = v
            .as_deref()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| {
                EngineError::statement(format!(
                    "consistency condition {} returned {v:?}, not a count",
                    i + 1
                ))
            })? as u64;
        out.push(Violation {
            condition: i as u8 + 1,
            description,
            count,
        });
    }
    Ok(out)
}

//! The blocking connection: TCP or TLS, the `hello` handshake with client metadata (the
//! server's size limits read from it), authentication, then key-value operations through
//! the same [`MongoSession`] the event loop drives (so both paths share one protocol
//! state machine). Plain TCP connections split into socket and session for the event loop.

use crate::auth;
use crate::cmd::Commands;
use crate::msg::Limits;
use crate::reply;
use crate::session::MongoSession;
use crate::spec::{Mechanism, MongoParams};
use crate::wire::{self, Stream, Wire};
use bson::raw::{cstr, RawBsonRef, RawDocumentBuf};
use dbdelta_engine::{
    ConnectOptions, Connection, Decoded, Dialect, EngineError, Family, KvOp, Op, Outcome,
    RowSource, Session, SessionParts, Socket, StmtId, Value,
};
use std::sync::Arc;

/// What the handshake learned.
#[derive(Debug, Clone, Default)]
pub struct Hello {
    /// The server's size limits.
    pub limits: Limits,
    /// `maxWireVersion`.
    pub max_wire_version: i32,
    /// Mechanisms the server offers the user (`saslSupportedMechs`).
    pub mechanisms: Vec<String>,
    /// The mechanism used (`None` without credentials).
    pub mechanism: Option<Mechanism>,
}

/// One connection to a MongoDB server.
pub struct MongoConnection {
    wire: Wire,
    session: MongoSession,
    hello: Hello,
    out: Vec<u8>,
    batch_size: usize,
}

fn limit(doc: &RawDocumentBuf, key: &str, default: usize) -> Result<usize, EngineError> {
    match reply::number(doc, key) {
        None => Ok(default),
        Some(v)
            if (1024.0..=4.0e9).contains(&v)
                || (key == "maxWriteBatchSize" && (1.0..=4.0e9).contains(&v)) =>
        {
            Ok(v as usize)
        }
        Some(v) => Err(EngineError::connection(format!(
            "MongoDB protocol error: hello says {key} = {v}, which no server sends"
        ))),
    }
}

fn hello_command(p: &MongoParams, auth_db: Option<&str>) -> RawDocumentBuf {
    let mut driver = RawDocumentBuf::new();
    driver.append(cstr!("name"), "dbdelta");
    driver.append(cstr!("version"), env!("CARGO_PKG_VERSION"));
    let mut os = RawDocumentBuf::new();
    os.append(cstr!("type"), std::env::consts::OS);
    os.append(cstr!("architecture"), std::env::consts::ARCH);
    let mut app = RawDocumentBuf::new();
    app.append(cstr!("name"), p.app_name.as_str());
    let mut client = RawDocumentBuf::new();
    client.append(cstr!("driver"), &driver);
    client.append(cstr!("os"), &os);
    client.append(cstr!("platform"), "Rust, sans-IO OP_MSG client");
    client.append(cstr!("application"), &app);
    let mut d = RawDocumentBuf::new();
    d.append(cstr!("hello"), 1i32);
    d.append(cstr!("helloOk"), true);
    d.append(cstr!("client"), &client);
    if let (Some(user), Some(db)) = (&p.user, auth_db) {
        d.append(cstr!("saslSupportedMechs"), format!("{db}.{user}"));
    }
    d.append(cstr!("$db"), "admin");
    d
}

/// Reads the `hello` reply.
pub fn read_hello(doc: &RawDocumentBuf) -> Result<Hello, EngineError> {
    reply::check(doc, "MongoDB hello")?;
    let d = Limits::default();
    let limits = Limits {
        max_bson: limit(doc, "maxBsonObjectSize", d.max_bson)?,
        max_message: limit(doc, "maxMessageSizeBytes", d.max_message)?,
        max_batch: limit(doc, "maxWriteBatchSize", d.max_batch)?,
    };
    let mut mechanisms = Vec::new();
    if let Ok(a) = doc.get_array("saslSupportedMechs") {
        for m in a.into_iter().flatten() {
            if let RawBsonRef::String(s) = m {
                mechanisms.push(s.to_string());
            }
        }
    }
    Ok(Hello {
        limits,
        max_wire_version: reply::number(doc, "maxWireVersion").map_or(0, |v| v as i32),
        mechanisms,
        mechanism: None,
    })
}

/// Connects, shakes hands and authenticates.
pub fn connect(
    p: &MongoParams,
    tls: Option<&Arc<rustls::ClientConfig>>,
    opts: &ConnectOptions,
) -> Result<MongoConnection, EngineError> {
    let timeout = opts.timeout.unwrap_or(p.connect_timeout);
    let stream = wire::open(p, tls, opts.source, timeout)?;
    stream
        .set_timeout(Some(timeout))
        .map_err(|e| EngineError::connection(format!("MongoDB socket: {e}")))?;
    let mut wire = Wire::new(stream);
    let url_db = p.url_database.as_deref();
    // The source as it would be for SCRAM (PLAIN's $external has no SCRAM mechanisms).
    let probe_db = auth::source(p, p.mechanism.unwrap_or(Mechanism::ScramSha256), url_db);
    let first = wire.command(&hello_command(p, Some(&probe_db)), &Limits::default())?;
    let mut hello = read_hello(&first)?;
    if let Some(user) = &p.user {
        let m = auth::choose(p.mechanism, &hello.mechanisms);
        if m == Mechanism::Plain {
            auth::check_plain(wire.stream.is_private(), &p.host)?;
        }
        let pw = p.password.as_ref().map(|s| s.expose()).unwrap_or("");
        let db = auth::source(p, m, url_db);
        auth::authenticate(&mut wire, &hello.limits, m, &db, user, pw).map_err(|e| {
            EngineError::new(
                e.kind,
                format!(
                    "target '{}': {} as '{user}' (authSource {db}) failed: {e}{}",
                    p.name,
                    m.name(),
                    if p.mechanism.is_none() {
                        "; set authMechanism= if the server wants another"
                    } else {
                        ""
                    }
                ),
            )
            .with_code(e.code.clone().unwrap_or_else(|| "auth".into()))
        })?;
        hello.mechanism = Some(m);
    }
    wire.stream
        .set_timeout(opts.io_timeout)
        .map_err(|e| EngineError::connection(format!("MongoDB socket: {e}")))?;
    let cmds = Commands::new(
        &p.database,
        &p.collection,
        &p.write_concern,
        &p.read_preference,
    );
    let session = MongoSession::new(cmds, hello.limits, wire.peek_id().wrapping_add(1_000));
    Ok(MongoConnection {
        wire,
        session,
        hello,
        out: Vec::new(),
        batch_size: p.batch_size,
    })
}

impl MongoConnection {
    /// What the handshake learned.
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// True over TLS.
    pub fn is_tls(&self) -> bool {
        self.wire.stream.is_tls()
    }

    /// Runs an administrative command in the connection's database and returns its checked
    /// reply.
    pub fn command(
        &mut self,
        mut body: RawDocumentBuf,
        db: Option<&str>,
    ) -> Result<RawDocumentBuf, EngineError> {
        let db = db
            .map(str::to_string)
            .unwrap_or_else(|| self.session.commands().db.clone());
        body.append(cstr!("$db"), db.as_str());
        let limits = *self.session.limits();
        let r = self.wire.command(&body, &limits)?;
        reply::check(&r, "MongoDB")?;
        Ok(r)
    }

    /// Sends what the session encoded and feeds it replies until the operation completes,
    /// sending the session's follow-up requests (getMore) on the way.
    fn round_trip(&mut self) -> Result<Outcome, EngineError> {
        self.wire.send(&self.out)?;
        loop {
            match self.session.decode(self.wire.buffered())? {
                Decoded::Complete { consumed, result } => {
                    self.wire.consume(consumed);
                    return result;
                }
                Decoded::Partial { consumed } => {
                    self.wire.consume(consumed);
                    self.out.clear();
                    if self.session.follow_up(&mut self.out) {
                        self.wire.send(&self.out)?;
                    }
                    self.wire.fill()?;
                }
            }
        }
    }

    fn flush_batch(
        &mut self,
        docs: &[u8],
        count: usize,
        ordered: bool,
    ) -> Result<u64, EngineError> {
        if count == 0 {
            return Ok(0);
        }
        self.out.clear();
        self.session
            .encode_insert_many(docs, ordered, &mut self.out)?;
        Ok(self.round_trip()?.affected)
    }
}

fn no_sql() -> EngineError {
    EngineError::unsupported(Family::Sql, "SQL statement")
}

impl Connection for MongoConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Mongodb
    }

    fn prepare(&mut self, _sql: &str) -> Result<StmtId, EngineError> {
        Err(no_sql())
    }

    fn execute(&mut self, _stmt: StmtId, _params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        Err(no_sql())
    }

    fn query(&mut self, _sql: &str) -> Result<Outcome, EngineError> {
        Err(no_sql())
    }

    fn query_scalar(&mut self, _sql: &str) -> Result<Option<String>, EngineError> {
        Err(no_sql())
    }

    fn rollback(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn families(&self) -> &'static [Family] {
        &[Family::KeyValue]
    }

    fn kv(&mut self, op: &KvOp<'_>) -> Result<Outcome, EngineError> {
        self.out.clear();
        self.session.encode(&Op::Kv(*op), &mut self.out)?;
        self.round_trip()
    }

    /// Drops the collection (a missing one is fine: NamespaceNotFound, code 26).
    fn kv_clear(&mut self) -> Result<(), EngineError> {
        let body = self.session.commands().drop_collection();
        let limits = *self.session.limits();
        let r = self.wire.command(&body, &limits)?;
        match reply::check(&r, "MongoDB drop") {
            Err(e)
                if e.code
                    .as_deref()
                    .is_some_and(|c| c.starts_with("MongoDB 26")) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
            Ok(_) => Ok(()),
        }
    }

    /// Loads records as YCSB's binding does: one `insert` each with `batchsize=1`, else
    /// `insertMany` unordered of `batchsize` records (fewer when the server's
    /// `maxWriteBatchSize` or `maxMessageSizeBytes` says so). Columns are the usertable's:
    /// the key, then `FIELD0…`.
    fn bulk_insert(&mut self, _table: &str, rows: &mut dyn RowSource) -> Result<u64, EngineError> {
        let fields: Vec<u16> = (0..rows.columns().len().saturating_sub(1) as u16).collect();
        let ordered = self.batch_size == 1;
        let mut row = Vec::new();
        let mut docs = Vec::new();
        let mut count = 0usize;
        let mut loaded = 0u64;
        let mut vals: Vec<Vec<u8>> = Vec::new();
        loop {
            row.clear();
            if !rows.next_row(&mut row) {
                break;
            }
            let text = |v: &dbdelta_engine::OwnedValue| match v {
                dbdelta_engine::OwnedValue::Text(s) => s.as_bytes().to_vec(),
                dbdelta_engine::OwnedValue::Int(i) => i.to_string().into_bytes(),
                dbdelta_engine::OwnedValue::Null => Vec::new(),
            };
            let Some((key, rest)) = row.split_first() else {
                continue;
            };
            vals.clear();
            vals.extend(rest.iter().map(text));
            let slices: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
            let doc =
                self.session
                    .commands()
                    .record(&text(key), &fields[..slices.len()], &slices)?;
            let bytes = doc.as_bytes();
            if bytes.len() > self.session.limits().max_bson {
                return Err(EngineError::statement(format!(
                    "a record of {} bytes is larger than the server's maxBsonObjectSize ({})",
                    bytes.len(),
                    self.session.limits().max_bson
                )));
            }
            if count > 0
                && (count >= self.batch_size
                    || !self.session.fits(count + 1, docs.len() + bytes.len()))
            {
                loaded += self.flush_batch(&docs, count, ordered)?;
                docs.clear();
                count = 0;
            }
            docs.extend_from_slice(bytes);
            count += 1;
        }
        loaded += self.flush_batch(&docs, count, ordered)?;
        Ok(loaded)
    }

    fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>> {
        let me = *self;
        if !me.wire.buffered().is_empty() {
            return Err(Box::new(me));
        }
        match me.wire.stream {
            Stream::Tcp(tcp) => Ok(SessionParts {
                socket: Socket::Tcp(tcp),
                session: Box::new(me.session),
            }),
            stream => Err(Box::new(MongoConnection {
                wire: Wire::new(stream),
                ..me
            })),
        }
    }
}

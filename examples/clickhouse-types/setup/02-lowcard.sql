DROP TABLE IF EXISTS logs_lowcard;
CREATE TABLE logs_lowcard (
    ts DateTime,
    level LowCardinality(String),
    service LowCardinality(String),
    path LowCardinality(String),
    status UInt16,
    bytes UInt32
) ENGINE = MergeTree ORDER BY ts;
INSERT INTO logs_lowcard SELECT ts, level, service, path, status, bytes FROM logs_string;
OPTIMIZE TABLE logs_lowcard FINAL;

-- FixedString(N) pads with zero bytes to N; N is the longest value of each column.
DROP TABLE IF EXISTS logs_fixed;
CREATE TABLE logs_fixed (
    ts DateTime,
    level FixedString(5),
    service FixedString(8),
    path FixedString(10),
    status UInt16,
    bytes UInt32
) ENGINE = MergeTree ORDER BY ts;
INSERT INTO logs_fixed SELECT ts, toFixedString(level, 5), toFixedString(service, 8), toFixedString(path, 10), status, bytes FROM logs_string;
OPTIMIZE TABLE logs_fixed FINAL;

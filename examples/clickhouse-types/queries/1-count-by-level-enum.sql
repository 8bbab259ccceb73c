SELECT level, count() AS n FROM logs_enum GROUP BY level ORDER BY level
